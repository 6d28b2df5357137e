"""Translate raw text with a model trained on a ``morphtok-binarize`` corpus, for any scheme pair.

    morphtok-translate --data work/bite --checkpoint ckpt/bite/averaged.pt --input news.en --output news.de
    echo "Two dogs are running ." | morphtok-translate --data work/bite --checkpoint ckpt/bite/averaged.pt

``binarize.json`` records the fairseq options of each side: ``source_args`` (how the source language was encoded)
and ``generate_args`` (how the target language is decoded).  fairseq-interactive and the hub take *one*
``--tokenizer``/``--bpe`` for both, so for a pair whose sides differ (BITE or Wordmap on one side only) they
silently encode the input with the wrong scheme (the target's options: English read by the German model) or decode
the output with the wrong one (the source's).  This command encodes each line with the source's options and
decodes the translation with the target's (:class:`train_scripts.hub.PairTranslator`): one output line per input
line, in order.

Options that choose an encoding (``--bpe``, ``--tokenizer`` and every scheme option such as
``--sentencepiece-model`` or ``--wordmap-vocab``) are refused: they come from ``binarize.json``, per side.
``--print-interactive`` prints the equivalent ``fairseq-interactive`` command where one exists (both sides encoded
alike), and otherwise says why there is none.
"""
from __future__ import annotations

import argparse
import shlex
import sys

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.files.inputs import UTF8_HINT, read_lines
from preprocess.files.outputs import atomic_output, check_distinct
from train_scripts.evaluate import add_length_args

#: fairseq's own options that pick an encoding (its encoders and the languages); every scheme's are added from the
#: registry (:func:`encoding_options`)
FAIRSEQ_ENCODING_OPTIONS = ("--bpe", "--tokenizer", "--moses-", "--gpt2-", "--bpe-codes", "--source-lang",
                            "--target-lang")


def encoding_options() -> tuple[tuple[str, ...], frozenset]:
    """``(prefixes, flags)``: the options that pick an encoding, per side in binarize.json and never given by hand
    here: fairseq's own, ``--NAME-...`` for every scheme and alias of the registry (:mod:`preprocess.registry`:
    ``--flota-k``, ``--sentencepiece-model``) and every option flag a scheme declares."""
    from preprocess import registry

    descriptors = registry.descriptors()
    prefixes = FAIRSEQ_ENCODING_OPTIONS + tuple(f"--{name}-" for d in descriptors for name in d.names())
    return prefixes, frozenset(flag for d in descriptors if d.make_encoder is not None for flag in d.option_flags())


def interactive_command(info: dict, checkpoint: str) -> list[str]:
    """The fairseq-interactive command for a pair whose two sides share their options; a :class:`UserError`
    naming both sides' options otherwise."""
    from train_scripts.tools import plugins_dir

    if info["source_args"] != info["generate_args"]:
        raise UserError("fairseq-interactive cannot translate this pair: it takes one --bpe/--tokenizer for both "
                        f"sides, but the source is encoded with {' '.join(info['source_args'])} and the target "
                        f"with {' '.join(info['generate_args'])} (binarize.json source_args, generate_args); "
                        "use morphtok-translate, which applies each side's own")
    return ["fairseq-interactive", info["data_bin"][0], "--user-dir", plugins_dir(), "--path", checkpoint,
            "--source-lang", info["src"], "--target-lang", info["tgt"], *info["generate_args"]]


def refuse_encoding_options(extra: list[str]) -> None:
    prefixes, flags = encoding_options()
    for arg in extra:
        if arg.startswith(prefixes) or arg.split("=")[0] in flags:
            raise UserError(f"{arg.split('=')[0]} is not an option here: each side's encoding comes from "
                            f"binarize.json (source_args for the input, generate_args for the output), so that "
                            f"an asymmetric pair is never encoded with the other side's scheme")
    if extra:
        raise UserError(f"unknown option {extra[0]} (see morphtok-translate --help)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="morphtok-translate", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", required=True, help="the morphtok-binarize output folder (with binarize.json)")
    p.add_argument("--checkpoint", required=True, help="the model (e.g. an averaged checkpoint)")
    p.add_argument("--input", default="-", help="raw source text, one sentence per line (- = stdin)")
    p.add_argument("--output", default="-", help="translations, one per input line (- = stdout)")
    p.add_argument("--source-pieces", metavar="FILE",
                   help="also write the encoded source (what the model reads) here, one line per input line")
    p.add_argument("--beam", type=int, default=5, help="beam size")
    p.add_argument("--lenpen", type=float, default=1.0, help="length penalty")
    add_length_args(p)
    p.add_argument("--batch-size", type=int, default=32, help="sentences translated together")
    p.add_argument("--cuda", action="store_true", help="run on the GPU (default: CPU)")
    p.add_argument("--print-interactive", action="store_true",
                   help="print the equivalent fairseq-interactive command (pairs encoded alike only) and exit")
    args, extra = p.parse_known_args(argv)
    refuse_encoding_options(extra)
    if args.batch_size < 1 or args.beam < 1:
        raise UserError("--batch-size and --beam must be at least 1")

    from train_scripts.hub import load_pair, read_info

    info = read_info(args.data)
    if args.print_interactive:
        print(shlex.join(interactive_command(info, args.checkpoint)))
        return 0
    outputs = [(args.output, "--output")] + ([(args.source_pieces, "--source-pieces")] if args.source_pieces else [])
    check_distinct(outputs, [(args.input, "--input"), (args.checkpoint, "--checkpoint")])
    lines = list(read_lines(args.input, hint=UTF8_HINT))
    print(f"morphtok-translate: {len(lines)} lines; source encoded with {' '.join(info['source_args'])}; "
          f"output decoded with {' '.join(info['generate_args'])}", file=sys.stderr)
    pair = load_pair(args.data, args.checkpoint)
    if args.cuda:
        pair.hub.cuda()
    if args.source_pieces:
        with atomic_output(args.source_pieces) as fh:
            fh.writelines(pair.encode(line) + "\n" for line in lines)
    with atomic_output(args.output) as out:
        for start in range(0, len(lines), args.batch_size):
            batch = lines[start:start + args.batch_size]
            for hyp in pair.translate(batch, beam=args.beam, lenpen=args.lenpen, max_len_a=args.max_len_a,
                                      max_len_b=args.max_len_b):
                out.write(hyp + "\n")
    return 0


def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
