"""train_scripts.binarize: every scheme of the registry through the one learn -> encode -> fairseq-preprocess path,
sharding, extra test sets, the dictionary policy, and a scheme added from outside the package."""
import json
import os
import textwrap

import pytest

from preprocess.models.spm import SPACE_SYMBOL
from preprocess.schemes.spaces import SpacesEncoder
from tests.conftest import TINY_TRANSFORMER_ARGS, multi30k_slice

N_TRAIN, N_VALID, N_TEST = 300, 20, 11


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return multi30k_slice(tmp_path_factory.mktemp("binarize") / "raw", N_TRAIN, N_VALID, N_TEST)


def _binarize(run_cli, raw, out, *opts):
    run_cli(["python", "-m", "train_scripts.binarize", "--data", raw, "--out", out, "--vocab-size", "500", *opts])
    return json.loads((out / "binarize.json").read_text())


def _lines(path):
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def _check_lines(out, raw):
    for split, n in (("train", N_TRAIN), ("valid", N_VALID), ("test", N_TEST)):
        for lang in ("en", "de"):
            assert len(_lines(out / "tok" / f"{split}.{lang}")) == n == len(_lines(raw / f"{split}.{lang}"))


def test_binarize_spaces_dictionary_is_the_models(run_cli, corpus, tmp_path):
    from fairseq.data import Dictionary, data_utils

    out = tmp_path / "s"
    info = _binarize(run_cli, corpus, out, "--scheme", "spaces", "--workers", "2")
    _check_lines(out, corpus)
    model = out / "models" / "spm.model"
    assert info["joined_dictionary"] and info["train_args"] == ["--share-all-embeddings"]
    assert info["generate_args"] == ["--bpe", "spaces", "--spaces-model", str(model), "--spaces", "keep"]
    assert info["lines"] == {"train": N_TRAIN, "valid": N_VALID, "test": N_TEST}
    bin_dir = out / "data-bin"
    # the dictionary policy: the model's inventory, joined, identical for both sides
    spm_dict = (out / "models" / "spm.dict.txt").read_text()
    assert (bin_dir / "dict.en.txt").read_text() == (bin_dir / "dict.de.txt").read_text() == spm_dict
    enc = SpacesEncoder(str(model), "keep")
    dictionary = Dictionary.load(str(bin_dir / "dict.en.txt"))
    for lang in ("en", "de"):
        tok = _lines(out / "tok" / f"test.{lang}")
        assert tok[0] == enc.encode(_lines(corpus / f"test.{lang}")[0])
        assert SPACE_SYMBOL in tok[0].split()  # space-as-token
        ds = data_utils.load_indexed_dataset(str(bin_dir / f"test.en-de.{lang}"), dictionary)
        assert len(ds) == N_TEST
        expected = " ".join(t if dictionary.index(t) != dictionary.unk() else "<unk>" for t in tok[-1].split())
        assert dictionary.string(ds[N_TEST - 1]) == expected


def test_binarize_no_spaces_side(run_cli, corpus, tmp_path):
    src_only = _binarize(run_cli, corpus, tmp_path / "a", "--scheme", "spaces", "--spaces", "drop")
    both = _binarize(run_cli, corpus, tmp_path / "b", "--scheme", "spaces", "--spaces", "drop",
                     "--no-spaces-side", "both")
    tok = lambda d, f: _lines(tmp_path / d / "tok" / f)  # noqa: E731
    # default: the source loses its ▁ tokens, the target keeps them (lossless decoding of generated text)
    assert not any(SPACE_SYMBOL in line.split() for line in tok("a", "train.en"))
    assert any(SPACE_SYMBOL in line.split() for line in tok("a", "train.de"))
    assert src_only["generate_args"][-1] == "keep" and src_only["source_args"][-1] == "drop"
    # both: the paper's lossy variant on both sides
    assert not any(SPACE_SYMBOL in line.split() for line in tok("b", "train.de"))
    assert both["generate_args"][-1] == "drop"


def test_binarize_bite_tags_once_and_reuses(run_cli, corpus, tmp_path):
    from preprocess.schemes.bite import INFLECTION_SYMBOLS

    out = tmp_path / "b"
    info = _binarize(run_cli, corpus, out, "--scheme", "bite")
    _check_lines(out, corpus)
    assert info["joined_dictionary"] and info["config"]["bite_langs"] == ["en"]
    en = (out / "tok" / "train.en").read_text().split()
    de = (out / "tok" / "train.de").read_text().split()
    assert set(INFLECTION_SYMBOLS) & set(en) and not set(INFLECTION_SYMBOLS) & set(de)  # English side only
    # the training split is the text encoded while learning (tagged once), and equals a fresh encoding
    assert (out / "tok" / "train.en").read_text() == (out / "models" / "train.encoded.en").read_text()
    from train_scripts.binarize import scheme_from_info

    fresh = scheme_from_info(info).encoder("en")().encode_lines(_lines(corpus / "train.en")[:40])
    assert fresh == _lines(out / "tok" / "train.en")[:40]
    assert info["generate_args"][:2] == ["--bpe", "sentencepiece"]  # German target: no BITE to undo
    assert info["source_args"][:2] == ["--tokenizer", "bite"]


def test_binarize_flota_over_a_given_vocabulary(run_cli, corpus, shared_path, tmp_path):
    vocab = shared_path("flota_vocabs/xlnet-base-cased.txt")
    info = _binarize(run_cli, corpus, tmp_path / "f", "--scheme", "flota", "--flota-vocab", vocab,
                     "--flota-style", "sentencepiece", "--flota-k", "2")
    _check_lines(tmp_path / "f", corpus)
    assert info["generate_args"][:2] == ["--bpe", "flota"] and info["source_args"][:2] == ["--bpe", "flota"]
    vocab_tokens = set(vocab.read_text(encoding="utf-8").split("\n"))
    assert set((tmp_path / "f" / "tok" / "train.en").read_text().split()) <= vocab_tokens
    assert info["dicts"]["en"] == info["dicts"]["de"]


def test_binarize_flota_over_a_learned_model(run_cli, corpus, tmp_path):
    info = _binarize(run_cli, corpus, tmp_path / "f", "--scheme", "flota", "--flota-k", "3")
    assert info["source_args"][:2] == ["--bpe", "flota"] and info["generate_args"][:2] == ["--bpe", "sentencepiece"]
    pieces = set((tmp_path / "f" / "models" / "spm.dict.txt").read_text().split()[::2])
    for lang in ("en", "de"):
        assert set((tmp_path / "f" / "tok" / f"train.{lang}").read_text().split()) <= pieces


def test_binarize_wordmap_separate_dictionaries(run_cli, corpus, tmp_path):
    info = _binarize(run_cli, corpus, tmp_path / "w", "--scheme", "wordmap")
    _check_lines(tmp_path / "w", corpus)
    assert not info["joined_dictionary"] and info["train_args"] == ["--share-decoder-input-output-embed"]
    assert info["generate_args"][:2] == ["--bpe", "wordmap"]
    bin_dir = tmp_path / "w" / "data-bin"
    assert (bin_dir / "dict.en.txt").read_text() != (bin_dir / "dict.de.txt").read_text()
    # every token of the German training text is in its dictionary (Wordmap's open inventory)
    known = set((bin_dir / "dict.de.txt").read_text().split()[::2])
    assert set((tmp_path / "w" / "tok" / "train.de").read_text().split()) <= known


def test_binarize_shards_shard_id_and_extra_test(run_cli, corpus, tmp_path):
    from fairseq.data import data_utils

    raw = tmp_path / "raw"
    raw.mkdir()
    for f in corpus.iterdir():
        (raw / f.name).write_text(f.read_text())
    for lang in ("en", "de"):  # an extra test set: the test set reversed
        (raw / f"rev.{lang}").write_text("\n".join(reversed(_lines(corpus / f"test.{lang}"))) + "\n")
    out = tmp_path / "sp"
    opts = ["--scheme", "sentencepiece", "--shards", "2"]
    info = _binarize(run_cli, raw, out, *opts, "--extra-test", "rev")
    shards = [out / "data-bin" / "shard0", out / "data-bin" / "shard1"]
    assert info["data"] == ":".join(map(str, shards)) and info["test_subsets"] == {"test": "test", "rev": "test1"}
    sizes = [len(data_utils.load_indexed_dataset(str(s / "train.en-de.de"), None)) for s in shards]
    assert sizes == [N_TRAIN // 2, N_TRAIN - N_TRAIN // 2]
    assert (shards[0] / "test1.en-de.en.bin").exists() and not (shards[1] / "valid.en-de.en.bin").exists()
    assert (shards[0] / "dict.en.txt").read_text() == (shards[1] / "dict.de.txt").read_text()
    # one shard alone (as on another machine, reusing the learned model) gives the same bytes
    before = (shards[1] / "train.en-de.en.bin").read_bytes()
    model_mtime = os.path.getmtime(out / "models" / "spm.model")
    run_cli(["python", "-m", "train_scripts.binarize", "--data", raw, "--out", out, "--vocab-size", "500", *opts,
             "--shard-id", "1"])
    assert (shards[1] / "train.en-de.en.bin").read_bytes() == before
    assert os.path.getmtime(out / "models" / "spm.model") == model_mtime  # not learned again
    assert not [p for p in (out / "tok").iterdir() if p.name.startswith(".")]  # no part files left
    bad = run_cli(["python", "-m", "train_scripts.binarize", "--scheme", "sentencepiece", "--data", raw,
                   "--out", tmp_path / "x", "--shards", "2", "--shard-id", "2"], check=False)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == ["error: --shard-id must be in 0..1"]


def test_binarize_bad_options_are_one_line_errors(run_cli, corpus, tmp_path):
    for opts, message in ((["--scheme", "spaces", "--spaces", "sometimes"], "invalid choice"),
                          (["--scheme", "flota", "--flota-vocab", tmp_path / "none.txt"], "FLOTA vocabulary not found"),
                          (["--scheme", "sentencepiece", "--srcdict", tmp_path / "none.txt"], "dictionary not found")):
        proc = run_cli(["python", "-m", "train_scripts.binarize", "--data", corpus, "--out", tmp_path / "o", *opts],
                       check=False)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr


THROWAWAY = '''
"""A fifth scheme, defined outside the package: characters (decoded by joining pieces, as --bpe wordmap does)."""
from dataclasses import dataclass

from preprocess.files.inputs import read_lines
from preprocess.models.spm import write_dict
from train_scripts.schemes import Scheme, option, register_scheme


class CharEncoder:
    def encode_lines(self, lines):
        return [" ".join(" ".join(line.split()).replace(" ", "\\u2581")) for line in lines]


@dataclass
class CharOptions:
    lowercase: bool = option(False, "unused; shows that options come from the dataclass")


@register_scheme
class Characters(Scheme):
    name = "throwaway_chars"
    Options = CharOptions

    def learn(self, train, workers=1, quiet=True):
        chars = dict.fromkeys(c for lang in self.langs for line in read_lines(train[lang])
                              for c in " ".join(line.split()).replace(" ", "\\u2581"))
        write_dict(list(chars), self.path("chars.dict.txt"))

    def encoder(self, lang, workers=1):
        return CharEncoder

    def dictionary(self, lang):
        return self.path("chars.dict.txt")

    def decode_args(self, lang):
        return ["--bpe", "wordmap"]
'''


def test_a_new_scheme_is_one_file(run_cli, corpus, tmp_path):
    """A throwaway scheme class in a temporary module runs through binarize and evaluate, no other file touched."""
    module = tmp_path / "throwaway_scheme.py"
    module.write_text(textwrap.dedent(THROWAWAY))
    out = tmp_path / "chars"
    run_cli(["python", "-m", "train_scripts.binarize", "--scheme-module", module, "--scheme", "throwaway_chars",
             "--data", corpus, "--out", out])
    info = json.loads((out / "binarize.json").read_text())
    assert info["generate_args"] == ["--bpe", "wordmap"] and info["joined_dictionary"]
    assert _lines(out / "tok" / "test.en")[0] == " ".join(_lines(corpus / "test.en")[0].replace(" ", SPACE_SYMBOL))
    ckpt = tmp_path / "ckpt"
    run_cli(["fairseq-train", out / "data-bin", "--user-dir", "fairseq_plugins", "--task", "translation",
             *TINY_TRANSFORMER_ARGS, "--max-update", "3", "--save-dir", ckpt, "--share-all-embeddings"])
    proc = run_cli(["python", "-m", "train_scripts.evaluate", "--data", out, "--checkpoint", ckpt / "checkpoint_last.pt",
                    "--cpu", "--beam", "1", "--max-len-b", "5", "--out", tmp_path / "eval"])
    assert "BLEU" in proc.stdout
    hyps = _lines(tmp_path / "eval" / "hyp.txt")
    assert len(hyps) == N_TEST and not any(SPACE_SYMBOL in h for h in hyps)  # decoded: pieces joined, ▁ made spaces


def test_console_scripts_are_installed(run_cli):
    """`make test`'s install puts the morphtok-* tools on the venv's PATH (setup.py console_scripts)."""
    proc = run_cli(["morphtok-binarize", "--scheme", "spaces", "--help"])
    assert "--no-spaces-side" in proc.stdout  # generated from the scheme's options dataclass
    bad = run_cli(["morphtok-evaluate", "--checkpoint", "/nonexistent.pt", "--data-bin", "/nonexistent",
                   "--tgt-lang", "de", "--ref", "/nonexistent"], check=False)
    assert bad.returncode == 2 and bad.stderr.strip().startswith("error: ") and len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("data", [b"", b"a", b"a\n", b"a\rb\nc", b"a\r\nb\r\n", b"x\xe2\x80\xa8y\n\n", b"\r\r\n"])
def test_count_lines_agrees_with_read_lines(tmp_path, data):
    """The one line counter (binarize's checks, the pipeline's dictionary sizes) counts what read_lines yields,
    for plain and gzip files: a stray \\r or U+2028 never adds a line."""
    import gzip

    from preprocess.files.inputs import count_lines, read_lines
    plain, packed = tmp_path / "t.txt", tmp_path / "t.txt.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    expected = data.count(b"\n") + (not data.endswith(b"\n") and data != b"")
    assert len(list(read_lines(str(plain)))) == expected
    assert count_lines(str(plain)) == count_lines(str(packed)) == expected
