"""How the cost of each step grows with the corpus, for every scheme (``make bench-scale``).

    python bench/scale_corpus.py [--data ../shared/data/english_lm] [--sizes 4M,16M,65M] [--schemes spaces,bite]
        [--workers 2] [--vocab-size 8000] [--out-dir bench/results]

For each corpus size (words) a training text ``train.en`` is built from the shared English corpus (``*.txt.gz``
in ``--data``, 4.1M words, read in file-name order); a size above the corpus repeats it (whole passes, then the
start of one more), and the result says by how many times: repeated text is easier for the per-word caches of
BITE, Wordmap and FLOTA than new text of the same size would be, so their encode times at the repeated sizes
are a lower bound.  ``valid.en`` is the first 1,000 lines, the same at every size.

Two steps are measured per scheme and size, each a fresh process (``morphtok-binarize --lm``, default options but
``--vocab-size`` and ``--workers``, into a new folder):

* ``learn``: ``--learn-only`` (the models and dictionaries, and whatever a scheme encodes while learning);
* ``binarize``: the whole path end to end (learn, encode, ``fairseq-preprocess``);
* ``encode+preprocess``: the difference of the two (wall and CPU only; peak memory is not a difference).

Per run: wall clock, CPU (user + system of every process of the run) and peak RSS, the largest resident set
of any one process of the run (``getrusage(RUSAGE_CHILDREN)`` of a fresh measuring process: concurrent workers
are not added up).  Per scheme and step, the growth exponent of each figure is the least-squares slope of
log(figure) over log(words): 1.0 is linear, 0 is flat.  Wordmap segments German verbs; it is run on this English
text with ``--wordmap-langs en`` (the cost of its path, not a meaningful segmentation).

The result is written as ``DATE-TIME-scale-corpus.md`` and ``.json`` into ``--out-dir``, with the machine's load
before and after each run: on a shared machine the times mean little when the cores are busy.
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEFAULT_SIZES = "4M,16M,65M"
VALID_LINES = 1000
LANG = "en"


def language_args(scheme: str, lang: str = LANG) -> list[str]:
    """The options a scheme needs here beyond the defaults: every ``*_langs`` option of its recipe (the languages
    the scheme applies to) whose default leaves out the corpus's language (Wordmap's, German by default)."""
    import dataclasses

    from train_scripts.schemes import get_scheme

    out = []
    for f in dataclasses.fields(get_scheme(scheme).Options):
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
        if f.name.endswith("_langs") and lang not in (default or ()):
            out += ["--" + f.name.replace("_", "-"), lang]
    return out


def parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a word count: {text!r} (e.g. 20k, 4M, 65000000)")
    return int(float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6}[m.group(2).lower()])


def corpus_files(data: Path) -> list[Path]:
    files = sorted(data.glob("*.txt.gz")) + sorted(data.glob("*.txt"))
    if not files:
        sys.exit(f"error: no *.txt.gz or *.txt in {data}")
    return files


def read_corpus(files: list[Path]):
    for path in files:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                yield line.rstrip("\n")


def base_words(files: list[Path]) -> int:
    return sum(len(line.split()) for line in read_corpus(files))


def build_corpus(files: list[Path], words: int, folder: Path) -> dict:
    """``folder/train.en`` of at least ``words`` words (whole lines; the corpus repeated as often as needed) and
    ``folder/valid.en``; returns what was written."""
    folder.mkdir(parents=True, exist_ok=True)
    written_words = lines = passes = 0
    with open(folder / "train.en", "w", encoding="utf-8") as out:
        while written_words < words:
            passes += 1
            before = written_words
            for line in read_corpus(files):
                out.write(line + "\n")
                lines += 1
                written_words += len(line.split())
                if written_words >= words:
                    break
            if written_words == before:
                sys.exit("error: the corpus has no words")
    with open(folder / "valid.en", "w", encoding="utf-8") as out:
        for i, line in enumerate(read_corpus(files)):
            if i >= VALID_LINES:
                break
            out.write(line + "\n")
    return {"words": written_words, "lines": lines, "passes": passes}


def measure(cmd: list[str], env: dict) -> dict:
    """Run ``cmd`` in a fresh measuring process; wall, CPU and peak RSS of everything it ran."""
    probe = ("import json, resource, subprocess, sys, time\n"
             "t = time.monotonic()\n"
             "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
             "wall = time.monotonic() - t\n"
             "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
             "print(json.dumps({'rc': p.returncode, 'wall_s': wall, 'cpu_s': r.ru_utime + r.ru_stime,\n"
             "                  'peak_rss_mb': r.ru_maxrss / 1024, 'stderr': p.stderr[-2000:]}))\n")
    load_before = os.getloadavg()[0]
    proc = subprocess.run([sys.executable, "-c", probe, *cmd], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"measuring process failed: {proc.stderr[-2000:]}")
    result = json.loads(proc.stdout)
    result.update(load_before=round(load_before, 2), load_after=round(os.getloadavg()[0], 2))
    return result


def slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log(y) over log(x); None with fewer than two usable points."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    var = sum((p[0] - mx) ** 2 for p in pts)
    return None if var == 0 else sum((p[0] - mx) * (p[1] - my) for p in pts) / var


def binarize_cmd(scheme: str, raw: Path, out: Path, args, learn_only: bool) -> list[str]:
    cmd = [sys.executable, "-m", "train_scripts.binarize", "--lm", "--scheme", scheme, "--data", str(raw),
           "--src", LANG, "--out", str(out), "--workers", str(args.workers), "--vocab-size", str(args.vocab_size),
           *language_args(scheme)]
    return cmd + (["--learn-only"] if learn_only else [])


def run_all(args) -> dict:
    from preprocess import registry
    from train_scripts.tools import child_env

    known = registry.recipe_names()
    schemes = args.schemes or known
    unknown = [s for s in schemes if s not in known]
    if unknown:
        sys.exit(f"error: unknown scheme(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    files = corpus_files(args.data)
    base = base_words(files)
    env = child_env()
    env.setdefault("OMP_NUM_THREADS", "1")
    work = Path(tempfile.mkdtemp(prefix="scale-corpus-", dir=args.work_dir))
    rows, corpora = [], []
    try:
        for size in sorted(args.sizes):
            raw = work / f"raw-{size}"
            info = build_corpus(files, size, raw)
            info.update(size=size, repeats=round(info["words"] / base, 3))
            corpora.append(info)
            print(f"corpus {size:,} words: {info['words']:,} words, {info['lines']:,} lines, "
                  f"{info['repeats']}x the shared corpus", file=sys.stderr)
            for scheme in schemes:
                for step, learn_only in (("learn", True), ("binarize", False)):
                    out = work / f"out-{scheme}-{size}-{step}"
                    result = measure(binarize_cmd(scheme, raw, out, args, learn_only), env)
                    shutil.rmtree(out, ignore_errors=True)
                    row = {"scheme": scheme, "step": step, "size": size, "words": info["words"], **result}
                    if result["rc"] != 0:
                        row["error"] = result["stderr"].strip().splitlines()[-1:] or ["(no message)"]
                    del row["stderr"]
                    rows.append(row)
                    print(f"  {scheme:13} {step:9} wall {result['wall_s']:8.1f}s  cpu {result['cpu_s']:8.1f}s  "
                          f"peak {result['peak_rss_mb']:7.0f} MB  rc {result['rc']}", file=sys.stderr)
            shutil.rmtree(raw, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for scheme in schemes:   # encode + fairseq-preprocess: binarize minus learn, per size
        for size in sorted(args.sizes):
            got = {r["step"]: r for r in rows if r["scheme"] == scheme and r["size"] == size and r["rc"] == 0}
            if {"learn", "binarize"} <= set(got):
                rows.append({"scheme": scheme, "step": "encode+preprocess", "size": size,
                             "words": got["binarize"]["words"], "rc": 0,
                             "wall_s": max(0.0, got["binarize"]["wall_s"] - got["learn"]["wall_s"]),
                             "cpu_s": max(0.0, got["binarize"]["cpu_s"] - got["learn"]["cpu_s"]),
                             "peak_rss_mb": None})
    growth = []
    for scheme in schemes:
        for step in ("learn", "binarize", "encode+preprocess"):
            sel = sorted((r for r in rows if r["scheme"] == scheme and r["step"] == step and r["rc"] == 0),
                         key=lambda r: r["words"])
            words = [r["words"] for r in sel]
            growth.append({"scheme": scheme, "step": step, "points": len(sel),
                           **{f"{k}_exponent": slope(words, [r[k] for r in sel])
                              for k in ("wall_s", "cpu_s", "peak_rss_mb")}})
    return {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "machine": machine(), "base_words": base,
            "data": str(args.data), "workers": args.workers, "vocab_size": args.vocab_size,
            "sizes": sorted(args.sizes), "corpora": corpora, "runs": rows, "growth": growth}


def machine() -> dict:
    import sentencepiece
    info = {"cpus": os.cpu_count(), "python": platform.python_version(), "sentencepiece": sentencepiece.__version__}
    try:
        info["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                        text=True).stdout.strip()
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as fh:
            info["mem_gb"] = round(int(re.search(r"MemTotal:\s+(\d+)", fh.read()).group(1)) / 2**20, 1)
    except (OSError, AttributeError):
        pass
    return info


def _fmt(value, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def markdown(result: dict) -> str:
    m = result["machine"]
    out = [f"# Scaling benchmark (`make bench-scale`), {result['date']}", "",
           f"Machine: {m.get('cpus')} cores, {m.get('mem_gb', '?')} GB, Python {m.get('python')}, SentencePiece "
           f"{m.get('sentencepiece')}, commit {m.get('commit', '?')}.  `morphtok-binarize --lm --workers "
           f"{result['workers']} --vocab-size {result['vocab_size']}`, default options otherwise.", "",
           f"Corpus: `{result['data']}` ({result['base_words']:,} words), built to each size; sizes above it "
           "repeat it (the per-word caches of BITE, Wordmap and FLOTA gain from repeated text: their times at "
           "repeated sizes are a lower bound for new text).", "",
           "| size (words) | lines | repeats of the corpus |", "| ---: | ---: | ---: |"]
    out += [f"| {c['words']:,} | {c['lines']:,} | {c['repeats']} |" for c in result["corpora"]]
    out += ["", "## Runs", "", "Peak RSS: the largest single process of the run (workers are not added up).", "",
            "Cores busy: CPU over wall clock, the parallelism the run reached (at most the cores it was given).", "",
            "| scheme | step | words | wall s | CPU s | cores busy | peak RSS MB | load before/after | rc |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    for r in result["runs"]:
        load = f"{r['load_before']}/{r['load_after']}" if "load_before" in r else ""
        busy = r["cpu_s"] / r["wall_s"] if r["wall_s"] else None
        out.append(f"| {r['scheme']} | {r['step']} | {r['words']:,} | {_fmt(r['wall_s'])} | {_fmt(r['cpu_s'])} | "
                   f"{_fmt(busy, 2)} | {_fmt(r['peak_rss_mb'], 0)} | {load} | {r['rc']} |"
                   + (f" {r['error'][0]}" if r.get("error") else ""))
    out += ["", "## Growth exponents", "",
            "Least-squares slope of log(figure) over log(words) across the sizes: 1 = linear, 0 = flat.", "",
            "| scheme | step | points | wall | CPU | peak RSS |", "| --- | --- | ---: | ---: | ---: | ---: |"]
    out += [f"| {g['scheme']} | {g['step']} | {g['points']} | {_fmt(g['wall_s_exponent'], 2)} | "
            f"{_fmt(g['cpu_s_exponent'], 2)} | {_fmt(g['peak_rss_mb_exponent'], 2)} |" for g in result["growth"]]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "english_lm",
                   help="folder of *.txt.gz (or *.txt) running text")
    p.add_argument("--sizes", default=DEFAULT_SIZES,
                   help="corpus sizes in words, comma-separated (k and M suffixes), at least 4x apart for a slope")
    p.add_argument("--schemes", default=None, help="comma-separated schemes (default: every registered scheme)")
    p.add_argument("--workers", type=int, default=2, help="morphtok-binarize --workers")
    p.add_argument("--vocab-size", type=int, default=8000, help="morphtok-binarize --vocab-size")
    p.add_argument("--out-dir", type=Path, default=REPO / "bench" / "results",
                   help="where the dated .md and .json are written")
    p.add_argument("--work-dir", default=None, help="folder for the corpora and outputs (default: system temp)")
    args = p.parse_args(argv)
    args.sizes = sorted({parse_size(s) for s in args.sizes.split(",") if s.strip()})
    args.schemes = [s.strip() for s in args.schemes.split(",") if s.strip()] if args.schemes else None
    if not args.sizes:
        p.error("--sizes: give at least one size")
    result = run_all(args)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    stem = args.out_dir / f"{time.strftime('%Y-%m-%d-%H%M')}-scale-corpus"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    stem.with_suffix(".md").write_text(markdown(result), encoding="utf-8")
    print(markdown(result))
    print(f"written: {stem}.md, {stem}.json", file=sys.stderr)
    return 0 if all(r["rc"] == 0 for r in result["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
