"""The second part of ``make demo``: RoBERTa pretraining -> fine-tuning, the space-as-token and FLOTA papers' questions.

Every row is a scheme configuration of the registry (the same rows as the translation part, ``translation_rows.ROWS``)
and runs through the recipes users run: ``train_scripts.binarize --lm`` -> ``train_scripts/pretrain_roberta.sh``
(the ``--small`` model, the same budget for every row) -> ``train_scripts/finetune_classification.sh`` on the
Superbizarre topicality sets (Gow-Smith et al. 2022, section 5: N seeds, the best dev epoch scored on test, mean
and standard deviation, Welch's t-test against the Unigram row) -> ``morphtok-demo``'s report.

Two controls say what the numbers mean:

* **random init**: the baseline row (``--lm-control all``: every row) fine-tuned from random weights with the same
  seeds, the same architecture and dictionary.  "Pretraining helped" means at least 1 point of test accuracy over
  that control with Welch p < 0.05 (at least 5 seeds).  One pretraining run per row: the variance of pretraining
  itself is not covered, and the report says so.
* **collapsed runs**: a fine-tuned model that predicts one class for every dev example has not learned; it is
  counted and shown, and left out of the mean (the rule is applied on dev, never on test).

FLOTA (Hofmann et al. 2022, Tables 2-4, Figure 3): the baseline row's pretrained model fine-tuned on ArXiv-L
(``--lm-flota-set S``: ArXiv-S) with its standard segmentation and with FLOTA, FIRST and LONGEST over the row's own
vocabulary for each ``k`` of ``--lm-flota-k``; every fine-tuned model scored on the clean test set and on a copy
with unseen whitespace noise (each space dropped with probability ``--lm-noise-p``, the same noisy text for every
encoding); macro F1 per seed, and the mean tokens per example (Table 3).

Budget presets (``--lm-preset``): ``cpu`` (the default of ``make demo``: sized to fit beside the translation part
in 90 minutes on 2 cores), ``fast`` (a smoke test, what ``make test`` runs) and ``gpu`` (the papers' Table 9/10
settings scaled to one GPU).  ``--lm-budget epochs`` trains every row for the same number of epochs instead of the
same number of updates (the paper's second budget, Table 7).  Each step is a resumable stage (the translation
part's ``Stages``: a finished stage with the same options and inputs is skipped); SIGINT/SIGTERM stop every
process the demo started.

    morphtok-demo --part pretraining --output demo-output [--lm-preset cpu|fast|gpu] \\
        [--lm-rows unigram unigram_prime unigram_prime_nospace | paper | all] [--lm-seeds 10] [--lm-control all] \\
        [--lm-budget updates|epochs] [--lm-tasks arxiv reddit] [--lm-flota-set L|S] [--dry-run]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import gzip
import json
import os
import random
import shlex
import signal
import sys
import time
from pathlib import Path

from preprocess.common import REPO, UserError, atomic_output, run_main
from train_scripts.tools import SHARED_DATA

#: the rows of this part: the translation part's rows that are monolingual schemes (``translation_rows.ROWS``)
LM_ROW_NAMES = ("unigram", "unigram_prime", "unigram_prime_nospace", "bpe", "bpe_prime", "bpe_prime_nospace",
                "bite_unigram")
DEFAULT_LM_ROWS = ("unigram", "unigram_prime", "unigram_prime_nospace")
PAPER_ROWS = ("bpe", "bpe_prime", "bpe_prime_nospace", "unigram", "unigram_prime", "unigram_prime_nospace")
BASELINE = "unigram"

def _published_rows() -> dict:
    """Rows with the space-as-token paper's own 16k models (trained on English Wikipedia; ../shared/data/space_models)
    instead of models learned here: ``--lm-rows published`` (or single names)."""
    from train_scripts.translation_rows import Row

    models = SHARED_DATA / "space_models"
    out = {}
    for kind, label in (("unigram", "Unigram"), ("bpe", "BPE")):
        out[f"published_{kind}"] = Row(f"published_{kind}", f"{label} (paper's model)", {
            "scheme": "sentencepiece", "spm_model": str(models / f"{kind}_default.model")},
            "the paper's published 16k model")
        out[f"published_{kind}_prime"] = Row(f"published_{kind}_prime", f"{label}' (paper's model)", {
            "scheme": "spaces", "spm_model": str(models / f"{kind}_prime.model")}, "the paper's published 16k model")
        out[f"published_{kind}_prime_nospace"] = Row(f"published_{kind}_prime_nospace",
                                                     f"{label}' no spaces (paper's model)", {
            "scheme": "spaces", "spm_model": str(models / f"{kind}_prime.model"), "spaces": "drop"},
            "the paper's published 16k model, space tokens dropped")
    return out


def lm_rows() -> dict:
    """Every row this part can run: the translation part's monolingual rows and the published-model rows."""
    from train_scripts.translation_rows import ROWS

    return {**{name: ROWS[name] for name in LM_ROW_NAMES}, **_published_rows()}


#: the segmentations of the FLOTA table: the standard one and (mode, k) over the same vocabulary
FLOTA_MODES = ("flota", "first", "longest")

PRESETS = {
    "cpu": {"note": "CPU, sized for make demo's 90 minutes on 2 cores: the --small RoBERTa (2 layers, 128 "
                    "dimensions, 128 tokens per sample, 32 sequences per update) pretrained for 1,500 updates on "
                    "1.5M words of the shared English corpus, 8k vocabularies; Superbizarre Arxiv, the first "
                    "8,000 words of each split, 3 epochs, batch 32, lr 3e-4 (stable at this size; the paper's "
                    "2e-3 collapsed 3 of 5 runs), 5 seeds; FLOTA on ArXiv-L physics, the first 4,000 training "
                    "titles (dev and test whole: 4,000 each), 5 epochs, 2 seeds",
            "device": "cpu", "lm_words": 1_500_000, "vocab_size": 8000, "max_update": 1500, "max_epoch": 3,
            "model": ["--small"], "ft_rows": 8000, "ft_epochs": 3, "ft_batch": 32, "ft_lr": 3e-4, "seeds": 5,
            "flota_rows": 4000, "flota_epochs": 5, "flota_batch": 32, "flota_lr": 3e-4, "flota_seeds": 2,
            "flota_k": [1, 2, 3, 4], "flota_modes": ["flota", "first", "longest"]},
    "fast": {"note": "a smoke test: the --tiny RoBERTa for 10 updates on 20,000 words, 100 examples per split, "
                     "1 epoch, 2 seeds, FLOTA at k = 2 only: shows that every stage runs, not what pretraining does",
             "device": "cpu", "lm_words": 20_000, "vocab_size": 600, "max_update": 10, "max_epoch": 1,
             "model": ["--tiny"], "ft_rows": 100, "ft_epochs": 1, "ft_batch": 16, "ft_lr": 3e-4, "seeds": 2,
             "flota_rows": 100, "flota_epochs": 1, "flota_batch": 16, "flota_lr": 3e-4, "flota_seeds": 2,
             "flota_k": [2], "flota_modes": ["flota"]},
    "gpu": {"note": "one GPU, the papers' settings scaled to it: RoBERTa-base (Table 9: 12 layers, 768 dimensions, "
                    "512 tokens per sample, lr 5e-4) with 256 sequences per update for 10,000 updates on the whole "
                    "corpus (give a larger one with --lm-corpus, e.g. morphtok-prepare-wikipedia's), 16k "
                    "vocabularies; fine-tuning as Table 10 (batch 32, lr 2e-3, 20 epochs, 10 seeds) and FLOTA "
                    "as its A.2 (batch 64, lr 3e-5, 20 epochs, 3 seeds), fp16",
            "device": "gpu", "lm_words": 0, "vocab_size": 16000, "max_update": 10000, "max_epoch": 30,
            "model": ["--global-batch", "256", "--warmup-updates", "1000", "--validate-interval-updates", "1000",
                      "--save-interval-updates", "1000", "--keep-interval-updates", "1"],
            "ft_rows": 0, "ft_epochs": 20, "ft_batch": 32, "ft_lr": 2e-3, "seeds": 10,
            "flota_rows": 0, "flota_epochs": 20, "flota_batch": 64, "flota_lr": 3e-5, "flota_seeds": 3,
            "flota_k": [1, 2, 3, 4], "flota_modes": ["flota", "first", "longest"]},
}
PRESET_KEYS = [k for k in PRESETS["cpu"] if k not in ("note", "device", "model")]
PRESET_HELP = {
    "lm_words": "training words of the pretraining corpus (0: all)", "vocab_size": "subword vocabulary size",
    "max_update": "pretraining updates (--lm-budget updates)", "max_epoch": "pretraining epochs (--lm-budget epochs)",
    "ft_rows": "Superbizarre rows per split (0: all)", "ft_epochs": "fine-tuning epochs (best dev epoch -> test)",
    "ft_batch": "fine-tuning batch (sentences per update)", "ft_lr": "fine-tuning peak learning rate",
    "seeds": "fine-tuning seeds per row (and per control)", "flota_rows": "ArXiv rows per split (0: all)",
    "flota_epochs": "FLOTA fine-tuning epochs", "flota_batch": "FLOTA fine-tuning batch",
    "flota_lr": "FLOTA fine-tuning learning rate", "flota_seeds": "seeds per FLOTA segmentation",
    "flota_k": "the k values of FLOTA, FIRST and LONGEST", "flota_modes": "flota, first, longest",
}
#: the FLOTA paper's own fine-tuning settings (A.2: batch 64, lr tuned in {1e-5, 3e-5, 1e-4}): --lm-flota-paper
FLOTA_PAPER = {"flota_batch": 64, "flota_lrs": [1e-5, 3e-5, 1e-4]}


# --- data -----------------------------------------------------------------------------------------------------

def read_documents(path: Path):
    """Documents of a corpus file: lists of non-empty lines, a blank line between documents."""
    opener = gzip.open if path.suffix == ".gz" else open
    doc: list[str] = []
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = " ".join(line.split())
            if line:
                doc.append(line)
            elif doc:
                yield doc
                doc = []
    if doc:
        yield doc


def prepare_corpus(corpus: Path, out: Path, max_words: int, valid_every: int = 50, seed: int = 1) -> dict:
    """``corpus`` (a folder of ``*.txt[.gz]`` files, or one file) -> ``out/{train,valid}.en`` as
    ``binarize --lm`` reads them: every ``valid_every``-th document (in a seeded order of all documents) is
    validation text; training text is the other documents in that order until ``max_words`` (0: all)."""
    files = sorted(p for p in corpus.iterdir() if p.name.endswith((".txt", ".txt.gz"))) if corpus.is_dir() \
        else [corpus]
    if not files:
        raise UserError(f"no *.txt or *.txt.gz files in {corpus}")
    docs = [d for f in files for d in read_documents(f)]
    if len(docs) < 2:
        raise UserError(f"{corpus}: fewer than two documents (documents are separated by blank lines)")
    random.Random(seed).shuffle(docs)
    out.mkdir(parents=True, exist_ok=True)
    counts = {"train": [0, 0, 0], "valid": [0, 0, 0]}   # documents, lines, words
    with atomic_output(str(out / "train.en")) as train, atomic_output(str(out / "valid.en")) as valid:
        for i, doc in enumerate(docs):
            split = "valid" if i % valid_every == 0 else "train"
            if split == "train" and max_words and counts["train"][2] >= max_words:
                continue
            fh = valid if split == "valid" else train
            fh.write("\n".join(doc) + "\n\n")
            c = counts[split]
            c[0], c[1], c[2] = c[0] + 1, c[1] + len(doc), c[2] + sum(len(line.split()) for line in doc)
    return {s: dict(zip(("documents", "lines", "words"), c)) for s, c in counts.items()}


def majority_rate(labels_file: Path) -> float:
    labels = labels_file.read_text(encoding="utf-8").split()
    return max(labels.count(x) for x in set(labels)) / len(labels) if labels else 0.0


# --- the plan: rows, pretraining, fine-tuning runs -------------------------------------------------------------

def flota_encodings(args) -> list[dict]:
    """The FLOTA table's columns: the standard segmentation, then (mode, k) for every mode and k."""
    out = [{"name": "standard", "mode": None, "k": None}]
    for mode in args.flota_modes:
        out += [{"name": f"{mode}_k{k}", "mode": mode, "k": k} for k in args.flota_k]
    return out


class Plan:
    """Paths and commands of every step (the dry run prints them; the runner runs them)."""

    def __init__(self, args):
        self.a = args
        self.root = args.output / "pretraining"
        self.raw = self.root / "raw"

    def lm_dir(self, row: str) -> Path:
        return self.root / "rows" / row / "lm"

    def ckpt_dir(self, row: str) -> Path:
        return self.root / "rows" / row / "checkpoints"

    def pretrained(self, row: str) -> Path:
        return self.ckpt_dir(row) / "checkpoint_last.pt"

    def binarize_command(self, row: str) -> list:
        config = {"vocab_size": self.a.vocab_size, **lm_rows()[row].config}
        cmd = ["python", "-m", "train_scripts.binarize", "--lm", "--data", self.raw, "--src", "en",
               "--out", self.lm_dir(row), "--workers", 1]
        for key, value in config.items():
            cmd += ["--" + key.replace("_", "-"), value]
        return cmd

    def pretrain_command(self, row: str) -> list:
        a = self.a
        device = ["--cpu", "--gpus", 1] if a.device == "cpu" else ["--gpus", 1]
        budget = (["--max-update", a.max_update] if a.budget == "updates"
                  else ["--max-epoch", a.max_epoch, "--max-update", 0])
        return ["bash", REPO / "train_scripts" / "pretrain_roberta.sh", "--data", self.lm_dir(row),
                "--save-dir", self.ckpt_dir(row), *device, *a.model, *budget, "--seed", 1]

    def finetune_runs(self) -> list[dict]:
        """Every fine-tuning run: Superbizarre (every row, pretrained and the controls) and FLOTA (the baseline)."""
        a, runs = self.a, []
        for task in a.tasks:
            prefix = a.superbizarre / task
            for row in a.rows:
                inits = ["pretrained"] + (["random"] if a.control == "all" or (a.control == "baseline"
                                                                                and row == a.baseline) else [])
                for init in inits:
                    for seed in range(1, a.seeds + 1):
                        runs.append({"part": "superbizarre", "task": task, "row": row, "init": init, "seed": seed,
                                     "encoding": "standard", "prefix": prefix, "rows": a.ft_rows,
                                     "epochs": a.ft_epochs, "batch": a.ft_batch, "lr": a.ft_lr, "noise": 0.0})
        if a.flota_set != "none":
            size = "1e+03" if a.flota_set == "L" else "1e+02"
            for area in a.flota_areas:
                prefix = a.flota_data / f"arxiv_{area}_{size}"
                for enc in flota_encodings(a):
                    for lr in a.flota_lrs:
                        for seed in range(1, a.flota_seeds + 1):
                            runs.append({"part": "flota", "task": f"arxiv_{area}_{a.flota_set}", "row": a.baseline,
                                         "init": "pretrained", "seed": seed, "encoding": enc["name"],
                                         "mode": enc["mode"], "k": enc["k"], "prefix": prefix,
                                         "rows": a.flota_rows, "epochs": a.flota_epochs, "batch": a.flota_batch,
                                         "lr": lr, "noise": a.noise_p})
        for r in runs:
            lr_part = f"lr{r['lr']:g}/" if r["part"] == "flota" and len(a.flota_lrs) > 1 else ""
            r["data"] = self.root / "finetune" / r["task"] / r["row"] / r["encoding"] / "data"
            r["save"] = (self.root / "finetune" / r["task"] / r["row"] / r["encoding"] /
                         f"{lr_part}{r['init']}-seed{r['seed']}")
            r["name"] = f"ft/{r['task']}/{r['row']}/{r['encoding']}/{lr_part}{r['init']}-seed{r['seed']}"
        return runs

    def prepare_command(self, run: dict) -> list:
        cmd = ["python", "-m", "train_scripts.classification_data", "prepare", "--lm-data", self.lm_dir(run["row"]),
               "--csv-prefix", run["prefix"], "--out", run["data"], "--max-rows", run["rows"]]
        if run["encoding"] != "standard":
            cmd += ["--encode", "flota", "--flota-mode", run["mode"], "--flota-k", run["k"]]
        if run["noise"]:
            cmd += ["--noise-p", run["noise"], "--noise-seed", self.a.noise_seed]
        return cmd

    def finetune_command(self, run: dict) -> list:
        a = self.a
        cmd = ["bash", REPO / "train_scripts" / "finetune_classification.sh", "--pretrained",
               self.pretrained(run["row"]), "--lm-data", self.lm_dir(run["row"]), "--csv-prefix", run["prefix"],
               "--work", run["data"], "--save-dir", run["save"], "--max-rows", run["rows"],
               "--epochs", run["epochs"], "--batch-size", run["batch"], "--seed", run["seed"], "--gpus", 1]
        if run["encoding"] != "standard":
            cmd += ["--encode", "flota", "--flota-mode", run["mode"], "--flota-k", run["k"]]
        if run["noise"]:
            cmd += ["--noise-p", run["noise"], "--noise-seed", a.noise_seed]
        if run["init"] == "random":
            cmd.append("--random-init")
        if a.device == "cpu":
            cmd.append("--cpu")
        # fairseq-train options after the recipe's own: the preset's learning rate, no per-epoch checkpoint files
        return cmd + ["--lr", run["lr"], "--no-save-optimizer-state", "--no-last-checkpoints"]


# --- running ----------------------------------------------------------------------------------------------------

class Slots:
    """``n`` slots taken in order of priority (lower first), then of arrival."""

    def __init__(self, n: int):
        import itertools
        import threading

        self.free, self.cv, self.waiting, self.order = n, threading.Condition(), [], itertools.count()

    def acquire(self, priority: int) -> None:
        import heapq

        with self.cv:
            ticket = (priority, next(self.order))
            heapq.heappush(self.waiting, ticket)
            while not (self.free > 0 and self.waiting[0] == ticket):
                self.cv.wait()
            heapq.heappop(self.waiting)
            self.free -= 1

    def release(self) -> None:
        with self.cv:
            self.free += 1
            self.cv.notify_all()


class Scheduler:
    """Steps with dependencies, at most ``jobs`` commands at a time.

    Every step is a thread that waits for the steps it needs, then runs its stages; a command (a child process)
    runs only while it holds one of ``jobs`` slots, so the next fine-tuning starts as soon as a core is free, even
    while another row still pretrains.  Slots go to pretraining first (the longest steps, and the ones others
    wait for), then to data preparation, then to fine-tuning.  The first failure stops every step that has not
    started its command; it is raised once the running ones are done."""

    def __init__(self, jobs: int):
        import threading

        self.slots = Slots(jobs)
        self.failed = threading.Event()
        #: set when the demo is interrupted, before its processes are stopped: a command that then ends (even
        #: "successfully": a child reaped by the clean-up reads as exit 0) must not record its stage
        self.stopping = threading.Event()
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=256)
        self.futures: list = []

    def slot(self, priority: int = 0):
        """A context holding one slot; raises when another step has failed (nothing new starts)."""
        import contextlib

        @contextlib.contextmanager
        def held():
            self.slots.acquire(priority)
            try:
                if self.failed.is_set():
                    raise PipelineStopped(STOPPED)
                yield
            finally:
                self.slots.release()
        return held()

    def add(self, fn, after=()):
        def step():
            for dep in after:
                dep.result()        # a failed dependency raises here: this step does not run
            if self.failed.is_set():
                raise PipelineStopped(STOPPED)
            try:
                return fn()
            except BaseException:
                self.failed.set()
                raise
        future = self.pool.submit(step)
        self.futures.append(future)
        return future

    def wait(self) -> None:
        try:
            done, _ = concurrent.futures.wait(self.futures, return_when=concurrent.futures.FIRST_EXCEPTION)
            errors = [f.exception() for f in done if f.exception() is not None]
            if errors:
                self.failed.set()
                concurrent.futures.wait(self.futures)
                first = next((e for e in errors if STOPPED not in str(e)), errors[0])
                raise first
        finally:
            self.pool.shutdown(wait=False, cancel_futures=True)


STOPPED = "not started: another step failed"


class PipelineStopped(RuntimeError):
    """A step not started because another one failed."""


def say(message: str) -> None:
    from train_scripts.stages import say as pipeline_say

    pipeline_say(message)


class SlotRunner:
    """A :class:`stages.Runner` whose commands each hold a slot of the scheduler."""

    def __init__(self, runner, scheduler: Scheduler):
        self.runner, self.scheduler = runner, scheduler
        #: wall seconds of each stage's command, from the moment it had a slot (not counting the wait for one)
        self.seconds: dict[str, float] = {}

    def run(self, stage: str, *args, **kwargs):
        priority = 0 if stage.startswith("lm/") else 1 if stage.startswith("prep/") else 2
        with self.scheduler.slot(priority):
            say(f"[run ] {stage}")
            t0 = time.time()
            out = self.runner.run(stage, *args, **kwargs)
            self.seconds[stage] = time.time() - t0
        if self.scheduler.stopping.is_set():
            raise PipelineStopped(f"{stage}: interrupted")
        return out


class LmDemo:
    def __init__(self, args, runner, stages):
        self.a = args
        self.plan = Plan(args)
        self.runner = runner
        self.stages = stages
        self.logs = self.plan.root / "logs"

    def data(self) -> dict:
        a = self.a
        return self.stages.run("lm/data", [self.plan.raw],
                               lambda: prepare_corpus(a.corpus, self.plan.raw, a.lm_words),
                               key={"corpus": str(a.corpus), "words": a.lm_words})

    def binarize_row(self, row: str) -> dict:
        p = self.plan
        cmd = p.binarize_command(row)
        return self.stages.run(f"lm/{row}/binarize", [p.lm_dir(row)],
                               lambda: self.runner.run(f"lm/{row}/binarize", cmd, self.logs / f"{row}.binarize.log")
                               and {"dict": str(p.lm_dir(row) / "data-bin" / "dict.txt"),
                                    "seconds": self.runner.seconds[f"lm/{row}/binarize"]},
                               key=[str(x) for x in cmd], after=("lm/data",), announce=False)

    def pretrain_row(self, row: str) -> dict:
        p = self.plan
        cmd = p.pretrain_command(row)

        def train():
            self.runner.run(f"lm/{row}/pretrain", cmd, self.logs / f"{row}.pretrain.log", merge_stderr=True)
            return {"seconds": self.runner.seconds[f"lm/{row}/pretrain"]}

        result = self.stages.run(f"lm/{row}/pretrain", [p.ckpt_dir(row)], train, key=[str(x) for x in cmd],
                                 after=(f"lm/{row}/binarize",), announce=False)
        return {"row": row, **result}

    def prepare(self, run: dict) -> dict:
        cmd = self.plan.prepare_command(run)
        stage = f"prep/{run['task']}/{run['row']}/{run['encoding']}"

        def go():
            self.runner.run(stage, cmd, self.logs / (stage.replace("/", "_") + ".log"))
            info = json.loads((run["data"] / "classification.json").read_text())
            return {**info, "seconds": self.runner.seconds[stage]}

        return self.stages.run(stage, [run["data"]], go, key=[str(x) for x in cmd],
                               after=(f"lm/{run['row']}/binarize",), announce=False)

    def finetune(self, run: dict) -> dict:
        cmd = self.plan.finetune_command(run)
        stage = run["name"]
        prep = f"prep/{run['task']}/{run['row']}/{run['encoding']}"

        def go():
            self.runner.run(stage, cmd, self.logs / (stage.replace("/", "_") + ".log"), merge_stderr=True)
            return finetune_result(run["save"], self.runner.seconds[stage])

        # a random-init control reads only the architecture of the pretrained checkpoint, never its weights: it
        # depends on the row's data, not on its pretraining (a longer pretraining reuses the control)
        upstream = f"lm/{run['row']}/" + ("binarize" if run["init"] == "random" else "pretrain")
        key = [str(x) for x in cmd] + (["model:", *map(str, self.a.model)] if run["init"] == "random" else [])
        return self.stages.run(stage, [run["save"]], go, key=key, after=(prep, upstream), announce=False)

    def run_all(self) -> dict:
        a, p = self.a, self.plan
        data = self.data()
        sched = Scheduler(a.jobs)
        self.runner = SlotRunner(self.runner, sched)
        binarized = {row: sched.add(lambda r=row: self.binarize_row(r)) for row in a.rows}
        pretrained = {row: sched.add(lambda r=row: self.pretrain_row(r), [binarized[row]]) for row in a.rows}
        runs = p.finetune_runs()
        prepared = {}
        for run in runs:   # one data preparation per (task, row, encoding), shared by its seeds and inits
            if str(run["data"]) not in prepared:
                prepared[str(run["data"])] = sched.add(lambda r=run: self.prepare(r), [binarized[run["row"]]])
        # a control waits for its row's pretraining too (it reads the checkpoint's architecture), though its
        # fingerprint does not depend on it (see finetune)
        tuned = [sched.add(lambda r=run: self.finetune(r), [prepared[str(run["data"])], pretrained[run["row"]]])
                 for run in runs]
        try:
            sched.wait()
        except BaseException:       # SIGINT/SIGTERM: no stage may be recorded from here on
            sched.stopping.set()
            raise
        return collect_results(a, p, data, [pretrained[r].result() for r in a.rows], runs,
                               [f.result() for f in tuned], {k: f.result() for k, f in prepared.items()})


def finetune_result(save: Path, seconds: float) -> dict:
    """Scores of one fine-tuning run (the best dev epoch's checkpoint) and whether it collapsed to one class."""
    out = {"seconds": seconds}
    for name in ("dev", "test", "test_noisy"):
        path = save / f"{name}_scores.json"
        if path.exists():
            s = json.loads(path.read_text())
            out[name] = {"accuracy": s["accuracy"], "macro_f1": s["macro_f1"], "examples": s["examples"],
                         "classes_predicted": len(set(s["predictions"]))}
    out["collapsed"] = out.get("dev", {}).get("classes_predicted", 2) <= 1
    for name in ("checkpoint_best.pt",):   # the fine-tuned weights are not kept: the scores are the result
        (save / name).unlink(missing_ok=True)
    return out


# --- results --------------------------------------------------------------------------------------------------

def pretraining_record(plan: Plan, row: str, seconds: float) -> dict:
    """Budget and losses of one pretraining: updates, sequences, tokens, epochs; validation loss per token (bits,
    as fairseq logs it) and per word / per character of the validation text (per-token loss x tokens per word)."""
    from train_scripts.train_log import log_records, validation_curve

    log = plan.ckpt_dir(row) / "train.log"
    curve = [{"update": r["update"], "loss": r.get("valid_loss")} for r in validation_curve(str(log))
             if r.get("subset") == "valid" and r.get("valid_loss") is not None]
    updates = sequences = tokens = 0.0
    last_updates = 0
    for rec in log_records(str(log)):
        if "train_wpb" in rec and "train_num_updates" in rec:     # an end-of-epoch record
            n = int(float(rec["train_num_updates"]))
            steps = n - last_updates
            tokens += float(rec["train_wpb"]) * steps
            sequences += float(rec.get("train_bsz", 0)) * steps
            last_updates, updates = n, n
    info = json.loads((plan.lm_dir(row) / "binarize.json").read_text())
    drop = info.get("spaces") == "drop"
    counts = {}
    for split in ("train", "valid"):
        toks = words = chars = lines = 0
        with open(plan.lm_dir(row) / "tok" / f"{split}.en", encoding="utf-8") as enc, \
                open(plan.raw / f"{split}.en", encoding="utf-8") as raw:
            for t_line, r_line in zip(enc, raw):
                pieces = t_line.split()
                toks += len(pieces) - (pieces.count("\u2581") if drop else 0) + 1   # + </s>
                words += len(r_line.split())
                chars += len(r_line.rstrip("\n"))
                lines += 1
        counts[split] = {"tokens": toks, "words": words, "chars": chars, "lines": lines}
    final = curve[-1]["loss"] if curve else None
    v = counts["valid"]
    per_word = final * v["tokens"] / v["words"] if final is not None and v["words"] else None
    per_char = final * v["tokens"] / v["chars"] if final is not None and v["chars"] else None
    return {"row": row, "updates": int(updates), "sequences": int(sequences), "tokens": int(tokens),
            "epochs": tokens / counts["train"]["tokens"] if counts["train"]["tokens"] else None,
            "train_tokens": counts["train"]["tokens"], "train_words": counts["train"]["words"],
            "tokens_per_word": counts["train"]["tokens"] / max(1, counts["train"]["words"]),
            "valid_curve": curve, "valid_loss_per_token": final, "valid_loss_per_word": per_word,
            "valid_loss_per_char": per_char, "seconds": seconds, "spaces_dropped": drop}


def collect_results(a, plan: Plan, data: dict, pre: list, runs: list, results: list, prepared: dict) -> dict:
    rows = [pretraining_record(plan, p["row"], p.get("seconds", 0.0)) for p in pre]
    for r in rows:
        row = lm_rows()[r["row"]]
        r["label"], r["note"] = row.label, row.note
    finetune = []
    for run, res in zip(runs, results):
        info = prepared[str(run["data"])]
        finetune.append({k: run.get(k) for k in ("part", "task", "row", "init", "seed", "encoding", "mode", "k",
                                                 "lr")} | res
                        | {"tokens_per_example": info.get("tokens_per_example", {}).get("test"),
                           "majority": majority_rate(run["data"] / "raw" / "test.label")})
    return {"data": data, "pretraining": rows, "finetune": finetune}


# --- options --------------------------------------------------------------------------------------------------

def _flag(key: str) -> str:
    """The option of a preset value: ``--lm-`` and its name (``lm_words``: ``--lm-words``)."""
    return "--lm-" + key.removeprefix("lm_").replace("_", "-")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="morphtok-demo --part pretraining", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--output", type=Path, default=Path("demo-output"),
                    help="the demo's folder: this part writes OUTPUT/pretraining/")
    ap.add_argument("--dry-run", action="store_true", help="print every command, run nothing")
    ap.add_argument("--jobs", type=int, default=None, help="runs at the same time (default: one per CPU core; 1 "
                                                           "with the gpu preset)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads of each run (default: cores / jobs)")
    ap.add_argument("--lm-preset", default="cpu", choices=list(PRESETS),
                    help="budget: " + "; ".join(f"{k}: {v['note']}" for k, v in PRESETS.items()))
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
    ap.add_argument("--lm-corpus", type=Path, default=SHARED_DATA / "english_lm",
                    help="pretraining text: a folder of *.txt[.gz] (a blank line between documents) or one file")
    ap.add_argument("--lm-superbizarre", type=Path, default=SHARED_DATA / "superbizarre",
                    help="folder of the Superbizarre CSVs")
    ap.add_argument("--lm-flota-data", type=Path, default=SHARED_DATA / "flota_arxiv", help="the ArXiv CSVs")
    ap.add_argument("--lm-flota-set", choices=["L", "S", "none"], default="L",
                    help="ArXiv-L (1e+03) or ArXiv-S (1e+02), or no FLOTA table")
    ap.add_argument("--lm-flota-areas", nargs="+", default=["physics"], choices=["cs", "maths", "physics"],
                    help="ArXiv subareas (the paper averages all three)")
    ap.add_argument("--lm-flota-paper", action="store_true",
                    help="FLOTA's own fine-tuning settings (A.2: batch 64, every lr of {1e-5, 3e-5, 1e-4})")
    ap.add_argument("--lm-noise-p", type=float, default=0.3, help="whitespace noise of the noisy test set (FLOTA)")
    ap.add_argument("--lm-noise-seed", type=int, default=1, help="seed of the whitespace noise")
    g = ap.add_argument_group("preset values (default: the preset's)")
    for key in PRESET_KEYS:
        kind = type(PRESETS["cpu"][key])
        text = PRESET_HELP.get(key, "the preset's value")
        flag = _flag(key)
        if kind is list:
            g.add_argument(flag, nargs="+", default=None, type=int if key == "flota_k" else str, help=text)
        else:
            g.add_argument(flag, type=kind, default=None, help=text)
    return ap


def parse_args(argv=None):
    a = build_parser().parse_args(argv)
    preset = PRESETS[a.lm_preset]
    args = argparse.Namespace(output=a.output.resolve(), dry_run=a.dry_run, preset=a.lm_preset,
                              device=preset["device"], model=[str(x) for x in preset["model"]], budget=a.lm_budget,
                              control=a.lm_control, tasks=a.lm_tasks, corpus=a.lm_corpus,
                              superbizarre=a.lm_superbizarre, flota_data=a.lm_flota_data, flota_set=a.lm_flota_set,
                              flota_areas=a.lm_flota_areas, noise_p=a.lm_noise_p, noise_seed=a.lm_noise_seed,
                              baseline=BASELINE)
    for key in PRESET_KEYS:
        value = getattr(a, _flag(key)[2:].replace("-", "_"))
        setattr(args, key, preset[key] if value is None else value)
    args.flota_lrs = [args.flota_lr]
    if a.lm_flota_paper:
        args.flota_batch, args.flota_lrs = FLOTA_PAPER["flota_batch"], FLOTA_PAPER["flota_lrs"]
    groups = {"all": list(LM_ROW_NAMES), "paper": list(PAPER_ROWS), "published": list(_published_rows())}
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
    if args.seeds < 1 or args.flota_seeds < 1:
        raise UserError("--lm-seeds and --lm-flota-seeds must be at least 1")
    if not 0.0 <= args.noise_p <= 1.0:
        raise UserError(f"--lm-noise-p must be between 0 and 1, not {args.noise_p}")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    args.jobs = a.jobs or (1 if args.device == "gpu" else cores)
    args.threads = a.threads or max(1, cores // args.jobs)
    if args.jobs < 1 or args.threads < 1:
        raise UserError("--jobs and --threads must be at least 1")
    part = args.output / "pretraining"
    for what, path in (("--lm-corpus", args.corpus), ("--lm-superbizarre", args.superbizarre),
                       ("--lm-flota-data", args.flota_data)):
        resolved = path.resolve()
        if resolved == part or part in resolved.parents:
            # the part rewrites its folder (an interrupted or changed stage is removed first): never an input
            raise UserError(f"{what} {path} overlaps the output folder {part}, which the demo rewrites; "
                            "give --output another folder")
    if not args.dry_run:
        for what, path in (("--lm-corpus", args.corpus), ("--lm-superbizarre", args.superbizarre),
                           ("--lm-flota-data", args.flota_data)):
            if (what != "--lm-flota-data" or args.flota_set != "none") and not path.exists():
                raise UserError(f"{what} {path} does not exist (the shared data, ../shared/data, or your own copy)")
    return args


def stage_seconds(folder: Path) -> dict:
    """``{"pretraining": s, "preparation": s, "fine-tuning": s}``: the wall seconds of every recorded stage's command
    (from the moment it had a slot), summed by kind (commands that ran side by side count each)."""
    out = {"pretraining": 0.0, "preparation": 0.0, "fine-tuning": 0.0}
    for record in folder.glob("*.json"):
        name = record.stem
        kind = "pretraining" if name.startswith("lm__") else "preparation" if name.startswith("prep__") \
            else "fine-tuning"
        saved = json.loads(record.read_text())
        result = saved.get("result")
        out[kind] += result.get("seconds", saved.get("seconds", 0.0)) if isinstance(result, dict) else \
            saved.get("seconds", 0.0)
    return out


def settings(a) -> dict:
    """What the report states about this run's budget and fine-tuning settings."""
    return {k: getattr(a, k) for k in ("preset", "device", "budget", "model", "control", "tasks", "rows",
                                       "baseline", "flota_set", "flota_areas", "flota_lrs", "noise_p", "noise_seed",
                                       "jobs", "threads", *PRESET_KEYS)} | {"corpus": str(a.corpus),
                                                                           "note": PRESETS[a.preset]["note"]}


def main(argv=None) -> int:
    from train_scripts.stages import PipelineError, Runner, Stages, _become_subreaper, _terminate, say, \
        stop_descendants, versions
    from train_scripts.tools import child_env

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parse_args(argv)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    plan = Plan(args)
    if args.dry_run:
        print(f"# pretraining part, preset {args.preset}: rows {', '.join(args.rows)}; budget {args.budget}")
        print(f"# corpus {args.corpus} -> {plan.raw}/{{train,valid}}.en")
        for row in args.rows:
            print(" ".join(shlex.quote(str(x)) for x in plan.binarize_command(row)))
            print(" ".join(shlex.quote(str(x)) for x in plan.pretrain_command(row)))
        runs = plan.finetune_runs()
        print(f"# {len(runs)} fine-tuning runs, e.g.:")
        seen = set()
        for run in runs:
            if (run["part"], run["init"]) in seen:
                continue
            seen.add((run["part"], run["init"]))
            print(" ".join(shlex.quote(str(x)) for x in plan.finetune_command(run)))
        return 0
    signal.signal(signal.SIGTERM, _terminate)
    _become_subreaper()
    os.environ["NLTK_DATA"] = child_env()["NLTK_DATA"]
    plan.root.mkdir(parents=True, exist_ok=True)
    runner = Runner(plan.root, args.threads)
    stages = Stages(plan.root)
    t0 = time.time()
    try:
        results = LmDemo(args, runner, stages).run_all()
    except (PipelineError, UserError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BaseException:
        stop_descendants()
        raise
    from train_scripts import lm_report

    results["meta"] = {"settings": settings(args), "seconds": time.time() - t0, "versions": versions(),
                       "command": " ".join(shlex.quote(x) for x in ["morphtok-demo", "--part", "pretraining", *argv]),
                       "skipped_stages": len(stages.skipped), "ran_stages": len(stages.ran),
                       "load": os.getloadavg() if hasattr(os, "getloadavg") else None,
                       # every stage's own wall time, this run's and the resumed ones': what the part costs
                       "stage_seconds": stage_seconds(plan.root / ".stages"),
                       "date": time.strftime("%Y-%m-%d %H:%M %Z")}
    results["analysis"] = lm_report.analyse(results)
    (plan.root / "results.json").write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
    paths = lm_report.write_report(results, str(plan.root))
    say(f"pretraining report: {paths['markdown']} and {paths['html']} ({time.time() - t0:.0f} s)")
    return 0


def cli() -> None:
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
