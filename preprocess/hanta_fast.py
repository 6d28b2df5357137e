"""HanTa's sentence tagging, exact and fast: the tags of ``HanoverTagger.tag_sent`` with per-word caches.

HanTa (Wartena 2019, package ``HanTa``) tags a sentence in two steps: every word gets a list of (tag, log
probability) candidates from its morphological model (``_tag_word``: a pre-computed table for frequent words,
otherwise ``analyze_forward``, a Viterbi search over every split of the word), then a trigram Viterbi over the
sentence picks the tags (``tag_sent_viterbi``).  With ``taglevel`` 1 or more it then analyses every word again
for its lemma (``_analyze``), which does not change the tags.  HanTa caches nothing across sentences, so a word
is analysed again in every sentence it occurs in, and the lemma pass costs as much as the tagging.

:class:`FastHanta` computes the same tags from HanTa's own model tables (loaded once per process by HanTa's
own loader), with

* the candidate list of a word computed by HanTa's own ``_tag_word`` / ``analyze_forward`` and kept in a bounded
  LRU cache (:data:`WORD_CACHE_SIZE` entries per cache), keyed by everything it depends on: the word and
  whether case counts at its position (HanTa ignores case for the first word of a sentence);
* the sentence Viterbi written out again with the candidates of each word pre-sorted in the order of HanTa's
  transition table, so that it visits only the tags a word can have instead of all 56 tags per state, in the
  same order as HanTa: the same additions on the same floats, the same beam (5 best states), the same
  tie-breaking (first state reaching a maximum keeps it) and the same insertion order of every row;
* no lemma pass unless asked for (:meth:`FastHanta.tag_sent` with ``taglevel=1`` runs HanTa's ``_analyze``
  per distinct (word, tag), cached).  Where HanTa's lemma pass would raise (its ``makelemma`` indexes an empty
  lemma when the model's stem table maps a whole morpheme to the empty string: in the German model
  ``herbstauktio``), :meth:`FastHanta.check_lemmas` raises the same way: it runs HanTa's ``_analyze`` for the
  words that contain such a morpheme, and only for those.

Matched behaviour: HanTa 1.2.1 (``HanoverTagger.tag_sent_viterbi`` and ``_tag_word``).  :func:`load` checks at
start-up that the installed HanTa gives the same tags as this module on a probe (:data:`PROBE` plus sentences
with unknown, capitalised and quote tokens); if it does not (another HanTa version), it warns once and returns a
:class:`ReferenceHanta`, which calls HanTa itself.  ``tests/test_hanta_fast.py`` compares the two on thousands of
Multi30k sentences and on random token sequences.
"""
from __future__ import annotations

import functools
import hashlib
import math
import os
import sys
import warnings
from collections.abc import Sequence

import numpy as np

from preprocess.common import compiled_class

try:   # the cython.* annotations type the hot loops' numbers in C when this file is compiled (setup.py)
    import cython
except ImportError:   # plain Python without Cython installed: only the annotations name it
    cython = None

#: entries per LRU cache (word candidates; analysis results; lemmas): bounded memory whatever the corpus size
WORD_CACHE_SIZE = 1 << 17

#: HanTa version whose behaviour this module reproduces (documented; the probe is the real check)
MATCHED_HANTA_VERSION = "1.2.1"

_EMPTY, _START, _END, _UNKNOWN = 0, 1, 2, 3
_logaddexp = np.logaddexp
_NO_FOLLOWUP: tuple = ((), ())
_LOWERBOUND = -1e6

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


def _guess(m: str, base: tuple, wlen: int) -> float:
    """``HanoverTagger.lp_m_t(m, t, wlen, strict=False)`` for a morpheme outside the tag's table, a tag that has
    hapax and suffix tables (``base``: see ``FastHanta._guess_base``) and ``wlen < 4 or len(m) > 2`` (otherwise HanTa
    returns -inf): the same operations in the same order."""
    lengths, LP_s = base
    mlen = len(m)
    if mlen > 4 and m[-4:] in LP_s:
        lp_suf = LP_s[m[-4:]]
    elif mlen > 3 and m[-3:] in LP_s:
        lp_suf = LP_s[m[-3:]]
    elif mlen > 2 and m[-2:] in LP_s:
        lp_suf = LP_s[m[-2:]]
    elif mlen > 1 and m[-1:] in LP_s:
        lp_suf = LP_s[m[-1:]]
    else:
        lp_suf = LP_s['']
    lp = lengths[mlen if mlen < 24 else 24] + lp_suf
    if wlen == mlen:
        lp -= 4.6
    return lp


class FastHanta:
    """Exact ``HanoverTagger.tag_sent`` tags with per-word caches (see the module docstring)."""

    fast = True

    def __init__(self, model: str = "morphmodel_ger.pgz", hanta=None, cache_size: int = WORD_CACHE_SIZE):
        self.model = model
        h = self.hanta = hanta if hanta is not None else _load_hanta(model)
        self.int2tag = h.int2tag
        self.tag2int = h.tag2int
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
        self._order = {c: i for i, c in enumerate(order or [])}
        self._trans = trans
        # every tag a word can have when HanTa knows nothing about it ("anything goes": log probability 0)
        self._all = tuple((c, 0) for c in (order or []) if c != _END)
        # morphemes whose stem HanTa's stem table maps to '' (its lemma pass fails on a word made of one of them)
        self._empty_stems = tuple(sorted({m for t in h.stemdict.values() for m, s in t.items() if s == "" and m}))
        self._ascii_stems = all(m.isascii() for m in self._empty_stems)
        # tags whose morphemes outside the table get a guessed probability (HanTa's lp_m_t, strict=False)
        self._guessable = frozenset(t for t in h.LP_hapax_t if t in h.LP_s_t) if not h.strict else frozenset()
        # analyze_forward's tables: every state's following tags, all and those that guess; the tags of every
        # morpheme (HanTa looks a morpheme up in the table of each following tag; the same values)
        if any(t not in h.LP_m_t for followup in h.LP_trans_nonfinal.values() for t, _ in followup):
            raise HantaUnavailable("a following tag of HanTa's morphological model has no morpheme table")
        self._followups = {state: (list(followup), [(t, p) for t, p in followup if t in self._guessable])
                           for state, followup in h.LP_trans_nonfinal.items()}
        morph_tags: dict[str, dict] = {}
        for t, table in h.LP_m_t.items():
            for m, lp in table.items():
                morph_tags.setdefault(m, {})[t] = lp
        self._morph_tags = morph_tags
        # per guessing tag: (Int_t + LP_hapax_t[t] + LP_len_t[t][n] for n = 0..24, the tag's suffix table); HanTa adds
        # the same numbers in the same order, so the sums are the same floats
        self._guess_base = {t: (tuple(h.Int_t + h.LP_hapax_t[t] + h.LP_len_t[t][n] for n in range(25)), h.LP_s_t[t])
                            for t in self._guessable}
        self._candidates = functools.lru_cache(maxsize=cache_size)(self._word_candidates)
        self._forward = functools.lru_cache(maxsize=cache_size)(self.analyze_forward)
        self._lemma = functools.lru_cache(maxsize=cache_size)(self._analyze_lemma)

    # ---- one word -------------------------------------------------------------------------------------------
    def analyze_forward(self, word: str) -> list:
        """``HanoverTagger.analyze_forward(word)``: the same search in the same order with the same floats; the
        morpheme log probability ``lp_m_t(word[i:j], tag)`` is computed once per word instead of once per state
        that reaches position i (HanTa's own ``lp_m_t``: a pure function of its arguments)."""
        h = self.hanta
        lowerbound: cython.double = _LOWERBOUND
        rowbound: cython.double
        lp: cython.double
        lpt: cython.double
        lp1: cython.double
        lpmd: cython.double
        oldlp: cython.double
        i: cython.Py_ssize_t
        j: cython.Py_ssize_t
        wlen: cython.Py_ssize_t = len(word)
        followups = self._followups
        morph_tags = self._morph_tags
        guess_base = self._guess_base
        short = wlen < 4
        table = [{(_EMPTY, _START): 0}] + [{} for _ in range(wlen + 1)]
        for i in range(wlen + 1):
            row = table[i]
            if len(row) > 3:
                rowbound = sorted(row.values(), reverse=True)[3] - 1
            else:
                rowbound = lowerbound
            segments = None
            for state in row:
                lp = row[state]
                if lp < rowbound:
                    continue
                followup, followup_guessable = followups.get(state, _NO_FOLLOWUP)
                if not followup:
                    continue
                if segments is None:
                    # (the row word[i:j] reaches, the tags whose table holds word[i:j] or None, word[i:j], its
                    # guesses so far per tag; None where HanTa's guess is -inf for every tag)
                    segments = []
                    for j in range(i + 1, wlen + 1):
                        m = word[i:j]
                        segments.append((table[j], morph_tags.get(m), m, {} if short or j - i > 2 else None))
                s1 = state[1]
                for target, known, m, guesses in segments:
                    if known is None:   # no table holds the morpheme: only tags that guess can score
                        if guesses is None or not followup_guessable:
                            continue
                        todo = followup_guessable
                    else:
                        todo = followup
                    for tag1, lpt in todo:
                        lpm = known.get(tag1) if known is not None else None
                        if lpm is None:   # HanTa's guess for a morpheme outside the table, or -inf
                            if guesses is None:
                                continue
                            lpm = guesses.get(tag1)
                            if lpm is None:
                                base = guess_base.get(tag1)
                                if base is None:
                                    continue
                                lpm = guesses[tag1] = _guess(m, base, wlen)
                        lpmd = lpm
                        lp1 = lp + lpt + lpmd
                        if lp1 > lowerbound:
                            newstate = (s1, tag1)
                            old = target.get(newstate)
                            if old is None:
                                target[newstate] = lp1
                            else:
                                oldlp = old
                                if lp1 > oldlp:
                                    target[newstate] = lp1
        final = h.LP_trans_final
        last = table[-1]
        for state in table[-2]:
            lp = table[-2][state]
            for tag1, lpt in final.get(state, []):
                lp1 = lp + lpt
                if lp1 > lowerbound:
                    newstate = (state[1], tag1)
                    if newstate not in last or lp1 > last[newstate]:
                        last[newstate] = lp1
        results: dict = {}
        for state in last:
            lp = last[state]
            if lp == -math.inf:
                continue
            pos = -state[1]
            if pos in results:
                results[pos] = _logaddexp(results[pos], lp)
            else:
                results[pos] = lp
        result_list = list(results.items())
        result_list.sort(key=lambda x: x[1], reverse=True)
        if not result_list:
            result_list = [(_UNKNOWN, 0)]
        return result_list

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
        p_w_tags.sort(key=lambda x: x[1], reverse=True)
        if not cached and p_w_tags:
            limit = p_w_tags[0][1] - 5
            p_w_tags = [(tag, p) for (tag, p) in p_w_tags if p >= limit]
        return p_w_tags

    def _word_candidates(self, word: str, casesensitive: bool) -> tuple:
        """The (tag, log p) pairs the sentence Viterbi tries for ``word``, in HanTa's visiting order."""
        wprobs = dict(self._tag_word(word, casesensitive))
        if not wprobs or (len(wprobs) == 1 and _UNKNOWN in wprobs):
            return self._all
        order = self._order
        return tuple(sorted(((c, p) for c, p in wprobs.items() if c in order and c != _END),
                            key=lambda cp: order[cp[0]]))

    # ---- the sentence ---------------------------------------------------------------------------------------
    def tag_ids(self, sent: Sequence[str], casesensitive: bool = True) -> list[int]:
        """HanTa's ``tag_sent_viterbi(sent, casesensitive)``: the tag numbers of the best path."""
        cands = self._candidates
        trans = self._trans
        lp0: cython.double
        lp: cython.double
        lpwc: cython.double
        lpc: cython.double
        oldlp: cython.double
        rowbound: cython.double
        prevrow = {(_EMPTY, _START): 0.0}
        backpointers = []
        for i, w in enumerate(sent):
            wc = cands(w, casesensitive and i > 0)
            row = {}
            back = {}
            if len(prevrow) > 5:   # the beam: states more than 1 below the 6th best are dropped
                rowbound = sorted(prevrow.values(), reverse=True)[5] - 1
            else:
                rowbound = _LOWERBOUND
            for state, lp0 in prevrow.items():
                if lp0 < rowbound:
                    continue
                lp_t = trans[state]
                s1 = state[1]
                for c, lpwc in wc:
                    lpc = lp_t[c]
                    lp = lp0 + lpc + lpwc
                    if lp > _LOWERBOUND:
                        ns = (s1, c)
                        old = row.get(ns)
                        if old is None:
                            row[ns] = lp
                            back[ns] = state
                        else:
                            oldlp = old
                            if lp > oldlp:
                                row[ns] = lp
                                back[ns] = state
            backpointers.append(back)
            prevrow = row
        best = -math.inf
        final = None
        for state, lp0 in prevrow.items():
            lp = lp0 + trans[state].get(_END, -math.inf)
            if lp > best:
                best = lp
                final = state
        if final is None:   # HanTa's backtrace fails here (KeyError): so does this one
            raise KeyError((_END, _EMPTY))
        tags = [final[1]]
        state = final
        for back in backpointers[:0:-1]:
            state = back[state]
            tags.append(state[1])
        return tags[::-1]

    def tag_sent(self, sent: Sequence[str], taglevel: int = 0) -> list:
        """``HanoverTagger.tag_sent(sent, taglevel)`` for taglevel 0 (tags) and 1 ((word, lemma, tag))."""
        if not sent:
            return []
        ids = self.tag_ids(sent)
        int2tag = self.int2tag
        if taglevel == 0:
            return [int2tag[t] for t in ids]
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
    """The compiled :class:`FastHanta` when ``preprocess._hanta_fast`` exists and was built from this file's current
    text (setup.py compiles this file with Cython and records the text's SHA-256 in it), else this module's (the same
    tags: the same operations on the same floats, the hot loops' numbers typed as C doubles).  A stale build is
    reported once and not used, so editing this file never runs old code."""
    if "SOURCE_SHA256" in globals():   # this is the compiled module itself
        return FastHanta
    return compiled_class(FastHanta, "preprocess._hanta_fast", "preprocess/hanta_fast.py", _source_digest)


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
    warnings.warn(f"preprocess.hanta_fast: the installed HanTa ({installed}) does not behave like HanTa "
                  f"{MATCHED_HANTA_VERSION} ({reason}); tagging with HanTa itself (slower, same tags)",
                  RuntimeWarning, stacklevel=2)
    print(f"warning: HanTa {installed} differs from {MATCHED_HANTA_VERSION}, which preprocess.hanta_fast "
          f"reproduces ({reason}); using HanTa itself (slower)", file=sys.stderr)
    return ReferenceHanta(model, hanta)
