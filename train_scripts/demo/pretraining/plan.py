"""The pretraining part's plan (``morphtok-demo --part pretraining``): its rows, presets, corpus and commands.

The rows (the translation part's monolingual rows and the space-as-token paper's published models), the budget
:data:`PRESETS`, the corpus (``train_scripts/demo/pretraining/corpus.py``) and :class:`Plan`: the paths and the command of
every step (binarize, pretrain, prepare and fine-tune), which the dry run prints and ``scheduler.py`` runs.
"""
from __future__ import annotations

from pathlib import Path

from preprocess.common import REPO
from train_scripts.tools import SHARED_DATA

#: the rows of this part: the translation part's rows that are monolingual schemes (``train_scripts/demo/rows.py``)
LM_ROW_NAMES = ("unigram", "unigram_prime", "unigram_prime_nospace", "bpe", "bpe_prime", "bpe_prime_nospace",
                "bite_unigram")
DEFAULT_LM_ROWS = ("unigram", "unigram_prime", "unigram_prime_nospace")
PAPER_ROWS = ("bpe", "bpe_prime", "bpe_prime_nospace", "unigram", "unigram_prime", "unigram_prime_nospace")
BASELINE = "unigram"

def published_rows() -> dict:
    """Rows with the space-as-token paper's own 16k models (trained on English Wikipedia; ../shared/data/space_models)
    instead of models learned here: ``--lm-rows published`` (or single names)."""
    from train_scripts.demo.rows import Row

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
    from train_scripts.demo.rows import ROWS

    return {**{name: ROWS[name] for name in LM_ROW_NAMES}, **published_rows()}


#: the segmentations of the FLOTA table: the standard one and (mode, k) over the same vocabulary
FLOTA_MODES = ("flota", "first", "longest")

PRESETS = {
    "cpu": {"note": "CPU, sized for make demo on 2 cores: the --small RoBERTa (2 layers, 128 dimensions) pretrained "
                    "for 3,000 updates of 128 titles (lr 2e-3, one title per sample) on the in-domain ArXiv titles "
                    "(all three areas, leakage rules applied), 8k vocabularies learned on that corpus; Superbizarre "
                    "Arxiv at 1,000 and 8,000 labelled words for every row (dev and test: the first 8,000 words; "
                    "the rows other than Unigram at 1,000 words are 10 runs more than when only Unigram ran there, "
                    "about 28 min of one core at the ~166 s a run of the loaded 2026-11-29 run, 9 min at the idle "
                    "~55 s), 1,000 updates at every size, batch 32, lr 1e-3, weight decay 0.1, 5 seeds, one pretraining run per "
                    "row (the pretraining and fine-tuning "
                    "settings from the sweep in bench/results/2026-11-28-pretraining-sweep.md); FLOTA on ArXiv-L "
                    "physics, the whole training split (12,000 titles; dev and test whole, 4,000 each), lr 1e-3, 6 "
                    "epochs (2,250 updates), 5 seeds, k = 2-4 (the budget from the pilot in "
                    "bench/results/2026-11-29-flota-pilot.md: at 4,000 titles and any update count the model over-fits "
                    "6 points under the Naive Bayes over its own pieces; this one is 2.9 under it, about 2.8x the CPU "
                    "of the 625 updates before it)",
            "device": "cpu", "corpus": ["arxiv"], "lm_words": 0, "vocab_size": 8000, "max_update": 3000,
            "max_epoch": 20, "pretrain_seeds": 1,
            "model": ["--small", "--lr", "0.002", "--global-batch", "128", "--sample-break-mode", "complete_doc"],
            "ft_rows": 8000, "ft_sizes": [1000, 8000], "ft_updates": 1000, "ft_epochs": 20, "ft_batch": 32,
            "ft_lr": 1e-3, "ft_wd": 0.1, "seeds": 5, "pppl_lines": 600, "flota_rows": 0, "flota_epochs": 6,
            "flota_batch": 32, "flota_lr": 1e-3, "flota_seeds": 5, "flota_k": [2, 3, 4], "flota_modes": ["flota"]},
    "fast": {"note": "a smoke test: the --tiny RoBERTa for 10 updates on 20,000 words, 100 examples per split, "
                     "1 epoch, 2 seeds, FLOTA at k = 2 only: shows that every stage runs, not what pretraining does",
             "device": "cpu", "corpus": ["arxiv"], "lm_words": 20_000, "vocab_size": 600, "max_update": 10,
             "max_epoch": 1, "pretrain_seeds": 1, "model": ["--tiny", "--sample-break-mode", "complete_doc"],
             "ft_rows": 100, "ft_sizes": [100], "ft_updates": 0,
             "ft_epochs": 1, "ft_batch": 16, "ft_lr": 3e-4, "ft_wd": 0.1, "seeds": 2, "pppl_lines": 20,
             "flota_rows": 100, "flota_epochs": 1, "flota_batch": 16, "flota_lr": 3e-4, "flota_seeds": 2,
             "flota_k": [2], "flota_modes": ["flota"]},
    "gpu": {"note": "one GPU, the papers' settings scaled to it: RoBERTa-base (Table 9: 12 layers, 768 dimensions, "
                    "512 tokens per sample, lr 5e-4) with 256 sequences per update for 10,000 updates on the ArXiv "
                    "titles and the shared English text mixed (give a larger corpus with --lm-corpus, e.g. "
                    "morphtok-prepare-wikipedia's), 16k vocabularies, each row pretrained 3 times (seeds 1-3, "
                    "every Superbizarre run on each checkpoint); fine-tuning as the authors' released "
                    "scripts (batch 32, lr 2e-5, weight decay 0.1, 6% warm-up, 20 epochs, best dev epoch; 10 "
                    "seeds) at 1,000 and 8,000 labelled words and the whole training split, and FLOTA as its A.2 "
                    "(batch 64, lr 3e-5, 20 epochs, 5 seeds), fp16",
            "device": "gpu", "corpus": ["arxiv", str(SHARED_DATA / "english_lm")], "lm_words": 0,
            "vocab_size": 16000, "max_update": 10000, "max_epoch": 30, "pretrain_seeds": 3,
            "model": ["--global-batch", "256", "--warmup-updates", "1000", "--validate-interval-updates", "1000",
                      "--save-interval-updates", "1000", "--keep-interval-updates", "1"],
            "ft_rows": 0, "ft_sizes": [1000, 8000, 0], "ft_updates": 0, "ft_epochs": 20, "ft_batch": 32,
            "ft_lr": 2e-5, "ft_wd": 0.1, "seeds": 10, "pppl_lines": 1000,
            "flota_rows": 0, "flota_epochs": 20, "flota_batch": 64, "flota_lr": 3e-5, "flota_seeds": 5,
            "flota_k": [1, 2, 3, 4], "flota_modes": ["flota", "first", "longest"]},
}
PRESET_KEYS = [k for k in PRESETS["cpu"] if k not in ("note", "device", "model")]
PRESET_HELP = {
    "corpus": "pretraining text: 'arxiv' (the in-domain ArXiv-L training titles, leakage rules applied; "
              "train_scripts/demo/pretraining/corpus.py) and/or folders of *.txt[.gz] (a blank line between documents) or files, "
              "mixed", "lm_words": "training words of the pretraining corpus (0: all)",
    "vocab_size": "subword vocabulary size",
    "max_update": "pretraining updates (--lm-budget updates)", "max_epoch": "pretraining epochs (--lm-budget epochs)",
    "ft_rows": "Superbizarre dev and test rows (0: all)",
    "ft_sizes": "labelled training words of the learning curve (the first N; 0: all); every row is "
                "fine-tuned at every size",
    "pretrain_seeds": "pretraining runs per row (seeds 1..N; every Superbizarre fine-tuning run on each "
                      "checkpoint; with N >= 2 the row tests and the pretrained-vs-random tests take the N "
                      "per-checkpoint means as samples; FLOTA and pseudo-perplexity use the first)",
    "ft_updates": "fine-tuning updates at every size (0: --lm-ft-epochs epochs at every size)",
    "ft_epochs": "fine-tuning epochs when --lm-ft-updates is 0 (best dev epoch -> test)",
    "ft_wd": "fine-tuning weight decay", "pppl_lines": "held-out lines scored for pseudo-perplexity (0: none)",
    "ft_batch": "fine-tuning batch (sentences per update)", "ft_lr": "fine-tuning peak learning rate",
    "seeds": "fine-tuning seeds per row (and per control)", "flota_rows": "ArXiv rows per split (0: all)",
    "flota_epochs": "FLOTA fine-tuning epochs", "flota_batch": "FLOTA fine-tuning batch",
    "flota_lr": "FLOTA fine-tuning learning rate", "flota_seeds": "seeds per FLOTA segmentation",
    "flota_k": "the k values of FLOTA, FIRST and LONGEST", "flota_modes": "flota, first, longest",
}
#: the presets' recorded figures: one core's seconds per stage of each kind (``estimate.py``). cpu: the medians of
#: the complete re-run of 2026-11-29 (84 stages in three resumed goes on this project's 2-core machine; the stage
#: records: pretraining 1,311-1,427 s a row, FLOTA 251-300 s, Superbizarre 116-162 s with two outliers while a
#: `make install` ran beside it; bench/results/2026-11-29-pretraining-rerun.md). The idle run of the morning had
#: taken about half as long a stage (part 2: 41.9 min); the machine's speed is known to vary up to 2x
#: (bench/results/2026-11-29-make-demo.md): the plan takes the slower, later figures. The gpu preset has none recorded.
FIGURES = {
    "cpu": {"data": 5, "binarize": 30, "pretrain": 1370, "prepare": 21, "finetune/superbizarre": 135,
            "finetune/flota": 285, "probe": 55, "pppl": 13},
    "fast": {"data": 10, "binarize": 20, "pretrain": 40, "prepare": 20, "finetune/superbizarre": 40,
             "finetune/flota": 40, "probe": 20, "pppl": 20},
}
#: the FLOTA paper's own fine-tuning settings (A.2: batch 64, lr tuned in {1e-5, 3e-5, 1e-4}): --lm-flota-paper
FLOTA_PAPER = {"flota_batch": 64, "flota_lrs": [1e-5, 3e-5, 1e-4]}


# --- data -----------------------------------------------------------------------------------------------------

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
        #: the part's folder and its text's language: the pretraining part's, or another part's that runs the
        #: same steps on other text (the German part: ``folder`` german, ``lang`` de)
        self.root = args.output / getattr(args, "folder", "pretraining")
        self.lang = getattr(args, "lang", "en")
        #: the rows it can run, by name (another part gives its own)
        self.rows = getattr(args, "row_table", None) or lm_rows()
        self.raw = self.root / "raw"

    def lm_dir(self, row: str) -> Path:
        return self.root / "rows" / row / "lm"

    def pretrain_seeds(self) -> list[int]:
        """The pretraining seeds of every row: 1..``pretrain_seeds`` (1 where a part has no such setting)."""
        return list(range(1, getattr(self.a, "pretrain_seeds", 1) + 1))

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
        config = {"vocab_size": self.a.vocab_size, **self.rows[row].config}
        cmd = ["python", "-m", "train_scripts.binarize", "--lm", "--data", self.raw, "--src", self.lang,
               "--out", self.lm_dir(row), "--workers", 1]
        for key, value in config.items():
            cmd += ["--" + key.replace("_", "-"), value]
        return cmd

    def pretrain_command(self, row: str, seed: int = 1) -> list:
        a = self.a
        device = ["--cpu", "--gpus", 1] if a.device == "cpu" else ["--gpus", 1]
        budget = (["--max-update", a.max_update] if a.budget == "updates"
                  else ["--max-epoch", a.max_epoch, "--max-update", 0])
        return ["bash", REPO / "train_scripts" / "pretrain_roberta.sh", "--data", self.lm_dir(row),
                "--save-dir", self.ckpt_dir(row, seed), *device, *a.model, *budget, "--seed", seed]

    def largest_size(self) -> int:
        """The largest labelled size of the learning curve (0, the whole split, is the largest)."""
        return max(self.a.ft_sizes, key=lambda n: n or float("inf"))

    def finetune_epochs(self, train_rows: int, batch: int) -> int:
        """Epochs of a Superbizarre run: ``ft_updates`` updates at every size (the nearest whole number of epochs
        of ``train_rows`` examples), or ``ft_epochs`` when ``ft_updates`` is 0."""
        a = self.a
        if not a.ft_updates or not train_rows:
            return a.ft_epochs
        per_epoch = -(-train_rows // batch)
        return max(1, round(a.ft_updates / per_epoch))

    def finetune_runs(self) -> list[dict]:
        """Every fine-tuning run: Superbizarre (every row at every labelled size, from each of its pretraining
        runs; the baseline row, or every row with ``--lm-control all``, from random weights too, once: a control
        reads no pretrained weights) and FLOTA (the baseline row's first pretrained model)."""
        a, runs = self.a, []
        for task in a.tasks:
            prefix = a.superbizarre / task
            for row in a.rows:
                for size in a.ft_sizes:
                    control = a.control == "all" or (a.control == "baseline" and row == a.baseline)
                    for init in ["pretrained"] + (["random"] if control else []):
                        for pseed in self.pretrain_seeds() if init == "pretrained" else [1]:
                            for seed in range(1, a.seeds + 1):
                                runs.append({"part": "superbizarre", "task": task, "row": row, "init": init,
                                             "seed": seed, "pretrain_seed": pseed, "encoding": "standard",
                                             "prefix": prefix,
                                             "rows": a.ft_rows, "train_rows": size, "size": size,
                                             "epochs": self.finetune_epochs(size or 0, a.ft_batch),
                                             "batch": a.ft_batch, "lr": a.ft_lr, "wd": a.ft_wd, "noise": 0.0,
                                             "metric": getattr(a, "ft_metric", "accuracy")})
        if a.flota_set != "none":
            size = "1e+03" if a.flota_set == "L" else "1e+02"
            for area in a.flota_areas:
                prefix = a.flota_data / f"arxiv_{area}_{size}"
                for enc in flota_encodings(a):
                    for lr in a.flota_lrs:
                        for seed in range(1, a.flota_seeds + 1):
                            runs.append({"part": "flota", "task": f"arxiv_{area}_{a.flota_set}", "row": a.baseline,
                                         "init": "pretrained", "seed": seed, "pretrain_seed": 1,
                                         "encoding": enc["name"],
                                         "mode": enc["mode"], "k": enc["k"], "prefix": prefix,
                                         "rows": a.flota_rows, "train_rows": 0, "size": a.flota_rows,
                                         "epochs": a.flota_epochs, "batch": a.flota_batch, "lr": lr,
                                         "wd": a.ft_wd, "noise": a.noise_p, "metric": "macro_f1",
                                         "noisy_dev": a.flota_select == "noisy-dev"})
        for r in runs:
            lr_part = f"lr{r['lr']:g}/" if r["part"] == "flota" and len(a.flota_lrs) > 1 else ""
            size_part = f"n{r['size'] or 'all'}/" if r["part"] == "superbizarre" else ""
            enc = r["encoding"] + ("-noisydev" if r.get("noisy_dev") else "")
            base = self.root / "finetune" / r["task"] / r["row"] / enc
            r["data"] = base / size_part / "data"
            # a later pretraining run's checkpoint: its own folder (the first's keep their names)
            init = r["init"] + (f"-ckpt{r['pretrain_seed']}" if r["pretrain_seed"] > 1 else "")
            r["save"] = base / f"{size_part}{lr_part}{init}-seed{r['seed']}"
            r["name"] = f"ft/{r['task']}/{r['row']}/{enc}/{size_part}{lr_part}{init}-seed{r['seed']}"
            r["prep"] = f"prep/{r['task']}/{r['row']}/{enc}" + (f"/{size_part.rstrip('/')}" if size_part else "")
        return runs

    def prepare_command(self, run: dict) -> list:
        return ["python", "-m", "train_scripts.classification_data", "prepare", "--lm-data", self.lm_dir(run["row"]),
                "--csv-prefix", run["prefix"], "--out", run["data"], "--max-rows", run["rows"],
                *self.data_options(run)]

    def data_options(self, run: dict) -> list:
        """The options that say which data a run sees (rows, encoding, noise), the same for ``prepare`` and for
        ``finetune_classification.sh``, which prepares (or reuses) the data with them."""
        cmd = ["--train-rows", run["train_rows"]] if run.get("train_rows") else []
        if run["encoding"] != "standard":
            cmd += ["--encode", "flota", "--flota-mode", run["mode"], "--flota-k", run["k"]]
        if run["noise"]:
            cmd += ["--noise-p", run["noise"], "--noise-seed", self.a.noise_seed]
            if run.get("noisy_dev"):
                cmd += ["--noise-splits", "valid"]
        return cmd

    def finetune_command(self, run: dict) -> list:
        a = self.a
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
        if a.device == "cpu":
            cmd.append("--cpu")
        # fairseq-train options after the recipe's own: validate (and keep the best) about 8 times per run, no
        # per-epoch checkpoint files
        every = max(1, run["epochs"] // 8)
        return cmd + ["--validate-interval", every, "--save-interval", every, "--no-save-optimizer-state",
                      "--no-last-checkpoints"]

    def probe_path(self, task: str, row: str, seed: int = 1) -> Path:
        return self.root / "probe" / task / (f"{row}.json" if seed == 1 else f"{row}-seed{seed}.json")

    def probe_command(self, run: dict, seed: int = 1) -> list:
        """The frozen-encoder probe of a row's pretrained encoder (pretraining run ``seed``) and its random
        controls, on the largest size's data, at every labelled size (``train_scripts/probe.py``); the random
        encoders need no pretrained weights, so only the first pretraining run's probe scores them."""
        a = self.a
        return ["python", "-m", "train_scripts.probe", "--checkpoint", self.pretrained(run["row"], seed), "--data",
                run["data"], "--sizes", ",".join(str(n) for n in a.ft_sizes), "--random-seeds",
                a.seeds if seed == 1 else 0, "--output", self.probe_path(run["task"], run["row"], seed)]

    def pppl_path(self, row: str) -> Path:
        return self.root / "rows" / row / "pseudo_perplexity.json"
