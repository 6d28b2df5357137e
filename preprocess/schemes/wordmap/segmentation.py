"""Algorithm 2 of Wordmap (Jung 2023, section 3.2.1): the complete left-to-right segmentations of a word by the
vocabulary's pieces, and the one that maximises eq. (3.1) (points 6 and 7 of the package docstring,
:mod:`preprocess.schemes.wordmap`)."""
from __future__ import annotations

import math
from typing import Iterable, Protocol, Sequence

MAX_SEGMENT_LEN = 64


class Vocabulary(Protocol):
    """What segmenting needs of a vocabulary (:class:`preprocess.schemes.wordmap.vocabulary.WordmapVocabulary`, which
    imports this module): its pieces, and its cache of segmented lower-cased words."""

    pieces: frozenset

    def _segment_cached(self, word: str) -> tuple[str, ...]: ...


def segmentations(target: str, pieces: Iterable[str] | Vocabulary, limit: int | None = None
                  ) -> list[tuple[str, ...]]:
    """Every complete left-to-right segmentation of ``target`` (Algorithm 2), exhaustively.

    Pieces come from ``pieces`` and are longer than one character; one trailing character may close a
    segmentation.  Exponential in the worst case: use :func:`segment` for real work.
    """
    vocab = pieces.pieces if hasattr(pieces, "pieces") else {p for p in pieces if len(p) > 1}
    out: list[tuple[str, ...]] = []

    def rec(start: int, segs: list[str]) -> None:
        if limit is not None and len(out) >= limit:
            return
        if start == len(target):
            out.append(tuple(segs))
            return
        for end in range(start + 2, len(target) + 1):
            m = target[start:end]
            if m not in vocab:
                continue
            segs.append(m)
            if len(target) - end == 1:
                out.append(tuple(segs) + (target[end:],))
            else:
                rec(end, segs)
            segs.pop()

    if target:
        rec(0, [])
    return out


def score(segmentation: Sequence[str], length: int | None = None) -> float:
    """Eq. (3.1): ``sum_i ((s_i / t) / |s|) ** (1 / s_i)``, s_i the piece lengths, t the word length."""
    k = len(segmentation)
    if k == 0:
        return float("-inf")
    t = length if length is not None else sum(len(s) for s in segmentation)
    return _score_lengths(sorted(len(s) for s in segmentation), t)


def _score_lengths(lengths: Sequence[int], t: int) -> float:
    k = len(lengths)
    return math.fsum(((li / t) / k) ** (1.0 / li) for li in sorted(lengths))


def _tie_key(segs: tuple[str, ...], counts: dict[str, int]) -> tuple:
    freq = math.fsum(math.log(counts.get(s, 1)) for s in segs)
    return (round(freq, 9), tuple(-ord(c) for c in "\x00".join(segs)))


def best_segmentation(word: str, pieces: frozenset, max_len: int, counts: dict[str, int]) -> tuple[str, ...]:
    n = len(word)
    if n < 2 or n > MAX_SEGMENT_LEN or not pieces:
        return (word,)
    # memo[pos]: length multiset (sorted tuple) -> best representative segmentation of word[pos:]
    memo: list[dict | None] = [None] * (n + 1)
    memo[n] = {(): ()}
    for pos in range(n - 1, -1, -1):
        table: dict[tuple[int, ...], tuple[str, ...]] = {}
        for end in range(pos + 2, min(n, pos + max_len) + 1):
            m = word[pos:end]
            if m not in pieces:
                continue
            if n - end == 1:
                tails = {(1,): (word[end:],)}
            else:
                tails = memo[end] or {}
            for ms, segs in tails.items():
                key = tuple(sorted(ms + (len(m),)))
                cand = (m,) + segs
                old = table.get(key)
                if old is None or _tie_key(cand, counts) > _tie_key(old, counts):
                    table[key] = cand
        memo[pos] = table
    best = memo[0]
    if not best:
        return (word,)
    key = max(best, key=lambda ms: (round(_score_lengths(ms, n), 12), _tie_key(best[ms], counts)))
    return best[key]


def segment(word: str, vocabulary: Vocabulary) -> list[str]:
    """Segment one word: the segmentation of Algorithm 2 that maximises eq. (3.1), or ``[word]``.

    Works on the lower-cased word and maps the pieces back onto the original spelling.
    """
    if not word:
        return [word] if word == "" else []
    low = word.lower()
    if len(low) != len(word):
        low = word
    segs = vocabulary._segment_cached(low)
    if len(segs) == 1:
        return [word]
    out, i = [], 0
    for s in segs:
        out.append(word[i:i + len(s)])
        i += len(s)
    return out
