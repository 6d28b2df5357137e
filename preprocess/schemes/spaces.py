"""Space-as-token SentencePiece models (Gow-Smith et al., 2022): BPE', Unigram' and their "no spaces" variant.

The paper's modified algorithms (its Figures 1 and 2) treat the space symbol ``▁`` as a token of its own: it is
never merged into a subword, and no space is prepended to the first word of a sentence.  With SentencePiece
this is exactly two training options, read off the paper's published models
(``../shared/data/space_models/*_prime.model``): ``user_defined_symbols=▁`` (a user-defined symbol is always
segmented on its own, i.e. "spaces are given an arbitrarily high score") and ``add_dummy_prefix=false``.
Everything else is SentencePiece's default, as in the paper (Table 8).

    python -m preprocess.schemes.spaces train --input corpus.txt --model-prefix P --model-type unigram \\
        --variant prime --vocab-size 16000

writes ``P.model``, ``P.vocab`` and ``P.dict.txt`` (a fairseq dictionary for ``--srcdict/--tgtdict``); it is
``python -m preprocess.models.spm train`` with ``--variant prime`` as the default (training lives in
:mod:`preprocess.models.spm`).

Encoding modes: ``keep`` emits the pieces as the model gives them (lossless up to SentencePiece's NFKC and
whitespace normalisation); ``drop`` removes the standalone ``▁`` pieces after tokenisation, the paper's
"no spaces" variant.  ``drop`` is lossy: word boundaries are gone, and :func:`decode_pieces` can only guess
them (see there).
"""
from __future__ import annotations

import sys
import unicodedata
from dataclasses import dataclass
from typing import Optional

from preprocess.cli import run_main
from preprocess.common import UserError, flatten_line
from preprocess.models import spm
from preprocess.models.spm import SPACE_SYMBOL, is_prime_model, load_model, train, write_fairseq_dict  # noqa: F401
from preprocess.options import add_arguments, option, options_from

#: ``keep``: the standalone ``▁`` pieces are tokens (lossless); ``drop``: the paper's lossy "no spaces" variant
SPACE_MODES = ("keep", "drop")


# --- encoding ------------------------------------------------------------------------------------------------

class SpacesEncoder:
    """Encode lines with a SentencePiece model; ``spaces="drop"`` removes standalone ``▁`` pieces."""


    def __init__(self, model: str, spaces: str = "keep", threads: int = 1):
        if spaces not in SPACE_MODES:
            raise UserError(f"--spaces must be keep or drop, not {spaces!r}")
        self.model_path = model
        self.sp = load_model(model)
        self.drop = spaces == "drop"
        self.threads = max(1, threads)

    def encode_pieces(self, text: str) -> list[str]:
        pieces = self.sp.encode(flatten_line(text), out_type=str)
        if self.drop:
            pieces = [p for p in pieces if p != SPACE_SYMBOL]
        return pieces

    def encode(self, text: str) -> str:
        return " ".join(self.encode_pieces(text))

    def encode_lines(self, lines: list[str]) -> list[str]:
        batch = self.sp.encode([flatten_line(line) for line in lines], out_type=str, num_threads=self.threads)
        if self.drop:
            return [" ".join([p for p in pieces if p != SPACE_SYMBOL]) for pieces in batch]
        return [" ".join(pieces) for pieces in batch]

    def decode(self, text: str) -> str:
        return decode_pieces(self.sp, text.split(), drop=self.drop)


def decode_pieces(sp, pieces: list[str], drop: bool = False) -> str:
    """Pieces back to text.

    ``keep``: SentencePiece's own decoder, exact for normalised text.  ``drop`` (lossy): the spaces were removed,
    so the best guess is that every piece without a leading ``▁`` starts a new word, except a piece made only of
    punctuation, which attaches to the previous one.  For a prime model that means subword splits of a word
    (``un saturated``) come back as separate words: the loss the paper accepts for shorter sequences.
    """
    if not drop:
        return sp.decode_pieces(pieces)
    words: list[str] = []
    for piece in pieces:
        text = sp.decode_pieces([piece]) if piece.startswith("<0x") else piece.replace(SPACE_SYMBOL, " ")
        if words and _is_punct(text):
            words[-1] += text
        else:
            words.append(text.strip())
    return " ".join(w for w in words if w)


def _is_punct(text: str) -> bool:
    return bool(text) and all(unicodedata.category(ch).startswith("P") for ch in text) and text not in "([{\"'"


@dataclass
class SpacesOptions:
    """The space-as-token encoder's options, declared once: ``preprocess.encode --scheme spaces``, the ``--bpe
    spaces`` adapter (``fairseq_plugins/spaces.py``) and the decode arguments a recipe records derive from them."""

    spaces_model: Optional[str] = option(None, "SentencePiece .model file", aliases=("--model",))
    spaces: str = option("keep", "keep the standalone ▁ pieces, or drop them (the paper's 'no spaces' variant, whose "
                                 "decoding guesses word boundaries: lossy)", SPACE_MODES)


def add_encoder_args(parser) -> None:
    add_arguments(parser, SpacesOptions, required=("spaces_model",))


def make_encoder(args) -> SpacesEncoder:
    """The encoder of ``args`` (:class:`SpacesOptions`, an argparse namespace or the adapter's config, converted once
    by :func:`~preprocess.options.options_from`)."""
    options = options_from(SpacesOptions, args)
    return SpacesEncoder(options.spaces_model, options.spaces)  # parallel across preprocess.encode's worker processes


def write_tokenizer_json(args, out_dir: str, dictionary=None, scheme: str = "spaces") -> list:
    """The Hugging Face export of this scheme (and its ``sentencepiece`` alias; ``morphtok-export``), as its
    descriptor names it: :func:`preprocess.export.tokenizer_json.export_sentencepiece` of the parsed encode options ``args``
    (imports ``tokenizers``)."""
    from preprocess.export.tokenizer_json import export_sentencepiece

    return export_sentencepiece(args.spaces_model, out_dir, args.spaces, dictionary, scheme=scheme)


from preprocess.registry import SchemeDescriptor  # noqa: E402  (the scheme's one declaration, docs/adding-a-scheme.md)

#: this scheme's command-line tools, installed by setup.py (preprocess/scheme_scripts.py reads the literal)
CONSOLE_SCRIPTS = {"morphtok-spaces": "preprocess.schemes.spaces"}

SCHEME = SchemeDescriptor(
    name="spaces",
    options=SpacesOptions,
    make_encoder=make_encoder,
    add_arguments=add_encoder_args,
    files=("spaces_model",),
    fairseq_bpe="spaces",
    adapter="fairseq_plugins.spaces",
    hf_export="preprocess.schemes.spaces:write_tokenizer_json",
    recipe="train_scripts.schemes.spaces:SpacesScheme",
    # a plain SentencePiece model: the same encoder, options and tokenizer.json, decoded by fairseq's own --bpe
    aliases={"sentencepiece": "train_scripts.schemes.sentencepiece:SentencePieceScheme"},
    # (model, spaces) -> encoder of a SentencePiece model alone: the morphology metrics, the length filters
    spm_encoder="preprocess.schemes.spaces:SpacesEncoder",
)


# --- command line --------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = spm.build_parser("python -m preprocess.schemes.spaces", default_variant="prime",
                              description=__doc__.split("\n\n")[0])
    return spm.main(argv, parser)



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
