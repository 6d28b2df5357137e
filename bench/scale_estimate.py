"""The expected cost of a paper-scale corpus, from the scaling benchmark's measurements (issue 39, part 2).

    python bench/scale_estimate.py bench/results/*-scale-corpus.json [--corpus wmt14-en-de=230M]
        [--corpus enwiki=2500M] [--cores 2,16,64,256] [--out FILE.md]

Reads one or more results of ``bench/scale_corpus.py`` (where a scheme and size was measured more than once, the
file given last wins) and carries each scheme's figures to the corpus sizes given:

* **learn**: the learn step samples at most ``--input-sentence-size`` sentences (1M by default), so beyond that
  bound its time and memory do not depend on the corpus: they are taken as measured at the largest size.  Where
  the largest size is not above the bound, the estimate says so (it is then too low).
* **encode + fairseq-preprocess**: CPU seconds per word at the largest measured size, carried linearly to the
  corpus (or with the measured growth exponent, where that is above 1).  Its wall clock on N cores is that CPU
  time over N: the step runs ``--workers N`` processes on one machine, or a job array of shards on SLURM
  (``morphtok-launch preprocess --shards S``, S tasks of C cores each, N = S x C); perfect scaling is assumed
  (only 1 and 2 cores are measured here), and reading and writing the files is in the measured time of one disk.

Everything is an extrapolation from at most 65M words of one English corpus repeated; the result says so.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_corpus import parse_size, slope  # noqa: E402

#: the sampling bound of the learn step (``morphtok-binarize --input-sentence-size``, default)
SAMPLE_BOUND = 1_000_000
#: default corpora: WMT14 En-De's training text (both sides, about 4.5M sentence pairs) and English Wikipedia as
#: counted by Devlin et al. (2019, section 3.1: 2,500M words), the space-as-token paper's pretraining corpus
DEFAULT_CORPORA = ("wmt14-en-de=230M", "enwiki=2500M")
DEFAULT_CORES = "2,16,64,256"


def load(paths: list[Path]) -> dict:
    """scheme -> size -> step -> run, the last file winning; plus each size's corpus lines."""
    runs: dict = {}
    lines: dict = {}
    for path in paths:
        result = json.loads(Path(path).read_text(encoding="utf-8"))
        for c in result["corpora"]:
            lines[c["size"]] = c["lines"]
        for r in result["runs"]:
            if r["rc"] == 0 and r["step"] in ("learn", "binarize"):
                runs.setdefault(r["scheme"], {}).setdefault(r["size"], {})[r["step"]] = r
    return {"runs": runs, "lines": lines}


def scheme_model(by_size: dict, lines: dict) -> dict | None:
    """The figures one scheme's estimate needs, from its complete sizes (learn and binarize both measured)."""
    sizes = sorted(s for s, steps in by_size.items() if {"learn", "binarize"} <= set(steps))
    if not sizes:
        return None
    words = [by_size[s]["binarize"]["words"] for s in sizes]
    encode_cpu = [max(1e-9, by_size[s]["binarize"]["cpu_s"] - by_size[s]["learn"]["cpu_s"]) for s in sizes]
    largest = sizes[-1]
    learn = by_size[largest]["learn"]
    return {"sizes": sizes, "largest_words": words[-1],
            "above_bound": lines.get(largest, 0) > SAMPLE_BOUND,
            "learn_wall_s": learn["wall_s"], "learn_peak_mb": learn["peak_rss_mb"],
            "peak_mb": max(by_size[largest][step]["peak_rss_mb"] for step in ("learn", "binarize")),
            "cpu_per_word": encode_cpu[-1] / words[-1],
            "exponent": slope(words, encode_cpu)}


def encode_cpu_s(model: dict, words: int) -> float:
    """CPU seconds of encode + fairseq-preprocess on ``words`` words: linear, or the measured exponent if above 1."""
    exponent = max(1.0, model["exponent"] or 1.0)
    return model["cpu_per_word"] * model["largest_words"] * (words / model["largest_words"]) ** exponent


def wall_s(model: dict, words: int, cores: int) -> float:
    return model["learn_wall_s"] + encode_cpu_s(model, words) / cores


def hours(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"


def markdown(data: dict, corpora: list[tuple[str, int]], cores: list[int], sources: list[str]) -> str:
    models = {s: scheme_model(by_size, data["lines"]) for s, by_size in sorted(data["runs"].items())}
    models = {s: m for s, m in models.items() if m}
    out = ["# Expected cost at paper scale, from the scaling benchmark", "",
           "From " + ", ".join(f"`{s}`" for s in sources) + " (`python bench/scale_estimate.py`). Learn: as "
           f"measured at the largest size (the step samples at most {SAMPLE_BOUND:,} sentences). Encode + "
           "fairseq-preprocess: CPU per word at the largest size, carried linearly (or with the measured exponent "
           "where it is above 1), over N cores with perfect scaling assumed (N = `--workers` on one machine, or "
           "shards x cores per task on SLURM). An extrapolation from one repeated English corpus, at most 2 "
           "cores measured.", "",
           "| scheme | measured sizes (M words) | learn: wall, peak RSS | peak RSS of any process | encode+preprocess: "
           "CPU s per M words, growth exponent |", "| --- | --- | ---: | ---: | ---: |"]
    for s, m in models.items():
        note = "" if m["above_bound"] else " (largest size below the bound: too low)"
        out.append(f"| {s} | {', '.join(f'{x / 1e6:g}' for x in m['sizes'])} | {m['learn_wall_s']:.0f} s, "
                   f"{m['learn_peak_mb']:,.0f} MB{note} | {m['peak_mb']:,.0f} MB | {m['cpu_per_word'] * 1e6:.1f}, "
                   f"{'-' if m['exponent'] is None else format(m['exponent'], '.2f')} |")
    for name, words in corpora:
        out += ["", f"## {name}: {words / 1e6:,.0f}M words", "",
                "| scheme | CPU, encode+preprocess | " + " | ".join(f"wall on {n} cores" for n in cores) + " |",
                "| --- | ---: | " + " | ".join("---:" for _ in cores) + " |"]
        for s, m in models.items():
            out.append(f"| {s} | {hours(encode_cpu_s(m, words))} | "
                       + " | ".join(hours(wall_s(m, words, n)) for n in cores) + " |")
    return "\n".join(out) + "\n"


def parse_corpus(text: str) -> tuple[str, int]:
    name, sep, size = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"not NAME=WORDS: {text!r} (e.g. enwiki=2500M)")
    return name.strip(), parse_size(size)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("results", nargs="+", type=Path, help="*-scale-corpus.json files of bench/scale_corpus.py")
    p.add_argument("--corpus", action="append", type=parse_corpus, default=None,
                   help=f"NAME=WORDS, repeatable (default: {', '.join(DEFAULT_CORPORA)})")
    p.add_argument("--cores", default=DEFAULT_CORES, help="core counts to give the wall clock for")
    p.add_argument("--out", type=Path, default=None, help="write the markdown here too")
    args = p.parse_args(argv)
    try:
        cores = [int(x) for x in args.cores.split(",") if x.strip()]
    except ValueError:
        p.error(f"--cores: not a list of integers: {args.cores!r}")
    if not cores or min(cores) < 1:
        p.error("--cores: give core counts of at least 1")
    missing = [str(x) for x in args.results if not x.is_file()]
    if missing:
        p.error(f"no such file: {', '.join(missing)}")
    corpora = args.corpus or [parse_corpus(c) for c in DEFAULT_CORPORA]
    try:
        data = load(args.results)
    except (ValueError, KeyError) as e:
        p.error(f"not a scale-corpus result: {e}")
    text = markdown(data, corpora, cores, [x.name for x in args.results])
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
