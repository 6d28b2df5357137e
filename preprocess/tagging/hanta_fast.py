"""HanTa's sentence tagging, exact and fast: the tags of ``HanoverTagger.tag_sent`` with per-word caches.

HanTa (Wartena 2019, package ``HanTa``) tags a sentence in two steps: every word gets a list of (tag, log
probability) candidates from its morphological model (``_tag_word``: a pre-computed table for frequent words,
otherwise ``analyze_forward``, a Viterbi search over every split of the word), then a trigram Viterbi over the
sentence picks the tags (``tag_sent_viterbi``).  With ``taglevel`` 1 or more it then analyses every word again
for its lemma (``_analyze``), which does not change the tags.  HanTa caches nothing across sentences, so a word
is analysed again in every sentence it occurs in, and the lemma pass costs as much as the tagging.

:class:`FastHanta` computes the same tags from HanTa's own model tables (loaded once per process by HanTa's
own loader), with

* the candidate list of a word computed as HanTa's ``_tag_word`` does and kept in a bounded LRU cache
  (:data:`WORD_CACHE_SIZE` entries per cache), keyed by everything it depends on: the word and whether case
  counts at its position (HanTa ignores case for the first word of a sentence);
* HanTa's ``analyze_forward`` (the analysis of a word outside its table, cached the same way) and its sentence
  Viterbi written out again over numbered states in flat arrays (:class:`_Core`: typed memoryviews when
  compiled), the sentence Viterbi visiting only the tags a word can have, in the order of HanTa's transition
  table: the same additions on the same floats in the same order, the same beams (a state within 1 of the 4th
  best of its row goes on in a word, of the 6th best in a sentence), the
  same tie-breaking (first state reaching a maximum keeps it), the same insertion order of every row, and
  numpy's own ``logaddexp`` formula where HanTa merges two analyses (:func:`_logaddexp`);
* no lemma pass unless asked for (:meth:`FastHanta.tag_sent` with ``taglevel=1`` runs HanTa's ``_analyze``
  per distinct (word, tag), cached).  Where HanTa's lemma pass would raise (its ``makelemma`` indexes an empty
  lemma when the model's stem table maps a whole morpheme to the empty string: in the German model
  ``herbstauktio``), :meth:`FastHanta.check_lemmas` raises the same way: it runs HanTa's ``_analyze`` for the
  words that contain such a morpheme, and only for those.

Matched behaviour: HanTa 1.2.1 (``HanoverTagger.tag_sent_viterbi``, ``_tag_word``, ``analyze_forward`` and
``lp_m_t``).  :func:`load` checks at
start-up that the installed HanTa gives the same tags as this module on a probe (:data:`PROBE` plus sentences
with unknown, capitalised and quote tokens); if it does not (another HanTa version), it warns once and returns a
:class:`ReferenceHanta`, which calls HanTa itself.  ``tests/test_hanta_fast.py`` compares the two on thousands of
Multi30k sentences, on random token sequences and word by word (``analyze_forward``, floats compared exactly).
"""
from __future__ import annotations

import functools
import hashlib
import math
import os
import sys
import warnings
from array import array
from collections.abc import Sequence
from operator import itemgetter

from preprocess.common import compiled_class

try:   # the cython.* annotations type the hot loops' numbers in C when this file is compiled (setup.py)
    import cython
except ImportError:   # plain Python without Cython installed: the annotations are not evaluated; the decorators
    class cython:     # noqa: N801 - stands in for the module
        compiled = False

        @staticmethod
        def boundscheck(_flag):
            return lambda f: f

        wraparound = boundscheck

        @staticmethod
        def cclass(c):
            return c

        cfunc = inline = cclass
if cython.compiled:   # C's exp and log1p when compiled, Python's (the same C library functions) otherwise
    from cython.cimports.libc.math import exp as _exp
    from cython.cimports.libc.math import log1p as _log1p
else:
    from math import exp as _exp
    from math import log1p as _log1p

#: entries per LRU cache (word candidates; analysis results; lemmas): bounded memory whatever the corpus size
WORD_CACHE_SIZE = 1 << 17

#: HanTa version whose behaviour this module reproduces (documented; the probe is the real check)
MATCHED_HANTA_VERSION = "1.2.1"

_EMPTY, _START, _END, _UNKNOWN = 0, 1, 2, 3
_LOGE2 = 0.693147180559945309417232121458176568   # numpy's NPY_LOGE2
_second = itemgetter(1)
_LOWERBOUND = -1e6
#: longest word, and most Viterbi entries of a sentence, whose work arrays a tagger keeps for the next call
_KEEP_WORD_LEN = 256
_KEEP_ENTRIES = 1 << 20

#: start-up probe: sentences whose tags must agree with HanTa's own (German and English words, capitals, quote
#: marks, digits, a made-up word, a word HanTa does not know in either case)
PROBE: tuple[tuple[str, ...], ...] = (
    ("Ein", "Mann", "spielt", "Gitarre", "auf", "der", "Straße", "."),
    ("Zwei", "Hunde", "rennen", "über", "die", "Wiese", ",", "während", "ein", "Kind", "zuschaut", "."),
    ("Die", "Frau", "hat", "``", "Blorpfisch", "''", "gesagt", "und", "lachte", "."),
    ("The", "dogs", "were", "running", "to", "bigger", "houses", "."),
    ("A", "man", "in", "a", "Red", "shirt", "is", "climbing", "1984", "rocks", "'", "X", "."),
    ("schnell", "Xyzzqw", "verfünffacht", "'", "''", "é", "Ü", "?"),
)


class HantaUnavailable(RuntimeError):
    """HanTa or its model cannot be loaded."""


def _load_hanta(model: str):
    try:
        from HanTa import HanoverTagger as ht
        return ht.HanoverTagger(model)
    except Exception as e:  # pragma: no cover - depends on the installation
        raise HantaUnavailable(f"HanTa model {model} could not be loaded: {e}") from e


class ReferenceHanta:
    """HanTa itself behind :class:`FastHanta`'s interface (the fallback, and the reference in tests)."""

    fast = False

    def __init__(self, model: str = "morphmodel_ger.pgz", hanta=None):
        self.model = model
        self.hanta = hanta if hanta is not None else _load_hanta(model)

    def tag_sent(self, sent: Sequence[str], taglevel: int = 0) -> list:
        return self.hanta.tag_sent(list(sent), taglevel=taglevel)

    def check_lemmas(self, sent: Sequence[str], tags: Sequence[str]) -> None:
        """Raise where HanTa's ``tag_sent(sent, taglevel=1)`` would raise after tagging ``tags``."""
        for w, t in zip(sent, tags):
            self.hanta._analyze(w, self.hanta.tag2int[t], taglevel=1)


@cython.cfunc
@cython.inline
def _logaddexp(x: cython.double, y: cython.double) -> cython.double:
    """``numpy.logaddexp(x, y)`` on two floats: numpy's own formula (``npy_logaddexp``) with the same C library
    ``exp`` and ``log1p``, so the same float (tests/test_hanta_fast.py compares the two), without a ufunc call."""
    if x == y:
        return x + _LOGE2
    tmp: cython.double = x - y
    if tmp > 0:
        return x + _log1p(_exp(-tmp))
    elif tmp <= 0:
        return y + _log1p(_exp(tmp))
    return tmp


@cython.cfunc
@cython.inline
@cython.boundscheck(False)
@cython.wraparound(False)
def _keep_best(top: cython.double[:], cnt: cython.Py_ssize_t, k: cython.Py_ssize_t,
               v: cython.double) -> cython.Py_ssize_t:
    """The beams' running top ``k`` (HanTa's ``sorted(row.values())[k - 1]``, without sorting the row): ``v`` put
    into ``top[:cnt]`` (the best values so far, descending) where it ranks among the ``k`` best; the new count
    (``cnt + 1``, at most ``k``).  Once a row's values are all in, ``top[k - 1]`` is its ``k``-th best."""
    q: cython.Py_ssize_t
    if cnt < k or v > top[k - 1]:
        q = cnt if cnt < k else k - 1
        while q > 0 and v > top[q - 1]:
            top[q] = top[q - 1]
            q -= 1
        top[q] = v
        if cnt < k:
            cnt += 1
    return cnt


@cython.cfunc
@cython.inline
@cython.boundscheck(False)
@cython.wraparound(False)
def _reach(tval: cython.double[:], tstamp: cython.longlong[:], tlist: cython.int[:], tlen: cython.int[:],
           row: cython.Py_ssize_t, ns: cython.Py_ssize_t, state: cython.Py_ssize_t, lp: cython.double,
           stamp: cython.longlong) -> cython.int:
    """HanTa's ``row[state] = max(row.get(state, -inf), lp)`` in :meth:`_Core.forward`'s table: ``state`` enters row
    ``row`` (at the end of its insertion order, ``tlist``/``tlen``) the first time this call (``stamp``) reaches it,
    with ``lp``, and keeps the larger log probability after that."""
    pos: cython.Py_ssize_t = row * ns + state
    if tstamp[pos] != stamp:
        tstamp[pos] = stamp
        tval[pos] = lp
        tlist[row * ns + tlen[row]] = state
        tlen[row] += 1
    elif lp > tval[pos]:
        tval[pos] = lp
    return 0


@cython.cclass
class _Core:
    """The hot loops of :class:`FastHanta` over its flat arrays (when compiled: a C struct of typed memoryviews,
    so that a call acquires no buffer)."""

    _fu_start: cython.int[:]
    _fu_tag: cython.int[:]
    _fu_lp: cython.double[:]
    _fu_next: cython.int[:]
    _fg_start: cython.int[:]
    _fg: cython.int[:]
    _ff_start: cython.int[:]
    _ff_lp: cython.double[:]
    _ff_next: cython.int[:]
    _mk_start: cython.int[:]
    _mk_tag: cython.int[:]
    _mk_lp: cython.double[:]
    _gindex: cython.int[:]
    _base: cython.double[:]
    _sufval: cython.double[:]
    _sufempty: cython.double[:]
    _mindex: dict
    _sufindex: dict
    _final_pos: tuple
    _ns: cython.Py_ssize_t
    _nt: cython.Py_ssize_t
    _ng: cython.Py_ssize_t
    _maxmorph: cython.Py_ssize_t
    _fclock: cython.longlong
    _fcap: cython.Py_ssize_t
    _tval: cython.double[:]
    _tstamp: cython.longlong[:]
    _tlist: cython.int[:]
    _tlen: cython.int[:]
    _lval: cython.double[:]
    _lstamp: cython.longlong[:]
    _segk: cython.int[:]
    _sufr: cython.int[:]
    _sufstamp: cython.longlong[:]
    _trow: cython.double[:]
    _thas: cython.schar[:]
    _npt: cython.Py_ssize_t
    _ncol: cython.Py_ssize_t
    _endcol: cython.Py_ssize_t
    _ptags: tuple
    _vpos: cython.int[:]
    _vstamp: cython.longlong[:]
    _vclock: cython.longlong
    _ent_state: cython.int[:]
    _ent_back: cython.int[:]
    _ent_lp: cython.double[:]
    _top: cython.double[:]

    def __init__(self, tables):
        self._fu_start = tables._fu_start
        self._fu_tag = tables._fu_tag
        self._fu_lp = tables._fu_lp
        self._fu_next = tables._fu_next
        self._fg_start = tables._fg_start
        self._fg = tables._fg
        self._ff_start = tables._ff_start
        self._ff_lp = tables._ff_lp
        self._ff_next = tables._ff_next
        self._mk_start = tables._mk_start
        self._mk_tag = tables._mk_tag
        self._mk_lp = tables._mk_lp
        self._gindex = tables._gindex
        self._base = tables._base
        self._sufval = tables._sufval
        self._sufempty = tables._sufempty
        self._mindex = tables._mindex
        self._sufindex = tables._sufindex
        self._final_pos = tables._final_pos
        self._ns = tables._ns
        self._nt = tables._nt
        self._ng = tables._ng
        self._maxmorph = tables._maxmorph
        self._trow = tables._trow
        self._thas = tables._thas
        self._npt = tables._npt
        self._ncol = tables._ncol
        self._endcol = tables._endcol
        self._ptags = tables._ptags
        self._vpos = tables._vpos
        self._vstamp = tables._vstamp
        self._ent_state = tables._ent_state
        self._ent_back = tables._ent_back
        self._ent_lp = tables._ent_lp
        self._top = tables._top
        self._fclock = 0
        self._vclock = 0
        self._fcap = -1
        self._reserve(24)

    def _reserve(self, wlen: int) -> None:
        """analyze_forward's work arrays for words of up to ``wlen`` characters (grown, never shrunk)."""
        if wlen <= self._fcap:
            return
        wlen = max(wlen, 2 * self._fcap)
        rows = wlen + 2
        self._tval = array("d", [0.0]) * (rows * self._ns)
        self._tstamp = array("q", [0]) * (rows * self._ns)
        self._tlist = array("i", [0]) * (rows * self._ns)
        self._tlen = array("i", [0]) * rows
        self._lval = array("d", [0.0]) * (rows * max(1, self._nt))
        self._lstamp = array("q", [0]) * (rows * max(1, self._nt))
        self._segk = array("i", [0]) * rows
        self._sufr = array("i", [0]) * (rows * 5)
        self._sufstamp = array("q", [0]) * (rows * 5)
        self._fcap = wlen

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def forward(self, word: str) -> list:  # noqa: C901 - HanTa's analysis as one compiled loop (hot path)
        """``HanoverTagger.analyze_forward(word)``: the same search in the same order with the same floats, over
        numbered states in flat arrays.  Row i of HanTa's table (a dict state -> log p, in insertion order) is
        ``_tlist[i * NS:i * NS + _tlen[i]]`` (its states in insertion order) with their values in ``_tval``
        (valid where ``_tstamp`` holds this call's stamp); the morpheme log probability ``lp_m_t(word[i:j], tag)``
        is computed once per (i, j, tag) (HanTa's own ``lp_m_t``: a pure function of its arguments)."""
        wlen: cython.Py_ssize_t = len(word)
        self._reserve(wlen)
        tval: cython.double[:] = self._tval
        tstamp: cython.longlong[:] = self._tstamp
        tlist: cython.int[:] = self._tlist
        tlen: cython.int[:] = self._tlen
        lval: cython.double[:] = self._lval
        lstamp: cython.longlong[:] = self._lstamp
        segk: cython.int[:] = self._segk
        sufr: cython.int[:] = self._sufr
        sufstamp: cython.longlong[:] = self._sufstamp
        fu_start: cython.int[:] = self._fu_start
        fu_tag: cython.int[:] = self._fu_tag
        fu_lp: cython.double[:] = self._fu_lp
        fu_next: cython.int[:] = self._fu_next
        fg_start: cython.int[:] = self._fg_start
        fg: cython.int[:] = self._fg
        ff_start: cython.int[:] = self._ff_start
        ff_lp: cython.double[:] = self._ff_lp
        ff_next: cython.int[:] = self._ff_next
        mk_start: cython.int[:] = self._mk_start
        mk_tag: cython.int[:] = self._mk_tag
        mk_lp: cython.double[:] = self._mk_lp
        gindex: cython.int[:] = self._gindex
        base: cython.double[:] = self._base
        sufval: cython.double[:] = self._sufval
        sufempty: cython.double[:] = self._sufempty
        mindex: dict = self._mindex
        sufindex: dict = self._sufindex
        ns: cython.Py_ssize_t = self._ns
        nt: cython.Py_ssize_t = self._nt
        ng: cython.Py_ssize_t = self._ng
        maxmorph: cython.Py_ssize_t = self._maxmorph
        lowerbound: cython.double = _LOWERBOUND
        neg_inf: cython.double = -math.inf
        wstamp: cython.longlong = self._fclock + 1
        clock: cython.longlong = wstamp
        rstamp: cython.longlong
        rowbound: cython.double
        lp: cython.double
        lp1: cython.double
        lpm: cython.double
        lpsuf: cython.double
        v: cython.double
        top: cython.double[:] = self._top
        cnt: cython.Py_ssize_t
        i: cython.Py_ssize_t
        j: cython.Py_ssize_t
        k: cython.Py_ssize_t
        n: cython.Py_ssize_t
        f: cython.Py_ssize_t
        q: cython.Py_ssize_t
        s: cython.Py_ssize_t
        t: cython.Py_ssize_t
        g: cython.Py_ssize_t
        r: cython.Py_ssize_t
        mk: cython.Py_ssize_t
        lo: cython.Py_ssize_t
        hi: cython.Py_ssize_t
        x: cython.Py_ssize_t
        mlen: cython.Py_ssize_t
        pos: cython.Py_ssize_t
        idx: cython.Py_ssize_t
        found: cython.bint
        ready: cython.bint
        canguess: cython.bint
        short: cython.bint = wlen < 4
        for i in range(wlen + 2):
            tlen[i] = 0
        tlist[0] = 0   # the start state, log p 0
        tval[0] = 0.0
        tstamp[0] = wstamp
        tlen[0] = 1
        for i in range(wlen + 1):
            n = tlen[i]
            if n > 3:   # only states within 1 of the 4th best go on (HanTa: sorted(row.values())[3] - 1)
                cnt = 0
                for k in range(n):
                    cnt = _keep_best(top, cnt, 4, tval[i * ns + tlist[i * ns + k]])
                rowbound = top[3] - 1
            else:
                rowbound = lowerbound
            ready = False
            rstamp = 0
            for k in range(n):
                s = tlist[i * ns + k]
                lp = tval[i * ns + s]
                if lp < rowbound:
                    continue
                if fu_start[s] == fu_start[s + 1]:
                    continue
                if not ready:   # the morphemes word[i:j] of this row, once
                    ready = True
                    clock += 1
                    rstamp = clock
                    for j in range(i + 1, wlen + 1):
                        segk[j] = -1
                    for j in range(i + 1, min(wlen, i + maxmorph) + 1):
                        found_k = mindex.get(word[i:j])
                        if found_k is None:   # no morpheme starts with word[i:j]: none is longer
                            break
                        segk[j] = found_k
                for j in range(i + 1, wlen + 1):
                    mk = segk[j]
                    mlen = j - i
                    canguess = short or mlen > 2
                    if mk >= 0:
                        lo = fu_start[s]
                        hi = fu_start[s + 1]
                    elif canguess:   # no table holds the morpheme: only the tags that guess can score
                        lo = fg_start[s]
                        hi = fg_start[s + 1]
                    else:
                        continue
                    for x in range(lo, hi):
                        f = x if mk >= 0 else fg[x]
                        t = fu_tag[f]
                        idx = j * nt + t
                        if lstamp[idx] == rstamp:
                            lpm = lval[idx]
                        else:
                            found = False
                            lpm = neg_inf
                            if mk >= 0:
                                for q in range(mk_start[mk], mk_start[mk + 1]):
                                    if mk_tag[q] == t:
                                        lpm = mk_lp[q]
                                        found = True
                                        break
                            if not found and canguess and gindex[t] >= 0:
                                g = gindex[t]   # HanTa's guess: the longest suffix of the tag's table, up to 4
                                lpsuf = sufempty[g]
                                q = mlen - 1 if mlen < 5 else 4
                                while q >= 1:
                                    pos = j * 5 + q
                                    if sufstamp[pos] != wstamp:
                                        sufstamp[pos] = wstamp
                                        sufr[pos] = sufindex.get(word[j - q:j], -1)
                                    r = sufr[pos]
                                    if r >= 0:
                                        v = sufval[r * ng + g]
                                        if v == v:
                                            lpsuf = v
                                            break
                                    q -= 1
                                lpm = base[g * 25 + (mlen if mlen < 24 else 24)] + lpsuf
                                if wlen == mlen:
                                    lpm -= 4.6
                            lval[idx] = lpm
                            lstamp[idx] = rstamp
                        lp1 = lp + fu_lp[f] + lpm
                        if lp1 > lowerbound:
                            _reach(tval, tstamp, tlist, tlen, j, ns, fu_next[f], lp1, wstamp)
        i = wlen
        j = wlen + 1
        for k in range(tlen[i]):
            s = tlist[i * ns + k]
            lp = tval[i * ns + s]
            for f in range(ff_start[s], ff_start[s + 1]):
                lp1 = lp + ff_lp[f]
                if lp1 > lowerbound:
                    _reach(tval, tstamp, tlist, tlen, j, ns, ff_next[f], lp1, wstamp)
        self._fclock = clock
        final_pos: tuple = self._final_pos
        results: dict = {}
        for k in range(tlen[j]):
            s = tlist[j * ns + k]
            lp = tval[j * ns + s]
            if lp == neg_inf:
                continue
            p = final_pos[s]
            if p in results:
                results[p] = _logaddexp(results[p], lp)   # HanTa: numpy.logaddexp
            else:
                results[p] = lp
        if wlen > _KEEP_WORD_LEN:   # work arrays grown for a very long word are not kept
            self._fcap = -1
            self._reserve(24)
        result_list = list(results.items())
        result_list.sort(key=_second, reverse=True)
        if not result_list:
            result_list = [(_UNKNOWN, 0)]
        return result_list

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def viterbi(self, sent, cands, casesensitive: cython.bint, names: tuple) -> list:  # noqa: C901 - compiled, hot
        """HanTa's ``tag_sent_viterbi(sent, casesensitive)``: the tags (``names``) of the best path.  Row i of HanTa's
        table (a dict state -> log p, in insertion order) is ``_ent_*[off_i:off_i+1]``: (state, log p, the state
        before), in insertion order.  ``cands``: word, case counts -> its flat candidates; ``names``: what to give
        for each tag (by its position in ``_ptags``)."""
        nw: cython.Py_ssize_t = len(sent)
        npt: cython.Py_ssize_t = self._npt
        ncol: cython.Py_ssize_t = self._ncol
        endcol: cython.Py_ssize_t = self._endcol
        trow: cython.double[:] = self._trow
        thas: cython.schar[:] = self._thas
        vpos: cython.int[:] = self._vpos
        vstamp: cython.longlong[:] = self._vstamp
        top: cython.double[:] = self._top
        ent_state: cython.int[:] = self._ent_state
        ent_back: cython.int[:] = self._ent_back
        ent_lp: cython.double[:] = self._ent_lp
        clock: cython.longlong = self._vclock
        lowerbound: cython.double = _LOWERBOUND
        lp0: cython.double
        lp: cython.double
        lpwc: cython.double
        rowbound: cython.double
        best: cython.double
        i: cython.Py_ssize_t
        k: cython.Py_ssize_t
        q: cython.Py_ssize_t
        e: cython.Py_ssize_t
        c: cython.Py_ssize_t
        nc: cython.Py_ssize_t
        cnt: cython.Py_ssize_t
        st: cython.Py_ssize_t
        sb: cython.Py_ssize_t
        nst: cython.Py_ssize_t
        prev: cython.Py_ssize_t = 0   # the previous row: entries prev .. cur - 1
        cur: cython.Py_ssize_t = 1
        end: cython.Py_ssize_t
        final: cython.Py_ssize_t
        wc: tuple
        offsets = [0]
        # row -1: HanTa's start state (EMPTY, START) with log p 0
        ent_state[0] = 1   # pindex[EMPTY] * npt + pindex[START]
        ent_lp[0] = 0.0
        for i in range(nw):
            wc = cands(sent[i], casesensitive and i > 0)
            nc = len(wc) // 2
            need = cur + (cur - prev) * nc
            if need > len(ent_state):   # more room for the rows: copies of the entries so far
                size = max(need, 2 * len(ent_state))
                new_state: cython.int[:] = array("i", [0]) * size
                new_back: cython.int[:] = array("i", [0]) * size
                new_lp: cython.double[:] = array("d", [0.0]) * size
                for e in range(cur):
                    new_state[e] = ent_state[e]
                    new_back[e] = ent_back[e]
                    new_lp[e] = ent_lp[e]
                self._ent_state = ent_state = new_state
                self._ent_back = ent_back = new_back
                self._ent_lp = ent_lp = new_lp
            if cur - prev > 5:   # the beam: states more than 1 below the 6th best are dropped
                cnt = 0
                for e in range(prev, cur):
                    cnt = _keep_best(top, cnt, 6, ent_lp[e])
                rowbound = top[5] - 1
            else:
                rowbound = lowerbound
            clock += 1
            end = cur
            for e in range(prev, cur):
                lp0 = ent_lp[e]
                if lp0 < rowbound:
                    continue
                st = ent_state[e]
                if not thas[st]:   # HanTa: LP_trans_word[state] raises KeyError
                    self._vclock = clock
                    raise KeyError((self._ptags[st // npt], self._ptags[st % npt]))
                sb = (st % npt) * npt + 2
                for k in range(nc):
                    c = wc[2 * k]
                    lpwc = wc[2 * k + 1]
                    lp = lp0 + trow[st * ncol + c] + lpwc
                    if lp > lowerbound:
                        nst = sb + c
                        if vstamp[nst] != clock:
                            vstamp[nst] = clock
                            vpos[nst] = end
                            ent_state[end] = nst
                            ent_lp[end] = lp
                            ent_back[end] = st
                            end += 1
                        elif lp > ent_lp[vpos[nst]]:
                            ent_lp[vpos[nst]] = lp
                            ent_back[vpos[nst]] = st
            offsets.append(cur)
            prev = cur
            cur = end
        self._vclock = clock
        if cur > _KEEP_ENTRIES:   # nor the rows of a very long sentence (once this call is done with them)
            self._ent_state = array("i", [0]) * 1024
            self._ent_back = array("i", [0]) * 1024
            self._ent_lp = array("d", [0.0]) * 1024
        best = -math.inf
        final = -1
        for e in range(prev, cur):
            st = ent_state[e]
            if not thas[st]:
                raise KeyError((self._ptags[st // npt], self._ptags[st % npt]))
            lp = ent_lp[e] + (trow[st * ncol + endcol] if endcol >= 0 else -math.inf)
            if lp > best:
                best = lp
                final = e
        if final < 0:   # HanTa's backtrace fails here (KeyError): so does this one
            raise KeyError((_END, _EMPTY))
        e = final
        tags = [names[ent_state[e] % npt]]
        offsets.append(cur)
        for i in range(nw - 1, 0, -1):   # row i's entry -> the state before -> that state's entry in row i - 1
            st = ent_back[e]
            for q in range(offsets[i], offsets[i + 1]):
                if ent_state[q] == st:
                    e = q
                    break
            tags.append(names[st % npt])
        return tags[::-1]


class FastHanta:
    """Exact ``HanoverTagger.tag_sent`` tags with per-word caches (see the module docstring)."""

    fast = True

    def __init__(self, model: str = "morphmodel_ger.pgz", hanta=None, cache_size: int = WORD_CACHE_SIZE):
        self.model = model
        h = self.hanta = hanta if hanta is not None else _load_hanta(model)
        self.int2tag = h.int2tag
        self.tag2int = h.tag2int
        self._sentence_tables(h)
        self._word_tables(h)
        self._core = _Core(self)
        # morphemes whose stem HanTa's stem table maps to '' (its lemma pass fails on a word made of one of them)
        self._empty_stems = tuple(sorted({m for t in h.stemdict.values() for m, s in t.items() if s == "" and m}))
        self._ascii_stems = all(m.isascii() for m in self._empty_stems)
        self._candidates = functools.lru_cache(maxsize=cache_size)(self._word_candidates)
        self._forward = functools.lru_cache(maxsize=cache_size)(self.analyze_forward)
        self._lemma = functools.lru_cache(maxsize=cache_size)(self._analyze_lemma)

    def _sentence_tables(self, h) -> None:
        """The sentence Viterbi's tables as flat arrays: HanTa's tags numbered 0.. in the order of its transition
        table's rows (``_cols``: column -> tag), a state (tag before, tag) numbered ``a * P + b`` where a and b are
        positions in ``_ptags`` (EMPTY, START, then the columns' tags), ``_trow[state * C + column]`` its
        transition log probability and ``_thas[state]`` whether HanTa's table has the state at all."""
        trans = h.LP_trans_word
        # HanTa visits a state's following tags in the order of its transition table; the model writes every row
        # with the same keys in the same order.  Candidates are sorted by that order (checked here).
        order = None
        for row in trans.values():
            keys = list(row)
            if order is None:
                order = keys
            elif keys != order:
                raise HantaUnavailable("HanTa's transition table rows differ in their tag order")
        order = order or []
        ptags = [_EMPTY, _START] + [t for t in order if t not in (_EMPTY, _START)]
        pindex = {t: i for i, t in enumerate(ptags)}
        if any(pindex[t] != i + 2 for i, t in enumerate(order)):
            raise HantaUnavailable("HanTa's transition table names EMPTY or START as a following tag")
        npt, ncol = len(ptags), len(order)
        trow = array("d", [-math.inf]) * (npt * npt * ncol)
        thas = array("b", [0]) * (npt * npt)
        for (a, b), row in trans.items():
            if a not in pindex or b not in pindex:
                raise HantaUnavailable("a state of HanTa's transition table has a tag outside its rows")
            s = pindex[a] * npt + pindex[b]
            thas[s] = 1
            for c, lp in enumerate(row.values()):
                trow[s * ncol + c] = lp
        self._cols = tuple(order)
        self._colindex = {t: i for i, t in enumerate(order)}
        self._ptags = tuple(ptags)
        if any(t not in h.int2tag for t in order):
            raise HantaUnavailable("a tag of HanTa's transition table has no name")
        self._pnames = tuple(h.int2tag.get(t, t) for t in ptags)   # the tags' names (EMPTY and START never come out)
        self._npt = npt
        self._trow = trow
        self._thas = thas
        self._endcol = self._colindex.get(_END, -1)
        # every tag a word can have when HanTa knows nothing about it ("anything goes": log probability 0)
        self._all = tuple(x for c, t in enumerate(order) if t != _END for x in (c, 0.0))
        # the Viterbi's rows: entries (state, log p, state before) of every word of the sentence, and per state
        # its entry in the row being built (valid where _vstamp holds the row's stamp)
        self._ent_state = array("i", [0]) * 1024
        self._ent_back = array("i", [0]) * 1024
        self._ent_lp = array("d", [0.0]) * 1024
        self._vpos = array("i", [0]) * (npt * npt)
        self._vstamp = array("q", [0]) * (npt * npt)
        self._ncol = ncol
        self._top = array("d", [0.0]) * 8   # the k best values of a row (k = 4 or 6)

    def _word_tables(self, h) -> None:  # noqa: C901 - mirrors HanTa's tables one by one, run once
        """``analyze_forward``'s tables as flat arrays.  States (tag before, tag) are numbered 0.. (0 is HanTa's
        start state); ``_fu_*[_fu_start[s]:_fu_start[s + 1]]`` are HanTa's following tags of state s that are not
        final (dense tag number, log probability, the state they lead to), in HanTa's order, ``_ff_*`` the final
        ones.  ``_mindex`` maps a morpheme to k; ``_mk_*[_mk_start[k]:_mk_start[k + 1]]`` are its (dense tag,
        log p(m | tag)) for the tags that follow some state.  Tags that guess a morpheme outside their table
        (HanTa's ``lp_m_t``, strict=False) have a number g: ``_base[g * 25 + n]`` is HanTa's Int_t +
        LP_hapax_t[t] + LP_len_t[t][n] (the same additions in the same order), ``_sufval[r * G + g]`` the
        log probability of the suffix numbered r (``_sufindex``) in the tag's suffix table (NaN: not in it),
        ``_sufempty[g]`` that of ''."""
        for table in (h.LP_trans_nonfinal, h.LP_trans_final):
            for followup in table.values():
                for _t, lp in followup:
                    if lp != lp:
                        raise HantaUnavailable("HanTa's morphological transition table holds NaN")
        if any(t not in h.LP_m_t for followup in h.LP_trans_nonfinal.values() for t, _ in followup):
            raise HantaUnavailable("a following tag of HanTa's morphological model has no morpheme table")
        start = (_EMPTY, _START)
        states = {start: 0}
        keys = list(h.LP_trans)
        for s in keys:
            states.setdefault(s, len(states))
        for s in keys:
            for t, _ in list(h.LP_trans_nonfinal.get(s, [])) + list(h.LP_trans_final.get(s, [])):
                states.setdefault((s[1], t), len(states))
        tags: dict[int, int] = {}
        for s in keys:
            for t, _ in h.LP_trans_nonfinal.get(s, []):
                tags.setdefault(t, len(tags))
        guessable = [t for t in tags if t in h.LP_hapax_t and t in h.LP_s_t] if not h.strict else []
        gindex = {t: g for g, t in enumerate(guessable)}
        fu_start, fu_tag, fu_lp, fu_next = [0], [], [], []
        fg_start, fg = [0], []
        ff_start, ff_lp, ff_next = [0], [], []
        for s in states:
            for t, lp in h.LP_trans_nonfinal.get(s, []):
                if t in gindex:
                    fg.append(len(fu_tag))
                fu_tag.append(tags[t])
                fu_lp.append(lp)
                fu_next.append(states[(s[1], t)])
            fu_start.append(len(fu_tag))
            fg_start.append(len(fg))
            for t, lp in h.LP_trans_final.get(s, []):
                ff_lp.append(lp)
                ff_next.append(states[(s[1], t)])
            ff_start.append(len(ff_lp))
        mindex: dict[str, int] = {}
        per_m: list[list] = []
        for t, dense in tags.items():
            for m, lp in h.LP_m_t[t].items():
                k = mindex.get(m)
                if k is None:
                    k = mindex[m] = len(per_m)
                    per_m.append([])
                per_m[k].append((dense, lp))
        mk_start, mk_tag, mk_lp = [0], [], []
        for pairs in per_m:
            for dense, lp in pairs:
                mk_tag.append(dense)
                mk_lp.append(lp)
            mk_start.append(len(mk_tag))
        sufindex: dict[str, int] = {}
        for t in guessable:
            if "" not in h.LP_s_t[t]:
                raise HantaUnavailable("a suffix table of HanTa's morphological model has no entry for ''")
            for suf in h.LP_s_t[t]:
                if suf and len(suf) <= 4:
                    sufindex.setdefault(suf, len(sufindex))
        ng = len(guessable)
        sufval = array("d", [math.nan]) * max(1, len(sufindex) * ng)
        for g, t in enumerate(guessable):
            for suf, lp in h.LP_s_t[t].items():
                if lp != lp:
                    raise HantaUnavailable("a suffix table of HanTa's morphological model holds NaN")
                if suf in sufindex:
                    sufval[sufindex[suf] * ng + g] = lp
        self._fstates = tuple(states)
        self._ns, self._nt, self._ng = len(states), len(tags), ng
        self._fu_start, self._fu_tag = array("i", fu_start), array("i", fu_tag)
        self._fu_lp, self._fu_next = array("d", fu_lp), array("i", fu_next)
        self._fg_start, self._fg = array("i", fg_start), array("i", fg)
        self._ff_start, self._ff_lp, self._ff_next = array("i", ff_start), array("d", ff_lp), array("i", ff_next)
        prefixes = dict.fromkeys((m[:n] for m in mindex for n in range(1, len(m))), -1)
        prefixes.update(mindex)
        self._mindex = prefixes   # a morpheme -> its number, a prefix of one that is not one itself -> -1
        self._maxmorph = max(map(len, mindex), default=0)
        self._mk_start, self._mk_tag, self._mk_lp = array("i", mk_start), array("i", mk_tag), array("d", mk_lp)
        self._gindex = array("i", [gindex.get(t, -1) for t in tags])
        self._base = array("d", [h.Int_t + h.LP_hapax_t[t] + h.LP_len_t[t][n] for t in guessable for n in range(25)])
        self._sufindex = sufindex
        self._sufval = sufval
        self._sufempty = array("d", [h.LP_s_t[t][""] for t in guessable])
        self._final_pos = tuple(-s[1] for s in states)

    # ---- one word -------------------------------------------------------------------------------------------
    def analyze_forward(self, word: str) -> list:
        """``HanoverTagger.analyze_forward(word)``: the same list, the same floats, the same order."""
        return self._core.forward(word)

    def _tag_word(self, word: str, casesensitive: bool) -> list:
        """``HanoverTagger._tag_word(word, cutoff=5, casesensitive, conditional=True)``, with the morphological
        analysis of words outside HanTa's table cached."""
        h = self.hanta
        upcase = bool(casesensitive and word[0].isupper())
        word = h.normalize(word)
        if word in h.cache:
            p_tags = h.cache[word]
            cached = True
        else:
            p_tags = self._forward(word)
            cached = False
        p_w_tags = []
        case_t, wtag = h.LP_case_t, h.LP_wtag
        for tag, p in p_tags:
            if tag != _UNKNOWN:
                if casesensitive:
                    p += case_t[tag][upcase]
                p -= wtag[tag]
            p_w_tags.append((tag, p))
        p_w_tags.sort(key=_second, reverse=True)
        if not cached and p_w_tags:
            limit = p_w_tags[0][1] - 5
            p_w_tags = [(tag, p) for (tag, p) in p_w_tags if p >= limit]
        return p_w_tags

    def _word_candidates(self, word: str, casesensitive: bool) -> tuple:
        """The (column, log p) pairs the sentence Viterbi tries for ``word``, in HanTa's visiting order (the order
        of its transition table's rows), flat: (c0, lp0, c1, lp1, ...)."""
        wprobs = dict(self._tag_word(word, casesensitive))
        if not wprobs or (len(wprobs) == 1 and _UNKNOWN in wprobs):
            return self._all
        colindex = self._colindex
        pairs = sorted((colindex[c], p) for c, p in wprobs.items() if c in colindex and c != _END)
        return tuple(x for c, p in pairs for x in (c, float(p)))

    # ---- the sentence ---------------------------------------------------------------------------------------
    def tag_ids(self, sent: Sequence[str], casesensitive: bool = True) -> list[int]:
        """HanTa's ``tag_sent_viterbi(sent, casesensitive)``: the tag numbers of the best path."""
        return self._core.viterbi(sent, self._candidates, casesensitive, self._ptags)

    def tag_sent(self, sent: Sequence[str], taglevel: int = 0) -> list:
        """``HanoverTagger.tag_sent(sent, taglevel)`` for taglevel 0 (tags) and 1 ((word, lemma, tag))."""
        if not sent:
            return []
        if taglevel == 0:   # the tags' names straight from the Viterbi's backtrace
            return self._core.viterbi(sent, self._candidates, True, self._pnames)
        ids = self.tag_ids(sent)
        int2tag = self.int2tag
        if taglevel == 1:
            return [(w, self._lemma(w, t), int2tag[t]) for w, t in zip(sent, ids)]
        return self.hanta.tag_sent(list(sent), taglevel=taglevel)

    def _analyze_lemma(self, word: str, tag: int) -> str:
        return self.hanta._analyze(word, tag, taglevel=1)[0]

    def check_lemmas(self, sent: Sequence[str], tags: Sequence[str]) -> None:
        """Raise where HanTa's ``tag_sent(sent, taglevel=1)`` would raise after tagging ``tags``: its lemma pass
        can fail only for a word containing a morpheme that the stem table maps to ''; those words are analysed
        by HanTa here (cached), no other."""
        if not self._empty_stems:
            return
        if self._ascii_stems:   # one look at the whole sentence first (ASCII: lower case the same word by word)
            joined = "\t".join(sent).lower()
            if not any(m in joined for m in self._empty_stems):
                return
        for w, t in zip(sent, tags):
            low = w.lower()
            if any(m in low for m in self._empty_stems):
                self._lemma(w, self.tag2int[t])

    def cache_info(self) -> dict:
        return {"candidates": self._candidates.cache_info(), "analyses": self._forward.cache_info(),
                "lemmas": self._lemma.cache_info()}


def _source_digest() -> str:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hanta_fast.py"), "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


@functools.cache
def fast_class() -> type:
    """The compiled :class:`FastHanta` when ``preprocess.tagging._hanta_fast`` exists and was built from this file's current
    text (setup.py compiles this file with Cython and records the text's SHA-256 in it), else this module's (the same
    tags: the same operations on the same floats, the hot loops' numbers typed as C doubles).  A stale build is
    reported once and not used, so editing this file never runs old code."""
    if "SOURCE_SHA256" in globals():   # this is the compiled module itself
        return FastHanta
    return compiled_class(FastHanta, "preprocess.tagging._hanta_fast", "preprocess/tagging/hanta_fast.py", _source_digest)


def probe_sentences(hanta=None) -> list[list[str]]:
    """:data:`PROBE` plus one sentence of the words HanTa's table knows best and of made-up variants of them."""
    out = [list(s) for s in PROBE]
    if hanta is not None:
        words = sorted(hanta.cache)[:: max(1, len(hanta.cache) // 40)][:40]
        out.append([w.capitalize() if i % 3 == 0 else w for i, w in enumerate(words)])
        out.append([w + "xt" for w in words[:15]])
    return out


def agrees(fast: FastHanta, sentences=None) -> bool:
    """Whether ``fast`` gives HanTa's own tags (``tag_sent`` with taglevel 0 and 1) on ``sentences``."""
    h = fast.hanta
    for s in sentences if sentences is not None else probe_sentences(h):
        try:
            mine = fast.tag_sent(s)
        except Exception as e:   # noqa: BLE001 - must then raise in HanTa too
            mine = type(e)
        try:
            ref = h.tag_sent(list(s), taglevel=0)
        except Exception as e:   # noqa: BLE001
            ref = type(e)
        if mine != ref:
            return False
    return True


@functools.cache
def load(model: str = "morphmodel_ger.pgz"):
    """The process's tagger for a HanTa model: a :class:`FastHanta` when it agrees with the installed HanTa on the
    probe, otherwise (with a warning) HanTa itself.  Worker processes forked after this call share it."""
    hanta = _load_hanta(model)
    try:
        fast = fast_class()(model, hanta)
        ok = agrees(fast)
    except Exception as e:   # noqa: BLE001 - a model layout this module does not know
        ok, fast = False, None
        reason = f"{type(e).__name__}: {e}"
    else:
        reason = "different tags on the start-up probe"
    if ok:
        return fast
    try:
        from importlib.metadata import version
        installed = version("HanTa")
    except Exception:   # noqa: BLE001
        installed = "unknown"
    warnings.warn(f"preprocess.tagging.hanta_fast: the installed HanTa ({installed}) does not behave like HanTa "
                  f"{MATCHED_HANTA_VERSION} ({reason}); tagging with HanTa itself (slower, same tags)",
                  RuntimeWarning, stacklevel=2)
    print(f"warning: HanTa {installed} differs from {MATCHED_HANTA_VERSION}, which preprocess.tagging.hanta_fast "
          f"reproduces ({reason}); using HanTa itself (slower)", file=sys.stderr)
    return ReferenceHanta(model, hanta)
