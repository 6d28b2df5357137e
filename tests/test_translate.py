"""Translating raw text with an asymmetric scheme pair: a tiny model whose English source is
BITE-encoded and whose German target is Wordmap-encoded.  ``morphtok-translate`` must encode the source with the
source's options (BITE's inflection symbols appear in what the model reads) and decode the output with the
target's (Wordmap's decoder); the options that would silently mis-encode the pair are refused.  Checks the
plumbing, never a quality level."""
from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from preprocess.common import UserError
from train_scripts.schemes import Scheme, make_options, register_scheme
from train_scripts.schemes.bite import BiteScheme, BiteSchemeOptions
from train_scripts.schemes.wordmap import WordmapOptions, WordmapScheme


@dataclass
class _PairOptions(BiteSchemeOptions, WordmapOptions):
    """BITE's options (applied to --bite-langs) and Wordmap's (applied to --wordmap-langs)."""


@register_scheme
class BiteSourceWordmapTarget(Scheme):
    """A test-only scheme: BITE on English, Wordmap on German, each with its own models and dictionary (what a
    user gets by combining two schemes per side)."""

    name = "test-bite-en-wordmap-de"
    Options = _PairOptions

    def __init__(self, options, langs, models_dir):
        super().__init__(options, langs, models_dir)
        values = {k: getattr(self.options, k) for k in self.options.__dataclass_fields__}
        pick = lambda cls: make_options(cls, {k: v for k, v in values.items() if k in cls.__dataclass_fields__})  # noqa
        self.sides = {lang: (BiteScheme(pick(BiteSchemeOptions), (lang,), self.path("bite")) if lang == "en" else
                             WordmapScheme(pick(WordmapOptions), (lang,), self.path("wordmap"))) for lang in langs}

    def learn(self, train, workers=1, quiet=True):
        for lang, scheme in self.sides.items():
            scheme.learn({lang: train[lang]}, workers, quiet)

    def encoder(self, lang, workers=1):
        return self.sides[lang].encoder(lang, workers)

    def encoded_train(self, lang):
        return self.sides[lang].encoded_train(lang)

    def dictionary(self, lang):
        return self.sides[lang].dictionary(lang)

    def decode_args(self, lang):
        return self.sides[lang].decode_args(lang)


#: training a tiny model with BITE and Wordmap takes about a minute of CPU: register ``slow`` to deselect it
slow = pytest.mark.slow


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    from tests.conftest import multi30k_slice
    from tests.test_hub import _translation_model

    root = tmp_path_factory.mktemp("translate")
    raw = multi30k_slice(root / "raw", 400, 20, 6)
    config = {"scheme": BiteSourceWordmapTarget.name, "vocab_size": 400, "wordmap_max_lines": 200}
    out, ckpt = _translation_model(raw, root / "work", config, "en", "de")
    return root, raw, out, ckpt


def _lines(path):
    return path.read_text(encoding="utf-8").split("\n")[:-1]


@slow
def test_asymmetric_pair_each_side_its_own_scheme(pair, run_cli):
    from preprocess.schemes import bite
    from preprocess.schemes.wordmap import decode_line
    from train_scripts.hub import hub_kwargs, load_pair

    root, raw, out, ckpt = pair
    info = json.loads((out / "binarize.json").read_text())
    assert hub_kwargs(info["source_args"])["tokenizer"] == "bite" and hub_kwargs(info["generate_args"])["bpe"] == \
        "wordmap"
    src = root / "input.en"
    sentences = ["Two dogs are running through the fields .", "A man walked to the houses .", "",
                 "The girls played."]
    src.write_text("".join(s + "\n" for s in sentences), encoding="utf-8")
    proc = run_cli(["python", "-m", "train_scripts.translate", "--data", out, "--checkpoint", ckpt, "--input", src,
                    "--output", root / "out.de", "--source-pieces", root / "pieces.en", "--beam", "2",
                    "--max-len-b", "5"])
    hyps, pieces = _lines(root / "out.de"), _lines(root / "pieces.en")
    assert len(hyps) == len(pieces) == len(sentences)  # one line per input line, the empty one included
    # the source is BITE-encoded: inflection symbols on the inflected words, as in the recipe's own encoding
    symbols = set(bite.USER_SYMBOLS)
    assert any(tok in symbols for tok in pieces[0].split()) and any(tok in symbols for tok in pieces[1].split())
    encoded_test = _lines(out / "tok" / "test.en")
    model = load_pair(out, ckpt)
    for line, tok in zip(_lines(raw / "test.en")[:3], encoded_test):
        assert model.encode(line) == tok
    # the output is decoded by Wordmap's decoder (the target's), not by BITE/SentencePiece (the source's)
    # (one batch, as the command translated them: fairseq bounds the length by the batch's longest source)
    outputs = model.hub.generate([model.hub.binarize(model.encode(line)) for line in sentences], beam=2,
                                 max_len_a=1.2, max_len_b=5)
    assert [decode_line(model.hub.tgt_dict.string(out[0]["tokens"])) for out in outputs] == hyps
    assert "output decoded with --bpe wordmap" in proc.stderr


@slow
def test_options_that_would_mis_encode_are_refused(pair, run_cli, capsys):
    root, _, out, ckpt = pair
    for option in (["--bpe", "sentencepiece"], ["--tokenizer", "moses"], ["--wordmap-vocab", "x.txt"],
                   ["--sentencepiece-model", "x.model"]):
        bad = run_cli(["python", "-m", "train_scripts.translate", "--data", out, "--checkpoint", ckpt, *option],
                      check=False)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "binarize.json" in bad.stderr, bad.stderr
    # no fairseq-interactive command can serve this pair: said in one line, naming both sides' options
    bad = run_cli(["python", "-m", "train_scripts.translate", "--data", out, "--checkpoint", ckpt,
                   "--print-interactive"], check=False)
    assert bad.returncode == 2 and "--tokenizer bite" in bad.stderr and "--bpe wordmap" in bad.stderr
    # the hub's one-encoder interface warns about the pair
    from train_scripts.hub import load_translation

    capsys.readouterr()
    load_translation(out, ckpt)
    assert "encoded with different options" in capsys.readouterr().err


def test_symmetric_pair_prints_its_interactive_command(tmp_path):
    from train_scripts.translate import interactive_command

    info = {"src": "en", "tgt": "de", "data_bin": ["/d/data-bin"], "source_args": ["--bpe", "spaces"],
            "generate_args": ["--bpe", "spaces"]}
    cmd = interactive_command(info, "ckpt.pt")
    assert cmd[:2] == ["fairseq-interactive", "/d/data-bin"] and cmd[-2:] == ["--bpe", "spaces"]
    with pytest.raises(UserError, match="cannot translate this pair"):
        interactive_command({**info, "source_args": ["--tokenizer", "bite", "--bpe", "spaces"]}, "ckpt.pt")


def test_fairseq_interactive_warns_on_an_asymmetric_pair(tmp_path, run_cli):
    """fairseq-interactive with this project's --user-dir over the data-bin of a pair encoded differently on each
    side: a warning names both sides' options and morphtok-translate (before fairseq goes on; here it stops at
    the missing checkpoint).  A symmetric pair gets no warning."""
    from tests.conftest import REPO

    out = tmp_path / "work"
    (out / "data-bin").mkdir(parents=True)
    for lang in ("en", "de"):
        (out / "data-bin" / f"dict.{lang}.txt").write_text("a 1\n")
    info = {"src": "en", "tgt": "de", "data_bin": [str(out / "data-bin")],
            "source_args": ["--tokenizer", "bite", "--bpe", "sentencepiece", "--sentencepiece-model", "m.model"],
            "generate_args": ["--bpe", "wordmap", "--wordmap-vocab", "v.txt", "--wordmap-spm", "w.model"]}
    cmd = ["fairseq-interactive", out / "data-bin", "--user-dir", REPO / "fairseq_plugins", "--path",
           tmp_path / "missing.pt", "--source-lang", "en", "--target-lang", "de", *info["generate_args"]]
    (out / "binarize.json").write_text(json.dumps(info))
    proc = run_cli(cmd, check=False, input="")
    assert proc.returncode != 0  # no checkpoint: fairseq stops, after the warning
    err = proc.stderr
    assert "records different encodings for the source (--tokenizer bite" in err and "morphtok-translate" in err
    (out / "binarize.json").write_text(json.dumps({**info, "source_args": info["generate_args"]}))
    assert "records different encodings" not in run_cli(cmd, check=False, input="").stderr
