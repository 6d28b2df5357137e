"""The language-model pipeline's settings and plan: what every step reads and the command it runs.

:class:`Settings` is everything the pipeline reads, every field given by the part that runs it (no default hides a
missing one); :class:`Task` is one fine-tuning task (its CSVs, metric, budget, segmentations and random-weight
controls), so that a part describes its tasks instead of the pipeline knowing them; :class:`Plan` turns them into
paths, stage names and commands, which the dry run prints and ``pipeline.py`` runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from preprocess.common import REPO


@dataclass(frozen=True)
class Encoding:
    """One segmentation of a task's text: the row's own (``standard``), or ``classification_data``'s
    ``--encode flota`` in ``mode`` with ``k`` over the row's vocabulary."""

    name: str
    mode: str | None = None
    k: int | None = None


STANDARD = Encoding("standard")


@dataclass(frozen=True)
class Task:
    """One fine-tuning task: which rows' pretrained models fine-tune on which CSVs, how, and with which controls.

    ``part`` labels its runs in ``results["finetune"]``; ``name`` is its folder and stage name
    (``ft/NAME/ROW/...``).  ``sizes`` is a learning curve of labelled training sizes (0: the whole split; each in
    the run's path, ``nSIZE/``), or None: the whole training split, no size in the path."""

    part: str
    name: str
    prefix: Path                 # the CSVs: PREFIX_{train,dev,test}.csv
    metric: str                  # the best epoch's and the report's metric: accuracy or macro_f1
    max_rows: int                # rows per split (0: all)
    sizes: tuple | None
    epochs: int
    updates: int                 # updates at every size (the nearest whole number of epochs); 0: ``epochs``
    batch: int
    lrs: tuple                   # every learning rate (a folder each when more than one)
    wd: float
    seeds: int                   # fine-tuning seeds of each pretrained run
    rows: tuple                  # the rows whose pretrained models fine-tune
    every_pretraining: bool      # on each pretraining run's checkpoint (False: the first's only)
    controls: tuple              # the rows fine-tuned from random weights too (the same architecture and dictionary)
    control_seeds: int           # seeds of each control (at the first learning rate)
    encodings: tuple             # :class:`Encoding`s, each its own prepared data
    noise: float                 # whitespace noise of the noisy test copy (0: none)
    noise_seed: int
    noisy_dev: bool              # the best epoch by a noisy copy of dev


@dataclass(frozen=True)
class Settings:
    """What the pipeline reads: the part's folder and text, its rows, the pretraining budget and the tasks."""

    output: Path                 # the demo's --output
    folder: str                  # the part's folder under it (its name)
    lang: str                    # the text's language: raw/{train,valid}.LANG
    row_table: dict              # every row the part can run, by name (``train_scripts.demo.rows.Row``)
    rows: tuple                  # the rows it runs
    vocab_size: int
    device: str                  # cpu or gpu
    model: tuple                 # pretrain_roberta.sh's model and optimiser options
    budget: str                  # every row the same "updates" or "epochs"
    max_update: int
    max_epoch: int
    pretrain_seeds: int          # pretraining runs per row (seeds 1..N)
    tasks: tuple                 # :class:`Task`s


def majority_rate(labels_file: Path) -> float:
    """The share of the most frequent label: the score of always guessing it."""
    labels = labels_file.read_text(encoding="utf-8").split()
    return max(labels.count(x) for x in set(labels)) / len(labels) if labels else 0.0


class Plan:
    """Paths and commands of every step (the dry run prints them; ``pipeline.Pipeline`` runs them)."""

    def __init__(self, settings: Settings):
        self.s = settings
        self.root = settings.output / settings.folder
        self.lang = settings.lang
        self.rows = settings.row_table
        self.raw = self.root / "raw"

    def lm_dir(self, row: str) -> Path:
        return self.root / "rows" / row / "lm"

    def pretrain_seeds(self) -> list[int]:
        """The pretraining seeds of every row: 1..``pretrain_seeds``."""
        return list(range(1, self.s.pretrain_seeds + 1))

    def ckpt_dir(self, row: str, seed: int = 1) -> Path:
        """The row's checkpoints of pretraining seed ``seed`` (seed 1: ``checkpoints``, as before there were
        several)."""
        return self.root / "rows" / row / ("checkpoints" if seed == 1 else f"checkpoints-seed{seed}")

    def pretrained(self, row: str, seed: int = 1) -> Path:
        return self.ckpt_dir(row, seed) / "checkpoint_last.pt"

    def pretrain_stage(self, row: str, seed: int = 1) -> str:
        """The stage name of a row's pretraining run ``seed`` (seed 1: ``lm/ROW/pretrain``)."""
        return f"lm/{row}/pretrain" + ("" if seed == 1 else f"-seed{seed}")

    def binarize_command(self, row: str) -> list:
        config = {"vocab_size": self.s.vocab_size, **self.rows[row].config}
        cmd = ["python", "-m", "train_scripts.binarize", "--lm", "--data", self.raw, "--src", self.lang,
               "--out", self.lm_dir(row), "--workers", 1]
        for key, value in config.items():
            cmd += ["--" + key.replace("_", "-"), value]
        return cmd

    def pretrain_command(self, row: str, seed: int = 1) -> list:
        s = self.s
        device = ["--cpu", "--gpus", 1] if s.device == "cpu" else ["--gpus", 1]
        budget = (["--max-update", s.max_update] if s.budget == "updates"
                  else ["--max-epoch", s.max_epoch, "--max-update", 0])
        return ["bash", REPO / "train_scripts" / "pretrain_roberta.sh", "--data", self.lm_dir(row),
                "--save-dir", self.ckpt_dir(row, seed), *device, *s.model, *budget, "--seed", seed]

    @staticmethod
    def finetune_epochs(task: Task, train_rows: int) -> int:
        """Epochs of a run: ``updates`` updates (the nearest whole number of epochs of ``train_rows`` examples),
        or ``epochs`` when ``updates`` is 0 or the run trains on the whole split."""
        if not task.updates or not train_rows:
            return task.epochs
        per_epoch = -(-train_rows // task.batch)
        return max(1, round(task.updates / per_epoch))

    def finetune_runs(self) -> list[dict]:
        """Every fine-tuning run of every task: each of its rows at each size and segmentation, from each
        pretraining run's checkpoint (the first only unless ``every_pretraining``) and, for its control rows, from
        random weights too, once (a control reads no pretrained weights), at the first learning rate."""
        runs = []
        for task in self.s.tasks:
            for row in task.rows:
                for size in task.sizes if task.sizes is not None else [None]:
                    for enc in task.encodings:
                        for init in ["pretrained"] + (["random"] if row in task.controls else []):
                            pretrained = init == "pretrained"
                            pseeds = self.pretrain_seeds() if pretrained and task.every_pretraining else [1]
                            for lr in task.lrs if pretrained else task.lrs[:1]:
                                for pseed in pseeds:
                                    for seed in range(1, (task.seeds if pretrained else task.control_seeds) + 1):
                                        runs.append(self._run(task, row, size, enc, init, lr, pseed, seed))
        return runs

    def _run(self, task: Task, row: str, size, enc: Encoding, init: str, lr: float, pseed: int, seed: int) -> dict:
        """One fine-tuning run: what it reads, how it trains, and its folders and stage names."""
        train_rows = size or 0
        r = {"part": task.part, "task": task.name, "row": row, "init": init, "seed": seed, "pretrain_seed": pseed,
             "encoding": enc.name, "mode": enc.mode, "k": enc.k, "prefix": task.prefix, "rows": task.max_rows,
             "train_rows": train_rows, "size": task.max_rows if size is None else size,
             "epochs": self.finetune_epochs(task, train_rows), "batch": task.batch, "lr": lr, "wd": task.wd,
             "noise": task.noise, "noise_seed": task.noise_seed, "metric": task.metric,
             "noisy_dev": task.noisy_dev}
        lr_part = f"lr{lr:g}/" if len(task.lrs) > 1 else ""
        size_part = "" if size is None else f"n{size or 'all'}/"
        name = enc.name + ("-noisydev" if task.noisy_dev else "")
        base = self.root / "finetune" / task.name / row / name
        r["data"] = base / size_part / "data"
        # a later pretraining run's checkpoint: its own folder (the first's keep their names)
        init_part = init + (f"-ckpt{pseed}" if pseed > 1 else "")
        r["save"] = base / f"{size_part}{lr_part}{init_part}-seed{seed}"
        r["name"] = f"ft/{task.name}/{row}/{name}/{size_part}{lr_part}{init_part}-seed{seed}"
        r["prep"] = f"prep/{task.name}/{row}/{name}" + (f"/{size_part.rstrip('/')}" if size_part else "")
        return r

    def prepare_command(self, run: dict) -> list:
        return ["python", "-m", "train_scripts.classification_data", "prepare", "--lm-data", self.lm_dir(run["row"]),
                "--csv-prefix", run["prefix"], "--out", run["data"], "--max-rows", run["rows"],
                *self.data_options(run)]

    @staticmethod
    def data_options(run: dict) -> list:
        """The options that say which data a run sees (rows, encoding, noise), the same for ``prepare`` and for
        ``finetune_classification.sh``, which prepares (or reuses) the data with them."""
        cmd = ["--train-rows", run["train_rows"]] if run.get("train_rows") else []
        if run["encoding"] != STANDARD.name:
            cmd += ["--encode", "flota", "--flota-mode", run["mode"], "--flota-k", run["k"]]
        if run["noise"]:
            cmd += ["--noise-p", run["noise"], "--noise-seed", run["noise_seed"]]
            if run.get("noisy_dev"):
                cmd += ["--noise-splits", "valid"]
        return cmd

    def finetune_command(self, run: dict) -> list:
        cmd = ["bash", REPO / "train_scripts" / "finetune_classification.sh", "--pretrained",
               self.pretrained(run["row"], run.get("pretrain_seed", 1)), "--lm-data", self.lm_dir(run["row"]),
               "--csv-prefix", run["prefix"],
               "--work", run["data"], "--save-dir", run["save"], "--max-rows", run["rows"],
               "--epochs", run["epochs"], "--batch-size", run["batch"], "--seed", run["seed"], "--gpus", 1,
               "--lr", run["lr"], "--weight-decay", run["wd"], *self.data_options(run)]
        if run["metric"] == "macro_f1":
            cmd += ["--best-metric", "macro_f1"]
        if run["init"] == "random":
            cmd.append("--random-init")
        if self.s.device == "cpu":
            cmd.append("--cpu")
        # fairseq-train options after the recipe's own: validate (and keep the best) about 8 times per run, no
        # per-epoch checkpoint files
        every = max(1, run["epochs"] // 8)
        return cmd + ["--validate-interval", every, "--save-interval", every, "--no-save-optimizer-state",
                      "--no-last-checkpoints"]

    def probe_stage(self, task: str, row: str, seed: int = 1) -> str:
        return f"probe/{task}/{row}" + ("" if seed == 1 else f"-seed{seed}")

    def probe_path(self, task: str, row: str, seed: int = 1) -> Path:
        return self.root / "probe" / task / (f"{row}.json" if seed == 1 else f"{row}-seed{seed}.json")

    def probe_command(self, run: dict, sizes, random_seeds: int, seed: int = 1) -> list:
        """The frozen-encoder probe of a row's pretrained encoder (pretraining run ``seed``) and ``random_seeds``
        random controls, on ``run``'s data, at every labelled size of ``sizes`` (``train_scripts/probe.py``); the
        random encoders need no pretrained weights, so only the first pretraining run's probe scores them."""
        return ["python", "-m", "train_scripts.probe", "--checkpoint", self.pretrained(run["row"], seed), "--data",
                run["data"], "--sizes", ",".join(str(n) for n in sizes), "--random-seeds",
                random_seeds if seed == 1 else 0, "--output", self.probe_path(run["task"], run["row"], seed)]

    def pppl_path(self, row: str) -> Path:
        return self.root / "rows" / row / "pseudo_perplexity.json"
