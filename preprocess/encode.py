"""Order-preserving, multi-process file encoder for every tokenisation scheme.

    python -m preprocess.encode --scheme spaces --model P.model --spaces keep \\
        --inputs train.en train.de --outputs train.tok.en train.tok.de --workers 4

Output line *i* always belongs to input line *i* (fairseq-preprocess silently misaligns parallel data
otherwise); an empty or whitespace-only line gives an empty line.  Each output file is written to a temporary
file and renamed on success, so a failure never leaves partial output.  The scheme's own options are listed by
``python -m preprocess.encode --scheme NAME --help``.
"""
from __future__ import annotations

import argparse
import functools
import importlib
import itertools
import multiprocessing as mp
import sys
from typing import Iterable, Iterator

from tqdm import tqdm

from preprocess.common import UserError, atomic_output, count_lines, read_lines, run_main

#: scheme name -> module implementing ``add_encoder_args`` and ``make_encoder`` (see docs/CONTRACTS.md)
SCHEMES = {
    "spaces": "preprocess.spaces",
    "bite": "preprocess.bite",
    "flota": "preprocess.flota",
    "wordmap": "preprocess.wordmap",
}


def scheme_module(name: str):
    if name not in SCHEMES:
        raise UserError(f"unknown scheme {name!r}; choose from {', '.join(SCHEMES)}")
    try:
        return importlib.import_module(SCHEMES[name])
    except ImportError as exc:
        raise UserError(f"scheme {name!r} is not available: {exc}") from None


def build_parser(scheme: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m preprocess.encode",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--scheme", required=True, choices=sorted(SCHEMES), help="tokenisation scheme")
    parser.add_argument("--inputs", nargs="+", required=True,
                        help="input text files (UTF-8, one sentence per line, .gz allowed); - for stdin")
    parser.add_argument("--outputs", nargs="+", required=True,
                        help="output files, one per input, in the same order; - for stdout")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (or threads, for SentencePiece)")
    parser.add_argument("--chunk-size", type=int, default=2000, help="lines per unit of work sent to a worker")
    parser.add_argument("--errors", choices=["strict", "replace"], default="strict",
                        help="invalid UTF-8: stop with an error naming file and line, or replace with U+FFFD")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    if scheme is not None:
        group = parser.add_argument_group(f"{scheme} options")
        scheme_module(scheme).add_encoder_args(group)
    return parser


def parse_args(argv=None) -> argparse.Namespace:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--scheme")
    known, _ = pre.parse_known_args(argv)
    scheme = known.scheme if known.scheme in SCHEMES else None
    args = build_parser(scheme).parse_args(argv)
    if len(args.inputs) != len(args.outputs):
        raise UserError(f"{len(args.inputs)} inputs but {len(args.outputs)} outputs: give one output per input")
    if args.workers < 1:
        raise UserError("--workers must be at least 1")
    outs = [o for o in args.outputs if o != "-"]
    if len(set(outs)) != len(outs):
        raise UserError("the same output file is given twice")
    if args.outputs.count("-") > 1 or args.inputs.count("-") > 1:
        raise UserError("stdin/stdout (-) can be used for one file only")
    return args


def _chunks(lines: Iterable[str], size: int) -> Iterator[list[str]]:
    it = iter(lines)
    while True:
        chunk = list(itertools.islice(it, size))
        if not chunk:
            return
        yield chunk


# --- worker side -----------------------------------------------------------------------------------------
_WORKER_ENCODER = None


def _init_worker(factory) -> None:
    global _WORKER_ENCODER
    _WORKER_ENCODER = factory()


def _encoder_from_args(args: argparse.Namespace):
    return scheme_module(args.scheme).make_encoder(args)


def file_options(workers: int = 1, chunk_size: int = 2000, errors: str = "strict", quiet: bool = True,
                 scheme: str = "custom") -> argparse.Namespace:
    """The generic options of :class:`FileEncoder` for Python callers that give their own encoder factory."""
    return argparse.Namespace(scheme=scheme, workers=workers, chunk_size=chunk_size, errors=errors, quiet=quiet)


def _encode_chunk(chunk: list[str]) -> list[str]:
    return _checked(_WORKER_ENCODER, chunk)


def _checked(encoder, chunk: list[str]) -> list[str]:
    out = encoder.encode_lines(chunk)
    if len(out) != len(chunk):  # a scheme bug must never shift lines
        raise RuntimeError(f"encoder returned {len(out)} lines for {len(chunk)}")
    return out


class FileEncoder:
    """Encode whole files with one scheme; reusable from Python (``FileEncoder(args).encode_file(i, o)``).

    ``factory``: a picklable zero-argument callable that builds the LineEncoder (called in the parent and in
    every worker); default: the ``--scheme`` module's ``make_encoder(args)``.  ``args`` then needs only the
    generic options (:func:`file_options`).
    """

    def __init__(self, args: argparse.Namespace, factory=None):
        self.args = args
        self.factory = factory or functools.partial(_encoder_from_args, args)
        self.encoder = self.factory()  # validates options in the parent
        self.use_pool = args.workers > 1 and not getattr(self.encoder, "inprocess_threads", False)
        self.pool = None

    def __enter__(self):
        if self.use_pool:
            ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
            self.pool = ctx.Pool(self.args.workers, initializer=_init_worker, initargs=(self.factory,))
        return self

    def __exit__(self, *exc):
        if self.pool is not None:
            if exc[0] is None:
                self.pool.close()
            else:
                self.pool.terminate()
            self.pool.join()
            self.pool = None

    def encode_chunks(self, chunks: Iterable[list[str]]) -> Iterator[list[str]]:
        if self.pool is None:
            for chunk in chunks:
                yield _checked(self.encoder, chunk)
        else:
            # imap keeps order; a bounded number of chunks is in flight because imap consumes lazily
            yield from self.pool.imap(_encode_chunk, chunks)

    def encode_file(self, src: str, dst: str) -> int:
        total = count_lines(src)
        n = 0
        with atomic_output(dst) as out, tqdm(total=total, unit=" lines", desc=f"{self.args.scheme} {src}",
                                              disable=self.args.quiet, file=sys.stderr, mininterval=0.5) as bar:
            chunks = _chunks(read_lines(src, errors=self.args.errors), self.args.chunk_size)
            for encoded in self.encode_chunks(chunks):
                out.write("\n".join(encoded))
                out.write("\n")
                n += len(encoded)
                bar.update(len(encoded))
        return n


def main(argv=None) -> int:
    args = parse_args(argv)
    with FileEncoder(args) as enc:
        for src, dst in zip(args.inputs, args.outputs):
            n = enc.encode_file(src, dst)
            if not args.quiet:
                print(f"{src} -> {dst}: {n} lines", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
