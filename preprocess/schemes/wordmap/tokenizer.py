"""Wordmap's sentence tokeniser: :class:`WordmapTokenizer` (HanTa tags the sentence, verbs are segmented by Wordmap,
every other word by a base SentencePiece model), its inverse :func:`decode_line`, the pieces a verb may be written
with (:func:`read_inventory`, :func:`segmenter_pieces`) and the training of the base SentencePiece model."""
from __future__ import annotations

import bisect
import functools
from typing import Iterable

from preprocess.common import flatten_line
from preprocess.files.inputs import UTF8_HINT, read_lines, require_file
from preprocess.models.spm_model import SPACE_SYMBOL
from preprocess.models.spm_model import load_model as load_spm
from preprocess.schemes.wordmap.segmentation import segment
from preprocess.schemes.wordmap.tagging import VerbTags, load_tagger, tag_token_list, tag_tokens, tag_tokens_by_word
from preprocess.schemes.wordmap.vocabulary import WordmapVocabulary

#: words whose base-model pieces a WordmapTokenizer remembers (an LRU cache: bounded memory on any corpus)
SPM_CACHE_SIZE = 1 << 17


def decode_line(line: str) -> str:
    """Inverse of :meth:`WordmapTokenizer.encode_line` (and of SentencePiece pieces): join, ``▁`` -> space."""
    return "".join(line.split()).replace(SPACE_SYMBOL, " ").strip()


class WordmapTokenizer:
    """HanTa-tagged sentences -> pieces: verbs by Wordmap, all other words by a base SentencePiece model."""

    def __init__(self, vocabulary: WordmapVocabulary | str, spm_model, tagger=None, inventory=None):
        """``inventory``: the pieces a verb may be written with (a set, or a fairseq ``dict.txt`` path; the
        recipe gives its dictionary): a verb whose Wordmap pieces are not all in it is kept whole if that is in
        it, and otherwise segmented by the base SentencePiece model, whose pieces the dictionary holds.  None
        (the default): Wordmap's pieces, or the whole verb where it has no segmentation, whatever they are."""
        if isinstance(inventory, str):
            inventory = read_inventory(inventory)
        self.inventory = frozenset(inventory) if inventory is not None else None
        if isinstance(vocabulary, str):
            vocabulary = WordmapVocabulary.load(vocabulary)
        self.vocabulary = vocabulary
        if isinstance(spm_model, str):
            spm_model = load_spm(spm_model)
        self.sp = spm_model
        self.tagger = tagger or load_tagger()
        self.character_fallbacks = 0
        self.inventory_fallbacks = 0
        self.untagged_words = 0
        # the base model's pieces of one word, remembered (bounded): a word is encoded the same way every time
        self._spm_cached = functools.lru_cache(maxsize=SPM_CACHE_SIZE)(self._spm_uncached)
        self._verb_tags = VerbTags()
        self._verb_pieces: dict[str, tuple] = {}   # see _whole_verb

    def counters(self) -> dict[str, int]:
        """Fallbacks so far (preprocess.encode prints them as ``note:`` lines)."""
        return {"Wordmap words split into characters (the SentencePiece pieces did not spell them, "
                "e.g. a normalising model)": self.character_fallbacks,
                "verbs written with the base model's pieces (neither their Wordmap pieces nor the whole verb are "
                "in --wordmap-dict)": self.inventory_fallbacks,
                "words HanTa could not tag (treated as non-verbs, as HanTa's own tag_sent fails on their window)":
                self.untagged_words}

    def _count_untagged(self, n: int) -> None:
        self.untagged_words += n

    def _spm(self, text: str, word_start: bool) -> list[str]:
        pieces, fell_back = self._spm_cached(text, word_start)
        if fell_back:
            self.character_fallbacks += 1
        return list(pieces)

    def _spm_uncached(self, text: str, word_start: bool) -> tuple[tuple[str, ...], bool]:
        """(pieces, whether they are the character fallback) of ``text`` by the base SentencePiece model."""
        fell_back = False
        try:
            pieces = [p for p in self.sp.encode(text, out_type=str) if p]
        except (RuntimeError, TypeError, ValueError):  # SentencePiece's failures: the character fallback, counted
            pieces = []
        if "".join(pieces).replace(SPACE_SYMBOL, "") != text:  # a normalising model: fall back to characters
            fell_back = True
            pieces = [SPACE_SYMBOL + text[0]] + list(text[1:]) if text else []
        if not word_start and pieces:
            first = pieces[0][1:] if pieces[0].startswith(SPACE_SYMBOL) else pieces[0]
            pieces = ([first] if first else []) + pieces[1:]
        elif word_start and pieces and not pieces[0].startswith(SPACE_SYMBOL):
            pieces[0] = SPACE_SYMBOL + pieces[0]
        return tuple(pieces), fell_back

    def verb_spans(self, line: str) -> list[tuple[int, int]]:
        return self._verb_spans(line, tag_token_list(line.split()))

    def _verbs(self, tokens: list[str]) -> list[int]:
        """The indices of the verbs among ``tokens`` (HanTa's tags; a verb is a letter string of two or more)."""
        if not tokens:
            return []
        tags = tag_tokens(tokens, self.tagger, on_untagged=self._count_untagged)
        verb_tags = self._verb_tags
        return [k for k, tag in enumerate(tags) if verb_tags[tag] and tokens[k].isalpha() and len(tokens[k]) > 1]

    def _verb_spans(self, line: str, tokens: list[str]) -> list[tuple[int, int]]:
        """(start, end) in ``line`` of the verbs among ``tokens``, the HanTa tokens of ``line`` in order
        (``_TAG_TOKEN_RE.findall(line)``: every character that is not white space is in exactly one of them, so the
        k-th token starts at its first occurrence after the end of token k - 1)."""
        spans, pos, k = [], 0, 0
        for v in self._verbs(tokens):
            while k < v:
                pos = line.find(tokens[k], pos) + len(tokens[k])
                k += 1
            start = line.find(tokens[v], pos)
            spans.append((start, start + len(tokens[v])))
        return spans

    def encode_line(self, line: str) -> str:
        return " ".join(self.encode_pieces(line))

    def encode_pieces(self, line: str) -> list[str]:
        line = flatten_line(line)
        words = line.split()   # the same white space as the \S+ of the tokens and of the pieces below
        if not words:
            return []
        tokens, starts = tag_tokens_by_word(words)
        verbs = self._verbs(tokens)
        out: list[str] = []
        spm = self._spm_cached
        done = 0   # words[:done] are encoded
        vi, nv = 0, len(verbs)
        while vi < nv:
            first = verbs[vi]
            wi = bisect.bisect_right(starts, first) - 1   # the word holding the verb (every word has a token)
            end = starts[wi + 1]
            j = vi + 1
            while j < nv and verbs[j] < end:   # the other verbs of that word
                j += 1
            for w in words[done:wi]:
                pieces, fell_back = spm(w, True)
                if fell_back:
                    self.character_fallbacks += 1
                out += pieces
            word = words[wi]
            if end - starts[wi] == 1:   # the word is the verb
                out += self._whole_verb(word)
            else:   # the verbs' places in the word: its tokens spell it
                spans, pos, k = [], 0, starts[wi]
                for v in verbs[vi:j]:
                    pos += sum(map(len, tokens[k:v]))
                    spans.append((pos, pos + len(tokens[v])))
                    pos, k = spans[-1][1], v + 1
                self._encode_word(word, 0, len(word), spans, out)
            done = wi + 1
            vi = j
        for w in words[done:]:
            pieces, fell_back = spm(w, True)
            if fell_back:
                self.character_fallbacks += 1
            out += pieces
        return out

    def _whole_verb(self, word: str) -> tuple[str, ...]:
        """:meth:`_encode_word`'s pieces of a word that is one verb, remembered (bounded) with the fallbacks it
        counts, which are counted again each time the word comes back."""
        entry = self._verb_pieces.get(word)
        if entry is None:
            inventory, characters = self.inventory_fallbacks, self.character_fallbacks
            out: list[str] = []
            self._encode_word(word, 0, len(word), [(0, len(word))], out)
            entry = (tuple(out), self.inventory_fallbacks - inventory, self.character_fallbacks - characters)
            if len(self._verb_pieces) < SPM_CACHE_SIZE:
                self._verb_pieces[word] = entry
            return entry[0]
        pieces, inventory, characters = entry
        if inventory or characters:
            self.inventory_fallbacks += inventory
            self.character_fallbacks += characters
        return pieces

    def _encode_word(self, line: str, a: int, b: int, inside: list[tuple[int, int]], out: list[str]) -> None:
        """The pieces of the word ``line[a:b]`` holding the verbs ``inside``: each verb by Wordmap, the rest of the
        word by the base model."""
        cursor, first = a, True
        for vs, ve in inside:
            if vs > cursor:
                out.extend(self._spm(line[cursor:vs], first))
                first = False
            segs = segment(line[vs:ve], self.vocabulary)
            segs[0] = (SPACE_SYMBOL if first else "") + segs[0]
            inv = self.inventory
            if inv is not None and not all(p in inv for p in segs):
                whole = (SPACE_SYMBOL if first else "") + line[vs:ve]
                if whole in inv:
                    segs = [whole]
                else:
                    self.inventory_fallbacks += 1
                    segs = self._spm(line[vs:ve], first)
            out.extend(segs)
            first = False
            cursor = ve
        if cursor < b:
            out.extend(self._spm(line[cursor:b], first))

    def encode_lines(self, lines: list[str]) -> list[str]:
        return [self.encode_line(line) for line in lines]

    @staticmethod
    def decode_line(line: str) -> str:
        return decode_line(line)


def read_inventory(path: str) -> set[str]:
    """The tokens of a fairseq ``dict.txt`` (first field of every line)."""
    require_file(path, "Wordmap inventory (fairseq dictionary)")
    return {line.split(" ", 1)[0] for line in read_lines(path, hint=UTF8_HINT) if line}


def segmenter_pieces(vocabulary: WordmapVocabulary) -> list[str]:
    """Pieces the Wordmap segmenter writes for lower-case and capitalised verbs, in a fixed order: every
    vocabulary piece word-initially (``▁x``, ``▁X``) and as a continuation (``x``, ``X``: after a glued
    symbol), and the single letters that may close a segmentation.  The recipe adds them to the dictionary so
    that a verb seen only in valid or test is written with known pieces."""
    letters = "abcdefghijklmnopqrstuvwxyzäöüß"
    out: dict[str, None] = {}
    for p in sorted(vocabulary.pieces):
        cap = p[:1].upper() + p[1:]
        for form in (SPACE_SYMBOL + p, p, SPACE_SYMBOL + cap, cap):
            out.setdefault(form, None)
    for c in letters:
        out.setdefault(c, None)
    return list(out)



def train_spm(lines: Iterable[str], model_prefix: str, vocab_size: int, model_type: str = "unigram",
              max_sentences: int | None = None) -> str:
    """Train the base SentencePiece model on ``lines`` (any iterable: it is streamed, never held in a list);
    returns the .model path.

    ``max_sentences``: SentencePiece's seeded random sample of that many sentences; None: the project's default
    bound (``SpmOptions.input_sentence_size``, 1M sentences), 0: every line.  A text with fewer lines is used
    whole, in order.  Identity normalisation keeps pieces concatenable back to the input (lossless decode).
    """
    from preprocess.models import spm
    if max_sentences is None:
        max_sentences = spm.SpmOptions.input_sentence_size
    return spm.train([], model_prefix, model_type=model_type, vocab_size=vocab_size,
                     input_sentence_size=max_sentences, num_threads=1, sentences=lines,
                     extra_options={"normalization_rule_name": "identity", "hard_vocab_limit": False,
                                    "shuffle_input_sentence": bool(max_sentences)})
