"""BITE's text layer: the inflection symbols and marks, escaping, the pretokenisers, the default spacing rule and
the lemmatiser (lemminflect), below :mod:`preprocess.schemes.bite.tokenizer` (the algorithm) and :mod:`preprocess.schemes.bite`
(the scheme: encoder hooks, subword model, command line), whose docstring describes the whole."""
from __future__ import annotations

import functools
import re
import string
import unicodedata
from typing import Dict, List, Optional, Sequence, Tuple

from preprocess import tagging

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
TAGGERS = tagging.TAGGERS
#: BITE's tagger unless one is asked for (its ``--bite-tagger`` default, the inflection noise's): NLTK's perceptron,
#: the BITE paper's
DEFAULT_TAGGER = tagging.NLTK

TAG_OF_SYMBOL: Dict[str, str] = {}
for _sym, _ch in zip(INFLECTION_SYMBOLS, SINGLE_CHAR_SYMBOLS):
    TAG_OF_SYMBOL[_sym] = TAG_OF_SYMBOL[_ch] = _sym[1:-1]
_ALL_SYMBOLS = tuple(TAG_OF_SYMBOL)
SYMBOL_RE = re.compile("|".join(re.escape(s) for s in sorted(_ALL_SYMBOLS, key=len, reverse=True)))
_NEEDS_ESCAPE_START = (ESCAPE, GLUE, SPACE_BEFORE_MARK)
#: characters that make a token need escaping wherever they stand: the single-character symbols, and the spacing
#: marks (inside a word of the subword text, ``⁀`` and ``␣`` separate words; see ``BiteTokenizer.subword_text``)
_SYMBOL_CHARS = frozenset(SINGLE_CHAR_SYMBOLS + (GLUE, SPACE_BEFORE_MARK))
#: what splits a whitespace-separated chunk into words on decoding: symbols and spacing marks
CHUNK_SPLIT_RE = re.compile("(" + "|".join(re.escape(s) for s in sorted(_ALL_SYMBOLS, key=len, reverse=True))
                             + "|" + GLUE + "|" + SPACE_BEFORE_MARK + ")")

#: The C0 control characters that are not whitespace (U+0000-U+0008, U+000E-U+001B) are deleted by the Moses
#: tokenizer, which would join the words around them ("x\x00y" -> "xy", then inflected as one word).  With the
#: moses pretokenizer they become spaces first: the invisible character is lost, the words stay apart.  Every
#: other character (zero-width, combining, right-to-left marks, C1 controls, U+007F) passes Moses unchanged.
MOSES_DELETED = "".join(chr(c) for c in (*range(0x00, 0x09), *range(0x0E, 0x1C)))
MOSES_DELETED_RE = re.compile("[" + re.escape(MOSES_DELETED) + "]")


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
PLAIN_SENTENCE = re.compile(rf"(?:{_PLAIN_WORD},? )*{_PLAIN_WORD}[.!?]?")
#: the same with any hyphens and apostrophes in the words (a quicker first test; see :func:`is_plain_sentence`)
PLAIN_CHARS = re.compile(r"(?:[A-Za-z0-9'-]+,? )*[A-Za-z0-9'-]+[.!?]?")


def is_plain_sentence(text: str) -> bool:
    """``PLAIN_SENTENCE.fullmatch(text)``, sooner: its look-arounds are needed only where hyphens or apostrophes
    are."""
    if PLAIN_CHARS.fullmatch(text) is None:
        return False
    return ("'" not in text and "-" not in text) or PLAIN_SENTENCE.fullmatch(text) is not None


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
    if "[" in token and SYMBOL_RE.search(token):
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


def chunk_structure(text: str) -> List[str]:
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
            out.extend(CHUNK_SPLIT_RE.findall(tok))
    return out


def is_one_chunk(text: str) -> bool:
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


def align_tokens(tokens: Sequence[str], text: str) -> Optional[List[bool]]:
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


def spacing_category(w: str) -> int:
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
            c = spacing_category(w)
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


def get_lemma(word: str, upos: str) -> str:
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
def load_lemminflect():
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
    lem = load_lemminflect()
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


#: the tags whose *be* the decoder chooses by subject (:func:`be_form`)
BE_TAGS = frozenset({"VBP", "VBD"})
_PLURAL_SUBJECTS = frozenset({"we", "you", "they", "these", "those", "both"})


def be_form(tag: str, before: Sequence[str], plural: Sequence[bool]) -> str:
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
