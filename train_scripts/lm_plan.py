"""The pretraining part's plan (``morphtok-demo --part pretraining``): its rows, presets, corpus and commands.

The rows (the translation part's monolingual rows and the space-as-token paper's published models), the budget
:data:`PRESETS`, the pretraining corpus (:func:`prepare_corpus`) and :class:`Plan`: the paths and the command of
every step (binarize, pretrain, prepare and fine-tune), which the dry run prints and ``lm_scheduler`` runs.
"""
from __future__ import annotations

import gzip
import random
from pathlib import Path

from preprocess.common import REPO, UserError
from preprocess.outputs import atomic_output
from train_scripts.tools import SHARED_DATA

#: the rows of this part: the translation part's rows that are monolingual schemes (``translation_rows.ROWS``)
LM_ROW_NAMES = ("unigram", "unigram_prime", "unigram_prime_nospace", "bpe", "bpe_prime", "bpe_prime_nospace",
                "bite_unigram")
DEFAULT_LM_ROWS = ("unigram", "unigram_prime", "unigram_prime_nospace")
PAPER_ROWS = ("bpe", "bpe_prime", "bpe_prime_nospace", "unigram", "unigram_prime", "unigram_prime_nospace")
BASELINE = "unigram"

def published_rows() -> dict:
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

    return {**{name: ROWS[name] for name in LM_ROW_NAMES}, **published_rows()}


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
