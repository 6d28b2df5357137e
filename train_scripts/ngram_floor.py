"""The non-neural floor of the fine-tuning tables: a character n-gram Naive Bayes classifier (scikit-learn).

A multinomial Naive Bayes over the character 3- to 6-grams of each text (``CountVectorizer(analyzer="char_wb")``),
trained on exactly the training rows a fine-tuning run sees, its smoothing chosen on the same dev rows by the same
metric the fine-tuning selects by, and scored on the same test rows.  A neural row below it has not learned what a
bag of character n-grams learns from the same labels: the report marks it under-trained and draws no conclusion
about tokenisers from it.  The matched floor (:func:`piece_floor`, :func:`piece_floor_for_data`) is the same Naive
Bayes over a segmentation's own pieces: what those pieces alone tell a bag-of-pieces classifier (the FLOTA table's
per-segmentation floor, clean and with whitespace noise).

    python -m train_scripts.ngram_floor --csv-prefix ../shared/data/superbizarre/arxiv --train-rows 8000 --max-rows 8000
"""
from __future__ import annotations

import argparse
import json
import sys

#: the character n-gram orders of the floor
NGRAMS = (3, 6)
#: Naive Bayes smoothing values tried on dev
ALPHAS = (0.1, 0.3, 1.0)


def char_ngram_floor(train: list, dev: list, tests: dict, metric: str = "accuracy", extra_metrics: dict = None,
                     vectorizer=None) -> dict:
    """``train``, ``dev``: lists of ``(text, label)``; ``tests``: ``{name: [(text, label), ...]}``.  Returns
    ``{"alpha", "metric", "dev", name: {"accuracy", "macro_f1"} for each test}`` (fractions, 0-1).
    ``extra_metrics``: ``{name: function(gold labels, predicted labels) -> float}`` scored beside those two (a
    task's official metric, e.g. GermEval 2018's F1, ``train_scripts.prepare_german.germeval_macro_f1``);
    ``metric`` may name one of them.  ``vectorizer``: the features, a scikit-learn vectorizer (default: the
    character 3- to 6-grams; :func:`piece_floor` passes the pieces)."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.naive_bayes import MultinomialNB

    def scores(gold, pred):
        return {"accuracy": float(accuracy_score(gold, pred)),
                "macro_f1": float(f1_score(gold, pred, average="macro", zero_division=0)),
                **{name: float(fn(gold, list(pred))) for name, fn in (extra_metrics or {}).items()}}

    vec = vectorizer or CountVectorizer(analyzer="char_wb", ngram_range=NGRAMS, lowercase=True)
    x_train = vec.fit_transform([t for t, _ in train])
    y_train = [label for _, label in train]
    x_dev = vec.transform([t for t, _ in dev])
    y_dev = [label for _, label in dev]
    best = None
    for alpha in ALPHAS:
        model = MultinomialNB(alpha=alpha).fit(x_train, y_train)
        s = scores(y_dev, model.predict(x_dev))
        if best is None or s[metric] > best[1][metric]:
            best = (alpha, s, model)
    alpha, dev_scores, model = best
    out = {"alpha": alpha, "metric": metric, "train_rows": len(train), "dev": dev_scores}
    for name, rows in tests.items():
        out[name] = scores([label for _, label in rows], model.predict(vec.transform([t for t, _ in rows])))
    return out


def floor_for_csv(csv_prefix: str, train_rows: int, max_rows: int = 0, metric: str = "accuracy",
                  noisy_test: list = None, extra_metrics: dict = None) -> dict:
    """The floor for ``PREFIX_{train,dev,test}.csv`` as ``classification_data prepare`` reads them: the first
    ``train_rows`` training rows (0: ``max_rows``, then all), the first ``max_rows`` dev and test rows (0: all);
    ``noisy_test``: the texts of a noisy copy of the test rows (same order), scored as ``test_noisy``;
    ``extra_metrics``: as :func:`char_ngram_floor`."""
    from train_scripts.classification_data import read_csv

    train = read_csv(f"{csv_prefix}_train.csv", train_rows or max_rows)
    dev = read_csv(f"{csv_prefix}_dev.csv", max_rows)
    test = read_csv(f"{csv_prefix}_test.csv", max_rows)
    tests = {"test": test}
    if noisy_test is not None:
        tests["test_noisy"] = [(text, label) for text, (_, label) in zip(noisy_test, test)]
    return char_ngram_floor(train, dev, tests, metric, extra_metrics)


def piece_floor(train: list, dev: list, tests: dict, metric: str = "accuracy") -> dict:
    """The matched floor of a segmentation: the same Naive Bayes over the pieces a model sees (each text a line of
    space-separated pieces, as ``classification_data prepare`` writes ``OUT/tok/*.input0``), every piece a feature
    as it is (no lower-casing, no n-grams); arguments and result as :func:`char_ngram_floor`'s, plus
    ``"features": "pieces"``."""
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer(analyzer=str.split, lowercase=False)
    return {**char_ngram_floor(train, dev, tests, metric, vectorizer=vec), "features": "pieces"}


def piece_floor_for_data(folder: str, metric: str = "accuracy") -> dict:
    """:func:`piece_floor` of a ``classification_data prepare`` folder: its encoded ``tok/{train,valid}.input0``
    with ``raw/*.label``, scored on ``tok/test.input0`` (``test``) and, where the folder has it, on the noisy copy
    ``tok/test1.input0`` (``test_noisy``): the pieces of exactly the rows and the segmentation a run fine-tunes on
    (with ``--noise-splits valid``, the noisy dev it selects on)."""
    import os

    def rows(subset):
        with open(os.path.join(folder, "tok", f"{subset}.input0"), encoding="utf-8") as text, \
                open(os.path.join(folder, "raw", f"{subset}.label"), encoding="utf-8") as labels:
            return [(t.rstrip("\n"), label.strip()) for t, label in zip(text, labels)]

    tests = {"test": rows("test")}
    if os.path.isfile(os.path.join(folder, "tok", "test1.input0")):
        tests["test_noisy"] = rows("test1")
    return piece_floor(rows("train"), rows("valid"), tests, metric)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m train_scripts.ngram_floor", description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv-prefix", required=True, help="reads PREFIX_train.csv, PREFIX_dev.csv, PREFIX_test.csv")
    ap.add_argument("--train-rows", type=int, default=0, help="training rows (0: --max-rows)")
    ap.add_argument("--max-rows", type=int, default=0, help="dev and test rows (0: all)")
    ap.add_argument("--metric", choices=["accuracy", "macro_f1"], default="accuracy", help="selects alpha on dev")
    a = ap.parse_args(argv)
    print(json.dumps(floor_for_csv(a.csv_prefix, a.train_rows, a.max_rows, a.metric)))
    return 0


if __name__ == "__main__":
    from preprocess.cli import run_main

    sys.exit(run_main(main))
