"""The German part's rows, presets and paths: Wordmap against a Unigram baseline, pretrained on the same German text
with the same budget and seeds (Jung 2023, sections 3.2.3 and 4).

Its steps are the language-model pipeline's (``train_scripts/demo/lm/``: ``binarize --lm`` -> ``pretrain_roberta.sh``
-> ``finetune_classification.sh``), on :func:`pipeline_settings`: the part's folder, German text, its rows and its one
task (GermEval 2018, :func:`germeval_task`), plus what the thesis says Wordmap should change: the verbs (pseudo-perplexity per word over all words and over the gold VERB/AUX words of
UD German GSD test; ``train_scripts/verb_probe.py``'s feature and lexeme probes of the frozen encoder).
"""
from __future__ import annotations

from pathlib import Path

from train_scripts.demo.lm.plan import STANDARD, Plan, Settings, Task
from train_scripts.demo.rows import Row

#: the rows: the baseline and Wordmap (verbs by Wordmap, other words by a German Unigram learned on the same text)
ROWS = {
    "unigram": Row("unigram", "Unigram", {"scheme": "sentencepiece", "model_type": "unigram"},
                   "SentencePiece Unigram learned on the German corpus"),
    "wordmap": Row("wordmap", "Wordmap", {"scheme": "wordmap", "model_type": "unigram"},
                   "verbs (HanTa-tagged in the corpus) by Wordmap, other words by a German Unigram learned on the "
                   "same corpus"),
}
BASELINE = "unigram"
#: the classification task's name in the plan (its CSVs: DATA/germeval/germeval_{train,dev,test}.csv)
TASK = "germeval"

PRESETS = {
    "cpu": {"note": "CPU, sized for make demo on 2 cores: the --small RoBERTa (2 layers, 128 dimensions) pretrained "
                    "for 1,500 updates of 128 sentences (lr 2e-3, one sentence per sample: about 4.5M tokens, 6 epochs) on "
                    "the German corpus (Multi30k German training "
                    "side, GermEval 2018 training tweets, UD GSD dev; leakage rules applied), 8k vocabularies "
                    "learned on it; GermEval 2018 coarse fine-tuned 4 epochs (batch 32, lr 1e-3, weight decay 0.1, "
                    "the pretraining part's fine-tuning settings) with 5 seeds per row and 5 for the random-init "
                    "control; verb probes with 3 random encoders",
            "device": "cpu", "max_update": 1500, "vocab_size": 8000, "lm_words": 0,
            "model": ["--small", "--lr", "0.002", "--global-batch", "128", "--sample-break-mode", "complete_doc"],
            "ft_epochs": 4, "ft_batch": 32, "ft_lr": 1e-3, "ft_wd": 0.1, "seeds": 5, "ft_rows": 0,
            "probe_seeds": 3},
    "fast": {"note": "a smoke test: the --tiny RoBERTa for 10 updates on 20,000 words, 100 tweets per split, 1 epoch, "
                     "2 seeds: shows that every stage runs, not what Wordmap does",
             "device": "cpu", "max_update": 10, "vocab_size": 800, "lm_words": 20_000,
             "model": ["--tiny", "--sample-break-mode", "complete_doc"],
             "ft_epochs": 1, "ft_batch": 16, "ft_lr": 3e-4, "ft_wd": 0.1, "seeds": 2, "ft_rows": 100,
             "probe_seeds": 2},
    "gpu": {"note": "one GPU, the thesis's scale: RoBERTa-base (12 layers, 768 dimensions; the thesis fine-tuned "
                    "BERT-base-sized models) pretrained for 10,000 updates of 256 sequences, 32k vocabularies "
                    "(the thesis's base vocabulary: 30k); GermEval fine-tuned with the thesis's settings (3.2.3: "
                    "batch 16, lr 2e-5, 3 epochs), 5 seeds. Expected cost, estimated (not yet measured: no GPU "
                    "has been lent to this project since the part was written): the pretraining part's gpu preset "
                    "runs the same model and updates, so about the same GPU time per row for pretraining, plus 15 "
                    "short fine-tuning runs; the corpus (34,774 lines) is small for this model: expect it to "
                    "over-fit, and pretrain on more German text for a real answer",
            "device": "gpu", "max_update": 10000, "vocab_size": 32000, "lm_words": 0,
            "model": ["--global-batch", "256", "--warmup-updates", "1000", "--validate-interval-updates", "1000",
                      "--save-interval-updates", "1000", "--keep-interval-updates", "1"],
            "ft_epochs": 3, "ft_batch": 16, "ft_lr": 2e-5, "ft_wd": 0.1, "seeds": 5, "ft_rows": 0,
            "probe_seeds": 5},
}
PRESET_KEYS = [k for k in PRESETS["cpu"] if k not in ("note", "device", "model")]
PRESET_HELP = {
    "max_update": "pretraining updates (the same for both rows)", "vocab_size": "subword vocabulary size",
    "lm_words": "training words of the pretraining corpus (0: all)",
    "ft_epochs": "GermEval fine-tuning epochs (best dev epoch -> test)", "ft_batch": "fine-tuning batch",
    "ft_lr": "fine-tuning peak learning rate", "ft_wd": "fine-tuning weight decay",
    "seeds": "fine-tuning seeds per row and for the random-init control",
    "ft_rows": "GermEval tweets per split (0: all)", "probe_seeds": "random encoders of the probes' control",
}


def flag(key: str) -> str:
    """The option of a preset value: ``--de-`` and its name (``ft_lr``: ``--de-ft-lr``)."""
    return "--de-" + key.replace("_", "-")


class Paths:
    """Where the part's own steps write (the pipeline's steps' paths are :class:`Plan`'s)."""

    def __init__(self, root: Path):
        self.root = root
        self.raw = root / "raw"                       # train.de, valid.de, corpus.json
        self.germeval = root / "germeval"             # germeval_{train,dev,test}.csv, germeval.json
        self.ud = root / "ud"                         # ud_test.de, ud_verbs.jsonl, ud_sentences.jsonl, ud.json

    def marks(self) -> Path:
        return self.ud / "ud_test.verbs"

    def pppl(self, row: str) -> Path:
        return self.root / "rows" / row / "pseudo_perplexity.ud.json"

    def verb_probe(self, row: str) -> Path:
        return self.root / "rows" / row / "verb_probe.json"


#: the presets' recorded figures: one core's seconds per stage of each kind (``estimate.py``); fast: its run of
#: 2026-11-29 under a load of 6-7 on the 2-core machine, halved; cpu: its complete run of 2026-11-29 from a fresh
#: output folder on the idle 2-core machine, 49.0 minutes (bench/results/2026-11-29-german-part.md)
FIGURES = {
    "cpu": {"data": 2, "binarize/unigram": 35, "binarize/wordmap": 50, "pretrain/unigram": 740,
            "pretrain/wordmap": 1010, "prepare": 26, "finetune": 245, "pppl": 50, "verbs": 33, "floor": 8},
    "fast": {"data": 5, "binarize/unigram": 20, "binarize/wordmap": 25, "pretrain/unigram": 30,
             "pretrain/wordmap": 30, "prepare": 30, "finetune": 45, "pppl": 30, "verbs": 30, "floor": 15},
}


def germeval_task(a) -> Task:
    """GermEval 2018 coarse as the pipeline's task: both rows on the whole training split (the CSVs the data step
    writes, ``germeval/germeval_*.csv``), by the official metric's macro F1, with the baseline's random-init
    control."""
    return Task(part=TASK, name=TASK, prefix=Paths(a.output / "german").germeval / TASK, metric="macro_f1",
                max_rows=a.ft_rows, sizes=(0,), epochs=a.ft_epochs, updates=0, batch=a.ft_batch, lrs=(a.ft_lr,),
                wd=a.ft_wd, seeds=a.seeds, rows=tuple(ROWS), every_pretraining=False, controls=(BASELINE,),
                control_seeds=a.seeds, encodings=(STANDARD,), noise=0.0, noise_seed=1, noisy_dev=False)


def pipeline_settings(a) -> Settings:
    """The language-model pipeline's settings of the part's settings ``a``: German text in ``OUTPUT/german``, the
    two rows pretrained once each for ``max_update`` updates, the GermEval task."""
    return Settings(output=a.output, folder="german", lang="de", row_table=ROWS, rows=tuple(ROWS),
                    vocab_size=a.vocab_size, device=a.device, model=tuple(a.model), budget="updates",
                    max_update=a.max_update, max_epoch=0, pretrain_seeds=1, tasks=(germeval_task(a),))


def plan_of(a) -> Plan:
    """The pipeline's :class:`~train_scripts.demo.lm.plan.Plan` of the part's settings ``a``."""
    return Plan(pipeline_settings(a))
