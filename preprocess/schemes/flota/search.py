"""FLOTA's search over one word: the part of :class:`preprocess.schemes.flota.FlotaTokenizer` that runs per word.

It lives in a module of its own so that ``setup.py`` can compile it with Cython, as fairseq compiles its data
utilities, into ``preprocess.schemes.flota._search`` (about 1.6x faster: the README's FLOTA speed section).  The
compiled module is this file's text plus its SHA-256, and gives the same pieces (``tests/test_flota.py`` compares
the two).  The ``cython.*`` annotations type its integers in C; they are not evaluated when this file runs as
plain Python, which it does without a C compiler.  :mod:`preprocess.schemes.flota` uses the compiled module only when it
was built from this file's current text (see :func:`search_class`).
"""
from __future__ import annotations

import hashlib
import re

from preprocess.common import compiled_class

try:
    import cython
except ImportError:   # plain Python without Cython installed: only the annotations name it
    cython = None

#: runs of characters a FLOTA search may start in (the word's own hyphens count as covered)
_UNCOVERED = re.compile(r"[^-]+")


class FlotaSearch:
    """Mixin for :class:`~preprocess.schemes.flota.FlotaTokenizer`: it reads the tables the tokenizer builds (``max_len``,
    ``_max_piece``, ``_lengths``, ``_map0``, ``_map1``, ``_hyphen_bare``, ``_hyphen_first``)."""

    def flota_pieces(self, word: str, k: cython.Py_ssize_t) -> list:  # noqa: C901 - one compiled loop, no calls
        """(position, token) pairs that FLOTA finds in ``word`` (a ``str``, already in the vocabulary's alphabet), at
        most ``k`` of them, sorted by position.  The whole-word check is not applied here.

        One scan pointer (length, position) moves forward in the paper's order (longest first, then leftmost)
        across all k steps: everything before it is either not in the vocabulary or overlaps a covered span, and
        covered spans only grow, so it never looks back.  The uncovered characters are kept as gaps (intervals),
        so the scan tries only substrings inside one gap and starts at the widest gap's length; substrings that
        run across covered characters (which the released code's residue writes as ``-``) can only match a
        vocabulary string with a ``-`` inside and are looked for separately (``hyphen_bare``)."""
        n: cython.Py_ssize_t = len(word)
        cap: cython.Py_ssize_t = min(n, self.max_len, self._max_piece)
        l: cython.Py_ssize_t
        i: cython.Py_ssize_t
        p: cython.Py_ssize_t
        a: cython.Py_ssize_t
        b: cython.Py_ssize_t
        bl: cython.Py_ssize_t
        bi: cython.Py_ssize_t
        be: cython.Py_ssize_t
        widest: cython.Py_ssize_t
        if cap < 1:
            return []
        if "-" in word:   # a hyphen of the word's own counts as covered, as in the released code's residue
            gaps = [(m.start(), m.end()) for m in _UNCOVERED.finditer(word)]
        else:
            gaps = [(0, n)]
        hyphen_bare = self._relevant_hyphen_bare(word, cap) \
            if self._hyphen_bare and not self._hyphen_first.isdisjoint(word) else ()
        lengths = self._lengths
        map0: dict = self._map0
        map1: dict = self._map1
        found = []
        l, i = cap, 0
        while gaps and len(found) < k:
            widest = max([b - a for a, b in gaps]) if len(gaps) > 1 else gaps[0][1] - gaps[0][0]
            if l > widest:
                l, i = widest, 0
            best = None
            while l >= 1:
                if l in lengths:
                    for a, b in gaps:
                        p = a if a > i else i
                        if p == 0:
                            tok = map0.get(word[:l]) if b >= l else None
                            if tok is not None:
                                best = (l, 0, tok)
                                break
                            p = 1
                        for p in range(p, b - l + 1):  # noqa: B020 - p restarts from where the scan above stopped
                            tok = map1.get(word[p:p + l])
                            if tok is not None:
                                best = (l, p, tok)
                                break
                        if best is not None:
                            break
                    if best is not None:
                        i = best[1]
                        break
                l -= 1
                i = 0
            across = False
            if hyphen_bare and (len(gaps) > 1 or gaps[0] != (0, n)):
                alt = self._best_hyphen_candidate(word, gaps, hyphen_bare)
                if alt is not None and (best is None or (-alt[0], alt[1]) < (-best[0], best[1])):
                    best, across = alt, True
            if best is None:
                break
            bl, bi, tok = best
            found.append((bi, tok))
            if len(found) == k:
                break
            be = bi + bl
            if across:   # a match across covered characters may cut several gaps
                gaps = [g for a, b in gaps for g in ((a, min(b, bi)), (max(a, be), b)) if g[0] < g[1]]
            else:        # a match inside one gap cuts that gap only
                for gi, (a, b) in enumerate(gaps):
                    if a <= bi < b:
                        if bi > a:
                            gaps[gi:gi + 1] = [(a, bi), (be, b)] if be < b else [(a, bi)]
                        elif be < b:
                            gaps[gi] = (be, b)
                        else:
                            del gaps[gi]
                        break
        found.sort()
        return found

    def _relevant_hyphen_bare(self, word: str, cap: int) -> tuple:
        chars = set(word) | {"-"}
        return tuple(s for s in self._hyphen_bare if len(s) <= cap and set(s) <= chars)

    def _best_hyphen_candidate(self, word: str, gaps: list, hyphen_bare):
        """The best (longest, leftmost) match of a vocabulary string with a ``-`` inside on the released code's
        residue (covered characters written as ``-``), starting at an uncovered character."""
        residue = ["-"] * len(word)
        for a, b in gaps:
            residue[a:b] = word[a:b]
        residue = "".join(residue)
        free = {p for a, b in gaps for p in range(a, b)}
        best = None
        for bare in hyphen_bare:
            start = residue.find(bare)
            while start >= 0:
                if start in free:
                    tok = (self._map1 if start else self._map0).get(bare)
                    if tok is not None:
                        key = (-len(bare), start)
                        if best is None or key < (-best[0], best[1]):
                            best = (len(bare), start, tok)
                start = residue.find(bare, start + 1)
        return best


def _source_digest() -> str:
    with open(__file__, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def search_class() -> type:
    """The compiled :class:`FlotaSearch` when ``preprocess.schemes.flota._search`` exists and was built from this file's
    current text (setup.py records the text's SHA-256 in it), else this module's (:func:`preprocess.common.
    compiled_class`)."""
    return compiled_class(FlotaSearch, "preprocess.schemes.flota._search", "preprocess/schemes/flota/search.py", _source_digest)
