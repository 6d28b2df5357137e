"""BITE: Base-InflecTion Encoding (Tan, Joty, Varshney & Kan, ACL 2020).

Each inflected content word is replaced by its base form followed by an inflection symbol::

    >>> BiteTokenizer("whitespace").tokenize("The dogs were barking")       # doctest: +SKIP
    ['The', 'dog', '[NNS]', 'be', '[VBD]', 'bark', '[VBG]']

Algorithm (paper Alg. 1 and section 3.1, as in the authors' reference implementation): tag the pretokenised
sentence with a PTB tagger; a token whose universal tag is NOUN, VERB or ADJ, which is not punctuation, and whose
PTB tag is not a base tag (NN, VB, JJ, RB, MD, NNP) becomes ``[lemma, [TAG]]`` with ``lemma = getLemma(word,
upos)[0]`` (lemminflect), falling back to the word itself; every other token is kept.  The punctuation test is the
reference's ``word in string.punctuation + '—'`` (a substring test, so e.g. ``()`` also counts as punctuation).

Detokenisation re-inflects each base with ``getInflection(base, TAG)[0]`` and keeps the base's capitalisation
style (``Dog [NNS]`` -> ``Dogs``, ``USA`` stays upper case).

Reversibility details (documented in the README, BITE section):

* **Escaping.** A word token that contains one of the 22 symbol strings (``[VBD]`` or its single character), or
  that starts with the escape character ``⧵`` (U+29F5) or a spacing mark, is emitted as ``⧵`` + token.  Decoding
  strips one ``⧵`` and never reads the rest as a symbol.  ``⧵`` is not whitespace, is NFKC-stable (survives
  SentencePiece's normaliser) and is one character, so it travels through SentencePiece and fairseq unchanged.
  The decision is made on the raw word *and* on the word as a subword model normalises it
  (:func:`model_normalised`: ``［NNS］`` is escaped, since NFKC makes it ``[NNS]``); a word that needs escaping
  is never lemmatised; see :func:`literal_tokens` and ``docs/normalisation-and-model-checks.md``.
* **Spacing (moses and bert pretokenisers).** Decoding joins words with a small deterministic English rule set
  (``default_attached``: closing punctuation and clitics glue left, opening brackets/currency glue right, straight
  double quotes alternate).  Where the original spacing differs from that rule (e.g. ``#19``), the word carries a
  one-character mark at its start: ``⁀`` (U+2040) = "no space before me", ``␣`` (U+2423) = "a space before me".
  So ``detokenize(tokenize(s)) == " ".join(s.split())`` whenever re-inflection gives the original words back.
  ``exact=True`` (``--bite-exact``) makes that always so: a word is split only where re-inflection in its
  sentence gives it back (:meth:`BiteTokenizer._reinflects`, :meth:`BiteTokenizer._exact_be`).
  With ``whitespace`` no marks are needed (tokens are joined by single spaces).
* **BITE + a subword model (BITE+D).**  The subword model does not see the word form above but the *subword text*
  (``subword_text``): the decoded sentence's spacing, each symbol glued to the end of its base
  (``The dog[NNS] bark[VBD].``).  With the symbols as user-defined pieces, SentencePiece then spends one piece per
  symbol and no ``▁`` on it, and punctuation is segmented as in raw text.  Decoding reads both forms: a
  whitespace-separated chunk may hold several words (a symbol ends the word before it, a spacing mark starts a new
  one); the subword text always decodes to exactly what the word form decodes to.
"""
from __future__ import annotations

import argparse
import bisect
import functools
import itertools
import re
import string
import unicodedata
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from preprocess.options import add_arguments, option, options_from
from preprocess.taggers import TaggerUnavailable, get_tagger, universal

#: The eleven inflection symbols, in the paper's / reference implementation's order.
INFLECTION_SYMBOLS: Tuple[str, ...] = (
    "[JJR]", "[JJS]", "[NNS]", "[NNPS]", "[RBR]", "[RBS]", "[VBD]", "[VBG]", "[VBN]", "[VBP]", "[VBZ]")
#: The same symbols as single characters U+266E .. U+2678 (``single_char=True``), in the same order.
SINGLE_CHAR_SYMBOLS: Tuple[str, ...] = tuple(chr(0x266E + i) for i in range(len(INFLECTION_SYMBOLS)))

ESCAPE = "\u29f5"      # ⧵ REVERSE SOLIDUS OPERATOR: prefix of an escaped literal token
GLUE = "\u2040"        # ⁀ CHARACTER TIE: "no space before this token" (default: space)
SPACE_BEFORE_MARK = "\u2423"  # ␣ OPEN BOX: "a space before this token" (default: glued)

#: What a subword model trained on BITE output should keep as single, always-known pieces: the symbols plus the
#: escape and spacing marks (otherwise a rare mark can become <unk> and an escaped raw "[VBD]" lose its escape).
USER_SYMBOLS: Tuple[str, ...] = INFLECTION_SYMBOLS + (ESCAPE, GLUE, SPACE_BEFORE_MARK)
USER_SYMBOLS_SINGLE: Tuple[str, ...] = SINGLE_CHAR_SYMBOLS + (ESCAPE, GLUE, SPACE_BEFORE_MARK)

LEMMA_TAGS = frozenset({"NN", "VB", "JJ", "RB", "MD", "NNP"})
HAVE_INFLECTIONS = frozenset({"NOUN", "ADJ", "VERB"})
PUNCTUATION = string.punctuation + "\u2014"   # the reference's test is `word in PUNCTUATION` (substring)
PRETOKENIZERS = ("moses", "whitespace", "bert")
TAGGERS = ("nltk", "hanta")

TAG_OF_SYMBOL: Dict[str, str] = {}
for _sym, _ch in zip(INFLECTION_SYMBOLS, SINGLE_CHAR_SYMBOLS):
    TAG_OF_SYMBOL[_sym] = TAG_OF_SYMBOL[_ch] = _sym[1:-1]
_ALL_SYMBOLS = tuple(TAG_OF_SYMBOL)
_SYMBOL_RE = re.compile("|".join(re.escape(s) for s in sorted(_ALL_SYMBOLS, key=len, reverse=True)))
_NEEDS_ESCAPE_START = (ESCAPE, GLUE, SPACE_BEFORE_MARK)
#: characters that make a token need escaping wherever they stand: the single-character symbols, and the spacing
#: marks (inside a word of the subword text, ``⁀`` and ``␣`` separate words; see ``BiteTokenizer.subword_text``)
_SYMBOL_CHARS = frozenset(SINGLE_CHAR_SYMBOLS + (GLUE, SPACE_BEFORE_MARK))
#: what splits a whitespace-separated chunk into words on decoding: symbols and spacing marks
_CHUNK_SPLIT_RE = re.compile("(" + "|".join(re.escape(s) for s in sorted(_ALL_SYMBOLS, key=len, reverse=True))
                             + "|" + GLUE + "|" + SPACE_BEFORE_MARK + ")")

#: The C0 control characters that are not whitespace (U+0000-U+0008, U+000E-U+001B) are deleted by the Moses
#: tokenizer, which would join the words around them ("x\x00y" -> "xy", then inflected as one word).  With the
#: moses pretokenizer they become spaces first: the invisible character is lost, the words stay apart.  Every
#: other character (zero-width, combining, right-to-left marks, C1 controls, U+007F) passes Moses unchanged.
MOSES_DELETED = "".join(chr(c) for c in (*range(0x00, 0x09), *range(0x0E, 0x1C)))
_MOSES_DELETED_RE = re.compile("[" + re.escape(MOSES_DELETED) + "]")


#: Sentences made only of ASCII words (letters and digits, perhaps joined by single hyphens, and at most one
#: apostrophe between two letters), each perhaps followed by a comma, and one final ``.``, ``!`` or ``?`` (99% of
#: Multi30k's English) are split here exactly as sacremoses splits them (``tests/test_bite.py`` compares the two on
#: every sentence of Multi30k and on the edge cases): the comma and the final mark become tokens, the apostrophe
#: starts a token (``McDonald's`` -> ``McDonald 's``, sacremoses' English rule for a letter on both sides), hyphens
#: stay inside the word (no aggressive dash splits), and a final period after one of Moses' nonbreaking prefixes
#: (``plan A.``, ``Mr.``) stays on its word.  Every other sentence goes through sacremoses, whose 25 regular
#: expressions cost more than tagging such a sentence.
_PLAIN_WORD = r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*"
_PLAIN_WORD = rf"{_PLAIN_WORD}(?:(?<=[A-Za-z])'(?=[A-Za-z]){_PLAIN_WORD})?"
_PLAIN_SENTENCE = re.compile(rf"(?:{_PLAIN_WORD},? )*{_PLAIN_WORD}[.!?]?")
#: the same with any hyphens and apostrophes in the words (a quicker first test; see :func:`_plain_sentence`)
_PLAIN_CHARS = re.compile(r"(?:[A-Za-z0-9'-]+,? )*[A-Za-z0-9'-]+[.!?]?")


def _plain_sentence(text: str) -> bool:
    """``_PLAIN_SENTENCE.fullmatch(text)``, sooner: its look-arounds are needed only where hyphens or apostrophes
    are."""
    if _PLAIN_CHARS.fullmatch(text) is None:
        return False
    return ("'" not in text and "-" not in text) or _PLAIN_SENTENCE.fullmatch(text) is not None


#: What SentencePiece's ``nmt_nfkc`` normaliser does beyond Unicode NFKC (measured on every code point with
#: sentencepiece 0.2): these control characters are deleted, these invisible characters become a space.
#: (``nfkc`` does less; ``nmt_nfkc_cf`` and ``nfkc_cf`` add case folding, which only lower-cases and so cannot
#: make the upper-case ``[TAG]`` symbols; user-defined pieces such as the symbols are never normalised.)
NMT_DELETED = "".join(chr(c) for c in (*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F))
NMT_SPACES = "\u200b\u200c\u200e\u200f\ufeff\ufffd"
_NMT_TABLE = {**{ord(c): None for c in NMT_DELETED}, **{ord(c): " " for c in NMT_SPACES}}


def model_normalised(text: str) -> str:
    """``text`` as the strongest normaliser a subword model applies would see it: NFKC, plus ``nmt_nfkc``'s
    deletions and spaces (see :data:`NMT_DELETED`).  Printable ASCII is returned unchanged."""
    if text.isascii() and text.isprintable():
        return text
    return unicodedata.normalize("NFKC", text.translate(_NMT_TABLE)).translate(_NMT_TABLE)


def _needs_escape_as_is(token: str) -> bool:
    if token.startswith(_NEEDS_ESCAPE_START):
        return True
    if "[" in token and _SYMBOL_RE.search(token):
        return True
    return any(c in _SYMBOL_CHARS for c in token) if not token.isascii() else False


def needs_escape(token: str) -> bool:
    """Whether the literal word ``token`` must be written escaped: it contains a symbol or a spacing mark or
    starts with the escape character, as it stands *or after the normalisation of a subword model*
    (:func:`model_normalised`: ``［NNS］`` -> ``[NNS]``, ``[NN\x01S]`` -> ``[NNS]``).  Decided on the raw text,
    so a BITE output escapes the same whatever model segments it later."""
    if _needs_escape_as_is(token):
        return True
    if token.isascii() and token.isprintable():
        return False
    norm = model_normalised(token)
    return norm != token and _needs_escape_as_is(norm)


def _structure(text: str) -> List[str]:
    """What the decoder reads as structure in a text, in order: the symbols and spacing marks of each chunk,
    and the escape that makes a chunk literal (whose symbols then do not count)."""
    out: List[str] = []
    for tok in text.split():
        if tok[:1] in (GLUE, SPACE_BEFORE_MARK):
            out.append(tok[0])
            tok = tok[1:]
        if tok[:1] == ESCAPE:
            out.append(ESCAPE)
        else:
            out.extend(_CHUNK_SPLIT_RE.findall(tok))
    return out


def _one_chunk(text: str) -> bool:
    """``text`` stays one whitespace-free chunk under a subword model's normalisation (a base that a symbol
    follows must: ``a¨`` becomes ``a \u0308``, and the symbol would inflect the wrong part)."""
    return (text.isascii() and text.isprintable()) or len(model_normalised(text).split()) == 1


def escape(token: str) -> str:
    return ESCAPE + token if needs_escape(token) else token


def literal_tokens(token: str) -> Tuple[str, ...]:
    """A literal word as BITE output tokens: ``(token,)`` or ``(escape + token,)``, and, where a subword model's
    normalisation would split the word at a space (``¨`` is NFKC ``" \u0308"``, U+200B a space under
    ``nmt_nfkc``) and a later part would read as a symbol or an escape (``a¨[NNS]``), the word cut after each
    such character into glued tokens, each escaped as needed (``a¨ ⁀⧵[NNS]``): the escape character then starts
    every part that needs it, before and after normalisation, and BITE alone still decodes the word exactly."""
    if token.isascii() and token.isprintable():
        return (ESCAPE + token,) if _needs_escape_as_is(token) else (token,)
    norm = model_normalised(token)
    parts = norm.split()
    # the escape protects the part the word starts with, unless normalisation puts a space before it (``¨``)
    if any(_needs_escape_as_is(p) for p in parts[0 if norm[:1].isspace() else 1:]):
        cut, start = [], 0
        for i, ch in enumerate(token):
            if i + 1 < len(token) and any(c.isspace() for c in model_normalised(ch)):
                cut.append(token[start:i + 1])
                start = i + 1
        cut.append(token[start:])
        if len(cut) > 1:
            return tuple(escape(p) if k == 0 else GLUE + escape(p) for k, p in enumerate(cut) if p)
    return (escape(token),)


def _is_bert_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def bert_pretokenize(text: str) -> List[str]:
    """Whitespace and punctuation splitting like BERT's BasicTokenizer/BertPreTokenizer (no lower-casing)."""
    out: List[str] = []
    for chunk in text.split():
        if chunk.isalnum():
            out.append(chunk)
            continue
        cur = []
        for ch in chunk:
            if _is_bert_punct(ch):
                if cur:
                    out.append("".join(cur))
                    cur = []
                out.append(ch)
            else:
                cur.append(ch)
        if cur:
            out.append("".join(cur))
    return out


def _align(tokens: Sequence[str], text: str) -> Optional[List[bool]]:
    """attached[i] = token i directly follows token i-1 in ``text`` (single-spaced); None if not alignable."""
    pos = 0
    attached = []
    startswith = text.startswith
    for tok in tokens:
        if startswith(tok, pos):
            attached.append(pos > 0)
        elif startswith(" ", pos) and startswith(tok, pos + 1):
            attached.append(False)
            pos += 1
        else:
            return None
        pos += len(tok)
    if attached:
        attached[0] = False
    return attached


#: default spacing (English, Moses-like): these attach to the word before / to the word after
_CLOSE = frozenset(list(".,;:!?%)]}”’") + ["...", "n't", "N'T", "'s", "'S", "'re", "'ve", "'m", "'ll", "'d",
                                                   "'RE", "'VE", "'M", "'LL", "'D", "'"])
_CLOSE_CHARS = frozenset(".,;:!?%)]}")
_OPEN = frozenset(list("([{$\u00a3\u20ac\u00a5\u00bf\u00a1\u201c\u2018"))


_CATEGORY: Dict[str, int] = {}   # word -> 0 plain, 1 glues left, 2 glues right, 3 straight double quote


def _category(w: str) -> int:
    c = _CATEGORY.get(w)
    if c is None:
        if w in _CLOSE or (w and all(ch in _CLOSE_CHARS for ch in w)):
            c = 1
        elif w in _OPEN:
            c = 2
        elif w == '"':
            c = 3
        else:
            c = 0
        if len(_CATEGORY) < 500_000:
            _CATEGORY[w] = c
    return c


def default_attached(words: Sequence[str]) -> List[bool]:
    """How words are joined when no spacing mark says otherwise: closing punctuation and clitics ('s, n't) attach
    to the left, opening brackets and currency signs to the right, straight double quotes alternate (opening,
    closing).  Deterministic in ``words`` only, so encoder and decoder agree; marks cover every difference."""
    att = [False] * len(words)
    glue_next = False
    quote_open = False
    get = _CATEGORY.get
    for i, w in enumerate(words):
        c = get(w)
        if c is None:
            c = _category(w)
        a = glue_next
        glue_next = False
        if c == 1:
            a = True
        elif c == 2:
            glue_next = True
        elif c == 3:
            if quote_open:
                a = True
            else:
                glue_next = True
            quote_open = not quote_open
        att[i] = a and i > 0
    return att


def _get_lemma(word: str, upos: str) -> str:
    try:
        lemmas = get_lemmas(word, upos)
    except (IndexError, KeyError, ValueError):  # lemminflect's OOV rules index characters (e.g. of an empty string)
        lemmas = ()
    lemma = lemmas[0] if lemmas else ""
    if not lemma or any(c.isspace() for c in lemma):
        lemma = word
    return lemma


#: the lemminflect version whose ``getLemma`` :func:`get_lemmas` reproduces (``tests/test_bite.py`` checks it)
LEMMINFLECT_MATCHED = "0.2.3"


@functools.lru_cache(maxsize=None)
def _lemminflect():
    """lemminflect's lemmatizer and its lemma and override tables (loaded by lemminflect), or None when the
    installed lemminflect is not :data:`LEMMINFLECT_MATCHED` (then :func:`get_lemmas` calls ``getLemma``)."""
    import lemminflect
    from lemminflect.core.Lemmatizer import Lemmatizer
    lemmatizer = Lemmatizer()
    if getattr(lemminflect, "__version__", None) != LEMMINFLECT_MATCHED or \
            not all(hasattr(lemmatizer, m) for m in ("_getLemmaDict", "_getOverridesDict", "getAllLemmasOOV")):
        return None
    return lemmatizer, lemmatizer._getLemmaDict(), lemmatizer._getOverridesDict()


def get_lemmas(word: str, upos: str) -> tuple:
    """``lemminflect.getLemma(word, upos)`` for ``upos`` NOUN, VERB or ADJ: the same look-ups (the override table
    before the lemma table, by the lower-cased word; lemminflect's OOV rules where neither has the word), the
    same capitalisation (lemminflect's own functions), without the deep copies of the tables' entries that
    ``getAllLemmas`` makes (they are tuples of strings, which it does not change): those were a third of BITE's
    time for a new word."""
    lem = _lemminflect()
    if lem is None:
        from lemminflect import getLemma
        return getLemma(word, upos=upos)
    lemmatizer, table, overrides = lem
    from lemminflect.core.LexicalUtils import applyCapsStyle, getCapsStyle
    lower = word.lower()
    forms = overrides.get(lower, {}).get(upos)
    if forms is None:
        forms = table.get(lower, {}).get(upos)
    if forms is None:
        oov = lemmatizer.getAllLemmasOOV(word, upos)
        return oov[upos] if oov else ()
    style = getCapsStyle(word)
    return tuple(applyCapsStyle(f, style) for f in forms)


#: the tags whose *be* the decoder chooses by subject (:func:`_be_form`)
_BE_TAGS = frozenset({"VBP", "VBD"})
_PLURAL_SUBJECTS = frozenset({"we", "you", "they", "these", "those", "both"})


def _be_form(tag: str, before: Sequence[str], plural: Sequence[bool]) -> str:
    """Overabundance of *be*: lemminflect gives VBP = (am, are) and VBD = (was, were) and the reference takes the
    first.  Choose by the subject instead: *am* only after *I*; *were* after we/you/they or a plural noun among
    the three previous words."""
    prev = before[-1].lower() if before else ""
    if tag == "VBP":
        return "am" if prev == "i" else "are"
    if prev == "i":
        return "was"
    if prev in _PLURAL_SUBJECTS or any(plural[-3:]):
        return "were"
    return "was"


def match_case(form: str, base: str) -> str:
    """``form`` in the case of ``base``: all capitals for an all-capital word, a capital first letter for a
    capitalised one (BITE's decoder, and the noise evaluation's inflection swaps)."""
    if base.isupper() and len(base) > 1 and not form.isupper():
        return form.upper()
    if base[:1].isupper() and form[:1].islower():
        return form[:1].upper() + form[1:]
    return form


@dataclass
class BiteOptions:
    """BITE's options, declared once: ``preprocess.encode --scheme bite``, the ``--tokenizer bite`` adapter
    (``fairseq_plugins/bite.py``), the ``morphtok-binarize --scheme bite`` options and the decode arguments a recipe
    records derive from these fields (see :mod:`preprocess.options`)."""

    bite_tagger: str = option("nltk", "POS tagger: nltk (averaged perceptron, needs NLTK_DATA) or hanta (no NLTK "
                                      "data)", TAGGERS, aliases=("--tagger",))
    bite_pretokenizer: str = option("moses", "word splitting before BITE (moses: sacremoses without XML escaping)",
                                    PRETOKENIZERS, aliases=("--pretokenizer",))
    bite_single_char: bool = option(False, "emit inflection symbols as single characters U+266E..U+2678 instead "
                                           "of [TAG]", aliases=("--single-char",))
    bite_exact: bool = option(False, "exact round trips: keep an inflected word as it is wherever re-inflecting its "
                                     "base with its symbol in its sentence would not give it back (sleeps tagged NNS "
                                     "would decode to sleep), so decoding gives back every sentence as normalised; "
                                     "off: the published algorithm, which changes 753 of Multi30k's 29,000 English "
                                     "training sentences")


class BiteTokenizer:
    """BITE encoder/decoder.

    ``tokenize(sentence) -> list[str]`` and ``detokenize(tokens) -> str``; ``encode_lines`` / ``decode_lines``
    work on whole lines (tokens joined by single spaces), the ``LineEncoder`` contract of preprocess.encode.
    """

    def __init__(self, pretokenizer: str = BiteOptions.bite_pretokenizer, tagger: str = BiteOptions.bite_tagger,
                 single_char: bool = BiteOptions.bite_single_char, exact: bool = BiteOptions.bite_exact):
        if pretokenizer not in PRETOKENIZERS:
            raise ValueError(f"pretokenizer must be one of {PRETOKENIZERS}, not {pretokenizer!r}")
        if tagger is not None and tagger not in TAGGERS:   # None: no tagger (decoding, subword_text only)
            raise ValueError(f"tagger must be one of {TAGGERS}, not {tagger!r}")
        self.pretokenizer = pretokenizer
        self.single_char = bool(single_char)
        self.tagger = get_tagger(tagger) if tagger is not None else None
        if self.tagger is not None:   # an encoder: lemminflect's tables loaded now, with the tagger's model
            _lemminflect()
        self._moses_tok = None
        if pretokenizer == "moses":
            from sacremoses import MosesTokenizer
            self._moses_tok = MosesTokenizer(lang="en")
            #: the words a sentence-final period stays on (sacremoses: a nonbreaking prefix, not a numeric-only one)
            self._period_stays = frozenset(self._moses_tok.NONBREAKING_PREFIXES) - \
                frozenset(self._moses_tok.NUMERIC_ONLY_PREFIXES)
        self._symbols = dict(zip(INFLECTION_SYMBOLS, SINGLE_CHAR_SYMBOLS if single_char else INFLECTION_SYMBOLS))
        #: PTB tag -> symbol, for the tags whose words BITE splits (Algorithm 1: universal tag NOUN, VERB or ADJ, not a
        #: base tag); RBR and RBS have symbols but are adverbs
        self._inflected = {sym[1:-1]: out for sym, out in self._symbols.items()
                           if universal(sym[1:-1]) in HAVE_INFLECTIONS and sym[1:-1] not in LEMMA_TAGS}
        self._word_cache: Dict[Tuple[str, str], str] = {}   # (word, tag) -> its tokens joined by spaces
        #: ``exact`` (:attr:`BiteOptions.bite_exact`): a word is split only where decoding gives it back; the
        #: words whose decoded form depends on the sentence (*be* as VBP/VBD, see :func:`_be_form`) are checked in
        #: their sentence (:meth:`_exact_in_context`), on the word texts listed in ``_in_context``
        self.exact = bool(exact)
        self._in_context: set = set()
        self._plural_ends = tuple(" " + self._symbols[s] for s in ("[NNS]", "[NNPS]"))
        self._inflect_cache: Dict[Tuple[str, str], str] = {}
        self._cache_size = 1_000_000

    # ---- encoding -------------------------------------------------------------------------------------------
    def pretokenize(self, sentence: str) -> List[str]:
        return self._split(self._spaced(sentence))[0]

    def _split(self, text: str) -> Tuple[List[str], bool]:
        """The words of a single-spaced text, and whether they are spaced exactly as the default rule spaces
        them (whitespace words; a plain sentence's words), so that no spacing marks are needed."""
        if not text:
            return [], True
        if self.pretokenizer == "whitespace":
            return text.split(), True
        if self.pretokenizer == "bert":
            return bert_pretokenize(text), False
        if _plain_sentence(text):
            return self._moses_plain(text)
        # escape=False: no XML entities (&amp; ...), characters stay as in the input
        return [t for t in self._moses_tok.tokenize(text, escape=False) if t], False

    def _split_lines(self, texts: Sequence[str]) -> List[Tuple[List[str], bool]]:
        """:meth:`_split` of each text (the plain-sentence test inline: most lines take the fast path)."""
        if self.pretokenizer != "moses":
            return list(map(self._split, texts))
        chars, sentence, plain, split = _PLAIN_CHARS.fullmatch, _PLAIN_SENTENCE.fullmatch, self._moses_plain, self._split
        return [plain(t) if t and chars(t) is not None and (("'" not in t and "-" not in t) or sentence(t) is not None)
                else split(t) for t in texts]

    def _moses_plain(self, text: str) -> Tuple[List[str], bool]:
        """sacremoses' tokenisation of a sentence that matches ``_PLAIN_SENTENCE``, and whether the default rule
        spaces its words as the text does (not after a split-off ``'t`` of ``don't``, say, which needs a mark)."""
        if "," in text:
            text = text.replace(",", " ,")
        apostrophe = "'" in text
        if apostrophe:   # (after the comma, before the final period: sacremoses' order; a plain word has at most
            text = text.replace("'", " '")   # one apostrophe, between two letters, and it starts a token)
        words = text.split()
        last = words[-1]
        mark = last[-1]
        if mark in "!?" or (mark == "." and last[:-1] not in self._period_stays):
            words[-1:] = [last[:-1], mark]
        return words, not apostrophe or all(_category(w) == 1 for w in words if w[0] == "'")

    def _encode_word(self, word: str, ptb: str) -> Tuple[str, ...]:
        """The BITE tokens of one tagged word: ``(base, symbol)``, or the word as literal tokens."""
        return tuple(self._word_text(word, ptb).split(" "))

    def _word_text(self, word: str, ptb: str) -> str:
        """:meth:`_encode_word`'s tokens joined by single spaces (no token holds a space), cached per (word, tag)."""
        key = (word, ptb)
        out = self._word_cache.get(key)
        if out is not None:
            return out
        symbol = self._inflected.get(ptb)   # (the tags with a symbol whose universal tag has inflections)
        if symbol is None and "[" not in word and word.isascii() and word.isprintable():
            out = word   # (literal_tokens: nothing to escape)
            if len(self._word_cache) < self._cache_size:
                self._word_cache[key] = out
            return out
        tokens = None
        # a word that must be escaped is written literally, never as base + symbol: the escape is decided on the
        # word itself (lemmatising "[VBP]" gave the base "[VBP", written unescaped, decoded "[VBP")
        if symbol is not None and word not in PUNCTUATION and not needs_escape(word):
            lemma = _get_lemma(word, universal(ptb))
            if not needs_escape(lemma) and _one_chunk(lemma) and (not self.exact or self._reinflects(word, lemma, ptb)):
                tokens = (lemma, symbol)
        out = " ".join(tokens or literal_tokens(word))
        if self.exact and tokens is not None and ptb in _BE_TAGS and lemma.lower() == "be":
            self._in_context.add(out)
        if len(self._word_cache) < self._cache_size:
            self._word_cache[key] = out
        return out

    def _reinflects(self, word: str, lemma: str, ptb: str) -> bool:
        """Exact mode: whether decoding ``lemma`` + the symbol of ``ptb`` gives ``word`` back, as BITE alone decodes
        it and as it decodes after a subword model's normaliser (:func:`model_normalised`).  *be* as VBP or VBD
        depends on the sentence: here only printable ASCII passes, :meth:`_exact_in_context` decides."""
        plain = word.isascii() and word.isprintable() and lemma.isascii() and lemma.isprintable()
        if ptb in _BE_TAGS and lemma.lower() == "be":
            return plain
        if self.inflect(lemma, ptb) != word:
            return False
        if plain:
            return True
        norm_lemma = model_normalised(lemma)
        if ptb in _BE_TAGS and norm_lemma.lower() == "be":
            return False
        return self.inflect(norm_lemma, ptb) == model_normalised(word)

    def _exact_in_context(self, words: Sequence[str], tags: Sequence[str], texts: List[str],
                          start: int = 0, end: Optional[int] = None) -> List[str]:
        """Exact mode: ``texts`` (the BITE text of each word, :meth:`_word_text`) with every *be* (VBP/VBD) of the
        sentence ``words[start:end]`` written as it is where the decoder's choice by subject would not give it
        back (:meth:`_exact_be`).  Changed in place, and returned."""
        in_context = self._in_context
        for i in range(start, len(words) if end is None else end):
            if texts[i] in in_context:
                self._exact_be(words, tags, texts, i, start)
        return texts

    def _exact_be(self, words: Sequence[str], tags: Sequence[str], texts: List[str], i: int, start: int) -> None:
        """Exact mode, the *be* at ``i`` of the sentence that starts at ``start``: kept as it is unless the
        decoder's choice by subject (:func:`_be_form`: the word before, a plural noun among the three before)
        gives it back.  The decoder sees the same three words before it, raw or normalised, only where they are
        printable ASCII (one word each, which a subword model's normaliser leaves alone); elsewhere the *be* is
        kept.  (Keeping a *be* changes no context: the decoded words are the input's words either way.)"""
        lo = max(start, i - 3)
        before = words[lo:i]
        if all(w.isascii() and w.isprintable() for w in before):
            plural = [t.endswith(self._plural_ends) for t in texts[lo:i]]
            if match_case(_be_form(tags[i], before, plural), texts[i].split(" ", 1)[0]) == words[i]:
                return
        texts[i] = " ".join(literal_tokens(words[i]))

    def bite_words(self, words: Sequence[str], tags: Sequence[str]) -> List[str]:
        """Algorithm 1 on pretokenised, tagged words (escaping included, no spacing marks)."""
        return self._bite_text(words, tags).split(" ") if words else []

    def _bite_text(self, words: Sequence[str], tags: Sequence[str]) -> str:
        """:meth:`bite_words` joined by single spaces."""
        texts = list(map(self._word_cache.get, zip(words, tags)))
        if None in texts:
            enc = self._word_text
            texts = [x if x is not None else enc(w, t) for x, w, t in zip(texts, words, tags)]
        if self.exact and self._in_context:
            self._exact_in_context(words, tags, texts)
        return " ".join(texts)

    def _tokenize_words(self, text: str, words: List[str], tags: Sequence[str], default_spacing: bool) -> List[str]:
        if default_spacing:   # (see _split)
            return self.bite_words(words, tags)
        orig = _align(words, text)
        default = default_attached(words)
        if orig is not None and not (text.isascii() and text.isprintable()):
            # a mark also where the words as a subword model normalises them would be spaced differently by
            # default (fullwidth "（" is NFKC "(", which glues to the next word)
            normed = default_attached([model_normalised(w) for w in words])
            if normed != default:
                default = [d if d == n else not o for o, d, n in zip(orig, default, normed)]
        if orig is None and self.exact and words:
            # the pretokeniser changed characters (Moses: "a -- b" -> "a - - b"), so no marks can restore the text:
            # exact mode takes the whitespace words instead, which always align
            spaced = text.split()
            return self._tokenize_words(text, spaced, self.tagger.tag(spaced), False)
        if orig is None or orig == default:   # (None: the pretokeniser changed characters; no marks possible)
            return self.bite_words(words, tags)
        out: List[str] = []
        texts = self._exact_in_context(words, tags, [self._word_text(w, t) for w, t in zip(words, tags)]) \
            if self.exact else None
        for i, (w, t) in enumerate(zip(words, tags)):
            enc = self._encode_word(w, t) if texts is None else tuple(texts[i].split(" "))
            if orig[i] != default[i]:
                out.append((GLUE if orig[i] else SPACE_BEFORE_MARK) + enc[0])
                out.extend(enc[1:])
            else:
                out.extend(enc)
        return out

    def tokenize(self, sentence: str) -> List[str]:
        """BITE tokens of one sentence (what fairseq's ``--tokenizer bite`` and hub ``encode`` call)."""
        text = self._spaced(sentence)
        words, default_spacing = self._split(text)
        return self._tokenize_words(text, words, self.tagger.tag(words), default_spacing) if words else []

    def tokenize_pretokenized(self, words: Sequence[str]) -> List[str]:
        """BITE on words split by the caller (no spacing marks; join the words yourself on decoding with
        ``detokenize_words``)."""
        words = [x for w in words for x in w.split()]   # no empty or whitespace-containing tokens
        return self.bite_words(words, self.tagger.tag(words)) if words else []

    def _spaced(self, sentence: str) -> str:
        if self.pretokenizer == "moses" and _MOSES_DELETED_RE.search(sentence):
            sentence = _MOSES_DELETED_RE.sub(" ", sentence)
        return " ".join(sentence.split())

    def tokenize_batch(self, sentences: Sequence[str]) -> List[List[str]]:
        texts = [self._spaced(s) for s in sentences]
        splits = self._split_lines(texts)
        tags = self.tagger.tag_sents([w for w, _ in splits])
        return [self._tokenize_words(t, w, g, d) for t, (w, d), g in zip(texts, splits, tags)]

    def encode_lines(self, lines: Sequence[str]) -> List[str]:
        """``" ".join`` of :meth:`tokenize_batch`'s tokens for each line (built as text: the same bytes)."""
        from preprocess.common import flatten_line
        spaced = self._spaced
        # (printable ASCII holds no line break and nothing Moses deletes: only the spaces to normalise)
        texts = [(" ".join(l.split()) if "  " in l or l[:1] == " " or l[-1:] == " " else l)
                 if l.isascii() and l.isprintable() else spaced(flatten_line(l)) for l in lines]
        splits = self._split_lines(texts)
        sentences = [w for w, _ in splits]
        # the chunk's words at once: their tags, and the BITE text of each (word, tag) (cached), in one list
        words = list(itertools.chain.from_iterable(sentences))
        tags = self.tagger.tag_words(sentences)
        pieces = list(map(self._word_cache.get, zip(words, tags)))
        if None in pieces:
            enc = self._word_text
            pieces = [x if x is not None else enc(w, t) for x, w, t in zip(pieces, words, tags)]
        if self.exact and self._in_context:   # each *be* checked in its sentence (its start: the last one <= it)
            in_context, starts = self._in_context, list(itertools.accumulate((len(w) for w, _ in splits), initial=0))
            for i in [i for i, p in enumerate(pieces) if p in in_context]:
                self._exact_be(words, tags, pieces, i, starts[bisect.bisect_right(starts, i) - 1])
        out, pos, join = [], 0, " ".join
        for t, (w, d) in zip(texts, splits):
            end = pos + len(w)
            out.append(join(pieces[pos:end]) if d else join(self._tokenize_words(t, w, tags[pos:end], d)))
            pos = end
        return out

    # ---- decoding -------------------------------------------------------------------------------------------
    def inflect(self, base: str, tag: str) -> str:
        key = (base, tag)
        form = self._inflect_cache.get(key)
        if form is None:
            from lemminflect import getInflection
            form = base
            if base:
                try:
                    forms = getInflection(base, tag=tag)
                except (IndexError, KeyError, ValueError):  # lemminflect's OOV rules index characters
                    forms = ()
                if forms and forms[0] and not any(c.isspace() for c in forms[0]):
                    form = match_case(forms[0], base)
            if len(self._inflect_cache) < self._cache_size:
                self._inflect_cache[key] = form
        return form

    @staticmethod
    def parse(tokens: Iterable[str]) -> List[list]:
        """Read BITE output into entries ``[text, mark, tag, literal, chunk_start]``, one per word.

        ``tokens`` are whitespace-separated chunks of either form BITE writes: the word form (one word or one
        symbol per chunk, spacing marks at a word's start) or the subword text (see :meth:`subword_text`), where
        a chunk holds several words: a symbol ends the word before it, ``⁀``/``␣`` start a new word, and the
        words after the first are glued to it.  ``mark`` is '' (spacing by the default rule) or a spacing mark;
        ``tag`` the PTB tag of the word's symbol (None if none); ``literal``: the word was escaped."""
        entries: List[list] = []
        open_base = False   # the last word may still take an inflection symbol
        get_tag = TAG_OF_SYMBOL.get
        for tok in tokens:
            tag = get_tag(tok)
            if tag is not None:
                if open_base:
                    entries[-1][2] = tag
                    open_base = False
                continue   # a symbol with no base before it is dropped
            mark = ""
            if tok[:1] in (GLUE, SPACE_BEFORE_MARK):
                mark, tok = tok[0], tok[1:]
            if tok[:1] == ESCAPE:   # an escaped word is a whole chunk, read literally
                if len(tok) > 1:
                    entries.append([tok[1:], mark, None, True, True])
                    open_base = True
                continue
            if tok.isascii() and "[" not in tok or not _CHUNK_SPLIT_RE.search(tok):
                if tok:
                    entries.append([tok, mark, None, False, True])
                    open_base = True
                continue
            first = True
            for i, part in enumerate(_CHUNK_SPLIT_RE.split(tok)):
                if not i % 2:
                    if part:
                        entries.append([part, mark, None, False, first])
                        open_base, first, mark = True, False, GLUE
                    continue
                tag = get_tag(part)
                if tag is None:
                    mark = part   # a spacing mark inside a chunk starts the next word
                    continue
                if open_base:
                    entries[-1][2] = tag
                    open_base = False
                mark = GLUE
        return entries

    def inflect_entries(self, entries: Sequence[list]) -> List[str]:
        """The decoded words of :meth:`parse`'s entries: each base re-inflected with its symbol."""
        words: List[str] = []
        plural: List[bool] = []   # word was re-inflected as a plural noun
        for text, _, tag, _, _ in entries:
            if tag is not None:
                if text.lower() == "be" and tag in ("VBP", "VBD"):
                    text = match_case(_be_form(tag, words, plural), text)
                else:
                    text = self.inflect(text, tag)
            words.append(text)
            plural.append(tag in ("NNS", "NNPS"))
        return words

    def detokenize_words(self, tokens: Iterable[str]) -> Tuple[List[str], List[str]]:
        """Re-inflected words and their spacing marks ('' / GLUE / SPACE_BEFORE_MARK)."""
        entries = self.parse(tokens)
        return self.inflect_entries(entries), [e[1] for e in entries]

    def attachment(self, words: Sequence[str], marks: Sequence[str]) -> List[bool]:
        """attached[i]: no space between words i-1 and i (the default rule, overridden by the marks)."""
        attached = default_attached(words) if self.pretokenizer != "whitespace" else [False] * len(words)
        for i, mark in enumerate(marks):
            if mark:
                attached[i] = mark == GLUE
        if attached:
            attached[0] = False
        return attached

    @staticmethod
    def _join(words: Sequence[str], attached: Sequence[bool]) -> str:
        return "".join(w if a else " " + w for w, a in zip(words, attached))[1:] if words else ""

    def detokenize(self, tokens: Iterable[str]) -> str:
        words, marks = self.detokenize_words(tokens)
        if not words:
            return ""
        if self.pretokenizer == "whitespace" and not any(marks):
            return " ".join(words)
        return self._join(words, self.attachment(words, marks))

    def decode_lines(self, lines: Sequence[str]) -> List[str]:
        return [self.detokenize(l.split()) for l in lines]

    # ---- the text a subword model sees ------------------------------------------------------------------------
    def subword_text(self, tokens: Sequence[str]) -> str:
        """BITE tokens (word form) as the text for a subword model: the spacing of the decoded sentence, each
        symbol glued to the end of its base (``The dogs barked.`` -> ``The dog[NNS] bark[VBD].``).

        A SentencePiece model with the symbols as user-defined symbols then spends exactly one piece per symbol
        and no ``▁`` on it, and punctuation keeps the segmentation it has in raw text (``.`` rather than ``▁.``).
        Decoding (:meth:`detokenize` on the whitespace-split text, which is what a subword decode gives) returns
        exactly what the word form decodes to: where merging words into one chunk would change the result
        (a base after glued punctuation, ``(⁀dog[NNS])``; spacing the default rule gets wrong), a spacing mark
        is written, and the text is checked by decoding it; if it still differed (which does not happen on
        well-formed BITE output), the word form itself is returned."""
        tokens = [t for t in tokens if t]
        entries = self.parse(tokens)
        if not entries:
            return ""
        words = self.inflect_entries(entries)
        target = self.attachment(words, [e[1] for e in entries])
        expected = self._join(words, target)
        for safe in (False, True):
            text, decoded = self._glue(entries, target, safe)
            if decoded == expected and self._normalisation_safe(text):
                return text
        return " ".join(tokens)

    def _normalisation_safe(self, text: str) -> bool:
        """Whether a subword model's normaliser (:func:`model_normalised`) leaves the symbols and escapes of a
        subword text where they are: glued words can form a symbol only together (``［``, ``NNS``, ``］``), which
        the escape of each word cannot see.  Where it would not, the word form is used (its words are separated
        by spaces, and each is escaped on its own)."""
        if text.isascii() and text.isprintable():
            return True
        norm = model_normalised(text)
        if norm == text:
            return True
        if _structure(norm) != _structure(text):
            return False
        decoded = self.detokenize(text.split())
        return self.detokenize(norm.split()) == " ".join(model_normalised(decoded).split())

    def _glue(self, entries: Sequence[list], target: Sequence[bool], safe: bool) -> Tuple[str, Optional[str]]:
        """One candidate subword text and what :meth:`detokenize` makes of it (None: not a valid candidate).

        Chunks are joined by spaces where ``target`` has a space; ``safe`` marks every word boundary inside a chunk
        that no symbol marks (so decoding sees the same words as the word form)."""
        symbol_of = self._symbols
        out: List[str] = []
        chunk_starts: List[Tuple[int, int]] = []   # (position in out, entry index) of each chunk's first word
        closed = True    # the last chunk cannot take more words (an escaped word, a standalone symbol)
        prev_tag = None
        for i, (text, _, tag, literal, _) in enumerate(entries):
            if closed or literal or not target[i]:
                if i:
                    out.append(" ")
                chunk_starts.append((len(out), i))
                out.append("")   # room for a spacing mark
            elif prev_tag is None and (safe or tag is not None):
                out.append(GLUE)   # the base (or, when safe, any word) starts here, glued
            out.append(ESCAPE + text if literal else text)
            closed = literal
            prev_tag = tag
            if tag is not None:
                symbol = symbol_of.get("[" + tag + "]")
                if symbol is None:
                    return "", None
                out.append(" " + symbol if literal else symbol)
        # what the decoder will read; a mark at a chunk's start changes only that word's mark, so the decoded
        # text of the final candidate follows from these entries
        cand = self.parse("".join(out).split())
        firsts = [j for j, e in enumerate(cand) if e[4]]
        if len(firsts) != len(chunk_starts):
            return "", None
        words = self.inflect_entries(cand)
        default = default_attached(words) if self.pretokenizer != "whitespace" else [False] * len(words)
        # spacing marks where the decoder's default rule (on the words it will see) disagrees with the target
        for (pos, i), j in zip(chunk_starts[1:], firsts[1:]):
            if default[j] != target[i]:
                out[pos] = cand[j][1] = GLUE if target[i] else SPACE_BEFORE_MARK
        return "".join(out), self._join(words, self.attachment(words, [e[1] for e in cand]))


# ---- preprocess.encode hooks ----------------------------------------------------------------------------------
class BiteLineEncoder:
    """BITE, then optionally a SentencePiece model (BITE+D in one pass).

    With a subword model, the model segments :meth:`BiteTokenizer.subword_text` (symbols glued to their base, the
    sentence's own spacing), so each symbol is one piece with no ``▁`` of its own.  Without one, the output is
    BITE's word form, or with ``training_text`` the text such a model is trained on (:func:`training_text`).

    ``bite_input=True``: the lines are BITE output (word form) already (e.g. the training text BITE-encoded once
    to train the subword model); only the subword step is applied, and no tagger is loaded.

    ``exact``: :attr:`BiteOptions.bite_exact` (a word is split only where decoding gives it back).
    """

    def __init__(self, pretokenizer: str, tagger: str, single_char: bool, subword_model: Optional[str] = None,
                 bite_input: bool = False, training_text: bool = False, exact: bool = BiteOptions.bite_exact):
        self.bite = BiteTokenizer(pretokenizer=pretokenizer, tagger=None if bite_input else tagger,
                                  single_char=single_char, exact=exact)
        self.bite_input = bool(bite_input)
        self.sp = None
        self.training_text = bool(training_text) and not subword_model
        if subword_model:
            from preprocess.spm import load_model
            self.sp = load_model(subword_model)

    @classmethod
    def from_options(cls, options, subword_model: Optional[str] = None, training_text: bool = False,
                     bite_input: bool = False) -> "BiteLineEncoder":
        """The encoder of :class:`BiteOptions` (or what :func:`~preprocess.options.options_from` converts)."""
        options = options_from(BiteOptions, options)
        return cls(options.bite_pretokenizer, options.bite_tagger, options.bite_single_char, subword_model,
                   bite_input=bite_input, training_text=training_text, exact=options.bite_exact)

    def counters(self) -> dict:
        """Fallbacks so far (preprocess.encode prints them as ``note:`` lines)."""
        return {"sentences the tagger failed on (all words kept as they are)":
                getattr(self.bite.tagger, "failed_sentences", 0)}

    def encode_lines(self, lines: List[str]) -> List[str]:
        if self.bite_input:
            return self.subword_lines(lines)
        if self.sp is None and not self.training_text:
            return self.bite.encode_lines(lines)
        from preprocess.common import flatten_line
        return self._subword_step([self.bite.subword_text(t)
                                   for t in self.bite.tokenize_batch([flatten_line(l) for l in lines])])

    def subword_lines(self, bite_lines: List[str]) -> List[str]:
        """The subword step alone, on BITE output (word form)."""
        if self.sp is None and not self.training_text:
            return list(bite_lines)
        return self._subword_step([self.bite.subword_text(l.split()) for l in bite_lines])

    def _subword_step(self, texts: List[str]) -> List[str]:
        if self.sp is None:
            return [training_text(t) for t in texts]
        return [" ".join(p) if t else "" for t, p in zip(texts, self.sp.encode(texts, out_type=str))]


def training_text(subword_text: str) -> str:
    """The training text of a BITE+D subword model: the subword text without its symbols (``The dog bark.``).

    The symbols are user-defined pieces of the model, so encoding always cuts them out whole; but trained with the
    symbols glued into its text, SentencePiece makes the lone ``▁`` piece far more probable, and the model splits
    words as ``▁ into`` (Multi30k, 10,000 lines, unigram 2,000: 3,447 lone ``▁`` on that text when trained with
    the symbols, 1,844 without)."""
    return " ".join(_SYMBOL_RE.sub("", subword_text).split())


def train_subword_model(bite_text_files: Sequence[str], model_prefix: str, other_inputs: Sequence[str] = (),
                        pretokenizer: str = BiteOptions.bite_pretokenizer,
                        single_char: bool = BiteOptions.bite_single_char, **spm_options) -> str:
    """Train the SentencePiece model of BITE+D on the :func:`training_text` of BITE's word-form output
    (``preprocess.encode --scheme bite`` files, ``.gz`` allowed) plus ``other_inputs`` (e.g. the raw other
    language of a joint model), with the symbols and marks as user-defined symbols.

    ``spm_options`` go to :func:`preprocess.spm.train` (``model_type``, ``variant``, ``vocab_size``, ``seed``...).
    Use the same ``pretokenizer`` and ``single_char`` as for the BITE output.  Returns the path of ``P.model``."""
    import os
    import shutil
    import tempfile

    from preprocess import spm
    from preprocess.common import read_lines, require_file

    for path in bite_text_files:
        require_file(path, "BITE text")
    bite = BiteTokenizer(pretokenizer=pretokenizer, tagger=None, single_char=single_char)
    spm_options.setdefault("extra_symbols", list(USER_SYMBOLS_SINGLE if single_char else USER_SYMBOLS))
    workdir = tempfile.mkdtemp(prefix="bite-subword-")
    try:
        texts = []
        for k, path in enumerate(bite_text_files):
            texts.append(os.path.join(workdir, f"text{k}.txt"))
            with open(texts[-1], "w", encoding="utf-8") as out:
                for line in read_lines(path):
                    out.write(training_text(bite.subword_text(line.split())) + "\n")
        return spm.train(texts + list(other_inputs), model_prefix, **spm_options)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def add_encoder_args(parser) -> None:
    add_arguments(parser, BiteOptions)
    parser.add_argument("--bite-subword-model", "--subword-model", dest="subword_model", default=None,
                        help="SentencePiece model applied after BITE (BITE+D): trained on the --training-text "
                             "output with --user-symbols bite (preprocess.bite.train_subword_model does both)")
    parser.add_argument("--bite-training-text", "--training-text", dest="training_text", action="store_true",
                        help="without --subword-model: write the text a BITE+D subword model is trained on (base "
                             "forms with the sentence's own spacing, no symbols: 'The dogs barked.' -> "
                             "'The dog bark.')")


def make_encoder(args) -> BiteLineEncoder:
    """The encoder of ``args`` (:class:`BiteOptions` plus ``subword_model``/``training_text``, an argparse
    namespace, or the adapter's config; the options converted once by :func:`~preprocess.options.options_from`)."""
    from preprocess.common import UserError, require_file
    subword = getattr(args, "subword_model", None)
    if subword:
        require_file(subword, "SentencePiece model (--subword-model)")
    try:
        return BiteLineEncoder.from_options(options_from(BiteOptions, args), subword,
                                            training_text=bool(getattr(args, "training_text", False)))
    except TaggerUnavailable as e:
        raise UserError(str(e)) from None
    except ValueError as e:
        raise UserError(str(e)) from None


from preprocess.registry import SchemeDescriptor  # noqa: E402  (the scheme's one declaration, docs/adding-a-scheme.md)

SCHEME = SchemeDescriptor(
    name="bite",
    options=BiteOptions,
    make_encoder=make_encoder,
    add_arguments=add_encoder_args,
    files=("subword_model",),
    fairseq_tokenizer="bite",
    adapter="fairseq_plugins.bite",
    hf_export="preprocess.hf_tokenizers:MorphtokBiteTokenizer",
    recipe="train_scripts.schemes.bite:BiteScheme",
)


def check_subword_model(path: str, single_char: bool = False) -> None:
    """Raise a :class:`~preprocess.common.UserError` when the SentencePiece model at ``path`` does not keep the
    inflection symbols as pieces: BITE output would become ``<unk>`` (or loose characters) without a warning."""
    from preprocess.common import UserError
    from preprocess.spm import load_model

    sp = load_model(path)
    symbols = SINGLE_CHAR_SYMBOLS if single_char else INFLECTION_SYMBOLS
    missing = [s for s in symbols if sp.piece_to_id(s) == sp.unk_id()]
    if missing:
        shorthand = "bite-single" if single_char else "bite"
        raise UserError(
            f"the subword model {path} has no piece for the BITE inflection symbols {' '.join(missing[:4])}"
            f"{' ...' if len(missing) > 4 else ''}, so they would become <unk>: train it on BITE output with "
            f"`python -m preprocess.spm train --user-symbols {shorthand} ...`"
            f"{'' if single_char else ' (or use --bite-single-char with a model trained with bite-single)'}")


# ---- command line ----------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    """``python -m preprocess.bite encode ...`` (= ``python -m preprocess.encode --scheme bite ...``) and
    ``python -m preprocess.bite decode`` (BITE tokens back to text, e.g. to read a model's output)."""
    import sys

    from preprocess.common import atomic_output, check_distinct, check_output_path, read_lines, require_input

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m preprocess.bite", description=__doc__.split("\n\n")[0],
        epilog="encode: every option of `python -m preprocess.encode --scheme bite` (see "
               "`python -m preprocess.bite encode --help`)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("encode", add_help=False, help="text -> BITE tokens (python -m preprocess.encode --scheme bite)")
    d = sub.add_parser("decode", help="BITE tokens -> text: re-inflect every base and restore the spacing",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    d.add_argument("--input", default="-", help="BITE tokens, one sentence per line (.gz allowed); - for stdin")
    d.add_argument("--output", default="-", help="decoded text; - for stdout")
    d.add_argument("--bite-pretokenizer", "--pretokenizer", dest="pretokenizer", choices=PRETOKENIZERS,
                   default=BiteOptions.bite_pretokenizer,
                   help="the pretokenizer used to encode (whitespace: words joined by single spaces)")
    d.add_argument("--errors", choices=["strict", "replace"], default="strict",
                   help="invalid UTF-8: stop with an error naming file and line, or replace with U+FFFD")
    if argv[:1] == ["encode"]:
        from preprocess.encode import main as encode_main
        return encode_main(["--scheme", "bite", *argv[1:]])
    args = parser.parse_args(argv)
    require_input(args.input, "input file")
    check_output_path(args.output)
    check_distinct([(args.output, "--output")], [(args.input, "--input")])
    # decoding needs no tagger; HanTa's model ships with HanTa (no NLTK data needed)
    bite = BiteTokenizer(pretokenizer=args.pretokenizer, tagger="hanta")
    with atomic_output(args.output) as out:
        for line in read_lines(args.input, errors=args.errors):
            out.write(bite.detokenize(line.split()) + "\n")
    return 0


def cli() -> None:
    """Console-script entry point (see setup.py)."""
    import sys

    from preprocess.common import run_main
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
