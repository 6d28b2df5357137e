"""BITE's algorithm: :class:`BiteOptions` (the scheme's options, declared once) and :class:`BiteTokenizer` (encode,
decode, the subword text), over :mod:`preprocess.schemes.bite.text`; see :mod:`preprocess.schemes.bite` for the algorithm's
description and the scheme around it."""
from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from preprocess.options import option
from preprocess.schemes.bite.text import (
    BE_TAGS,
    CHUNK_SPLIT_RE,
    DEFAULT_TAGGER,
    ESCAPE,
    GLUE,
    HAVE_INFLECTIONS,
    INFLECTION_SYMBOLS,
    LEMMA_TAGS,
    MOSES_DELETED_RE,
    PLAIN_CHARS,
    PLAIN_SENTENCE,
    PRETOKENIZERS,
    PUNCTUATION,
    SINGLE_CHAR_SYMBOLS,
    SPACE_BEFORE_MARK,
    TAG_OF_SYMBOL,
    TAGGERS,
    align_tokens,
    be_form,
    bert_pretokenize,
    chunk_structure,
    default_attached,
    get_lemma,
    is_one_chunk,
    is_plain_sentence,
    literal_tokens,
    load_lemminflect,
    match_case,
    model_normalised,
    needs_escape,
    spacing_category,
)
from preprocess.tagging import get_tagger, universal


@dataclass
class BiteOptions:
    """BITE's options, declared once: ``preprocess.encode --scheme bite``, the ``--tokenizer bite`` adapter
    (``fairseq_plugins/bite.py``), the ``morphtok-binarize --scheme bite`` options and the decode arguments a recipe
    records derive from these fields (see :mod:`preprocess.options`)."""

    bite_tagger: str = option(DEFAULT_TAGGER, "POS tagger: nltk (averaged perceptron, needs NLTK_DATA) or hanta (no NLTK "
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
            load_lemminflect()
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
        #: words whose decoded form depends on the sentence (*be* as VBP/VBD, see :func:`be_form`) are checked in
        #: their sentence (:meth:`_exact_in_context`), on the word texts listed in ``_in_context``
        self.exact = bool(exact)
        self._in_context: set = set()
        self._plural_ends = tuple(" " + self._symbols[s] for s in ("[NNS]", "[NNPS]"))
        self._inflect_cache: Dict[Tuple[str, str], str] = {}
        self._cache_size = 1_000_000

    @classmethod
    def from_options(cls, options, **overrides) -> "BiteTokenizer":
        """The tokenizer of :class:`BiteOptions` (or what :func:`~preprocess.options.options_from` converts: a
        namespace, a dict); ``overrides``: fields replaced."""
        from preprocess.options import options_from

        o = options_from(BiteOptions, options, **overrides)
        return cls(o.bite_pretokenizer, o.bite_tagger, o.bite_single_char, o.bite_exact)

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
        if is_plain_sentence(text):
            return self._moses_plain(text)
        # escape=False: no XML entities (&amp; ...), characters stay as in the input
        return [t for t in self._moses_tok.tokenize(text, escape=False) if t], False

    def _split_lines(self, texts: Sequence[str]) -> List[Tuple[List[str], bool]]:
        """:meth:`_split` of each text (the plain-sentence test inline: most lines take the fast path)."""
        if self.pretokenizer != "moses":
            return list(map(self._split, texts))
        chars, sentence, plain, split = PLAIN_CHARS.fullmatch, PLAIN_SENTENCE.fullmatch, self._moses_plain, self._split
        return [plain(t) if t and chars(t) is not None and (("'" not in t and "-" not in t) or sentence(t) is not None)
                else split(t) for t in texts]

    def _moses_plain(self, text: str) -> Tuple[List[str], bool]:
        """sacremoses' tokenisation of a sentence that matches ``PLAIN_SENTENCE``, and whether the default rule
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
        return words, not apostrophe or all(spacing_category(w) == 1 for w in words if w[0] == "'")

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
            lemma = get_lemma(word, universal(ptb))
            if not needs_escape(lemma) and is_one_chunk(lemma) and (not self.exact or self._reinflects(word, lemma, ptb)):
                tokens = (lemma, symbol)
        out = " ".join(tokens or literal_tokens(word))
        if self.exact and tokens is not None and ptb in BE_TAGS and lemma.lower() == "be":
            self._in_context.add(out)
        if len(self._word_cache) < self._cache_size:
            self._word_cache[key] = out
        return out

    def _word_texts(self, words: Sequence[str], tags: Sequence[str]) -> List[str]:
        """:meth:`_word_text` of each (word, tag), from the cache; each pair the cache lacks is computed once, however
        often it occurs (the first chunk of a corpus lacks nearly every pair, and most occur many times)."""
        texts = list(map(self._word_cache.get, zip(words, tags)))   # (zip's tuples are not kept: no list of them)
        if None in texts:
            enc = self._word_text
            new = {k: enc(*k) for k in dict.fromkeys((w, t) for x, w, t in zip(texts, words, tags) if x is None)}
            texts = [x if x is not None else new[w, t] for x, w, t in zip(texts, words, tags)]
        return texts

    def _reinflects(self, word: str, lemma: str, ptb: str) -> bool:
        """Exact mode: whether decoding ``lemma`` + the symbol of ``ptb`` gives ``word`` back, as BITE alone decodes
        it and as it decodes after a subword model's normaliser (:func:`model_normalised`).  *be* as VBP or VBD
        depends on the sentence: here only printable ASCII passes, :meth:`_exact_in_context` decides."""
        plain = word.isascii() and word.isprintable() and lemma.isascii() and lemma.isprintable()
        if ptb in BE_TAGS and lemma.lower() == "be":
            return plain
        if self.inflect(lemma, ptb) != word:
            return False
        if plain:
            return True
        norm_lemma = model_normalised(lemma)
        if ptb in BE_TAGS and norm_lemma.lower() == "be":
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
        decoder's choice by subject (:func:`be_form`: the word before, a plural noun among the three before)
        gives it back.  The decoder sees the same three words before it, raw or normalised, only where they are
        printable ASCII (one word each, which a subword model's normaliser leaves alone); elsewhere the *be* is
        kept.  (Keeping a *be* changes no context: the decoded words are the input's words either way.)"""
        lo = max(start, i - 3)
        before = words[lo:i]
        if all(w.isascii() and w.isprintable() for w in before):
            plural = [t.endswith(self._plural_ends) for t in texts[lo:i]]
            if match_case(be_form(tags[i], before, plural), texts[i].split(" ", 1)[0]) == words[i]:
                return
        texts[i] = " ".join(literal_tokens(words[i]))

    def bite_words(self, words: Sequence[str], tags: Sequence[str]) -> List[str]:
        """Algorithm 1 on pretokenised, tagged words (escaping included, no spacing marks)."""
        return self._bite_text(words, tags).split(" ") if words else []

    def _bite_text(self, words: Sequence[str], tags: Sequence[str]) -> str:
        """:meth:`bite_words` joined by single spaces."""
        texts = self._word_texts(words, tags)
        if self.exact and self._in_context:
            self._exact_in_context(words, tags, texts)
        return " ".join(texts)

    def _tokenize_words(self, text: str, words: List[str], tags: Sequence[str], default_spacing: bool) -> List[str]:
        if default_spacing:   # (see _split)
            return self.bite_words(words, tags)
        orig = align_tokens(words, text)
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
        if self.pretokenizer == "moses" and MOSES_DELETED_RE.search(sentence):
            sentence = MOSES_DELETED_RE.sub(" ", sentence)
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
        pieces = self._word_texts(words, tags)
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
            if tok.isascii() and "[" not in tok or not CHUNK_SPLIT_RE.search(tok):
                if tok:
                    entries.append([tok, mark, None, False, True])
                    open_base = True
                continue
            first = True
            for i, part in enumerate(CHUNK_SPLIT_RE.split(tok)):
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
                    text = match_case(be_form(tag, words, plural), text)
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
        if chunk_structure(norm) != chunk_structure(text):
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
