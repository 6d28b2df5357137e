"""The expected cost of a paper-scale corpus, from the scaling benchmark's measurements.

    python bench/scale_estimate.py bench/results/*-scale-corpus.json [--corpus wmt14-en-de=230M]
        [--corpus enwiki=2500M] [--cores 2,16,64,256] [--out FILE.md]

Reads one or more results of ``bench/scale_corpus.py`` (where a scheme and size was measured more than once, the
file given last wins) and carries each scheme's figures to the corpus sizes given.

Each step (learn; encode + fairseq-preprocess, the difference of the two runs) is modelled as a fixed CPU time plus
a cost per word, the *marginal* cost between the two largest measured sizes (at least 0):

* **learn** samples at most ``--input-sentence-size`` sentences (1M by default) for SentencePiece, so beyond that
  bound its training does not grow with the corpus; what still grows (reading the corpus, and BITE's tagging of
  every line) is the cost per word.  With fewer than two sizes above the bound the marginal cost still holds
  some of SentencePiece's growth: an overestimate, said so in the result.
* **encode + fairseq-preprocess** is almost all cost per word.

On N cores, the fixed part takes its measured wall clock (at the benchmark's ``--workers``) and the per-word part
its CPU time over N: ``--workers N`` on one machine, or on SLURM a job array of shards (``morphtok-launch
preprocess --shards S``, S tasks of C cores: N = S x C).  Perfect scaling of the per-word work is an assumption
(only 2 cores are measured here).  Memory is per process: the learn step's peak does not depend on N.

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


def step_model(points: list[tuple[int, float, float]]) -> dict:
    """One step's cost from its measurements ``(words, wall s, CPU s)``, smallest first: the marginal CPU per word
    between the two largest sizes (at least 0), the CPU that does not grow with the corpus (the rest, at least 0),
    and the wall/CPU ratio measured at the largest size."""
    words, wall, cpu = points[-1]
    if len(points) > 1:
        w0, _, c0 = points[-2]
        per_word = max(0.0, (cpu - c0) / (words - w0))
    else:
        per_word = cpu / words
    return {"per_word": per_word, "fixed": max(0.0, cpu - per_word * words), "wall_per_cpu": wall / cpu if cpu else 1.0,
            "exponent": slope([p[0] for p in points], [p[2] for p in points])}


def scheme_model(by_size: dict, lines: dict) -> dict | None:
    """The figures one scheme's estimate needs, from its complete sizes (learn and binarize both measured)."""
    sizes = sorted(s for s, steps in by_size.items() if {"learn", "binarize"} <= set(steps))
    if not sizes:
        return None
    learn = [(by_size[s]["learn"]["words"], by_size[s]["learn"]["wall_s"], by_size[s]["learn"]["cpu_s"])
             for s in sizes]
    encode = [(by_size[s]["binarize"]["words"],
               max(1e-9, by_size[s]["binarize"]["wall_s"] - by_size[s]["learn"]["wall_s"]),
               max(1e-9, by_size[s]["binarize"]["cpu_s"] - by_size[s]["learn"]["cpu_s"])) for s in sizes]
    largest = sizes[-1]
    return {"sizes": sizes, "above_bound": sum(lines.get(s, 0) > SAMPLE_BOUND for s in sizes),
            "learn_peak_mb": by_size[largest]["learn"]["peak_rss_mb"],
            "peak_mb": max(by_size[largest][step]["peak_rss_mb"] for step in ("learn", "binarize")),
            "learn": step_model(learn), "encode": step_model(encode)}


def cpu_s(step: dict, words: int) -> float:
    """CPU seconds of a step on ``words`` words: the fixed part plus the marginal cost per word."""
    return step["fixed"] + step["per_word"] * words


def step_wall_s(step: dict, words: int, cores: int) -> float:
    """Wall seconds of one step: its fixed part at its measured wall/CPU ratio, its per-word part over ``cores``
    (perfect scaling assumed)."""
    return step["fixed"] * step["wall_per_cpu"] + step["per_word"] * words / cores


def wall_s(model: dict, words: int, cores: int, learn_cores: int | None = None) -> float:
    """Learn, then encode + fairseq-preprocess (:func:`step_wall_s`); the learn step over ``learn_cores`` where it
    is one job of another size (the SLURM path: one job learns, and BITE and Wordmap encode the training text while
    learning)."""
    return step_wall_s(model["learn"], words, learn_cores or cores) + step_wall_s(model["encode"], words, cores)


def hours(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.0f} min" if seconds >= 600 else f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"


def markdown(data: dict, corpora: list[tuple[str, int]], cores: list[int], sources: list[str],
             learn_cores: int = 16) -> str:
    models = {s: scheme_model(by_size, data["lines"]) for s, by_size in sorted(data["runs"].items())}
    models = {s: m for s, m in models.items() if m}
    out = ["# Expected cost at paper scale, from the scaling benchmark", "",
           "From " + ", ".join(f"`{s}`" for s in sources) + " (`python bench/scale_estimate.py`). Each step: a "
           "fixed CPU time plus a cost per word, the marginal cost between the two largest measured sizes (the learn "
           f"step samples at most {SAMPLE_BOUND:,} sentences, so what grows there is reading and, for BITE, tagging "
           "every line). On N cores the fixed part takes its measured wall clock and the per-word part its CPU "
           "over N (perfect scaling assumed; N = `--workers` on one machine, or shards x cores per task on SLURM). "
           "An extrapolation from one repeated English corpus, with 2 cores measured.", "",
           "| scheme | measured sizes (M words) | peak RSS: learn, any process | learn: CPU s per M words + fixed "
           "CPU s, exponent | encode+preprocess: the same |", "| --- | --- | ---: | ---: | ---: |"]
    for s, m in models.items():
        memory_note = "" if m["above_bound"] else " (no size above the bound: too low)"
        learn_note = "" if m["above_bound"] >= 2 else " (an overestimate: fewer than 2 sizes above the bound)"
        steps = [f"{x['per_word'] * 1e6:.1f} + {x['fixed']:.0f}, "
                 f"{'-' if x['exponent'] is None else format(x['exponent'], '.2f')}" for x in (m["learn"], m["encode"])]
        steps[0] += learn_note
        out.append(f"| {s} | {', '.join(f'{x / 1e6:g}' for x in m['sizes'])} | {m['learn_peak_mb']:,.0f} MB{memory_note}, "
                   f"{m['peak_mb']:,.0f} MB | {steps[0]} | {steps[1]} |")
    for name, words in corpora:
        out += ["", f"## {name}: {words / 1e6:,.0f}M words", "",
                "One machine, `--workers N`:", "",
                "| scheme | CPU, all steps | " + " | ".join(f"wall on {n} cores" for n in cores) + " |",
                "| --- | ---: | " + " | ".join("---:" for _ in cores) + " |"]
        for s, m in models.items():
            out.append(f"| {s} | {hours(cpu_s(m['learn'], words) + cpu_s(m['encode'], words))} | "
                       + " | ".join(hours(wall_s(m, words, n)) for n in cores) + " |")
        shard_cores = [n for n in cores if n > learn_cores]
        if shard_cores:
            out += ["", f"SLURM (`morphtok-launch preprocess --shards S`): the learn job on {learn_cores} cores, then "
                    "S shards of C cores, S x C = N:", "",
                    "| scheme | learn job | " + " | ".join(f"in all, N = {n}" for n in shard_cores) + " |",
                    "| --- | ---: | " + " | ".join("---:" for _ in shard_cores) + " |"]
            for s, m in models.items():
                out.append(f"| {s} | {hours(step_wall_s(m['learn'], words, learn_cores))} | "
                           + " | ".join(hours(wall_s(m, words, n, learn_cores)) for n in shard_cores) + " |")
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
    p.add_argument("--learn-cores", type=int, default=16,
                   help="cores of the one job that learns on SLURM (the shards' cores are the --cores above it)")
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
    if args.learn_cores < 1:
        p.error("--learn-cores: at least 1")
    text = markdown(data, corpora, cores, [x.name for x in args.results], args.learn_cores)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
