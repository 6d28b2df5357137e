"""The second part of ``make demo``: RoBERTa pretraining -> fine-tuning, the space-as-token and FLOTA papers' questions.

Every row is a scheme configuration of the registry (``train_scripts/demo/rows.py``, the same rows as the translation part's)
and runs through the recipes users run: ``train_scripts.binarize --lm`` -> ``train_scripts/pretrain_roberta.sh``
(the ``--small`` model, the same budget for every row) -> ``train_scripts/finetune_classification.sh`` on the
Superbizarre topicality sets (Gow-Smith et al. 2022, section 5: N seeds, the best dev epoch scored on test, mean
and standard deviation, Welch's t-test against the Unigram row) -> ``morphtok-demo``'s report.

Two controls say what the numbers mean:

* **random init**: the baseline row (``--lm-control all``: every row) fine-tuned from random weights with the same
  seeds, the same architecture and dictionary.  "Pretraining helped" means at least 1 point of test accuracy over
  that control: the whole 95% interval of the difference at least 1 point (at least 5 seeds;
  ``train_scripts/demo/statistics.py``).  ``--lm-pretrain-seeds N`` pretrains each row N times (1 on ``cpu``, 3 on
  ``gpu``) and fine-tunes on each checkpoint; with N >= 2 the row comparisons and the pretrained-vs-random tests
  take the N per-checkpoint means as their samples, with N = 1 they cover the fine-tuning seeds of one checkpoint,
  and the report says which.
* **collapsed runs**: a fine-tuned model that predicts one class for every dev example has not learned; it is
  counted and shown, and left out of the mean (the rule is applied on dev, never on test).

FLOTA (Hofmann et al. 2022, Tables 2-4, Figure 3): the baseline row's pretrained model fine-tuned on ArXiv-L
(``--lm-flota-set S``: ArXiv-S) with its standard segmentation and with FLOTA, FIRST and LONGEST over the row's own
vocabulary for each ``k`` of ``--lm-flota-k``; every fine-tuned model scored on the clean test set and on a copy
with unseen whitespace noise (each space dropped with probability ``--lm-noise-p``, the same noisy text for every
encoding); macro F1 per seed, and the mean tokens per example (Table 3).  Its control: the same baseline row
fine-tuned from random weights at every segmentation (``--lm-flota-control-seeds`` seeds; 0: none), whether
FLOTA's effect needs pretraining.

Budget presets (``--lm-preset``): ``cpu`` (the default of ``make demo``: sized to fit beside the translation part
in 90 minutes on 2 cores), ``fast`` (a smoke test, what ``make test`` runs) and ``gpu`` (the papers' Table 9/10
settings scaled to one GPU).  ``--lm-budget epochs`` trains every row for the same number of epochs instead of the
same number of updates (the paper's second budget, Table 7).  Each step is a resumable stage (the translation
part's ``Stages``: a finished stage with the same options and inputs is skipped); SIGINT/SIGTERM stop every
process the demo started.

This module: the part (:data:`PART`): its options, settings and run; the rows, presets and fine-tuning tasks:
``plan.py``; its data step and its own scores on the shared language-model pipeline (``train_scripts/demo/lm/``:
binarize, pretrain, prepare, fine-tune, the results): ``scheduler.py``.

    morphtok-demo --part pretraining --output demo-output [--lm-preset cpu|fast|gpu] \\
        [--lm-rows unigram unigram_prime unigram_prime_nospace | paper | all] [--lm-seeds 10] [--lm-control all] \\
        [--lm-budget updates|epochs] [--lm-tasks arxiv reddit] [--lm-flota-set L|S] [--dry-run]
"""
from __future__ import annotations

import argparse
import os
import shlex
import time
from pathlib import Path

from preprocess.common import UserError
from preprocess.files.outputs import check_output_path
from preprocess.whitespace_noise import DEMO_SEED, PAPER_FRACTION
from train_scripts.demo.lm.pipeline import stage_seconds
from train_scripts.demo.part import Context, Part
from train_scripts.demo.preflight import refuse_overlap
from train_scripts.demo.presets import add_preset_options, apply_preset
from train_scripts.demo.pretraining.corpus import ARXIV, arxiv_inputs, corpus_files
from train_scripts.demo.pretraining.plan import (
    BASELINE,
    DEFAULT_LM_ROWS,
    FIGURES,
    FLOTA_MODES,
    FLOTA_PAPER,
    LM_ROW_NAMES,
    PAPER_ROWS,
    PRESET_HELP,
    PRESET_KEYS,
    PRESETS,
    largest_size,
    lm_rows,
    plan_of,
    published_rows,
)
from train_scripts.demo.pretraining.scheduler import PretrainingRun
from train_scripts.demo.stages import versions
from train_scripts.tools import SHARED_DATA

# --- options --------------------------------------------------------------------------------------------------

def _flag(key: str) -> str:
    """The option of a preset value: ``--lm-`` and its name (``lm_words``: ``--lm-words``)."""
    return "--lm-" + key.removeprefix("lm_").replace("_", "-")


def add_options(ap) -> None:
    """The part's own options, all ``--lm-...``, in its group ``ap`` of the demo's parser."""
    ap.add_argument("--lm-preset", default="cpu", choices=list(PRESETS),
                    help="budget: " + "; ".join(f"{k}: {v['note']}" for k, v in PRESETS.items()).replace("%", "%%"))
    ap.add_argument("--lm-rows", nargs="+", default=list(DEFAULT_LM_ROWS),
                    help=f"rows ({', '.join(LM_ROW_NAMES)}, and published_* with the paper's own 16k models), "
                         "or the groups 'paper' (the space-as-token paper's six), 'published' (the six with the "
                         "paper's published models) and 'all' (the six and BITE+Unigram)")
    ap.add_argument("--lm-budget", choices=["updates", "epochs"], default="updates",
                    help="every row the same number of updates (--lm-max-update) or of epochs (--lm-max-epoch)")
    ap.add_argument("--lm-control", choices=["baseline", "all", "none"], default="baseline",
                    help="fine-tune from random weights too: the baseline row, every row, or none")
    ap.add_argument("--lm-tasks", nargs="+", default=["arxiv"], choices=["arxiv", "reddit"],
                    help="Superbizarre data sets")
    ap.add_argument("--lm-superbizarre", type=Path, default=SHARED_DATA / "superbizarre",
                    help="folder of the Superbizarre CSVs")
    ap.add_argument("--lm-flota-data", type=Path, default=SHARED_DATA / "flota_arxiv", help="the ArXiv CSVs")
    ap.add_argument("--lm-flota-set", choices=["L", "S", "none"], default="L",
                    help="ArXiv-L (1e+03) or ArXiv-S (1e+02), or no FLOTA table")
    ap.add_argument("--lm-flota-areas", nargs="+", default=["physics"], choices=["cs", "maths", "physics"],
                    help="ArXiv subareas (the paper averages all three)")
    ap.add_argument("--lm-flota-paper", action="store_true",
                    help="FLOTA's own fine-tuning settings (A.2: batch 64, every lr of {1e-5, 3e-5, 1e-4})")
    ap.add_argument("--lm-flota-select", choices=["dev", "noisy-dev"], default="dev",
                    help="the FLOTA runs' best epoch by macro F1 on the clean dev set, or on a noisy copy of it (the "
                         "authors' noise runs, Table 4's 'Dev (N)')")
    ap.add_argument("--lm-noise-p", type=float, default=PAPER_FRACTION,
                    help="whitespace noise of the noisy test set (FLOTA) and inflection noise of the held-out text "
                         "(pseudo-perplexity)")
    ap.add_argument("--lm-noise-seed", type=int, default=DEMO_SEED, help="seed of the whitespace noise")
    add_preset_options(ap, PRESETS, PRESET_KEYS, "", PRESET_HELP, _flag, group=ap)


def parse_args(a: argparse.Namespace) -> argparse.Namespace:
    """This part's settings from the ``options`` that ``morphtok-demo``'s one parser read."""
    preset = PRESETS[a.lm_preset]
    args = argparse.Namespace(output=a.output.resolve(), dry_run=a.dry_run, preset=a.lm_preset,
                              device=preset["device"], model=[str(x) for x in preset["model"]], budget=a.lm_budget,
                              control=a.lm_control, tasks=a.lm_tasks, flota_select=a.lm_flota_select,
                              superbizarre=a.lm_superbizarre, flota_data=a.lm_flota_data, flota_set=a.lm_flota_set,
                              flota_areas=a.lm_flota_areas, noise_p=a.lm_noise_p, noise_seed=a.lm_noise_seed,
                              baseline=BASELINE)
    apply_preset(a, preset, PRESET_KEYS, into=args, flag=_flag)
    args.corpus = [c if c == ARXIV else Path(c) for c in args.corpus]
    args.flota_lrs = [args.flota_lr]
    if a.lm_flota_paper:
        args.flota_batch, args.flota_lrs = FLOTA_PAPER["flota_batch"], FLOTA_PAPER["flota_lrs"]
    groups = {"all": list(LM_ROW_NAMES), "paper": list(PAPER_ROWS), "published": list(published_rows())}
    rows = [name for r in a.lm_rows for name in groups.get(r, [r])]
    known = lm_rows()
    bad = [r for r in rows if r not in known]
    if bad:
        raise UserError(f"unknown row {bad[0]!r} in --lm-rows (choose from {', '.join(known)}, or the groups "
                        f"{', '.join(groups)})")
    if BASELINE not in rows:
        rows = [BASELINE, *rows]   # the Welch tests, the control and the FLOTA table need the Unigram row
    args.rows = list(dict.fromkeys(rows))
    bad_modes = [m for m in args.flota_modes if m not in FLOTA_MODES]
    if bad_modes:
        raise UserError(f"unknown FLOTA mode {bad_modes[0]!r} (choose from {', '.join(FLOTA_MODES)})")
    if any(k < 1 for k in args.flota_k):
        raise UserError("--lm-flota-k values must be at least 1")
    if any(n < 0 or n == 1 for n in args.ft_sizes) or not args.ft_sizes:
        raise UserError("--lm-ft-sizes values must be at least 2 (0: the whole training split)")
    if args.seeds < 1 or args.flota_seeds < 1 or args.pretrain_seeds < 1:
        raise UserError("--lm-seeds, --lm-flota-seeds and --lm-pretrain-seeds must be at least 1")
    if args.flota_control_seeds < 0:
        raise UserError("--lm-flota-control-seeds must be at least 0 (0: no random-weight FLOTA runs)")
    if not 0.0 <= args.noise_p <= 1.0:
        raise UserError(f"--lm-noise-p must be between 0 and 1, not {args.noise_p}")
    check_paths(args)
    return args


#: where each input of this part comes from (docs/data.md says more)
SOURCES = {
    "--lm-superbizarre": "the Superbizarre sets: git clone https://github.com/valentinhofmann/superbizarre",
    "--lm-flota-data": "the FLOTA ArXiv sets: data/ of git clone https://github.com/valentinhofmann/flota",
    "--lm-corpus": "running text, a folder of *.txt[.gz] or one file (../shared/data/english_lm: NLTK's corpora)",
    "--lm-rows": "the space-as-token paper's models: models/sentencepiece of git clone "
                 "https://github.com/edwardgowsmith/improved-tokenisation-methods",
}


def input_paths(args) -> list[tuple[str, Path]]:
    """Every file or folder this part reads, with the option that names it: the corpus (the ArXiv corpus reads
    CSVs of both sets), the CSVs of every fine-tuning run and the published models of ``published_*`` rows."""
    needed = [("--lm-corpus", c) for c in args.corpus if c != ARXIV]
    if ARXIV in args.corpus:
        flota, superbizarre = arxiv_inputs(args.flota_data, args.superbizarre, args.tasks)
        needed += [("--lm-flota-data", p) for p in flota] + [("--lm-superbizarre", p) for p in superbizarre]
    for run in plan_of(args).finetune_runs():
        option = "--lm-superbizarre" if run["part"] == "superbizarre" else "--lm-flota-data"
        needed += [(option, Path(f"{run['prefix']}_{split}.csv")) for split in ("train", "dev", "test")]
    rows = lm_rows()
    needed += [("--lm-rows", Path(rows[r].config["spm_model"])) for r in args.rows if "spm_model" in rows[r].config]
    return list(dict.fromkeys(needed))


def missing_inputs(args) -> str | None:
    """The inputs that are not there, as one sentence (a missing folder once, not each file in it), or None."""
    missing: dict = {}
    for option, path in input_paths(args):
        if not path.exists():
            shown = path if path.parent.exists() else path.parent
            missing.setdefault(option, {})[shown] = None
    if not missing:
        return None
    parts = []
    for option, paths in missing.items():
        first, more = list(paths)[0], len(paths) - 1
        parts.append(f"{first}{f' and {more} more' if more else ''} ({option}; {SOURCES[option]})")
    return ("the pretraining part's input is missing: " + "; ".join(parts)
            + ". Put it there (docs/data.md: the row of each folder says where to get it) or pass the option with "
              "your copy; --part translation runs without it")


def check_paths(args) -> None:
    """Before any work: the output is a folder that no input lies in, and every input exists (one line)."""
    part = args.output / "pretraining"
    # before any work: --output (or its pretraining/) being a file is one line, not a FileExistsError later
    if args.output.is_file():
        raise UserError(f"--output {args.output} is a file, not a folder")
    check_output_path(str(part / "results.json"), "--output file")
    inputs = [("--lm-corpus", c) for c in args.corpus if c != ARXIV] + [("--lm-superbizarre", args.superbizarre)]
    if args.flota_set != "none" or ARXIV in args.corpus:   # the ArXiv corpus reads the ArXiv sets too
        inputs.append(("--lm-flota-data", args.flota_data))
    refuse_overlap(inputs, part)
    if args.dry_run:
        return
    missing = missing_inputs(args)
    if missing:
        raise UserError(missing)
    for source in args.corpus:   # a folder without text files is refused here, not at the corpus stage
        if source != ARXIV:
            corpus_files(source)


def settings(a) -> dict:
    """What the report states about this run's budget and fine-tuning settings."""
    return {k: getattr(a, k) for k in ("preset", "device", "budget", "model", "control", "tasks", "rows",
                                       "baseline", "flota_set", "flota_areas", "flota_lrs", "noise_p", "noise_seed",
                                       "jobs", "threads", "flota_select", *PRESET_KEYS)} | {
        "corpus": [str(c) for c in a.corpus],
                                                                           "note": PRESETS[a.preset]["note"]}


def plan_lines(args) -> list:
    """The part's commands (``--dry-run``): its corpus, each row's binarisation and pretraining, and one example of
    each kind of fine-tuning run."""
    plan = plan_of(args)
    lines = [f"# preset {args.preset}: rows {', '.join(args.rows)}; budget {args.budget}; "
             f"{args.pretrain_seeds} pretraining run(s) per row",
             f"# corpus {args.corpus} -> {plan.raw}/{{train,valid}}.en"]
    for row in args.rows:
        lines.append(" ".join(shlex.quote(str(x)) for x in plan.binarize_command(row)))
        for seed in plan.pretrain_seeds():
            lines.append(" ".join(shlex.quote(str(x)) for x in plan.pretrain_command(row, seed)))
    runs = plan.finetune_runs()
    lines.append(f"# {len(runs)} fine-tuning runs, e.g.:")
    seen = set()
    for run in runs:
        if (run["part"], run["init"]) not in seen:
            seen.add((run["part"], run["init"]))
            lines.append(" ".join(shlex.quote(str(x)) for x in plan.finetune_command(run)))
    return lines


def plan_costs(args, figures) -> list:
    """The stages of the plan in the scheduler's order (pretraining first, then data preparation, fine-tuning, the
    probes and pseudo-perplexity), with the preset's figures (``estimate.Cost``)."""
    from train_scripts.demo.estimate import costs_from

    plan = plan_of(args)
    seeds = plan.pretrain_seeds()
    stages = [("lm/data", "data")] + [(f"lm/{row}/binarize", "binarize") for row in args.rows]
    stages += [(plan.pretrain_stage(row, s), "pretrain") for row in args.rows for s in seeds]
    runs = plan.finetune_runs()
    stages += [(p, "prepare") for p in dict.fromkeys(r["prep"] for r in runs)]
    stages += [(r["name"], f"finetune/{r['part']}") for r in runs]
    probes = dict.fromkeys((r["task"], r["row"]) for r in runs if r["part"] == "superbizarre"
                           and r["init"] == "random" and r["size"] == largest_size(args))
    stages += [(plan.probe_stage(task, row, s), "probe") for task, row in probes for s in seeds]
    stages += [(f"pppl/{row}/{kind}", "pppl") for row in (args.rows if args.pppl_lines else [])
               for kind in ("clean", "noisy")]
    return costs_from(stages, figures)


#: a running-text file larger than this is sampled by the pre-flight (its first SAMPLE_BYTES), not read whole
SAMPLE_BYTES = 8 << 20


def check_contents(args) -> None:
    """The pre-flight's look at the inputs' contents (``Part.check_inputs``): every fine-tuning CSV read whole by
    the reader its stages use (``classification_data.read_csv``: header, rows, labels, UTF-8), each corpus file's
    first SAMPLE_BYTES decoded, each published model loaded; the first problem is one line naming the option."""
    import sentencepiece as spm

    from preprocess.files.inputs import read_lines
    from train_scripts.classification_data import read_csv

    def sample(path: Path) -> None:
        size = 0
        for line in read_lines(str(path)):
            size += len(line)
            if size > SAMPLE_BYTES:
                break

    for option, path in input_paths(args):
        if not path.exists():
            continue   # named by missing_inputs (settings) unless this is a dry run
        try:
            if path.is_dir() and path.suffix == ".csv":
                raise UserError(f"{path} is a folder, not a file")
            if path.suffix == ".csv":
                read_csv(str(path))
            elif path.suffix == ".model":
                spm.SentencePieceProcessor(model_file=str(path))
            elif option == "--lm-corpus":
                for file in corpus_files(path):
                    sample(file)
        except UserError as exc:
            raise UserError(f"{option}: {exc}; fix the file or give {option} another copy") from None
        except (OSError, RuntimeError) as exc:   # sentencepiece: RuntimeError on a corrupt model
            raise UserError(f"{option}: {path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}; "
                            f"give {option} another copy") from None


class PretrainingPart(Part):
    """RoBERTa pretraining per row -> fine-tuning on Superbizarre and ArXiv (FLOTA), with controls."""

    name = "pretraining"
    preset_flag = "--lm-preset"
    #: the default run's folder: about 250 MB (the three rows' data and checkpoints; fine-tuned weights are not
    #: kept); the gpu preset's RoBERTa-base checkpoints are about 1.5 GB each with optimiser state
    disk = {"cpu": 250e6, "fast": 60e6, "gpu": 30e9}
    #: its inputs in the shared data folder (``--shared-data``; docs/data.md)
    shared_inputs = {"--lm-superbizarre": "superbizarre", "--lm-flota-data": "flota_arxiv"}
    title = "RoBERTa pretraining -> fine-tuning (space-as-token on Superbizarre, FLOTA on ArXiv); options --lm-*"

    def add_options(self, group) -> None:
        add_options(group)

    def settings(self, options):
        return parse_args(options)

    def check_inputs(self, args) -> None:
        check_contents(args)

    def stage_costs(self, args) -> list:
        return plan_costs(args, FIGURES.get(args.preset))

    def plan(self, args) -> list:
        return plan_lines(args)

    def run(self, args, ctx: Context) -> dict:
        from train_scripts.demo.pretraining import report

        t0 = time.time()
        stages = ctx.stages
        results = PretrainingRun(args, ctx.runner, stages, ctx.scheduler).run_all()
        results["meta"] = {"settings": settings(args), "seconds": time.time() - t0, "versions": versions(),
                           "command": " ".join(shlex.quote(x) for x in ["morphtok-demo", *ctx.argv]),
                           "skipped_stages": len(stages.skipped), "ran_stages": len(stages.ran),
                           "load": os.getloadavg() if hasattr(os, "getloadavg") else None,
                           # every stage's own wall time, this run's and the resumed ones': what the part costs
                           "stage_seconds": stage_seconds(ctx.folder / ".stages"),
                           "date": time.strftime("%Y-%m-%d %H:%M %Z")}
        results["analysis"] = report.analyse(results)
        return results

    def sections(self, results: dict, folder: str, relative: str = "") -> list:
        from train_scripts.demo.pretraining import report

        return report.sections(results, folder, relative=relative)

    def refresh(self, results: dict, folder: str) -> dict:
        from train_scripts.demo.pretraining import report

        results["analysis"] = report.analyse(results)
        results["meta"]["stage_seconds"] = stage_seconds(Path(folder) / ".stages")
        return results

    def provenance(self, results: dict) -> dict:
        meta = results.get("meta") or {}
        return {"versions": meta.get("versions") or {}, "commands": [meta["command"]] if meta.get("command") else []}


PART = PretrainingPart()
