"""The demo's statistics, shared by every part that fine-tunes with seeds: Welch's t-test, the pretrained-vs-control
comparison and its verdict, Holm's correction and a seed summary (scipy)."""
from __future__ import annotations

from typing import Optional

#: "pretraining helped": at least this many points over the random-init control ...
HELPED_POINTS = 1.0
#: ... with p below this, over at least HELPED_SEEDS runs of each fine-tuned side (the probe's pretrained side is
#: one deterministic score); "no effect": the 95% interval of the difference inside +-HELPED_POINTS
HELPED_P = 0.05
HELPED_SEEDS = 5
VERDICTS = ("helped", "hurt", "no effect", "undetermined")


def welch(a: list, b: list) -> Optional[float]:
    """Two-sided p of Welch's unequal-variance t-test (scipy); None with fewer than two values or no variance."""
    import numpy as np
    from scipy import stats

    if len(a) < 2 or len(b) < 2 or (np.ptp(a) == 0 and np.ptp(b) == 0):
        return None
    p = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
    return None if p != p else p


def compare(a: list, b: list) -> dict:
    """``a`` (pretrained) against ``b`` (its random-init control), in points: the difference of the means, its 95%
    interval and p (Welch's t-test; with one value in ``a``, a deterministic probe, the one-sample t-test of ``b``
    against it), and the verdict: **helped** (>= HELPED_POINTS, p < HELPED_P, >= HELPED_SEEDS runs of each
    fine-tuned side), **hurt** (the same the other way), **no effect** (the interval inside +-HELPED_POINTS) or
    **undetermined**."""
    import numpy as np
    from scipy import stats

    out = {"diff": None, "low": None, "high": None, "p": None, "verdict": "undetermined", "n": [len(a), len(b)]}
    if not a or not b:
        return out
    diff = float(np.mean(a) - np.mean(b))
    out["diff"] = diff
    if len(b) < 2 or (len(a) > 1 and np.ptp(a) == 0 and np.ptp(b) == 0):
        return out
    if len(a) == 1:
        if np.ptp(b) == 0:
            return out
        res = stats.ttest_1samp(b, a[0])
        ci = res.confidence_interval(0.95)
        low, high = a[0] - float(ci.high), a[0] - float(ci.low)
    else:
        res = stats.ttest_ind(a, b, equal_var=False)
        ci = res.confidence_interval(0.95)
        low, high = float(ci.low), float(ci.high)
    p = float(res.pvalue)
    enough = (len(a) == 1 or len(a) >= HELPED_SEEDS) and len(b) >= HELPED_SEEDS
    out.update(low=low, high=high, p=p)
    if enough and p < HELPED_P and diff >= HELPED_POINTS:
        out["verdict"] = "helped"
    elif enough and p < HELPED_P and diff <= -HELPED_POINTS:
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
