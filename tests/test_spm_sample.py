"""Memory bounded by design in the learn step: SentencePiece trains on a seeded, shuffled sample
of ``SpmOptions.input_sentence_size`` sentences (1M by default, the space-as-token paper's size), declared once and
taken by every path that trains a model; 0 keeps "every sentence".  A corpus below the bound is used whole, so
small corpora (the reference tests, the demo) give the same models as before."""
from __future__ import annotations

import dataclasses
import gzip
import re
import subprocess
import sys

import pytest

from preprocess.models import spm
from preprocess.models.spm import SAMPLE_SENTENCES, SpmOptions
from tests.conftest import REPO, cli_env


def _pieces(model: str) -> list[tuple[str, float]]:
    sp = spm.load_model(model)
    return [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]


@pytest.fixture
def corpus(tmp_path, shared_path) -> str:
    """3,000 Multi30k sentences (no empty line)."""
    path = tmp_path / "train.en"
    with gzip.open(shared_path("multi30k/train.en.gz"), "rt", encoding="utf-8") as fh:
        lines = [next(fh) for _ in range(3000)]
    assert all(line.strip() for line in lines)
    path.write_text("".join(lines), encoding="utf-8")
    return str(path)


def test_the_default_is_the_bound_and_every_tool_takes_it():
    declared = {f.name: f.default for f in dataclasses.fields(SpmOptions)}
    assert declared["input_sentence_size"] == SAMPLE_SENTENCES == 1_000_000
    train_cmd = spm.build_parser()._subparsers._group_actions[0].choices["train"]
    action = next(a for a in train_cmd._actions if a.dest == "input_sentence_size")
    assert action.default == SAMPLE_SENTENCES
    assert "0 = every sentence" in action.help and "fairseq" in action.help and "GB" in action.help
    from preprocess import registry
    from train_scripts import binarize
    for name in registry.recipe_names():
        config = binarize.parse_args(["--scheme", name, "--data", "d", "--out", "o"])[1]
        assert config["input_sentence_size"] == SAMPLE_SENTENCES, name
        assert binarize.parse_args(["--scheme", name, "--data", "d", "--out", "o", "--input-sentence-size",
                                    "0"])[1]["input_sentence_size"] == 0


def test_wordmap_trains_its_base_model_on_the_bound(monkeypatch, tmp_path):
    """Wordmap's own SentencePiece training (preprocess.schemes.wordmap.train_spm, the recipe's Wordmap side) takes the bound
    from the same declaration: the function's default and the recipe's --input-sentence-size."""
    from preprocess.schemes import wordmap
    from train_scripts.schemes import make_scheme

    seen = []
    monkeypatch.setattr(spm, "train", lambda *a, **kw: seen.append(kw["input_sentence_size"]) or "m.model")
    wordmap.train_spm(iter(["ein Satz"]), str(tmp_path / "m"), 100)
    wordmap.train_spm(iter(["ein Satz"]), str(tmp_path / "m"), 100, max_sentences=0)
    assert seen == [SAMPLE_SENTENCES, 0]

    class Stop(Exception):
        pass

    def stop(lines, prefix, vocab_size, model_type, max_sentences=None):
        raise Stop(max_sentences)

    class Vocab:
        def save(self, path):
            pass

    monkeypatch.setattr(wordmap, "extract_verbs_file", lambda *a, **kw: ["gehen"])
    monkeypatch.setattr(wordmap, "build_vocabulary", lambda verbs: Vocab())
    monkeypatch.setattr(wordmap, "train_spm", stop)
    for config, wanted in (({}, SAMPLE_SENTENCES), ({"input_sentence_size": 5000}, 5000)):
        scheme = make_scheme({"scheme": "wordmap", **config}, ("de",), str(tmp_path / "models"))
        with pytest.raises(Stop) as got:
            scheme.learn({"de": str(tmp_path / "train.de")})
        assert got.value.args == (wanted,)


def _train(corpus: str, prefix, *options) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "preprocess.models.spm", "train", "--input", corpus, "--model-prefix", str(prefix),
           "--vocab-size", "600", "--num-threads", "1", "--spm-option", "minloglevel=0", *map(str, options)]
    proc = subprocess.run(cmd, cwd=REPO, env=cli_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def test_a_corpus_above_the_bound_trains_on_exactly_a_seeded_sample(corpus, tmp_path):
    runs = [_train(corpus, tmp_path / f"m{i}", "--input-sentence-size", 1000, "--seed", seed)
            for i, seed in enumerate((1, 1, 2))]
    for proc in runs:
        assert "note: SentencePiece is trained on a random sample of 1,000 of the 3,000 training sentences" \
            in proc.stderr, proc.stderr[-3000:]
        # SentencePiece's own count of what it trained on
        assert re.search(r"Loaded all 1000 sentences", proc.stderr), proc.stderr[-3000:]
    first, again, other = (_pieces(str(tmp_path / f"m{i}.model")) for i in range(3))
    assert first == again        # seeded: the same sample, the same model
    assert first != other        # another seed samples other sentences


def test_a_corpus_below_the_bound_is_used_whole(corpus, tmp_path):
    """The default bound and 0 ("all") give the same pieces on a corpus smaller than the bound: every model the
    project's reference tests and the demo train is unchanged."""
    bounded = _train(corpus, tmp_path / "bounded")
    assert "note:" not in bounded.stderr and "Loaded all 3000 sentences" in bounded.stderr
    _train(corpus, tmp_path / "all", "--input-sentence-size", 0)
    assert _pieces(str(tmp_path / "bounded.model")) == _pieces(str(tmp_path / "all.model"))


def test_the_sample_is_streamed_seeded_and_uniform():
    from preprocess.models.spm import sample_sentences
    lines = (f"sentence {i}" if i % 7 else "  " for i in range(100_000))   # a generator: read once
    sample, total = sample_sentences(lines, 1000, seed=1)
    assert total == 100_000 - 100_000 // 7 - 1 and len(sample) == 1000
    numbers = [int(line.split()[1]) for line in sample]
    assert numbers == sorted(numbers) and numbers[-1] > 90_000 and numbers[0] < 10_000   # corpus order, all of it
    assert sample_sentences((f"sentence {i}" for i in range(100_000)), 1000, 1)[0] == \
        sample_sentences((f"sentence {i}" for i in range(100_000)), 1000, 1)[0]
    assert sample_sentences(["a", "", "b"], 5, 1) == (["a", "b"], 2)


def test_training_from_an_iterator_samples_it_too(tmp_path, corpus):
    """Wordmap's path: sentences from a generator, 3,000 of them, a bound of 500: 500 are trained on."""
    from preprocess.files.inputs import read_lines
    model = spm.train([], str(tmp_path / "it"), vocab_size=400, input_sentence_size=500, num_threads=1,
                      sentences=read_lines(corpus))
    again = spm.train([], str(tmp_path / "again"), vocab_size=400, input_sentence_size=500, num_threads=1,
                      sentences=read_lines(corpus))
    assert _pieces(model) == _pieces(again)
