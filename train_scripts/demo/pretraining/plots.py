"""The pretraining part's plots (``train_scripts/demo/pretraining/report.py`` shows them): the pretraining curves,
every Superbizarre seed, the learning curve and FLOTA against k; each ``f(results, path)`` draws one PNG, or
returns None when it has no data.
"""
from __future__ import annotations

from typing import Optional

from train_scripts.demo.pretraining.analysis import labels, run_label, size_label


def _pyplot():
    """pyplot as the translation part's plots set it up (train_scripts/demo/report_plots.py), imported when drawing."""
    from train_scripts.demo.report_plots import plt

    return plt


def _save(plt, fig, path: str) -> str:
    from train_scripts.demo.report_plots import save

    return save(fig, path)


def _plot_curves(results: dict, path: str) -> Optional[str]:
    plt = _pyplot()
    rows = [r for r in results["pretraining"] if r["valid_curve"]]
    if not rows:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for r in rows:
        x = [c["update"] for c in r["valid_curve"]]
        y = [c["loss"] for c in r["valid_curve"]]
        axes[0].plot(x, y, marker="o", label=run_label(r))
        axes[1].plot(x, [v * r["valid_loss_per_word"] / r["valid_loss_per_token"] if r["valid_loss_per_token"]
                         else None for v in y], marker="o", label=run_label(r))
    axes[0].set(xlabel="update", ylabel="validation loss per token (bits)", title="Pretraining (masked LM)")
    axes[1].set(xlabel="update", ylabel="validation loss per word (bits)", title="Per word (comparable across rows)")
    axes[0].legend(fontsize=8)
    return _save(plt, fig, path)


def _plot_seeds(results: dict, path: str) -> Optional[str]:
    plt = _pyplot()
    entries = results["analysis"]["superbizarre"]
    if not entries:
        return None
    names = labels(results)
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(entries)), 4))
    for i, e in enumerate(entries):
        ax.scatter([i] * len(e["all"]), e["all"], color="tab:red" if e["collapsed"] else "tab:blue", s=14)
        if e["all_runs"]["mean"] is not None:
            ax.hlines(e["all_runs"]["mean"], i - 0.3, i + 0.3, color="black")
        if e["floor"] is not None:
            ax.hlines(e["floor"], i - 0.4, i + 0.4, color="tab:green", ls=":",
                      label="floor (char n-gram NB)" if i == 0 else None)
    ax.axhline(entries[0]["majority"], color="grey", ls="--", lw=1, label="majority class")
    ax.set_xticks(range(len(entries)))
    ax.set_xticklabels([f"{names.get(e['row'], e['row'])}\n{e['init']}\n{size_label(e['size'])}" for e in entries],
                       fontsize=7)
    ax.set(ylabel="test accuracy (%)", title="Superbizarre, every seed\n(red: collapsed; bar: mean of all runs)")
    ax.legend(fontsize=8)
    return _save(plt, fig, path)


def _plot_learning_curve(results: dict, path: str) -> Optional[str]:
    """Test accuracy against labelled words: fine-tuned and probed, pretrained and random init, and the floor."""
    plt = _pyplot()
    a, base = results["analysis"], results["meta"]["settings"]["baseline"]
    curve = sorted((e for e in a["superbizarre"] if e["row"] == base and e["init"] == "pretrained"
                    and "vs_control" in e), key=lambda e: e["size"] or 10 ** 12)
    if len(curve) < 2:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    xs = [e["size"] for e in curve]
    ax.plot(xs, [e["all_runs"]["mean"] for e in curve], marker="o", label="fine-tuned, pretrained")
    ax.plot(xs, [e["control_all"]["mean"] for e in curve], marker="o", label="fine-tuned, random init")
    probe = sorted((e for e in a.get("probe", []) if e["row"] == base), key=lambda e: e["size"] or 10 ** 12)
    if probe:
        px = [e["size"] for e in probe]
        ax.plot(px, [e["pretrained"] for e in probe], marker="s", ls="--", label="probe, pretrained encoder")
        ax.plot(px, [e["random"]["mean"] for e in probe], marker="s", ls="--", label="probe, random encoders")
    ax.plot(xs, [e["floor"] for e in curve], color="tab:green", ls=":", marker="^", label="floor (char n-gram NB)")
    ax.axhline(curve[0]["majority"], color="grey", ls="--", lw=1, label="majority class")
    ax.set_xscale("log")
    ax.set(xlabel="labelled training words", ylabel="test accuracy (%)",
           title="Superbizarre: what pretraining adds, by labelled size")
    ax.legend(fontsize=7)
    return _save(plt, fig, path)


def _plot_flota(results: dict, path: str) -> Optional[str]:
    plt = _pyplot()
    fl = results["analysis"]["flota"]
    if not fl:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, cond in zip(axes, ("clean", "noisy")):
        for mode in sorted({e["mode"] for e in fl if e["mode"]}):
            pts = sorted((e["k"], e[cond]["mean"]) for e in fl if e["mode"] == mode and e[cond]["mean"] is not None)
            if pts:
                ax.plot(*zip(*pts), marker="o", label=mode.upper())
        std = [e[cond]["mean"] for e in fl if e["mode"] is None and e[cond]["mean"] is not None]
        if std:
            ax.axhline(std[0], color="grey", ls="--", label="standard")
        ax.set_xticks(sorted({e["k"] for e in fl if e["k"]}))
        ax.set(xlabel="k", ylabel="macro F1 (%)", title=f"ArXiv test, {cond}")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    return _save(plt, fig, path)


#: the part's plots by name, in the report's order
PLOTS = (("pretraining_curves", _plot_curves), ("learning_curve", _plot_learning_curve),
         ("superbizarre_seeds", _plot_seeds), ("flota_k", _plot_flota))
