"""Wordmap at corpus scale: encoding speed per core against the spaces scheme, the learn step with 1 and 2
workers, HanTa tagging against HanTa itself, and the vocabulary build against the naive pairwise build.

``encode``: words per CPU second once started (``preprocess.encode --workers 1``; CPU time of the command minus
that of the same command on one line) of ``--scheme wordmap`` and of ``--scheme spaces`` with Wordmap's own base
SentencePiece model, on the same German text (``--encode-lines`` of Multi30k), in interleaved rounds; the ratio is the
median over rounds (the goal: at least 0.10x, aim 0.25x).  ``tagging``: HanTa's ``tag_sent`` (taglevel 1, as
Wordmap used it, and 0) against ``preprocess.tagging.hanta_fast`` on the same sentences, tags asserted identical.
``learn``: ``binarize --scheme wordmap --learn-only`` (tagging, verbs, vocabulary, base model, encoding the
training text, dictionary) with ``--workers 1`` and ``2``, wall clock.

Vocabulary build:

Verb types: HanTa verbs of Multi30k (``--verbs`` file, or tagged from ``--corpus``) plus the MorphyNet verbs
(``deu.derivational.v1.tsv``, source and derived verbs) plus, when that is still short of ``--min-types``,
regular inflections of those infinitives (stem + e/st/t/en/te/ten/tet, ge+stem+t) -- real-shaped forms, labelled
as synthetic in the output.  The naive build (pair by pair, string maps) runs on a random subset; its time is
scaled by (N / n)^2 and reported as a ratio.

    python bench/wordmap.py [--sections encode,tagging,learn,build] [--encode-lines 29000] [--lines 6000]
                             [--verbs verbs.txt]
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run as a script: the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import load, per_core, print_ratios, repeated, report_spaces_cpu  # noqa: E402

from preprocess.common import REPO  # noqa: E402
from preprocess.schemes import wordmap as wm  # noqa: E402
from preprocess.schemes.wordmap import maps, tagging  # noqa: E402
from train_scripts.tools import SHARED_DATA  # noqa: E402

SHARED = os.environ.get("SHARED_DATA") or str(SHARED_DATA)


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
    return {w for w in map(maps.normalise_verb, out) if w}


def inflect(infinitive):
    if not infinitive.endswith("en") or len(infinitive) < 5:
        return []
    s = infinitive[:-2]
    return [s + e for e in ("e", "st", "t", "te", "ten", "tet", "test")] + ["ge" + s + "t"]


def _head(path: str, n: int, dst: str) -> list:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = [line.rstrip("\n") for line in itertools.islice(fh, n)]
    with open(dst, "w", encoding="utf-8") as fh:
        fh.write("".join(line + "\n" for line in lines))
    return lines


def bench_encode(corpus: str, lines_n: int, rounds: int, tmp: str, spaces_repeat: int = 8) -> None:
    src = os.path.join(tmp, "de.txt")
    lines = _head(corpus, lines_n, src)
    one = os.path.join(tmp, "one.txt")
    with open(one, "w", encoding="utf-8") as fh:
        fh.write(lines[0] + "\n")
    vocab = os.path.join(tmp, "wm.txt")
    wm.build_vocabulary(wm.extract_verbs_file(src)).save(vocab)
    spm_model = wm.train_spm(lines, os.path.join(tmp, "wmspm"), 8000, "unigram")
    n_words = sum(len(line.split()) for line in lines)
    pairs = {"spaces": ["--scheme", "spaces", "--model", spm_model, "--spaces", "keep"],
             "wordmap": ["--scheme", "wordmap", "--wordmap-vocab", vocab, "--wordmap-spm", spm_model]}
    print(f"## Wordmap encoding per core vs spaces ({lines_n} German Multi30k lines, {n_words} words, "
          f"{rounds} interleaved rounds; {load()})")
    spaces_src = os.path.join(tmp, "de.spaces.txt")
    spaces_words = repeated(src, spaces_repeat, spaces_src)
    print(f"(spaces encodes the same lines {spaces_repeat} times, {spaces_words} words, for a CPU time well above "
          f"the timer's noise; Wordmap each line once)")
    res = per_core(pairs, src, one, n_words, tmp, rounds, inputs={"spaces": (spaces_src, spaces_words)})
    report_spaces_cpu(res, spaces_words, "spaces")
    print_ratios(res, "spaces", "spaces (Wordmap's base model)", ["wordmap"])
    print(f"after: {load()}")


def bench_tagging(corpus: str, lines_n: int) -> None:
    from preprocess.tagging import hanta_fast
    sents = [[m.group() for m in tagging._TAG_TOKEN_RE.finditer(line)]
             for line in _head(corpus, lines_n, os.devnull)]
    n = sum(map(len, sents))
    h = hanta_fast.load("morphmodel_ger.pgz").hanta
    fast = hanta_fast.fast_class()("morphmodel_ger.pgz", h)   # its own caches, empty (load()'s may be warm)
    plain = hanta_fast.FastHanta("morphmodel_ger.pgz", h)     # the same, run as plain Python
    kind = "compiled" if type(fast) is not hanta_fast.FastHanta else "plain Python: preprocess.tagging._hanta_fast not built"
    print(f"## HanTa tagging ({lines_n} German lines, {n} tokens; CPU time of this process; {load()})")
    rows = []
    for name, fn in (("HanTa tag_sent, taglevel=1 (Wordmap before)", lambda s: h.tag_sent(s, taglevel=1)),
                     ("HanTa tag_sent, taglevel=0", lambda s: h.tag_sent(s, taglevel=0)),
                     ("hanta_fast as plain Python, first pass (caches empty)", plain.tag_sent),
                     ("hanta_fast as plain Python, second pass (words cached)", plain.tag_sent),
                     (f"hanta_fast ({kind}), first pass (caches empty)", fast.tag_sent),
                     (f"hanta_fast ({kind}), second pass (words cached)", fast.tag_sent)):
        t = time.process_time()
        out = [fn(s) for s in sents]
        rows.append((name, time.process_time() - t, out))
    ref = [[t for _w, _l, t in r] for r in rows[0][2]]
    assert all(r[2] == ref for r in rows[1:]), "tags differ"
    print("| tagger | words per CPU second | vs HanTa taglevel=1 |")
    print("| --- | ---: | ---: |")
    for name, secs, _ in rows:
        print(f"| {name} | {n / secs:,.0f} | {rows[0][1] / secs:.1f}x |")


def bench_learn(data_dir: str, lines_n: int, tmp: str) -> None:
    raw = os.path.join(tmp, "raw")
    os.makedirs(raw, exist_ok=True)
    for lang in ("de", "en"):
        _head(os.path.join(data_dir, f"train.{lang}.gz"), lines_n, os.path.join(raw, f"train.{lang}"))
        _head(os.path.join(data_dir, f"val.{lang}.gz"), 100, os.path.join(raw, f"valid.{lang}"))
    words = sum(len(line.split()) for line in open(os.path.join(raw, "train.de"), encoding="utf-8"))
    print(f"## Wordmap learn step (binarize --learn-only, {lines_n} lines, {words} German words; {load()})")
    print("| workers | seconds (wall) | German words/s |")
    print("| ---: | ---: | ---: |")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for workers in (1, 2):
        out = os.path.join(tmp, f"learn{workers}")
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "train_scripts.binarize", "--scheme", "wordmap", "--data", raw,
                        "--out", out, "--learn-only", "--workers", str(workers), "--vocab-size", "4000"],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        secs = time.perf_counter() - t
        print(f"| {workers} | {secs:.1f} | {words / secs:,.0f} |")
    print(f"after: {load()}")


def scale_case(data, tmp: str):
    """This scheme in ``bench/scale.py``: German (the ``--mb-slow`` input), a vocabulary built from the verbs of
    Multi30k's first 3,000 German training lines over the shared unigram_default model; no published code to
    compare with (no reference row)."""
    from timing import ScaleCase

    vocab = os.path.join(tmp, "wordmap.vocab")
    with gzip.open(data / "multi30k" / "train.de.gz", "rt", encoding="utf-8") as fh:
        verbs = wm.extract_verbs(line.rstrip("\n") for _, line in zip(range(3000), fh))
    wm.build_vocabulary(verbs).save(vocab)
    assert isinstance(wm.WordmapVocabulary.load(vocab), wm.WordmapVocabulary)
    return ScaleCase(["--scheme", wm.SCHEME.name, "--wordmap-vocab", vocab, "--wordmap-spm",
                      str(data / "space_models" / "unigram_default.model")], "de")


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--sections", default="encode,tagging,learn,build")
    p.add_argument("--lines", type=int, default=6000, help="German lines for tagging and learn")
    p.add_argument("--encode-lines", type=int, default=29000,
                   help="German lines for encode (default: all of Multi30k's training side: on 6,000 lines the "
                   "spaces scheme's CPU time is a few hundredths of a second beside a start-up of half a second, "
                   "so the subtraction's noise decided the ratio, and Wordmap's per-word caches were still cold)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--spaces-repeat", type=int, default=8,
                   help="the spaces scheme encodes the lines this many times over (at least a second of CPU)")
    p.add_argument("--verbs", help="verb list (e.g. from python -m preprocess.schemes.wordmap build --verbs-out)")
    p.add_argument("--corpus", default=os.path.join(SHARED, "multi30k", "train.de.gz"))
    p.add_argument("--gold", default=os.path.join(SHARED, "morph_gold", "deu.derivational.v1.tsv"))
    p.add_argument("--min-types", type=int, default=20000)
    p.add_argument("--subset", type=int, default=1500)
    args = p.parse_args(argv)
    sections = args.sections.split(",")
    tmp = tempfile.mkdtemp(prefix="bench-wordmap-")
    try:
        if "encode" in sections:
            bench_encode(args.corpus, args.encode_lines, args.rounds, tmp, args.spaces_repeat)
        if "tagging" in sections:
            bench_tagging(args.corpus, min(args.lines, 2000))
        if "learn" in sections:
            bench_learn(os.path.dirname(args.corpus), args.lines, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if "build" in sections:
        bench_build(args)


def bench_build(args):
    t = time.time()
    if args.verbs:
        m30 = set(wm.extract_verbs([], extra_words=open(args.verbs, encoding="utf-8").read().split()))
    else:
        m30 = set(wm.extract_verbs(tagging.open_text(args.corpus)))
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
