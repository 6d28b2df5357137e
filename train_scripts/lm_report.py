"""The pretraining part of the demo's report (``train_scripts/lm_demo.py``): statistics, tables, plots, prose.

:func:`analyse` turns the runs into the statistics the report states (mean ± sd of the seeds that did not
collapse, Welch's t-test of each row against the Unigram row and of each row against its random-init control,
the FLOTA table); :func:`write_report` writes ``REPORT.md`` and a self-contained ``report.html`` (plots embedded)
into the part's folder.  The translation report appends both (``train_scripts/pipeline.py --part all``).
"""
from __future__ import annotations

import base64
import html
import os
from typing import Optional

from train_scripts.report_tables import html_table, markdown_table

UP, DOWN = "\u25b2", "\u25bc"
#: "pretraining helped": at least this many points of test accuracy over the random-init control ...
HELPED_POINTS = 1.0
#: ... with Welch p below this, over at least HELPED_SEEDS seeds on each side
HELPED_P = 0.05
HELPED_SEEDS = 5


def welch(a: list, b: list) -> Optional[float]:
    """Two-sided p of Welch's unequal-variance t-test (scipy); None with fewer than two values or no variance."""
    import numpy as np
    from scipy import stats

    if len(a) < 2 or len(b) < 2 or (np.ptp(a) == 0 and np.ptp(b) == 0):
        return None
    p = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
    return None if p != p else p


def summary(values: list) -> dict:
    import numpy as np

    return {"n": len(values), "mean": float(np.mean(values)) if values else None,
            "sd": float(np.std(values, ddof=1)) if len(values) > 1 else None, "values": values}


def _group(runs: list, metric: str, split: str = "test") -> dict:
    """``{key: {"kept": [...], "collapsed": n, "all": [...]}}``; scores in points (x100)."""
    out: dict = {}
    for r in runs:
        g = out.setdefault(r["key"], {"kept": [], "collapsed": 0, "all": [], "seeds": []})
        if split not in r:
            continue
        v = 100 * r[split][metric]
        g["all"].append(v)
        g["seeds"].append(r["seed"])
        if r.get("collapsed"):
            g["collapsed"] += 1
        else:
            g["kept"].append(v)
    return out


def analyse(results: dict) -> dict:
    """The statistics of the report (a dict, stored in results.json)."""
    s = results["meta"]["settings"]
    base = s["baseline"]
    sb = [dict(r, key=(r["task"], r["row"], r["init"])) for r in results["finetune"] if r["part"] == "superbizarre"]
    groups = _group(sb, "accuracy")
    table = []
    for (task, row, init), g in groups.items():
        entry = {"task": task, "row": row, "init": init, **summary(g["kept"]), "collapsed": g["collapsed"],
                 "seeds_run": len(g["all"]), "all": g["all"],
                 "majority": 100 * next(r["majority"] for r in sb if r["key"] == (task, row, init)),
                 "tokens_per_example": next(r["tokens_per_example"] for r in sb if r["key"] == (task, row, init))}
        b = groups.get((task, base, "pretrained"))
        if init == "pretrained" and row != base and b:
            entry["vs_baseline_p"] = welch(g["kept"], b["kept"])
            entry["vs_baseline_diff"] = (entry["mean"] - summary(b["kept"])["mean"]) if g["kept"] and b["kept"] \
                else None
        c = groups.get((task, row, "random"))
        if init == "pretrained" and c:
            cm = summary(c["kept"])["mean"]
            entry["vs_control_diff"] = entry["mean"] - cm if g["kept"] and c["kept"] else None
            entry["vs_control_p"] = welch(g["kept"], c["kept"])
            entry["pretraining_helped"] = bool(entry["vs_control_diff"] is not None
                                               and entry["vs_control_diff"] >= HELPED_POINTS
                                               and entry["vs_control_p"] is not None
                                               and entry["vs_control_p"] < HELPED_P
                                               and len(g["kept"]) >= HELPED_SEEDS
                                               and len(c["kept"]) >= HELPED_SEEDS)
        table.append(entry)
    fl = [dict(r, key=(r["task"], r["encoding"], r["lr"])) for r in results["finetune"] if r["part"] == "flota"]
    flota = []
    clean, noisy = _group(fl, "macro_f1", "test"), _group(fl, "macro_f1", "test_noisy")
    for key, g in clean.items():
        task, enc, lr = key
        first = next(r for r in fl if r["key"] == key)
        n = noisy.get(key, {"kept": [], "all": []})
        std_clean = clean.get((task, "standard", lr), {"kept": []})["kept"]
        std_noisy = noisy.get((task, "standard", lr), {"kept": []})["kept"]
        dev = [100 * r["dev"]["macro_f1"] for r in fl if r["key"] == key and "dev" in r and not r.get("collapsed")]
        flota.append({"task": task, "encoding": enc, "mode": first.get("mode"), "k": first.get("k"), "lr": lr,
                      "clean": summary(g["kept"]), "noisy": summary(n["kept"]), "collapsed": g["collapsed"],
                      "clean_runs": len(g["all"]),
                      "dev": summary(dev), "tokens_per_example": first.get("tokens_per_example"),
                      "clean_p": None if enc == "standard" else welch(g["kept"], std_clean),
                      "noisy_p": None if enc == "standard" else welch(n["kept"], std_noisy)})
    best_k = {}
    for e in flota:   # the paper's protocol: k (and lr) tuned on dev, per mode
        if e["mode"] and e["dev"]["mean"] is not None:
            cur = best_k.get((e["task"], e["mode"]))
            if cur is None or e["dev"]["mean"] > cur["dev"]["mean"]:
                best_k[(e["task"], e["mode"])] = e
    return {"superbizarre": table, "flota": flota,
            "flota_dev_selected": [{"task": t, "mode": m, "k": e["k"], "lr": e["lr"]} for (t, m), e in best_k.items()]}


# --- formatting -----------------------------------------------------------------------------------------------

def _f(v, d=1) -> str:
    return "-" if v is None else f"{v:.{d}f}"


def _p(p) -> str:
    return "n/a" if p is None else (f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}")


def _ms(s: dict) -> str:
    if s.get("mean") is None:
        return "-"
    return f"{s['mean']:.1f} ± {s['sd']:.1f}" if s.get("sd") is not None else f"{s['mean']:.1f}"


def _mark(diff, p) -> str:
    if diff is None or p is None or p >= HELPED_P:
        return ""
    return f" {UP}" if diff > 0 else f" {DOWN}"


def pretraining_table(results: dict) -> list:
    head = ["row", "updates", "sequences", "tokens", "epochs", "tokens/word", "valid loss/token (bits)",
            "valid loss/word (bits)", "valid loss/char (bits)", "CPU-less wall (min)"]
    rows = [head]
    for r in results["pretraining"]:
        rows.append([r["label"], f"{r['updates']:,}", f"{r['sequences']:,}", f"{r['tokens']:,}", _f(r["epochs"], 2),
                     _f(r["tokens_per_word"], 2), _f(r["valid_loss_per_token"], 3), _f(r["valid_loss_per_word"], 2),
                     _f(r["valid_loss_per_char"], 3), _f(r["seconds"] / 60, 1)])
    rows[0][-1] = "wall (min)"
    return rows


def _labels(results: dict) -> dict:
    return {r["row"]: r["label"] for r in results["pretraining"]}


def superbizarre_table(results: dict, task: str) -> list:
    labels = _labels(results)
    head = ["row", "init", "test accuracy (mean ± sd)", "seeds kept / run", "collapsed", "vs Unigram (diff, p)",
            "vs random init (diff, p)", "pretraining helped", "tokens per word", "per seed"]
    out = [head]
    for e in results["analysis"]["superbizarre"]:
        if e["task"] != task:
            continue
        vb = "" if "vs_baseline_p" not in e else \
            f"{_f(e['vs_baseline_diff'], 1)}{_mark(e['vs_baseline_diff'], e['vs_baseline_p'])} (p {_p(e['vs_baseline_p'])})"
        vc = "" if "vs_control_p" not in e else \
            f"{_f(e['vs_control_diff'], 1)}{_mark(e['vs_control_diff'], e['vs_control_p'])} (p {_p(e['vs_control_p'])})"
        helped = "" if "pretraining_helped" not in e else ("yes" if e["pretraining_helped"] else "no")
        out.append([labels.get(e["row"], e["row"]), e["init"], _ms(e), f"{e['n']} / {e['seeds_run']}",
                    str(e["collapsed"]), vb, vc, helped, _f(e["tokens_per_example"], 2),
                    " ".join(f"{v:.1f}" for v in e["all"])])
    return out


def flota_table(results: dict) -> list:
    head = ["data", "segmentation", "k", "lr", "dev F1", "test F1 clean", "p vs standard", "test F1 noisy",
            "p vs standard", "collapsed", "tokens per example"]
    out = [head]
    for e in results["analysis"]["flota"]:
        name = "standard" if e["mode"] is None else e["mode"].upper()
        out.append([e["task"], name, "-" if e["k"] is None else str(e["k"]), f"{e['lr']:g}", _ms(e["dev"]),
                    _ms(e["clean"]), _p(e["clean_p"]) if e["mode"] else "", _ms(e["noisy"]),
                    _p(e["noisy_p"]) if e["mode"] else "", f"{e['collapsed']} / {e['clean_runs']}",
                    _f(e["tokens_per_example"], 1)])
    return out


def conclusions(results: dict) -> list:
    """What this run can and cannot conclude, computed from its numbers."""
    a, s = results["analysis"], results["meta"]["settings"]
    labels = _labels(results)
    out = []
    for e in a["superbizarre"]:
        if e["init"] != "pretrained" or "pretraining_helped" not in e:
            continue
        if e["pretraining_helped"]:
            out.append(f"{labels[e['row']]} ({e['task']}): pretraining helped: {e['vs_control_diff']:+.1f} points "
                       f"over the same model fine-tuned from random weights (Welch p {_p(e['vs_control_p'])}).")
        else:
            out.append(f"{labels[e['row']]} ({e['task']}): pretraining did NOT measurably help at this budget "
                       f"({_f(e['vs_control_diff'], 1)} points over random init, p {_p(e['vs_control_p'])}; the "
                       f"definition is >= {HELPED_POINTS:g} point with p < {HELPED_P} over >= {HELPED_SEEDS} seeds). "
                       "Differences between rows then measure the tokenisers at fine-tuning time, not what "
                       "pretraining with them gives.")
    for e in a["superbizarre"]:
        if e.get("vs_baseline_p") is not None and e["vs_baseline_p"] < HELPED_P:
            base = next((b for b in a["superbizarre"] if b["task"] == e["task"] and b["row"] == s["baseline"]
                         and b["init"] == "pretrained"), None)
            lengths = ""
            if base and base.get("tokens_per_example") and e.get("tokens_per_example"):
                lengths = (f"; its inputs are {e['tokens_per_example']:.2f} tokens per word against "
                           f"{base['tokens_per_example']:.2f}: part of the difference can be a sequence-length "
                           "effect")
            out.append(f"{labels[e['row']]} differs from Unigram on {e['task']} by {e['vs_baseline_diff']:+.1f} "
                       f"points (Welch p {_p(e['vs_baseline_p'])}){lengths}.")
    collapsed = sum(e["collapsed"] for e in a["superbizarre"]) + sum(e["collapsed"] for e in a["flota"])
    out.append(f"{collapsed} fine-tuning run(s) collapsed to one class (shown, not averaged)." if collapsed else
               "No fine-tuning run collapsed to one class.")
    out.append("Each row was pretrained once: the variance of pretraining itself (its seed, its data order) is not "
               "covered; the seeds vary fine-tuning only.")
    for sel in a.get("flota_dev_selected", []):   # the paper's protocol: k tuned on dev, then test (Tables 2 and 4)
        pick = next(e for e in a["flota"] if e["task"] == sel["task"] and e["mode"] == sel["mode"]
                    and e["k"] == sel["k"] and e["lr"] == sel["lr"])
        std = next((e for e in a["flota"] if e["task"] == sel["task"] and e["mode"] is None
                    and e["lr"] == sel["lr"]), None)
        if std is None:
            continue
        out.append(f"{sel['mode'].upper()} with k = {sel['k']} (selected on dev) on {sel['task']}: macro F1 "
                   f"{_ms(pick['clean'])} clean against {_ms(std['clean'])} for the standard segmentation (p "
                   f"{_p(pick['clean_p'])}), {_ms(pick['noisy'])} against {_ms(std['noisy'])} with whitespace noise "
                   f"(p {_p(pick['noisy_p'])}); {_f(pick['tokens_per_example'], 1)} tokens per title against "
                   f"{_f(std['tokens_per_example'], 1)}.")
    if a["flota"]:
        out.append("FLOTA works over the row's own vocabulary (the baseline row's Unigram model, "
                   f"{s['vocab_size']:,} pieces), not BERT's, GPT-2's or XLNet's as in the paper; the FLOTA table "
                   "is the paper's question asked of this model.")
    return out


# --- plots ----------------------------------------------------------------------------------------------------

def _pyplot():
    """matplotlib's pyplot on the Agg backend (files, no display)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt, fig, path: str) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _plot_curves(results: dict, path: str) -> Optional[str]:
    plt = _pyplot()
    rows = [r for r in results["pretraining"] if r["valid_curve"]]
    if not rows:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for r in rows:
        x = [c["update"] for c in r["valid_curve"]]
        y = [c["loss"] for c in r["valid_curve"]]
        axes[0].plot(x, y, marker="o", label=r["label"])
        axes[1].plot(x, [v * r["valid_loss_per_word"] / r["valid_loss_per_token"] if r["valid_loss_per_token"]
                         else None for v in y], marker="o", label=r["label"])
    axes[0].set(xlabel="update", ylabel="validation loss per token (bits)", title="Pretraining (masked LM)")
    axes[1].set(xlabel="update", ylabel="validation loss per word (bits)", title="Per word (comparable across rows)")
    axes[0].legend(fontsize=8)
    return _save(plt, fig, path)


def _plot_seeds(results: dict, path: str) -> Optional[str]:
    plt = _pyplot()
    entries = results["analysis"]["superbizarre"]
    if not entries:
        return None
    labels = _labels(results)
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(entries)), 4))
    for i, e in enumerate(entries):
        ax.scatter([i] * len(e["all"]), e["all"], color="tab:red" if e["collapsed"] else "tab:blue", s=14)
        if e["mean"] is not None:
            ax.hlines(e["mean"], i - 0.3, i + 0.3, color="black")
    ax.axhline(entries[0]["majority"], color="grey", ls="--", lw=1, label="majority class")
    ax.set_xticks(range(len(entries)))
    ax.set_xticklabels([f"{labels.get(e['row'], e['row'])}\n{e['init']}\n{e['task']}" for e in entries], fontsize=7)
    ax.set(ylabel="test accuracy (%)", title="Superbizarre, every seed\n(red: collapsed; bar: mean of the others)")
    ax.legend(fontsize=8)
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


# --- the report -----------------------------------------------------------------------------------------------

NOTES = {
    "budget": "Every row had the same budget in updates (or, with --lm-budget epochs, in epochs); sequences, tokens "
              "and epochs are what each row saw, read from fairseq's log. Loss per token is not comparable across "
              "rows that segment differently; per word and per character are (per-token loss x tokens per word "
              "or per character of the validation text; the no-spaces rows count no space tokens).",
    "superbizarre": "Test accuracy of the best dev epoch, in points; mean ± sample sd of the seeds that did not "
                    "collapse (a run whose best checkpoint predicts one class for every dev example is counted "
                    "under 'collapsed' and left out). ▲/▼: Welch's t-test p < 0.05. 'random init': the same "
                    "architecture and dictionary fine-tuned from random weights with the same seeds.",
    "flota": "Macro F1 (points) of the best dev epoch on the clean test set and on a copy with unseen whitespace "
             "noise (each space dropped with the stated probability; the same noisy text for every segmentation); "
             "FLOTA, FIRST and LONGEST at k pieces per word over the same vocabulary as 'standard'; p: Welch's "
             "t-test against the standard segmentation. The paper tunes k on dev: the row with the best dev F1 "
             "per mode is its protocol's pick.",
}


def _stage_time(meta: dict) -> str:
    st = meta.get("stage_seconds")
    if not st:
        return ""
    total = sum(st.values())
    return (f" Stages summed (this run and resumed ones): {total / 60:.0f} min of commands ("
            + ", ".join(f"{k} {v / 60:.0f}" for k, v in st.items()) + f"), so about {total / 60 / 2:.0f} min on "
            "two cores.")


def sections(results: dict) -> list:
    """``[(heading, table or None, text)]`` of this part, shared by the markdown and the html."""
    s, meta = results["meta"]["settings"], results["meta"]
    data = results["data"]
    intro = (f"Preset {s['preset']} ({s['note']}). Corpus: {s['corpus']} ({data['train']['words']:,} training "
             f"words in {data['train']['documents']:,} documents, {data['valid']['words']:,} validation words). "
             f"Fine-tuning: {s['ft_epochs']} epochs, batch {s['ft_batch']}, lr {s['ft_lr']:g}, "
             f"{s['ft_rows'] or 'all'} rows per split, {s['seeds']} seeds; the recipe's own defaults are the "
             "paper's (Table 10: lr 2e-3, batch 32, 20 epochs). "
             f"Run {meta['date']}, {meta['seconds'] / 60:.0f} min, {s['jobs']} runs at a time with {s['threads']} "
             f"thread(s) each; load average at the end {', '.join(f'{x:.2f}' for x in meta['load'] or [])}."
             + _stage_time(meta))
    out = [("Pretraining -> fine-tuning (RoBERTa)", None, intro),
           ("Pretraining budget and loss", pretraining_table(results), NOTES["budget"])]
    for task in s["tasks"]:
        out.append((f"Superbizarre {task}", superbizarre_table(results, task), NOTES["superbizarre"]))
    if results["analysis"]["flota"]:
        out.append((f"FLOTA on the pretrained {s['baseline']} model (ArXiv-{s['flota_set']}, "
                    f"{', '.join(s['flota_areas'])}; noise p {s['noise_p']})", flota_table(results), NOTES["flota"]))
    out.append(("What this run can and cannot conclude", None, "\n".join(f"- {c}" for c in conclusions(results))))
    return out


def write_report(results: dict, outdir: str) -> dict:
    plots = [p for p in (_plot_curves(results, os.path.join(outdir, "pretraining_curves.png")),
                         _plot_seeds(results, os.path.join(outdir, "superbizarre_seeds.png")),
                         _plot_flota(results, os.path.join(outdir, "flota_k.png"))) if p]
    md = []
    for i, (head, table, text) in enumerate(sections(results)):
        md.append(("## " if i == 0 else "### ") + head)
        if table:
            md.append(markdown_table(table))
        md.append(text)
    md += [f"![{os.path.basename(p)}]({os.path.basename(p)})" for p in plots]
    md.append(f"Command: `{results['meta']['command']}`; results: `results.json`.")
    md_path = os.path.join(outdir, "REPORT.md")
    with open(md_path, "w", encoding="utf-8") as fh:
        fh.write("\n\n".join(md) + "\n")
    html_path = os.path.join(outdir, "report.html")
    with open(html_path, "w", encoding="utf-8") as fh:
        fh.write("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Pretraining -> fine-tuning</title>"
                 "<style>body{font-family:sans-serif;max-width:75em;margin:auto}table{border-collapse:collapse}"
                 "td,th{border:1px solid #ccc;padding:2px 6px}td.l,th.l{text-align:left}td,th{text-align:right}"
                 "</style></head><body>\n" + html_body(results, plots) + "\n</body></html>\n")
    return {"markdown": md_path, "html": html_path, "plots": plots}


def html_body(results: dict, plots: list) -> str:
    """The part as html (headings, tables, plots embedded as data URIs): a page of its own or a section of the
    translation report."""
    e = html.escape
    parts = []
    for i, (head, table, text) in enumerate(sections(results)):
        parts.append(f"<h{2 if i == 0 else 3}>{e(head)}</h{2 if i == 0 else 3}>")
        if table:
            parts.append(html_table(table))
        if text.startswith("- "):
            parts.append("<ul>" + "".join(f"<li>{e(x[2:])}</li>" for x in text.splitlines()) + "</ul>")
        else:
            parts.append(f"<p>{e(text)}</p>")
    for p in plots:
        with open(p, "rb") as fh:
            data = base64.b64encode(fh.read()).decode()
        parts.append(f'<p><img alt="{e(os.path.basename(p))}" src="data:image/png;base64,{data}"></p>')
    return "\n".join(parts)


#: where the pretraining part starts in the demo's REPORT.md / report.html (everything after it is replaced)
MARK = "<!-- morphtok: pretraining part -->"


def attach_to_demo_report(outdir: str) -> bool:
    """Put this part (``OUTDIR/pretraining``) into the demo's own ``REPORT.md`` and ``report.html`` (those of the
    translation part), replacing an earlier copy; False when either side is missing (nothing is changed)."""
    import json

    part = os.path.join(outdir, "pretraining")
    md_path, html_path = os.path.join(outdir, "REPORT.md"), os.path.join(outdir, "report.html")
    results_path = os.path.join(part, "results.json")
    if not (os.path.isfile(results_path) and os.path.isfile(md_path) and os.path.isfile(html_path)):
        return False
    with open(results_path, encoding="utf-8") as fh:
        results = json.load(fh)
    plots = [os.path.join(part, p) for p in ("pretraining_curves.png", "superbizarre_seeds.png", "flota_k.png")
             if os.path.isfile(os.path.join(part, p))]
    with open(os.path.join(part, "REPORT.md"), encoding="utf-8") as fh:
        md = fh.read()
    md = md.replace("](", "](pretraining/").replace("`results.json`", "`pretraining/results.json`")
    with open(md_path, encoding="utf-8") as fh:
        head = fh.read().split(MARK)[0].rstrip("\n")
    with open(md_path, "w", encoding="utf-8") as fh:
        fh.write(f"{head}\n\n{MARK}\n\n{md}")
    with open(html_path, encoding="utf-8") as fh:
        page = fh.read()
    page = page.split(MARK)[0].replace("</body></html>", "").rstrip("\n")
    with open(html_path, "w", encoding="utf-8") as fh:
        fh.write(f"{page}\n{MARK}\n{html_body(results, plots)}\n</body></html>\n")
    return True


def main(argv=None) -> int:
    """``python -m train_scripts.lm_report DEMO_OUTPUT``: rewrite the part's report from its results.json (after a
    change of the report code, or to attach it to the demo's report), nothing rerun."""
    import argparse
    import json

    from preprocess.common import UserError

    ap = argparse.ArgumentParser(prog="python -m train_scripts.lm_report", description=main.__doc__.split(":")[1])
    ap.add_argument("output", help="the demo's --output folder (its pretraining/results.json is read)")
    args = ap.parse_args(argv)
    part = os.path.join(args.output, "pretraining")
    path = os.path.join(part, "results.json")
    if not os.path.isfile(path):
        raise UserError(f"no {path}: run morphtok-demo --part pretraining --output {args.output} first")
    with open(path, encoding="utf-8") as fh:
        results = json.load(fh)
    from pathlib import Path

    from train_scripts.lm_demo import stage_seconds

    results["analysis"] = analyse(results)
    results["meta"]["stage_seconds"] = stage_seconds(Path(part) / ".stages")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=1, default=str)
    paths = write_report(results, part)
    attach_to_demo_report(args.output)
    print(f"{paths['markdown']} {paths['html']}")
    return 0


if __name__ == "__main__":
    import sys

    from preprocess.cli import run_main

    sys.exit(run_main(main))
