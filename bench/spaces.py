"""Throughput of ``preprocess.encode --scheme spaces`` against a plain SentencePiece loop, in one run.

    python bench/spaces.py [--data ../shared/data/multi30k] [--repeat 8] [--rounds 3]

The corpus is Multi30k train (En + De), repeated ``--repeat`` times so each timing is long enough to measure.
Baseline: read the file, ``SentencePieceProcessor.encode(line, out_type=str)`` per line, write the joined pieces.
Both write real files; the best of ``--rounds`` is kept; ratios are what to compare, not absolute numbers.
"""
from __future__ import annotations

import argparse
import gzip
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run as a script: the checkout

import sentencepiece as spm  # noqa: E402

from preprocess import encode  # noqa: E402
from preprocess.schemes import spaces  # noqa: E402
from train_scripts.tools import SHARED_DATA  # noqa: E402


def plain_loop(model: str, src: str, dst: str) -> None:
    sp = spm.SentencePieceProcessor(model_file=model)
    with open(src, encoding="utf-8") as fin, open(dst, "w", encoding="utf-8") as fout:
        for line in fin:
            fout.write(" ".join(sp.encode(line.rstrip("\n"), out_type=str)) + "\n")


def best_of(rounds: int, fn) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def scale_case(data, tmp: str):
    """This scheme in ``bench/scale.py``: the shared unigram_prime model against the C++ ``spm_encode`` (Debian
    package ``sentencepiece``), also through the large input."""
    import shutil
    import subprocess

    from timing import ScaleCase

    model = str(data / "space_models" / "unigram_prime.model")

    def reference(lines, src, tmp):
        exe = shutil.which("spm_encode")
        if not exe:
            print("(spm_encode not found: install the Debian package sentencepiece to compare spaces with it)",
                  file=sys.stderr)
            return "spm_encode (absent)", None
        out = os.path.join(tmp, "spm.out")

        def run():
            with open(src, "rb") as fin, open(out, "wb") as fout:
                t0 = time.perf_counter()
                subprocess.run([exe, "--model", model, "--output_format", "piece"], stdin=fin, stdout=fout,
                               check=True)
                return time.perf_counter() - t0
        return "spm_encode (C++)", run

    return ScaleCase(["--scheme", spaces.SCHEME.name, "--model", model], "en", reference, large=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(SHARED_DATA / "multi30k"))
    ap.add_argument("--repeat", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--vocab-size", type=int, default=8000)
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        lines = []
        for lang in ("en", "de"):
            with gzip.open(os.path.join(args.data, f"train.{lang}.gz"), "rt", encoding="utf-8") as fh:
                lines += fh.read().splitlines()
        train_txt = os.path.join(tmp, "train.txt")
        with open(train_txt, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "w", encoding="utf-8") as fh:
            for _ in range(args.repeat):
                fh.write("\n".join(lines) + "\n")
        n_words = sum(len(line.split()) for line in lines) * args.repeat
        model = spaces.train([train_txt], os.path.join(tmp, "sp"), "unigram", "prime", args.vocab_size, seed=1)

        out = os.path.join(tmp, "out.txt")
        t_plain = best_of(args.rounds, lambda: plain_loop(model, corpus, out))
        expected = open(out, encoding="utf-8").read()
        print(f"corpus: Multi30k train en+de x{args.repeat} = {n_words:,} words; unigram' {args.vocab_size}")
        print(f"plain SentencePiece loop : {n_words / t_plain:12,.0f} words/s  (1.00x)")
        results = {}
        for workers in (1, 2):
            argv_enc = ["--scheme", "spaces", "--model", model, "--inputs", corpus, "--outputs", out,
                        "--workers", str(workers), "--quiet"]
            t = best_of(args.rounds, lambda argv=argv_enc: encode.main(argv))
            assert open(out, encoding="utf-8").read() == expected, "encoder output differs from the plain loop"
            results[workers] = t_plain / t
            print(f"preprocess.encode -w {workers}: {n_words / t:12,.0f} words/s  ({t_plain / t:.2f}x)")
        print(f"goals: >= 0.9x on 1 worker ({'met' if results[1] >= 0.9 else 'NOT met'}), "
              f">= 1.7x on 2 workers ({'met' if results[2] >= 1.7 else 'NOT met'}) on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
