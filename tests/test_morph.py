"""Boundary evaluation protocols (preprocess.evaluate.morph): the space-as-token paper's and the all-words one."""
from __future__ import annotations

import json

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


def test_boundary_prf_by_hand():
    # gold un|equal (boundary 2), dis|join|ted (3, 7); predicted une|qual (3), dis|jointed (3)
    r = morph.boundary_prf([["une", "qual"], ["dis", "jointed"]], [["un", "equal"], ["dis", "join", "ted"]])
    assert (r["hits"], r["insertions"], r["deletions"]) == (1, 1, 2)
    assert r["precision"] == pytest.approx(0.5) and r["recall"] == pytest.approx(1 / 3)
    assert r["f1"] == pytest.approx(0.4) and r["mean_pieces"] == 2.0
    assert morph.clean_pieces(["\u2581", "\u2581un", "equal"]) == ["un", "equal"]
    with pytest.raises(ValueError):
        morph.boundary_prf([["a", "b"]], [["ab", "c"]])


def test_morph_cli_json(run_cli, shared_path, tmp_path):
    gold = tmp_path / "gold.tsv"
    gold.write_text("unequal\tun @@equal\t100\nunicycle\tuni @@cycle\t100\nwent\tgo @@ed\t010\n")
    proc = run_cli(["python", "-m", "preprocess.evaluate.morph", "--model",
                    shared_path("space_models/unigram_prime.model"), "--gold", gold, "--json"])
    r = json.loads(proc.stdout)["unigram_prime.model"]
    # Table 3: un|equal, uni|cycle -> 2 hits, no insertions; "went" is not concatenative and is left out
    assert r["n_words"] == 2 and r["precision"] == 1.0 and r["recall"] == 1.0
