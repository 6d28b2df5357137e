"""Space-as-token SentencePiece models (Gow-Smith et al., 2022): BPE', Unigram' and their "no spaces" variant.

The paper's modified algorithms (its Figures 1 and 2) treat the space symbol ``▁`` as a token of its own: it is
never merged into a subword, and no space is prepended to the first word of a sentence.  With SentencePiece
this is exactly two training options, read off the paper's published models
(``../shared/data/space_models/*_prime.model``): ``user_defined_symbols=▁`` (a user-defined symbol is always
segmented on its own, i.e. "spaces are given an arbitrarily high score") and ``add_dummy_prefix=false``.
Everything else is SentencePiece's default, as in the paper (Table 8).

    python -m preprocess.spaces train --input corpus.txt --model-prefix P --model-type unigram \\
        --variant prime --vocab-size 16000

writes ``P.model``, ``P.vocab`` and ``P.dict.txt`` (a fairseq dictionary for ``--srcdict/--tgtdict``).

Encoding modes: ``keep`` emits the pieces as the model gives them (lossless up to SentencePiece's NFKC and
whitespace normalisation); ``drop`` removes the standalone ``▁`` pieces after tokenisation, the paper's
"no spaces" variant.  ``drop`` is lossy: word boundaries are gone, and :func:`decode_pieces` can only guess
them (see there).
"""
from __future__ import annotations

import argparse
import gzip
import os
import shutil
import sys
import tempfile
import unicodedata

from preprocess.common import UserError, atomic_output, flatten_line, require_file, run_main

SPACE = "\u2581"  # ▁, SentencePiece's meta symbol for whitespace
VARIANTS = ("default", "prime")
SPACE_MODES = ("keep", "drop")
#: fairseq's Dictionary adds these itself; they must not appear in dict.txt
FAIRSEQ_SPECIALS = {"<s>", "<pad>", "</s>", "<unk>"}


def load_model(path: str):
    """Load a SentencePiece model, turning a missing or corrupt file into a one-line :class:`UserError`."""
    import sentencepiece as spm

    require_file(path, "SentencePiece model")
    sp = spm.SentencePieceProcessor()
    try:
        sp.Load(path)
    except (OSError, RuntimeError) as exc:
        raise UserError(f"not a valid SentencePiece model: {path} ({str(exc).splitlines()[0]})") from None
    return sp


def is_prime_model(sp) -> bool:
    """True when the model keeps spaces as their own token (trained with ``--variant prime``)."""
    return SPACE in sp.encode("a b", out_type=str)


# --- training ------------------------------------------------------------------------------------------------

def user_symbols(spec: str | None) -> list[str]:
    """``bite`` / ``bite-single`` (BITE's inflection symbols plus its escape and spacing marks, bracketed or
    single-character) or a comma-separated list of symbols."""
    if not spec:
        return []
    if spec in ("bite", "bite-single"):
        from preprocess import bite

        return list(bite.USER_SYMBOLS_SINGLE if spec == "bite-single" else bite.USER_SYMBOLS)
    return [s for s in spec.split(",") if s]


def train(inputs: list[str], model_prefix: str, model_type: str = "unigram", variant: str = "prime",
          vocab_size: int = 16000, character_coverage: float = 0.9995, input_sentence_size: int = 0,
          seed: int | None = None, num_threads: int = 2, extra_symbols: list[str] | None = None,
          extra_options: dict | None = None, quiet: bool = True) -> str:
    """Train a SentencePiece model and write ``P.model``, ``P.vocab`` and the fairseq ``P.dict.txt``.

    Returns the path of ``P.model``.  Inputs may be gzip-compressed.
    """
    import sentencepiece as spm

    if model_type not in ("bpe", "unigram"):
        raise UserError(f"--model-type must be bpe or unigram, not {model_type!r}")
    if variant not in VARIANTS:
        raise UserError(f"--variant must be one of {VARIANTS}, not {variant!r}")
    for path in inputs:
        require_file(path, "training input")
    symbols = list(extra_symbols or [])
    options = dict(model_type=model_type, vocab_size=vocab_size, character_coverage=character_coverage,
                   input_sentence_size=input_sentence_size, num_threads=num_threads,
                   shuffle_input_sentence=True, minloglevel=2 if quiet else 0)
    if variant == "prime":
        symbols = [SPACE] + [s for s in symbols if s != SPACE]
        options["add_dummy_prefix"] = False
    if symbols:
        options["user_defined_symbols"] = symbols
    options.update(extra_options or {})
    if seed is not None:
        spm.set_random_generator_seed(seed)

    os.makedirs(os.path.dirname(os.path.abspath(model_prefix)), exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="spm-train-")
    try:
        plain = []
        for i, path in enumerate(inputs):
            if path.endswith(".gz"):  # SentencePiece reads plain text only
                dst = os.path.join(workdir, f"input{i}.txt")
                with gzip.open(path, "rb") as src, open(dst, "wb") as out:
                    shutil.copyfileobj(src, out)
                path = dst
            plain.append(path)
        tmp_prefix = os.path.join(workdir, "model")
        try:
            spm.SentencePieceTrainer.train(input=plain, model_prefix=tmp_prefix, **options)
        except RuntimeError as exc:
            raise UserError(f"SentencePiece training failed: {str(exc).splitlines()[0]}") from None
        # move into place only when everything succeeded: no partial model files on failure
        write_fairseq_dict(tmp_prefix + ".model", tmp_prefix + ".dict.txt")
        for ext in (".model", ".vocab", ".dict.txt"):
            os.replace(tmp_prefix + ext, model_prefix + ext) if _same_fs(workdir, model_prefix) \
                else shutil.move(tmp_prefix + ext, model_prefix + ext)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return model_prefix + ".model"


def _same_fs(a: str, b: str) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(os.path.dirname(os.path.abspath(b))).st_dev
    except OSError:
        return False


def write_fairseq_dict(model_path: str, dict_path: str) -> int:
    """Write the fairseq ``dict.txt`` of a SentencePiece model; returns the number of entries.

    Every piece the model can emit is listed, in model order, except the control symbols and ``<unk>``
    (fairseq's Dictionary adds ``<s> <pad> </s> <unk>`` itself).  fairseq wants a count per entry; the counts are
    rank-based pseudo-counts (``N - rank``) so that any frequency threshold keeps SentencePiece's order.
    """
    sp = load_model(model_path)
    pieces = []
    for i in range(sp.get_piece_size()):
        if sp.is_control(i) or sp.is_unknown(i):
            continue
        piece = sp.id_to_piece(i)
        if piece in FAIRSEQ_SPECIALS:
            continue
        pieces.append(piece)
    with atomic_output(dict_path) as out:
        for rank, piece in enumerate(pieces):
            out.write(f"{piece} {len(pieces) - rank}\n")
    return len(pieces)


# --- encoding ------------------------------------------------------------------------------------------------

class SpacesEncoder:
    """Encode lines with a SentencePiece model; ``spaces="drop"`` removes standalone ``▁`` pieces."""

    inprocess_threads = True  # SentencePiece batches over its own threads; no process pool needed

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
            pieces = [p for p in pieces if p != SPACE]
        return pieces

    def encode(self, text: str) -> str:
        return " ".join(self.encode_pieces(text))

    def encode_lines(self, lines: list[str]) -> list[str]:
        batch = self.sp.encode([flatten_line(line) for line in lines], out_type=str, num_threads=self.threads)
        if self.drop:
            return [" ".join([p for p in pieces if p != SPACE]) for pieces in batch]
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
        text = sp.decode_pieces([piece]) if piece.startswith("<0x") else piece.replace(SPACE, " ")
        if words and _is_punct(text):
            words[-1] += text
        else:
            words.append(text.strip())
    return " ".join(w for w in words if w)


def _is_punct(text: str) -> bool:
    return bool(text) and all(unicodedata.category(ch).startswith("P") for ch in text) and text not in "([{\"'"


def add_encoder_args(parser) -> None:
    parser.add_argument("--model", required=True, help="SentencePiece .model file")
    parser.add_argument("--spaces", choices=SPACE_MODES, default="keep",
                        help="keep the standalone ▁ pieces, or drop them (the paper's lossy 'no spaces' variant)")


def make_encoder(args: argparse.Namespace) -> SpacesEncoder:
    return SpacesEncoder(args.model, args.spaces, threads=getattr(args, "workers", 1))


# --- command line --------------------------------------------------------------------------------------------

def _parse_kv(items: list[str]) -> dict:
    out = {}
    for item in items or []:
        if "=" not in item:
            raise UserError(f"--spm-option wants KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        out[key.strip().lstrip("-")] = value
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m preprocess.spaces", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a SentencePiece model (default or space-as-token)",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    t.add_argument("--input", nargs="+", required=True, help="training text files (.gz allowed)")
    t.add_argument("--model-prefix", required=True, help="writes PREFIX.model, PREFIX.vocab, PREFIX.dict.txt")
    t.add_argument("--model-type", choices=["bpe", "unigram"], default="unigram")
    t.add_argument("--variant", choices=VARIANTS, default="prime",
                   help="prime: spaces always their own token (BPE'/Unigram'); default: SentencePiece's default")
    t.add_argument("--vocab-size", type=int, default=16000)
    t.add_argument("--character-coverage", type=float, default=0.9995)
    t.add_argument("--input-sentence-size", type=int, default=0, help="sample this many sentences (0 = all)")
    t.add_argument("--seed", type=int, default=None, help="SentencePiece random seed (sampling, shuffling)")
    t.add_argument("--num-threads", type=int, default=2)
    t.add_argument("--user-symbols", default=None,
                   help="extra user-defined symbols: 'bite' (BITE's [NNS]... symbols and its escape/spacing "
                        "marks), 'bite-single' (the single-character symbols) or a comma-separated list")
    t.add_argument("--spm-option", action="append", metavar="KEY=VALUE",
                   help="any other SentencePiece trainer option, e.g. byte_fallback=true (repeatable)")
    e = sub.add_parser("dict", help="write the fairseq dict.txt of an existing model")
    e.add_argument("--model", required=True)
    e.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    if args.command == "train":
        path = train(args.input, args.model_prefix, args.model_type, args.variant, args.vocab_size,
                     args.character_coverage, args.input_sentence_size, args.seed, args.num_threads,
                     user_symbols(args.user_symbols), _parse_kv(args.spm_option))
        print(f"wrote {path}, {args.model_prefix}.vocab, {args.model_prefix}.dict.txt", file=sys.stderr)
    else:
        n = write_fairseq_dict(args.model, args.output)
        print(f"wrote {args.output} ({n} entries)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
