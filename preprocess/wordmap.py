"""Wordmap: lexicalised segmentation of German verbs (Jung 2023, BA thesis, section 3.2.1).

The thesis is the only specification (no reference code was published).  This module implements

* :func:`extract_verbs` -- verb forms (HanTa tags ``VV*``, ``VA*``, ``VM*``) from German sentences,
  optionally augmented with a user word list;
* :func:`build_vocabulary` -- Algorithm 1 (Wordmap generation) for every verb type against every other verb
  type, the map-cleaning regex, summed positional maps, z-score segment detection, the functional/lexemic split
  and the outlier and interference rules; the result is a :class:`WordmapVocabulary` saved as plain text;
* :func:`segment` -- Algorithm 2 (all complete left-to-right segmentations from the vocabulary) and the choice by
  the maximisation function, eq. (3.1);
* :class:`WordmapTokenizer` -- reversible sentence tokenisation: HanTa tags the sentence, verbs are segmented
  with Wordmap, every other word with a base SentencePiece model;
* ``python -m preprocess.wordmap build ...`` and the ``preprocess.encode --scheme wordmap`` hooks.

Interpretation of the points the thesis leaves open or contradicts (each one is a decision of this module)
--------------------------------------------------------------------------------------------------------------
1. **Maps have the length of the target.**  Every verb ``v`` is aligned with the target at the end(s) where the
   first/last characters agree.  Left match: ``target[i]`` vs ``v[i]``; right match: ``target[-1-i]`` vs
   ``v[-1-i]``; positions of the target that ``v`` does not reach are the zero padding.  Equal lengths give one
   map (the ``else`` branch of Algorithm 1) even when both ends match.  This reproduces all rows of Table 2
   (``verstehen``: ``verarbeiten`` -> 111000000 and 001000011, ``variiert`` -> 101001000, ``vormachen`` ->
   101000111, ``anstrebtest`` -> no map).  The target itself is not compared with itself; duplicates are
   removed (``verbs`` is a set, lower-cased, letters only: ``^[a-zäöüß]+$`` after lower-casing).
2. **Cleaning regex.**  Only the run of 1s touching the start and the run touching the end of a map stay; every
   other 1 becomes 0 (``11101100101`` -> ``11100000001``, the thesis's example).
3. **Syllables.**  Syllable nuclei are counted with a naive regex that treats the diphthongs ``au äu eu ei ai
   ie`` as one nucleus (the thesis calls ``anschauen`` 3-syllabic, so single-vowel counting cannot be meant).
   Targets with at most 2 syllables are "only analysed to the right": the leading runs of their maps are
   dropped, so they can get a suffix but never a prefix.
4. **Which side of z = 0 is functional.**  The text says "any segment below a z-score of zero is detected" and
   then calls the detected segments affixes, but its own Figures 3 and 4 show the opposite: the functional
   segments (``t`` of ``viertelt``; ``an`` and ``en`` of ``anschauen``) lie *above* the zero line and the
   lexemic part below it.  Following the figures, the **prefix** is the run of positions from the start with
   z > 0, the **suffix** is the run of positions up to the end with z > 0, and everything in between (including
   any interior position with z > 0) is the lexemic segment.  z uses the sample standard deviation (ddof = 1);
   a target whose summed map is constant (or shorter than 2) has no affixes and is lexemic as a whole.
5. **Outliers.**  "Drops every string longer than 2.5 times the standard deviation" is read as a z-score rule on
   string lengths (drop when ``len > mean + 2.5 * sd``); read literally (``len > 2.5 * sd``, with sd ~ 1) it
   would drop every affix longer than two characters, including ``ver``, and contradict the thesis's report
   that the functional vocabulary holds adverbials and prepositions.  Likewise the lexemic rule is
   ``len > mean + 2 * MAD`` (mean absolute deviation around the mean).  Means and deviations are taken over
   the distinct strings of each vocabulary (types).  Interference: lexemic strings shorter than the mean
   length of the (cleaned) functional strings are removed.  The joined vocabulary keeps, for every string, its
   kind (functional, lexemic or both) and how many verbs produced it.
6. **Algorithm 2.**  Vocabulary pieces must be longer than one character; a single character may only close a
   segmentation ("incomplete segmentations that miss exactly one character to the right are accepted").  The
   whole word is a valid segmentation when it is itself in the vocabulary.  A word without any complete
   segmentation is returned whole.  Eq. (3.1) is ``f(s) = sum_i ((s_i / t) / |s|) ** (1 / s_i)`` with ``s_i``
   the length of piece i, ``t`` the word length and ``|s|`` the number of pieces.  f depends only on the
   multiset of piece lengths, so :func:`segment` enumerates the reachable length multisets with memoisation
   instead of every permutation (same argmax as the exhaustive search of :func:`segmentations`; tested).
   Ties (same length multiset) are broken by the larger sum of ``log(count)`` of the pieces, then by the
   lexicographically smallest piece tuple.  Words longer than :data:`MAX_SEGMENT_LEN` characters are returned
   whole.
7. **Case.**  Vocabulary and segmentation work on lower case; :func:`segment` maps the pieces back onto the
   original spelling, so a capitalised verb at sentence start keeps its capital.

Tokenised text uses the SentencePiece convention: a piece that starts a whitespace-separated word carries the
prefix ``▁``; Wordmap continuation pieces are marked by having no ``▁`` (``spielt`` -> ``▁spiel t``), and so are
punctuation marks glued to a verb.  :func:`decode_line` joins the pieces and turns ``▁`` into spaces, which
restores the input up to whitespace normalisation (runs of whitespace become one space, ends are trimmed).  A
literal ``▁`` (U+2581) in the input reads back as a space, exactly as with SentencePiece itself.
"""
from __future__ import annotations

import argparse
import bisect
import functools
import math
import os
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional, Sequence

import numpy as np

from preprocess.common import (UserError, atomic_output, check_distinct, check_output_path, flatten_line, read_lines,
                               require_file, run_main)
from preprocess.spm import SPACE_SYMBOL
from preprocess.integrity import require_complete_text
from preprocess.options import add_arguments, from_namespace, option
from preprocess.spm import load_model as load_spm

VERB_TAG_PREFIXES = ("VV", "VA", "VM")
MAX_SEGMENT_LEN = 64
DEFAULT_SPLIT = "per-side"
MAX_TAG_WORD_LEN = 40
#: words whose base-model pieces a WordmapTokenizer remembers (an LRU cache: bounded memory on any corpus)
SPM_CACHE_SIZE = 1 << 17

_VERB_RE = re.compile(r"^[a-zäöüß]+$")
_SYLLABLE_RE = re.compile(r"au|äu|eu|ei|ai|ie|[aeiouyäöü]")
_CLEAN_RE = re.compile(r"^(1*)(.*?)(1*)$")
#: tokens handed to HanTa: runs of letters, runs of digits, or one other non-space character
_TAG_TOKEN_RE = re.compile(r"[^\W\d_]+|\d+|[^\s]", re.UNICODE)


# ----------------------------------------------------------------------------------------------------------
# Algorithm 1: Wordmap generation
# ----------------------------------------------------------------------------------------------------------
def syllable_count(word: str) -> int:
    """Naive count of syllable nuclei (diphthongs count once)."""
    return len(_SYLLABLE_RE.findall(word.lower()))


def normalise_verb(word: str) -> str | None:
    """Lower-cased verb form, or None when it is not a plain letter string of length >= 2."""
    w = word.strip().lower()
    if len(w) < 2 or not _VERB_RE.match(w):
        return None
    return w


def wordmaps(target: str, verb: str) -> list[tuple[str, str, bool]]:
    """The raw Wordmaps of ``target`` against one ``verb`` (Algorithm 1, lines 8-27), before cleaning.

    Returns ``(map, case, padded)`` tuples, ``map`` a 0/1 string of ``len(target)``; ``case`` is ``"left match"``,
    ``"right match"`` or ``"equal length"``.  Table 2 of the thesis lists these for ``target = verstehen``.
    """
    if not target or not verb:
        return []
    left = target[0] == verb[0]
    right = target[-1] == verb[-1]
    if not (left or right):
        return []
    n, m = len(target), len(verb)
    if n == m:
        return [("".join("1" if a == b else "0" for a, b in zip(target, verb)), "equal length", False)]
    out = []
    if left:
        bits = ["1" if i < m and target[i] == verb[i] else "0" for i in range(n)]
        out.append(("".join(bits), "left match", True))
    if right:
        bits = ["1" if i < m and target[n - 1 - i] == verb[m - 1 - i] else "0" for i in range(n)]
        out.append(("".join(reversed(bits)), "right match", True))
    return out


def clean_map(bits: str) -> str:
    """Keep the leading and trailing runs of 1s, zero every 1 enclosed by 0s (``11101100101`` -> ``11100000001``)."""
    lead, mid, trail = _CLEAN_RE.match(bits).groups()
    return lead + "0" * len(mid) + trail


def _right_only(target: str) -> bool:
    return syllable_count(target) <= 2


def run_counts_naive(target: str, verbs: Iterable[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """Pairwise (quadratic) reference: ``(lead, trail, full)`` for ``target`` against every other verb.

    ``lead[i]`` / ``trail[i]`` count the cleaned maps whose leading / trailing run of 1s covers position i, and
    ``full`` the maps that are all 1s (such a map is both runs at once).  Targets with at most 2 syllables are
    analysed to the right only: their leading runs are dropped.
    """
    n = len(target)
    lead = np.zeros(n, dtype=np.int64)
    trail = np.zeros(n, dtype=np.int64)
    full = 0
    right_only = _right_only(target)
    for v in verbs:
        if v == target:
            continue
        for bits, _case, _pad in wordmaps(target, v):
            bits = clean_map(bits)
            a = len(bits) - len(bits.lstrip("1"))
            b = len(bits) - len(bits.rstrip("1"))
            full += a == n
            if not right_only:
                lead[:a] += 1
            trail[n - b:] += 1
    return lead, trail, (0 if right_only else full)


def positional_counts_naive(target: str, verbs: Iterable[str]) -> np.ndarray:
    """Summed cleaned Wordmaps of ``target`` against every other verb, pair by pair (the quadratic reference)."""
    lead, trail, full = run_counts_naive(target, verbs)
    return lead + trail - full


def split_by_zscore(target: str, counts: Sequence[float]) -> tuple[str, str, str]:
    """(prefix, lexemic stem, suffix) of ``target`` from its summed map: affixes are the edge runs with z > 0."""
    x = np.asarray(counts, dtype=np.float64)
    n = len(target)
    if n < 2 or len(x) != n:
        return "", target, ""
    sd = x.std(ddof=1)
    if not sd > 0:
        return "", target, ""
    z = (x - x.mean()) / sd
    pos = z > 1e-12
    i = 0
    while i < n and pos[i]:
        i += 1
    j = n
    while j > i and pos[j - 1]:
        j -= 1
    return target[:i], target[i:j], target[j:]


def _positive_z(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    sd = x.std(ddof=1) if len(x) > 1 else 0.0
    if not sd > 0:
        return np.zeros(len(x), dtype=bool)
    return (x - x.mean()) / sd > 1e-12


def split_by_side(target: str, lead: Sequence[float], trail: Sequence[float]) -> tuple[str, str, str]:
    """(prefix, stem, suffix) with separate z-scores for the leading-run and the trailing-run counts.

    The prefix is the run from the start with z(lead) > 0, the suffix the run up to the end with z(trail) > 0;
    if they would leave no stem, the prefix is dropped.
    """
    n = len(target)
    if n < 2:
        return "", target, ""
    pl, pt = _positive_z(lead), _positive_z(trail)
    i = 0
    while i < n and pl[i]:
        i += 1
    j = n
    while j > 0 and pt[j - 1]:
        j -= 1
    if i >= j:
        i = 0
    if j == 0:
        j = n
    return target[:i], target[i:j], target[j:]


SPLIT_MODES = ("summed", "per-side")


def split_counts(target: str, lead: np.ndarray, trail: np.ndarray, full: int, mode: str) -> tuple[str, str, str]:
    if mode == "summed":
        return split_by_zscore(target, lead + trail - full)
    if mode == "per-side":
        return split_by_side(target, lead, trail)
    raise ValueError(f"unknown split mode {mode!r}; choose from {SPLIT_MODES}")


class _VerbIndex:
    """Verb types as padded code-point matrices, so one target is compared with all verbs in a few numpy ops."""

    def __init__(self, verbs: Sequence[str]):
        self.verbs = list(verbs)
        self.index = {v: i for i, v in enumerate(self.verbs)}
        n = len(self.verbs)
        self.lens = np.array([len(v) for v in self.verbs], dtype=np.int64)
        width = int(self.lens.max()) if n else 1
        self.width = width
        self.left = np.full((n, width), -1, dtype=np.int32)   # left-aligned, padded on the right
        self.right = np.full((n, width), -1, dtype=np.int32)  # right-aligned, padded on the left
        for i, v in enumerate(self.verbs):
            codes = np.fromiter((ord(c) for c in v), dtype=np.int32, count=len(v))
            self.left[i, :len(v)] = codes
            self.right[i, width - len(v):] = codes
        self.first = self.left[:, 0] if n else np.zeros(0, np.int32)
        self.last = self.right[:, -1] if n else np.zeros(0, np.int32)
        # rows grouped by first / last character, to cut the candidate sets before comparing
        self.by_first: dict[int, np.ndarray] = {}
        self.by_last: dict[int, np.ndarray] = {}
        for arr, store in ((self.first, self.by_first), (self.last, self.by_last)):
            order = np.argsort(arr, kind="stable")
            vals, starts = np.unique(arr[order], return_index=True)
            ends = list(starts[1:]) + [len(order)]
            for val, s, e in zip(vals, starts, ends):
                store[int(val)] = order[s:e]

    def run_counts(self, target: str) -> tuple[np.ndarray, np.ndarray, int]:
        n = len(target)
        t = np.fromiter((ord(c) for c in target), dtype=np.int32, count=n)
        self_row = self.index.get(target, -1)
        empty = np.zeros(0, dtype=np.int64)
        # left-aligned maps: first characters agree, or equal length with last characters agree (else branch)
        rows_f = self.by_first.get(int(t[0]), empty)
        rows_l = self.by_last.get(int(t[-1]), empty)
        eq_len_last = rows_l[(self.lens[rows_l] == n) & (self.first[rows_l] != t[0])]
        left_rows = np.concatenate([rows_f, eq_len_last])
        right_rows = rows_l[self.lens[rows_l] != n]
        if self_row >= 0:
            left_rows = left_rows[left_rows != self_row]
            right_rows = right_rows[right_rows != self_row]
        w = self.width
        if n <= w:
            eq_left = self.left[left_rows, :n] == t
            eq_right = self.right[right_rows, w - n:] == t
        else:  # target longer than every verb: pad the verbs
            pad = np.full((len(self.verbs), n - w), -1, dtype=np.int32)
            eq_left = np.concatenate([self.left, pad], axis=1)[left_rows] == t
            eq_right = np.concatenate([pad, self.right], axis=1)[right_rows] == t
        eq = np.concatenate([eq_left, eq_right], axis=0)
        return _run_counts(eq, n, _right_only(target))

    def counts(self, target: str) -> np.ndarray:
        lead, trail, full = self.run_counts(target)
        return lead + trail - full


def _run_counts(eq: np.ndarray, n: int, right_only: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """``(lead, trail, full)`` (see :func:`run_counts_naive`) of the cleaned maps given as boolean rows."""
    if eq.shape[0] == 0:
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), 0
    lead = np.cumprod(eq, axis=1, dtype=np.int8).sum(axis=1)
    trail = np.cumprod(eq[:, ::-1], axis=1, dtype=np.int8).sum(axis=1)
    full = int((lead == n).sum())
    lead_hist = np.bincount(lead, minlength=n + 1)
    trail_hist = np.bincount(trail, minlength=n + 1)
    lead_cover = lead_hist[::-1].cumsum()[::-1][1:].astype(np.int64)          # position i: lead > i
    trail_cover = trail_hist[::-1].cumsum()[::-1][1:][::-1].astype(np.int64)  # position i: trail > n - 1 - i
    if right_only:
        return np.zeros(n, dtype=np.int64), trail_cover, 0
    return lead_cover, trail_cover, full


def analyse(target: str, verbs: Iterable[str], mode: str = DEFAULT_SPLIT) -> tuple[str, str, str]:
    """(prefix, stem, suffix) of one target against a verb list (Algorithm 1 + z-score detection)."""
    types = sorted({w for w in (normalise_verb(v) for v in verbs) if w})
    return split_counts(target, *_VerbIndex(types).run_counts(target), mode)


def analyse_all(verbs: Iterable[str], method: str = "fast", progress: bool = False, mode: str = DEFAULT_SPLIT
                ) -> dict[str, tuple[str, str, str]]:
    """(prefix, stem, suffix) for every normalised verb type (Algorithm 1 + z-score detection)."""
    types = sorted({w for w in (normalise_verb(v) for v in verbs) if w})
    out: dict[str, tuple[str, str, str]] = {}
    if method == "naive":
        for tgt in types:
            out[tgt] = split_counts(tgt, *run_counts_naive(tgt, types), mode)
        return out
    if method != "fast":
        raise ValueError(f"unknown method {method!r}")
    index = _VerbIndex(types)
    it = types
    if progress:
        from tqdm import tqdm
        it = tqdm(types, desc="wordmaps", unit=" verbs", file=sys.stderr, mininterval=1.0)
    for tgt in it:
        out[tgt] = split_counts(tgt, *index.run_counts(tgt), mode)
    return out


# ----------------------------------------------------------------------------------------------------------
# Vocabulary: functional/lexemic split, outliers, interference
# ----------------------------------------------------------------------------------------------------------
class WordmapVocabulary:
    """The segmenter vocabulary: string -> (kind, count); kind is ``functional``, ``lexemic`` or ``both``."""

    HEADER = "#wordmap-vocabulary\tv1"

    def __init__(self, functional: dict[str, int] | None = None, lexemic: dict[str, int] | None = None,
                 meta: dict[str, str] | None = None):
        self.functional = dict(functional or {})
        self.lexemic = dict(lexemic or {})
        self.meta = dict(meta or {})
        self._refresh()

    def _refresh(self) -> None:
        counts: Counter = Counter()
        for table in (self.functional, self.lexemic):
            for s, c in table.items():
                counts[s] += c
        self.counts = dict(counts)
        self.pieces = frozenset(s for s in counts if len(s) > 1)
        self.max_len = max((len(s) for s in self.pieces), default=0)
        self._segment_cached = functools.lru_cache(maxsize=200_000)(self._segment_lower)

    def __len__(self) -> int:
        return len(self.counts)

    def __contains__(self, s: str) -> bool:
        return s in self.counts

    def kind(self, s: str) -> str | None:
        f, l = s in self.functional, s in self.lexemic
        return "both" if f and l else "functional" if f else "lexemic" if l else None

    def save(self, path: str) -> None:
        with atomic_output(path) as fh:
            fh.write(self.HEADER + "\n")
            for k, v in sorted(self.meta.items()):
                fh.write(f"#{k}\t{v}\n")
            for s in sorted(self.counts, key=lambda x: (-self.counts[x], x)):
                fh.write(f"{s}\t{self.kind(s)}\t{self.functional.get(s, 0)}\t{self.lexemic.get(s, 0)}\n")

    @classmethod
    def load(cls, path: str) -> "WordmapVocabulary":
        require_file(path, "Wordmap vocabulary")
        require_complete_text(path, "Wordmap vocabulary")   # cut inside a line (preprocess.integrity)
        functional: dict[str, int] = {}
        lexemic: dict[str, int] = {}
        meta: dict[str, str] = {}
        lines = read_lines(path)   # invalid UTF-8 (e.g. a binary file given by mistake): error naming file and line
        try:
            first = next(lines, "")
        except UserError:
            first = None
        if first != cls.HEADER:
            raise UserError(f"{path}: not a Wordmap vocabulary (first line must be {cls.HEADER!r})")
        for lineno, line in enumerate(lines, 2):
            if not line:
                continue
            if line.startswith("#"):
                k, _, v = line[1:].partition("\t")
                meta[k] = v
                continue
            parts = line.split("\t")
            if len(parts) != 4 or not parts[0]:
                raise UserError(f"{path}:{lineno}: expected 'string<TAB>kind<TAB>nfunc<TAB>nlex'")
            try:
                nf, nl = int(parts[2]), int(parts[3])
            except ValueError:
                raise UserError(f"{path}:{lineno}: counts must be integers") from None
            if nf:
                functional[parts[0]] = nf
            if nl:
                lexemic[parts[0]] = nl
        if not functional and not lexemic:
            raise UserError(f"{path}: the Wordmap vocabulary has no entries (only its header); rebuild it with "
                            "python -m preprocess.wordmap build")
        return cls(functional, lexemic, meta)

    # -- segmentation -------------------------------------------------------------------------------------
    def segment(self, word: str) -> list[str]:
        return segment(word, self)

    def _segment_lower(self, word: str) -> tuple[str, ...]:
        return _best_segmentation(word, self.pieces, self.max_len, self.counts)


def _length_stats(strings: Iterable[str]) -> tuple[float, float, float]:
    lens = np.array([len(s) for s in strings], dtype=np.float64)
    if len(lens) == 0:
        return 0.0, 0.0, 0.0
    mean = float(lens.mean())
    sd = float(lens.std(ddof=1)) if len(lens) > 1 else 0.0
    mad = float(np.abs(lens - mean).mean())
    return mean, sd, mad


def vocabulary_from_analyses(analyses: dict[str, tuple[str, str, str]], n_verbs: int | None = None
                             ) -> WordmapVocabulary:
    """Functional/lexemic vocabularies from per-verb splits, then outlier and interference removal."""
    functional: Counter = Counter()
    lexemic: Counter = Counter()
    for prefix, stem, suffix in analyses.values():
        for affix in (prefix, suffix):
            if affix:
                functional[affix] += 1
        if stem:
            lexemic[stem] += 1
    f_mean, f_sd, _ = _length_stats(functional)
    f_limit = f_mean + 2.5 * f_sd
    functional_clean = {s: c for s, c in functional.items() if len(s) <= f_limit}
    l_mean, _, l_mad = _length_stats(lexemic)
    l_limit = l_mean + 2.0 * l_mad
    lexemic_clean = {s: c for s, c in lexemic.items() if len(s) <= l_limit}
    f_clean_mean, _, _ = _length_stats(functional_clean)
    lexemic_final = {s: c for s, c in lexemic_clean.items() if len(s) >= f_clean_mean}
    meta = {
        "verbs": str(n_verbs if n_verbs is not None else len(analyses)),
        "functional_types": f"{len(functional)} -> {len(functional_clean)} (drop len > {f_limit:.3f})",
        "lexemic_types": f"{len(lexemic)} -> {len(lexemic_clean)} (drop len > {l_limit:.3f})"
                         f" -> {len(lexemic_final)} (interference: drop len < {f_clean_mean:.3f})",
    }
    return WordmapVocabulary(functional_clean, lexemic_final, meta)


def build_vocabulary(verbs: Iterable[str], method: str = "fast", progress: bool = False, mode: str = DEFAULT_SPLIT
                     ) -> WordmapVocabulary:
    """Algorithm 1 over all verb types and the vocabulary rules of section 3.2.1 (see the module docstring)."""
    verbs = list(verbs)
    analyses = analyse_all(verbs, method=method, progress=progress, mode=mode)
    vocab = vocabulary_from_analyses(analyses, n_verbs=len(analyses))
    vocab.meta["split"] = mode
    return vocab


# ----------------------------------------------------------------------------------------------------------
# Algorithm 2: segmentation and eq. (3.1)
# ----------------------------------------------------------------------------------------------------------
def segmentations(target: str, pieces: Iterable[str] | WordmapVocabulary, limit: int | None = None
                  ) -> list[tuple[str, ...]]:
    """Every complete left-to-right segmentation of ``target`` (Algorithm 2), exhaustively.

    Pieces come from ``pieces`` and are longer than one character; one trailing character may close a
    segmentation.  Exponential in the worst case: use :func:`segment` for real work.
    """
    vocab = pieces.pieces if isinstance(pieces, WordmapVocabulary) else {p for p in pieces if len(p) > 1}
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


def _best_segmentation(word: str, pieces: frozenset, max_len: int, counts: dict[str, int]) -> tuple[str, ...]:
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


def segment(word: str, vocabulary: WordmapVocabulary) -> list[str]:
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


# ----------------------------------------------------------------------------------------------------------
# HanTa tagging and verb extraction
# ----------------------------------------------------------------------------------------------------------
def load_tagger():
    """The process's German HanTa tagger: :class:`preprocess.hanta_fast.FastHanta` (HanTa's exact tags with
    per-word caches), or HanTa itself where the installed HanTa behaves differently (with a warning)."""
    try:
        import HanTa  # noqa: F401
    except ImportError as exc:  # pragma: no cover - HanTa is a dependency
        raise UserError(f"HanTa is not installed: {exc}") from None
    from preprocess import hanta_fast
    return hanta_fast.load("morphmodel_ger.pgz")


def is_verb_tag(tag: str) -> bool:
    return tag.startswith(VERB_TAG_PREFIXES)


def _tag_token_list(words: list[str]) -> list[str]:
    """``_TAG_TOKEN_RE.findall(line)`` for ``words = line.split()`` (see :func:`_tag_tokens_by_word`)."""
    return _tag_tokens_by_word(words)[0]


def _tag_tokens_by_word(words: list[str]) -> tuple[list[str], list[int]]:
    """``_TAG_TOKEN_RE.findall(line)`` for ``words = line.split()``, and the index of each word's first token
    (one more entry at the end: the number of tokens).  No token crosses white space (the same for ``str.split``
    and the regex), so the tokens of one word spell it; a word of letters only (``str.isalpha``: every such
    character is in ``[^\\W\\d_]``) is one token."""
    tokens: list[str] = []
    starts: list[int] = []
    for w in words:
        starts.append(len(tokens))
        if w.isalpha():
            tokens.append(w)
        else:
            tokens += _TAG_TOKEN_RE.findall(w)
    starts.append(len(tokens))
    return tokens, starts


class _VerbTags(dict):
    """tag -> :func:`is_verb_tag` (tag), remembered for the first 4,096 tags (a tagger has a few dozen)."""

    def __missing__(self, tag: str) -> bool:
        verb = is_verb_tag(tag)
        if len(self) < 4096:
            self[tag] = verb
        return verb


def tag_tokens(tokens: Sequence[str], tagger=None, window: int = 200,
               on_untagged: Callable[[int], None] | None = None) -> list[str]:
    """HanTa POS tags for ``tokens`` (one per token).  Never raises: untaggable tokens get ``"?"``.

    The tags are those of HanTa's ``tag_sent(window, taglevel=1)`` over windows of ``window`` tokens, and a
    window for which that call raises is all ``"?"`` (``on_untagged`` is then called with its number of tokens,
    so that a caller can report it).  ``tagger``: a :mod:`preprocess.hanta_fast` tagger (which computes the same
    without the lemma pass), or a ``HanoverTagger``."""
    tagger = tagger or load_tagger()
    fast = hasattr(tagger, "check_lemmas")
    if fast and 0 < len(tokens) <= window and max(map(len, tokens)) <= MAX_TAG_WORD_LEN and "" not in tokens:
        # the common case, one window of taggable tokens: the same calls as below, without the copies
        try:
            ctags = tagger.tag_sent(tokens)
            tagger.check_lemmas(tokens, ctags)
            if len(ctags) == len(tokens):
                return ctags
        except Exception:  # noqa: BLE001 - as below
            pass
        if on_untagged is not None:
            on_untagged(len(tokens))
        return ["?"] * len(tokens)
    tags: list[str] = []
    for start in range(0, len(tokens), window):
        chunk = list(tokens[start:start + window])
        safe = [t if (t and len(t) <= MAX_TAG_WORD_LEN) else "X" for t in chunk]
        try:
            if fast:
                ctags = tagger.tag_sent(safe)
                tagger.check_lemmas(safe, ctags)   # where HanTa's lemma pass fails, so does this (same "?")
            else:
                res = tagger.tag_sent(safe, taglevel=1)
                ctags = [r[2] if len(r) > 2 else r[1] for r in res]
            if len(ctags) != len(chunk):
                raise ValueError("tag count mismatch")
        except Exception:  # noqa: BLE001 - HanTa's own failures (its lemma pass): "?" as HanTa, counted
            ctags = ["?"] * len(chunk)
            if on_untagged is not None:
                on_untagged(len(chunk))
        tags.extend("?" if s != t else g for s, t, g in zip(safe, chunk, ctags))
    return tags


def tag_line(line: str, tagger=None, on_untagged: Callable[[int], None] | None = None
             ) -> list[tuple[int, int, str, str]]:
    """``(start, end, token, tag)`` for the HanTa tokens of one line (letters, digits, single symbols)."""
    spans = [(m.start(), m.end(), m.group()) for m in _TAG_TOKEN_RE.finditer(line)]
    if not spans:
        return []
    tags = tag_tokens([s[2] for s in spans], tagger, on_untagged=on_untagged)
    return [(a, b, tok, tag) for (a, b, tok), tag in zip(spans, tags)]


def extract_verbs(lines: Iterable[str], tagger=None, extra_words: Iterable[str] | None = None,
                  progress: bool = False) -> list[str]:
    """Verb forms (HanTa tags VV*, VA*, VM*) of German sentences, lower-cased, unique, in order of first occurrence.

    ``lines``: German sentences (e.g. Multi30k's train.de); ``extra_words`` (a user word list) is appended.  Forms that are not plain letter strings of length >= 2 are skipped.
    """
    tagger = tagger or load_tagger()
    seen: dict[str, None] = {}
    it = lines
    if progress:
        from tqdm import tqdm
        it = tqdm(lines, desc="HanTa", unit=" lines", file=sys.stderr, mininterval=1.0)
    for line in it:
        for _a, _b, tok, tag in tag_line(flatten_line(line), tagger):
            if is_verb_tag(tag):
                w = normalise_verb(tok)
                if w:
                    seen.setdefault(w, None)
    for word in extra_words or ():
        w = normalise_verb(word)
        if w:
            seen.setdefault(w, None)
    return list(seen)


def _open_text(path: str) -> Iterator[str]:
    require_file(path, "corpus")
    yield from read_lines(path, errors="replace")


# ----------------------------------------------------------------------------------------------------------
# Sentence tokeniser
# ----------------------------------------------------------------------------------------------------------
def decode_line(line: str) -> str:
    """Inverse of :meth:`WordmapTokenizer.encode_line` (and of SentencePiece pieces): join, ``▁`` -> space."""
    return "".join(line.split()).replace(SPACE_SYMBOL, " ").strip()


class WordmapTokenizer:
    """HanTa-tagged sentences -> pieces: verbs by Wordmap, all other words by a base SentencePiece model."""

    def __init__(self, vocabulary: WordmapVocabulary | str, spm_model, tagger=None, inventory=None):
        """``inventory``: the pieces a verb may be written with (a set, or a fairseq ``dict.txt`` path; the
        recipe gives its dictionary): a verb whose Wordmap pieces are not all in it is kept whole if that is in
        it, and otherwise segmented by the base SentencePiece model, whose pieces the dictionary holds.  None
        (the default): Wordmap's pieces, or the whole verb where it has no segmentation, whatever they are."""
        if isinstance(inventory, str):
            inventory = read_inventory(inventory)
        self.inventory = frozenset(inventory) if inventory is not None else None
        if isinstance(vocabulary, str):
            vocabulary = WordmapVocabulary.load(vocabulary)
        self.vocabulary = vocabulary
        if isinstance(spm_model, str):
            spm_model = load_spm(spm_model)
        self.sp = spm_model
        self.tagger = tagger or load_tagger()
        self.character_fallbacks = 0
        self.inventory_fallbacks = 0
        self.untagged_words = 0
        # the base model's pieces of one word, remembered (bounded): a word is encoded the same way every time
        self._spm_cached = functools.lru_cache(maxsize=SPM_CACHE_SIZE)(self._spm_uncached)
        self._verb_tags = _VerbTags()
        self._verb_pieces: dict[str, tuple] = {}   # see _whole_verb

    def counters(self) -> dict[str, int]:
        """Fallbacks so far (preprocess.encode prints them as ``note:`` lines)."""
        return {"Wordmap words split into characters (the SentencePiece pieces did not spell them, "
                "e.g. a normalising model)": self.character_fallbacks,
                "verbs written with the base model's pieces (neither their Wordmap pieces nor the whole verb are "
                "in --wordmap-dict)": self.inventory_fallbacks,
                "words HanTa could not tag (treated as non-verbs, as HanTa's own tag_sent fails on their window)":
                self.untagged_words}

    def _count_untagged(self, n: int) -> None:
        self.untagged_words += n

    def _spm(self, text: str, word_start: bool) -> list[str]:
        pieces, fell_back = self._spm_cached(text, word_start)
        if fell_back:
            self.character_fallbacks += 1
        return list(pieces)

    def _spm_uncached(self, text: str, word_start: bool) -> tuple[tuple[str, ...], bool]:
        """(pieces, whether they are the character fallback) of ``text`` by the base SentencePiece model."""
        fell_back = False
        try:
            pieces = [p for p in self.sp.encode(text, out_type=str) if p]
        except (RuntimeError, TypeError, ValueError):  # SentencePiece's failures: the character fallback, counted
            pieces = []
        if "".join(pieces).replace(SPACE_SYMBOL, "") != text:  # a normalising model: fall back to characters
            fell_back = True
            pieces = [SPACE_SYMBOL + text[0]] + list(text[1:]) if text else []
        if not word_start and pieces:
            first = pieces[0][1:] if pieces[0].startswith(SPACE_SYMBOL) else pieces[0]
            pieces = ([first] if first else []) + pieces[1:]
        elif word_start and pieces and not pieces[0].startswith(SPACE_SYMBOL):
            pieces[0] = SPACE_SYMBOL + pieces[0]
        return tuple(pieces), fell_back

    def verb_spans(self, line: str) -> list[tuple[int, int]]:
        return self._verb_spans(line, _tag_token_list(line.split()))

    def _verbs(self, tokens: list[str]) -> list[int]:
        """The indices of the verbs among ``tokens`` (HanTa's tags; a verb is a letter string of two or more)."""
        if not tokens:
            return []
        tags = tag_tokens(tokens, self.tagger, on_untagged=self._count_untagged)
        verb_tags = self._verb_tags
        return [k for k, tag in enumerate(tags) if verb_tags[tag] and tokens[k].isalpha() and len(tokens[k]) > 1]

    def _verb_spans(self, line: str, tokens: list[str]) -> list[tuple[int, int]]:
        """(start, end) in ``line`` of the verbs among ``tokens``, the HanTa tokens of ``line`` in order
        (``_TAG_TOKEN_RE.findall(line)``: every character that is not white space is in exactly one of them, so the
        k-th token starts at its first occurrence after the end of token k - 1)."""
        spans, pos, k = [], 0, 0
        for v in self._verbs(tokens):
            while k < v:
                pos = line.find(tokens[k], pos) + len(tokens[k])
                k += 1
            start = line.find(tokens[v], pos)
            spans.append((start, start + len(tokens[v])))
        return spans

    def encode_line(self, line: str) -> str:
        return " ".join(self.encode_pieces(line))

    def encode_pieces(self, line: str) -> list[str]:
        line = flatten_line(line)
        words = line.split()   # the same white space as the \S+ of the tokens and of the pieces below
        if not words:
            return []
        tokens, starts = _tag_tokens_by_word(words)
        verbs = self._verbs(tokens)
        out: list[str] = []
        spm = self._spm_cached
        done = 0   # words[:done] are encoded
        vi, nv = 0, len(verbs)
        while vi < nv:
            first = verbs[vi]
            wi = bisect.bisect_right(starts, first) - 1   # the word holding the verb (every word has a token)
            end = starts[wi + 1]
            j = vi + 1
            while j < nv and verbs[j] < end:   # the other verbs of that word
                j += 1
            for w in words[done:wi]:
                pieces, fell_back = spm(w, True)
                if fell_back:
                    self.character_fallbacks += 1
                out += pieces
            word = words[wi]
            if end - starts[wi] == 1:   # the word is the verb
                out += self._whole_verb(word)
            else:   # the verbs' places in the word: its tokens spell it
                spans, pos, k = [], 0, starts[wi]
                for v in verbs[vi:j]:
                    pos += sum(map(len, tokens[k:v]))
                    spans.append((pos, pos + len(tokens[v])))
                    pos, k = spans[-1][1], v + 1
                self._encode_word(word, 0, len(word), spans, out)
            done = wi + 1
            vi = j
        for w in words[done:]:
            pieces, fell_back = spm(w, True)
            if fell_back:
                self.character_fallbacks += 1
            out += pieces
        return out

    def _whole_verb(self, word: str) -> tuple[str, ...]:
        """:meth:`_encode_word`'s pieces of a word that is one verb, remembered (bounded) with the fallbacks it
        counts, which are counted again each time the word comes back."""
        entry = self._verb_pieces.get(word)
        if entry is None:
            inventory, characters = self.inventory_fallbacks, self.character_fallbacks
            out: list[str] = []
            self._encode_word(word, 0, len(word), [(0, len(word))], out)
            entry = (tuple(out), self.inventory_fallbacks - inventory, self.character_fallbacks - characters)
            if len(self._verb_pieces) < SPM_CACHE_SIZE:
                self._verb_pieces[word] = entry
            return entry[0]
        pieces, inventory, characters = entry
        if inventory or characters:
            self.inventory_fallbacks += inventory
            self.character_fallbacks += characters
        return pieces

    def _encode_word(self, line: str, a: int, b: int, inside: list[tuple[int, int]], out: list[str]) -> None:
        """The pieces of the word ``line[a:b]`` holding the verbs ``inside``: each verb by Wordmap, the rest of the
        word by the base model."""
        cursor, first = a, True
        for vs, ve in inside:
            if vs > cursor:
                out.extend(self._spm(line[cursor:vs], first))
                first = False
            segs = segment(line[vs:ve], self.vocabulary)
            segs[0] = (SPACE_SYMBOL if first else "") + segs[0]
            inv = self.inventory
            if inv is not None and not all(p in inv for p in segs):
                whole = (SPACE_SYMBOL if first else "") + line[vs:ve]
                if whole in inv:
                    segs = [whole]
                else:
                    self.inventory_fallbacks += 1
                    segs = self._spm(line[vs:ve], first)
            out.extend(segs)
            first = False
            cursor = ve
        if cursor < b:
            out.extend(self._spm(line[cursor:b], first))

    def encode_lines(self, lines: list[str]) -> list[str]:
        return [self.encode_line(line) for line in lines]

    @staticmethod
    def decode_line(line: str) -> str:
        return decode_line(line)


def read_inventory(path: str) -> set[str]:
    """The tokens of a fairseq ``dict.txt`` (first field of every line)."""
    require_file(path, "Wordmap inventory (fairseq dictionary)")
    return {line.split(" ", 1)[0] for line in read_lines(path) if line}


def segmenter_pieces(vocabulary: WordmapVocabulary) -> list[str]:
    """Pieces the Wordmap segmenter writes for lower-case and capitalised verbs, in a fixed order: every
    vocabulary piece word-initially (``▁x``, ``▁X``) and as a continuation (``x``, ``X``: after a glued
    symbol), and the single letters that may close a segmentation.  The recipe adds them to the dictionary so
    that a verb seen only in valid or test is written with known pieces."""
    letters = "abcdefghijklmnopqrstuvwxyzäöüß"
    out: dict[str, None] = {}
    for p in sorted(vocabulary.pieces):
        cap = p[:1].upper() + p[1:]
        for form in (SPACE_SYMBOL + p, p, SPACE_SYMBOL + cap, cap):
            out.setdefault(form, None)
    for c in letters:
        out.setdefault(c, None)
    return list(out)


class VerbLister:
    """A line encoder for :class:`preprocess.encode.FileEncoder`: every line becomes the verbs that
    :func:`extract_verbs` collects from it (normalised, space-separated), so the training text is tagged by the
    workers, ``--chunk-size`` lines at a time."""

    def __init__(self, tagger=None):
        self.tagger = tagger or load_tagger()

    def verbs(self, line: str) -> list[str]:
        out = []
        for _a, _b, tok, tag in tag_line(flatten_line(line), self.tagger):
            if is_verb_tag(tag):
                w = normalise_verb(tok)
                if w:
                    out.append(w)
        return out

    def encode_lines(self, lines: list[str]) -> list[str]:
        return [" ".join(self.verbs(line)) for line in lines]


def extract_verbs_file(path: str, workers: int = 1, chunk_size: int = 2000, max_lines: int = 0,
                       quiet: bool = True, extra_words: Iterable[str] | None = None, tmp_dir: str | None = None
                       ) -> list[str]:
    """:func:`extract_verbs` of the first ``max_lines`` lines (0: all) of a text file, tagged by ``workers``
    processes as ``preprocess.encode`` encodes (memory bounded by ``workers x chunk_size`` lines and the verb
    types, whatever the file size); the verbs of every line go through a temporary file in ``tmp_dir`` (default:
    the system's temporary folder).  The same verbs in the same order as :func:`extract_verbs`."""
    import tempfile

    from preprocess.encode import FileEncoder, file_options
    require_file(path, "corpus")
    with tempfile.TemporaryDirectory(prefix="wordmap-verbs-", dir=tmp_dir) as tmp:
        src = path
        if max_lines:
            src = os.path.join(tmp, "head.txt")
            with open(src, "w", encoding="utf-8", newline="\n") as fh:
                for i, line in enumerate(read_lines(path, errors="replace")):
                    if i >= max_lines:
                        break
                    fh.write(line + "\n")
        dst = os.path.join(tmp, "verbs.txt")
        options = file_options(workers=workers, chunk_size=chunk_size, errors="replace", quiet=quiet,
                               scheme="wordmap-verbs")
        FileEncoder(options, factory=VerbLister).encode_file(src, dst)
        seen: dict[str, None] = {}
        for line in read_lines(dst):
            for w in line.split():
                seen.setdefault(w, None)
    return extract_verbs([], extra_words=list(seen) + list(extra_words or ()))


def train_spm(lines: Iterable[str], model_prefix: str, vocab_size: int, model_type: str = "unigram",
              max_sentences: int | None = None) -> str:
    """Train the base SentencePiece model on ``lines`` (any iterable: it is streamed, never held in a list);
    returns the .model path.

    ``max_sentences``: SentencePiece's seeded random sample of that many sentences; None: the project's default
    bound (``SpmOptions.input_sentence_size``, 1M sentences), 0: every line.  A text with fewer lines is used
    whole, in order.  Identity normalisation keeps pieces concatenable back to the input (lossless decode).
    """
    from preprocess import spm
    if max_sentences is None:
        max_sentences = spm.SpmOptions.input_sentence_size
    return spm.train([], model_prefix, model_type=model_type, vocab_size=vocab_size,
                     input_sentence_size=max_sentences, num_threads=1, sentences=lines,
                     extra_options={"normalization_rule_name": "identity", "hard_vocab_limit": False,
                                    "shuffle_input_sentence": bool(max_sentences)})


# ----------------------------------------------------------------------------------------------------------
# preprocess.encode hooks
# ----------------------------------------------------------------------------------------------------------
@dataclass
class WordmapOptions:
    """Wordmap's tokenizer options, declared once: the ``preprocess.encode --scheme wordmap`` options, the ``--bpe
    wordmap`` adapter's config (``fairseq_plugins/wordmap.py``) and the decode arguments the recipe records
    (``train_scripts/schemes/wordmap.py``) are all derived from these fields (see :mod:`preprocess.options`)."""

    wordmap_vocab: Optional[str] = option(None, "Wordmap vocabulary (python -m preprocess.wordmap build); needed "
                                                "to encode only")
    wordmap_spm: Optional[str] = option(None, "base SentencePiece model for the non-verb words; needed to encode "
                                              "only")
    wordmap_dict: Optional[str] = option(None, "fairseq dictionary: verbs are written only with its pieces "
                                               "(Wordmap's, else the whole verb, else the base model's)")


def add_encoder_args(parser) -> None:
    add_arguments(parser, WordmapOptions)


def make_encoder(args) -> WordmapTokenizer:
    """The encoder of ``args`` (:class:`WordmapOptions`, an argparse namespace or the adapter's config)."""
    o = args if isinstance(args, WordmapOptions) else from_namespace(WordmapOptions, args)
    vocab = WordmapVocabulary.load(require_file(o.wordmap_vocab, "--wordmap-vocab"))
    sp = load_spm(require_file(o.wordmap_spm, "--wordmap-spm"))
    return WordmapTokenizer(vocab, sp, inventory=read_inventory(o.wordmap_dict) if o.wordmap_dict else None)


from preprocess.registry import SchemeDescriptor  # noqa: E402  (the scheme's one declaration, docs/adding-a-scheme.md)

SCHEME = SchemeDescriptor(
    name="wordmap",
    options=WordmapOptions,
    make_encoder=make_encoder,
    add_arguments=add_encoder_args,
    files=("wordmap_vocab", "wordmap_spm", "wordmap_dict"),
    fairseq_bpe="wordmap",
    adapter="fairseq_plugins.wordmap",
    hf_export="preprocess.hf_tokenizers:MorphtokWordmapTokenizer",
    recipe="train_scripts.schemes.wordmap:WordmapScheme",
)


# ----------------------------------------------------------------------------------------------------------
# CLI
# ----------------------------------------------------------------------------------------------------------
def _read_word_list(path: str) -> list[str]:
    return [w for line in read_lines(path, errors="replace") for w in line.split()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m preprocess.wordmap", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="extract verbs, build a Wordmap vocabulary and train the base SentencePiece model",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    b.add_argument("--input", help="German sentences, one per line (.gz allowed); required unless --verbs is given")
    b.add_argument("--max-lines", type=int, default=0, help="use only the first N lines (0 = all)")
    b.add_argument("--verbs", help="use this verb list (one or more words per line) instead of tagging --input")
    b.add_argument("--extra-words", help="user word list appended to the extracted verbs")
    b.add_argument("--output", required=True, help="Wordmap vocabulary file to write")
    b.add_argument("--verbs-out", help="also write the verb list used")
    b.add_argument("--spm-prefix", help="train the base SentencePiece model on --input to PREFIX.model/.vocab")
    b.add_argument("--spm-vocab-size", type=int, default=8000, help="pieces of the base SentencePiece model")
    b.add_argument("--spm-type", choices=["unigram", "bpe"], default="unigram", help="base SentencePiece model type")
    b.add_argument("--method", choices=["fast", "naive"], default="fast", help="naive = pairwise reference")
    b.add_argument("--workers", type=int, default=1, help="processes that tag --input (as preprocess.encode)")
    b.add_argument("--quiet", action="store_true", help="no progress output")
    s = sub.add_parser("segment", help="segment words (arguments or stdin, one per line) with a vocabulary")
    s.add_argument("--vocab", required=True, help="Wordmap vocabulary (build's --output)")
    s.add_argument("words", nargs="*")
    args = parser.parse_args(argv)

    if args.command == "segment":
        vocab = WordmapVocabulary.load(args.vocab)
        words = args.words or [line.strip() for line in read_lines("-", errors="replace")]
        for w in words:
            print(" ".join(segment(w, vocab)) if w else "")
        return 0

    def corpus() -> Iterator[str]:
        for i, line in enumerate(_open_text(args.input)):
            if args.max_lines and i >= args.max_lines:
                return
            yield line

    outputs = [(args.output, "--output")] + ([(args.verbs_out, "--verbs-out")] if args.verbs_out else []) + \
        ([(args.spm_prefix + ext, "--spm-prefix") for ext in (".model", ".vocab", ".dict.txt")]
         if args.spm_prefix else [])
    if args.spm_prefix is not None and (not args.spm_prefix or args.spm_prefix.endswith(("/", os.sep))
                                        or os.path.isdir(args.spm_prefix)):
        raise UserError(f"--spm-prefix {args.spm_prefix!r} is a folder: give a file name prefix")
    for path, _ in outputs:
        check_output_path(path)
    check_distinct(outputs, [(p, opt) for p, opt in ((args.input, "--input"), (args.verbs, "--verbs"),
                                                      (args.extra_words, "--extra-words")) if p])
    t0 = time.time()
    if not args.verbs and not args.input:
        raise UserError("give --input (German text, e.g. Multi30k's train.de.gz) or --verbs")
    if args.verbs:
        verbs = extract_verbs([], extra_words=_read_word_list(require_file(args.verbs, "verb list")))
    else:
        verbs = extract_verbs_file(require_file(args.input, "corpus"), workers=args.workers,
                                   max_lines=args.max_lines, quiet=args.quiet)
    if args.extra_words:
        verbs = extract_verbs([], extra_words=verbs + _read_word_list(require_file(args.extra_words, "word list")))
    if not verbs:
        raise UserError("no verbs found: nothing to build a Wordmap vocabulary from")
    t1 = time.time()
    vocab = build_vocabulary(verbs, method=args.method, progress=not args.quiet)
    t2 = time.time()
    vocab.save(args.output)
    if args.verbs_out:
        with atomic_output(args.verbs_out) as fh:
            fh.write("".join(v + "\n" for v in verbs))
    print(f"{len(verbs)} verb types ({t1 - t0:.1f}s), vocabulary of {len(vocab)} strings "
          f"({len(vocab.functional)} functional, {len(vocab.lexemic)} lexemic) built in {t2 - t1:.1f}s "
          f"-> {args.output}", file=sys.stderr)
    if args.spm_prefix:
        path = train_spm(corpus(), args.spm_prefix, args.spm_vocab_size, args.spm_type)
        print(f"base SentencePiece model -> {path}", file=sys.stderr)
    return 0


def cli() -> None:
    """Console-script entry point (see setup.py)."""
    import sys

    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
