"""The translation report's plots (``train_scripts/demo/translation/report.py``): one PNG per figure, from the rows of results.json.

BLEU with confidence intervals, morph boundary precision and F1, source similarity under noise, validation loss
and sequence lengths, drawn with matplotlib on the Agg backend (files, no display); a plot without data is not
drawn (None).
"""
from __future__ import annotations

from typing import Optional

from train_scripts.demo.report_plots import plt, save
from train_scripts.demo.translation.tables import (
    NOISE_SETS,
    TEST_SETS,
    baseline_row,
    boundary_groups,
    row_label,
    row_score,
    significance_mark,
)


def _bar_positions(n_groups: int, n_bars: int, width: float = 0.8):
    w = width / n_bars
    return [[g - width / 2 + w * (j + 0.5) for g in range(n_groups)] for j in range(n_bars)], w


def _finish(fig, ax, rows, path, ylabel, title):
    ax.set_xticks(list(range(len(rows))))
    ax.set_xticklabels([row_label(r) for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.set_ylim(top=ax.get_ylim()[1] * 1.18)   # room for the legend above the bars
        ax.legend(fontsize=8, ncol=3, loc="upper center")
    return save(fig, path)


def plot_bleu(rows: list, path: str, meta: Optional[dict] = None) -> Optional[str]:
    """BLEU per scheme and test set; the whiskers are sacreBLEU's 95% interval around the bootstrap mean, the
    marks above them the significance marks of the table."""
    sets = [(k, name) for k, name in TEST_SETS if any(row_score(r, k, "bleu") for r in rows)]
    if not sets:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.4))
    xs, w = _bar_positions(len(rows), len(sets))
    for j, (k, name) in enumerate(sets):
        heights, low, high = [], [], []
        for r in rows:
            s = row_score(r, k, "bleu") or {}
            score = s.get("score") or 0.0
            heights.append(score)
            if s.get("ci") is not None and s.get("mean") is not None:
                low.append(max(0.0, score - (s["mean"] - s["ci"])))
                high.append(max(0.0, s["mean"] + s["ci"] - score))
            else:
                low.append(0.0)
                high.append(0.0)
        ax.bar(xs[j], heights, w, label=name, yerr=[low, high], capsize=3, error_kw={"elinewidth": 1})
        base_row = baseline_row(rows, meta or {})
        base = row_score(base_row, k, "bleu") if base_row else None
        for x, r, h, hi in zip(xs[j], rows, heights, high):
            mark = significance_mark(row_score(r, k, "bleu"), base) if r is not base_row else ""
            if mark:   # a few points above the whisker, whatever the scale
                ax.annotate(mark, (x, h + hi), xytext=(0, 2), textcoords="offset points", ha="center",
                            va="bottom", fontsize=8)
    return _finish(fig, ax, rows, path, "BLEU (test set)", "BLEU with 95% confidence intervals")


def plot_boundary(rows: list, path: str) -> Optional[str]:
    """Precision and F1 of the rows scored on the most used gold only (rows on other gold are not comparable)."""
    groups = boundary_groups(rows)
    if not groups:
        return None
    gold, have = groups[0]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    xs, w = _bar_positions(len(have), 2)
    ax.bar(xs[0], [100 * r["boundary"].get("precision", 0) for r in have], w, label="precision")
    ax.bar(xs[1], [100 * r["boundary"]["f1"] for r in have], w, label="F1")
    protocols = {r["boundary"].get("protocol") for r in have} - {None}
    title = (f"Morph boundary precision and F1 on {gold}"
             + (f" ({', '.join(sorted(protocols))} protocol)" if protocols else ""))
    return _finish(fig, ax, have, path, "percent", title)


def plot_similarity(rows: list, path: str) -> Optional[str]:
    have = [r for r in rows if r.get("robustness")]
    if not have:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.2))
    xs, w = _bar_positions(len(have), len(NOISE_SETS))
    for j, (k, name) in enumerate(NOISE_SETS):
        ax.bar(xs[j], [100 * (((r["robustness"].get(k) or {}).get("mean")) or 0) for r in have], w, label=name)
    ax.set_yticks(range(0, 101, 20))   # a percentage: no tick above 100 in the legend's room
    return _finish(fig, ax, have, path, "similarity (%)",
                   "Clean vs perturbed source encodings (Ratcliff/Obershelp)")


def plot_curves(rows: list, path: str) -> Optional[str]:
    if not any(r.get("valid_curve") for r in rows):
        return None
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for r in rows:
        curve = r.get("valid_curve") or []
        if curve:
            xs, ys = zip(*curve)
            ax.plot(xs, ys, marker="o", markersize=3, label=row_label(r))
    ax.set_xlabel("update")
    ax.set_ylabel("validation loss (base 2)")
    ax.set_title("Validation loss per update")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    return save(fig, path)


def plot_lengths(rows: list, path: str) -> Optional[str]:
    if not any(r.get("src_tok_per_sent") or r.get("tgt_tok_per_sent") for r in rows):
        return None
    fig, ax = plt.subplots(figsize=(7, 4.2))
    xs, w = _bar_positions(len(rows), 2)
    ax.bar(xs[0], [r.get("src_tok_per_sent") or 0 for r in rows], w, label="source (en)")
    ax.bar(xs[1], [r.get("tgt_tok_per_sent") or 0 for r in rows], w, label="target (de)")
    return _finish(fig, ax, rows, path, "tokens per sentence (test set)", "Sequence length by scheme")
