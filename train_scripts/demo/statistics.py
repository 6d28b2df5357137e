"""The demo's statistics, shared by every part that fine-tunes with seeds: Welch's t-test, the pretrained-vs-control
comparison and its verdict, Holm's correction, a seed summary and a binomial sampling error (scipy).

The verdict of :func:`compare` reads the 95% interval of the difference, not only its point: **helped** when the
whole interval lies at or above +HELPED_POINTS (its lower end >= HELPED_POINTS, hence p < HELPED_P too), **hurt**
when it lies at or below -HELPED_POINTS, **no effect** when it lies inside +-HELPED_POINTS, else **undetermined**
(an interval that crosses +-HELPED_POINTS: the data do not say whether the effect is as large as that); helped and
hurt also need at least HELPED_SEEDS fine-tuning runs behind each fine-tuned side.

The rules that read these numbers in every part's report (the floor gate, the test families and their Holm
correction, collapsed runs, the verdict words) are the demo's one policy, ``train_scripts/demo/policy.py``.
"""
from __future__ import annotations

import math
from typing import Optional

#: "pretraining helped": the whole 95% interval of the difference at least this many points over the control ...
HELPED_POINTS = 1.0
#: ... (so p below this), over at least HELPED_SEEDS runs of each fine-tuned side (the probe's pretrained side is
#: one deterministic score); "no effect": the 95% interval of the difference inside +-HELPED_POINTS
HELPED_P = 0.05
HELPED_SEEDS = 5
VERDICTS = ("helped", "hurt", "no effect", "undetermined")
#: the tests :func:`compare` runs, by the size of its first sample
TESTS = {"welch": "Welch's t-test", "prediction": "prediction-interval t (one draw against the controls' spread)"}


def welch(a: list, b: list) -> Optional[float]:
    """Two-sided p of Welch's unequal-variance t-test (scipy); None with fewer than two values or no variance."""
    import numpy as np
    from scipy import stats

    if len(a) < 2 or len(b) < 2 or (np.ptp(a) == 0 and np.ptp(b) == 0):
        return None
    p = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
    return None if p != p else p


def compare(a: list, b: list, runs_a: Optional[int] = None, fine_tuned_a: bool = True) -> dict:
    """``a`` (pretrained) against ``b`` (its random-init control), in points: the difference of the means, its 95%
    interval, p and the verdict (module docstring).

    With two or more values in ``a``: Welch's t-test and the interval of the difference of the means.  With one
    value (the probe's pretrained encoder of one pretraining run, or one fine-tuning run), that value is one draw
    from a distribution with ``b``'s spread, not an exact number: the prediction-interval t,
    t = (x - mean_b) / (sd_b * sqrt(1 + 1/n_b)) with n_b - 1 degrees of freedom, and the interval of the difference
    x - mean_b +- t_crit * sd_b * sqrt(1 + 1/n_b).
    ``runs_a``: the fine-tuning runs behind ``a`` when its values are per-checkpoint means (default: len(a)), which
    the HELPED_SEEDS rule counts; ``fine_tuned_a`` False: ``a`` is deterministic scores, one per pretrained
    checkpoint (the probe), which that rule does not count.  ``test`` says which test ran (:data:`TESTS`)."""
    import numpy as np
    from scipy import stats

    out = {"diff": None, "low": None, "high": None, "p": None, "verdict": "undetermined", "n": [len(a), len(b)],
           "test": None}
    if not a or not b:
        return out
    diff = float(np.mean(a) - np.mean(b))
    out["diff"] = diff
    if len(b) < 2 or (len(a) > 1 and np.ptp(a) == 0 and np.ptp(b) == 0):
        return out
    if len(a) == 1:
        if np.ptp(b) == 0:
            return out
        df = len(b) - 1
        scale = float(np.std(b, ddof=1)) * math.sqrt(1 + 1 / len(b))
        p = float(2 * stats.t.sf(abs(diff) / scale, df))
        half = float(stats.t.ppf(0.975, df)) * scale
        low, high, test = diff - half, diff + half, "prediction"
    else:
        res = stats.ttest_ind(a, b, equal_var=False)
        ci = res.confidence_interval(0.95)
        low, high, p, test = float(ci.low), float(ci.high), float(res.pvalue), "welch"
    runs = len(a) if runs_a is None else runs_a
    enough = (not fine_tuned_a or len(a) == 1 or runs >= HELPED_SEEDS) and len(b) >= HELPED_SEEDS
    out.update(low=low, high=high, p=p, test=test)
    if enough and p < HELPED_P and low >= HELPED_POINTS:
        out["verdict"] = "helped"
    elif enough and p < HELPED_P and high <= -HELPED_POINTS:
        out["verdict"] = "hurt"
    elif -HELPED_POINTS < low and high < HELPED_POINTS:
        out["verdict"] = "no effect"
    return out


def holm(pvalues: list) -> list:
    """Holm's step-down adjustment of a family of p-values (None stays None), in the given order."""
    order = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    m, out, running = len(order), list(pvalues), 0.0
    for rank, (p, i) in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def summary(values: list) -> dict:
    import numpy as np

    return {"n": len(values), "mean": float(np.mean(values)) if values else None,
            "sd": float(np.std(values, ddof=1)) if len(values) > 1 else None, "values": values}


def binomial_margin(p: float, n: int, z: float = 1.96) -> Optional[float]:
    """The sampling error of a proportion ``p`` (0-1) measured on ``n`` examples, in points: z * sqrt(p(1-p)/n) *
    100 (z 1.96: the half-width of its 95% normal interval); None without examples."""
    if not n:
        return None
    return z * math.sqrt(p * (1 - p) / n) * 100
