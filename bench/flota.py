"""FLOTA speed: words/s of preprocess.schemes.flota against a straightforward implementation of the same recursion.

    python bench/flota.py [--data ../shared/data] [--k 3] [--inventory bert-base-uncased] [--repeat 1]

Both run in this process on one core over all ArXiv-L titles (cs, maths, physics; train + dev + test).  The
straightforward version follows the paper's pseudocode literally: for every recursive call it scans all
substrings from the longest, builds the residue string for the match, and it remembers nothing between words.
The outputs are asserted identical title by title.  Times are CPU seconds of this process, the best of
``--repeat`` passes; the implementations alternate every 500 titles within a pass, and the speed-up is the
median over passes of the per-pass ratio.  The library is timed three times: as shipped (with its word cache),
with the cache disabled (``cache_size=0``), which measures the search alone, and with the cache disabled and the
search run as plain Python (``preprocess/schemes/flota/search.py`` not compiled: a machine without a C compiler).
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run as a script: the checkout

from preprocess.schemes.flota import STYLES, FlotaTokenizer, PythonSearchFlotaTokenizer  # noqa: E402
from train_scripts.tools import SHARED_DATA  # noqa: E402

SPLIT = re.compile(r"[\w]+|[^\s\w]")


class StraightforwardFlota:
    """The recursion as written in Figure 1, with the released code's details and no optimisation.

    Its cost per substring is the released code's (a slice, ``in`` tests of the two forms, no helper call): timed
    against ``src/flota.py`` of the released code on the titles below it is 1.02-1.05x faster, so speed-ups against
    it are, if anything, understated."""

    def __init__(self, vocab: set, style: str, k: int):
        self.vocab, self.k = vocab, k
        self.marker, self.marker_on_start, self.max_len = STYLES[style]

    def max_subword_split(self, w: str):
        # the two forms are tried inline, as in the released code (a helper call here made this baseline 1.25x
        # slower than the released code, and every speed-up against it look better than it is)
        vocab, m, on_start = self.vocab, self.marker, self.marker_on_start
        for length in range(min(len(w), self.max_len), 0, -1):
            for i in range(len(w) - length + 1):
                if w[i] == "-":
                    continue
                s = w[i:i + length]
                if (i == 0) == on_start:   # marked form first
                    if m + s in vocab:
                        return m + s, w[:i] + "-" * length + w[i + length:], i
                    if s in vocab:
                        return s, w[:i] + "-" * length + w[i + length:], i
                else:
                    if s in vocab:
                        return s, w[:i] + "-" * length + w[i + length:], i
                    if m + s in vocab:
                        return m + s, w[:i] + "-" * length + w[i + length:], i
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
        start, cont = (self.marker + w, w) if self.marker_on_start else (w, self.marker + w)
        if start in self.vocab:
            return [start]
        if cont in self.vocab:
            return [cont]
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


def scale_case(data, tmp: str):
    """This scheme in ``bench/scale.py``: the bert-base-uncased vocabulary against :class:`StraightforwardFlota`
    (whole command and ``FlotaTokenizer.tokenize``, with and without its word cache), also through the large
    input."""
    from timing import ScaleCase, timed

    from preprocess.schemes.flota import SCHEME

    vocab = str(data / "flota_vocabs" / "bert-base-uncased.txt")

    def straightforward():
        with open(vocab, encoding="utf-8") as fh:
            return StraightforwardFlota({t for t in fh.read().split("\n") if t}, "wordpiece", 3)

    def reference(lines, src, tmp):
        ref = straightforward()
        return "published FLOTA", lambda: timed(lambda: [ref.tokenize(s.lower()) for s in lines])

    def apis():
        ref = straightforward()
        ours = FlotaTokenizer(vocab, "wordpiece", k=3, cache_size=0)
        cached = FlotaTokenizer(vocab, "wordpiece", k=3)
        return [("FlotaTokenizer.tokenize, no word cache", ours.tokenize, lambda s: ref.tokenize(s.lower()),
                 lambda: None),
                ("FlotaTokenizer.tokenize (fairseq --bpe flota)", cached.tokenize, lambda s: ref.tokenize(s.lower()),
                 cached._cache.clear)]

    return ScaleCase(["--scheme", SCHEME.name, "--flota-vocab", vocab], "en", reference, apis, large=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--inventory", default="bert-base-uncased")
    parser.add_argument("--style", default="wordpiece")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3, help="passes (best time, median speed-up)")
    args = parser.parse_args(argv)

    titles = load_titles(os.path.join(args.data, "flota_arxiv"))
    n_words = sum(len(SPLIT.findall(t)) for t in titles)
    vocab_path = os.path.join(args.data, "flota_vocabs", f"{args.inventory}.txt")
    with open(vocab_path, encoding="utf-8") as fh:
        vocab = {t for t in fh.read().split("\n") if t}

    naive = StraightforwardFlota(vocab, args.style, args.k)
    nocache = FlotaTokenizer(vocab_path, args.style, k=args.k, cache_size=0)
    python = PythonSearchFlotaTokenizer(vocab_path, args.style, k=args.k, cache_size=0)
    names = ("naive", "python", "nocache", "lib")
    passes = []
    for _ in range(args.repeat):
        lib = FlotaTokenizer(vocab_path, args.style, k=args.k)  # fresh: the word cache starts empty every pass
        fns = {"naive": naive.tokenize, "python": python.tokenize, "nocache": nocache.tokenize, "lib": lib.tokenize}
        seconds = dict.fromkeys(names, 0.0)
        outs = {name: [] for name in names}
        # they alternate every 500 titles: on a shared machine whose speed drifts within seconds, each group of
        # chunks sees the same drift
        for i in range(0, len(titles), 500):
            for name in names:
                t, out = timed(fns[name], titles[i:i + 500])
                seconds[name] += t
                outs[name].extend(out)
        for name in names[1:]:
            assert outs[name] == outs["naive"], f"library output ({name}) differs from the straightforward version"
        passes.append(seconds)

    def speedup(name: str) -> float:   # the median pass's
        return sorted(p["naive"] / p[name] for p in passes)[len(passes) // 2]

    compiled = PythonSearchFlotaTokenizer is not FlotaTokenizer
    search = "compiled (preprocess.schemes.flota._search)" if compiled else "plain Python (not compiled here)"
    print(f"{len(titles)} ArXiv-L titles, {n_words} words, {args.inventory}, k={args.k}, one core; search: {search}")
    print("| implementation | CPU seconds | words/s | speed-up |")
    print("|---|---|---|---|")
    for name, key in (("straightforward recursion", "naive"),
                      ("preprocess.schemes.flota, cache off, search as plain Python", "python"),
                      ("preprocess.schemes.flota, cache off", "nocache"),
                      ("preprocess.schemes.flota (default, word cache)", "lib")):
        t = min(p[key] for p in passes)
        print(f"| {name} | {t:.2f} | {n_words / t:,.0f} | {speedup(key):.1f}x |")
    print("outputs identical: yes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
