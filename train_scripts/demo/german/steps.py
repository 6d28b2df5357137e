"""The German part's steps on the demo's scheduler: the German data, then the language-model pipeline's steps for
each row (binarize, pretrain once per pretraining seed, GermEval fine-tuning when it runs), then the measures.

:class:`GermanRun` is the shared :class:`~train_scripts.demo.lm.pipeline.Pipeline` with the German data as its data
step and steps of its own, each a command that writes one JSON:

* per row and pretraining run: CLAMS subject-verb agreement (``train_scripts/agreement.py --form pretraining``;
  the random encoders, which do not depend on pretraining, on seed 1 only), whole-word pseudo-perplexity on UD
  German GSD test (all words and the gold VERB/AUX words, ``train_scripts/pseudo_perplexity.py --whole-words
  --word-marks``) and the verb probes of the frozen encoder (``train_scripts/verb_probe.py``; random encoders on
  seed 1 only);
* once over all rows (a segmentation is deterministic: no seeds): HYP2 against gold morphology
  (``train_scripts/gold_segmentation.py``: consistency on UD test's verbs, boundary F1 on MorphyNet);
* with ``--de-init``: before pretraining, each row's copy of the given checkpoint with the row's dictionary
  (``train_scripts/extend_checkpoint.py``), which its pretraining runs restore.
"""
from __future__ import annotations

import json
from pathlib import Path

from train_scripts.demo.german.plan import TASK, Paths, pipeline_settings, plan_of, seeded
from train_scripts.demo.lm.pipeline import Pipeline

#: the measures' commands (``python -m MODULE``)
AGREEMENT, PPPL, GOLD = "train_scripts.agreement", "train_scripts.pseudo_perplexity", "train_scripts.gold_segmentation"


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


def agreement_command(a, plan, paths: Paths, row: str, seed: int = 1) -> list:
    """CLAMS agreement of a row's pretraining run ``seed``: ``a.probe_seeds`` random encoders on seed 1 (they do
    not depend on pretraining), at most ``a.agreement_pairs`` pairs per construction (0: all)."""
    cmd = ["python", "-m", AGREEMENT, "--lm-data", plan.lm_dir(row), "--checkpoint", plan.pretrained(row, seed),
           "--pairs", a.agreement, "--form", "pretraining", "--random-seeds", a.probe_seeds if seed == 1 else 0,
           "--output", paths.agreement(row, seed)]
    return cmd + (["--max-pairs", a.agreement_pairs] if a.agreement_pairs else [])


def gold_command(a, plan, paths: Paths) -> list:
    """The gold segmentation measures over every row's ``binarize --lm`` folder, in the rows' order (so its
    comparisons are ``wordmap - unigram``)."""
    cmd = ["python", "-m", GOLD]
    for row in plan.s.rows:
        cmd += ["--lm-data", plan.lm_dir(row)]
    return cmd + ["--ud-conllu", a.ud_files["test"], "--morphynet", a.morphynet, "--output", paths.gold()]


class GermanRun(Pipeline):
    """The pipeline on the part's settings ``a`` (``part.GermanPart.settings``), with the German data and the verb
    measures."""

    def __init__(self, a, runner, stages, scheduler):
        super().__init__(pipeline_settings(a), runner, stages, scheduler)
        self.plan = plan_of(a)
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

    def word_pppl(self, row: str, seed: int = 1) -> dict:
        """Whole-word pseudo-perplexity of the row's pretraining run ``seed`` on UD test, all words and verbs."""
        p, out = self.plan, self.paths.pppl(row, seed)
        cmd = ["python", "-m", PPPL, "--lm-data", p.lm_dir(row), "--checkpoint", p.pretrained(row, seed),
               "--input", self.paths.ud / "ud_test.de", "--whole-words", "--word-marks", self.paths.marks(),
               "--output", out]
        return self.json_stage(seeded(f"pppl/{row}/ud", seed), cmd, out, (p.pretrain_stage(row, seed),))

    def verb_probe(self, row: str, seed: int = 1) -> dict:
        """The verb probes of the row's pretraining run ``seed`` (its random encoders on seed 1 only)."""
        p, out = self.plan, self.paths.verb_probe(row, seed)
        cmd = ["python", "-m", "train_scripts.verb_probe", "--checkpoint", p.pretrained(row, seed), "--lm-data",
               p.lm_dir(row), "--train-conllu", self.a.ud_files["dev"], "--test-conllu", self.a.ud_files["test"],
               "--random-seeds", self.a.probe_seeds if seed == 1 else 0, "--output", out]
        return self.json_stage(seeded(f"verbs/{row}", seed), cmd, out, (p.pretrain_stage(row, seed),))

    def agreement(self, row: str, seed: int = 1) -> dict:
        """CLAMS agreement of the row's pretraining run ``seed`` (the random-weight control on seed 1 only)."""
        return self.json_stage(seeded(f"agreement/{row}", seed),
                               agreement_command(self.a, self.plan, self.paths, row, seed),
                               self.paths.agreement(row, seed), (self.plan.pretrain_stage(row, seed),))

    def gold(self) -> dict:
        """HYP2 against gold morphology over every row's segmentation (after their binarisation: no model)."""
        return self.json_stage("gold", gold_command(self.a, self.plan, self.paths), self.paths.gold(),
                               tuple(f"lm/{row}/binarize" for row in self.s.rows))

    def binarize_row(self, row: str) -> dict:
        """The pipeline's binarisation, and with ``--de-init`` the row's extended copy of the checkpoint, its
        data binarised again with the extended dictionary (``extend_checkpoint.py``)."""
        result = super().binarize_row(row)
        if not getattr(self.a, "init", None):
            return result
        from train_scripts.demo.german.init import extend_stage

        return {**result, "init": extend_stage(self, row)}

    def schedule_scores(self, runs: list, pretrained: dict, prepared: dict) -> dict:
        """Per row and pretraining run: agreement, whole-word pseudo-perplexity on UD test and the verb probes;
        once: the gold segmentation measures."""
        sched, rows, seeds = self.scheduler, self.s.rows, self.plan.pretrain_seeds()
        per_run = {name: {(row, k): sched.add(lambda f=fn, r=row, k=k: f(r, k), [pretrained[(row, k)]])
                          for row in rows for k in seeds}
                   for name, fn in (("agreement", self.agreement), ("pppl", self.word_pppl),
                                    ("verb_probe", self.verb_probe))}
        return {**per_run, "gold": sched.add(self.gold, [pretrained[(row, 1)] for row in rows])}

    def add_scores(self, results: dict, runs: list, prepared: dict, scores: dict) -> dict:
        """The measures by row (seed 1, as with one pretraining run) and by row and seed (``*_seeds``), the gold
        segmentation record, and with GermEval the official F1 of every run and the floor."""
        for name in ("agreement", "pppl", "verb_probe"):
            done = {key: f.result() for key, f in scores[name].items()}
            results[name] = {row: rec for (row, k), rec in done.items() if k == 1}
            results[name + "_seeds"] = {row: [done[(r, k)] for (r, k) in sorted(done) if r == row]
                                        for row in self.s.rows}
        results["pppl_bootstrap"] = pppl_bootstrap(results["pppl_seeds"], self.s.rows, self.paths.marks())
        for recs in results["pppl_seeds"].values():   # the per-word scores stay in the stages' JSONs
            for rec in recs:
                rec.pop("word_scores", None)
        results["gold"] = {**scores["gold"].result(), "row_order": list(self.s.rows)}
        results["dictionaries"] = dictionaries(self.plan, self.s.rows, self.plan.pretrain_seeds())
        if self.a.germeval_finetune:
            gold = _gold_labels(self.paths)
            for entry, run in zip(results["finetune"], runs):
                entry["test_official"] = _official(run["save"] / "test_scores.json", gold)
            results["floor"] = [self.floor()]
        results["task"] = TASK
        return results


def pppl_bootstrap(by_seed: dict, rows, marks: Path) -> dict:
    """Each row's whole-word bits per word minus the baseline's, per pretraining seed, all words and the marked
    verbs, with the paired bootstrap interval over sentences (``preprocess.evaluate.paired.paired_bootstrap_bits``)."""
    from preprocess.evaluate.paired import paired_bootstrap_bits as fn
    from preprocess.evaluate.paired import shared_words
    from train_scripts.demo.german.plan import BASELINE

    if BASELINE not in by_seed:
        return {}
    verb_marks = [[int(x) for x in line.split()] for line in marks.read_text(encoding="utf-8").splitlines()] \
        if marks.is_file() else None
    out = {}
    for row in rows:
        if row == BASELINE:
            continue
        out[row] = []
        for k, (base, rec) in enumerate(zip(by_seed[BASELINE], by_seed.get(row) or []), 1):
            a, b = base.get("word_scores"), rec.get("word_scores")
            if a is None or b is None:
                continue
            a, b = shared_words(a, b)   # the words both rows scored (a long line is cut at the model's length)
            out[row].append({"seed": k, "all": fn(a, b),
                             "verbs": fn(a, b, marks=verb_marks) if verb_marks is not None else None})
    return out


def dictionaries(plan, rows, seeds) -> dict:
    """Each row's fairseq dictionary size (entries of its ``dict.txt``, fairseq's 4 specials not counted) and its
    pretrained model's parameter count (read from seed 1's checkpoint; None where it cannot be read)."""
    out = {}
    for row in rows:
        d = plan.lm_dir(row) / "data-bin" / "dict.txt"
        entries = sum(1 for line in d.read_text(encoding="utf-8").splitlines() if line.strip()) if d.is_file() \
            else None
        out[row] = {"entries": entries, "parameters": parameter_count(plan.pretrained(row, seeds[0]))}
    return out


def parameter_count(checkpoint: Path):
    """The parameters of a fairseq checkpoint's model (its ``model`` state dict's tensors; the tied output
    projection counted once); None without a readable checkpoint."""
    if not checkpoint.is_file():
        return None
    try:
        import torch

        state = torch.load(str(checkpoint), map_location="cpu", weights_only=False)["model"]
    except Exception:   # an unreadable checkpoint: the report shows a dash
        return None
    seen, total = set(), 0
    for tensor in state.values():
        if hasattr(tensor, "numel") and tensor.data_ptr() not in seen:
            seen.add(tensor.data_ptr())
            total += tensor.numel()
    return total


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
