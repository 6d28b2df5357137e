"""FLOTA: Few Longest Token Approximation over any tokenizer vocabulary (Hofmann et al., 2022).

    python -m preprocess.encode --scheme flota --flota-vocab ../shared/data/flota_vocabs/bert-base-uncased.txt \\
        --flota-style wordpiece --flota-k 3 --inputs titles.txt --outputs titles.flota

FLOTA keeps a tokenizer's vocabulary and discards its segmentation model.  A word that is not in the vocabulary
is tokenised by repeatedly taking the longest vocabulary substring of the not-yet-covered characters (leftmost
on ties), at most ``k`` times, and the pieces are returned in the order of their positions.  Characters left
uncovered are dropped: the tokenisation is lossy by design, and so is :func:`detokenize`.

``mode="flota"`` gives token for token the output of the paper's released code (``src/flota.py`` of
github.com/valentinhofmann/flota): the same pretokenisation, the same whole-word check, the same length cap,
the same start/continuation preference and fallback, the same hyphen residue (a word that contains ``-`` of its
own, which the pretokenisation never produces, is treated exactly as the released code treats it).  The search
itself is reorganised (one monotone scan over (length, position) for all steps instead of a fresh scan of a
rebuilt residue string per step, plus a word cache), which the test suite checks against a plain
re-implementation of the pseudocode; it lives in :mod:`preprocess.flota_search`, which the install compiles with
Cython where a C compiler exists.

Two documented departures from the released code, both outside what it was used for:

* ``byte_level=True`` (``--flota-byte-level``, only for ``style="gpt2"``) maps a word to GPT-2's byte-level
  alphabet before the search, so ``é`` is looked up as ``Ã©`` and ``\x7f`` as ``ġ``.  The default is the
  released code's behaviour, which looks up the raw Unicode string: identical for printable ASCII, but a
  non-ASCII character then only matches the GPT-2 token that happens to be spelt with it (``é`` is GPT-2's
  symbol for the byte 0xE9, not for the letter é), and control characters match nothing.
* ``strict=True`` disables the fallback to the other form at every position and in the whole-word check, as
  the project's issue specifies; the released code's ``--strict`` only affected the word-initial position of
  WordPiece vocabularies.  ``strict="published"`` reproduces that behaviour exactly.

A word for which no vocabulary substring exists yields nothing (as in the released code), or ``unk_token`` when
one is given.  ``tokenize_word("")`` is ``[]``.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass
from itertools import compress
from typing import Iterable, Optional, Sequence, Union

from preprocess.common import UserError, flatten_line
from preprocess.options import add_arguments, option
from preprocess.flota_search import FlotaSearch, search_class
from preprocess.integrity import require_complete_text
from preprocess.spm import SPACE_SYMBOL, load_model

#: pretokenisation of the released code: runs of word characters, or any single other non-space character
PRETOKENIZE = re.compile(r"[\w]+|[^\s\w]")

#: style -> (marker, marker marks word starts?, default max_len of the released code)
STYLES = {
    "wordpiece": ("##", False, 18),
    "gpt2": ("\u0120", True, 19),
    "sentencepiece": (SPACE_SYMBOL, True, 16),
}
MODES = ("flota", "first", "longest")


# --- GPT-2 byte-level alphabet ---------------------------------------------------------------------------------

def _bytes_to_unicode() -> dict:
    """GPT-2's reversible map from the 256 byte values to printable characters."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    table = {}
    extra = 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_TO_CHAR = _bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def to_byte_level(text: str) -> str:
    if text.isascii() and text.isprintable() and " " not in text:
        return text  # printable ASCII other than space maps to itself
    return "".join(BYTE_TO_CHAR[b] for b in text.encode("utf-8", errors="replace"))


def from_byte_level(text: str) -> str:
    data = bytes(CHAR_TO_BYTE[c] if c in CHAR_TO_BYTE else ord("?") for c in text)
    return data.decode("utf-8", errors="replace")


# --- vocabularies ----------------------------------------------------------------------------------------------

class Vocab:
    """A token inventory in id order, plus what was learnt about it from its file."""

    def __init__(self, tokens: list, kind: str, source: Optional[str] = None, sp_model=None,
                 unk_token: Optional[str] = None, max_input_chars_per_word: int = 100, hf_type: str = ""):
        self.tokens = tokens
        self.kind = kind  # list, sentencepiece, fairseq, json, hf
        self.source = source
        self.sp_model = sp_model  # path of a SentencePiece model, for modes first/longest
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word
        self.hf_type = hf_type


_FAIRSEQ_LINE = re.compile(r"^(\S+) (-?\d+)( #fairseq:overwrite)?$")
_SPM_VOCAB_LINE = re.compile(r"^([^\t]+)\t-?\d+(\.\d+)?([eE][-+]?\d+)?$")


def _read_text_lines(path: str) -> list:
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"vocabulary {path} is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    require_complete_text(path, "vocabulary", data)   # cut inside a line: a token or a count cut short
    lines = text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def load_vocab(source: Union[str, os.PathLike, Iterable[str], Vocab]) -> Vocab:
    """Read a token inventory.

    ``source``: a :class:`Vocab`; an iterable of token strings; or a path to a SentencePiece ``.model``, a GPT-2
    ``encoder.json`` / ``vocab.json`` (token -> id), a Hugging Face ``tokenizer.json``, a fairseq ``dict.txt``
    (``token count`` lines), a SentencePiece ``.vocab`` (``piece<TAB>score``), or a plain list with one token per
    line (BERT's ``vocab.txt``, the inventories in ``flota_vocabs/``).  Empty lines of a list are skipped.
    """
    if isinstance(source, Vocab):
        return source
    if not isinstance(source, (str, os.PathLike)):
        tokens = [t for t in source if isinstance(t, str) and t != ""]
        if not tokens:
            raise UserError("the vocabulary is empty")
        return Vocab(tokens, "iterable", unk_token="[UNK]" if "[UNK]" in tokens else None)
    path = os.fspath(source)
    if not os.path.isfile(path):
        raise UserError(f"vocabulary not found: {path}")
    if path.endswith(".model"):
        try:
            sp = load_model(path)
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001 - SentencePiece's load errors vary: reported as one line
            raise UserError(f"cannot load SentencePiece model {path}: {exc}") from None
        tokens = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
        unk = sp.id_to_piece(sp.unk_id()) if sp.unk_id() >= 0 else None
        return Vocab(tokens, "sentencepiece", path, sp_model=path, unk_token=unk)
    if path.endswith(".json"):
        try:
            with open(path, encoding="utf-8") as fh:
                obj = json.load(fh)
        except (ValueError, UnicodeDecodeError) as exc:
            raise UserError(f"cannot read JSON vocabulary {path}: {exc}") from None
        return _vocab_from_json(obj, path)
    lines = [line for line in _read_text_lines(path) if line != ""]
    if not lines:
        raise UserError(f"the vocabulary {path} is empty")
    if all(_FAIRSEQ_LINE.match(line) for line in lines):
        tokens = [_FAIRSEQ_LINE.match(line).group(1) for line in lines]
        return Vocab(tokens, "fairseq", path, unk_token="<unk>")
    if all(_SPM_VOCAB_LINE.match(line) for line in lines):
        tokens = [line.split("\t", 1)[0] for line in lines]
        return Vocab(tokens, "sentencepiece-vocab", path, unk_token="<unk>" if "<unk>" in tokens else None)
    return Vocab(lines, "list", path, unk_token="[UNK]" if "[UNK]" in lines else None)


def _vocab_from_json(obj, path: str) -> Vocab:
    if isinstance(obj, dict) and isinstance(obj.get("model"), dict):  # Hugging Face tokenizer.json
        model = obj["model"]
        vocab = model.get("vocab")
        if isinstance(vocab, dict):
            tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
        elif isinstance(vocab, list):  # Unigram: [[piece, score], ...]
            tokens = [item[0] for item in vocab]
        else:
            raise UserError(f"{path}: tokenizer.json without a vocabulary")
        known = set(tokens)
        for added in obj.get("added_tokens") or []:
            content = added.get("content") if isinstance(added, dict) else None
            if content and content not in known:
                tokens.append(content)
                known.add(content)
        unk = model.get("unk_token")
        if isinstance(unk, int):
            unk = tokens[unk] if 0 <= unk < len(tokens) else None
        return Vocab(tokens, "hf", path, unk_token=unk,
                     max_input_chars_per_word=int(model.get("max_input_chars_per_word") or 100),
                     hf_type=str(model.get("type", "")))
    if isinstance(obj, dict) and obj and all(isinstance(v, int) for v in obj.values()):  # GPT-2 encoder.json
        tokens = [t for t, _ in sorted(obj.items(), key=lambda kv: kv[1])]
        return Vocab(tokens, "json", path, unk_token=None)
    if isinstance(obj, list) and all(isinstance(t, str) for t in obj):
        return Vocab([t for t in obj if t], "json", path)
    raise UserError(f"{path}: not a token -> id map, a token list or a tokenizer.json")


def guess_style(tokens: Iterable[str]) -> str:
    """The style whose marker most tokens carry (``##`` continuations, ``Ġ`` or ``▁`` starts)."""
    counts = Counter()
    for t in tokens:
        if t.startswith("##") and len(t) > 2:
            counts["wordpiece"] += 1
        elif t.startswith("\u0120"):
            counts["gpt2"] += 1
        elif t.startswith(SPACE_SYMBOL):
            counts["sentencepiece"] += 1
    if not counts:
        raise UserError("cannot tell the vocabulary's style (no ##, Ġ or ▁ tokens); give --flota-style")
    return counts.most_common(1)[0][0]


def fairseq_dict_tokens(vocab) -> tuple[list[str], list[str]]:
    """(entries, skipped) of a fairseq ``dict.txt`` for the loaded vocabulary ``vocab``: its tokens in order without
    duplicates and without fairseq's own specials; tokens containing whitespace cannot be written and are skipped."""
    from preprocess.spm import FAIRSEQ_SPECIALS

    tokens, skipped = [], []
    for tok in dict.fromkeys(vocab.tokens):
        if tok in FAIRSEQ_SPECIALS:
            continue
        if tok == "" or any(c.isspace() for c in tok) or re.search(r"\s", tok):
            skipped.append(tok)
            continue
        tokens.append(tok)
    return tokens, skipped


def write_fairseq_dict(vocab, path: str) -> dict:
    """Write a fairseq ``dict.txt`` holding every token of ``vocab`` in vocabulary order, atomically, with the
    project's rank pseudo-counts (:func:`preprocess.spm.write_dict`: any frequency threshold keeps the order).

    fairseq's Dictionary reserves ``<s> <pad> </s> <unk>`` itself, so those are not written again (a duplicate
    would make fairseq refuse the file); tokens that contain whitespace cannot be written and are skipped (FLOTA
    never emits one: its words contain no whitespace).  Returns ``{"written": n, "skipped": [...]}``.
    """
    from preprocess.common import check_distinct, check_output_path
    from preprocess.spm import write_dict

    check_output_path(path)
    if isinstance(vocab, (str, os.PathLike)):
        check_distinct([(path, "output")], [(vocab, "vocabulary")])

    tokens, skipped = fairseq_dict_tokens(load_vocab(vocab))
    return {"written": write_dict(tokens, path), "skipped": skipped}


# --- standard segmenters (for the FIRST and LONGEST baselines) --------------------------------------------------

def wordpiece_segment(word: str, vocab: set, unk: Optional[str] = "[UNK]", prefix: str = "##",
                      max_chars: int = 100, max_token_len: Optional[int] = None) -> list:
    """BERT's WordPiece: greedy longest-match-first from the left, continuations marked with ``prefix``.

    A word longer than ``max_chars`` or with a position that no vocabulary piece matches becomes ``[unk]``
    (or ``[]`` when ``unk`` is None), as in BERT's tokenizer.
    """
    bad = [unk] if unk is not None else []
    if len(word) > max_chars:
        return bad
    pieces = []
    start, n = 0, len(word)
    while start < n:
        end = n if max_token_len is None else min(n, start + max_token_len)
        found = None
        while end > start:
            sub = word[start:end]
            if start > 0:
                sub = prefix + sub
            if sub in vocab:
                found = sub
                break
            end -= 1
        if found is None:
            return bad
        pieces.append(found)
        start = end
    return pieces


# --- FLOTA ----------------------------------------------------------------------------------------------------

# the search methods come from preprocess._flota_search (compiled) where it is built, else preprocess.flota_search
class FlotaTokenizer(search_class()):
    """FLOTA over a vocabulary; see the module docstring.

    ``vocab``: anything :func:`load_vocab` reads.  ``style``: ``wordpiece``, ``gpt2``, ``sentencepiece`` or
    ``auto``.  ``k``: at most k pieces per word (k >= 1).  ``mode``: ``flota`` or the baselines ``first`` /
    ``longest`` (the first / longest k pieces of the standard segmentation; they need a WordPiece vocabulary or
    a SentencePiece model).  ``strict``: False, True, or ``"published"`` (see module docstring).  ``max_len``:
    longest candidate substring (default 18 / 19 / 16 by style, as in the released code).  ``unk_token``: what
    a word with no vocabulary substring gives (default: nothing).  ``cache_size``: words remembered.
    ``byte_level``: gpt2 only, look words up in GPT-2's byte-level alphabet (see module docstring).
    ``lowercase``: lower-case the text first (None: when the vocabulary is uncased, :func:`is_uncased`).
    ``strip_accents``: drop accents as BERT's uncased tokenizer does (:func:`strip_accents`; None: when the
    text is lower-cased and the vocabulary is an uncased WordPiece one, so ``café`` -> ``cafe``; a cased
    vocabulary keeps its accents).
    """

    def __init__(self, vocab, style: str = "auto", k: int = 3, mode: str = "flota",
                 strict: Union[bool, str] = False, max_len: Optional[int] = None,
                 unk_token: Optional[str] = None, cache_size: int = 200_000, byte_level: bool = False,
                 lowercase: Optional[bool] = None, strip_accents: Optional[bool] = None):
        self.vocab = load_vocab(vocab)
        # an uncased vocabulary (bert-base-uncased) has no capital letters: its own tokenizer lower-cases, and
        # without that every capital would be dropped ("Boston" -> "##oston"); None = decide from the vocabulary
        uncased = is_uncased(self.vocab.tokens)
        self.lowercase = uncased if lowercase is None else bool(lowercase)
        self.dropped_words = 0   # words that gave no piece at all (no vocabulary substring, no unk_token)
        if style in (None, "", "auto"):
            style = guess_style(self.vocab.tokens)
        if style not in STYLES:
            raise UserError(f"unknown FLOTA style {style!r}; choose from {', '.join(STYLES)}")
        # BERT's uncased tokenizer also strips accents (NFD, combining marks dropped): its vocabulary has no
        # accented letter, so without that "café" would lose its "é" (-> "caf"); a cased vocabulary keeps them
        self.strip_accents = (self.lowercase and uncased and style == "wordpiece") if strip_accents is None \
            else bool(strip_accents)
        if mode not in MODES:
            raise UserError(f"unknown FLOTA mode {mode!r}; choose from {', '.join(MODES)}")
        try:
            k = int(k)
        except (TypeError, ValueError):
            raise UserError(f"k must be an integer, not {k!r}") from None
        if k < 1:
            raise UserError(f"k must be at least 1, not {k}")
        if strict not in (False, True, "published"):
            raise UserError(f"strict must be False, True or 'published', not {strict!r}")
        self.style, self.k, self.mode, self.strict = style, k, mode, strict
        self.marker, marker_on_start, default_max = STYLES[style]
        self.max_len = default_max if max_len is None else int(max_len)
        if self.max_len < 1:
            raise UserError(f"max_len must be at least 1, not {self.max_len}")
        if unk_token is not None and unk_token not in set(self.vocab.tokens):
            raise UserError(f"unknown-word token {unk_token!r} is not in the vocabulary")
        self.unk_token = unk_token
        if byte_level and style != "gpt2":
            raise UserError("byte_level only applies to style 'gpt2'")
        self.byte_level = bool(byte_level)
        self.cache_size = max(0, int(cache_size))
        self._cache: dict = {}

        tokens = self.vocab.tokens
        m = self.marker
        self.token_set = frozenset(tokens)
        plain = self.token_set
        marked = frozenset({t[len(m):] for t in tokens if t.startswith(m)})
        # a "form" is (set of bare strings, prefix to put back); start form first at position 0
        plain_form, marked_form = (plain, ""), (marked, m)
        start_form, cont_form = (marked_form, plain_form) if marker_on_start else (plain_form, marked_form)
        if strict is True:
            self._forms0, self._forms1 = (start_form,), (cont_form,)
            self._whole_forms = (start_form,)
        elif strict == "published" and style == "wordpiece":
            self._forms0, self._forms1 = (start_form,), (cont_form, start_form)
            self._whole_forms = (start_form, cont_form)
        else:
            self._forms0, self._forms1 = (start_form, cont_form), (cont_form, start_form)
            self._whole_forms = (start_form, cont_form)
        # bare string -> token, for position 0, later positions and the whole-word check (earlier forms win;
        # equal form lists share one table)
        maps: dict = {}
        for forms in (self._forms0, self._forms1, self._whole_forms):
            if forms not in maps:
                maps[forms] = self._form_map(forms)
        self._map0, self._map1, self._whole = maps[self._forms0], maps[self._forms1], maps[self._whole_forms]
        sets = {id(strings): strings for strings, _ in self._forms0 + self._forms1}.values()
        self._lengths = frozenset().union(*(map(len, strings) for strings in sets))
        self._max_piece = max(self._lengths) if self._lengths else 0
        # bare strings with a '-' after their first character (and none as their first): they can match across
        # an already covered span
        self._hyphen_bare = sorted({s for strings in sets for s in strings if s.find("-") > 0})
        self._hyphen_first = frozenset(s[0] for s in self._hyphen_bare)

        self._segmenter = None
        if mode != "flota":
            self._segmenter = self._standard_segmenter()

    # -- standard segmentation ------------------------------------------------------------------------------
    def _standard_segmenter(self):
        if self.vocab.sp_model:
            sp = load_model(self.vocab.sp_model)
            return lambda word: sp.encode(word, out_type=str)
        if self.style == "wordpiece" and (self.vocab.kind != "hf" or self.vocab.hf_type in ("", "WordPiece")):
            vocab_set = self.token_set
            unk = self.vocab.unk_token if self.vocab.unk_token in vocab_set else None
            max_chars = self.vocab.max_input_chars_per_word
            longest = max(len(t) for t in self.vocab.tokens)
            return lambda word: wordpiece_segment(word, vocab_set, unk, self.marker, max_chars, longest)
        raise UserError(
            f"mode {self.mode!r} needs the vocabulary's standard segmentation, which is not available for a "
            f"bare {self.style} inventory ({self.vocab.source or 'token list'}): use a WordPiece vocabulary or a "
            "SentencePiece .model, or mode 'flota'")

    def standard_tokenize_word(self, word: str) -> list:
        """The full standard segmentation of one word (WordPiece or SentencePiece)."""
        if self._segmenter is None:
            self._segmenter = self._standard_segmenter()
        return list(self._segmenter(word)) if word else []

    # -- FLOTA search tables (the search itself: preprocess/flota_search.py) ------------------------------------
    @staticmethod
    def _form_map(forms) -> dict:
        table = {}
        for strings, prefix in reversed(forms):
            table.update({bare: prefix + bare for bare in strings} if prefix else zip(strings, strings))
        return table

    # -- public API ---------------------------------------------------------------------------------------------
    def tokenize_word(self, word: str) -> list:
        """Pieces for one word (no pretokenisation); ``[]`` (or ``[unk_token]``) when nothing matches."""
        if not word:
            return []
        cached = self._cache.get(word)
        if cached is not None:
            return list(cached)
        w = to_byte_level(word) if self.byte_level else str(word)   # numpy.str_ as str (for the compiled search)
        pieces = None
        whole = self._whole.get(w)
        if whole is not None:
            pieces = [whole]
        elif self.mode == "flota":
            pieces = [tok for _, tok in self.flota_pieces(w, self.k)]
        else:
            standard = self.standard_tokenize_word(w)
            if self.mode == "first":
                pieces = standard[:self.k]
            else:  # longest: the k longest (ignoring the marker), in their original order; ties: earlier first
                strip = self.marker
                ranked = sorted(enumerate(standard), key=lambda x: len(x[1].lstrip(strip)), reverse=True)
                pieces = [tok for _, tok in sorted(ranked[:self.k])]
        if not pieces and self.unk_token is not None:
            pieces = [self.unk_token]
        if self.cache_size:
            if len(self._cache) >= self.cache_size:
                self._cache.clear()
            self._cache[word] = tuple(pieces)
        return pieces

    def tokenize(self, text: str) -> list:
        """Pretokenise with ``[\\w]+|[^\\s\\w]`` (as the released code) and tokenise every word."""
        out = []
        append, extend = out.append, out.extend
        cache, tokenize_word = self._cache, self.tokenize_word
        whole = {} if self.byte_level else self._whole   # (a byte-level word is looked up after mapping)
        if self.lowercase:
            text = text.lower()
        if self.strip_accents and not text.isascii():
            text = strip_accents(text)
        for word in PRETOKENIZE.findall(text):
            token = whole.get(word)
            if token is not None:   # most words: a vocabulary token of their own
                append(token)
                continue
            pieces = cache.get(word)
            if pieces is None:
                pieces = tokenize_word(word)
            if not pieces:
                self.dropped_words += 1
            extend(pieces)
        return out

    def encode(self, text: str) -> str:
        return " ".join(self.tokenize(text))

    def decode(self, text: Union[str, Sequence[str]]) -> str:
        pieces = text.split() if isinstance(text, str) else list(text)
        return detokenize(pieces, self.style, self.byte_level)


#: FlotaTokenizer with its search run as plain Python also where preprocess._flota_search is compiled, for the
#: tests and the benchmark that compare the two (FlotaTokenizer itself where nothing is compiled)
PythonSearchFlotaTokenizer = FlotaTokenizer if FlotaTokenizer.__bases__ == (FlotaSearch,) else \
    type("PythonSearchFlotaTokenizer", (FlotaSearch, FlotaTokenizer), {})


def strip_accents(text: str) -> str:
    """What BERT's uncased tokenizer does to accents: canonical decomposition (NFD), then every nonspacing mark
    (category Mn) dropped: ``café`` -> ``cafe``, ``Männer`` -> ``Manner``."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def is_uncased(tokens: Iterable[str]) -> bool:
    """True when no token other than a bracketed special (``[CLS]``, ``<s>``) changes under lower-casing."""
    tokens = list(tokens)
    changed = compress(tokens, map(str.__ne__, tokens, map(str.lower, tokens)))
    return not any(t[:1] + t[-1:] not in ("[]", "<>") for t in changed)


def detokenize(pieces: Sequence[str], style: str, byte_level: bool = False) -> str:
    """Join pieces back into words: lossy, since FLOTA drops characters it did not cover.

    ``wordpiece``: a ``##`` piece continues the previous word, any other piece starts a word.  ``gpt2`` /
    ``sentencepiece``: a ``Ġ`` / ``▁`` piece starts a word, any other piece continues the previous one (gpt2
    pieces are mapped back from the byte-level alphabet when ``byte_level``).  A word that FLOTA returned as a
    continuation form (fallback) therefore glues onto its left neighbour.
    """
    if style not in STYLES:
        raise UserError(f"unknown FLOTA style {style!r}")
    marker, marker_on_start, _ = STYLES[style]
    words = []
    for piece in pieces:
        if marker_on_start:
            if piece.startswith(marker) or not words:
                words.append(piece[len(marker):] if piece.startswith(marker) else piece)
            else:
                words[-1] += piece
        else:
            if piece.startswith(marker) and len(piece) > len(marker) and words:
                words[-1] += piece[len(marker):]
            else:
                words.append(piece[len(marker):] if piece.startswith(marker) and len(piece) > len(marker)
                             else piece)
    if style == "gpt2" and byte_level:
        words = [from_byte_level(w) for w in words]
    return " ".join(w for w in words if w)


# --- whitespace noise (section 4, robustness) -----------------------------------------------------------------

def inject_whitespace_noise(text: str, p: float, rng: random.Random) -> str:
    """Drop the space between each pair of adjacent words with probability ``p`` (the paper's noise, p = 0.3).

    Words are whitespace-separated; the result has single spaces.  An empty line stays empty.
    """
    words = text.split()
    if not words:
        return ""
    out = [words[0]]
    for w in words[1:]:
        if rng.random() < p:
            out[-1] += w
        else:
            out.append(w)
    return " ".join(out)


def line_rng(seed: int, line: str) -> random.Random:
    """A generator seeded by (seed, line text): the same noise whatever the chunking or worker count."""
    return random.Random(f"{seed}\t{line}")


# --- official fairseq checkpoints: a dict.txt of GPT-2 ids --------------------------------------------------------

def is_gpt2_id_dict(vocab) -> bool:
    """Whether ``vocab`` is a fairseq ``dict.txt`` of GPT-2 BPE ids, as official RoBERTa/BART checkpoints ship:
    its tokens are decimal ids (``13 850314647``), apart from a few specials (``madeupword0000``, ``<mask>``)."""
    v = load_vocab(vocab)
    return v.kind == "fairseq" and sum(t.isdigit() for t in v.tokens) >= 0.9 * len(v.tokens)


def gpt2_id_map(dict_path: str, encoder_json: str) -> dict:
    """GPT-2 token -> the id string that ``dict_path`` holds, for every id of the dictionary (in its order).

    The dictionary and ``encoder.json`` must belong together: an id of the dictionary that ``encoder.json`` does
    not have is an error naming the first such token.
    """
    ids = load_vocab(dict_path)
    if ids.kind != "fairseq":
        raise UserError(f"{dict_path} is not a fairseq dict.txt (lines 'TOKEN COUNT')")
    encoder = load_vocab(encoder_json)
    if encoder.kind != "json" or not str(encoder_json).endswith(".json"):
        raise UserError(f"{encoder_json} is not a GPT-2 encoder.json (token -> id)")
    with open(encoder_json, encoding="utf-8") as fh:
        id_to_token = {str(i): tok for tok, i in json.load(fh).items()}
    mapping = {}
    for lineno, tok in enumerate(ids.tokens, 1):
        if not tok.isdigit():
            continue  # fairseq's specials (madeupword0000, <mask>): nothing FLOTA emits
        if tok not in id_to_token:
            raise UserError(f"{encoder_json} does not match {dict_path}: its token {tok} (line {lineno}) is not an "
                            "id of encoder.json")
        mapping[id_to_token[tok]] = tok
    return mapping


class Gpt2IdFlota:
    """FLOTA in GPT-2 style over the tokens that an id ``dict.txt`` holds, writing every piece as its id.

    Only tokens of the dictionary are candidates (anything else would be ``<unk>`` to the model); options are
    those of :class:`FlotaTokenizer` (``byte_level=True`` is the faithful choice for non-ASCII text).
    """

    def __init__(self, dict_path: str, encoder_json: str, unk_token: Optional[str] = None, **options):
        self.piece_to_id = gpt2_id_map(dict_path, encoder_json)
        self.id_to_piece = {i: piece for piece, i in self.piece_to_id.items()}
        tokens = list(self.piece_to_id) + ([unk_token] if unk_token and unk_token not in self.piece_to_id else [])
        self.flota = FlotaTokenizer(tokens, "gpt2", unk_token=unk_token, **options)
        self.style, self.byte_level = "gpt2", self.flota.byte_level

    def tokenize(self, text: str) -> list:
        get = self.piece_to_id.get
        return [get(piece, piece) for piece in self.flota.tokenize(text)]

    def encode(self, text: str) -> str:
        return " ".join(self.tokenize(text))

    def decode(self, text: Union[str, Sequence[str]]) -> str:
        ids = text.split() if isinstance(text, str) else list(text)
        return detokenize([self.id_to_piece.get(i, i) for i in ids], "gpt2", self.byte_level)


def gpt2_id_tokenizer(options) -> Gpt2IdFlota:
    """:class:`Gpt2IdFlota` from ``--flota-*`` options (an argparse namespace or the fairseq adapter's config)."""
    encoder = getattr(options, "flota_gpt2_encoder", None)
    if not encoder:
        raise UserError(f"{options.flota_vocab} holds GPT-2 ids (an official fairseq checkpoint's dict.txt): give "
                        "--flota-gpt2-encoder encoder.json to map FLOTA's pieces to them")
    return Gpt2IdFlota(options.flota_vocab, encoder, k=options.flota_k, mode=options.flota_mode,
                       strict=bool(options.flota_strict), max_len=options.flota_max_len,
                       unk_token=getattr(options, "flota_unk", None) or None,
                       byte_level=bool(getattr(options, "flota_byte_level", False)))


def tokenizer_from_options(options) -> Union[FlotaTokenizer, Gpt2IdFlota]:
    """The tokenizer that ``--flota-*`` options describe (an argparse namespace or the fairseq adapter's config):
    :class:`Gpt2IdFlota` for an official checkpoint's dict.txt of GPT-2 ids, else :class:`FlotaTokenizer`.  The
    vocabulary file is read once for both the check and the tokenizer."""
    vocab = load_vocab(options.flota_vocab)
    if getattr(options, "flota_gpt2_encoder", None) or is_gpt2_id_dict(vocab):
        return gpt2_id_tokenizer(options)
    return FlotaTokenizer(vocab, options.flota_style, k=options.flota_k, mode=options.flota_mode,
                          strict=bool(options.flota_strict), max_len=options.flota_max_len,
                          unk_token=getattr(options, "flota_unk", None) or None,
                          byte_level=bool(getattr(options, "flota_byte_level", False)),
                          lowercase={"keep": False, "lower": True}.get(getattr(options, "flota_case", "auto")))


# --- preprocess.encode hooks ----------------------------------------------------------------------------------

class FlotaEncoder:
    """``LineEncoder`` for ``preprocess.encode --scheme flota``."""

    def __init__(self, tokenizer: FlotaTokenizer, noise_p: float = 0.0, noise_seed: int = 0):
        self.tokenizer = tokenizer
        self.noise_p = noise_p
        self.noise_seed = noise_seed

    def encode_line(self, line: str) -> str:
        line = flatten_line(line)
        if self.noise_p > 0:
            line = inject_whitespace_noise(line, self.noise_p, line_rng(self.noise_seed, line))
        return " ".join(self.tokenizer.tokenize(line))

    def encode_lines(self, lines: list) -> list:
        return [self.encode_line(line) for line in lines]

    def counters(self) -> dict:
        """Fallbacks so far (preprocess.encode prints them as ``note:`` lines)."""
        return {"words FLOTA dropped entirely (no vocabulary substring in them; --flota-unk TOKEN keeps a "
                "placeholder)": getattr(self.tokenizer, "dropped_words", 0)}


@dataclass
class FlotaOptions:
    """FLOTA's tokenizer options, declared once: the ``preprocess.encode --scheme flota`` options, the ``--bpe flota``
    adapter's config (``fairseq_plugins/flota.py``), the ``morphtok-binarize --scheme flota`` options and the
    decode arguments a recipe records are all derived from these fields (see :mod:`preprocess.options`)."""

    flota_vocab: Optional[str] = option(None, "vocabulary: token list, SentencePiece .model, fairseq dict.txt, BERT "
                                              "vocab.txt, GPT-2 encoder.json or tokenizer.json")
    flota_style: str = option("auto", "how word starts / continuations are marked (## / Ġ / ▁)",
                              ("auto",) + tuple(STYLES))
    flota_k: int = option(3, "at most k pieces per word")
    flota_mode: str = option("flota", "flota, or the baselines first/longest (need the standard segmenter)", MODES)
    flota_strict: bool = option(False, "never fall back to the other form (start/continuation) of a piece")
    flota_max_len: Optional[int] = option(None, "longest candidate substring (default 18 wordpiece, 19 gpt2, 16 "
                                                "sentencepiece)")
    flota_unk: Optional[str] = option(None, "token for a word without any vocabulary substring (default: emit "
                                            "nothing)")
    flota_byte_level: bool = option(False, "gpt2 only: look words up in GPT-2's byte-level alphabet (the released "
                                           "code does not)")
    flota_case: str = option("auto", "lower-case the text before the search: auto = when the vocabulary is uncased "
                                     "(has no capital letters, e.g. bert-base-uncased), as its own tokenizer does; an "
                                     "uncased WordPiece vocabulary also gets its tokenizer's accent stripping (café -> "
                                     "cafe)", ("auto", "keep", "lower"))
    flota_gpt2_encoder: Optional[str] = option(None, "GPT-2 encoder.json, when --flota-vocab is a dict.txt of GPT-2 "
                                                     "ids (official fairseq RoBERTa/BART checkpoints): emit the ids "
                                                     "that dictionary holds")


def add_encoder_args(parser) -> None:
    add_arguments(parser, FlotaOptions, required=("flota_vocab",))
    parser.add_argument("--noise-p", type=float, default=0.0,
                        help="drop the space between adjacent words with this probability before tokenising")
    parser.add_argument("--noise-seed", type=int, default=0, help="seed of the whitespace noise")


def make_encoder(args, noise_p: Optional[float] = None, noise_seed: Optional[int] = None) -> FlotaEncoder:
    """The encoder of ``args`` (:class:`FlotaOptions`, an argparse namespace or the adapter's config; the
    whitespace noise from ``--noise-p``/``--noise-seed`` there, or given here)."""
    noise_p = float((getattr(args, "noise_p", 0.0) if noise_p is None else noise_p) or 0.0)
    if not 0.0 <= noise_p <= 1.0:
        raise UserError(f"--noise-p must be between 0 and 1, not {noise_p}")
    noise_seed = int((getattr(args, "noise_seed", 0) if noise_seed is None else noise_seed) or 0)
    return FlotaEncoder(tokenizer_from_options(args), noise_p, noise_seed)


# --- command line: the fairseq dictionary of an inventory --------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m preprocess.flota",
        description="Write the fairseq dict.txt of a vocabulary (for fairseq-preprocess --srcdict), so that "
                    "every FLOTA piece is in the dictionary.")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dict", help="write a fairseq dict.txt from a vocabulary")
    d.add_argument("--vocab", required=True, help="any vocabulary format that --flota-vocab accepts")
    d.add_argument("--output", required=True, help="dict.txt to write")
    args = parser.parse_args(argv)
    from preprocess.common import check_distinct, check_output_path
    check_output_path(args.output)
    check_distinct([(args.output, "--output")], [(args.vocab, "--vocab")])
    info = write_fairseq_dict(args.vocab, args.output)
    msg = f"{args.output}: {info['written']} tokens"
    if info["skipped"]:
        msg += f", {len(info['skipped'])} with whitespace skipped"
    print(msg, file=sys.stderr)
    return 0


def cli() -> None:
    """Console-script entry point (see setup.py)."""
    import sys

    from preprocess.common import run_main
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
