"""GermEval 2018 (offensive language, coarse OFFENSE/OTHER): the strict reader of its files, the fine-tuning CSVs
(``prepare_german germeval``), the official scores (``score``) and the character n-gram floor (``floor``)."""
from __future__ import annotations

import csv
import io
import json
import os
import random
from dataclasses import dataclass

from preprocess.common import UserError
from preprocess.files.inputs import UTF8_HINT, read_lines, require_file, without_bom
from train_scripts.german_data.inputs import GERMEVAL_FILES, SEED, Inputs, check_outputs, write_outputs

GERMEVAL_COARSE = ("OFFENSE", "OTHER")
#: the fine labels of each coarse label
GERMEVAL_FINE = {"OFFENSE": ("ABUSE", "INSULT", "PROFANITY"), "OTHER": ("OTHER",)}
#: GermEval's line-break marker inside a tweet
LBR = "|LBR|"
#: the default share of the training tweets held out as dev
DEV_FRACTION = 0.1
#: the floor's dev as the measured figure (data README) had it: the last 20% of the training tweets
FLOOR_DEV_FRACTION = 0.2


@dataclass
class Tweet:
    text: str
    coarse: str
    fine: str
    line: int


class Tweets(list):
    """:func:`read_germeval`'s tweets, with the file's ``path`` and its skipped ``blank_lines``."""

    def __init__(self, path: str):
        super().__init__()
        self.path, self.blank_lines = path, 0


def read_germeval(path: str) -> Tweets:
    """The tweets of a GermEval 2018 file (``text<TAB>coarse<TAB>fine``), text exactly as written (a byte-order mark
    at the start of the file is no text: dropped).  Invalid UTF-8,
    a line without exactly three columns, an empty text, a coarse label other than OFFENSE/OTHER or a fine label
    that does not belong to it is one line naming the file and line; blank lines are skipped (counted)."""
    require_file(path, "GermEval file")
    tweets = Tweets(path)
    for number, line in enumerate(without_bom(read_lines(path, hint=UTF8_HINT)), 1):
        if not line.strip():
            tweets.blank_lines += 1
            continue
        cols = line.split("\t")
        if len(cols) != 3:
            what = "a missing label column" if len(cols) < 3 else "a tab in the text?"
            raise UserError(f"{path}:{number}: expected 3 tab-separated columns (text, coarse, fine), "
                            f"got {len(cols)} ({what})")
        text, coarse, fine = cols[0], cols[1].strip(), cols[2].strip()
        if not text.strip():
            raise UserError(f"{path}:{number}: empty tweet text")
        if coarse not in GERMEVAL_FINE:
            raise UserError(f"{path}:{number}: unknown coarse label {coarse!r} (expected OFFENSE or OTHER)")
        if fine not in GERMEVAL_FINE[coarse]:
            raise UserError(f"{path}:{number}: fine label {fine!r} does not go with coarse {coarse} "
                            f"(expected {' or '.join(GERMEVAL_FINE[coarse])})")
        tweets.append(Tweet(text, coarse, fine, number))
    if not tweets:
        raise UserError(f"{path}: no tweets")
    return tweets


def split_dev(tweets: list, fraction: float = DEV_FRACTION, seed: int = SEED) -> tuple:
    """``(train, dev)``: per coarse label, ``round(fraction * n)`` of its tweets drawn with ``random.Random(seed)``
    (labels in sorted order, one generator) are dev; both keep the input order."""
    if not 0.0 < fraction < 1.0:
        raise UserError(f"--dev-fraction must be between 0 and 1, not {fraction}")
    rng = random.Random(seed)
    dev = set()
    for label in sorted({t.coarse for t in tweets}):
        idx = [i for i, t in enumerate(tweets) if t.coarse == label]
        dev.update(rng.sample(idx, round(fraction * len(idx))))
    return [t for i, t in enumerate(tweets) if i not in dev], [t for i, t in enumerate(tweets) if i in dev]


def csv_text(tweets: list) -> str:
    """The CSV ``classification_data.read_csv`` reads: ``text,label,fine``, the coarse label as ``label``, one row
    per tweet, its text exactly as written.  Rows end in ``\n``; a text with a carriage return in it is quoted
    (with every field of its row: ``csv``'s minimal quoting quotes only the characters of the line terminator),
    so that any CSV reader sees one row per tweet."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    quoted = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(["text", "label", "fine"])
    for t in tweets:
        (quoted if "\r" in t.text else writer).writerow([t.text, t.coarse, t.fine])
    return buf.getvalue()


def label_counts(tweets: list) -> dict:
    return {label: sum(t.coarse == label for t in tweets) for label in GERMEVAL_COARSE}


def prepare_germeval(out: str, inputs: Inputs = None, dev_fraction: float = DEV_FRACTION, seed: int = SEED) -> dict:
    """Write ``OUT/germeval_{train,dev,test}.csv`` and ``OUT/germeval.json`` (the module doc's ``germeval``); the
    CSV prefix for ``classification_data``/``finetune_classification.sh --csv-prefix`` is ``OUT/germeval``.
    Returns the record: ``csv_prefix, dev_fraction, seed, rows {split: n}, labels {split: {OFFENSE, OTHER}},
    blank_lines {train, test}, inputs``."""
    inputs = inputs or Inputs.from_options()
    files = {split: inputs.germeval_file(split) for split in GERMEVAL_FILES}
    outputs = [os.path.join(out, f"germeval_{s}.csv") for s in ("train", "dev", "test")] + \
        [os.path.join(out, "germeval.json")]
    check_outputs(outputs, list(files.values()))
    training, test = read_germeval(files["train"]), read_germeval(files["test"])
    train, dev = split_dev(training, dev_fraction, seed)
    splits = {"train": train, "dev": dev, "test": test}
    record = {"csv_prefix": os.path.join(out, "germeval"), "dev_fraction": dev_fraction, "seed": seed,
              "rows": {s: len(rows) for s, rows in splits.items()},
              "labels": {s: label_counts(rows) for s, rows in splits.items()},
              "blank_lines": {"train": training.blank_lines, "test": test.blank_lines},
              "inputs": files}
    write_outputs(outputs, [csv_text(rows) for rows in splits.values()] + [record])
    return record


def germeval_scores(gold: list, pred: list) -> dict:
    """Accuracy and F1 as ``evaluationScriptGermeval2018.pl`` computes them for the coarse task, as fractions:
    per label (OFFENSE, OTHER) precision, recall and F1; ``macro_f1``, the official figure, is the harmonic mean of
    the *averaged* precision and the *averaged* recall (the script's ``AVERAGE`` line), not the mean of the two
    F1s, which is given as ``mean_f1`` (scikit-learn's ``f1_score(average="macro")``)."""
    if len(gold) != len(pred):
        raise UserError(f"{len(pred)} predictions for {len(gold)} gold labels")
    if not gold:
        raise UserError("no labels to score")
    per = {}
    for label in GERMEVAL_COARSE:
        tp = sum(g == label and p == label for g, p in zip(gold, pred))
        fp = sum(g != label and p == label for g, p in zip(gold, pred))
        fn = sum(g == label and p != label for g, p in zip(gold, pred))
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        per[label] = {"precision": prec, "recall": rec, "f1": 2 * prec * rec / (prec + rec) if prec + rec else 0.0}
    avg_p = sum(v["precision"] for v in per.values()) / len(per)
    avg_r = sum(v["recall"] for v in per.values()) / len(per)
    return {"accuracy": sum(g == p for g, p in zip(gold, pred)) / len(gold),
            "macro_f1": 2 * avg_p * avg_r / (avg_p + avg_r) if avg_p + avg_r else 0.0,
            "macro_precision": avg_p, "macro_recall": avg_r,
            "mean_f1": sum(v["f1"] for v in per.values()) / len(per), "per_label": per, "examples": len(gold)}


def germeval_macro_f1(gold: list, pred: list) -> float:
    """The official GermEval 2018 F1 (:func:`germeval_scores`' ``macro_f1``)."""
    return germeval_scores(list(gold), list(pred))["macro_f1"]


def floor(inputs: Inputs = None, csv_prefix: str = None) -> dict:
    """The character n-gram floor on GermEval coarse (module doc), as :func:`train_scripts.ngram_floor.
    char_ngram_floor` returns it, with the official F1 as ``germeval_f1`` in every score (alpha chosen by it) and
    ``dev_split`` saying which dev was used."""
    from train_scripts import ngram_floor

    extra = {"germeval_f1": germeval_macro_f1}
    if csv_prefix:
        result = ngram_floor.floor_for_csv(csv_prefix, 0, 0, "germeval_f1", extra_metrics=extra)
        result["dev_split"] = f"{csv_prefix}_dev.csv"
        return result
    inputs = inputs or Inputs.from_options()
    training = [(t.text, t.coarse) for t in read_germeval(inputs.germeval_file("train"))]
    test = [(t.text, t.coarse) for t in read_germeval(inputs.germeval_file("test"))]
    cut = len(training) - round(FLOOR_DEV_FRACTION * len(training))
    result = ngram_floor.char_ngram_floor(training[:cut], training[cut:], {"test": test}, "germeval_f1", extra)
    result["dev_split"] = f"the last {len(training) - cut} of the {len(training)} training tweets"
    return result


def read_predictions(path: str) -> list:
    """Predicted labels: a ``classification_data score`` JSON (its ``predictions``) or one label per line (the
    second column of a GermEval-format line, when it has tabs)."""
    require_file(path, "predictions file")
    lines = list(read_lines(path, hint=UTF8_HINT))
    if lines and lines[0].lstrip().startswith("{"):
        try:
            data = json.loads("\n".join(lines))
        except ValueError as exc:
            raise UserError(f"{path}: not valid JSON ({exc})") from None
        if not isinstance(data, dict) or not isinstance(data.get("predictions"), list):
            raise UserError(f"{path}: a JSON file without a 'predictions' list (classification_data score --output)")
        return [str(p) for p in data["predictions"]]
    return [(line.split("\t")[1] if "\t" in line else line).strip() for line in lines if line.strip()]


def read_gold(path: str) -> list:
    """Gold coarse labels: a GermEval TSV (``read_germeval``) or a CSV with a ``label`` column."""
    if path.endswith(".csv"):
        from train_scripts.classification_data import read_csv

        return [label for _, label in read_csv(path)]
    return [t.coarse for t in read_germeval(path)]
