"""Wordmap: lexicalised segmentation of German verbs (Jung 2023, BA thesis, section 3.2.1).

This module is its command line, ``python -m preprocess.schemes.wordmap`` (``morphtok-wordmap``): ``build`` extracts the
verbs, builds a Wordmap vocabulary and trains the base SentencePiece model; ``segment`` segments words with a
vocabulary.  The first paragraph above is the parser's description, as it is the package's."""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Iterator

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.files.inputs import read_lines, require_file
from preprocess.files.outputs import atomic_output, check_distinct, check_output_path
from preprocess.schemes.wordmap.segmentation import segment
from preprocess.schemes.wordmap.tagging import extract_verbs, extract_verbs_file, open_text
from preprocess.schemes.wordmap.tokenizer import train_spm
from preprocess.schemes.wordmap.vocabulary import WordmapVocabulary, build_vocabulary


def _read_word_list(path: str) -> list[str]:
    return [w for line in read_lines(path, errors="replace") for w in line.split()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m preprocess.schemes.wordmap", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="extract verbs, build a Wordmap vocabulary and train the base SentencePiece model",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    b.add_argument("--input", help="German sentences, one per line (.gz allowed); required unless --verbs is given")
    b.add_argument("--max-lines", type=int, default=0, help="use only the first N lines (0 = all)")
    b.add_argument("--verbs", help="use this verb list (one or more words per line) instead of tagging --input")
    b.add_argument("--extra-words", help="user word list appended to the extracted verbs")
    b.add_argument("--output", required=True, help="Wordmap vocabulary file to write")
    b.add_argument("--verbs-out", help="also write the verb list used")
    b.add_argument("--spm-prefix", help="train the base SentencePiece model on --input to PREFIX.model/.vocab")
    b.add_argument("--spm-vocab-size", type=int, default=8000, help="pieces of the base SentencePiece model")
    b.add_argument("--spm-type", choices=["unigram", "bpe"], default="unigram", help="base SentencePiece model type")
    b.add_argument("--method", choices=["fast", "naive"], default="fast", help="naive = pairwise reference")
    b.add_argument("--workers", type=int, default=1, help="processes that tag --input (as preprocess.encode)")
    b.add_argument("--quiet", action="store_true", help="no progress output")
    s = sub.add_parser("segment", help="segment words (arguments or stdin, one per line) with a vocabulary")
    s.add_argument("--vocab", required=True, help="Wordmap vocabulary (build's --output)")
    s.add_argument("words", nargs="*")
    args = parser.parse_args(argv)

    if args.command == "segment":
        vocab = WordmapVocabulary.load(args.vocab)
        words = args.words or [line.strip() for line in read_lines("-", errors="replace")]
        for w in words:
            print(" ".join(segment(w, vocab)) if w else "")
        return 0

    def corpus() -> Iterator[str]:
        for i, line in enumerate(open_text(args.input)):
            if args.max_lines and i >= args.max_lines:
                return
            yield line

    outputs = [(args.output, "--output")] + ([(args.verbs_out, "--verbs-out")] if args.verbs_out else []) + \
        ([(args.spm_prefix + ext, "--spm-prefix") for ext in (".model", ".vocab", ".dict.txt")]
         if args.spm_prefix else [])
    if args.spm_prefix is not None and (not args.spm_prefix or args.spm_prefix.endswith(("/", os.sep))
                                        or os.path.isdir(args.spm_prefix)):
        raise UserError(f"--spm-prefix {args.spm_prefix!r} is a folder: give a file name prefix")
    for path, _ in outputs:
        check_output_path(path)
    check_distinct(outputs, [(p, opt) for p, opt in ((args.input, "--input"), (args.verbs, "--verbs"),
                                                      (args.extra_words, "--extra-words")) if p])
    t0 = time.time()
    if not args.verbs and not args.input:
        raise UserError("give --input (German text, e.g. Multi30k's train.de.gz) or --verbs")
    if args.verbs:
        verbs = extract_verbs([], extra_words=_read_word_list(require_file(args.verbs, "verb list")))
    else:
        verbs = extract_verbs_file(require_file(args.input, "corpus"), workers=args.workers,
                                   max_lines=args.max_lines, quiet=args.quiet)
    if args.extra_words:
        verbs = extract_verbs([], extra_words=verbs + _read_word_list(require_file(args.extra_words, "word list")))
    if not verbs:
        raise UserError("no verbs found: nothing to build a Wordmap vocabulary from")
    t1 = time.time()
    vocab = build_vocabulary(verbs, method=args.method, progress=not args.quiet)
    t2 = time.time()
    vocab.save(args.output)
    if args.verbs_out:
        with atomic_output(args.verbs_out) as fh:
            fh.write("".join(v + "\n" for v in verbs))
    print(f"{len(verbs)} verb types ({t1 - t0:.1f}s), vocabulary of {len(vocab)} strings "
          f"({len(vocab.functional)} functional, {len(vocab.lexemic)} lexemic) built in {t2 - t1:.1f}s "
          f"-> {args.output}", file=sys.stderr)
    if args.spm_prefix:
        path = train_spm(corpus(), args.spm_prefix, args.spm_vocab_size, args.spm_type)
        print(f"base SentencePiece model -> {path}", file=sys.stderr)
    return 0


def cli() -> None:
    """Console-script entry point (see setup.py)."""
    import sys

    sys.exit(run_main(main))
