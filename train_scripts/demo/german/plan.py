"""The German part's rows, presets and paths: Wordmap against a Unigram baseline of the same dictionary size,
pretrained on the same German text with the same budget and pretraining seeds (Jung 2023, sections 3.2.3 and 4).

Its training steps are the language-model pipeline's (``train_scripts/demo/lm/``: ``binarize --lm`` ->
``pretrain_roberta.sh`` -> ``finetune_classification.sh`` when GermEval runs), on :func:`pipeline_settings`: the
part's folder, German text, its rows (:func:`row_table`: the baseline at ``baseline_vocab_size``), its pretraining
seeds and, with ``--de-germeval-finetune``, its one task (GermEval 2018, :func:`germeval_task`).  The measures'
paths are :class:`Paths`', their stage names :func:`seeded`; :data:`FIGURES` are the plan's seconds per stage.
"""
from __future__ import annotations

from pathlib import Path

from train_scripts.demo.lm.plan import STANDARD, Plan, Settings, Task
from train_scripts.demo.rows import Row

#: the rows: the baseline and Wordmap (verbs by Wordmap, other words by a German Unigram learned on the same text).
#: Equal capacity: Wordmap's dictionary is its base Unigram's pieces plus every piece its segmenter can write (12,786
#: on the cpu corpus, whatever the base size), so no base vocabulary gives it the baseline's 8k entries; instead the
#: baseline is learned at Wordmap's dictionary size (the preset's ``baseline_vocab_size``, measured: see PRESETS)
ROWS = {
    "unigram": Row("unigram", "Unigram", {"scheme": "sentencepiece", "model_type": "unigram"},
                   "SentencePiece Unigram learned on the German corpus, at Wordmap's dictionary size"),
    "wordmap": Row("wordmap", "Wordmap", {"scheme": "wordmap", "model_type": "unigram"},
                   "verbs (HanTa-tagged in the corpus) by Wordmap, other words by a German Unigram learned on the "
                   "same corpus"),
}
BASELINE = "unigram"
#: the classification task's name in the plan (its CSVs: DATA/germeval/germeval_{train,dev,test}.csv)
TASK = "germeval"

#: why GermEval fine-tuning is off in the cpu and fast presets (``--de-germeval-finetune`` turns it on)
GERMEVAL_OFF = ("GermEval 2018 fine-tuning is off unless --de-germeval-finetune: the complete cpu run of 2026-11-29 "
                "(bench/results/2026-11-29-german-part.md) measured official F1 Unigram 66.1 ± 0.6, Wordmap "
                "65.0 ± 1.0, random init 66.2 ± 0.8, all under the 69.0 character n-gram floor (pretraining on this "
                "corpus teaches these small models nothing about tweets), and its 15 fine-tuning runs were 62 of the "
                "part's 97 command-minutes")

PRESETS = {
    "cpu": {"note": "CPU, sized for make demo on 2 cores: the --small RoBERTa (2 layers, 128 dimensions) pretrained "
                    "3 times per row (seeds 1-3) for 1,000 updates of 128 sentences (lr 2e-3, one sentence per "
                    "sample; reduced from the 1,500 of the 2026-11-29 run so that three seeds fit in 50 minutes) on "
                    "the German corpus (Multi30k German training side, GermEval 2018 training tweets, UD GSD dev; "
                    "leakage rules applied); Wordmap on an 8k base Unigram (its dictionary: 20,295 entries, "
                    "measured), the Unigram baseline learned at the same dictionary size (20,298 pieces: 20,295 "
                    "entries); CLAMS agreement on at most 1,000 pairs per construction and the verb probes, each "
                    "beside 5 random encoders; " + GERMEVAL_OFF + " (when on: 4 epochs, batch 32, lr 1e-3, weight "
                    "decay 0.1, 5 seeds per row and 5 for the random-init control, on pretraining seed 1)",
            "device": "cpu", "max_update": 1000, "vocab_size": 8000, "baseline_vocab_size": 20298, "lm_words": 0,
            "model": ["--small", "--lr", "0.002", "--global-batch", "128", "--sample-break-mode", "complete_doc"],
            "ft_epochs": 4, "ft_batch": 32, "ft_lr": 1e-3, "ft_wd": 0.1, "seeds": 5, "ft_rows": 0,
            "probe_seeds": 5, "pretrain_seeds": 3, "agreement_pairs": 1000, "germeval_finetune": False},
    "fast": {"note": "a smoke test: the --tiny RoBERTa for 10 updates on 20,000 words, 2 pretraining seeds, 50 "
                     "agreement pairs per construction; GermEval (when asked: 100 tweets per split, 1 epoch, 2 "
                     "seeds): shows that every stage runs, not what Wordmap does",
             "device": "cpu", "max_update": 10, "vocab_size": 800, "baseline_vocab_size": 3372, "lm_words": 20_000,
             "model": ["--tiny", "--sample-break-mode", "complete_doc"],
             "ft_epochs": 1, "ft_batch": 16, "ft_lr": 3e-4, "ft_wd": 0.1, "seeds": 2, "ft_rows": 100,
             "probe_seeds": 2, "pretrain_seeds": 2, "agreement_pairs": 50, "germeval_finetune": False},
    "gpu": {"note": "one GPU: RoBERTa-base (12 layers, 768 dimensions) pretrained from scratch 3 times per row for "
                    "10,000 updates of 256 sequences on the same 34,774-line corpus, the cpu preset's vocabularies "
                    "(Wordmap on an 8k base, the baseline at its dictionary size); all CLAMS pairs; GermEval fine-"
                    "tuned with the thesis's settings (3.2.3: batch 16, lr 2e-5, 3 epochs), 5 seeds. This is not the "
                    "thesis's design (it continued the masked-LM training of bert-base-german-cased with Wordmap's "
                    "pieces added, on 500k sentences): --de-init CHECKPOINT (a German RoBERTa in fairseq format, "
                    "e.g. GottBERT or GeistBERT) comes closer, continuing from it for both rows. Expected cost, "
                    "estimated (not measured: no run of this preset is recorded): "
                    "about the pretraining part's gpu preset per pretraining run; the corpus is small for this "
                    "model: expect it to over-fit",
            "device": "gpu", "max_update": 10000, "vocab_size": 8000, "baseline_vocab_size": 20298, "lm_words": 0,
            "model": ["--global-batch", "256", "--warmup-updates", "1000", "--validate-interval-updates", "1000",
                      "--save-interval-updates", "1000", "--keep-interval-updates", "1"],
            "ft_epochs": 3, "ft_batch": 16, "ft_lr": 2e-5, "ft_wd": 0.1, "seeds": 5, "ft_rows": 0,
            "probe_seeds": 5, "pretrain_seeds": 3, "agreement_pairs": 0, "germeval_finetune": True},
}
#: the preset values that are options of their own (``germeval_finetune``: a switch, ``--de-germeval-finetune``)
PRESET_KEYS = [k for k in PRESETS["cpu"] if k not in ("note", "device", "model", "germeval_finetune")]
PRESET_HELP = {
    "max_update": "pretraining updates (the same for both rows)",
    "vocab_size": "subword vocabulary size (Wordmap's base Unigram; the baseline's too where baseline_vocab_size is 0)",
    "baseline_vocab_size": "the Unigram baseline's vocabulary size (0: vocab_size); the presets give it Wordmap's "
                           "dictionary size, measured on the corpus",
    "lm_words": "training words of the pretraining corpus (0: all)",
    "ft_epochs": "GermEval fine-tuning epochs (best dev epoch -> test)", "ft_batch": "fine-tuning batch",
    "ft_lr": "fine-tuning peak learning rate", "ft_wd": "fine-tuning weight decay",
    "seeds": "fine-tuning seeds per row and for the random-init control",
    "ft_rows": "GermEval tweets per split (0: all)",
    "probe_seeds": "random encoders of the probes' and the agreement's control",
    "pretrain_seeds": "pretraining runs per row (seeds 1..N; seed 1 keeps the stage names of one run)",
    "agreement_pairs": "CLAMS pairs per construction (0: all)",
}


def flag(key: str) -> str:
    """The option of a preset value: ``--de-`` and its name (``ft_lr``: ``--de-ft-lr``)."""
    return "--de-" + key.replace("_", "-")


class Paths:
    """Where the part's own steps write (the pipeline's steps' paths are :class:`Plan`'s); ``seed``: the
    pretraining run (seed 1 keeps the names of one run)."""

    def __init__(self, root: Path):
        self.root = root
        self.raw = root / "raw"                       # train.de, valid.de, corpus.json
        self.germeval = root / "germeval"             # germeval_{train,dev,test}.csv, germeval.json
        self.ud = root / "ud"                         # ud_test.de, ud_verbs.jsonl, ud_sentences.jsonl, ud.json

    def marks(self) -> Path:
        return self.ud / "ud_test.verbs"

    def _seeded(self, row: str, name: str, seed: int) -> Path:
        stem, suffix = name.rsplit(".", 1)
        return self.root / "rows" / row / (name if seed == 1 else f"{stem}.seed{seed}.{suffix}")

    def pppl(self, row: str, seed: int = 1) -> Path:
        return self._seeded(row, "pseudo_perplexity.ud.json", seed)

    def verb_probe(self, row: str, seed: int = 1) -> Path:
        return self._seeded(row, "verb_probe.json", seed)

    def agreement(self, row: str, seed: int = 1) -> Path:
        return self._seeded(row, "agreement.json", seed)

    def gold(self) -> Path:
        return self.root / "gold_segmentation.json"

    def init(self, row: str) -> Path:
        """The row's extended copy of ``--de-init``'s checkpoint (``train_scripts/extend_checkpoint.py``)."""
        from train_scripts.demo.german.init import init_dir

        return init_dir(self.root, row)


def seeded(stage: str, seed: int) -> str:
    """A per-pretraining-run stage's name: ``stage`` for seed 1, ``stage-seedK`` after."""
    return stage if seed == 1 else f"{stage}-seed{seed}"


#: the presets' recorded figures: one core's seconds per stage of each kind (``estimate.py``); fast: 0.4 times the
#: figures of its run of 2026-11-29 under a load of 6-7 (halved), between its idle end-to-end test run of 2026-12-02
#: (103 s of stages in all) and a loaded one (about 4x that); cpu: the medians of the complete run of 2026-12-02
#: (bench/results/2026-12-02-german-part.md: 33.0 minutes, 2 commands at a time beside a make test, load 4-5) for
#: every stage it ran; prepare, finetune and floor (GermEval, off in cpu unless asked) from the complete run of
#: 2026-11-29 (bench/results/2026-11-29-german-part.md); init (--de-init) estimated
FIGURES = {
    "cpu": {"data": 2, "binarize/unigram": 19, "binarize/wordmap": 25, "pretrain/unigram": 431,
            "pretrain/wordmap": 643, "prepare": 26, "finetune": 245, "pppl": 38, "verbs": 11, "verbs+random": 28,
            "agreement": 32, "agreement+random": 144, "gold": 4, "floor": 8, "init": 30},
    "fast": {"data": 2, "binarize/unigram": 8, "binarize/wordmap": 10, "pretrain/unigram": 12,
             "pretrain/wordmap": 12, "prepare": 12, "finetune": 18, "pppl": 12, "verbs": 8, "verbs+random": 12,
             "agreement": 8, "agreement+random": 12, "gold": 16, "floor": 6, "init": 6},
}


def germeval_task(a) -> Task:
    """GermEval 2018 coarse as the pipeline's task: both rows on the whole training split (the CSVs the data step
    writes, ``germeval/germeval_*.csv``), by the official metric's macro F1, with the baseline's random-init
    control, from each row's first pretraining run."""
    return Task(part=TASK, name=TASK, prefix=Paths(a.output / "german").germeval / TASK, metric="macro_f1",
                max_rows=a.ft_rows, sizes=(0,), epochs=a.ft_epochs, updates=0, batch=a.ft_batch, lrs=(a.ft_lr,),
                wd=a.ft_wd, seeds=a.seeds, rows=tuple(ROWS), every_pretraining=False, controls=(BASELINE,),
                control_seeds=a.seeds, encodings=(STANDARD,), noise=0.0, noise_seed=1, noisy_dev=False)


def row_table(a) -> dict:
    """The rows with the baseline at its own vocabulary size (``baseline_vocab_size``; 0: ``vocab_size``)."""
    table = dict(ROWS)
    if getattr(a, "baseline_vocab_size", 0):
        base = ROWS[BASELINE]
        table[BASELINE] = Row(base.name, base.label, {**base.config, "vocab_size": a.baseline_vocab_size},
                              base.note)
    return table


def pipeline_settings(a) -> Settings:
    """The language-model pipeline's settings of the part's settings ``a``: German text in ``OUTPUT/german``, the
    two rows pretrained ``pretrain_seeds`` times each for ``max_update`` updates (from ``--de-init``'s extended
    checkpoint where given), the GermEval task when it runs."""
    model = tuple(a.model) + tuple(getattr(a, "init_options", ()))
    return Settings(output=a.output, folder="german", lang="de", row_table=row_table(a), rows=tuple(ROWS),
                    vocab_size=a.vocab_size, device=a.device, model=model, budget="updates",
                    max_update=a.max_update, max_epoch=0, pretrain_seeds=a.pretrain_seeds,
                    tasks=(germeval_task(a),) if a.germeval_finetune else ())


def plan_of(a) -> Plan:
    """The pipeline's :class:`~train_scripts.demo.lm.plan.Plan` of the part's settings ``a`` (with ``--de-init``:
    its pretraining runs restore each row's extended checkpoint, ``init.InitPlan``)."""
    if getattr(a, "init", None):
        from train_scripts.demo.german.init import InitPlan

        return InitPlan(pipeline_settings(a))
    return Plan(pipeline_settings(a))
