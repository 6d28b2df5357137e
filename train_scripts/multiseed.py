"""Fine-tune N seeds per scheme and report mean, standard deviation and Welch's t-test against a baseline.

    python -m train_scripts.multiseed --csv-prefix ../shared/data/superbizarre/arxiv --out work/seeds --seeds 10 \\
        --scheme baseline ckpt/lm-sp/checkpoint_best.pt work/lm-sp \\
        --scheme spaces ckpt/lm-spaces/checkpoint_best.pt work/lm-spaces \\
        --scheme flota ckpt/lm-sp/checkpoint_best.pt work/lm-sp "--encode flota --flota-k 3" \\
        --baseline baseline [-- options for every run, e.g. --tiny --max-rows 200]

    python -m train_scripts.multiseed --out work/seeds --report-only --baseline baseline   # statistics only

The space-as-token paper (Gow-Smith et al. 2022, section 4.2) reports its fine-tuning results as means over 10
seeds with Welch's unequal-variance t-tests; this runner does the same with ``finetune_classification.sh``:
seed *s* of scheme NAME trains into ``OUT/NAME/seed{s}`` (``--seed s``; a finished run, one with its
``test_scores.json``, is kept and not run again), with its data prepared in ``OUT/NAME/seed{s}/data`` (runs
never share a folder, so they can run in parallel).

``--scheme NAME PRETRAINED LM_DATA ["RECIPE OPTIONS"]``: the pretrained checkpoint, its ``binarize --lm``
folder, and options for this scheme's runs only, quoted as one argument.  Runs go one after another on this
machine, or all at once as SLURM jobs with ``--executor slurm`` (the options of ``train_scripts.launch``).

The report (``OUT/multiseed.json`` and a table on stdout) gives, per scheme, the ``--metric`` of the best-dev
checkpoint on ``--split`` for every seed, their mean, sample standard deviation (n - 1), and, against
``--baseline``, Welch's t statistic and two-sided p-value from ``scipy.stats.ttest_ind(equal_var=False)``.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys

from preprocess.cli import run_main
from preprocess.common import REPO, UserError
from preprocess.files.outputs import atomic_output, check_output_path

RECIPE = os.path.join(REPO, "train_scripts", "finetune_classification.sh")
SPLIT_FILES = {"test": "test_scores.json", "dev": "dev_scores.json"}


# --- statistics ------------------------------------------------------------------------------------------------

def summarize(scores: dict, baseline: str | None = None) -> dict:
    """``{scheme: [score per seed]}`` -> ``{scheme: {n, mean, sd, scores[, t, p]}}``.

    ``sd`` is the sample standard deviation (ddof=1); ``t`` and ``p`` are Welch's two-sided t-test of the scheme
    against ``baseline`` (absent for the baseline itself).  A test needs two scores on each side; where both
    sides have no variance scipy's answer is undefined and ``t``/``p`` are None.
    """
    import numpy as np
    from scipy import stats

    if baseline is not None and baseline not in scores:
        raise UserError(f"baseline {baseline!r} is not one of the schemes ({', '.join(scores)})")
    out = {}
    for name, values in scores.items():
        values = [float(v) for v in values]
        if not values:
            raise UserError(f"{name}: no scores")
        row = {"n": len(values), "scores": values, "mean": float(np.mean(values)),
               "sd": float(np.std(values, ddof=1)) if len(values) > 1 else None}
        if baseline is not None and name != baseline:
            base = [float(v) for v in scores[baseline]]
            if len(values) < 2 or len(base) < 2:
                raise UserError(f"Welch's t-test needs at least two seeds per scheme ({name}: {len(values)}, "
                                f"{baseline}: {len(base)})")
            if np.ptp(values) == 0 and np.ptp(base) == 0:  # no variance on either side: t is undefined
                row["t"] = row["p"] = None
            else:
                test = stats.ttest_ind(values, base, equal_var=False)
                t, p = float(test.statistic), float(test.pvalue)
                row["t"], row["p"] = (None, None) if math.isnan(p) else (t, p)
            row["baseline"] = baseline
        out[name] = row
    return out


def format_table(summary: dict, metric: str) -> str:
    lines = [f"| scheme | seeds | mean {metric} | sd | Welch t | p |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, row in summary.items():
        sd = "-" if row["sd"] is None else f"{row['sd']:.4f}"
        t = p = "-"
        if "baseline" in row:
            t = "n/a" if row["t"] is None else f"{row['t']:.3f}"
            p = "n/a" if row["p"] is None else f"{row['p']:.4g}"
        lines.append(f"| {name} | {row['n']} | {row['mean']:.4f} | {sd} | {t} | {p} |")
    return "\n".join(lines)


# --- runs ------------------------------------------------------------------------------------------------------

def run_dir(out: str, scheme: str, seed: int) -> str:
    return os.path.join(out, scheme, f"seed{seed}")


def recipe_command(scheme: dict, seed: int, out: str, csv_prefix: str, common: list, recipe: str = RECIPE) -> list:
    """The ``finetune_classification.sh`` command of one (scheme, seed) run."""
    return ["bash", recipe, "--pretrained", scheme["pretrained"], "--lm-data", scheme["lm_data"],
            "--csv-prefix", csv_prefix, "--work", os.path.join(run_dir(out, scheme["name"], seed), "data"),
            "--save-dir", run_dir(out, scheme["name"], seed), *common, *scheme["options"], "--seed", str(seed)]


def collect(out: str, metric: str, split: str, seeds=None) -> dict:
    """``{scheme: [metric of each finished seed]}`` from ``OUT/*/seed*/{split}_scores.json``."""
    scores = {}
    if not os.path.isdir(out):
        raise UserError(f"no runs in {out}")
    for name in sorted(os.listdir(out)):
        folder = os.path.join(out, name)
        if not os.path.isdir(folder):
            continue
        found = []
        for entry in os.listdir(folder):
            if not entry.startswith("seed") or not entry[4:].isdigit():
                continue
            seed = int(entry[4:])
            path = os.path.join(folder, entry, SPLIT_FILES[split])
            if (seeds is None or seed in seeds) and os.path.isfile(path):
                found.append((seed, read_score(path, metric)))
        if found:
            scores[name] = [v for _, v in sorted(found)]
    if not scores:
        raise UserError(f"no finished runs ({SPLIT_FILES[split]}) in {out}")
    return scores


def read_score(path: str, metric: str) -> float:
    """``metric`` of one run's scores file; a file that is not such JSON (truncated, undecodable, edited by hand)
    is one line naming it."""
    try:
        with open(path, "rb") as fh:
            result = json.loads(fh.read().decode("utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: invalid UTF-8 at byte {exc.start}: not a scores file") from None
    except ValueError as exc:
        raise UserError(f"{path}: not valid JSON ({exc}); remove it to run that seed again") from None
    if not isinstance(result, dict):
        raise UserError(f"{path}: expected a JSON object of scores, not {type(result).__name__}")
    if metric not in result:
        raise UserError(f"{path} has no {metric!r} (has {', '.join(sorted(result))})")
    value = result[metric]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UserError(f"{path}: {metric} is {value!r}, not a number")
    return float(value)


def check_out(out: str) -> None:
    """Before any work: ``--out`` is a folder (or can be made) and its report ``multiseed.json`` can be written."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise UserError(f"--out {out} is a file, not a folder")
    check_output_path(os.path.join(out, "multiseed.json"), "report")


def run_all(schemes: list, seeds: list, out: str, csv_prefix: str, common: list, args, recipe: str = RECIPE) -> None:
    import subprocess

    todo = [(s, seed) for s in schemes for seed in seeds
            if not os.path.isfile(os.path.join(run_dir(out, s["name"], seed), SPLIT_FILES["test"]))]
    if args.executor == "slurm":
        from train_scripts import launch

        jobs = []
        launch.job_env()  # the jobs find this project and the venv's tools
        for s, seed in todo:
            executor = launch.make_executor(args, os.path.join(out, "submitit"), f"seed{seed}-{s['name']}",
                                            gpus_per_node=args.gpus_per_node)
            with launch.submission("fine-tuning"):
                jobs.append(executor.submit(launch.RecipeJob(recipe_command(s, seed, out, csv_prefix, common,
                                                                            recipe))))
        print(f"{len(jobs)} fine-tuning job(s) submitted", file=sys.stderr)
        launch.wait(jobs, "fine-tuning")
        return
    for s, seed in todo:
        print(f"[multiseed] {s['name']} seed {seed}", file=sys.stderr)
        proc = subprocess.run(recipe_command(s, seed, out, csv_prefix, common, recipe), cwd=REPO)
        if proc.returncode != 0:
            raise UserError(f"{s['name']} seed {seed} failed (exit {proc.returncode}); "
                            f"see {run_dir(out, s['name'], seed)}/train.log")


def parse_schemes(items: list) -> list:
    schemes, names = [], set()
    for item in items:
        if len(item) not in (3, 4):
            raise UserError(f"--scheme wants NAME PRETRAINED LM_DATA [\"OPTIONS\"], got {len(item)} values: {item}")
        name = item[0]
        if name in names or "/" in name or name.startswith("."):
            raise UserError(f"scheme name {name!r} is repeated or not a plain folder name")
        names.add(name)
        schemes.append({"name": name, "pretrained": os.path.abspath(item[1]), "lm_data": os.path.abspath(item[2]),
                        "options": shlex.split(item[3]) if len(item) == 4 else []})
    return schemes


def build_parser() -> argparse.ArgumentParser:
    from train_scripts import launch

    p = argparse.ArgumentParser(prog="python -m train_scripts.multiseed", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter, allow_abbrev=False,
                                epilog="Options after -- go to every finetune_classification.sh run.")
    p.add_argument("--out", required=True, help="one folder per scheme, one per seed inside it; multiseed.json")
    p.add_argument("--scheme", nargs="+", action="append", default=[], metavar="NAME PRETRAINED LM_DATA",
                   help='a scheme: NAME PRETRAINED LM_DATA ["RECIPE OPTIONS"] (repeat for each scheme)')
    p.add_argument("--csv-prefix", help="PREFIX_{train,dev,test}.csv of the classification set")
    p.add_argument("--seeds", type=int, default=10, help="seeds 1..N per scheme")
    p.add_argument("--baseline", default=None, help="the scheme the others are tested against")
    p.add_argument("--metric", choices=("accuracy", "macro_f1"), default="accuracy",
                   help="the score the schemes are compared on")
    p.add_argument("--split", choices=tuple(SPLIT_FILES), default="test", help="the split the metric is read on")
    p.add_argument("--report-only", action="store_true", help="no training: statistics of the runs in --out")
    p.add_argument("--recipe", default=RECIPE, help=argparse.SUPPRESS)  # tests: a stand-in for the recipe
    p.add_argument("--gpus-per-node", type=int, default=0, help="GPUs of each SLURM job")
    launch.add_executor_args(p)
    return p


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    common = []
    if "--" in argv:
        cut = argv.index("--")
        argv, common = argv[:cut], argv[cut + 1:]
    args = build_parser().parse_args(argv)
    out = os.path.abspath(args.out)
    if args.seeds < 1:
        raise UserError("--seeds must be at least 1")
    seeds = list(range(1, args.seeds + 1))
    check_out(out)
    if not args.report_only:
        schemes = parse_schemes(args.scheme)
        if not schemes:
            raise UserError("give at least one --scheme NAME PRETRAINED LM_DATA (or --report-only)")
        if not args.csv_prefix:
            raise UserError("--csv-prefix is required to fine-tune")
        if args.baseline is not None and args.baseline not in {s["name"] for s in schemes}:
            raise UserError(f"--baseline {args.baseline!r} is not one of the --scheme names")
        os.makedirs(out, exist_ok=True)
        run_all(schemes, seeds, out, os.path.abspath(args.csv_prefix), common, args, args.recipe)
        scores = collect(out, args.metric, args.split, set(seeds))
        scores = {s["name"]: scores.get(s["name"], []) for s in schemes}
    else:
        scores = collect(out, args.metric, args.split)
    summary = summarize(scores, args.baseline)
    report = {"metric": args.metric, "split": args.split, "baseline": args.baseline, "schemes": summary}
    with atomic_output(os.path.join(out, "multiseed.json")) as fh:
        json.dump(report, fh, indent=1)
    print(format_table(summary, args.metric))
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
