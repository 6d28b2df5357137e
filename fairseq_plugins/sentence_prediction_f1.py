"""``--criterion sentence_prediction_f1``: fairseq's ``sentence_prediction`` that also logs ``macro_f1``.

The FLOTA paper (Hofmann et al., 2022, appendix A.2) selects the fine-tuning epoch by dev F1, and fairseq's
``sentence_prediction`` logs only the accuracy.  This criterion computes the loss and the accuracy exactly as
``sentence_prediction`` does (it runs that criterion's ``forward``) and adds, for every class ``c`` of the
classification head, the batch's true-positive, false-positive and false-negative counts to the logging output
(``tp_c``, ``fp_c``, ``fn_c``: plain ints, the same keys in every batch, so fairseq's all-reduce of summable logging
outputs across workers sums them).  ``reduce_metrics`` sums them over the batches with ``log_scalar_sum`` (hidden
``_tp_c`` ... meters, so the sums run over the whole validation set) and derives::

    macro_f1 = 100 * mean over classes c with tp + fp + fn > 0 of 2 tp / (2 tp + fp + fn)

which is scikit-learn's ``f1_score(average="macro", zero_division=0)`` (the union of gold and predicted labels)
in points, rounded to 2 decimals (the value logged is the value compared).  To keep the best dev epoch by it::

    fairseq-train ... --user-dir fairseq_plugins --criterion sentence_prediction_f1 \\
        --best-checkpoint-metric macro_f1 --maximize-best-checkpoint-metric

(``--log-format json`` writes ``valid_macro_f1`` and ``valid_best_macro_f1``).  With ``--regression-target`` it
logs what ``sentence_prediction`` logs and no F1.
"""
from __future__ import annotations

import re

import torch
from fairseq import utils
from fairseq.criterions import register_criterion
from fairseq.criterions.sentence_prediction import SentencePredictionConfig, SentencePredictionCriterion
from fairseq.logging import metrics
from fairseq.logging.meters import safe_round

#: the per-class counts of a logging output: ``tp_0``, ``fp_0``, ``fn_0``, ``tp_1``, ...
COUNT_KEY = re.compile(r"^(tp|fp|fn)_(\d+)$")
KINDS = ("tp", "fp", "fn")


def class_counts(preds: torch.Tensor, targets: torch.Tensor, num_classes: int) -> dict:
    """``{"tp_c": n, "fp_c": n, "fn_c": n}`` for every class ``c < num_classes``, as Python ints."""
    preds, targets = preds.view(-1).long(), targets.view(-1).long()
    tp = torch.bincount(targets[preds == targets], minlength=num_classes)
    predicted = torch.bincount(preds, minlength=num_classes)
    gold = torch.bincount(targets, minlength=num_classes)
    counts = {}
    for c, (t, p, g) in enumerate(zip(tp.tolist(), predicted.tolist(), gold.tolist())):
        counts.update({f"tp_{c}": t, f"fp_{c}": p - t, f"fn_{c}": g - t})
    return counts


def macro_f1(counts: dict) -> float:
    """Macro F1 in points from ``{class: (tp, fp, fn)}``: the mean over the classes that occur as gold or predicted
    labels of ``2 tp / (2 tp + fp + fn)`` (0 for a class never predicted correctly); 0.0 when no class occurs."""
    scores = [2 * tp / (2 * tp + fp + fn) for tp, fp, fn in counts.values() if tp + fp + fn > 0]
    return 100.0 * sum(scores) / len(scores) if scores else 0.0


def _macro_f1_of_meters(meters) -> float:
    classes = {m.group(2) for m in map(COUNT_KEY.match, (k[1:] for k in meters.keys() if k.startswith("_")))
               if m}
    counts = {c: tuple(float(utils.item(meters[f"_{kind}_{c}"].sum)) for kind in KINDS) for c in classes}
    return safe_round(macro_f1(counts), 2)


@register_criterion("sentence_prediction_f1", dataclass=SentencePredictionConfig)
class SentencePredictionF1Criterion(SentencePredictionCriterion):
    """``sentence_prediction`` plus per-class counts in the logging outputs and ``macro_f1`` in the metrics."""

    def forward(self, model, sample, reduce=True):
        heads = getattr(model, "classification_heads", None)
        if self.regression_target or heads is None or self.classification_head_name not in heads:
            return super().forward(model, sample, reduce=reduce)   # (the parent's assertion reports a missing head)
        captured = []
        hook = heads[self.classification_head_name].register_forward_hook(
            lambda _module, _inputs, output: captured.append(output))
        try:
            loss, sample_size, logging_output = super().forward(model, sample, reduce=reduce)
        finally:
            hook.remove()
        logits = captured[-1].detach()
        targets = model.get_targets(sample, [logits]).view(-1)
        logging_output.update(class_counts(logits.argmax(dim=-1), targets, logits.size(-1)))
        return loss, sample_size, logging_output

    @staticmethod
    def reduce_metrics(logging_outputs) -> None:
        """``sentence_prediction``'s metrics, the per-class counts summed, and ``macro_f1`` derived from the sums."""
        SentencePredictionCriterion.reduce_metrics(logging_outputs)
        keys = sorted({k for log in logging_outputs for k in log if COUNT_KEY.match(k)})
        if not keys:
            return
        for key in keys:
            total = sum(utils.item(log.get(key, 0)) for log in logging_outputs)
            metrics.log_scalar_sum(f"_{key}", int(round(float(total))))
        metrics.log_derived("macro_f1", _macro_f1_of_meters)

    @staticmethod
    def logging_outputs_can_be_summed() -> bool:
        """The counts are plain numbers that sum across workers (as ``sentence_prediction``'s own outputs do)."""
        return True
