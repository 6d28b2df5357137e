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
import math
import sys
import warnings
from typing import Dict, List, Sequence, Tuple

#: entries per LRU cache (word candidates; analysis results; lemmas): bounded memory whatever the corpus size
WORD_CACHE_SIZE = 1 << 17

#: HanTa version whose behaviour this module reproduces (documented; the probe is the real check)
MATCHED_HANTA_VERSION = "1.2.1"

_EMPTY, _START, _END, _UNKNOWN = 0, 1, 2, 3
_LOWERBOUND = -1e6

#: start-up probe: sentences whose tags must agree with HanTa's own (German and English words, capitals, quote
#: marks, digits, a made-up word, a word HanTa does not know in either case)
PROBE: Tuple[Tuple[str, ...], ...] = (
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
        self._candidates = functools.lru_cache(maxsize=cache_size)(self._word_candidates)
        self._forward = functools.lru_cache(maxsize=cache_size)(h.analyze_forward)
        self._lemma = functools.lru_cache(maxsize=cache_size)(self._analyze_lemma)

    # ---- one word -------------------------------------------------------------------------------------------
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
    def tag_ids(self, sent: Sequence[str], casesensitive: bool = True) -> List[int]:
        """HanTa's ``tag_sent_viterbi(sent, casesensitive)``: the tag numbers of the best path."""
        cands = self._candidates
        trans = self._trans
        prevrow: Dict[tuple, float] = {(_EMPTY, _START): 0.0}
        backpointers = []
        for i, w in enumerate(sent):
            wc = cands(w, casesensitive and i > 0)
            row: Dict[tuple, float] = {}
            back: Dict[tuple, tuple] = {}
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
                    lp = lp0 + lp_t[c] + lpwc
                    if lp > _LOWERBOUND:
                        ns = (s1, c)
                        old = row.get(ns)
                        if old is None or lp > old:
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
        for w, t in zip(sent, tags):
            low = w.lower()
            if any(m in low for m in self._empty_stems):
                self._lemma(w, self.tag2int[t])

    def cache_info(self) -> dict:
        return {"candidates": self._candidates.cache_info(), "analyses": self._forward.cache_info(),
                "lemmas": self._lemma.cache_info()}


def probe_sentences(hanta=None) -> List[List[str]]:
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


@functools.lru_cache(maxsize=None)
def load(model: str = "morphmodel_ger.pgz"):
    """The process's tagger for a HanTa model: a :class:`FastHanta` when it agrees with the installed HanTa on the
    probe, otherwise (with a warning) HanTa itself.  Worker processes forked after this call share it."""
    hanta = _load_hanta(model)
    try:
        fast = FastHanta(model, hanta)
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
