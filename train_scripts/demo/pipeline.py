"""The comparison behind ``make demo``: every scheme through the recipes users run, on Multi30k En->De, one report.

The demo is a list of recipe configurations (``translation_rows.ROWS``): each row is a configuration of a
scheme of the registry (``preprocess/registry.py``; its recipe in ``train_scripts/schemes``) and runs through exactly what a researcher runs on a cluster:
``train_scripts.binarize`` -> ``train_scripts/train_transformer_big.sh`` (with the budget preset's options)
-> ``train_scripts.average_checkpoints`` -> ``train_scripts.evaluate``, plus intrinsic metrics (sequence lengths,
vocabulary use, morph boundary P/R/F1, the scheme's own metrics).  Writes ``REPORT.md``, ``report.html``, plots
and ``results.json`` into ``--output``; every intermediate file stays under it.

Robustness (the BITE and FLOTA papers' threat models): the test source is perturbed twice
(``preprocess.evaluate.noise``, ``--noise-fraction``, ``--noise-seed``; written beside the report as
``test.infl.en`` and ``test.ws.en``), encoded with each row's learned scheme and translated by the same model in
one extra ``fairseq-generate`` per row, no extra training; the model-free counterpart is the similarity of clean
and perturbed encodings.  Every BLEU/chrF carries sacreBLEU's 95% CI and a paired test against ``--baseline``
(``train_scripts.significance``).  Budget: ``--preset cpu`` (default: 2,000 updates of a small Transformer, at
which the models learn; five rows, ``--schemes all`` for nine), ``fast`` (the 250-update smoke test) or ``gpu``
(Transformer-base to convergence with early stopping); ``--dry-run`` prints the commands.  SIGINT or SIGTERM
stops every process the pipeline started (each command runs in a process group of its own, and the pipeline is
the subreaper of whatever they leave); the interrupted stage is not recorded, so a rerun redoes it from a clean
folder and skips the finished ones.  See docs/demo.md.

Rows run side by side on a CPU machine (``--jobs``, default one per core, with ``--threads`` torch threads each,
default cores / jobs, so one): each row is a step of the demo's scheduler (``train_scripts.demo.stages.Scheduler``, the
pretraining part's too) in this process, holding one of ``--jobs`` slots for all its stages; its training,
averaging and generation are child processes.  The report is written when every row is done.  Why rows side by
side rather than more torch threads per row: the demo's model is small, so two torch threads on one training gain
little, and while anything else runs on the machine they wait on each other at every operation (measured here: 2
threads 2-4x slower than 1 beside one other busy process); two rows of one thread each keep both cores busy
whatever else runs.

Each stage is resumable: a stage whose record exists, whose outputs are there and whose options and inputs are
the same is skipped; a stage whose options or inputs changed reruns, and so does everything that depends on it
(the record keeps a fingerprint of them).  An interrupted stage is cleaned and rerun.  A failing step stops with
``pipeline stage <name> failed: ...`` and the path of its log.

This module: the options, the parts (``--part``) and the run; the rows and how one runs:
``train_scripts/demo/translation_rows.py``; stages, commands and clean stops: ``train_scripts/demo/stages.py``.

    morphtok-demo --data ../shared/data/multi30k --output demo-output [--preset cpu|fast|gpu] \\
        [--schemes bpe unigram ... | all] [--baseline unigram] [--noise-fraction 0.3] [--noise-seed 1] [--dry-run]
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from tqdm import tqdm

from preprocess.cli import run_main
from preprocess.common import REPO, UserError
from preprocess.evaluate import noise as noise_eval
from preprocess.files.outputs import check_output_path
from preprocess.whitespace_noise import DEMO_SEED, PAPER_FRACTION
from train_scripts.demo.presets import add_preset_options, apply_preset
from train_scripts.demo.stages import (
    PipelineError,
    Runner,
    Scheduler,
    Stages,
    become_subreaper,
    interrupt_on_signal,
    say,
    stop_descendants,
    versions,
)
from train_scripts.demo.translation_rows import (
    DEFAULT_ROWS,
    NOISE_KINDS,
    PRESET_HELP,
    PRESET_OPTIONS,
    PRESETS,
    ROWS,
    RowRun,
    default_data,
    make_noise,
    noisy_test_file,
    prepare_raw,
    read_text_lines,
)
from train_scripts.schemes import make_scheme
from train_scripts.tools import SHARED_DATA, child_env

# --- main ---------------------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="morphtok-demo", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--data", type=Path, default=default_data(),
                    help="Multi30k folder (raw train/val/test_2016_flickr .en/.de[.gz])")
    ap.add_argument("--output", type=Path, default=Path("demo-output"), help="everything is written here")
    ap.add_argument("--part", choices=PARTS, default="all",
                    help="translation (this comparison), pretraining (RoBERTa pretraining -> fine-tuning, "
                         "OUTPUT/pretraining/; its options start with --lm-), "
                         "or all: both, one report")
    ap.add_argument("--preset", default="cpu",
                    help="budget: " + "; ".join(f"{k}: {v['note']}" for k, v in PRESETS.items())
                         + ". The size, model and training options below default to the preset's")
    ap.add_argument("--schemes", nargs="+", default=list(DEFAULT_ROWS),
                    help=f"rows of the comparison ({', '.join(ROWS)}), or 'all' for every row")
    ap.add_argument("--baseline", default=None,
                    help="row every other row is tested against (default: unigram when it runs, else the first)")
    ap.add_argument("--noise-fraction", default=str(PAPER_FRACTION),
                    help="probability that an inflectable word is re-inflected (inflection noise) and that a space "
                         "between words is dropped (whitespace noise) in the perturbed test sets (FLOTA: 0.3)")
    ap.add_argument("--noise-seed", type=int, default=DEMO_SEED, help="seed of both perturbations")
    ap.add_argument("--dry-run", action="store_true", help="print the commands every row would run, run nothing")
    add_preset_options(ap, PRESETS, PRESET_OPTIONS, "preset options (default: the preset's value; 0 lines = the "
                       "whole split)", PRESET_HELP)
    ap.add_argument("--workers", type=int, default=2, help="encoder processes")
    ap.add_argument("--jobs", type=int, default=None,
                    help="rows run at the same time (default: one per CPU core, at most one per row; 1 with the gpu "
                         "preset)")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads of each row's training and generation (default: CPU cores / jobs)")
    ap.add_argument("--gold-en", type=Path, default=SHARED_DATA / "morph_gold" / "eng.word.dev.tsv",
                    help="English gold morphology (boundary scores)")
    ap.add_argument("--gold-de", type=Path, default=SHARED_DATA / "morph_gold" / "deu.derivational.v1.tsv",
                    help="German derivational verbs (Wordmap boundary scores)")
    ap.add_argument("--example-ids", type=int, nargs="+", default=[0, 7, 21],
                    help="test sentences shown encoded in the report")
    return ap


def _check_rows(args) -> None:
    """The preset, ``--schemes`` (``all``: every row) and ``--baseline`` (default: unigram, else the first row)."""
    if args.preset not in PRESETS:
        raise UserError(f"unknown preset {args.preset!r} (choose from {', '.join(PRESETS)})")
    if "all" in args.schemes:
        args.schemes = list(ROWS)
    unknown = [n for n in args.schemes if n not in ROWS]
    if unknown:
        raise UserError(f"unknown scheme {unknown[0]!r} in --schemes (choose from {', '.join(ROWS)})")
    if args.baseline is None:
        args.baseline = "unigram" if "unigram" in args.schemes else args.schemes[0]
    elif args.baseline not in args.schemes:
        raise UserError(f"--baseline {args.baseline!r} is not among --schemes ({', '.join(args.schemes)})")


def _jobs_and_threads(args) -> None:
    """``--jobs`` (default: one row per CPU core; 1 on a GPU) and ``--threads`` (default: the cores shared out)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if args.jobs is None:
        args.jobs = 1 if args.device == "gpu" else max(1, min(cores, len(args.schemes)))
    if args.jobs < 1 or (args.threads is not None and args.threads < 1):
        raise UserError("--jobs and --threads must be at least 1")
    if args.threads is None:
        args.threads = max(1, cores // args.jobs)


def _data_folder(ap: argparse.ArgumentParser, data: Path | None, output: Path) -> Path:
    """``--data``, else the online download into OUTPUT; a usage error when there is neither."""
    if data is None:
        data = download_multi30k(output / "multi30k-download")
    if data is None:
        ap.error("no data: ../shared/data/multi30k is not there and the online download failed. Pass --data DIR "
                 "with Multi30k's raw train/val/test_2016_flickr .en/.de files (github.com/multi30k/dataset, "
                 "data/task1/raw), or run train_scripts/prepare_multi30k.sh --out DIR when online")
    if not data.is_dir():
        ap.error(f"--data {data} is not a directory")
    return data


def parse_args(argv=None):
    """The translation part's options (from the demo's one parser: the pretraining part's are read and left to
    it); a bad preset, scheme, baseline or noise fraction is a :class:`UserError` before any work."""
    ap = demo_parser()
    args = ap.parse_args(argv)
    _check_rows(args)
    args.noise_fraction = noise_eval.check_fraction(args.noise_fraction)
    preset = PRESETS[args.preset]
    args.preset_overrides = apply_preset(args, preset, PRESET_OPTIONS)
    args.device = preset["device"]
    args.output = args.output.resolve()
    check_output_folder(args.output, {"--data": args.data})
    _jobs_and_threads(args)
    for name in args.schemes:  # a bad scheme option is an error before any work starts
        make_scheme(ROWS[name].config, ("en", "de"), str(args.output))
    if args.dry_run:
        return args
    args.data = _data_folder(ap, args.data, args.output)
    return args


def check_output_folder(output: Path, inputs: dict) -> None:
    """Before any work: ``--output`` is a folder (or can be made) that can be written, and no input is in the
    folder the part rewrites (``OUTPUT/raw``: the data's first lines are written there)."""
    if output.exists() and not output.is_dir():
        raise UserError(f"--output {output} is a file, not a folder")
    check_output_path(str(output / "results.json"), "--output file")
    raw = output / "raw"
    for what, path in inputs.items():
        resolved = path.resolve() if path is not None else None
        if resolved is not None and (resolved == raw or raw in resolved.parents):
            raise UserError(f"{what} {path} overlaps {raw}, which the demo rewrites; give --output another folder")


def download_multi30k(dest: Path) -> Path | None:
    """The online download of the recipes (prepare_multi30k.sh); None when it fails (offline)."""
    if (dest / "train.en").exists():
        return dest
    print(f"no local Multi30k: downloading it into {dest}", file=sys.stderr)
    proc = subprocess.run(["bash", str(REPO / "train_scripts" / "prepare_multi30k.sh"), "--out", str(dest)],
                          env=child_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr.strip()[-500:], file=sys.stderr)
        return None
    return dest


def run_rows(args, runner: Runner, stages: Stages, raw: Path) -> tuple[list, list]:
    """Every row of ``--schemes`` as a step of the demo's scheduler (``train_scripts.demo.stages.Scheduler``, the
    pretraining part's too), ``--jobs`` rows at a time in the order of ``--schemes``, each holding one slot for
    all its stages: ``(results, RowRun objects)``.  A failing row lets the running ones finish (their stages are
    recorded, so a rerun skips them) and starts no other."""
    sched = Scheduler(args.jobs)
    runs = [RowRun(ROWS[name], args, runner, stages, raw) for name in args.schemes]
    bar = tqdm(total=len(runs), desc=f"schemes ({min(args.jobs, len(runs))} at a time)", unit="scheme",
               file=sys.stderr, disable=None)   # (None: no bar in a log file, where each redraw would stay)

    def row(run: RowRun) -> dict:
        with sched.slot():
            result = run.run_all()
        bar.update()
        return result

    steps = [sched.add(lambda r=run: row(r)) for run in runs]
    try:
        sched.wait()
    except BaseException:       # SIGINT/SIGTERM: no stage may be recorded from here on
        sched.stopping.set()
        stages.stopping.set()
        raise
    finally:
        bar.close()
    return [step.result() for step in steps], runs


def significance(rows: list, row_runs: list, raw: Path, baseline: str) -> dict:
    """sacreBLEU's CIs and paired tests against the baseline row, per test set, into each row's ``tests``."""
    from train_scripts.significance import compare_test_sets

    hyps: dict = {}
    for run in row_runs:
        for test_set, lines in run.hypotheses().items():
            hyps.setdefault(test_set, {})[run.row.name] = lines
    res = compare_test_sets(hyps, read_text_lines(raw / "test.de"), baseline)
    for row in rows:
        row["tests"] = res["systems"].get(row["name"], {})
    return res["settings"]


def summary(args, counts: dict) -> str:
    budget = (f"trained with early stopping (patience {args.patience} validations, at most {args.max_update} "
              f"updates) on {args.device.upper()}, the best checkpoint averaged with the {args.average - 1} before "
              "it" if args.patience > 0 else
              f"trained for {args.max_update} updates of at most {args.max_tokens} tokens on {args.device.upper()} "
              f"(the same budget for every row; what each row saw in sentence pairs and tokens: Training budget), "
              f"the last {args.average} checkpoints averaged")
    return (f"{counts['train']} training pairs, {counts['valid']} validation, {counts['test']} test "
            f"(test_2016_flickr). Every scheme: the same Transformer ({args.layers} layers, {args.embed_dim} "
            f"dimensions, {args.heads} heads) {budget}, beam 4, length penalty 0.6, with the recipes users run "
            "(binarize, train_transformer_big.sh, average_checkpoints, evaluate)."
            + (f" Rows ran {min(args.jobs, len(args.schemes))} at a time, {args.threads} torch "
               f"thread{'s' if args.threads > 1 else ''} each." if args.device == "cpu" else ""))


#: ``--part``: the translation comparison (this module), RoBERTa pretraining -> fine-tuning
#: (``train_scripts/demo/lm_demo.py``), or both, one report
PARTS = ("all", "translation", "pretraining")

def demo_parser() -> argparse.ArgumentParser:
    """``morphtok-demo``'s one parser: the translation part's options, the pretraining part's (``--lm-...``) and
    those both take (``--output``, ``--dry-run``, ``--jobs``, ``--threads``)."""
    from train_scripts.demo import lm_demo

    ap = _parser()
    lm_demo.add_options(ap)
    return ap


def main(argv=None) -> int:
    """``morphtok-demo``: the translation part, the pretraining part, or both (``--part``, default all), then
    the one report of every part that has results."""
    argv = list(sys.argv[1:] if argv is None else argv)
    from train_scripts.demo import demo_report, lm_demo

    options = demo_parser().parse_args(argv)
    if options.part in ("all", "pretraining"):
        try:   # the pretraining part's options and inputs, before any part runs
            lm_demo.parse_args(options=copy.copy(options))
        except UserError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    status = 0
    if options.part in ("all", "translation"):
        status = translation_main(argv)
    if options.part in ("all", "pretraining") and status == 0:
        status = lm_demo.main(argv, options=copy.copy(options))
    if status == 0 and not options.dry_run:   # one report with every part's results
        out = options.output.resolve()
        if demo_report.write(str(out)):
            say(f"report: {out / 'REPORT.md'} and {out / 'report.html'} (every part that has results)")
    return status


def translation_main(argv=None) -> int:
    try:
        args = parse_args(argv)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = args.output
    raw = out / "raw"
    if args.dry_run:  # before anything is written
        print(f"# preset {args.preset} ({args.device}): " + ", ".join(f"{k.replace('_', '-')} {getattr(args, k)}"
                                                                 for k in PRESET_OPTIONS) + " (0 lines: all)")
        print(" ".join(["python", "-m", "preprocess.evaluate.noise", "perturb", "--kind", "KIND", "--fraction",
                        str(args.noise_fraction), "--seed", str(args.noise_seed), "--input", str(raw / "test.en"),
                        "--output", str(noisy_test_file(out, "KIND"))]))
        for name in args.schemes:
            print(f"# {name}")
            print("\n".join(RowRun(ROWS[name], args, None, None, raw).plan()))
        return 0
    signal.signal(signal.SIGTERM, interrupt_on_signal)  # a killed pipeline stops its child processes too
    become_subreaper()
    os.environ["NLTK_DATA"] = child_env()["NLTK_DATA"]  # BITE runs in this process (binarize, metrics)
    out.mkdir(parents=True, exist_ok=True)
    runner = Runner(out, args.threads)
    stages = Stages(out)
    sizes = {"train": args.train_lines, "valid": args.valid_lines, "test": args.test_lines}
    t0 = time.time()
    try:
        counts = stages.run("data", [raw], lambda: prepare_raw(args.data, raw, sizes),
                            key={"data": str(args.data), **sizes})
        noise_stats = stages.run("noise", [noisy_test_file(out, k) for k in NOISE_KINDS],
                                 lambda: make_noise(args, raw),
                                 key={"fraction": args.noise_fraction, "seed": args.noise_seed}, after=("data",))
        rows, runs = run_rows(args, runner, stages, raw)
        sig = significance(rows, runs, raw, args.baseline)
    except (PipelineError, UserError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BaseException:  # interrupted (SIGINT, SIGTERM): nothing this run started may outlive it
        stop_descendants()
        raise
    from train_scripts.demo import demo_report

    meta = {
        "dataset": f"Multi30k En->De ({args.data})",
        "summary": summary(args, counts),
        "preset": args.preset, "preset_note": PRESETS[args.preset]["note"],
        "options": {k: getattr(args, k) for k in PRESET_OPTIONS},
        "preset_overrides": args.preset_overrides,
        "max_update": args.max_update, "baseline": args.baseline,
        "parallel": {"jobs": min(args.jobs, len(args.schemes)), "threads": args.threads,
                     "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()},
        "noise": {"fraction": args.noise_fraction, "seed": args.noise_seed,
                  "files": {k: noisy_test_file(out, k).name for k in NOISE_KINDS}, "stats": noise_stats},
        "significance": sig,
        "versions": versions(),
        "commands": [" ".join(shlex.quote(a) for a in ["morphtok-demo",
                                                        *(argv if argv is not None else sys.argv[1:])])]
                    + (out / "commands.txt").read_text(encoding="utf-8").splitlines(),
        "seconds": time.time() - t0,
        "skipped_stages": stages.skipped,
        "rerun_stages": stages.ran,
    }
    results = {"meta": meta, "schemes": rows}
    (out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    paths = demo_report.write(str(out))
    print(f"report: {paths['markdown']} and {paths['html']} ({time.time() - t0:.0f} s)", file=sys.stderr)
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
