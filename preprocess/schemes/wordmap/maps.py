"""Algorithm 1 of Wordmap (Jung 2023, section 3.2.1): the Wordmaps of a target verb against every other verb type,
the map-cleaning regex, the summed positional maps and the z-score detection of a verb's prefix, lexemic stem and
suffix (points 1 to 4 of the package docstring, :mod:`preprocess.schemes.wordmap`)."""
from __future__ import annotations

import re
import sys
from typing import Iterable, Sequence

import numpy as np

DEFAULT_SPLIT = "per-side"

_VERB_RE = re.compile(r"^[a-zäöüß]+$")
_SYLLABLE_RE = re.compile(r"au|äu|eu|ei|ai|ie|[aeiouyäöü]")
_CLEAN_RE = re.compile(r"^(1*)(.*?)(1*)$")


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
