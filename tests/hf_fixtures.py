"""Shared helpers of tests/test_export.py and tests/test_intrinsic.py: the shared test data, BITE and Wordmap models
learned by the project's own schemes, and the fairseq reference (ids and decode) an export must equal."""
from __future__ import annotations

import gzip
from argparse import Namespace
from pathlib import Path

import pytest

from tests.conftest import require_shared

#: the shared Multi30k test sets ("all of the shared test data")
TEST_SETS = ("test_2016_flickr", "test_2017_flickr")
N_TRAIN = 1000


def shared_lines(lang: str, limit: int | None = None) -> list[str]:
    """The lines of every shared Multi30k test set of ``lang`` (the first ``limit`` of each when given)."""
    out = []
    for name in TEST_SETS:
        with gzip.open(require_shared(f"multi30k/{name}.{lang}.gz"), "rt", encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        out += lines[:limit] if limit else lines
    return out


def learn_scheme(config: dict, dest: Path):
    """A scheme of ``train_scripts.schemes`` learned (models and dictionary written by the project itself) on the
    first N_TRAIN lines of the shared Multi30k training data."""
    from train_scripts.schemes import make_scheme

    data = dest / "data"
    data.mkdir(parents=True, exist_ok=True)
    train = {}
    for lang in ("en", "de"):
        with gzip.open(require_shared(f"multi30k/train.{lang}.gz"), "rt", encoding="utf-8") as fh:
            lines = [next(fh) for _ in range(N_TRAIN)]
        (data / f"train.{lang}").write_text("".join(lines), encoding="utf-8")
        train[lang] = str(data / f"train.{lang}")
    scheme = make_scheme(config, ("en", "de"), str(dest / "models"))
    Path(scheme.models_dir).mkdir(parents=True, exist_ok=True)
    scheme.learn(train)
    return scheme


#: scheme name -> learned scheme, once per test run (both test modules import the fixtures below)
_LEARNED: dict = {}


def _learned(name: str, tmp_path_factory):
    if name not in _LEARNED:
        _LEARNED[name] = learn_scheme({"scheme": name, "vocab_size": 1000}, tmp_path_factory.mktemp(name))
    return _LEARNED[name]


@pytest.fixture(scope="session")
def bite_scheme(tmp_path_factory):
    """BITE (English side, nltk tagger) + a 1,000-piece unigram SentencePiece model, learned by the bite scheme."""
    return _learned("bite", tmp_path_factory)


@pytest.fixture(scope="session")
def wordmap_scheme(tmp_path_factory):
    """Wordmap (German side) + its 1,000-piece base model and dictionary, learned by the wordmap scheme."""
    return _learned("wordmap", tmp_path_factory)


# --- the fairseq reference ----------------------------------------------------------------------------------------

def fairseq_dictionary(dict_path):
    pytest.importorskip("fairseq", reason="the reference ids are fairseq's Dictionary ids")
    from fairseq.data import Dictionary
    return Dictionary.load(str(dict_path))


def fairseq_ids(dictionary, encoded_lines: list[str]) -> list[list[int]]:
    """What fairseq-preprocess stores for the project's encoded lines: Dictionary ids, ``</s>`` appended."""
    return [dictionary.encode_line(line, add_if_not_exist=False, append_eos=True).tolist() for line in encoded_lines]


def fairseq_decoder(bpe: dict, tokenizer: dict | None = None):
    """ids (without ``</s>``) -> text through fairseq's own decode path: ``Dictionary.string`` then the scheme's
    ``--bpe`` decode then its ``--tokenizer`` decode, the registered adapters of fairseq_plugins."""
    from fairseq.data import encoders

    import fairseq_plugins  # noqa: F401
    b = encoders.build_bpe(Namespace(**bpe))
    t = encoders.build_tokenizer(Namespace(**tokenizer)) if tokenizer else None

    def decode(dictionary, ids: list[int]) -> str:
        import torch
        text = b.decode(dictionary.string(torch.tensor(ids, dtype=torch.long)))
        return t.decode(text) if t else text
    return decode


def first_mismatch(lines, got_pieces, got_ids, want_pieces, want_ids):
    """None when every line has the same pieces and ids on both sides, else (line number, line, what differs)."""
    assert len(got_ids) == len(want_ids) == len(lines)
    for i, line in enumerate(lines):
        if got_pieces[i] != want_pieces[i]:
            return i, line, f"pieces {got_pieces[i]} != {want_pieces[i]}"
        if got_ids[i] != want_ids[i]:
            return i, line, f"ids {got_ids[i]} != {want_ids[i]}"
    return None
