"""Benchmark BITE: preprocess.schemes.bite against a straightforward per-token implementation of the same algorithm.

    python bench/bite.py [--data ../shared/data/multi30k/train.en.gz] [--lines N] [--pretokenizer moses]
                         [--workers-check]

The reference below is the published algorithm written plainly: tag each sentence with NLTK's
``PerceptronTagger.tag``, map every tag with ``nltk.tag.mapping.map_tag``, call lemminflect's ``getLemma`` for every
inflected content word; no caching, no batching.  Both run on the same sentences (after the same pretokenisation)
and their outputs are asserted identical before any time is reported.  Words/s counts pretokenised words.

With ``--workers-check`` it also times ``python -m preprocess.encode --scheme bite`` with 1 and 2 workers on the
same file.
"""
from __future__ import annotations

import argparse
import gzip
import os
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Sequence

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run as a script: the checkout

from preprocess.common import REPO  # noqa: E402
from train_scripts.tools import SHARED_DATA  # noqa: E402

REF_LEMMA_TAGS = {"NN", "VB", "JJ", "RB", "MD", "NNP"}
REF_HAVE_INFLECTIONS = {"NOUN", "ADJ", "VERB"}


class ReferenceBite:
    """BITE as published (paper Alg. 1 / section 3.1), token by token; symbols as '[TAG]'."""

    def __init__(self):
        from nltk.tag.perceptron import PerceptronTagger
        self.tagger = PerceptronTagger()

    def tokenize_words(self, words: Sequence[str]) -> List[str]:
        from lemminflect import getLemma
        from nltk.tag.mapping import map_tag
        tagged = self.tagger.tag(list(words))
        out = []
        for word, pos in tagged:
            upos = map_tag("en-ptb", "universal", pos)
            if upos in REF_HAVE_INFLECTIONS and word not in (string.punctuation + "\u2014") \
                    and pos not in REF_LEMMA_TAGS:
                lemmas = getLemma(word, upos=upos)
                lemma = lemmas[0] if lemmas else ""   # (the authors' code indexes [0] directly)
                if not lemma:
                    lemma = word
                out.append(lemma)
                out.append("[" + pos + "]")
            else:
                out.append(word)
        return out


def read_lines(path: str, limit: int | None) -> List[str]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        lines = [l.rstrip("\n") for l in fh]
    return lines[:limit] if limit else lines


def clear_caches(tok) -> None:
    """Empty every cache of a preprocess.schemes.bite tokenizer (the tagger's word tables, BITE's (word, tag) cache)."""
    tok.tagger._reset_vocab()
    tok._word_cache.clear()
    tok._inflect_cache.clear()


def bench_tokenizer(lines: List[str], pretokenizer: str, repeats: int = 3) -> dict:
    """Best of ``repeats`` runs for each measurement (the machine is shared); our caches are emptied before
    every run, so each run of ours starts cold."""
    from preprocess.schemes.bite import BiteTokenizer
    fast = BiteTokenizer(pretokenizer=pretokenizer, tagger="nltk")
    ref = ReferenceBite()
    words = [fast.pretokenize(l) for l in lines]
    n_words = sum(map(len, words))
    for w in words[:50]:   # load lemminflect's tables and NLTK's mapping before any timing
        ref.tokenize_words(w)

    def best(fn):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
        return min(times), out

    def fast_core():
        clear_caches(fast)
        tags = fast.tagger.tag_sents(words)
        return [fast.bite_words(w, t) for w, t in zip(words, tags)]

    def fast_full():
        clear_caches(fast)
        return fast.tokenize_batch(lines)

    t_ref, ref_out = best(lambda: [ref.tokenize_words(w) for w in words])
    t_fast, fast_out = best(fast_core)
    # correctness first: identical outputs on every sentence
    mismatches = [i for i, (a, b) in enumerate(zip(ref_out, fast_out)) if a != b]
    assert not mismatches, f"{len(mismatches)} sentences differ, first: {lines[mismatches[0]]!r}"
    t_ref_full, _ = best(lambda: [ref.tokenize_words(fast.pretokenize(l)) for l in lines])
    t_full, _ = best(fast_full)
    t_pretok, _ = best(lambda: [fast.pretokenize(l) for l in lines])
    return {"sentences": len(lines), "words": n_words, "repeats": repeats,
            "ref_s": t_ref, "fast_s": t_fast, "ratio_core": t_ref / t_fast,
            "ref_full_s": t_ref_full, "fast_full_s": t_full, "ratio_full": t_ref_full / t_full,
            "pretok_s": t_pretok}


def bench_workers(path: str, pretokenizer: str) -> dict:
    """Wall and CPU time of ``preprocess.encode --scheme bite`` with 1 and 2 workers (same output asserted).
    The load average is reported too: on a shared machine the wall-clock ratio says little when the cores are
    already busy, while the CPU time shows whether the second worker adds overhead."""
    import resource
    env = dict(os.environ)
    env["PYTHONPATH"] = f"{REPO}{os.pathsep}{env.get('PYTHONPATH', '')}"
    res = {"loadavg_before": os.getloadavg()[0], "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        outs = {}
        for workers in (1, 2):
            out = os.path.join(tmp, f"out{workers}.txt")
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "preprocess.encode", "--scheme", "bite", "--pretokenizer",
                            pretokenizer, "--inputs", path, "--outputs", out, "--workers", str(workers),
                            "--quiet"], check=True, env=env, cwd=REPO)
            res[f"workers{workers}_s"] = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            res[f"workers{workers}_cpu_s"] = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
            outs[workers] = Path(out).read_text(encoding="utf-8")
        assert outs[1] == outs[2], "1 and 2 workers give different output"
    res["loadavg_after"] = os.getloadavg()[0]
    res["speedup_2_vs_1"] = res["workers1_s"] / res["workers2_s"]
    return res


def scale_case(data, tmp: str):
    """This scheme in ``bench/scale.py`` (``--tagger nltk``, on the ``--mb-bite`` input): against
    :class:`ReferenceBite` after the Moses pretokeniser, whole command and ``BiteTokenizer.tokenize``."""
    from sacremoses import MosesTokenizer
    from timing import ScaleCase, timed

    from preprocess.schemes.bite import SCHEME, BiteTokenizer

    def reference(lines, src, tmp):
        ref, moses = ReferenceBite(), MosesTokenizer(lang="en")
        return "published BITE", lambda: timed(
            lambda: [ref.tokenize_words(moses.tokenize(s, escape=False)) for s in lines])

    def apis():
        ref, moses = ReferenceBite(), MosesTokenizer(lang="en")
        tok = BiteTokenizer("moses", "nltk")
        return [("BiteTokenizer.tokenize (fairseq --tokenizer bite, hub encode)", tok.tokenize,
                 lambda s: ref.tokenize_words(moses.tokenize(s, escape=False)), lambda: clear_caches(tok))]

    return ScaleCase(["--scheme", SCHEME.name, "--tagger", "nltk"], "en-tagged", reference, apis)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(SHARED_DATA / "multi30k" / "train.en.gz"))
    ap.add_argument("--lines", type=int, default=None, help="first N lines only")
    ap.add_argument("--pretokenizer", default="moses", choices=["moses", "whitespace", "bert"])
    ap.add_argument("--repeats", type=int, default=3, help="best of N runs per measurement")
    ap.add_argument("--workers-check", action="store_true", help="also time preprocess.encode with 1 vs 2 workers")
    ap.add_argument("--vs-spaces-lines", type=int, default=29000,
                    help="English lines for the per-core ratio against the spaces scheme (default: all of Multi30k's "
                    "training side, so the spaces scheme's CPU time is well above the start-up it is corrected for; "
                    "0: skip it)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds of the per-core ratio")
    ap.add_argument("--spaces-repeat", type=int, default=8,
                    help="the spaces scheme encodes the lines this many times over (at least a second of CPU)")
    args = ap.parse_args(argv)
    os.environ.setdefault("NLTK_DATA", str(SHARED_DATA / "nltk_data"))
    if args.vs_spaces_lines:
        vs_spaces(args.data, args.vs_spaces_lines, args.rounds, args.spaces_repeat)
    lines = read_lines(args.data, args.lines)
    r = bench_tokenizer(lines, args.pretokenizer, args.repeats)
    print(f"data: {args.data} ({r['sentences']} sentences, {r['words']} words), pretokenizer={args.pretokenizer}")
    print("outputs identical to the reference: yes")
    print("| measure | reference (per token, no cache) | preprocess.schemes.bite | speed-up |")
    print("|---|---|---|---|")
    print(f"| tag + BITE only | {r['words'] / r['ref_s']:,.0f} words/s | {r['words'] / r['fast_s']:,.0f} words/s "
          f"| {r['ratio_core']:.1f}x |")
    print(f"| incl. pretokenisation (+ spacing marks) | {r['words'] / r['ref_full_s']:,.0f} words/s | "
          f"{r['words'] / r['fast_full_s']:,.0f} words/s | {r['ratio_full']:.1f}x |")
    print(f"(pretokenisation alone: {r['words'] / r['pretok_s']:,.0f} words/s = "
          f"{100 * r['pretok_s'] / r['fast_full_s']:.0f}% of our full time; best of {r['repeats']} runs each)")
    if args.workers_check:
        path = args.data if not args.lines else _slice(args.data, lines)
        try:
            w = bench_workers(path, args.pretokenizer)
        finally:
            if path != args.data:
                os.unlink(path)
        print(f"\npreprocess.encode on {r['sentences']} lines, {w['cpus']} CPUs, load average "
              f"{w['loadavg_before']:.1f} before / {w['loadavg_after']:.1f} after:")
        print("| workers | wall | CPU (all processes) |\n|---|---|---|")
        for k in (1, 2):
            print(f"| {k} | {w[f'workers{k}_s']:.1f} s | {w[f'workers{k}_cpu_s']:.1f} s |")
        print(f"2 workers vs 1: {w['speedup_2_vs_1']:.2f}x wall-clock")
    return 0


def vs_spaces(data: str, n_lines: int, rounds: int, spaces_repeat: int = 8) -> None:
    """Words per CPU second once started of ``preprocess.encode --workers 1`` for BITE (nltk and hanta taggers)
    and for the spaces scheme (the shared unigram_prime model) on the same English lines, in interleaved rounds
    (bench/scale.py's ``per_core``); the ratio is the median over rounds (the goal: >= 0.30x with nltk,
    >= 0.10x with hanta)."""
    sys.path.insert(0, str(REPO / "bench"))
    from timing import load, per_core, print_ratios, repeated, report_spaces_cpu
    lines = read_lines(data, n_lines)
    model = os.environ.get("SHARED_DATA", str(SHARED_DATA)) + "/space_models/unigram_prime.model"
    with tempfile.TemporaryDirectory() as tmp:
        src, one = os.path.join(tmp, "en.txt"), os.path.join(tmp, "one.txt")
        with open(src, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        with open(one, "w", encoding="utf-8") as fh:
            fh.write(lines[0] + "\n")
        n_words = sum(len(line.split()) for line in lines)
        print(f"## BITE encoding per core vs spaces ({len(lines)} English lines, {n_words} words, {rounds} "
              f"interleaved rounds; {load()})")
        pairs = {"spaces": ["--scheme", "spaces", "--model", model, "--spaces", "keep"],
                 "bite-nltk": ["--scheme", "bite", "--tagger", "nltk"],
                 "bite-hanta": ["--scheme", "bite", "--tagger", "hanta"]}
        spaces_words = repeated(src, spaces_repeat, os.path.join(tmp, "en.spaces.txt"))
        print(f"(spaces encodes the same lines {spaces_repeat} times, {spaces_words} words, for a CPU time well above "
              f"the timer's noise; BITE each line once)")
        res = per_core(pairs, src, one, n_words, tmp, rounds,
                       inputs={"spaces": (os.path.join(tmp, "en.spaces.txt"), spaces_words)})
        report_spaces_cpu(res, spaces_words, "spaces")
    print_ratios(res, "spaces", "spaces (unigram_prime)", ["bite-nltk", "bite-hanta"])
    print("(bite-hanta's second pass is not a per-word figure: HantaTagger remembers up to 200,000 tagged sentences, "
          "so it re-tags nothing)")
    print(f"after: {load()}\n")


def _slice(path: str, lines: List[str]) -> str:
    fd, tmp = tempfile.mkstemp(suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return tmp


if __name__ == "__main__":
    sys.exit(main())
