"""Boundary evaluation protocols (preprocess.evaluate.morph): the space-as-token paper's and the all-words one."""
from __future__ import annotations

import pytest

from preprocess.common import UserError
from preprocess.evaluate import morph

GOLD = [("unequal", ["un", "equal"]), ("dogs", ["dog", "s"]), ("cat", ["cat"]), ("house", ["house"])]
SEGMENTS = {"unequal": ["▁un", "equal"], "dogs": ["▁do", "gs"], "cat": ["▁c", "at"], "house": ["▁house"]}


def test_paper_protocol_scores_only_words_with_two_morphs():
    r = morph.evaluate(SEGMENTS.__getitem__, GOLD)          # default: the paper's protocol
    assert r["protocol"] == "paper" and r["n_words"] == 2
    # unequal: hit at 2; dogs: predicted 2, gold 3 -> one insertion, one deletion
    assert (r["hits"], r["insertions"], r["deletions"]) == (1, 1, 1)
    assert r["precision"] == pytest.approx(0.5) and r["recall"] == pytest.approx(0.5)
    assert r["mean_pieces"] == pytest.approx(2.0)


def test_all_words_protocol_counts_splits_of_single_morph_words_as_insertions():
    r = morph.evaluate(SEGMENTS.__getitem__, GOLD, protocol="all")
    assert r["protocol"] == "all" and r["n_words"] == 4
    assert (r["hits"], r["insertions"], r["deletions"]) == (1, 2, 1)   # cat -> c|at adds an insertion
    assert r["precision"] == pytest.approx(1 / 3) and r["recall"] == pytest.approx(0.5)
    assert r["mean_pieces"] == pytest.approx(7 / 4)


def test_unknown_protocol_and_empty_selection():
    with pytest.raises(UserError, match="unknown boundary protocol"):
        morph.evaluate(SEGMENTS.__getitem__, GOLD, protocol="lenient")
    with pytest.raises(UserError, match="no gold words"):
        morph.evaluate(SEGMENTS.__getitem__, [("cat", ["cat"])])
