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
re-implementation of the pseudocode; it lives in :mod:`preprocess.schemes.flota.search`, which the install compiles with
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

The vocabulary files FLOTA reads (and the ``dict.txt`` that ``python -m preprocess.schemes.flota dict`` writes) are
:mod:`preprocess.models.vocabularies`' business; the whitespace noise of ``--noise-p`` is
:func:`preprocess.whitespace_noise.inject_whitespace_noise`.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Union

from preprocess.common import UserError, flatten_line
from preprocess.models.spm_model import SPACE_SYMBOL, load_model
from preprocess.models.vocabularies import (
    from_byte_level,
    gpt2_id_map,
    is_gpt2_id_dict,
    is_uncased,
    load_vocab,
    strip_accents,
    to_byte_level,
    wordpiece_segment,
    write_fairseq_dict,
)
from preprocess.options import add_arguments, option, options_from
from preprocess.schemes.flota.search import FlotaSearch, search_class
from preprocess.whitespace_noise import NoiseOptions, inject_whitespace_noise, line_rng

#: pretokenisation of the released code: runs of word characters, or any single other non-space character
PRETOKENIZE = re.compile(r"[\w]+|[^\s\w]")

#: style -> (marker, marker marks word starts?, default max_len of the released code)
STYLES = {
    "wordpiece": ("##", False, 18),
    "gpt2": ("\u0120", True, 19),
    "sentencepiece": (SPACE_SYMBOL, True, 16),
}
MODES = ("flota", "first", "longest")


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


# --- FLOTA ----------------------------------------------------------------------------------------------------

# the search methods come from preprocess.schemes.flota._search (compiled) where it is built, else preprocess.schemes.flota.search
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

    def __init__(self, vocab, style: str = FlotaOptions.flota_style, k: int = FlotaOptions.flota_k,
                 mode: str = FlotaOptions.flota_mode,
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

    # -- FLOTA search tables (the search itself: preprocess/schemes/flota/search.py) ------------------------------------
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


#: FlotaTokenizer with its search run as plain Python also where preprocess.schemes.flota._search is compiled, for the
#: tests and the benchmark that compare the two (FlotaTokenizer itself where nothing is compiled)
PythonSearchFlotaTokenizer = FlotaTokenizer if FlotaTokenizer.__bases__ == (FlotaSearch,) else \
    type("PythonSearchFlotaTokenizer", (FlotaSearch, FlotaTokenizer), {})


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


# --- official fairseq checkpoints: FLOTA over a dict.txt of GPT-2 ids -----------------------------------------

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
    """:class:`Gpt2IdFlota` from :class:`FlotaOptions` (or what :func:`~preprocess.options.options_from` converts:
    an argparse namespace, the fairseq adapter's config)."""
    options = options_from(FlotaOptions, options)
    if not options.flota_gpt2_encoder:
        raise UserError(f"{options.flota_vocab} holds GPT-2 ids (an official fairseq checkpoint's dict.txt): give "
                        "--flota-gpt2-encoder encoder.json to map FLOTA's pieces to them")
    return Gpt2IdFlota(options.flota_vocab, options.flota_gpt2_encoder, k=options.flota_k, mode=options.flota_mode,
                       strict=bool(options.flota_strict), max_len=options.flota_max_len,
                       unk_token=options.flota_unk or None, byte_level=bool(options.flota_byte_level))


def tokenizer_from_options(options) -> Union[FlotaTokenizer, Gpt2IdFlota]:
    """The tokenizer that :class:`FlotaOptions` describe (or what :func:`~preprocess.options.options_from`
    converts: an argparse namespace, the fairseq adapter's config): :class:`Gpt2IdFlota` for an official
    checkpoint's dict.txt of GPT-2 ids, else :class:`FlotaTokenizer`.  The vocabulary file is read once for both
    the check and the tokenizer."""
    options = options_from(FlotaOptions, options)
    vocab = load_vocab(options.flota_vocab)
    if options.flota_gpt2_encoder or is_gpt2_id_dict(vocab):
        return gpt2_id_tokenizer(options)
    return FlotaTokenizer(vocab, options.flota_style, k=options.flota_k, mode=options.flota_mode,
                          strict=bool(options.flota_strict), max_len=options.flota_max_len,
                          unk_token=options.flota_unk or None, byte_level=bool(options.flota_byte_level),
                          lowercase={"keep": False, "lower": True}.get(options.flota_case))


# --- preprocess.encode hooks ----------------------------------------------------------------------------------

class FlotaEncoder:
    """``LineEncoder`` for ``preprocess.encode --scheme flota``."""

    def __init__(self, tokenizer: FlotaTokenizer, noise_p: float = NoiseOptions.noise_p,
                 noise_seed: int = NoiseOptions.noise_seed):
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


def add_encoder_args(parser) -> None:
    add_arguments(parser, FlotaOptions, required=("flota_vocab",))
    add_arguments(parser, NoiseOptions)


def make_encoder(args, noise: Optional[NoiseOptions] = None) -> FlotaEncoder:
    """The encoder of ``args`` (:class:`FlotaOptions`, an argparse namespace or the adapter's config, converted
    once by :func:`~preprocess.options.options_from`); the whitespace noise is ``noise`` (:class:`NoiseOptions`),
    else the ``--noise-p``/``--noise-seed`` that ``args`` holds (none: no noise)."""
    noise = options_from(NoiseOptions, args if noise is None else noise)
    if not 0.0 <= noise.noise_p <= 1.0:
        raise UserError(f"--noise-p must be between 0 and 1, not {noise.noise_p}")
    return FlotaEncoder(tokenizer_from_options(args), noise.noise_p, noise.noise_seed)


from preprocess.registry import SchemeDescriptor  # noqa: E402  (the scheme's one declaration, docs/adding-a-scheme.md)

#: this scheme's command-line tools, installed by setup.py (preprocess/scheme_scripts.py reads the literal)
CONSOLE_SCRIPTS = {"morphtok-flota": "preprocess.schemes.flota", "morphtok-metrics-flota": "preprocess.evaluate.flota"}

SCHEME = SchemeDescriptor(
    name="flota",
    options=FlotaOptions,
    make_encoder=make_encoder,
    add_arguments=add_encoder_args,
    files=("flota_vocab", "flota_gpt2_encoder"),
    fairseq_bpe="flota",
    adapter="fairseq_plugins.flota",
    hf_export="preprocess.hf.flota:MorphtokFlotaTokenizer",
    recipe="train_scripts.schemes.flota:FlotaScheme",
)


# --- command line: the fairseq dictionary of an inventory --------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m preprocess.schemes.flota",
        description="Write the fairseq dict.txt of a vocabulary (for fairseq-preprocess --srcdict), so that "
                    "every FLOTA piece is in the dictionary.")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dict", help="write a fairseq dict.txt from a vocabulary")
    d.add_argument("--vocab", required=True, help="any vocabulary format that --flota-vocab accepts")
    d.add_argument("--output", required=True, help="dict.txt to write")
    args = parser.parse_args(argv)
    from preprocess.files.outputs import check_distinct, check_output_path
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

    from preprocess.cli import run_main
    sys.exit(run_main(main))
