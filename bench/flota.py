"""FLOTA speed: words/s of preprocess.flota against a straightforward implementation of the same recursion.

    python bench/flota.py [--data ../shared/data] [--k 3] [--inventory bert-base-uncased] [--repeat 1]

Both run in this process on one core over all ArXiv-L titles (cs, maths, physics; train + dev + test).  The
straightforward version follows the paper's pseudocode literally: for every recursive call it scans all
substrings from the longest, builds the residue string for the match, and it remembers nothing between words.
The outputs are asserted identical title by title.  Times are CPU seconds of this process, best of
``--repeat`` interleaved rounds.  The library is timed twice: as shipped (with its word
cache) and with the cache disabled (``cache_size=0``), which measures the search alone.
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from preprocess.flota import STYLES, FlotaTokenizer  # noqa: E402

SPLIT = re.compile(r"[\w]+|[^\s\w]")


class StraightforwardFlota:
    """The recursion as written in Figure 1, with the released code's details and no optimisation."""

    def __init__(self, vocab: set, style: str, k: int):
        self.vocab, self.k = vocab, k
        self.marker, self.marker_on_start, self.max_len = STYLES[style]

    def forms(self, s: str, i: int) -> list:
        start, cont = (self.marker + s, s) if self.marker_on_start else (s, self.marker + s)
        return [start, cont] if i == 0 else [cont, start]

    def max_subword_split(self, w: str):
        for length in range(min(len(w), self.max_len), 0, -1):
            for i in range(len(w) - length + 1):
                if w[i] == "-":
                    continue
                s = w[i:i + length]
                for form in self.forms(s, i):
                    if form in self.vocab:
                        return form, w[:i] + "-" * length + w[i + length:], i
        return None, None, None

    def flota_tokenize(self, w: str, k: int) -> dict:
        s, r, i = self.max_subword_split(w)
        if s is None:
            return {}
        if k == 1 or r == "-" * len(r):
            return {i: s}
        table = self.flota_tokenize(r, k - 1)
        table[i] = s
        return table

    def tokenize_word(self, w: str) -> list:
        for form in self.forms(w, 0):
            if form in self.vocab:
                return [form]
        return [s for _, s in sorted(self.flota_tokenize(w, self.k).items())]

    def tokenize(self, text: str) -> list:
        out = []
        for w in SPLIT.findall(text):
            out.extend(self.tokenize_word(w))
        return out


def load_titles(folder: str) -> list:
    titles = []
    for area in ("cs", "maths", "physics"):
        for split in ("train", "dev", "test"):
            with open(os.path.join(folder, f"arxiv_{area}_1e+03_{split}.csv"), encoding="utf-8", newline="") as fh:
                titles.extend(row["text"] for row in csv.DictReader(fh))
    return titles


def timed(fn, titles):
    """CPU seconds of this process (one core; not inflated by other processes on a shared machine)."""
    start = time.process_time()
    out = [fn(t) for t in titles]
    return time.process_time() - start, out


def main(argv=None) -> int:
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.path.join(os.path.dirname(repo), "shared", "data"))
    parser.add_argument("--inventory", default="bert-base-uncased")
    parser.add_argument("--style", default="wordpiece")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3, help="best of N interleaved rounds")
    args = parser.parse_args(argv)

    titles = load_titles(os.path.join(args.data, "flota_arxiv"))
    n_words = sum(len(SPLIT.findall(t)) for t in titles)
    vocab_path = os.path.join(args.data, "flota_vocabs", f"{args.inventory}.txt")
    with open(vocab_path, encoding="utf-8") as fh:
        vocab = {t for t in fh.read().split("\n") if t}

    naive = StraightforwardFlota(vocab, args.style, args.k)
    nocache = FlotaTokenizer(vocab_path, args.style, k=args.k, cache_size=0)
    best = {"naive": None, "nocache": None, "lib": None}
    for _ in range(args.repeat):  # interleaved rounds, so that load from other processes hits all three alike
        lib = FlotaTokenizer(vocab_path, args.style, k=args.k)  # fresh: the word cache starts empty every round
        for name, fn in (("naive", naive.tokenize), ("nocache", nocache.tokenize), ("lib", lib.tokenize)):
            t, out = timed(fn, titles)
            best[name] = t if best[name] is None else min(best[name], t)
            if name == "naive":
                out_naive = out
            elif name == "nocache":
                out_nocache = out
            else:
                out_lib = out
    t_naive, t_nocache, t_lib = best["naive"], best["nocache"], best["lib"]
    assert out_lib == out_naive, "library output differs from the straightforward implementation"
    assert out_nocache == out_naive, "library output (no cache) differs from the straightforward implementation"

    print(f"{len(titles)} ArXiv-L titles, {n_words} words, {args.inventory}, k={args.k}, one core")
    print("| implementation | CPU seconds | words/s | speed-up |")
    print("|---|---|---|---|")
    for name, t in (("straightforward recursion", t_naive), ("preprocess.flota, cache off", t_nocache),
                    ("preprocess.flota (default, word cache)", t_lib)):
        print(f"| {name} | {t:.2f} | {n_words / t:,.0f} | {t_naive / t:.1f}x |")
    print("outputs identical: yes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
