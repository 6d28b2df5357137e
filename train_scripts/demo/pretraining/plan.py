"""The pretraining part's plan (``morphtok-demo --part pretraining``): its rows, presets and fine-tuning tasks.

The rows (the translation part's monolingual rows and the space-as-token paper's published models), the budget
:data:`PRESETS` and the part's tasks (Superbizarre and FLOTA on ArXiv, :func:`tasks`) as the language-model
pipeline's settings (:func:`pipeline_settings`); the paths and commands of every step are the pipeline's
(``train_scripts/demo/lm/plan.py``), which the dry run prints and ``scheduler.py`` runs.
"""
from __future__ import annotations

from train_scripts.demo.lm.plan import STANDARD, Encoding, Plan, Settings, Task
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
                    "of the 625 updates before it), and 3 random-weight runs per FLOTA segmentation (the control)",
            "device": "cpu", "corpus": ["arxiv"], "lm_words": 0, "vocab_size": 8000, "max_update": 3000,
            "max_epoch": 20, "pretrain_seeds": 1,
            "model": ["--small", "--lr", "0.002", "--global-batch", "128", "--sample-break-mode", "complete_doc"],
            "ft_rows": 8000, "ft_sizes": [1000, 8000], "ft_updates": 1000, "ft_epochs": 20, "ft_batch": 32,
            "ft_lr": 1e-3, "ft_wd": 0.1, "seeds": 5, "pppl_lines": 600, "flota_rows": 0, "flota_epochs": 6,
            "flota_batch": 32, "flota_lr": 1e-3, "flota_seeds": 5, "flota_control_seeds": 3, "flota_k": [2, 3, 4],
            "flota_modes": ["flota"]},
    "fast": {"note": "a smoke test: the --tiny RoBERTa for 10 updates on 20,000 words, 100 examples per split, "
                     "1 epoch, 2 seeds, FLOTA at k = 2 only: shows that every stage runs, not what pretraining does",
             "device": "cpu", "corpus": ["arxiv"], "lm_words": 20_000, "vocab_size": 600, "max_update": 10,
             "max_epoch": 1, "pretrain_seeds": 1, "model": ["--tiny", "--sample-break-mode", "complete_doc"],
             "ft_rows": 100, "ft_sizes": [100], "ft_updates": 0,
             "ft_epochs": 1, "ft_batch": 16, "ft_lr": 3e-4, "ft_wd": 0.1, "seeds": 2, "pppl_lines": 20,
             "flota_rows": 100, "flota_epochs": 1, "flota_batch": 16, "flota_lr": 3e-4, "flota_seeds": 2,
             "flota_control_seeds": 1, "flota_k": [2], "flota_modes": ["flota"]},
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
            "flota_control_seeds": 3, "flota_k": [1, 2, 3, 4], "flota_modes": ["flota", "first", "longest"]},
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
    "flota_control_seeds": "random-weight FLOTA runs per segmentation (the control for whether FLOTA's effect needs "
                           "pretraining; 0: none)",
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


# --- the pipeline's settings: this part's rows and tasks ----------------------------------------------------

def largest_size(args) -> int:
    """The largest labelled size of the learning curve (0, the whole split, is the largest)."""
    return max(args.ft_sizes, key=lambda n: n or float("inf"))


def flota_encodings(args) -> tuple:
    """The FLOTA table's columns: the standard segmentation, then (mode, k) for every mode and k."""
    return (STANDARD, *(Encoding(f"{mode}_k{k}", mode, k) for mode in args.flota_modes for k in args.flota_k))


def tasks(args) -> tuple:
    """The part's fine-tuning tasks: Superbizarre (every row at every labelled size, from each of its pretraining
    runs; the baseline row, or every row with ``--lm-control all``, from random weights too) and FLOTA on ArXiv
    (the baseline row's first pretrained model at every segmentation, and from random weights at every
    segmentation, ``flota_control_seeds`` seeds at the first learning rate: whether FLOTA's effect needs
    pretraining)."""
    controls = {"all": tuple(args.rows), "baseline": (args.baseline,), "none": ()}[args.control]
    out = [Task(part="superbizarre", name=task, prefix=args.superbizarre / task, metric="accuracy",
                max_rows=args.ft_rows, sizes=tuple(args.ft_sizes), epochs=args.ft_epochs, updates=args.ft_updates,
                batch=args.ft_batch, lrs=(args.ft_lr,), wd=args.ft_wd, seeds=args.seeds, rows=tuple(args.rows),
                every_pretraining=True, controls=controls, control_seeds=args.seeds, encodings=(STANDARD,),
                noise=0.0, noise_seed=args.noise_seed, noisy_dev=False) for task in args.tasks]
    if args.flota_set != "none":
        size = "1e+03" if args.flota_set == "L" else "1e+02"
        out += [Task(part="flota", name=f"arxiv_{area}_{args.flota_set}", prefix=args.flota_data / f"arxiv_{area}_{size}",
                     metric="macro_f1", max_rows=args.flota_rows, sizes=None, epochs=args.flota_epochs, updates=0,
                     batch=args.flota_batch, lrs=tuple(args.flota_lrs), wd=args.ft_wd, seeds=args.flota_seeds,
                     rows=(args.baseline,), every_pretraining=False,
                     controls=(args.baseline,) if args.flota_control_seeds else (),
                     control_seeds=args.flota_control_seeds, encodings=flota_encodings(args), noise=args.noise_p,
                     noise_seed=args.noise_seed, noisy_dev=args.flota_select == "noisy-dev")
                for area in args.flota_areas]
    return tuple(out)


def pipeline_settings(args) -> Settings:
    """The language-model pipeline's settings of this part's ``args``: its folder, English text, rows and tasks."""
    return Settings(output=args.output, folder="pretraining", lang="en", row_table=lm_rows(), rows=tuple(args.rows),
                    vocab_size=args.vocab_size, device=args.device, model=tuple(args.model), budget=args.budget,
                    max_update=args.max_update, max_epoch=args.max_epoch, pretrain_seeds=args.pretrain_seeds,
                    tasks=tasks(args))


def plan_of(args) -> Plan:
    """The pipeline's :class:`~train_scripts.demo.lm.plan.Plan` of this part's ``args``."""
    return Plan(pipeline_settings(args))
