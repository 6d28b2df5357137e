"""Part-of-speech taggers for BITE, both returning Penn Treebank (PTB) tags.

* ``nltk``: NLTK's averaged perceptron tagger (greedy decoding), the tagger of the BITE paper. Needs the NLTK
  data ``taggers/averaged_perceptron_tagger_eng`` (set ``NLTK_DATA``). Tagging is *exactly* NLTK's
  ``PerceptronTagger.tag`` (same tag dictionary, same features, same ``predict``); it is only made faster by
  memoising ``predict`` on everything its features depend on (the word, the two previous tags and the normalised
  words at i-2 .. i+2), so a repeated context costs one dict lookup instead of ~14 feature strings and a
  dot product over ~45 classes.
* ``hanta``: HanTa's bundled English model (Wartena 2019), which tags with the BNC CLAWS5 (C5) tagset. C5 tags are
  mapped onto the PTB tags that matter for BITE (NN2 -> NNS, AJC -> JJR, VVD/VBD/VDD/VHD -> VBD, VVB -> VBP, ...),
  so BITE runs with no NLTK data at all.

``universal(ptb_tag)`` maps PTB to the universal tagset (Petrov et al. 2012; the table is NLTK's ``en-ptb.map``,
written out here so that the ``hanta`` path needs no NLTK data; a test checks it against NLTK's file).
"""
from __future__ import annotations

import functools
import itertools
import json
import os
import sys
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from preprocess.common import SHARED_DATA
from preprocess.tagging.perceptron_fast import batch_kernel

#: the taggers' names (:func:`get_tagger`): NLTK's averaged perceptron (PTB tags) and HanTa (CLAWS5 -> PTB)
NLTK, HANTA = "nltk", "hanta"
TAGGERS = (NLTK, HANTA)

# Universal tagset for PTB tags (the entries of en-ptb.map for the 45 PTB tags and the -LRB-/-RRB- variants).
PTB_TO_UNIVERSAL: Dict[str, str] = {
    "!": ".", "#": ".", "$": ".", "''": ".", "(": ".", ")": ".", ",": ".", "-LRB-": ".", "-RRB-": ".",
    ".": ".", ":": ".", "?": ".", "``": ".",
    "CC": "CONJ", "CD": "NUM", "DT": "DET", "EX": "DET", "FW": "X", "IN": "ADP", "JJ": "ADJ", "JJR": "ADJ",
    "JJS": "ADJ", "LS": "X", "MD": "VERB", "NN": "NOUN", "NNP": "NOUN", "NNPS": "NOUN", "NNS": "NOUN",
    "PDT": "DET", "POS": "PRT", "PRP": "PRON", "PRP$": "PRON", "RB": "ADV", "RBR": "ADV", "RBS": "ADV",
    "RP": "PRT", "SYM": "X", "TO": "PRT", "UH": "X", "VB": "VERB", "VBD": "VERB", "VBG": "VERB", "VBN": "VERB",
    "VBP": "VERB", "VBZ": "VERB", "WDT": "DET", "WP": "PRON", "WP$": "PRON", "WRB": "ADV",
}


def universal(ptb_tag: str) -> str:
    """Universal tag of a PTB tag ('X' for tags outside the table, as NLTK's map_tag does)."""
    return PTB_TO_UNIVERSAL.get(ptb_tag, "X")


# BNC CLAWS5 (C5) -> PTB. Verb tags: V + {V lexical, B be, D do, H have} + {B present non-3sg, D past, G -ing,
# I infinitive, N past participle, Z 3sg}; VM0 modal.
_C5_TO_PTB: Dict[str, str] = {
    "AJ0": "JJ", "AJC": "JJR", "AJS": "JJS", "AT0": "DT", "AV0": "RB", "AVP": "RP", "AVQ": "WRB",
    "CJC": "CC", "CJS": "IN", "CJT": "IN", "CRD": "CD", "DPS": "PRP$", "DT0": "DT", "DTQ": "WDT", "EX0": "EX",
    "ITJ": "UH", "NN0": "NN", "NN1": "NN", "NN2": "NNS", "NP0": "NNP", "ORD": "JJ", "PNI": "NN", "PNP": "PRP",
    "PNQ": "WP", "PNX": "PRP", "POS": "POS", "PRF": "IN", "PRP": "IN", "PUL": "(", "PUN": ".", "PUQ": "''",
    "PUR": ")", "TO0": "TO", "UNC": "FW", "VM0": "MD", "XX0": "RB", "ZZ0": "NN",
}
for _v in "VBDH":
    for _suffix, _ptb in (("B", "VBP"), ("D", "VBD"), ("G", "VBG"), ("I", "VB"), ("N", "VBN"), ("Z", "VBZ")):
        _C5_TO_PTB["V" + _v + _suffix] = _ptb


def c5_to_ptb(tag: str) -> str:
    """Map a CLAWS5 tag (or an ambiguity tag 'AJ0-NN1': its first part) to PTB; unknown tags give 'FW'."""
    tag = tag.split("-")[0] if "-" in tag and tag not in _C5_TO_PTB else tag
    return _C5_TO_PTB.get(tag, "FW")


class _PtbOfC5(dict):
    """:func:`c5_to_ptb` of each tag met, remembered (a function of the tag alone, and HanTa's tags are a few
    hundred at most): ``PTB_OF_C5[tag]`` is one dict look-up per word."""

    def __missing__(self, tag: str) -> str:
        ptb = self[tag] = c5_to_ptb(tag)
        return ptb


PTB_OF_C5 = _PtbOfC5()


class TaggerUnavailable(RuntimeError):
    """The tagger's model/data cannot be loaded (e.g. NLTK data missing)."""


_TEMPLATES = ("bias", "i suffix", "i pref1", "i-1 tag", "i-2 tag", "i tag+i-2 tag", "i word", "i-1 tag+i word",
              "i-1 word", "i-1 suffix", "i-2 word", "i+1 word", "i+1 suffix", "i+2 word")
_TWO_ARGS = ("i tag+i-2 tag", "i-1 tag+i word")


#: NLTK's averaged perceptron model, relative to an NLTK data folder (weights, tag dictionary, classes)
_PERCEPTRON = "taggers/averaged_perceptron_tagger_eng/averaged_perceptron_tagger_eng.{}.json"


#: the shared data folder's NLTK data, relative to the repository (``../shared/data/nltk_data``)
_SHARED_NLTK_DATA = str(SHARED_DATA / "nltk_data")


def _package_data_dirs() -> List[str]:
    """Where this package looks for NLTK data before NLTK's own defaults (so that it runs from an activated
    venv without ``make`` or ``NLTK_DATA``): the venv's ``nltk_data``, then ``../shared/data/nltk_data``
    relative to the repository."""
    return [os.path.join(sys.prefix, "nltk_data"), _SHARED_NLTK_DATA]


def _nltk_data_dirs() -> List[str]:
    """NLTK's data folders in the order this package searches them: ``NLTK_DATA``, then
    :func:`_package_data_dirs`, then NLTK's own defaults (``nltk.data.path`` on Linux and macOS), without
    importing NLTK: ``import nltk`` takes about 2 s (it imports scipy.stats), longer than loading the model."""
    dirs = [os.path.expanduser(d) for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d]
    dirs += _package_data_dirs()
    if "APPENGINE_RUNTIME" not in os.environ and os.path.expanduser("~/") != "~/":
        dirs.append(os.path.expanduser("~/nltk_data"))
    dirs += [os.path.join(sys.prefix, "nltk_data"), os.path.join(sys.prefix, "share", "nltk_data"),
             os.path.join(sys.prefix, "lib", "nltk_data"), "/usr/share/nltk_data", "/usr/local/share/nltk_data",
             "/usr/lib/nltk_data", "/usr/local/lib/nltk_data"]
    return list(dict.fromkeys(dirs))


#: the one line that says how to get the tagger data
NLTK_DATA_HINT = ("NLTK tagger data (taggers/averaged_perceptron_tagger_eng) not found in NLTK_DATA, the venv's "
                  "nltk_data, ../shared/data/nltk_data or NLTK's default folders; get it with "
                  "`python -m nltk.downloader -d \"$VIRTUAL_ENV/nltk_data\" averaged_perceptron_tagger_eng` "
                  "(or set NLTK_DATA), or use tagger 'hanta'")


@functools.lru_cache(maxsize=None)
def _nltk_perceptron():
    """NLTK's own ``PerceptronTagger`` (importing NLTK): for reference tagging, and to load the model where
    ``_load_perceptron`` does not find its files.  NLTK searches this package's folders too (after
    ``NLTK_DATA``, before its defaults)."""
    try:
        import nltk.data
        from nltk.tag.perceptron import PerceptronTagger
        # NLTK reads NLTK_DATA once, when imported: its current value first, then this package's folders
        env = [os.path.expanduser(d) for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d]
        for d in reversed(env):
            if d not in nltk.data.path:
                nltk.data.path.insert(0, d)
        at = max((nltk.data.path.index(d) + 1 for d in env), default=0)
        for d in reversed(_package_data_dirs()):
            if os.path.isdir(d) and d not in nltk.data.path:
                nltk.data.path.insert(at, d)
        return PerceptronTagger()
    except LookupError as e:  # NLTK data not found
        raise TaggerUnavailable(NLTK_DATA_HINT) from e


def _load_perceptron() -> tuple:
    """(weights, tag dictionary, classes) of NLTK's English perceptron: the JSON files that
    ``PerceptronTagger()`` reads, from the first data folder that holds them unpacked; in any other case (a
    zipped package, Windows folders, no data) NLTK's own loader decides, as ``PerceptronTagger()`` would."""
    if sys.platform != "win32":
        for d in _nltk_data_dirs():
            paths = [os.path.join(d, _PERCEPTRON.format(part)) for part in ("weights", "tagdict", "classes")]
            if all(os.path.isfile(p) for p in paths):
                loaded = []
                for p in paths:
                    with open(p, encoding="utf-8") as fh:
                        loaded.append(json.load(fh))
                return tuple(loaded)
            if os.path.exists(os.path.join(d, "taggers", "averaged_perceptron_tagger_eng.zip")):
                break
    nltk_tagger = _nltk_perceptron()
    return nltk_tagger.model.weights, nltk_tagger.tagdict, nltk_tagger.classes


class NltkTagger:
    """NLTK's averaged perceptron tagger, batched; output identical to ``PerceptronTagger.tag``.

    ``PerceptronTagger.predict`` adds, per class, the weights of 14 feature strings in a fixed order and takes the
    best (score, label).  Here the weights are a dense matrix (one row per feature, one column per class, 0.0 where
    NLTK has no weight, which adds nothing), the feature rows come from dict look-ups instead of string building,
    and position *j* of a whole batch of sentences is scored at once with numpy, adding the rows in NLTK's order
    (so every score is the same float NLTK computes; ties go to the larger label as in NLTK).  Sentences are
    processed left to right because the features use the two previous predicted tags.
    """

    name = NLTK

    def __init__(self, batch_size: int = 2048):
        self.batch_size = batch_size
        weights, self._tagdict, classes = _load_perceptron()
        self._build(weights, classes)

    #: NLTK's sentence boundary context (PerceptronTagger.START / END)
    START, END = ["-START-", "-START2-"], ["-END-", "-END2-"]

    @staticmethod
    def _normalize(word: str) -> str:
        """``PerceptronTagger.normalize``: the word form that the context features use."""
        if "-" in word and word[0] != "-":
            return "!HYPHEN"
        if word.isdigit() and len(word) == 4:
            return "!YEAR"
        if word and word[0].isdigit():
            return "!DIGITS"
        return word.lower()

    def _build(self, weights: dict, classes) -> None:
        classes = sorted(classes)
        cidx = {c: i for i, c in enumerate(classes)}
        tables: Dict[str, dict] = {t: {} for t in _TEMPLATES}
        by_head = {" ".join(t.split(" ")[:2]): t for t in _TEMPLATES}   # the first two words name the template
        for r, feat in enumerate(weights):   # (head: the text before the second space, or all of it)
            t = by_head.get(feat[:feat.find(" ", feat.find(" ") + 1)] if feat.count(" ") > 1 else feat)
            if t is not None and (feat == t or feat.startswith(t + " ")):
                arg = feat[len(t) + 1:]
                if t in _TWO_ARGS:
                    a, _, b = arg.partition(" ")
                    arg = (a, b)
                tables[t][arg] = r
        # the matrix: feature r's weights in row r (label dictionaries flattened in C)
        labels = list(weights.values())
        counts = list(map(len, labels))
        rows = np.repeat(np.arange(len(labels)), counts)
        cols = np.fromiter(map(cidx.get, itertools.chain.from_iterable(labels), itertools.repeat(-1)),
                           dtype=np.int64, count=len(rows))
        vals = np.fromiter(itertools.chain.from_iterable(map(dict.values, labels)), dtype=np.float64,
                           count=len(rows))
        known = cols >= 0   # (a label outside the classes: none in NLTK's model)
        zero = len(weights)
        W = np.zeros((zero + 1, len(classes)), dtype=np.float64)
        W[rows[known], cols[known]] = vals[known]
        self._W = W
        self._zero = zero
        self._classes = classes
        self._tables = tables
        start = list(self.START)
        self._start = start
        self._end = list(self.END)
        self._tagvocab = classes + start           # ids of possible previous tags
        self._tagid = {t: i for i, t in enumerate(self._tagvocab)}
        g = lambda t, k: tables[t].get(k, zero)
        self._A1 = np.array([g("i-1 tag", t) for t in self._tagvocab], dtype=np.int64)
        self._A2 = np.array([g("i-2 tag", t) for t in self._tagvocab], dtype=np.int64)
        self._A3 = np.array([[g("i tag+i-2 tag", (p, p2)) for p2 in self._tagvocab] for p in self._tagvocab],
                            dtype=np.int64)
        self._bias = tables["bias"].get("", zero)
        self._build_tagword()
        # one sentence at a time: the three previous-tag rows summed per (previous tag, tag before), and the bound
        # on how far a sum of the 14 rows in any order can be from NLTK's sum (see _tag_one)
        self._D = W[self._A1][:, None, :] + W[self._A2][None, :, :] + W[self._A3]
        u = 2.0 ** -53
        self._margin = 4 * (13 * u / (1 - 13 * u)) * 14 * float(np.abs(W).max())
        # the batch path scores in float32 (half the memory traffic of float64): every weight rounded to float32
        # (relative error u32 each) and the 14 summed in float32 in any order (within gamma_13(u32) of their sum)
        # is within (u32 + gamma_13(u32) (1 + u32)) * sum|w| of the exact sum, NLTK's float64 sum within
        # gamma_13(u) * sum|w| of it; a lead over the runner-up of more than twice the sum of both is NLTK's
        # best class too (the margin below is twice that again, as above)
        W32 = W.astype(np.float32)
        self._W32 = W32
        self._D32 = W32[self._A1][:, None, :] + W32[self._A2][None, :, :] + W32[self._A3]
        u32 = 2.0 ** -24
        gamma = lambda v: 13 * v / (1 - 13 * v)
        self._margin32 = 4 * (u32 + gamma(u32) * (1 + u32) + gamma(u)) * 14 * float(np.abs(W).max())
        self._kernel = batch_kernel() if W.shape[1] <= 64 else None
        self._reset_vocab()

    def reference_tag(self, tokens: Sequence[str]) -> List[str]:
        """Plain NLTK tagging, for benchmarks and tests."""
        return [t for _, t in _nltk_perceptron().tag(list(tokens))]

    def tag(self, tokens: Sequence[str]) -> List[str]:
        return self.tag_sents([tokens])[0]

    # ---- per-word caches: everything a feature row depends on is a property of one (raw or normalised) word ----
    def _reset_vocab(self) -> None:
        self._raw_id: Dict[str, int] = {}
        self._norm_id: Dict[str, int] = {}
        self._RW = np.zeros((1024, 4), dtype=np.int64)   # suffix row, pref1 row, tag-dictionary tag (or -1), norm id
        self._NW = np.zeros((1024, 8), dtype=np.int64)   # i word, i-1 word, i-1 suffix, i-2 word, i+1 word,
        #                                                  i+1 suffix, i+2 word rows; row of the tag+word table
        self._RWl: List[tuple] = []   # the rows as Python tuples (one sentence at a time reads these; the arrays
        self._NWl: List[tuple] = []   # above are filled from them when a batch needs them: see _sync)
        self._synced = (0, 0)
        self._memo: Dict[tuple, int] = {}   # one sentence at a time: (word, context) -> predicted tag id
        self._ctx_ids = [self._norm(w) for w in self._start + self._end]

    def _sync(self) -> None:
        """Bring the numpy row arrays (the batch path's) up to date with the row lists."""
        done_raw, done_norm = self._synced
        for name, rows, done in (("_RW", self._RWl, done_raw), ("_NW", self._NWl, done_norm)):
            arr = getattr(self, name)
            if len(rows) > len(arr):   # at least double the capacity
                grown = np.zeros((max(2 * len(arr), len(rows)), arr.shape[1]), dtype=arr.dtype)
                grown[:done] = arr[:done]
                arr = grown
                setattr(self, name, arr)
            if len(rows) > done:
                arr[done:len(rows)] = rows[done:]
        self._synced = (len(self._RWl), len(self._NWl))

    def _norm(self, n: str) -> int:
        i = self._norm_id.get(n)
        if i is None:
            T, Z = self._tables, self._zero
            i = len(self._norm_id)
            row = (T["i word"].get(n, Z), T["i-1 word"].get(n, Z), T["i-1 suffix"].get(n[-3:], Z),
                   T["i-2 word"].get(n, Z), T["i+1 word"].get(n, Z), T["i+1 suffix"].get(n[-3:], Z),
                   T["i+2 word"].get(n, Z), self._tw_index.get(n, 0))
            self._NWl.append(row)
            self._norm_id[n] = i
        return i

    def _raw(self, w: str) -> int:
        i = self._raw_id.get(w)
        if i is None:
            T, Z = self._tables, self._zero
            i = len(self._raw_id)
            t = self._tagdict.get(w)
            row = (T["i suffix"].get(w[-3:], Z), T["i pref1"].get(w[:1], Z),
                   self._tagid[t] if t else -1, self._norm(self._normalize(w)))
            self._RWl.append(row)
            self._raw_id[w] = i
        return i

    def _add_words(self, words: List[str]) -> None:
        """:meth:`_raw` for many words at once (new, distinct words: the rows in fewer Python steps)."""
        T, Z = self._tables, self._zero
        norm_id, normalize = self._norm_id, self._normalize
        norms = list(map(normalize, words))
        new_norms = [n for n in dict.fromkeys(norms) if n not in norm_id]
        if new_norms:
            tw = self._tw_index.get
            suffixes = [n[-3:] for n in new_norms]
            cols = [[T[name].get(x, Z) for x in (suffixes if name.endswith("suffix") else new_norms)]
                    for name in ("i word", "i-1 word", "i-1 suffix", "i-2 word", "i+1 word", "i+1 suffix", "i+2 word")]
            cols.append([tw(n, 0) for n in new_norms])
            self._NWl.extend(zip(*cols))
            start = len(norm_id)
            norm_id.update(zip(new_norms, range(start, start + len(new_norms))))
        tagdict, tagid = self._tagdict.get, self._tagid
        sfx, pref = T["i suffix"].get, T["i pref1"].get
        rows = [(sfx(w[-3:], Z), pref(w[:1], Z), tagid[t] if t else -1, norm_id[n])
                for w, n, t in zip(words, norms, map(tagdict, words))]
        self._RWl.extend(rows)
        start = len(self._raw_id)
        self._raw_id.update(zip(words, range(start, start + len(words))))

    def _build_tagword(self) -> None:
        """Dense [word, previous tag] -> row table for the 'i-1 tag+i word' feature (row 0: word not in it)."""
        words: Dict[str, int] = {}
        for (_tag, word) in self._tables["i-1 tag+i word"]:
            words.setdefault(word, len(words) + 1)
        TW = np.full((len(words) + 1, len(self._tagvocab)), self._zero, dtype=np.int64)
        for (tag, word), row in self._tables["i-1 tag+i word"].items():
            t = self._tagid.get(tag)
            if t is not None:
                TW[words[word], t] = row
        self._tw_index = words
        self._TW = TW
        self._TWc = np.ascontiguousarray(TW)

    def tag_sents(self, sentences: Sequence[Sequence[str]]) -> List[List[str]]:
        sentences = [list(s) for s in sentences]
        if self._kernel is not None and len(sentences) >= self.SMALL_BATCH:
            tags, pos = self.tag_words(sentences), 0
            out = []
            for s in sentences:
                out.append(tags[pos:pos + len(s)])
                pos += len(s)
            return out
        if len(self._raw_id) > 2_000_000:   # bound memory on huge corpora
            self._reset_vocab()
        if len(sentences) < self.SMALL_BATCH:   # fairseq's encode, one sentence per call
            return [self._tag_one(s) if s else [] for s in sentences]
        out: List[List[str]] = [[] for _ in sentences]
        order = sorted((i for i, s in enumerate(sentences) if s), key=lambda i: -len(sentences[i]))
        # batches of at most batch_size sentences and about max_cells padded positions (the first sentence of a
        # batch is its longest), so one huge line never makes a huge padded array
        max_cells = 1_000_000
        start = 0
        while start < len(order):
            longest = len(sentences[order[start]])
            n = max(1, min(self.batch_size, max_cells // max(longest, 1)))
            idx = order[start:start + n]
            for i, tags in zip(idx, self._tag_batch([sentences[i] for i in idx])):
                out[i] = tags
            start += n
        return out

    def tag_words(self, sentences: Sequence[Sequence[str]]) -> List[str]:
        """The tags of all the sentences' words in one list (:meth:`tag_sents`, concatenated): what a caller that
        works on the words of a whole chunk at once needs, without a list per sentence."""
        if self._kernel is None or len(sentences) < self.SMALL_BATCH:
            return list(itertools.chain.from_iterable(self.tag_sents(sentences)))
        if len(self._raw_id) > 2_000_000:   # bound memory on huge corpora
            self._reset_vocab()
        out: List[str] = []
        for k in range(0, len(sentences), self.batch_size):   # (the compiled loop needs no padding)
            batch = sentences[k:k + self.batch_size]
            tags = self._tag_flat(batch, self._kernel)
            if tags is None:   # a word with a space: feature strings would be ambiguous, let NLTK do it
                tags = itertools.chain.from_iterable(map(self.reference_tag, batch))
            out.extend(tags)
        return out

    #: fewer sentences than this are tagged one by one (numpy's per-call cost only pays off across a batch)
    SMALL_BATCH = 8
    MEMO_SIZE = 1_000_000

    def _tag_one(self, words: List[str]) -> List[str]:
        """Tag one sentence: the same scores in the same order as NLTK's ``predict``, from the cached rows of
        each word, and each prediction remembered under everything its features depend on (the word, the two
        previous tags and the normalised words at i-2, i-1, i+1, i+2), so a context seen before costs one
        dict look-up."""
        if " " in "".join(words):   # feature strings would be ambiguous: let NLTK do it
            return self.reference_tag(words)
        raw_id, raw, RWl = self._raw_id, self._raw, self._RWl
        rows = [RWl[raw_id[w] if w in raw_id else raw(w)] for w in words]
        s0, s1, e0, e1 = self._ctx_ids
        ctx = [s0, s1] + [r[3] for r in rows] + [e0, e1]
        tagid = self._tagid
        prev, prev2 = tagid[self._start[0]], tagid[self._start[1]]
        memo, D, W, TW, NWl, margin = self._memo, self._D, self._W, self._TW, self._NWl, self._margin
        static = None
        tags = []
        for j, w in enumerate(words):
            t = rows[j][2]
            if t < 0:
                key = (w, prev, prev2, ctx[j], ctx[j + 1], ctx[j + 3], ctx[j + 4])
                t = memo.get(key)
                if t is None:
                    if static is None:   # for the positions from here on that the tag dictionary leaves open
                        todo = [i for i in range(j, len(rows)) if rows[i][2] < 0]
                        static = dict(zip(todo, self._static_scores(rows, ctx, todo)))
                    # the 14 rows summed in another order (the 10 that do not depend on the tags, for the open
                    # positions of the sentence at once, then the pair table and the tag+word row): fl(sum) in any
                    # order is within gamma_13 * sum|w| of the exact sum, so two orders differ by at most margin / 2;
                    # a best class ahead of the runner-up by more than that is NLTK's best class too.  Otherwise
                    # NLTK's order.
                    scores = static[j] + D[prev, prev2]
                    tw = NWl[ctx[j + 2]][7]
                    if tw:   # (row 0: the word has no 'i-1 tag+i word' feature, its row is zeros)
                        scores += W[TW.item(tw, prev)]
                    t = int(scores.argmax())
                    top = scores.item(t)
                    scores[t] = -np.inf
                    if not top - scores.item(scores.argmax()) > margin:   # (argmax + item: 2x np.max's speed)
                        t = self._predict(rows[j], prev, prev2, ctx[j], ctx[j + 1], ctx[j + 2], ctx[j + 3],
                                          ctx[j + 4])
                    if len(memo) < self.MEMO_SIZE:
                        memo[key] = t
            tags.append(t)
            prev, prev2 = t, prev
        tagvocab = self._tagvocab
        return [tagvocab[t] for t in tags]

    def _static_rows(self, raw, m2, m1, cur, p1, p2) -> tuple:
        """The weight-matrix rows of the 10 features that do not depend on the predicted tags, in NLTK's order
        (bias, i suffix, i pref1, i word, i-1 word, i-1 suffix, i-2 word, i+1 word, i+1 suffix, i+2 word): which
        table and which word each comes from.  ``raw``: the word's row of the raw-word table; ``m2`` .. ``p2``: the
        rows of the normalised words at i-2, i-1, i, i+1, i+2 (columns: see ``_norm``).  For one position (tuples)
        or for many (columns of numpy arrays, ``table[ids].T``)."""
        return self._bias, raw[0], raw[1], cur[0], m1[1], m1[2], m2[3], p1[4], p1[5], p2[6]

    def _feature_rows(self, raw, prev, prev2, m2, m1, cur, p1, p2) -> tuple:
        """All 14 rows in NLTK's order: the static ones with the previous-tag rows (i-1 tag, i-2 tag,
        i tag+i-2 tag, i-1 tag+i word) in their places.  Arguments as for ``_static_rows``, plus the two previous
        tags."""
        bias, suffix, pref1, word, *rest = self._static_rows(raw, m2, m1, cur, p1, p2)
        return (bias, suffix, pref1, self._A1[prev], self._A2[prev2], self._A3[prev, prev2], word,
                self._TW[cur[7], prev], *rest)

    def _static_scores(self, rows: List[tuple], ctx: List[int], positions: List[int]):
        """For the given positions of a sentence, the sum of the 10 feature rows that do not depend on the
        predicted tags."""
        NWl, static_rows = self._NWl, self._static_rows
        idx = [static_rows(rows[j], NWl[ctx[j]], NWl[ctx[j + 1]], NWl[ctx[j + 2]], NWl[ctx[j + 3]], NWl[ctx[j + 4]])
               for j in positions]
        return self._W.take(np.array(idx, dtype=np.int64), axis=0).sum(axis=1)   # (take: 1.5-3x W[idx]'s speed)

    def _predict(self, raw_row, prev: int, prev2: int, m2: int, m1: int, cur: int, p1: int, p2: int) -> int:
        """One prediction; the 14 feature rows in NLTK's order, added one after the other (``np.add.reduce``
        over axis 0 adds the rows in sequence, so the floats are NLTK's)."""
        NWl = self._NWl
        rows = self._feature_rows(raw_row, prev, prev2, NWl[m2], NWl[m1], NWl[cur], NWl[p1], NWl[p2])
        scores = np.add.reduce(self._W.take(rows, axis=0), axis=0)
        return len(scores) - 1 - int(scores[::-1].argmax())   # last maximum = largest label among ties

    def _word_ids(self, words: List[str]) -> List[int]:
        """The rows of ``words`` in the word tables (new words' rows added first)."""
        raw_id = self._raw_id
        ids = list(map(raw_id.get, words))
        if None in ids:   # new words: their rows
            self._add_words(list(dict.fromkeys(w for w, i in zip(words, ids) if i is None)))
            ids = list(map(raw_id.__getitem__, words))
        self._sync()
        return ids

    def _tag_flat(self, batch: Sequence[Sequence[str]], kernel) -> Optional[List[str]]:
        """Tag sentences with the compiled loops of :mod:`preprocess.tagging.perceptron_fast` (``kernel``): ``rows`` reads
        each word's rows from the word tables, ``tag`` adds NLTK's sums in NLTK's order.  The tags of all words, in
        order; None where a word holds a space (the caller lets NLTK tag those sentences)."""
        batch = [s if type(s) is list else list(s) for s in batch]
        n, B = sum(map(len, batch)), len(batch)
        ids = np.empty(n, dtype=np.int64)
        ctx = np.empty(n + 4 * B, dtype=np.int64)
        starts = np.empty(B + 1, dtype=np.int64)
        s0, s1, e0, e1 = self._ctx_ids
        self._sync()
        missing = kernel.rows(batch, self._raw_id, self._RW, ids, ctx, starts, s0, s1, e0, e1)
        if missing < 0:
            return None
        if missing:   # new words: their rows, then the look-ups again
            raw_id = self._raw_id
            self._add_words(list(dict.fromkeys(w for s in batch for w in s if w not in raw_id)))
            self._sync()
            kernel.rows(batch, raw_id, self._RW, ids, ctx, starts, s0, s1, e0, e1)
        out = np.empty(n, dtype=np.int64)
        tagid = self._tagid
        kernel.tag(self._W, ids, self._RW, self._NW, ctx, starts, self._bias, self._A1, self._A2, self._A3,
                   self._TWc, tagid[self._start[0]], tagid[self._start[1]], out)
        return list(map(self._tagvocab.__getitem__, out.tolist()))

    def _tag_batch(self, batch: List[List[str]]) -> List[List[str]]:
        """Tag sentences (numpy: sorted by decreasing length, none empty).

        The 10 feature rows that do not depend on the predicted tags are summed for every open position of the
        batch at once (positions the tag dictionary leaves open); then, left to right, position *j* of all
        sentences adds the previous-tag rows (the pair table ``_D`` and the tag+word row).  That is the same 14
        rows summed in another order than NLTK's, in float32: as in :meth:`_tag_one`, a best class ahead of the
        runner-up by more than the rounding bound (``_margin32``) is NLTK's best class too, and every other position
        (near ties) is predicted in NLTK's order by :meth:`_predict`."""
        if any(" " in "".join(s) for s in batch):   # feature strings would be ambiguous: let NLTK do it
            return [self.reference_tag(s) for s in batch]
        words = list(itertools.chain.from_iterable(batch))
        ids = self._word_ids(words)
        RW, NW = self._RW, self._NW
        len_list = [len(s) for s in batch]
        B, L = len(batch), len_list[0]
        lengths = np.array(len_list, dtype=np.int64)
        mask = np.arange(L)[None, :] < lengths[:, None]   # row-major order = the order of ``words``
        rw = RW[np.array(ids, dtype=np.int64)]
        s0, s1, e0, e1 = self._ctx_ids
        ctx = np.full((B, L + 4), e0, dtype=np.int64)
        ctx[:, 0], ctx[:, 1] = s0, s1
        ctx[:, 2:L + 2][mask] = rw[:, 3]
        ctx[np.arange(B), lengths + 3] = e1
        result = np.zeros((B, L), dtype=np.int64)
        result[mask] = rw[:, 2]
        is_open = result < 0   # (padding: 0)
        si, sj = np.nonzero(is_open)
        n_open = len(si)
        spos = np.full((B, L), -1, dtype=np.int64)   # the open position's row in S
        spos[is_open] = np.arange(n_open)
        flat_open = np.flatnonzero(rw[:, 2] < 0)    # the same positions, in ``words``/``ids`` order
        W32 = self._W32
        take = W32.take
        # the 10 tag-independent rows of every open position (see _static_rows), summed
        ro = rw[flat_open]
        around = [NW[ctx[si, sj + d]] for d in range(5)]   # the normalised words at i-2 .. i+2
        static = self._static_rows(ro.T, *(a.T for a in around))
        S = np.empty((n_open, W32.shape[1]), dtype=np.float32)
        S[:] = W32[static[0]]
        for rows in static[1:]:
            S += take(rows, axis=0)
        tw = around[2][:, 7]   # row of the tag+word table (0: none)
        D, TW, margin = self._D32, self._TW, self._margin32
        tagid = self._tagid
        prev = np.full(B, tagid[self._start[0]], dtype=np.int64)
        prev2 = np.full(B, tagid[self._start[1]], dtype=np.int64)
        n_active = B
        for j in range(L):
            while n_active and len_list[n_active - 1] <= j:
                n_active -= 1
            col = spos[:n_active, j]
            sel = np.flatnonzero(col >= 0)
            if len(sel):
                k = col[sel]
                p, p2 = prev[sel], prev2[sel]
                sc = S[k]
                sc += D[p, p2]
                sc += take(TW[tw[k], p], axis=0)
                best = sc.argmax(axis=1)
                ar = np.arange(len(sel))
                top = sc[ar, best]
                sc[ar, best] = -np.inf
                close = np.flatnonzero(~(top - sc.max(axis=1) > margin))
                if len(close):   # near ties: NLTK's order
                    RWl = self._RWl
                    for c in close.tolist():
                        s, kk = int(sel[c]), int(k[c])
                        x = ctx[s, j:j + 5].tolist()
                        best[c] = self._predict(RWl[ids[int(flat_open[kk])]], int(p[c]), int(p2[c]), *x)
                result[sel, j] = best
            prev2[:n_active] = prev[:n_active]
            prev[:n_active] = result[:n_active, j]
        tagvocab = self._tagvocab
        tags = list(map(tagvocab.__getitem__, result[mask].tolist()))
        out, start = [], 0
        for n in len_list:
            out.append(tags[start:start + n])
            start += n
        return out


class HantaTagger:
    """HanTa English (CLAWS5) mapped to PTB. Works without NLTK data.  Tags are HanTa's ``tag_sent(taglevel=0)``,
    computed by :mod:`preprocess.tagging.hanta_fast` (same tags, per-word caches)."""

    name = HANTA

    def __init__(self):
        try:   # HanTa's exact tags with per-word caches (preprocess.tagging.hanta_fast), or HanTa itself if it differs
            from preprocess.tagging import hanta_fast
            self._tagger = hanta_fast.load("morphmodel_en.pgz")
        except Exception as e:  # noqa: BLE001 pragma: no cover - any load failure is raised as TaggerUnavailable
            raise TaggerUnavailable(f"HanTa English model could not be loaded: {e}") from e
        self._memo: Dict[Tuple[str, ...], List[str]] = {}
        #: sentences HanTa failed on (tagged UNC throughout, so BITE keeps their words as they are); reported by
        #: :meth:`preprocess.schemes.bite.BiteLineEncoder.counters` as a ``note:`` line
        self.failed_sentences = 0

    #: HanTa's morphological analysis tries every split of a word: time grows with the square of its length
    #: (800 characters 2 s, 10,000 characters 12 minutes).  Longer tokens are tagged as a placeholder word and
    #: get the tag UNC (-> FW), so BITE keeps them unchanged; no English inflected word is this long.
    MAX_WORD_LEN = 40
    PLACEHOLDER = "X"

    def c5_tags(self, tokens: Sequence[str]) -> List[str]:
        if not tokens:
            return []
        cap = self.MAX_WORD_LEN
        plain = all(tokens) and max(map(len, tokens)) <= cap   # (nearly every sentence: no word to replace)
        # HanTa fails on empty strings
        words = list(tokens) if plain else [(w if len(w) <= cap else self.PLACEHOLDER) if w else "_" for w in tokens]
        try:
            tags = list(self._tagger.tag_sent(words, taglevel=0))
        except Exception:   # noqa: BLE001 - an odd token must not stop a corpus run: counted, reported as a note
            tags = []
        if len(tags) != len(words):
            self.failed_sentences += 1
            return ["UNC"] * len(words)
        return tags if plain else [t if len(w) <= cap else "UNC" for w, t in zip(tokens, tags)]

    def tag(self, tokens: Sequence[str]) -> List[str]:
        return list(self._tags(tokens))

    def _tags(self, tokens: Sequence[str]) -> List[str]:
        """:meth:`tag`, as remembered (the caller must not change the list)."""
        if not tokens:
            return []
        key = tuple(tokens)
        tags = self._memo.get(key)
        if tags is None:
            tags = list(map(PTB_OF_C5.__getitem__, self.c5_tags(tokens)))
            # HanTa has no plural proper-noun tag (NP0 covers both numbers); NNPS is therefore never produced.
            if len(self._memo) < 200_000:
                self._memo[key] = tags
        return tags

    def tag_sents(self, sentences: Sequence[Sequence[str]]) -> List[List[str]]:
        return [self.tag(s) for s in sentences]

    def tag_words(self, sentences: Sequence[Sequence[str]]) -> List[str]:
        """The tags of all the sentences' words in one list (see ``NltkTagger.tag_words``)."""
        return list(itertools.chain.from_iterable(map(self._tags, sentences)))


_TAGGERS: Dict[str, object] = {}


def get_tagger(name: str):
    """A shared tagger instance (one of :data:`TAGGERS`).  Worker processes forked by preprocess.encode inherit the
    parent's instance (copy-on-write) instead of loading the model again."""
    t = _TAGGERS.get(name)
    if t is None:
        if name == NLTK:
            t = NltkTagger()
        elif name == HANTA:
            t = HantaTagger()
        else:
            raise ValueError(f"unknown tagger {name!r} (choose {' or '.join(map(repr, TAGGERS))})")
        _TAGGERS[name] = t
    return t
