"""A frozen-encoder probe: what pretraining put into a RoBERTa encoder, read with a linear classifier.

The encoder (a ``pretrain_roberta.sh`` checkpoint, or the same architecture from random weights: the control) is
frozen; every example of a ``classification_data prepare`` folder is encoded as fine-tuning encodes it (``<s>``, the
pieces, ``</s>``) and represented by the mean of the last layer's states over its positions, concatenated with the
``<s>`` state.  A logistic regression (scikit-learn, features standardised, ``C`` chosen on dev) is trained on the
first N training examples for every N of ``--sizes`` and scored on the test split.  Nothing is fine-tuned, so the
probe is cheap and deterministic for a given encoder: the pretrained encoder gives one score per size; the random
control gives one per seed (``--random-seeds``), and the report tests the pretrained score as one draw against the
random encoders' spread (a prediction-interval t: ``train_scripts/demo/statistics.py``).

    python -m train_scripts.probe --checkpoint ckpt/checkpoint_last.pt --data work/cls --sizes 500,1000,8000 \\
        --random-seeds 5 --output probe.json
"""
from __future__ import annotations

import argparse
import os
import sys

from preprocess.common import UserError
from preprocess.files.outputs import write_record

#: logistic-regression inverse regularisation strengths tried on dev
CS = (0.01, 0.1, 1.0)


def load_encoder(checkpoint: str, data_bin: str, random_seed=None):
    """``(model, dictionary)``: the checkpoint's RoBERTa (eval mode), or with ``random_seed`` the same
    architecture and dictionary from random weights (fairseq's own initialisation under that torch seed)."""
    import torch
    from fairseq import checkpoint_utils, tasks

    import fairseq_plugins  # noqa: F401  (checkpoint loading on torch >= 2.6, the project's tasks)

    if not os.path.isfile(checkpoint):
        raise UserError(f"checkpoint not found: {checkpoint}")
    try:
        state = checkpoint_utils.load_checkpoint_to_cpu(checkpoint)
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 - a truncated or foreign file fails in many ways: one line
        raise UserError(f"cannot read checkpoint {checkpoint}: {str(exc).splitlines()[0] if str(exc) else exc!r}") \
            from None
    if not isinstance(state, dict) or "model" not in state or state.get("cfg") is None:
        raise UserError(f"{checkpoint} is not a fairseq RoBERTa checkpoint (no 'model' or 'cfg' entry)")
    cfg = state["cfg"]
    cfg.task.data = os.path.join(data_bin, "input0")
    task = tasks.setup_task(cfg.task)
    if random_seed is not None:
        torch.manual_seed(random_seed)
        model = task.build_model(cfg.model)
    else:
        model = task.build_model(cfg.model)
        model.load_state_dict(state["model"], strict=True)
    return model.eval(), task.source_dictionary


def features(model, dictionary, data_bin: str, subset: str, batch: int = 256):
    """One row per example of ``subset``: [mean of the last layer over the positions, the <s> state]."""
    import numpy as np
    import torch
    from fairseq.data import data_utils

    ds = data_utils.load_indexed_dataset(os.path.join(data_bin, "input0", subset), dictionary)
    if ds is None:
        raise UserError(f"no {subset} split in {data_bin}/input0")
    max_pos = model.encoder.sentence_encoder.max_positions()
    out = []
    with torch.no_grad():
        for i in range(0, len(ds), batch):
            items = [torch.cat([torch.tensor([dictionary.bos()]), ds[j]])[:max_pos] for j in
                     range(i, min(len(ds), i + batch))]
            tokens = data_utils.collate_tokens(items, dictionary.pad())
            states, _ = model(tokens, features_only=True)
            mask = tokens.ne(dictionary.pad()).unsqueeze(-1).to(states.dtype)
            mean = (states * mask).sum(1) / mask.sum(1)
            out.append(torch.cat([mean, states[:, 0]], dim=-1).numpy())
    return np.concatenate(out)


def labels(data_bin: str, subset: str) -> list:
    raw = os.path.join(os.path.dirname(os.path.abspath(data_bin)), "raw", f"{'valid' if subset == 'valid' else subset}.label")
    with open(raw, encoding="utf-8") as fh:
        return fh.read().split()


def fit_and_score(train_x, train_y, dev_x, dev_y, test_x, test_y, metric: str = "accuracy") -> dict:
    """Logistic regression on standardised features, C chosen on dev by ``metric``; test accuracy and macro F1."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def scores(gold, pred):
        return {"accuracy": float(accuracy_score(gold, pred)),
                "macro_f1": float(f1_score(gold, pred, average="macro", zero_division=0))}

    best = None
    for c in CS:
        clf = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000))
        clf.fit(train_x, train_y)
        dev = scores(dev_y, clf.predict(dev_x))
        if best is None or dev[metric] > best[1][metric]:
            best = (c, dev, clf)
    c, dev, clf = best
    return {"C": c, "dev": dev, "test": scores(test_y, clf.predict(test_x))}


def probe(checkpoint: str, data: str, sizes: list, random_seeds: int = 0, metric: str = "accuracy") -> dict:
    """The probe of the pretrained encoder and of ``random_seeds`` random encoders at every labelled size:
    ``{"pretrained": {size: scores}, "random": {seed: {size: scores}}}`` (sizes as strings, JSON keys)."""
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "0")) or torch.get_num_threads())
    data_bin = os.path.join(data, "data-bin") if os.path.isdir(os.path.join(data, "data-bin")) else data
    y = {s: labels(data_bin, s) for s in ("train", "valid", "test")}
    bad = [n for n in sizes if n == 1 or n < 0 or n > len(y["train"])]
    if bad:
        raise UserError(f"--sizes {bad[0]}: between 2 and the {len(y['train'])} training examples of {data} "
                        "(0: all)")

    def one(random_seed):
        model, dictionary = load_encoder(checkpoint, data_bin, random_seed)
        x = {s: features(model, dictionary, data_bin, s) for s in y}
        return {str(n): fit_and_score(x["train"][:n or None], y["train"][:n or None], x["valid"], y["valid"], x["test"], y["test"],
                                      metric) for n in sizes}

    return {"sizes": sizes, "metric": metric, "pretrained": one(None),
            "random": {str(seed): one(seed) for seed in range(1, random_seeds + 1)}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m train_scripts.probe", description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True, help="the pretrained RoBERTa (pretrain_roberta.sh)")
    ap.add_argument("--data", required=True, help="a classification_data prepare folder (its data-bin and raw)")
    ap.add_argument("--sizes", required=True, help="labelled training sizes, comma-separated (the first N examples)")
    ap.add_argument("--random-seeds", type=int, default=5, help="random-weight control encoders (seeds 1..N)")
    ap.add_argument("--metric", choices=["accuracy", "macro_f1"], default="accuracy", help="selects C on dev")
    ap.add_argument("--output", default=None, help="write the result here (JSON)")
    a = ap.parse_args(argv)
    try:
        sizes = [int(x) for x in a.sizes.split(",") if x]
    except ValueError:
        raise UserError(f"--sizes must be comma-separated numbers, not {a.sizes!r}") from None
    result = probe(a.checkpoint, a.data, sizes, a.random_seeds, a.metric)
    write_record(result, a.output, echo=not a.output)
    return 0


if __name__ == "__main__":
    from preprocess.cli import run_main

    sys.exit(run_main(main))
