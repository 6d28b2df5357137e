"""The German part's steps on the demo's scheduler: the German data, then the language-model pipeline's steps for
each row (binarize, pretrain, GermEval fine-tuning with seeds and a random-init control), then the verb measures.

:class:`GermanRun` is the shared :class:`~train_scripts.demo.lm.pipeline.Pipeline` with the German data as its data
step and two steps of its own per row: pseudo-perplexity on UD German GSD test (all words and the gold
VERB/AUX words, ``train_scripts/pseudo_perplexity.py --word-marks``) and the verb probes of the frozen encoder
(``train_scripts/verb_probe.py``: VerbForm, Tense, Person, Number, Mood; the lexeme probe; random encoders).
"""
from __future__ import annotations

import json
from pathlib import Path

from train_scripts.demo.german.plan import TASK, Paths, pipeline_settings
from train_scripts.demo.lm.pipeline import Pipeline


def prepare_data(a, paths: Paths) -> dict:
    """The German corpus, the GermEval sets and the UD files (``train_scripts/prepare_german.py``): their records."""
    from train_scripts import prepare_german as pg

    inputs = pg.Inputs.from_options(germeval=a.germeval, ud=a.ud, multi30k=a.multi30k)
    corpus = pg.prepare_corpus(str(paths.raw), inputs)
    if a.lm_words:   # the smallest presets: the first lm_words words of the training text
        _truncate_words(paths.raw / "train.de", a.lm_words)
    for split in ("train", "valid"):   # one sentence per document, as the pretraining part has one title per one
        _one_per_document(paths.raw / f"{split}.de")
    germeval = pg.prepare_germeval(str(paths.germeval), inputs)
    ud = pg.prepare_ud(str(paths.ud), inputs)
    _write_marks(paths.ud / "ud_sentences.jsonl", paths.marks())
    return {"corpus": corpus, "germeval": germeval, "ud": ud}


def _truncate_words(path: Path, words: int) -> None:
    kept, n = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if n >= words:
            break
        kept.append(line)
        n += len(line.split())
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")


def _one_per_document(path: Path) -> None:
    """A blank line after every sentence: each its own document, so that ``--sample-break-mode complete_doc``
    makes one sample of each (fairseq 0.12's ``eos`` mode fails under numpy 2: ``np.compat``)."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    path.write_text("".join(f"{line}\n\n" for line in lines), encoding="utf-8")


def _write_marks(sentences: Path, out: Path) -> None:
    """One line per UD test sentence, one 0/1 per whitespace word (1: a gold VERB/AUX word): pseudo-perplexity's
    ``--word-marks``."""
    lines = []
    for line in sentences.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["split"] != "test":
            continue
        verbs = set(rec["verb_words"])
        lines.append(" ".join("1" if i in verbs else "0" for i in range(len(rec["text"].split()))))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


class GermanRun(Pipeline):
    """The pipeline on the part's settings ``a`` (``part.GermanPart.settings``), with the German data and the verb
    measures."""

    def __init__(self, a, runner, stages, scheduler):
        super().__init__(pipeline_settings(a), runner, stages, scheduler)
        self.a = a
        self.paths = Paths(self.plan.root)

    def data(self) -> dict:
        a = self.a
        return self.stages.run("lm/data", [self.paths.raw, self.paths.germeval, self.paths.ud],
                               lambda: prepare_data(a, self.paths),
                               key={"germeval": str(a.germeval), "ud": str(a.ud), "multi30k": str(a.multi30k),
                                    "words": a.lm_words, "documents": "one sentence each"})

    def floor(self) -> dict:
        """The character 3-6-gram Naive Bayes on the same GermEval sets (trained on train, alpha by the official F1
        on dev, scored on test; ``prepare_german.floor``)."""
        from train_scripts import prepare_german as pg

        prefix = str(self.paths.germeval / TASK)
        return self.stages.run("floor", [], lambda: {"part": TASK, "task": TASK, **pg.floor(csv_prefix=prefix)},
                               key={"csv": prefix}, after=("lm/data",))

    def word_pppl(self, row: str) -> dict:
        p, out = self.plan, self.paths.pppl(row)
        cmd = ["python", "-m", "train_scripts.pseudo_perplexity", "--lm-data", p.lm_dir(row), "--checkpoint",
               p.pretrained(row), "--input", self.paths.ud / "ud_test.de", "--word-marks", self.paths.marks(),
               "--output", out]
        return self.json_stage(f"pppl/{row}/ud", cmd, out, (f"lm/{row}/pretrain",))

    def verb_probe(self, row: str) -> dict:
        p, out = self.plan, self.paths.verb_probe(row)
        cmd = ["python", "-m", "train_scripts.verb_probe", "--checkpoint", p.pretrained(row), "--lm-data",
               p.lm_dir(row), "--train-conllu", self.a.ud_files["dev"], "--test-conllu", self.a.ud_files["test"],
               "--random-seeds", self.a.probe_seeds, "--output", out]
        return self.json_stage(f"verbs/{row}", cmd, out, (f"lm/{row}/pretrain",))

    def schedule_scores(self, runs: list, pretrained: dict, prepared: dict) -> dict:
        """Per row (its one pretraining run): pseudo-perplexity on UD test and the verb probes."""
        sched, rows = self.scheduler, self.s.rows
        return {"pppl": {row: sched.add(lambda r=row: self.word_pppl(r), [pretrained[(row, 1)]]) for row in rows},
                "verb_probe": {row: sched.add(lambda r=row: self.verb_probe(r), [pretrained[(row, 1)]])
                               for row in rows}}

    def add_scores(self, results: dict, runs: list, prepared: dict, scores: dict) -> dict:
        """The official GermEval F1 of every run, the verb measures, the floor and the task's name."""
        gold = _gold_labels(self.paths)
        for entry, run in zip(results["finetune"], runs):
            entry["test_official"] = _official(run["save"] / "test_scores.json", gold)
        results["pppl"] = {row: f.result() for row, f in scores["pppl"].items()}
        results["verb_probe"] = {row: f.result() for row, f in scores["verb_probe"].items()}
        results["floor"] = [self.floor()]
        results["task"] = TASK
        return results


def _gold_labels(paths: Paths) -> list:
    from train_scripts.classification_data import read_csv

    return [label for _text, label in read_csv(str(paths.germeval / f"{TASK}_test.csv"))]


def _official(scores: Path, gold: list):
    """The official GermEval 2018 F1 (``evaluationScriptGermeval2018.pl``: the harmonic mean of the averaged
    precision and recall) of a run's test predictions, in points; None when it has none."""
    from train_scripts.prepare_german import germeval_scores

    if not scores.is_file():
        return None
    pred = json.loads(scores.read_text())["predictions"]
    return {k: 100 * v for k, v in germeval_scores(gold[:len(pred)], pred).items()
            if k in ("macro_f1", "accuracy", "mean_f1")}
