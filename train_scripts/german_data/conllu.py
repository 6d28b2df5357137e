"""The strict CoNLL-U reader (UD German GSD): sentences, their words, multi-word tokens and empty nodes, and where
each surface token lies in the sentence's text."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from preprocess.common import UserError
from preprocess.files.inputs import UTF8_HINT, read_lines, require_file, without_bom

UPOS = {"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN", "PUNCT",
        "SCONJ", "SYM", "VERB", "X"}

@dataclass
class Word:
    """A syntactic word of a CoNLL-U sentence (an integer ID)."""
    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: dict
    head: str
    deprel: str
    deps: str
    misc: dict
    line: int


@dataclass
class MultiwordToken:
    """A surface token over the words ``first``..``last`` (a range ID ``first-last``), e.g. ``im`` = ``in dem``."""
    first: int
    last: int
    form: str
    misc: dict
    line: int


@dataclass
class EmptyNode:
    """An empty node (a decimal ID ``i.j``, enhanced dependencies): kept, but no word of the text."""
    id: str
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: dict
    line: int


@dataclass
class Sentence:
    sent_id: str
    text: str
    words: list = field(default_factory=list)
    multiword: list = field(default_factory=list)
    empty: list = field(default_factory=list)
    comments: list = field(default_factory=list)
    line: int = 0
    #: True when the file has no ``# text`` for it and ``text`` was rebuilt from the forms and SpaceAfter=No
    text_from_forms: bool = False

    def surface_tokens(self) -> list:
        """``[(form, [word indices into self.words], space_after)]``: the tokens of the text, a multi-word token
        once (its own form and MISC), every other word as itself."""
        ranges = {m.first: m for m in self.multiword}
        out, i = [], 0
        while i < len(self.words):
            word = self.words[i]
            m = ranges.get(word.id)
            if m is not None:
                span = [k for k in range(i, len(self.words)) if self.words[k].id <= m.last]
                out.append((m.form, span, m.misc.get("SpaceAfter") != "No"))
                i = span[-1] + 1
            else:
                out.append((word.form, [i], word.misc.get("SpaceAfter") != "No"))
                i += 1
        return out

    def text_from_tokens(self) -> str:
        return "".join(form + (" " if space else "") for form, _, space in self.surface_tokens()).strip()


def _parse_id(value: str, where: str):
    """``int`` for a word, ``(first, last)`` for a range, ``str`` for an empty node; a malformed ID is an error."""
    if re.fullmatch(r"[1-9][0-9]*", value):
        return int(value)
    m = re.fullmatch(r"([1-9][0-9]*)-([1-9][0-9]*)", value)
    if m:
        first, last = int(m.group(1)), int(m.group(2))
        if last <= first:
            raise UserError(f"{where}: multi-word token range {value} does not span two or more words")
        return first, last
    if re.fullmatch(r"(0|[1-9][0-9]*)\.[1-9][0-9]*", value):
        return value
    raise UserError(f"{where}: malformed ID {value!r} (a word number, a range N-M or an empty node N.M)")


def _parse_pairs(value: str, where: str, column: str, sep: str = "|") -> dict:
    """FEATS (``Name=Value|...``) or MISC as a dict; ``_`` is empty.  A FEATS item without ``=`` is an error (MISC
    items without one are kept with the value ``""``)."""
    if value == "_":
        return {}
    out = {}
    for item in value.split(sep):
        name, eq, val = item.partition("=")
        if column == "FEATS" and (not eq or not name or not val):
            raise UserError(f"{where}: malformed FEATS item {item!r} (expected Name=Value, separated by |)")
        out[name] = val
    return out


class _SentenceBuilder:
    """One sentence being read: checks the ID sequence as the CoNLL-U specification states it (words 1, 2, 3 ...,
    a range before the words it spans, an empty node after the word it follows)."""

    def __init__(self, path: str, line: int):
        self.path, self.line = path, line
        self.comments, self.words, self.multiword, self.empty = [], [], [], []
        self.pending_range = None   # a range whose words have not all come yet

    def add(self, line: str, number: int) -> None:
        where = f"{self.path}:{number}"
        cols = line.split("\t")
        if len(cols) != 10:
            raise UserError(f"{where}: expected 10 tab-separated columns (CoNLL-U), got {len(cols)}")
        ident = _parse_id(cols[0], where)
        expected = len(self.words) + 1
        if isinstance(ident, tuple):
            if ident[0] != expected:
                raise UserError(f"{where}: range {cols[0]} should start at word {expected}")
            self.multiword.append(MultiwordToken(ident[0], ident[1], cols[1], _parse_pairs(cols[9], where, "MISC"),
                                                 number))
            self.pending_range = ident
        elif isinstance(ident, str):
            if int(ident.split(".")[0]) != expected - 1:
                raise UserError(f"{where}: empty node {ident} should follow word {expected - 1}")
            self.empty.append(EmptyNode(ident, cols[1], cols[2], cols[3], cols[4],
                                        _parse_pairs(cols[5], where, "FEATS"), number))
        else:
            if ident != expected:
                raise UserError(f"{where}: word ID {ident} out of sequence (expected {expected})")
            if cols[3] not in UPOS and cols[3] != "_":
                raise UserError(f"{where}: unknown UPOS {cols[3]!r} (a column shifted?)")
            if not cols[1]:
                raise UserError(f"{where}: empty FORM")
            self.words.append(Word(ident, cols[1], cols[2], cols[3], cols[4], _parse_pairs(cols[5], where, "FEATS"),
                                   cols[6], cols[7], cols[8], _parse_pairs(cols[9], where, "MISC"), number))
            if self.pending_range and ident >= self.pending_range[1]:
                self.pending_range = None

    def finish(self, index: int, number: int):
        """The :class:`Sentence`, or None for a block of comments alone (file-level comments)."""
        if not self.words:
            if self.multiword or self.empty:
                raise UserError(f"{self.path}:{number}: sentence without words")
            return None
        if self.pending_range:
            first, last = self.pending_range
            raise UserError(f"{self.path}:{number}: range {first}-{last} spans words the sentence does not have")
        meta = {}
        for c in self.comments:
            key, eq, value = c.lstrip("#").partition("=")
            if eq:
                meta.setdefault(key.strip(), value.strip())
        sentence = Sentence(meta.get("sent_id") or f"s{index + 1}", meta.get("text", ""), self.words,
                            self.multiword, self.empty, self.comments, self.line)
        if "text" not in meta:
            sentence.text, sentence.text_from_forms = sentence.text_from_tokens(), True
        return sentence


def read_conllu(path: str) -> list:
    """The sentences of a CoNLL-U file (:class:`Sentence`: ``sent_id``, ``text`` from ``# text``, its words with
    form, lemma, UPOS, XPOS (STTS in the German treebanks), FEATS and MISC as dicts, its multi-word tokens and empty
    nodes).  Per the CoNLL-U specification: a blank line ends a sentence, ``#`` lines before it are its comments,
    word lines have 10 tab-separated columns and IDs 1, 2, ... with ranges ``N-M`` and empty nodes ``N.M``.  A line
    that breaks this (or invalid UTF-8) is one line naming the file and line."""
    require_file(path, "CoNLL-U file")
    sentences, current, number = [], None, 0
    for number, line in enumerate(without_bom(read_lines(path, hint=UTF8_HINT)), 1):
        if not line.strip():
            if current is not None:
                done = current.finish(len(sentences), number)
                if done is not None:
                    sentences.append(done)
                current = None
            continue
        if current is None:
            current = _SentenceBuilder(path, number)
        if line.startswith("#"):
            if current.words or current.multiword:
                raise UserError(f"{path}:{number}: comment line inside a sentence (a blank line missing before it?)")
            current.comments.append(line)
        else:
            current.add(line, number)
    if current is not None:
        done = current.finish(len(sentences), number)
        if done is not None:
            sentences.append(done)
    if not sentences:
        raise UserError(f"{path}: no sentences")
    return sentences


def word_positions(sentence: Sentence) -> list:
    """For each surface token (:meth:`Sentence.surface_tokens`), the index of the whitespace word of
    ``sentence.text`` (``text.split()``) it lies in, or None when its form is not found in the text in order."""
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", sentence.text)]
    out, pos, w = [], 0, 0
    for form, _, _ in sentence.surface_tokens():
        start = sentence.text.find(form, pos)
        if start < 0 or sentence.text[pos:start].strip():
            out.append(None)
            continue
        while w < len(spans) and spans[w][1] <= start:
            w += 1
        out.append(w if w < len(spans) and spans[w][0] <= start else None)
        pos = start + len(form)
    return out
