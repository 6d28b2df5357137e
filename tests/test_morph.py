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


def test_pieces_that_drop_characters_are_scored_on_the_same_words_by_covered_edges():
    """FLOTA keeps at most k pieces: its words are scored like everyone's, by the edges of the covered characters
    (a dropped stretch is delimited on both sides, gold boundaries inside it are misses); a piece that cannot be
    placed in the word skips it, and the counts say so."""
    gold = [("unbelievable", ["un", "believ", "able"]), ("walked", ["walk", "ed"]), ("dogs", ["dog", "s"])]
    pieces = {"unbelievable": ["▁un", "able"],      # "believ" dropped: edges 2 and 8, both gold -> 2 hits
              "walked": ["▁walk"],                   # "ed" dropped: edge 4 = the gold boundary -> 1 hit
              "dogs": ["▁<unk>"]}                    # cannot be placed: skipped
    r = morph.evaluate(pieces.__getitem__, gold)
    assert (r["n_gold"], r["n_words"], r["skipped"], r["spelled"]) == (3, 2, 1, 0)
    assert (r["hits"], r["insertions"], r["deletions"]) == (3, 0, 0)
    assert r["coverage"] == pytest.approx((6 + 4) / (12 + 6))
    # an uncovered stretch that hides a gold boundary: un|believ|able with only "unbel" kept
    r = morph.evaluate({"unbelievable": ["▁unbel"]}.__getitem__, [gold[0]])
    assert (r["hits"], r["insertions"], r["deletions"]) == (0, 1, 2)   # edge 5 inserted; 2 and 8 missed


def test_words_spelled_exactly_keep_the_plain_definition():
    r = morph.evaluate(SEGMENTS.__getitem__, GOLD, protocol="all")
    assert r["spelled"] == r["n_words"] == r["n_gold"] == 4 and r["skipped"] == 0 and r["coverage"] == 1.0
    # placement is left to right: a repeated piece goes after the previous one
    assert morph.place(["ab", "ab"], "abab") == [(0, 2), (2, 4)] and morph.place(["b", "a"], "ab") is None
