"""Corpus-scale benchmark of ``preprocess.encode`` for every scheme, printed as one table (``make bench``).

    python bench/scale.py [--data ../shared/data] [--mb 8] [--large-mb 150] [--workers 2] [--skip-large]

Every figure is a ratio measured in one run on the same input:

* ``--workers 1`` against the reference: the C++ ``spm_encode`` (Debian package ``sentencepiece``) for spaces,
  the published algorithms written plainly (``bench/bite.py``'s ``ReferenceBite``, ``bench/flota.py``'s
  ``StraightforwardFlota``) for BITE and FLOTA; Wordmap has no published code.  What runs for a scheme is its
  benchmark module's ``scale_case`` (``bench/<scheme>.py``, a ``timing.ScaleCase``).  Ours is the whole command line
  (start-up, reading, writing); the references run in this process on lines already in memory, which favours
  them.  Each round runs ours and the reference back to back; the ratio is the median over rounds, with its
  range.
* ``--workers N`` against ``--workers 1`` (wall clock; the output is asserted byte-identical), for the whole
  command and once started, the median ratio over rounds that run the commands back to back, with its range;
  beside it the same ratio for a pure-Python loop (this machine's own ceiling) and the CPU time the hypervisor
  stole meanwhile.  The start-up (imports, loading the model or tagger; measured on a one-line input in the
  same round) is paid once per run whatever the worker count, so it is subtracted for the second ratio, which
  is what a corpus of billions of words sees.
* the per-sentence APIs that fairseq calls one sentence at a time (``BiteTokenizer.tokenize``,
  ``FlotaTokenizer.tokenize`` with and without its word cache) against the references, sentence by sentence,
  over a stream of ``--sentences`` sentences, every cache emptied before each pass; the two sides alternate
  every 100 sentences and the ratio is the median over ``--rounds`` passes (see ``interleaved``).
* a large input (``--large-mb``, Multi30k repeated) through ``--workers N``: words/s, and the peak RSS of the
  parent and of every worker (``VmHWM``), which stays flat whatever the input size.

The load average is printed with every block: on a shared machine the wall-clock ratios mean little when the
cores are already busy.
"""
from __future__ import annotations

import argparse
import gzip
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run as a script: the checkout

from preprocess.common import REPO  # noqa: E402
from train_scripts.tools import SHARED_DATA  # noqa: E402

sys.path.insert(0, str(REPO / "bench"))


from timing import calibrate, cpu_steal, interleaved, load, peak_rss, run_encode, spread  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(SHARED_DATA))
    ap.add_argument("--mb", type=float, default=20, help="size of the timing input for spaces and FLOTA (MB)")
    ap.add_argument("--mb-bite", type=float, default=20, help="size of the timing input for BITE (MB)")
    ap.add_argument("--mb-slow", type=float, default=0.5, help="size of the timing input for Wordmap (MB)")
    ap.add_argument("--sentences", type=int, default=10000, help="sentences per round for the per-sentence APIs")
    ap.add_argument("--large-mb", type=float, default=150, help="size of the large input")
    ap.add_argument("--workers", type=int, default=2, help="N of the --workers N vs 1 comparison")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every comparison (median ratio, best time)")
    ap.add_argument("--schemes", default=None,
                    help="comma-separated (default: every scheme whose bench/<scheme>.py has scale_case)")
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--sections", default="reference,scaling,sentences,large",
                    help="which tables to print (comma-separated)")
    args = ap.parse_args(argv)
    data = Path(args.data)
    os.environ.setdefault("NLTK_DATA", str(data / "nltk_data"))
    schemes = (args.schemes or default_schemes()).split(",")
    tmp = tempfile.mkdtemp(prefix="bench-scale-")
    try:
        return _run(args, data, schemes, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _corpus(data: Path, lang: str, mb: float, path: str) -> tuple[list, int]:
    with gzip.open(data / "multi30k" / f"train.{lang}.gz", "rt", encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    size = len(("\n".join(lines) + "\n").encode("utf-8"))
    if 0 < mb * 1e6 < size:   # a prefix of the corpus (mb=0: the corpus once)
        lines = lines[:max(1, int(len(lines) * mb * 1e6 / size))]
    block = "\n".join(lines) + "\n"
    repeat = max(1, round(mb * 1e6 / len(block.encode("utf-8"))))
    with open(path, "w", encoding="utf-8") as fh:
        for _ in range(repeat):
            fh.write(block)
    return lines * repeat, sum(len(line.split()) for line in lines) * repeat


#: the timing inputs a scheme's case chooses from (ScaleCase.corpus): language and the option giving its size (MB)
CORPORA = {"en": ("en", "mb"), "en-tagged": ("en", "mb_bite"), "de": ("de", "mb_slow")}


def scale_cases(schemes: list, data: Path, tmp: str) -> dict:
    """``{scheme: ScaleCase}`` from each scheme's benchmark module, ``bench/<scheme>.py`` (``scale_case``)."""
    import importlib

    cases = {}
    for scheme in schemes:
        try:
            module = importlib.import_module(scheme)
        except ImportError as exc:
            sys.exit(f"error: no benchmark module bench/{scheme}.py for scheme {scheme!r} ({exc})")
        if not hasattr(module, "scale_case"):
            sys.exit(f"error: bench/{scheme}.py has no scale_case(data, tmp)")
        cases[scheme] = module.scale_case(data, tmp)
    return cases


def default_schemes() -> str:
    """Every registered scheme whose benchmark module defines ``scale_case`` (read, not imported)."""
    from preprocess import registry

    return ",".join(n for n in registry.names() if (REPO / "bench" / f"{n}.py").is_file()
                    and "def scale_case(" in (REPO / "bench" / f"{n}.py").read_text(encoding="utf-8"))


def _run(args, data: Path, schemes: list, tmp: str) -> int:
    cases = scale_cases(schemes, data, tmp)
    sizes = {key: getattr(args, option) for key, (_, option) in CORPORA.items()}
    src = {key: os.path.join(tmp, f"in.{key}") for key in sizes}
    lines, words = {}, {}
    for key, mb in sizes.items():
        lines[key], words[key] = _corpus(data, CORPORA[key][0], mb, src[key])
    # the comparison with the references: one copy of Multi30k train (no repetition, which would favour caches)
    once = os.path.join(tmp, "once.en")
    lines["once-en"], words["once-en"] = _corpus(data, "en", 0, once)
    out1, outn = os.path.join(tmp, "out1"), os.path.join(tmp, "outn")
    w = args.workers

    sections = set(args.sections.split(","))
    if args.skip_large:
        sections.discard("large")
    print(f"# per core: `--workers 1` (the whole command) against the reference on Multi30k train once "
          f"({words['once-en']:,} English words), {args.rounds} rounds of (ours, reference) back to back: words/s "
          f"of the best round, ratio the median of the rounds' (range); {load()}")
    print("| scheme | reference | reference words/s | --workers 1 words/s | w1 / reference | load |")
    print("|---|---|---|---|---|---|")
    for scheme in [s for s in schemes if cases[s].reference is not None and "reference" in sections]:
        sargs = cases[scheme].args
        n = words["once-en"]
        ref_name, ref_run = cases[scheme].reference(lines["once-en"], once, tmp)
        rounds = [(run_encode(sargs, once, out1, 1), ref_run() if ref_run else None) for _ in range(args.rounds)]
        t1 = min(ours for ours, _ in rounds)
        ref_cols = (f"{ref_name} | {n / min(r for _, r in rounds):,.0f} | {n / t1:,.0f} | "
                    f"{spread([r / ours for ours, r in rounds])}" if ref_run
                    else f"{ref_name} | - | {n / t1:,.0f} | -")
        print(f"| {scheme} | {ref_cols} | {os.getloadavg()[0]:.1f} |")

    inputs = ", ".join(f"{sizes[key]:g} MB {CORPORA[key][0]} for {', '.join(s for s in schemes if cases[s].corpus == key)}"
                       for key in CORPORA if any(cases[s].corpus == key for s in schemes))
    print(f"\n# scaling: `--workers {w}` against `--workers 1` on Multi30k repeated ({inputs}), {args.rounds} rounds "
          f"of (one-line input, --workers 1, --workers {w}) back to back: words/s and start-up of the best round, "
          f"ratios the median of the rounds' (range); {load()}")
    print(f"| scheme | words | --workers 1 words/s | --workers {w} words/s | w{w} / w1 | start-up | "
          f"w{w} / w1 once started | load | CPU steal |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| (this machine: {w} copies of a pure-Python loop at once vs one) | | | | {calibrate(w, args.rounds)} "
          f"| | | {os.getloadavg()[0]:.1f} | |")
    one_line = os.path.join(tmp, "one-line")
    with open(one_line, "w", encoding="utf-8") as fh:
        fh.write("A man is walking.\n")
    per_core = {}
    for scheme in [s for s in schemes if "scaling" in sections]:
        sargs, lang = cases[scheme].args, cases[scheme].corpus
        n = words[lang]
        rounds = []
        steal0, since = cpu_steal(), time.perf_counter()
        for _ in range(args.rounds):   # a round runs the three back to back: a slow spell hits them alike
            rounds.append(tuple(run_encode(sargs, path, out, k) for path, out, k in
                                ((one_line, out1, 1), (src[lang], out1, 1), (src[lang], outn, w))))
        assert Path(out1).read_bytes() == Path(outn).read_bytes(), f"{scheme}: worker counts differ"
        t0, t1, tn = (min(r[i] for r in rounds) for i in range(3))
        per_core[scheme] = n / max(t1 - t0, 1e-9)
        whole = spread([r1 / rn for _, r1, rn in rounds])
        started = spread([(r1 - r0) / max(rn - r0, 1e-9) for r0, r1, rn in rounds])
        print(f"| {scheme} | {n:,} | {n / t1:,.0f} | {n / tn:,.0f} | {whole} | {t0:.1f} s | {started} | "
              f"{os.getloadavg()[0]:.1f} | "
              f"{100 * (cpu_steal() - steal0) / ((time.perf_counter() - since) * os.cpu_count()):.0f} % |")

    sample = lines["en"][:args.sentences]
    print(f"\n# per-sentence APIs (one sentence per call, as fairseq's encode): the first {len(sample):,} sentences "
          f"of Multi30k train, every cache emptied before each round; {load()}")
    print("| API | reference sentences/s | ours sentences/s | ours / reference |\n|---|---|---|---|")
    apis = [api for s in schemes if cases[s].apis for api in cases[s].apis()] if "sentences" in sections else []
    for name, ours, ref, cold in apis:
        for s in sample[:50]:   # load lazily loaded tables (lemminflect) before any timing
            ours(s), ref(s)
        t_ref, t_ours, ratio = interleaved(ref, ours, cold, sample, args.rounds)
        print(f"| {name} | {len(sample) / t_ref:,.0f} | {len(sample) / t_ours:,.0f} | {ratio:.2f}x |")

    if "large" in sections:
        large = os.path.join(tmp, "large.en")
        _, n_large = _corpus(data, "en", args.large_mb, large)
        size = os.path.getsize(large) / 1e6
        print(f"\n# large input: {size:,.0f} MB ({n_large:,} words), --workers {args.workers}, {load()}")
        print("| scheme | words/s | parent peak RSS | worker peak RSS (each) |\n|---|---|---|---|")
        for scheme in [s for s in schemes if cases[s].large]:
            sargs = cases[scheme].args
            wall, rss = peak_rss([sys.executable, "-m", "preprocess.encode", *sargs, "--inputs", large,
                                  "--outputs", os.path.join(tmp, "large.out"), "--workers", str(args.workers),
                                  "--quiet"])
            print(f"| {scheme} | {n_large / wall:,.0f} | {rss['parent']:.0f} MB | "
                  f"{', '.join(f'{w:.0f}' for w in rss['workers'])} MB |")
            os.unlink(os.path.join(tmp, "large.out"))
        print(f"(after: {load()})")
    print("\n# --workers 1 words/s per core once started (for the scale plan): " +
          ", ".join(f"{s} {v:,.0f}" for s, v in per_core.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
