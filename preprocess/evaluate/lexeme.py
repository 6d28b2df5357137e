"""Lexemic tokens against gold morphology: Wordmap's HYP2 (Jung 2023, "separating lexemic from functional morphs
gives better lexemic tokens") measured on gold that no row's segmenter saw.  Fairseq-free; the command that
segments with a row's scheme is ``train_scripts/gold_segmentation.py``.

**Morphological consistency** (after the consistency F1 of MorphBPE, Asgari et al. 2025, "MorphBPE: A Morpho-Aware
Tokenizer Bridging Linguistic Complexity for Efficient LLM Training Across Morphologies": whether words that share
a morpheme share a token; written here from that idea, not from their code).  The items are word *forms* with a
gold lemma (UD's VERB/AUX words: :func:`form_items`); a pair of forms is *related* when the lemmas are equal.  A
segmentation *links* a pair when the two forms **share a lexeme piece**, defined per ``share`` mode, on the pieces
with the space marker ``▁`` removed and case folded, counting only pieces of at least ``min_length`` characters
(2: a one-letter piece is never a lexeme):

* ``any``: some such piece is in both forms;
* ``longest``: the longest such piece of each form (the first among equally long ones) is the same; a segmenter's
  longest piece is the best guess of its lexeme piece, and this mode does not count the sharing of functional
  pieces (``en``, ``ge``, ``ver``) that ``any`` counts as a link between two lexemes.

Over all pairs of distinct forms (pairs of the same case-folded form are left out: the question is whether
*different* forms of one lexeme are linked): true positives = related and linked, false positives = unrelated and
linked, false negatives = related and not linked; precision, recall and F1 from their counts (0 where a
denominator is 0).  Every pair is counted, none sampled: the pair tables are ``forms x forms`` arrays
(:class:`PairTable`; 21 MB for the 934 verb forms of UD German GSD test); more than :data:`MAX_FORMS` forms is
refused.  Related pairs are few (646 of 435,710 there): precision is low for any segmenter that links lemmas at all.

**Boundary F1** of derived words (MorphyNet's verbs, ``affix + source``): :func:`preprocess.evaluate.morph.evaluate`
(Creutz et al. 2004, the space-as-token paper's protocol), word by word so that words can be resampled
(:func:`boundary_table`).

**Paired bootstrap over words** (:func:`paired_bootstrap`): resample the items (forms, or gold words) with
replacement, the same resample for both rows, and recompute each row's measure from the resampled counts (a form
drawn k times enters its pairs k times; it is never paired with its own copies); the interval is the percentiles
of the difference (row B minus row A).  Deterministic for a seed.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from preprocess.common import UserError
from preprocess.evaluate import morph
from preprocess.models.spm_model import SPACE_SYMBOL

#: the share modes (module doc)
SHARE_MODES = {"any": "a common piece of >= MIN characters (space marker removed, case folded)",
               "longest": "the same longest piece of >= MIN characters (space marker removed, case folded)"}
MIN_LENGTH = 2
RESAMPLES = 1000
SEED = 1
LEVEL = 0.95
#: the most forms the exact pair tables are built for (three float64 arrays of forms x forms: 600 MB at the limit)
MAX_FORMS = 5_000
_CHUNK = 100   # resamples computed at a time


def lexeme_pieces(pieces: Iterable[str], mode: str = "any", min_length: int = MIN_LENGTH) -> frozenset:
    """The pieces of one form that can link it to another (module doc): ``▁`` removed, case folded, at least
    ``min_length`` characters; all of them (``any``) or the first longest (``longest``)."""
    if mode not in SHARE_MODES:
        raise UserError(f"unknown share mode {mode!r} (choose from {', '.join(SHARE_MODES)})")
    kept = [p for p in (q.replace(SPACE_SYMBOL, "").casefold() for q in pieces) if len(p) >= min_length]
    if mode == "longest":
        return frozenset([max(kept, key=len)]) if kept else frozenset()
    return frozenset(kept)


@dataclass
class FormItem:
    """One gold form: its lemma, its spelling (case-folded: the key with the lemma), how often it occurs, and the
    pieces the segmenter gave it most often (ties: the first seen) with the number of different segmentations."""
    lemma: str
    form: str
    count: int
    pieces: tuple
    segmentations: int


def form_items(occurrences: Iterable[tuple[str, str, Sequence[str]]]) -> list[FormItem]:
    """``(lemma, form, pieces)`` per occurrence (in file order) -> one :class:`FormItem` per ``(lemma, case-folded
    form)``, in order of first occurrence.  A form segmented in several ways (a segmenter that looks at the
    sentence, e.g. Wordmap's tagger) keeps its most frequent segmentation."""
    seen: dict[tuple, Counter] = {}
    for lemma, form, pieces in occurrences:
        seen.setdefault((lemma, form.casefold()), Counter())[tuple(pieces)] += 1
    return [FormItem(lemma, form, sum(c.values()), c.most_common(1)[0][0], len(c)) for (lemma, form), c in seen.items()]


class PairTable:
    """The pairs of ``n`` forms for one segmentation: ``tp``, ``fp``, ``fn`` as ``n x n`` 0/1 arrays (symmetric,
    zero diagonal, zero for pairs of the same form), so that the counts under item weights ``w`` (how often each
    form is drawn) are ``w' M w / 2`` (:meth:`counts`)."""

    def __init__(self, lemmas: Sequence[str], forms: Sequence[str], pieces: Sequence[Sequence[str]],
                 mode: str = "any", min_length: int = MIN_LENGTH):
        import numpy as np

        n = len(lemmas)
        if not len(forms) == len(pieces) == n:
            raise ValueError("lemmas, forms and pieces must have one entry per form")
        if n > MAX_FORMS:
            raise UserError(f"{n} forms are more than the {MAX_FORMS} the exact pair count is built for")
        sets = [lexeme_pieces(p, mode, min_length) for p in pieces]
        columns: dict[str, int] = {}
        for s in sets:
            for p in s:
                columns.setdefault(p, len(columns))
        incidence = np.zeros((n, max(1, len(columns))), dtype=np.float64)
        for i, s in enumerate(sets):
            incidence[i, [columns[p] for p in s]] = 1.0
        linked = (incidence @ incidence.T) > 0
        lemma_ids = np.unique(np.asarray(list(lemmas), dtype=str), return_inverse=True)[1]
        form_ids = np.unique(np.asarray([f.casefold() for f in forms], dtype=str), return_inverse=True)[1]
        related = lemma_ids[:, None] == lemma_ids[None, :]
        valid = form_ids[:, None] != form_ids[None, :]       # distinct forms (the diagonal too)
        self.n = n
        self.tp = (linked & related & valid).astype(np.float64)
        self.fp = (linked & ~related & valid).astype(np.float64)
        self.fn = (~linked & related & valid).astype(np.float64)
        self.related_pairs = int((related & valid).sum()) // 2
        self.unrelated_pairs = int((~related & valid).sum()) // 2

    def counts(self, weights) -> tuple:
        """``(tp, fp, fn)`` as float arrays, one entry per row of ``weights`` (resamples x forms)."""
        import numpy as np

        w = np.asarray(weights, dtype=np.float64)
        return tuple(((w @ m) * w).sum(axis=1) / 2 for m in (self.tp, self.fp, self.fn))

    def scores(self, weights) -> dict:
        """Precision, recall and F1 arrays under ``weights`` (see :func:`prf`)."""
        return prf(*self.counts(weights))


def prf(tp, fp, fn) -> dict:
    """Precision, recall and F1 (arrays or numbers) from counts; 0 where a denominator is 0."""
    import numpy as np

    tp, fp, fn = (np.asarray(x, dtype=np.float64) for x in (tp, fp, fn))
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        recall = np.where(tp + fn > 0, tp / (tp + fn), 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    return {"precision": precision, "recall": recall, "f1": f1}


def consistency(table: PairTable) -> dict:
    """The consistency of one segmentation over all its pairs (module doc): ``precision``, ``recall``, ``f1``,
    ``tp``, ``fp``, ``fn``, ``related_pairs``, ``unrelated_pairs``."""
    import numpy as np

    tp, fp, fn = (float(x[0]) for x in table.counts(np.ones((1, table.n))))
    scores = {k: float(v) for k, v in prf(tp, fp, fn).items()}
    return {**scores, "tp": int(tp), "fp": int(fp), "fn": int(fn), "related_pairs": table.related_pairs,
            "unrelated_pairs": table.unrelated_pairs}


def boundary_table(pieces: Sequence[Sequence[str]], gold: Sequence[tuple[str, Sequence[str]]]):
    """Per gold word, ``(hits, insertions, deletions)`` of its pieces (an ``n x 3`` array) and whether they could be
    scored (``n`` booleans): :func:`preprocess.evaluate.morph.evaluate` on that word alone (protocol ``all``), so
    that the sums over words are that function's counts over all of them."""
    import numpy as np

    counts = np.zeros((len(gold), 3), dtype=np.float64)
    scored = np.zeros(len(gold), dtype=bool)
    for i, (entry, word_pieces) in enumerate(zip(gold, pieces, strict=True)):
        r = morph.evaluate(lambda _word, p=list(word_pieces): p, [(entry[0], list(entry[1]))], "all")
        counts[i] = (r["hits"], r["insertions"], r["deletions"])
        scored[i] = not r["skipped"]
    return counts, scored


def boundary_scores(counts, weights) -> dict:
    """Boundary precision, recall and F1 arrays from per-word ``counts`` (:func:`boundary_table`) under ``weights``
    (resamples x words): micro-averaged, as :func:`preprocess.evaluate.morph.evaluate`."""
    import numpy as np

    hits, ins, dels = (np.asarray(weights, dtype=np.float64) @ np.asarray(counts, dtype=np.float64)).T
    return prf(hits, ins, dels)


def paired_bootstrap(n: int, statistic_a: Callable, statistic_b: Callable, resamples: int = RESAMPLES,
                     seed: int = SEED, level: float = LEVEL) -> dict:
    """The paired bootstrap interval of ``statistic_b - statistic_a`` over ``n`` items (module doc).  Each
    statistic maps item weights (resamples x n: how often each item is drawn) to a dict of arrays (e.g.
    ``precision``, ``recall``, ``f1``); every key of A is compared.  Returns per key ``{"difference"`` (on the
    items as they are), ``"low"``, ``"high"`` (the percentiles of the resampled differences at (1 - level) / 2
    and (1 + level) / 2), ``"excludes_zero"}``, and ``resamples``, ``seed``, ``level``, ``items``."""
    import numpy as np

    if n < 1:
        raise UserError("no items to resample")
    if resamples < 1:
        raise UserError(f"--resamples must be at least 1, not {resamples}")
    if not 0 < level < 1:
        raise UserError(f"the interval's level must be between 0 and 1, not {level}")
    ones = np.ones((1, n))
    a0, b0 = statistic_a(ones), statistic_b(ones)
    rng = np.random.default_rng(seed)
    diffs: dict[str, list] = {k: [] for k in a0}
    done = 0
    while done < resamples:
        k = min(_CHUNK, resamples - done)
        weights = rng.multinomial(n, np.full(n, 1.0 / n), size=k)
        a, b = statistic_a(weights), statistic_b(weights)
        for key in diffs:
            diffs[key].append(np.asarray(b[key]) - np.asarray(a[key]))
        done += k
    out = {}
    for key, chunks in diffs.items():
        d = np.concatenate(chunks)
        low, high = np.percentile(d, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
        out[key] = {"difference": float(np.asarray(b0[key]).ravel()[0] - np.asarray(a0[key]).ravel()[0]),
                    "low": float(low), "high": float(high), "excludes_zero": bool(low > 0 or high < 0)}
    out.update(resamples=resamples, seed=seed, level=level, items=n)
    return out
