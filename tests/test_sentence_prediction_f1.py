"""``--criterion sentence_prediction_f1`` (fairseq_plugins/sentence_prediction_f1.py): fairseq's
``sentence_prediction`` with per-class counts in the logging outputs and ``macro_f1`` derived from their sums.

Made-up logging outputs reduced batch by batch (as fairseq's validation loop does) and summed across two gloo
workers (fairseq's own ``_fast_stat_sync_sum``) give scikit-learn's ``f1_score(average="macro") * 100`` over all
the predictions; the loss and the accuracy are ``sentence_prediction``'s; and a tiny RoBERTa trained for two
epochs by fairseq-train keeps the epoch with the best ``valid_macro_f1`` of its json log, a value scikit-learn
reproduces from that checkpoint's dev predictions."""
from __future__ import annotations

import json
import random
from types import SimpleNamespace

import pytest
import torch
from fairseq.criterions.sentence_prediction import SentencePredictionConfig, SentencePredictionCriterion
from fairseq.logging import metrics
from sklearn.metrics import f1_score

import fairseq_plugins  # noqa: F401  (registers the criterion)
from fairseq_plugins.sentence_prediction_f1 import SentencePredictionF1Criterion

NUM_CLASSES = 5
#: (gold, predicted) per batch: class 3 is never predicted, class 2 only predicted, class 4 occurs in neither
#: (so it is left out of the macro average, as scikit-learn leaves it out)
BATCHES = [([0, 1, 3, 3, 0], [0, 2, 0, 1, 0]),
           ([1, 1, 0], [1, 0, 0]),
           ([3, 0, 1, 1], [1, 2, 1, 1])]


def _logging_output(gold, pred):
    """What the criterion logs for a batch (counted here independently of the plugin)."""
    out = {"loss": 0.7 * len(gold), "ntokens": 10 * len(gold), "nsentences": len(gold), "sample_size": len(gold),
           "ncorrect": sum(g == p for g, p in zip(gold, pred))}
    for c in range(NUM_CLASSES):
        out[f"tp_{c}"] = sum(g == p == c for g, p in zip(gold, pred))
        out[f"fp_{c}"] = sum(p == c != g for g, p in zip(gold, pred))
        out[f"fn_{c}"] = sum(g == c != p for g, p in zip(gold, pred))
    return out


def _expected(batches=BATCHES):
    gold = [g for b in batches for g in b[0]]
    pred = [p for b in batches for p in b[1]]
    return round(100 * f1_score(gold, pred, average="macro", zero_division=0), 2), gold, pred


def _reduce(groups):
    """The smoothed values after ``reduce_metrics`` once per group of logging outputs, in a fresh aggregator."""
    with metrics.aggregate(new_root=True) as agg:
        for outputs in groups:
            SentencePredictionF1Criterion.reduce_metrics(outputs)
        return agg.get_smoothed_values()


def test_macro_f1_is_sklearns_over_all_batches():
    expected, gold, pred = _expected()
    accuracy = 100 * sum(g == p for g, p in zip(gold, pred)) / len(gold)
    assert 0 < expected < accuracy   # not the accuracy
    # one batch at a time (the validation loop), and all at once (update_freq: one call with several outputs)
    per_batch = _reduce([[_logging_output(*b)] for b in BATCHES])
    at_once = _reduce([[_logging_output(*b) for b in BATCHES]])
    for values in (per_batch, at_once):
        assert values["macro_f1"] == pytest.approx(expected, abs=1e-9)
        assert values["accuracy"] == pytest.approx(round(accuracy, 1))
        assert not any(k.startswith(("_", "tp_", "fp_", "fn_")) for k in values)   # the counts are not printed
    # a single batch is not what the epoch's value is
    assert _reduce([[_logging_output(*BATCHES[0])]])["macro_f1"] == pytest.approx(_expected(BATCHES[:1])[0])
    # summed logging outputs (fairseq's all-reduce adds them key by key, as double tensors)
    summed = {k: torch.tensor(float(sum(_logging_output(*b)[k] for b in BATCHES)), dtype=torch.double)
              for k in _logging_output(*BATCHES[0])}
    assert _reduce([[summed]])["macro_f1"] == pytest.approx(expected, abs=1e-9)


def test_without_counts_it_is_sentence_prediction():
    out = {"loss": 2.0, "ntokens": 8, "nsentences": 4, "sample_size": 4, "ncorrect": 3}
    values = _reduce([[out]])
    assert "macro_f1" not in values and values["accuracy"] == 75.0


class _Head(torch.nn.Module):
    def __init__(self, logits):
        super().__init__()
        self.logits = logits

    def forward(self, features):
        return self.logits * features.sum()


class _Model(torch.nn.Module):
    """What the criterion needs of a RoBERTa: a classification head called in forward, and get_targets."""

    def __init__(self, logits):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(()))
        self.classification_heads = torch.nn.ModuleDict({"sentence_classification_head": _Head(logits)})

    def forward(self, src_tokens, features_only=False, classification_head_name=None):
        return self.classification_heads[classification_head_name](self.scale.expand(1)), None

    def get_targets(self, sample, net_output):
        return sample["target"]


def test_forward_keeps_loss_and_accuracy_and_counts_per_class():
    torch.manual_seed(0)
    gold, pred = BATCHES[0]
    logits = torch.randn(len(gold), NUM_CLASSES)
    logits[torch.arange(len(gold)), torch.tensor(pred)] += 10   # argmax = pred
    sample = {"net_input": {"src_tokens": torch.zeros(len(gold), 3, dtype=torch.long)},
              "target": torch.tensor(gold), "ntokens": 15}
    task = SimpleNamespace(label_dictionary=None)
    ours = SentencePredictionF1Criterion(SentencePredictionConfig(), task)
    theirs = SentencePredictionCriterion(SentencePredictionConfig(), task)
    model = _Model(logits)
    loss, size, log = ours(model, sample)
    ref_loss, ref_size, ref_log = theirs(_Model(logits), sample)
    assert torch.equal(loss, ref_loss) and size == ref_size and loss.requires_grad
    assert {k: v for k, v in log.items() if k in ref_log} == ref_log
    counts = {k: v for k, v in log.items() if k not in ref_log}
    assert counts == {k: v for k, v in _logging_output(gold, pred).items() if k[:3] in ("tp_", "fp_", "fn_")}
    assert all(type(v) is int for v in counts.values())   # plain numbers: fairseq's all-reduce sums them
    assert not model.classification_heads["sentence_classification_head"]._forward_hooks   # removed again


def _rank(rank, folder, batches):
    """One gloo worker: its batches' logging outputs summed by fairseq's Trainer._fast_stat_sync_sum (the
    all-reduce of --distributed-world-size > 1), then reduced."""
    import torch.distributed as dist
    from fairseq.trainer import Trainer

    dist.init_process_group("gloo", init_method=f"file://{folder / 'init'}", rank=rank, world_size=2)
    try:
        outputs = [_logging_output(*b) for b in batches]
        trainer = SimpleNamespace(device=torch.device("cpu"), data_parallel_process_group=None)
        synced, _ = Trainer._fast_stat_sync_sum(trainer, outputs)
        (folder / f"rank{rank}.json").write_text(json.dumps(_reduce([synced])["macro_f1"]))
    finally:
        dist.destroy_process_group()


def test_two_gloo_workers_sum_the_counts(tmp_path):
    import torch.multiprocessing as mp

    parts = [BATCHES[:1], BATCHES[1:]]   # rank 0 has one batch, rank 1 two
    procs = [mp.get_context("fork").Process(target=_rank, args=(r, tmp_path, parts[r])) for r in range(2)]
    try:
        for p in procs:
            p.start()
        for p in procs:
            p.join(120)
        assert [p.exitcode for p in procs] == [0, 0]
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
    for r in range(2):
        assert json.loads((tmp_path / f"rank{r}.json").read_text()) == pytest.approx(_expected()[0], abs=1e-9)


# --- end to end: fairseq-train on a tiny classification set --------------------------------------------------

def _write_split(folder, split, n, rng):
    """Sentences of made-up words whose label (3 classes, unbalanced) a bag of words can learn."""
    words = {0: ["apple", "pear", "plum"], 1: ["red", "blue", "green"], 2: ["run", "walk"]}
    texts, labels = [], []
    for _ in range(n):
        label = rng.choices([0, 1, 2], weights=[5, 3, 2])[0]
        sent = [rng.choice(words[label]) for _ in range(2)] + [rng.choice(sum(words.values(), [])) for _ in range(3)]
        rng.shuffle(sent)
        texts.append(" ".join(sent))
        labels.append(str(label))
    (folder / f"{split}.input0").write_text("\n".join(texts) + "\n")
    (folder / f"{split}.label").write_text("\n".join(labels) + "\n")


def _preprocess(argv):
    import logging

    from fairseq import options
    from fairseq_cli import preprocess

    log = logging.getLogger(preprocess.__name__)
    handlers = list(log.handlers)
    try:
        preprocess.main(options.get_preprocessing_parser().parse_args([str(a) for a in argv]))
    finally:
        for handler in set(log.handlers) - set(handlers):   # main adds a FileHandler per call
            log.removeHandler(handler)
            handler.close()


@pytest.mark.slow
def test_fairseq_train_keeps_the_best_macro_f1_epoch(run_cli, tmp_path):
    from fairseq import checkpoint_utils

    from train_scripts.train_log import validation_curve

    rng = random.Random(4)
    raw, data, save = tmp_path / "raw", tmp_path / "data-bin", tmp_path / "ckpt"
    raw.mkdir()
    _write_split(raw, "train", 192, rng)
    _write_split(raw, "valid", 30, rng)
    for field in ("input0", "label"):   # fairseq-preprocess, in this process (a fairseq start-up costs seconds)
        _preprocess(["--only-source", "--trainpref", raw / f"train.{field}", "--validpref", raw / f"valid.{field}",
                     "--destdir", data / field, "--workers", "1"])
    save.mkdir()
    run_cli(["fairseq-train", data, "--user-dir", "fairseq_plugins", "--task", "sentence_prediction",
             "--criterion", "sentence_prediction_f1", "--num-classes", "3", "--init-token", "0",
             "--separator-token", "2", "--arch", "roberta_base", "--encoder-layers", "1",
             "--encoder-embed-dim", "16", "--encoder-ffn-embed-dim", "32", "--encoder-attention-heads", "2",
             "--max-positions", "32", "--optimizer", "adam", "--lr", "0.002", "--batch-size", "8",
             "--required-batch-size-multiple", "1", "--max-epoch", "2", "--best-checkpoint-metric", "macro_f1",
             "--maximize-best-checkpoint-metric", "--no-epoch-checkpoints", "--save-dir", save, "--cpu",
             "--no-progress-bar", "--log-format", "json", "--log-file", save / "train.log", "--log-interval", "4",
             "--num-workers", "0", "--seed", "3"])
    log = validation_curve(str(save / "train.log"))   # what finetune_classification.sh's valid_log.jsonl holds
    assert [r["epoch"] for r in log] == [1, 2]
    scores = [r["valid_macro_f1"] for r in log]
    best = max(range(len(scores)), key=lambda i: (scores[i], i))   # a tie keeps the later epoch (fairseq's >=)
    state = torch.load(save / "checkpoint_best.pt", map_location="cpu", weights_only=False)
    assert state["optimizer_history"][-1]["num_updates"] == log[best]["update"]
    assert state["extra_state"]["val_loss"] == scores[best]
    assert log[-1]["valid_best_macro_f1"] == max(scores)
    # the logged value is scikit-learn's over the whole dev set (4 batches of 8), from that checkpoint
    models, _, task = checkpoint_utils.load_model_ensemble_and_task([str(save / "checkpoint_best.pt")])
    model = models[0].eval()
    task.load_dataset("valid")
    dataset, gold, pred = task.dataset("valid"), [], []
    with torch.no_grad():
        for i in range(len(dataset)):
            item = dataset[i]
            logits, _ = model(item["net_input.src_tokens"].unsqueeze(0), features_only=True,
                              classification_head_name="sentence_classification_head")
            gold.append(int(item["target"]))
            pred.append(int(logits.argmax(-1)))
    assert len(gold) == 30
    assert scores[best] == pytest.approx(100 * f1_score(gold, pred, average="macro", zero_division=0), abs=0.005)
