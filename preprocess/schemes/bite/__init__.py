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
from typing import List, Optional, Sequence

from preprocess.options import add_arguments, options_from

# the algorithm and its text layer live in preprocess.schemes.bite.tokenizer and preprocess.schemes.bite.text (split from this
# module); the names other modules use stay importable from here
from preprocess.schemes.bite.text import (  # noqa: F401
    ESCAPE,
    GLUE,
    HAVE_INFLECTIONS,
    INFLECTION_SYMBOLS,
    LEMMA_TAGS,
    LEMMINFLECT_MATCHED,
    MOSES_DELETED,
    PRETOKENIZERS,
    PUNCTUATION,
    SINGLE_CHAR_SYMBOLS,
    SPACE_BEFORE_MARK,
    SYMBOL_RE,
    TAG_OF_SYMBOL,
    TAGGERS,
    USER_SYMBOLS,
    USER_SYMBOLS_SINGLE,
    bert_pretokenize,
    default_attached,
    escape,
    get_lemmas,
    literal_tokens,
    match_case,
    model_normalised,
    needs_escape,
)
from preprocess.schemes.bite.tokenizer import BiteOptions, BiteTokenizer
from preprocess.tagging import TaggerUnavailable


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
            from preprocess.models.spm_model import load_model
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
    return " ".join(SYMBOL_RE.sub("", subword_text).split())


def train_subword_model(bite_text_files: Sequence[str], model_prefix: str, other_inputs: Sequence[str] = (),
                        pretokenizer: str = BiteOptions.bite_pretokenizer,
                        single_char: bool = BiteOptions.bite_single_char, **spm_options) -> str:
    """Train the SentencePiece model of BITE+D on the :func:`training_text` of BITE's word-form output
    (``preprocess.encode --scheme bite`` files, ``.gz`` allowed) plus ``other_inputs`` (e.g. the raw other
    language of a joint model), with the symbols and marks as user-defined symbols.

    ``spm_options`` go to :func:`preprocess.models.spm.train` (``model_type``, ``variant``, ``vocab_size``, ``seed``...).
    Use the same ``pretokenizer`` and ``single_char`` as for the BITE output.  Returns the path of ``P.model``."""
    import os
    import shutil
    import tempfile

    from preprocess.files.inputs import UTF8_HINT, read_lines, require_file
    from preprocess.models import spm

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
                for line in read_lines(path, hint=UTF8_HINT):
                    out.write(training_text(bite.subword_text(line.split())) + "\n")
        return spm.train(texts + list(other_inputs), model_prefix, **spm_options)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def add_encoder_args(parser) -> None:
    add_arguments(parser, BiteOptions)
    parser.add_argument("--bite-subword-model", "--subword-model", dest="subword_model", default=None,
                        help="SentencePiece model applied after BITE (BITE+D): trained on the --training-text "
                             "output with --user-symbols bite (preprocess.schemes.bite.train_subword_model does both)")
    parser.add_argument("--bite-training-text", "--training-text", dest="training_text", action="store_true",
                        help="without --subword-model: write the text a BITE+D subword model is trained on (base "
                             "forms with the sentence's own spacing, no symbols: 'The dogs barked.' -> "
                             "'The dog bark.')")


def make_encoder(args) -> BiteLineEncoder:
    """The encoder of ``args`` (:class:`BiteOptions` plus ``subword_model``/``training_text``, an argparse
    namespace, or the adapter's config; the options converted once by :func:`~preprocess.options.options_from`)."""
    from preprocess.common import UserError
    from preprocess.files.inputs import require_file
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


def pretokenizer(config=None):
    """``line -> words`` of BITE's pretokeniser, no tagger loaded: ``config``'s ``bite_pretokenizer`` (a row's
    recorded options, ``binarize.json``'s ``config``), else BITE's default.  The descriptor's ``pretokenizer``: the
    BITE paper's word count of pseudo-perplexity (``train_scripts.pseudo_perplexity``)."""
    name = (config or {}).get("bite_pretokenizer")
    return BiteTokenizer(name or BiteOptions.bite_pretokenizer, tagger=None).pretokenize


# the scheme's one declaration (docs/adding-a-scheme.md); INFLECTION: the noise whose case rule is BITE's
from preprocess.registry import INFLECTION, SchemeDescriptor  # noqa: E402

#: this scheme's command-line tools, installed by setup.py (preprocess/scheme_scripts.py reads the literal)
CONSOLE_SCRIPTS = {"morphtok-bite": "preprocess.schemes.bite", "morphtok-metrics-bite": "preprocess.evaluate.bite"}

SCHEME = SchemeDescriptor(
    name="bite",
    options=BiteOptions,
    make_encoder=make_encoder,
    add_arguments=add_encoder_args,
    files=("subword_model",),
    fairseq_tokenizer="bite",
    adapter="fairseq_plugins.bite",
    hf_export="preprocess.hf.bite:MorphtokBiteTokenizer",
    recipe="train_scripts.schemes.bite:BiteScheme",
    user_symbols={"bite": USER_SYMBOLS, "bite-single": USER_SYMBOLS_SINGLE},   # morphtok-spm --user-symbols
    tagger="bite_tagger",                      # the inflection noise tags as BITE does (its default, its choices)
    noise={INFLECTION: "preprocess.schemes.bite:match_case"},   # a swapped-in form keeps case as BITE's decoder does
    pretokenizer="preprocess.schemes.bite:pretokenizer",    # the paper's words (pseudo-perplexity per word)
)


def check_subword_model(path: str, single_char: bool = False) -> None:
    """Raise a :class:`~preprocess.common.UserError` when the SentencePiece model at ``path`` does not keep the
    inflection symbols as pieces: BITE output would become ``<unk>`` (or loose characters) without a warning."""
    from preprocess.common import UserError
    from preprocess.models.spm_model import load_model

    sp = load_model(path)
    symbols = SINGLE_CHAR_SYMBOLS if single_char else INFLECTION_SYMBOLS
    missing = [s for s in symbols if sp.piece_to_id(s) == sp.unk_id()]
    if missing:
        shorthand = "bite-single" if single_char else "bite"
        raise UserError(
            f"the subword model {path} has no piece for the BITE inflection symbols {' '.join(missing[:4])}"
            f"{' ...' if len(missing) > 4 else ''}, so they would become <unk>: train it on BITE output with "
            f"`python -m preprocess.models.spm train --user-symbols {shorthand} ...`"
            f"{'' if single_char else ' (or use --bite-single-char with a model trained with bite-single)'}")


# ---- command line ----------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    """``python -m preprocess.schemes.bite encode ...`` (= ``python -m preprocess.encode --scheme bite ...``) and
    ``python -m preprocess.schemes.bite decode`` (BITE tokens back to text, e.g. to read a model's output)."""
    import sys

    from preprocess.files.inputs import read_lines, require_input
    from preprocess.files.outputs import atomic_output, check_distinct, check_output_path

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m preprocess.schemes.bite", description=__doc__.split("\n\n")[0],
        epilog="encode: every option of `python -m preprocess.encode --scheme bite` (see "
               "`python -m preprocess.schemes.bite encode --help`)")
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

    from preprocess.cli import run_main
    sys.exit(run_main(main))
