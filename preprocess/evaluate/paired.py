"""Paired tests between two rows scored on the same items: the same sentences (word scores of a whole-word
pseudo-log-likelihood, ``train_scripts.pseudo_perplexity --whole-words``) or the same minimal pairs
(``train_scripts.agreement``'s ``correct`` lists).

* :func:`paired_bootstrap_bits`: the difference of bits per word, B minus A, with a percentile interval from
  resampling *sentences* with replacement (both rows' scores of a sentence drawn together; Koehn 2004's paired
  bootstrap; the resampling itself is :func:`preprocess.evaluate.lexeme.paired_bootstrap`'s).  Bits per word of a
  resample: the summed negative log-probabilities of its words over their count (a ratio of sums, like the
  corpus figure), so long sentences weigh by their words.
* :func:`mcnemar`: the exact McNemar test of two rows' right/wrong answers on the same pairs: of the pairs where
  they differ, ``b01`` (A wrong, B right) against ``b10`` (A right, B wrong), an exact two-sided binomial test at
  one half (``scipy.stats.binomtest``); ``p`` 1.0 where they never differ.
"""
from __future__ import annotations

import math
from typing import Sequence

from preprocess.common import UserError

RESAMPLES, SEED, LEVEL = 1000, 1, 0.95


def _sentence_sums(scores: Sequence, marks) -> tuple[list[float], list[int]]:
    nll, words = [], []
    for k, line in enumerate(scores):
        line = list(line or [])
        keep = line if marks is None else [s for s, m in zip(line, marks[k]) if m]
        nll.append(-math.fsum(keep))
        words.append(len(keep))
    return nll, words


def shared_words(a_word_scores: Sequence, b_word_scores: Sequence) -> tuple[list, list]:
    """Both rows' word scores cut to the words both scored: a line longer than a model's positions is scored up to
    its last whole word that fits, so a row that writes more pieces per word keeps fewer of the line's words
    (``pseudo_perplexity.fit_line``); a paired comparison needs the same words on both sides.  A sentence one row
    did not score (None) is left out of both."""
    a_out, b_out = [], []
    for a, b in zip(a_word_scores, b_word_scores):
        if a is None or b is None:
            a_out.append(None)
            b_out.append(None)
        else:
            n = min(len(a), len(b))
            a_out.append(list(a[:n]))
            b_out.append(list(b[:n]))
    return a_out, b_out


def paired_bootstrap_bits(a_word_scores: Sequence[Sequence[float]], b_word_scores: Sequence[Sequence[float]],
                          marks: Sequence[Sequence[int]] | None = None, resamples: int = RESAMPLES,
                          seed: int = SEED, level: float = LEVEL) -> dict:
    """``{"difference", "low", "high"}``: B's bits per word minus A's (negative: B gives the text a higher
    likelihood) on the sentences as they are, and the ``level`` percentile interval of the difference over
    ``resamples`` resamples of the sentences (seeded by ``seed``); plus ``excludes_zero``, ``sentences``, ``words``,
    ``resamples``, ``seed``, ``level``.  The inputs: per sentence, one natural log-probability per word (a row's
    ``word_scores``; None or [] for a sentence not scored, which then counts no word); both rows must list the
    same sentences with the same words.  ``marks``: one 0/1 per word of each sentence: the marked words alone.
    Identical inputs give 0 and [0, 0]."""
    import numpy as np

    from preprocess.evaluate.lexeme import paired_bootstrap

    if len(a_word_scores) != len(b_word_scores):
        raise UserError(f"the two rows score {len(a_word_scores)} and {len(b_word_scores)} sentences: the same "
                        "sentences are needed")
    if marks is not None and len(marks) != len(a_word_scores):
        raise UserError(f"{len(marks)} lines of marks for {len(a_word_scores)} sentences")
    for k, (a, b) in enumerate(zip(a_word_scores, b_word_scores), 1):
        if len(a or []) != len(b or []):
            raise UserError(f"sentence {k}: {len(a or [])} word scores in A, {len(b or [])} in B")
    nll_a, words = _sentence_sums(a_word_scores, marks)
    nll_b, _ = _sentence_sums(b_word_scores, marks)
    if not sum(words):
        raise UserError("no word to compare (no scores, or none marked)")
    n = np.asarray(words, dtype=np.float64)
    a, b = np.asarray(nll_a), np.asarray(nll_b)

    def statistic(nll):
        return lambda w: {"bits": (w @ nll) / np.maximum(w @ n, 1.0) / math.log(2)}

    out = paired_bootstrap(len(words), statistic(a), statistic(b), resamples, seed, level)
    return {**out["bits"], "sentences": len(words), "words": int(sum(words)), "resamples": resamples,
            "seed": seed, "level": level}


def mcnemar(correct_a: Sequence[int], correct_b: Sequence[int]) -> dict:
    """The exact McNemar test (module doc): ``{"b01", "b10", "p"}``, ``b01`` the pairs A got wrong and B right,
    ``b10`` the reverse, ``p`` two-sided.  Both lists: one 0/1 per pair, the same pairs in the same order."""
    from scipy.stats import binomtest

    if len(correct_a) != len(correct_b):
        raise UserError(f"the two rows answer {len(correct_a)} and {len(correct_b)} pairs: the same pairs are needed")
    if any(x not in (0, 1) for x in (*correct_a, *correct_b)):
        raise UserError("a 'correct' entry is 0 or 1")
    b01 = sum(1 for x, y in zip(correct_a, correct_b) if not x and y)
    b10 = sum(1 for x, y in zip(correct_a, correct_b) if x and not y)
    p = binomtest(b01, b01 + b10, 0.5, alternative="two-sided").pvalue if b01 + b10 else 1.0
    return {"b01": b01, "b10": b10, "p": float(p)}
