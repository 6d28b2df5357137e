"""The translation part of ``make demo``: every scheme through the recipes users run, on Multi30k En->De.

The part is a list of recipe configurations (``train_scripts/demo/rows.py`` ROWS): each row is a configuration of a
scheme of the registry (``preprocess/registry.py``; its recipe in ``train_scripts/schemes``) and runs through exactly what a researcher runs on a cluster:
``train_scripts.binarize`` -> ``train_scripts/train_transformer_big.sh`` (with the budget preset's options)
-> ``train_scripts.average_checkpoints`` -> ``train_scripts.evaluate``, plus intrinsic metrics (sequence lengths,
vocabulary use, morph boundary P/R/F1, the scheme's own metrics).  Writes ``REPORT.md``, ``report.html``, plots
and ``results.json`` into ``--output``; every intermediate file stays under it.

Robustness (the BITE and FLOTA papers' threat models): the test source is perturbed twice
(``preprocess.evaluate.noise``, ``--mt-noise-fraction``, ``--mt-noise-seed``; written beside the report as
``test.infl.en`` and ``test.ws.en``), encoded with each row's learned scheme and translated by the same model in
one extra ``fairseq-generate`` per row, no extra training; the model-free counterpart is the similarity of clean
and perturbed encodings.  Every BLEU/chrF carries sacreBLEU's 95% CI and a paired test against ``--mt-baseline``
(``train_scripts.significance``).  Budget: ``--mt-preset cpu`` (default: 2,000 updates of a small Transformer, at
which the models learn; five rows, ``--mt-schemes all`` for nine), ``fast`` (the 250-update smoke test) or ``gpu``
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

This module: the part (:data:`PART`, a :class:`~train_scripts.demo.part.Part`): its options, settings and run;
the rows and how one runs: ``translation/rows.py``; its report: ``translation/report.py``; the demo's entry point,
stages, commands and clean stops: ``train_scripts/demo/main.py`` and ``stages.py``.

    morphtok-demo --part translation --mt-data ../shared/data/multi30k --output demo-output [--mt-preset cpu|fast|gpu] \\
        [--mt-schemes bpe unigram ... | all] [--mt-baseline unigram] [--mt-noise-fraction 0.3] [--mt-noise-seed 1] \\
        [--dry-run]

The part's own options are all ``--mt-...`` (as the pretraining part's are ``--lm-...`` and the German part's
``--de-...``); each still works under its earlier name without the prefix (``--preset``, ``--schemes`` ...).
"""
from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from pathlib import Path

from tqdm import tqdm

from preprocess.common import REPO, UserError
from preprocess.evaluate import noise as noise_eval
from preprocess.files.outputs import check_output_path
from preprocess.whitespace_noise import DEMO_SEED, PAPER_FRACTION
from train_scripts.demo.part import Context, Part, cores
from train_scripts.demo.preflight import refuse_overlap
from train_scripts.demo.presets import add_preset_options, apply_preset
from train_scripts.demo.translation.rows import (
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

# --- the part ---------------------------------------------------------------------------------------------------

#: the prefix of the part's own options, as the other parts have theirs (``--lm-`` pretraining, ``--de-`` German)
FLAG_PREFIX = "--mt-"


class _Prefixed:
    """The part's group of the demo's parser, naming each option ``--mt-NAME`` first and keeping ``--NAME``, its
    name before the prefix, as an alias; the value goes where the old name put it (``args.NAME``)."""

    def __init__(self, group):
        self.group = group

    def add_argument(self, flag: str, **kwargs):
        name = flag[len("--"):]
        return self.group.add_argument(FLAG_PREFIX + name, flag, dest=name.replace("-", "_"), **kwargs)


def _check_rows(args) -> None:
    """The preset, ``--mt-schemes`` (``all``: every row) and ``--mt-baseline`` (default: unigram, else the first row)."""
    if args.preset not in PRESETS:
        raise UserError(f"unknown preset {args.preset!r} (choose from {', '.join(PRESETS)})")
    if "all" in args.schemes:
        args.schemes = list(ROWS)
    unknown = [n for n in args.schemes if n not in ROWS]
    if unknown:
        raise UserError(f"unknown scheme {unknown[0]!r} in --mt-schemes (choose from {', '.join(ROWS)})")
    if args.baseline is None:
        args.baseline = "unigram" if "unigram" in args.schemes else args.schemes[0]
    elif args.baseline not in args.schemes:
        raise UserError(f"--mt-baseline {args.baseline!r} is not among --mt-schemes ({', '.join(args.schemes)})")


def check_output_folder(output: Path, inputs: dict) -> None:
    """Before any work: ``--output`` is a folder (or can be made) that can be written, and no input is in the
    folder the part rewrites (``OUTPUT/raw``: the data's first lines are written there)."""
    if output.exists() and not output.is_dir():
        raise UserError(f"--output {output} is a file, not a folder")
    check_output_path(str(output / "results.json"), "--output file")
    raw = output / "raw"
    refuse_overlap(inputs.items(), raw, str(raw))


#: a parallel file larger than this is sampled by the pre-flight (its first SAMPLE_BYTES decoded; its lines still
#: counted, by bytes), not decoded whole
SAMPLE_BYTES = 64 << 20


def _checked_lines(path: Path) -> int:
    """The lines of ``path``, its UTF-8 checked (whole up to SAMPLE_BYTES, else its first SAMPLE_BYTES)."""
    from preprocess.files.inputs import UTF8_HINT, count_lines, read_lines

    if path.suffix == ".gz" or path.stat().st_size <= SAMPLE_BYTES:
        return count_lines(str(path), hint=UTF8_HINT)
    size = 0
    for line in read_lines(str(path), hint=UTF8_HINT):   # a sample decoded, every line counted by bytes
        size += len(line)
        if size > SAMPLE_BYTES:
            break
    with open(path, "rb") as fh:
        return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b""))


def _check_parallel(data: Path) -> None:
    from train_scripts.demo.translation.rows import find_split

    if not data.is_dir():
        raise UserError(f"--mt-data {data} is not a folder")
    for split in ("train", "valid", "test"):
        en, de = find_split(data, split, "en"), find_split(data, split, "de")
        n_en, n_de = _checked_lines(en), _checked_lines(de)
        if n_en != n_de:
            raise UserError(f"--mt-data: {en.name} has {n_en} lines and {de.name} {n_de}: the {split} split is "
                            "misaligned; fix the files or give --mt-data another copy")


def check_contents(args) -> None:
    """The pre-flight's look at the inputs' contents (``Part.check_inputs``): each split of ``--mt-data`` found,
    its English and German files valid UTF-8 and of the same number of lines (a misaligned pair is refused here,
    not at the data stage); the gold morphology files valid UTF-8.  Without ``--mt-data`` (the download) there is
    nothing to read yet.  A problem is one line naming the option."""
    import gzip

    from train_scripts.demo.stages import PipelineError

    for option, check, path in (("--mt-data", _check_parallel, args.data),
                                ("--mt-gold-en", _checked_lines, args.gold_en),
                                ("--mt-gold-de", _checked_lines, args.gold_de)):
        if path is None or (option != "--mt-data" and not Path(path).is_file()):
            continue
        try:
            check(Path(path))
        except UserError as exc:
            raise (exc if str(exc).startswith(option) else
                   UserError(f"{option}: {exc}; fix the file or give {option} another copy")) from None
        except (PipelineError, OSError, EOFError, gzip.BadGzipFile) as exc:   # PipelineError: no split file
            raise UserError(f"{option}: {exc}") from None


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


def run_rows(args, ctx: Context, raw: Path) -> tuple[list, list]:
    """Every row of ``--mt-schemes`` as a step of the demo's scheduler (``train_scripts.demo.stages.Scheduler``, the
    pretraining part's too), ``--jobs`` rows at a time in the order of ``--mt-schemes``, each holding one slot for
    all its stages: ``(results, RowRun objects)``.  A failing row lets the running ones finish (their stages are
    recorded, so a rerun skips them) and starts no other."""
    sched, stages = ctx.scheduler, ctx.stages
    runs = [RowRun(ROWS[name], args, ctx.runner, stages, raw) for name in args.schemes]
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


class TranslationPart(Part):
    """Multi30k En->De through the translation recipes, one row per scheme configuration."""

    name = "translation"
    title = "every scheme through the translation recipes on Multi30k En->De (BLEU, chrF, robustness, intrinsic)"

    #: measured: about 200 MB for the default run (five rows' binarised data, checkpoints, evaluations); the gpu
    #: preset keeps Transformer-base checkpoints (about 0.5 GB each, several a row)
    disk = {"cpu": 200e6, "fast": 60e6, "gpu": 15e9}
    #: its inputs in the shared data folder (``--shared-data``; docs/data.md); without Multi30k there, the part
    #: downloads it (``--mt-data``'s default)
    shared_inputs = {"--mt-data": "multi30k", "--mt-gold-en": "morph_gold/eng.word.dev.tsv",
                     "--mt-gold-de": "morph_gold/deu.derivational.v1.tsv"}
    optional_inputs = frozenset({"--mt-data"})

    def folder(self, output: Path) -> Path:
        return output   # at the top of --output, as before the demo had parts: an earlier output resumes

    #: the option that chooses the part's preset (named in the pre-flight's refusals)
    preset_flag = FLAG_PREFIX + "preset"

    def add_options(self, ap) -> None:
        """The part's own options, all ``--mt-...`` (each also under its old name without the prefix)."""
        ap = _Prefixed(ap)
        ap.add_argument("--data", type=Path, default=default_data(),
                        help="Multi30k folder (raw train/val/test_2016_flickr .en/.de[.gz])")
        ap.add_argument("--preset", default="cpu",
                        help="budget: " + "; ".join(f"{k}: {v['note']}" for k, v in PRESETS.items())
                             + ". The size, model and training options below default to the preset's")
        ap.add_argument("--schemes", nargs="+", default=list(DEFAULT_ROWS),
                        help=f"rows of the comparison ({', '.join(ROWS)}), or 'all' for every row")
        ap.add_argument("--baseline", default=None,
                        help="row every other row is tested against (default: unigram when it runs, else the first)")
        ap.add_argument("--noise-fraction", default=str(PAPER_FRACTION),
                        help="probability that an inflectable word is re-inflected (inflection noise) and that a "
                             "space between words is dropped (whitespace noise) in the perturbed test sets "
                             "(FLOTA: 0.3)")
        ap.add_argument("--noise-seed", type=int, default=DEMO_SEED, help="seed of both perturbations")
        add_preset_options(ap, PRESETS, PRESET_OPTIONS, "", PRESET_HELP, group=ap)
        ap.add_argument("--workers", type=int, default=2, help="encoder processes")
        ap.add_argument("--gold-en", type=Path, default=SHARED_DATA / "morph_gold" / "eng.word.dev.tsv",
                        help="English gold morphology (boundary scores)")
        ap.add_argument("--gold-de", type=Path, default=SHARED_DATA / "morph_gold" / "deu.derivational.v1.tsv",
                        help="German derivational verbs (Wordmap boundary scores)")
        ap.add_argument("--example-ids", type=int, nargs="+", default=[0, 7, 21],
                        help="test sentences shown encoded in the report")

    def settings(self, options: argparse.Namespace) -> argparse.Namespace:
        """A bad preset, scheme, baseline or noise fraction, or an unusable output folder, is a
        :class:`UserError` before any work."""
        args = argparse.Namespace(**vars(options))
        _check_rows(args)
        args.noise_fraction = noise_eval.check_fraction(args.noise_fraction)
        preset = PRESETS[args.preset]
        args.preset_overrides = apply_preset(args, preset, PRESET_OPTIONS)
        args.device = preset["device"]
        args.output = args.output.resolve()
        check_output_folder(args.output, {"--mt-data": args.data})
        for name in args.schemes:  # a bad scheme option is an error before any work starts
            make_scheme(ROWS[name].config, ("en", "de"), str(args.output))
        if not args.dry_run and args.data is not None and not args.data.is_dir():
            raise UserError(f"--mt-data {args.data} is not a directory")
        return args

    def check_inputs(self, args) -> None:
        check_contents(args)

    def width(self, args) -> int:
        return len(args.schemes)   # a row holds one slot for all its stages

    def stage_costs(self, args) -> list:
        from train_scripts.demo.estimate import costs_from
        from train_scripts.demo.translation.rows import FIGURES

        figures = FIGURES.get(args.preset) or {}
        stages = [("data", "data"), ("noise", "noise")]
        for name in args.schemes:   # a row's stages run one after another on its slot
            stages += [(f"{name}/{kind}", f"{kind}/{name}" if f"{kind}/{name}" in figures else kind)
                       for kind in ("binarize", "train", "average", "evaluate", "binarize_noisy", "evaluate_noisy",
                                    "intrinsic")]
        return costs_from(stages, FIGURES.get(args.preset))   # (a row's own figure where it has one)

    def plan(self, args) -> list:
        out, raw = args.output, args.output / "raw"
        lines = [f"# preset {args.preset} ({args.device}): " + ", ".join(f"{k.replace('_', '-')} {getattr(args, k)}"
                                                                         for k in PRESET_OPTIONS) + " (0 lines: all)",
                 " ".join(["python", "-m", "preprocess.evaluate.noise", "perturb", "--kind", "KIND", "--fraction",
                           str(args.noise_fraction), "--seed", str(args.noise_seed), "--input",
                           str(raw / "test.en"), "--output", str(noisy_test_file(out, "KIND"))])]
        for name in args.schemes:
            lines.append(f"# {name}")
            lines += RowRun(ROWS[name], args, None, None, raw).plan()
        return lines

    def run(self, args, ctx: Context) -> dict:
        args.data = _data_folder(args.data, ctx.output)
        out, stages = ctx.output, ctx.stages
        raw = out / "raw"
        sizes = {"train": args.train_lines, "valid": args.valid_lines, "test": args.test_lines}
        t0 = time.time()
        counts = stages.run("data", [raw], lambda: prepare_raw(args.data, raw, sizes),
                            key={"data": str(args.data), **sizes})
        noise_stats = stages.run("noise", [noisy_test_file(out, k) for k in NOISE_KINDS],
                                 lambda: make_noise(args, raw),
                                 key={"fraction": args.noise_fraction, "seed": args.noise_seed}, after=("data",))
        rows, runs = run_rows(args, ctx, raw)
        sig = significance(rows, runs, raw, args.baseline)
        meta = {
            "dataset": f"Multi30k En->De ({args.data})",
            "summary": summary(args, counts),
            "preset": args.preset, "preset_note": PRESETS[args.preset]["note"],
            "options": {k: getattr(args, k) for k in PRESET_OPTIONS},
            "preset_overrides": args.preset_overrides,
            "max_update": args.max_update, "baseline": args.baseline,
            "parallel": {"jobs": min(args.jobs, len(args.schemes)), "threads": args.threads, "cores": cores()},
            "noise": {"fraction": args.noise_fraction, "seed": args.noise_seed,
                      "files": {k: noisy_test_file(out, k).name for k in NOISE_KINDS}, "stats": noise_stats},
            "significance": sig,
            "commands": [" ".join(shlex.quote(a) for a in ["morphtok-demo", *ctx.argv])]
                        + (ctx.folder / "commands.txt").read_text(encoding="utf-8").splitlines(),
            "seconds": time.time() - t0,
            "skipped_stages": stages.skipped,
            "rerun_stages": stages.ran,
        }
        return {"meta": meta, "schemes": rows}

    def sections(self, results: dict, folder: str, relative: str = "") -> list:
        from train_scripts.demo.translation import report

        return report.sections(results, folder)


def _data_folder(data: Path | None, output: Path) -> Path:
    """``--mt-data``, else the online download into OUTPUT; a :class:`UserError` when there is neither."""
    if data is None:
        data = download_multi30k(output / "multi30k-download")
    if data is None:
        raise UserError("no data: ../shared/data/multi30k is not there and the online download failed. Pass --mt-data "
                        "DIR with Multi30k's raw train/val/test_2016_flickr .en/.de files (github.com/multi30k/"
                        "dataset, data/task1/raw), or run train_scripts/prepare_multi30k.sh --out DIR when online")
    if not data.is_dir():
        raise UserError(f"--mt-data {data} is not a directory")
    return data


PART = TranslationPart()
