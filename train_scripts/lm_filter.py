"""The space-as-token paper's fairness filter for pretraining text (appendix A.1): "we removed all sentences with
sequence lengths longer than 510 when tokenised with the modified models including spaces".

    python -m train_scripts.lm_filter --input raw/train.en --output filtered/train.en \\
        --model work/unigram_prime/models/spm.model [--model work/bpe_prime/models/spm.model] [--max-tokens 510]

A line is kept when it has at most ``--max-tokens`` pieces under every ``--model`` with the spaces kept (510 =
RoBERTa's 512 positions minus ``<s>`` and ``</s>``), so that every variant (with and without spaces) is pretrained
on the same sentences.  The counts are printed (the paper: about 0.002 % of English Wikipedia); the output
appears only when complete, and never replaces the input or a model (the same path, a symlink or a hard link to
it is refused before any work).  Invalid UTF-8 in the input stops with an error naming the line unless
``--errors replace``.  Typical use: learn the space-keeping models with ``binarize --lm`` on the raw text,
filter the raw text with them, then binarise every variant from the filtered text.
"""
from __future__ import annotations

import argparse
import sys

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.files.inputs import read_lines, require_input
from preprocess.files.outputs import atomic_output, check_distinct, check_output_path

BATCH = 10000


def filter_lines(lines, models: list[str], max_tokens: int = 510):
    """Yield (line, kept) for every input line; kept: at most ``max_tokens`` pieces under every model."""
    from preprocess import registry

    if max_tokens < 1:
        raise UserError("--max-tokens must be at least 1")
    if not models:
        raise UserError("give at least one --model (a space-keeping SentencePiece model)")
    encoders = [registry.spm_encoder_of(m, "keep") for m in models]
    batch = []
    for line in _with_end(lines):
        if line is not None:
            batch.append(line)
        if batch and (line is None or len(batch) == BATCH):
            lengths = [[len(e.split()) for e in enc.encode_lines(batch)] for enc in encoders]
            for k, text in enumerate(batch):
                yield text, all(lens[k] <= max_tokens for lens in lengths)
            batch = []


def _with_end(iterable):
    yield from iterable
    yield None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train_scripts.lm_filter", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--input", required=True, help="raw text, one sentence per line")
    p.add_argument("--output", required=True, help="the kept lines")
    p.add_argument("--model", action="append", required=True, help="space-keeping SentencePiece model (repeatable)")
    p.add_argument("--max-tokens", type=int, default=510, help="most pieces per sentence")
    p.add_argument("--errors", choices=["strict", "replace"], default="strict",
                   help="invalid UTF-8: stop with an error naming file and line, or replace with U+FFFD")
    args = p.parse_args(argv)
    # before any work: the input is readable, the output writable and neither the input nor a model
    require_input(args.input, "--input")
    check_output_path(args.output, "--output")
    check_distinct([(args.output, "--output")], [(args.input, "--input"), *((m, "--model") for m in args.model)])
    total = kept = 0
    with atomic_output(args.output) as out:
        for line, keep in filter_lines(read_lines(args.input, errors=args.errors), args.model, args.max_tokens):
            total += 1
            if keep:
                kept += 1
                out.write(line + "\n")
    share = 100.0 * (total - kept) / total if total else 0.0
    print(f"{args.input}: {total:,} sentences, kept {kept:,}, removed {total - kept:,} ({share:.4f} %) longer than "
          f"{args.max_tokens} tokens", file=sys.stderr)
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
