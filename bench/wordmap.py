"""Wordmap vocabulary build time on >= 20,000 verb types, against the naive pairwise build in the same run.

Verb types: HanTa verbs of Multi30k (``--verbs`` file, or tagged from ``--corpus``) plus the MorphyNet verbs
(``deu.derivational.v1.tsv``, source and derived verbs) plus, when that is still short of ``--min-types``,
regular inflections of those infinitives (stem + e/st/t/en/te/ten/tet, ge+stem+t) -- real-shaped forms, labelled
as synthetic in the output.  The naive build (pair by pair, string maps) runs on a random subset; its time is
scaled by (N / n)^2 and reported as a ratio.

    python bench/wordmap.py [--verbs verbs.txt] [--subset 1500]
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from preprocess import wordmap as wm  # noqa: E402

SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "data")


def morphynet_verbs(path):
    out = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            f = line.rstrip("\n").split("\t")
            if len(f) >= 4:
                if f[3] == "V":
                    out.add(f[1])
                if f[2] == "V":
                    out.add(f[0])
    return {w for w in map(wm.normalise_verb, out) if w}


def inflect(infinitive):
    if not infinitive.endswith("en") or len(infinitive) < 5:
        return []
    s = infinitive[:-2]
    return [s + e for e in ("e", "st", "t", "te", "ten", "tet", "test")] + ["ge" + s + "t"]


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--verbs", help="verb list (e.g. from python -m preprocess.wordmap build --verbs-out)")
    p.add_argument("--corpus", default=os.path.join(SHARED, "multi30k", "train.de.gz"))
    p.add_argument("--gold", default=os.path.join(SHARED, "morph_gold", "deu.derivational.v1.tsv"))
    p.add_argument("--min-types", type=int, default=20000)
    p.add_argument("--subset", type=int, default=1500)
    args = p.parse_args(argv)
    t = time.time()
    if args.verbs:
        m30 = set(wm.extract_verbs([], extra_words=open(args.verbs, encoding="utf-8").read().split()))
    else:
        m30 = set(wm.extract_verbs(wm._open_text(args.corpus)))
    tag_s = time.time() - t
    mn = morphynet_verbs(args.gold)
    real = m30 | mn
    verbs = set(real)
    synthetic = 0
    if len(verbs) < args.min_types:
        for inf in sorted(mn):
            for form in inflect(inf):
                if form not in verbs:
                    verbs.add(form)
                    synthetic += 1
            if len(verbs) >= args.min_types:
                break
    verbs = sorted(verbs)
    n = len(verbs)
    t = time.time()
    vocab = wm.build_vocabulary(verbs)
    fast_s = time.time() - t
    rng = random.Random(0)
    sub = sorted(rng.sample(verbs, min(args.subset, n)))
    t = time.time()
    wm.build_vocabulary(sub, method="naive")
    naive_sub_s = time.time() - t
    t = time.time()
    wm.build_vocabulary(sub, method="fast")
    fast_sub_s = time.time() - t
    naive_est = naive_sub_s * (n / len(sub)) ** 2
    print(f"verb types: {n} (Multi30k HanTa {len(m30)}, MorphyNet {len(mn)}, union {len(real)}, "
          f"synthetic inflections {synthetic}); HanTa tagging {tag_s:.1f}s")
    print("| build | verb types | seconds |")
    print("| --- | ---: | ---: |")
    print(f"| indexed (numpy) | {n} | {fast_s:.1f} |")
    print(f"| indexed (numpy) | {len(sub)} | {fast_sub_s:.2f} |")
    print(f"| naive pairwise | {len(sub)} | {naive_sub_s:.2f} |")
    print(f"| naive pairwise, extrapolated x(N/n)^2 | {n} | {naive_est:.0f} |")
    print(f"speed-up on the subset: {naive_sub_s / fast_sub_s:.1f}x; full build vs extrapolated naive: "
          f"{naive_est / fast_s:.1f}x; vocabulary {len(vocab)} strings "
          f"({len(vocab.functional)} functional, {len(vocab.lexemic)} lexemic)")


if __name__ == "__main__":
    main()
