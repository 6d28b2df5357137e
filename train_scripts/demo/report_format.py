"""The number formats of every report table (translation, pretraining, German), defined once: a value with d
digits, a signed difference, a p-value, mean ± sd, a difference with its 95% interval, a count and a share; a
missing value is one dash, :data:`DASH`, everywhere.  The tables themselves are lists of rows rendered by
``train_scripts/demo/report_document.py`` (:class:`~train_scripts.demo.report_document.Table`).
"""
from __future__ import annotations

from typing import Optional

#: a missing value, in every table and sentence of the report
DASH = "–"


def num(value, digits: int = 1, scale: float = 1.0) -> str:
    """A number with ``digits`` decimals (times ``scale``: 100 for a proportion in points); a bool or a string
    as it is; :data:`DASH` for None."""
    if value is None:
        return DASH
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value * scale:.{digits}f}"


def signed(value: Optional[float], digits: int = 1) -> str:
    """A difference with its sign: ``+2.1``, ``-0.4``."""
    return DASH if value is None else f"{value:+.{digits}f}"


def pval(p: Optional[float]) -> str:
    """A p-value: two significant digits (``0.019``), scientific under 0.001 (``3.5e-04``)."""
    if p is None:
        return DASH
    return f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}"


def mean_sd(s: Optional[dict], digits: int = 1, n: bool = False) -> str:
    """A summary (``statistics.summary``): ``64.3 ± 0.2`` (the mean alone with one value), with ``n``:
    ``64.3 ± 0.2 (n=5)``."""
    if not s or s.get("mean") is None:
        return DASH
    text = f"{s['mean']:.{digits}f}" + (f" ± {s['sd']:.{digits}f}" if s.get("sd") is not None else "")
    return text + (f" (n={s['n']})" if n and s.get("n") is not None else "")


def with_error(value: Optional[float], error: Optional[float], digits: int = 1) -> str:
    """A value and its sampling error: ``64.5 ± 0.5`` (the value alone without one)."""
    if value is None:
        return DASH
    return num(value, digits) + (f" ± {num(error, digits)}" if error is not None else "")


def diff_ci(diff: Optional[float], low: Optional[float] = None, high: Optional[float] = None,
            digits: int = 1) -> str:
    """A difference and its 95% interval: ``+2.1 [+0.8, +3.4]`` (the difference alone without one)."""
    if diff is None:
        return DASH
    if low is None or high is None:
        return signed(diff, digits)
    return f"{signed(diff, digits)} [{signed(low, digits)}, {signed(high, digits)}]"


def comparison(c: Optional[dict], digits: int = 1) -> str:
    """:func:`diff_ci` of a comparison dict (``statistics.compare``: diff, low, high)."""
    return DASH if not c else diff_ci(c.get("diff"), c.get("low"), c.get("high"), digits)


def count(value) -> str:
    """A count with thousands separators: ``8,000``."""
    return DASH if value is None else f"{value:,.0f}"


def share(value: Optional[float], digits: int = 1) -> str:
    """A proportion (0-1) as a percentage: ``74.9%``."""
    return DASH if value is None else f"{100 * value:.{digits}f}%"
