"""The pretraining part of the demo's report (``train_scripts/demo/pretraining/part.py``): statistics, tables, plots, prose.

:func:`analyse` turns the runs into the statistics the report states (mean ± sd of the seeds that did not
collapse, Welch's t-test of each row against the Unigram row and of each row against its random-init control,
the FLOTA table; the floor rule, :func:`floor_state`; what each test's samples are, its unit);
:func:`write_report` writes ``REPORT.md`` and a self-contained ``report.html`` (plots embedded) into the part's
folder from :func:`sections`, which the demo's one report shows too (``train_scripts/demo/demo_report.py``).
"""
from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Optional

from train_scripts.demo import report_document as document
from train_scripts.demo.report_document import DOWN, UP, Bullets, Image, Para, Section, Table
from train_scripts.demo.statistics import (  # noqa: F401  (the part's statistics, by their old names too)
    HELPED_P,
    HELPED_POINTS,
    HELPED_SEEDS,
    VERDICTS,
    binomial_margin,
    compare,
    holm,
    summary,
    welch,
)


def _group(runs: list, metric: str, split: str = "test") -> dict:
    """``{key: {"kept": [...], "collapsed": n, "all": [...], "checkpoints": {pretraining seed: [...]}}}``; scores
    in points (x100)."""
    out: dict = {}
    for r in runs:
        g = out.setdefault(r["key"], {"kept": [], "collapsed": 0, "all": [], "seeds": [], "checkpoints": {}})
        if split not in r:
            continue
        v = 100 * r[split][metric]
        g["all"].append(v)
        g["seeds"].append(r["seed"])
        g["checkpoints"].setdefault(r.get("pretrain_seed", 1), []).append(v)
        if r.get("collapsed"):
            g["collapsed"] += 1
        else:
            g["kept"].append(v)
    return out


def _floor(results: dict, part: str, task: str, size) -> Optional[dict]:
    return next((f for f in results.get("floor", []) if f["part"] == part and f["task"] == task
                 and f.get("size") == size), None)


#: the floor's sampling error: FLOOR_Z times the binomial standard error of its test accuracy on the n test examples
#: (one standard error: issue 53's "about 0.5 points at 8,000 words"; 1.96 would make it a 95% interval, 1.05 points)
FLOOR_Z = 1.0
#: the floor states of a mean (:func:`floor_state`), as the report words them
FLOOR_WORDS = {"above": "above the floor", "at": "at the floor", "below": "below the floor"}
#: the unit of a test whose samples are fine-tuning seeds of one pretrained checkpoint (one pretraining run per row)
UNIT_SEEDS = "fine-tuning seeds of one checkpoint"


def floor_margin(floor: Optional[float], n: Optional[int]) -> Optional[float]:
    """The floor's test-set sampling error in points: FLOOR_Z * sqrt(p(1-p)/n) * 100 for its test accuracy p on
    the n test examples (about 0.5 points at 8,000); None without a floor or n."""
    return None if floor is None else binomial_margin(floor / 100, n, FLOOR_Z)


def floor_state(mean: Optional[float], floor: Optional[float], margin: Optional[float]) -> Optional[str]:
    """The report's one floor rule (the rows table, the probe and the conclusions read it): **above** when the mean
    exceeds the floor by more than the floor's sampling error, **below** when it is under it by more than that, and
    **at** the floor (neither) within it; None without a floor or a mean.  The floor is a non-neural reference a
    model should clear, not a law of training; a tokeniser comparison is drawn only where both rows are above (or
    where no floor was measured)."""
    if floor is None or mean is None:
        return None
    m = margin or 0.0
    return "above" if mean > floor + m else "below" if mean < floor - m else "at"


def _samples(g: dict) -> tuple[list, str]:
    """A group's samples for a test and their unit: the per-checkpoint means when the row was pretrained more than
    once (--lm-pretrain-seeds N >= 2: the pretraining runs are the unit), else every fine-tuning run."""
    ckpts = g.get("checkpoints", {})
    if len(ckpts) >= 2:
        return [sum(v) / len(v) for _, v in sorted(ckpts.items())], f"{len(ckpts)} pretraining runs"
    return g["all"], UNIT_SEEDS


def _superbizarre_analysis(results: dict, base: str) -> tuple[list, object]:
    """The Superbizarre entries (every row, init and labelled size: its floor state, its test against the baseline
    row and against its random-init control, with their samples' unit) and ``floor_of(task, size)``: the floor and
    its sampling error there."""
    sb = [dict(r, key=(r["task"], r["row"], r["init"], r.get("size"))) for r in results["finetune"]
          if r["part"] == "superbizarre"]
    groups = _group(sb, "accuracy")
    # the test examples of each task (the floor's n; the same first rows at every labelled size)
    n_test = {}
    for r in sb:
        if r.get("test", {}).get("examples"):
            n_test.setdefault(r["task"], r["test"]["examples"])
    table = []

    def floor_of(task, size):
        f = _floor(results, "superbizarre", task, size)
        value = 100 * f["test"]["accuracy"] if f else None
        return value, floor_margin(value, n_test.get(task))

    for (task, row, init, size), g in groups.items():
        first = next(r for r in sb if r["key"] == (task, row, init, size))
        floor, margin = floor_of(task, size)
        samples, unit = _samples(g)
        entry = {"task": task, "row": row, "init": init, "size": size, **summary(g["kept"]),
                 "all_runs": summary(g["all"]), "collapsed": g["collapsed"], "seeds_run": len(g["all"]),
                 "all": g["all"], "majority": 100 * first["majority"], "epochs": first.get("epochs"),
                 "tokens_per_example": first["tokens_per_example"], "floor": floor, "floor_margin": margin,
                 "checkpoints": {str(k): v for k, v in sorted(g["checkpoints"].items())}, "unit": unit}
        mean = entry["all_runs"]["mean"]
        entry["floor_state"] = floor_state(mean, floor, margin)
        entry["below_floor"] = entry["floor_state"] == "below"
        b = groups.get((task, base, "pretrained", size))
        if init == "pretrained" and row != base and b:
            b_samples, b_unit = _samples(b)
            if unit != b_unit:   # one side pretrained once: every fine-tuning run of both sides
                samples, b_samples, unit = g["all"], b["all"], UNIT_SEEDS
            entry["vs_baseline_p"] = welch(samples, b_samples)
            entry["vs_baseline_diff"] = (summary(samples)["mean"] - summary(b_samples)["mean"]
                                         if samples and b_samples else None)
            entry["vs_baseline_n"] = [len(samples), len(b_samples)]
            entry["vs_baseline_unit"] = unit
            entry["baseline_floor_state"] = floor_state(summary(b["all"])["mean"], floor, margin)
            # drawn only where both rows clear the floor by more than its sampling error (floor_state "above"; no
            # floor measured: drawn, as there is none to clear)
            entry["vs_baseline_drawn"] = (entry["floor_state"] in ("above", None)
                                          and entry["baseline_floor_state"] in ("above", None))
        c = groups.get((task, row, "random", size))
        if init == "pretrained" and c:
            entry["vs_control"] = compare(samples, c["all"], runs_a=len(g["all"]))
            entry["vs_control"]["unit"] = unit
            entry["control_all"] = summary(c["all"])
            entry["control_kept"] = summary(c["kept"])
            entry["control_collapsed"] = c["collapsed"]
        table.append(entry)
    return table, floor_of


def _probe_analysis(results: dict, floor_of) -> list:
    """The probe's entries: every row and labelled size, its pretrained encoder(s) against its random encoders."""
    probe = []
    by_row: dict = {}   # (task, row) -> the probe records of its pretraining runs
    for rec in results.get("probe", []):
        by_row.setdefault((rec["task"], rec["row"]), []).append(rec)
    for (task, row), recs in by_row.items():
        recs = sorted(recs, key=lambda r: r.get("pretrain_seed", 1))
        random_rec = next((r for r in recs if r.get("random")), recs[0])
        for size in recs[0]["sizes"]:
            pre = [100 * r["pretrained"][str(size)]["test"]["accuracy"] for r in recs]
            rand = [100 * v[str(size)]["test"]["accuracy"] for v in random_rec["random"].values()]
            floor, margin = floor_of(task, size)
            mean = sum(pre) / len(pre)
            unit = f"{len(pre)} pretraining runs" if len(pre) > 1 else "one pretrained encoder, as one draw"
            probe.append({"task": task, "row": row, "size": size, "pretrained": mean, "pretrained_all": pre,
                          "random": summary(rand), "floor": floor, "floor_margin": margin,
                          "floor_state": floor_state(mean, floor, margin), "unit": unit,
                          **compare(pre, rand, fine_tuned_a=False)})
    return probe


def analyse(results: dict) -> dict:
    """The statistics of the report (a dict, stored in results.json)."""
    base = results["meta"]["settings"]["baseline"]
    table, floor_of = _superbizarre_analysis(results, base)
    probe = _probe_analysis(results, floor_of)
    fl = [dict(r, key=(r["task"], r["encoding"], r["lr"])) for r in results["finetune"] if r["part"] == "flota"]
    flota = []
    clean, noisy = _group(fl, "macro_f1", "test"), _group(fl, "macro_f1", "test_noisy")
    for key, g in clean.items():
        task, enc, lr = key
        first = next(r for r in fl if r["key"] == key)
        n = noisy.get(key, {"kept": [], "all": []})
        std_clean = clean.get((task, "standard", lr), {"all": []})["all"]
        std_noisy = noisy.get((task, "standard", lr), {"all": []})["all"]
        dev = [100 * r["dev"]["macro_f1"] for r in fl if r["key"] == key and "dev" in r]
        flota.append({"task": task, "encoding": enc, "mode": first.get("mode"), "k": first.get("k"), "lr": lr,
                      "clean": summary(g["all"]), "noisy": summary(n["all"]), "collapsed": g["collapsed"],
                      "clean_kept": summary(g["kept"]), "clean_runs": len(g["all"]),
                      "dev": summary(dev), "tokens_per_example": first.get("tokens_per_example"),
                      "clean_diff": summary(g["all"])["mean"] - summary(std_clean)["mean"]
                      if g["all"] and std_clean else None,
                      "noisy_diff": summary(n["all"])["mean"] - summary(std_noisy)["mean"]
                      if n["all"] and std_noisy else None,
                      "clean_p": None if enc == "standard" else welch(g["all"], std_clean),
                      "noisy_p": None if enc == "standard" else welch(n["all"], std_noisy)})
    # one family: every test of the table (clean and noisy, every segmentation against the standard one)
    adjusted = holm([e["clean_p"] for e in flota] + [e["noisy_p"] for e in flota])
    for i, e in enumerate(flota):
        e["clean_p_holm"], e["noisy_p_holm"] = adjusted[i], adjusted[len(flota) + i]
    best_k = {}
    for e in flota:   # the paper's protocol: k (and lr) tuned on dev, per mode
        if e["mode"] and e["dev"]["mean"] is not None:
            cur = best_k.get((e["task"], e["mode"]))
            if cur is None or e["dev"]["mean"] > cur["dev"]["mean"]:
                best_k[(e["task"], e["mode"])] = e
    return {"superbizarre": table, "probe": probe, "flota": flota,
            "flota_tests": sum(p is not None for p in adjusted),
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


def _ci(c: dict) -> str:
    """``+2.1 [0.8, 3.4]``: a difference and its 95% interval."""
    if c.get("diff") is None:
        return "-"
    if c.get("low") is None:
        return f"{c['diff']:+.1f}"
    return f"{c['diff']:+.1f} [{c['low']:+.1f}, {c['high']:+.1f}]"


def _size(n) -> str:
    return "all" if not n else f"{n:,}"


def _fl(e: dict) -> str:
    """The floor and its sampling error: ``64.5 ± 1.0``."""
    if e.get("floor") is None:
        return "-"
    return _f(e["floor"]) + (f" ± {e['floor_margin']:.1f}" if e.get("floor_margin") is not None else "")


def _state(e: dict) -> str:
    """`` (below the floor)`` / `` (at the floor)`` after a mean that does not clear the floor, else nothing."""
    state = e.get("floor_state")
    return f" ({FLOOR_WORDS[state]})" if state in ("at", "below") else ""


def _unit(test: Optional[str], unit: str, n: list) -> str:
    """``Welch; fine-tuning seeds of one checkpoint (5 v 5)``: which test, on which samples."""
    name = {"welch": "Welch", "prediction": "prediction-interval t"}.get(test or "", "Welch")
    return f"{name}; {unit} ({n[0]} v {n[1]})"


def _run_label(r: dict) -> str:
    """A pretraining record's row label, with its pretraining seed after the first (--lm-pretrain-seeds)."""
    seed = r.get("pretrain_seed", 1)
    return r["label"] + (f" (pretraining seed {seed})" if seed > 1 else "")


def pretraining_table(results: dict) -> list:
    head = ["row", "updates", "sequences", "tokens", "epochs", "tokens/word", "valid loss/token (bits)",
            "valid loss/word (bits)", "valid loss/char (bits)", "wall (min)"]
    rows = [head]
    for r in results["pretraining"]:
        rows.append([_run_label(r), f"{r['updates']:,}", f"{r['sequences']:,}", f"{r['tokens']:,}", _f(r["epochs"], 2),
                     _f(r["tokens_per_word"], 2), _f(r["valid_loss_per_token"], 3), _f(r["valid_loss_per_word"], 2),
                     _f(r["valid_loss_per_char"], 3), _f(r["seconds"] / 60, 1)])
    return rows


def pppl_table(results: dict) -> list:
    """Pseudo-perplexity per word of each pretrained row on held-out text, clean and with inflection noise."""
    head = ["row", "held-out words", "tokens/word", "pseudo-perplexity/word clean", "bits/word clean",
            "floor: piece unigram clean", "pseudo-perplexity/word inflection noise", "bits/word inflection noise",
            "floor: piece unigram noise", "noise cost (bits/word)"]
    out = [head]
    for r in results["pretraining"]:
        c, n = r.get("pppl_clean"), r.get("pppl_noisy")
        if not c:
            continue
        out.append([r["label"], f"{c['words']:,}", _f(c["tokens_per_word"], 2), _f(c["pppl_per_word"], 1),
                    _f(c["bits_per_word"], 2), _f(c.get("unigram_bits_per_word"), 2),
                    _f(n["pppl_per_word"], 1) if n else "-", _f(n["bits_per_word"], 2) if n else "-",
                    _f(n.get("unigram_bits_per_word"), 2) if n else "-",
                    f"{n['bits_per_word'] - c['bits_per_word']:+.2f}" if n else "-"])
    return out if len(out) > 1 else []


def _labels(results: dict) -> dict:
    return {r["row"]: r["label"] for r in results["pretraining"]}


def _entries(results: dict, task: str, **match) -> list:
    return [e for e in results["analysis"]["superbizarre"] if e["task"] == task
            and all(e.get(k) == v for k, v in match.items())]


def learning_curve_table(results: dict, task: str, row: str) -> list:
    """The baseline row pretrained against random init at every labelled size, beside the floor."""
    head = ["labelled words", "epochs", "floor (char n-gram NB) ± sampling error", "pretrained: all runs", "kept",
            "collapsed",
            "random init: all runs", "kept", "collapsed", "difference [95% CI]", "p", "verdict", "test; unit (n)"]
    out = [head]
    for e in sorted(_entries(results, task, row=row, init="pretrained"), key=lambda e: e["size"] or 10 ** 12):
        if "vs_control" not in e:
            continue
        c = e["vs_control"]
        out.append([_size(e["size"]), str(e.get("epochs") or "-"), _fl(e), _ms(e["all_runs"]) + _state(e), _ms(e),
                    f"{e['collapsed']} / {e['seeds_run']}", _ms(e["control_all"]), _ms(e["control_kept"]),
                    f"{e['control_collapsed']} / {e['control_all']['n']}", _ci(c), _p(c["p"]), c["verdict"],
                    _unit(c.get("test"), c.get("unit", UNIT_SEEDS) + " against random inits", c["n"])])
    return out if len(out) > 1 else []


def _vs_baseline(e: dict, base_label: str) -> str:
    """The rows table's comparison cell: the difference, its mark and p where drawn, else why it is not."""
    if "vs_baseline_p" not in e:
        return ""
    if e["floor_state"] in ("at", "below"):
        return f"not drawn: this row is {FLOOR_WORDS[e['floor_state']]}"
    if e["baseline_floor_state"] in ("at", "below"):
        return f"not drawn: {base_label} is {FLOOR_WORDS[e['baseline_floor_state']]}"
    diff, p = e["vs_baseline_diff"], e["vs_baseline_p"]
    return f"{_f(diff, 1)}{_mark(diff, p)} (p {_p(p)})"


def rows_table(results: dict, task: str) -> list:
    """Every pretrained row at every labelled size, against the baseline row and the floor."""
    labels = _labels(results)
    base = results["meta"]["settings"]["baseline"]
    head = ["row", "labelled words", "test accuracy: all runs", "kept runs", "collapsed",
            "floor (char n-gram NB) ± sampling error", "vs Unigram (diff, p)", "test; unit (n)", "tokens per word",
            "per seed (| between checkpoints)"]
    out = [head]
    for e in sorted(_entries(results, task, init="pretrained"), key=lambda e: e["size"] or 10 ** 12):
        unit = _unit("welch", e["vs_baseline_unit"], e["vs_baseline_n"]) if "vs_baseline_unit" in e else ""
        seeds = " | ".join(" ".join(f"{v:.1f}" for v in vals) for vals in e.get("checkpoints", {}).values()) \
            if len(e.get("checkpoints", {})) > 1 else " ".join(f"{v:.1f}" for v in e["all"])
        out.append([labels.get(e["row"], e["row"]) + _state(e), _size(e["size"]), _ms(e["all_runs"]), _ms(e),
                    f"{e['collapsed']} / {e['seeds_run']}", _fl(e), _vs_baseline(e, labels.get(base, base)), unit,
                    _f(e["tokens_per_example"], 2), seeds])
    return out


def probe_table(results: dict, task: str) -> list:
    labels = _labels(results)
    head = ["row", "labelled words", "floor (char n-gram NB) ± sampling error", "pretrained encoder",
            "random encoders (mean ± sd)", "difference [95% CI]", "p", "verdict", "test; unit (n)"]
    out = [head]
    for e in results["analysis"].get("probe", []):
        if e["task"] == task:
            pre = e.get("pretrained_all") or [e["pretrained"]]
            out.append([labels.get(e["row"], e["row"]), _size(e["size"]), _fl(e),
                        (_ms(summary(pre)) if len(pre) > 1 else _f(e["pretrained"])) + _state(e),
                        _ms(e["random"]), _ci(e), _p(e["p"]), e["verdict"],
                        _unit(e.get("test"), e.get("unit", "one pretrained encoder, as one draw") + " against random "
                              "encoders", e["n"])])
    return out if len(out) > 1 else []


def flota_table(results: dict) -> list:
    head = ["data", "segmentation", "k", "lr", "dev F1", "test F1 clean", "diff", "p", "p (Holm)", "test F1 noisy",
            "diff", "p", "p (Holm)", "collapsed", "tokens per example"]
    out = [head]
    for e in results["analysis"]["flota"]:
        name = "standard" if e["mode"] is None else e["mode"].upper()
        m = bool(e["mode"])
        out.append([e["task"], name, "-" if e["k"] is None else str(e["k"]), f"{e['lr']:g}", _ms(e["dev"]),
                    _ms(e["clean"]), _f(e["clean_diff"]) if m else "", _p(e["clean_p"]) if m else "",
                    _p(e["clean_p_holm"]) if m else "", _ms(e["noisy"]), _f(e["noisy_diff"]) if m else "",
                    _p(e["noisy_p"]) if m else "", _p(e["noisy_p_holm"]) if m else "",
                    f"{e['collapsed']} / {e['clean_runs']}", _f(e["tokens_per_example"], 1)])
    for f in results.get("floor", []):
        if f["part"] == "flota":
            out.append([f["task"], "floor (char n-gram NB)", "-", "-", _f(100 * f["dev"]["macro_f1"]),
                        _f(100 * f["test"]["macro_f1"]), "", "", "",
                        _f(100 * f["test_noisy"]["macro_f1"]) if "test_noisy" in f else "-", "", "", "", "", ""])
    for f in results.get("piece_floor", []):   # the matched floor: the same Naive Bayes over each segmentation's pieces
        name = "standard" if f.get("mode") is None else f["mode"].upper()
        out.append([f["task"], f"matched NB floor ({name} pieces)", "-" if f.get("k") is None else str(f["k"]), "-",
                    _f(100 * f["dev"]["macro_f1"]), _f(100 * f["test"]["macro_f1"]), "", "", "",
                    _f(100 * f["test_noisy"]["macro_f1"]) if "test_noisy" in f else "-", "", "", "", "", ""])
    return out


def _verdict_line(what: str, size, c: dict, e: Optional[dict] = None) -> str:
    where = f" at {_size(size)} labelled words"
    core = f"{_ci(c)} points, p {_p(c['p'])}"
    if c["verdict"] == "helped":
        text = f"{what}{where}: pretraining **helped** ({core})"
    elif c["verdict"] == "hurt":
        text = f"{what}{where}: pretraining **hurt** ({core})"
    elif c["verdict"] == "no effect":
        text = (f"{what}{where}: **no effect** of pretraining (the 95% interval of the difference, {core}, lies "
                f"inside ±{HELPED_POINTS:g} point)")
    else:
        text = (f"{what}{where}: **undetermined** ({core}): the 95% interval lies neither wholly at or beyond "
                f"±{HELPED_POINTS:g} point (over >= {HELPED_SEEDS} runs a side) nor inside ±{HELPED_POINTS:g}")
    state = (e or {}).get("floor_state")
    if state in ("at", "below"):
        mean = e["all_runs"]["mean"] if "all_runs" in e else e["pretrained"]
        text += f"; the pretrained model is {FLOOR_WORDS[state]} there ({mean:.1f} against {_fl(e)})"
    return text + "."


def _floor_lines(a: dict, labels: dict) -> list:
    """The conclusions' line on the rows that do not clear the floor (the floor rule: :func:`floor_state`)."""
    short = [e for e in a["superbizarre"] if e["init"] == "pretrained" and e.get("floor_state") in ("at", "below")]
    if not short:
        return []
    return ["At or below the character n-gram floor (within its sampling error, or under it by more; no tokeniser "
            "comparison is drawn from them): " + ", ".join(
                f"{labels.get(e['row'], e['row'])} at {_size(e['size'])} words ({e['all_runs']['mean']:.1f} against "
                f"{_fl(e)}: {FLOOR_WORDS[e['floor_state']]})" for e in short) + "."]


def _row_lines(a: dict, labels: dict, baseline: str) -> list:
    """The conclusions' lines on the tokeniser comparisons drawn (both rows above the floor) at each size."""
    out = []
    for e in a["superbizarre"]:
        if not e.get("vs_baseline_drawn") or e.get("vs_baseline_p") is None:
            continue
        where = f"on {e['task']} at {_size(e['size'])} labelled words"
        unit = _unit("welch", e["vs_baseline_unit"], e["vs_baseline_n"])
        if e["vs_baseline_p"] >= HELPED_P:
            out.append(f"{labels[e['row']]} against {labels.get(baseline, baseline)} {where}: "
                       f"{e['vs_baseline_diff']:+.1f} points, p {_p(e['vs_baseline_p'])} ({unit}): no difference "
                       "shown (both above the floor).")
            continue
        base = next(b for b in a["superbizarre"] if b["task"] == e["task"] and b["row"] == baseline
                    and b["init"] == "pretrained" and b["size"] == e["size"])
        lengths = ""
        if base.get("tokens_per_example") and e.get("tokens_per_example"):
            lengths = (f"; its inputs are {e['tokens_per_example']:.2f} tokens per word against "
                       f"{base['tokens_per_example']:.2f}: part of the difference can be a sequence-length effect")
        out.append(f"{labels[e['row']]} differs from {labels.get(baseline, baseline)} on {e['task']} by "
                   f"{e['vs_baseline_diff']:+.1f} points at {_size(e['size'])} labelled words (p "
                   f"{_p(e['vs_baseline_p'])}, {unit}; both above the floor){lengths}.")
    return out


def conclusions(results: dict) -> list:
    """What this run can and cannot conclude, computed from its numbers."""
    a, s = results["analysis"], results["meta"]["settings"]
    labels = _labels(results)
    out = []
    for e in sorted(a["superbizarre"], key=lambda e: (e["task"], e["row"], e["size"] or 10 ** 12)):
        if e["init"] == "pretrained" and "vs_control" in e:
            out.append(_verdict_line(f"{labels.get(e['row'], e['row'])} ({e['task']}, fine-tuned)", e["size"],
                                     e["vs_control"], e))
    for e in a.get("probe", []):
        out.append(_verdict_line(f"{labels.get(e['row'], e['row'])} ({e['task']}, frozen-encoder probe)", e["size"],
                                 e, e))
    out += _floor_lines(a, labels)
    out += _row_lines(a, labels, s["baseline"])
    collapsed = sum(e["collapsed"] for e in a["superbizarre"]) + sum(e["collapsed"] for e in a["flota"])
    out.append(f"{collapsed} fine-tuning run(s) collapsed to one class: they count in the means over all runs and "
               "are left out of the 'kept' means." if collapsed else "No fine-tuning run collapsed to one class.")
    n_pre = s.get("pretrain_seeds", 1) or 1
    if n_pre > 1:
        out.append(f"Each row was pretrained {n_pre} times (seeds 1-{n_pre}) and fine-tuned on each checkpoint: the "
                   f"row comparisons and the pretrained-vs-random tests take the {n_pre} per-checkpoint means as "
                   "their samples (unit: pretraining runs), so they cover the variance of pretraining; the FLOTA "
                   "table and the pseudo-perplexity use the first checkpoint.")
    else:
        out.append("Each row was pretrained once: the variance of pretraining itself (its seed, its data order) is not "
                   "covered; the seeds vary fine-tuning (and, for a random-init control, the random weights) only, "
                   "so a row comparison is a statement about two checkpoints (--lm-pretrain-seeds N pretrains each "
                   "row N times and tests the per-checkpoint means).")
    for sel in a.get("flota_dev_selected", []):   # the paper's protocol: k tuned on dev, then test (Tables 2 and 4)
        pick = next(e for e in a["flota"] if e["task"] == sel["task"] and e["mode"] == sel["mode"]
                    and e["k"] == sel["k"] and e["lr"] == sel["lr"])
        std = next((e for e in a["flota"] if e["task"] == sel["task"] and e["mode"] is None
                    and e["lr"] == sel["lr"]), None)
        if std is None:
            continue
        holds = [cond for cond in ("clean", "noisy") if pick[f"{cond}_p_holm"] is not None
                 and pick[f"{cond}_p_holm"] < HELPED_P]
        verdict = ("significant after Holm's correction: " + " and ".join(holds)) if holds else \
            "not significant after Holm's correction, clean or noisy"
        out.append(f"{sel['mode'].upper()} with k = {sel['k']} (selected on dev macro F1) on {sel['task']}: macro F1 "
                   f"{_ms(pick['clean'])} clean against {_ms(std['clean'])} for the standard segmentation (p "
                   f"{_p(pick['clean_p'])}, Holm {_p(pick['clean_p_holm'])}), {_ms(pick['noisy'])} against "
                   f"{_ms(std['noisy'])} with whitespace noise (p {_p(pick['noisy_p'])}, Holm "
                   f"{_p(pick['noisy_p_holm'])}): {verdict}; {_f(pick['tokens_per_example'], 1)} tokens per title "
                   f"against {_f(std['tokens_per_example'], 1)}.")
    for f in results.get("floor", []):
        cells = [e for e in a["flota"] if e["task"] == f["task"] and e["clean"]["mean"] is not None]
        if f["part"] == "flota" and cells and max(e["clean"]["mean"] for e in cells) < 100 * f["test"]["macro_f1"]:
            out.append(f"Every FLOTA-table cell on {f['task']} is below the non-neural floor ({max(e['clean']['mean'] for e in cells):.1f} "
                       f"at best against {100 * f['test']['macro_f1']:.1f} macro F1): the fine-tuned models are "
                       "under-trained there, and differences between segmentations are read as such.")
    if a["flota"]:
        out.append(f"The FLOTA table makes {a['flota_tests']} tests (every segmentation against the standard one, "
                   f"clean and noisy): about {a['flota_tests'] * HELPED_P:.1f} would fall under p < {HELPED_P} by "
                   "chance alone, hence Holm's correction beside the raw p.")
        corpus = ", ".join(s["corpus"]) if isinstance(s["corpus"], list) else s["corpus"]
        mech = (" The model was pretrained on in-domain text (the ArXiv titles), so the long pieces FLOTA keeps "
                "have embeddings learned in the domain: the table tests the paper's mechanism (a few long, "
                "informative pieces per word) rather than the transfer of a general-domain model."
                if "arxiv" in corpus else "")
        out.append("FLOTA works over the row's own vocabulary (the baseline row's Unigram model, "
                   f"{s['vocab_size']:,} pieces), not BERT's, GPT-2's or XLNet's as in the paper; the FLOTA table "
                   "is the paper's question asked of this model." + mech)
    return out


# --- plots ----------------------------------------------------------------------------------------------------

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
        axes[0].plot(x, y, marker="o", label=_run_label(r))
        axes[1].plot(x, [v * r["valid_loss_per_word"] / r["valid_loss_per_token"] if r["valid_loss_per_token"]
                         else None for v in y], marker="o", label=_run_label(r))
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
        if e["all_runs"]["mean"] is not None:
            ax.hlines(e["all_runs"]["mean"], i - 0.3, i + 0.3, color="black")
        if e["floor"] is not None:
            ax.hlines(e["floor"], i - 0.4, i + 0.4, color="tab:green", ls=":",
                      label="floor (char n-gram NB)" if i == 0 else None)
    ax.axhline(entries[0]["majority"], color="grey", ls="--", lw=1, label="majority class")
    ax.set_xticks(range(len(entries)))
    ax.set_xticklabels([f"{labels.get(e['row'], e['row'])}\n{e['init']}\n{_size(e['size'])}" for e in entries],
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


# --- the report -----------------------------------------------------------------------------------------------

NOTES = {
    "budget": "Every row had the same budget in updates (or, with --lm-budget epochs, in epochs); sequences, tokens "
              "and epochs are what each row saw, read from fairseq's log. Loss per token is not comparable across "
              "rows that segment differently; per word and per character are (per-token loss x tokens per word "
              "or per character of the validation text; the no-spaces rows count no space tokens).",
    "pppl": "Pseudo-perplexity per word (BITE paper, section 4.3; Salazar et al. 2020): every position of a sentence "
            "masked in turn, the log-probabilities of the true pieces summed, exp(-total / words of the raw text), "
            "so rows that segment differently are comparable. Held-out text: the first lines of the validation "
            "split, clean and with the demo's inflection noise (the same seeded re-inflection for every row). "
            "Floor: the same pieces scored without context, by their add-one frequencies in the row's binarized "
            "training split (bits per word of the raw text); a row above its floor learned nothing from context.",
    "curve": "Test accuracy (points) of the best dev epoch on the same test words at every size; the same number "
             "of updates at every labelled size (epochs = updates / updates per epoch). 'All runs': mean ± sd of "
             "every seed; 'kept': without the runs that collapsed to one class on dev. Difference: pretrained minus "
             "random init, its 95% interval and Welch's p. Verdict (the interval, not only the point): helped "
             "(the whole 95% interval at or above +1 point, >= 5 fine-tuning runs a side), hurt (the mirror), no "
             "effect (the interval inside ±1 point), else undetermined. Test; unit: the samples of the test: the "
             "fine-tuning seeds of one checkpoint (one pretraining run per row), or with --lm-pretrain-seeds N >= 2 "
             "the N per-checkpoint means (the pretraining runs are the unit) against the random inits' seeds. "
             "Floor: a character 3-6-gram Naive Bayes on the same training, dev and test rows "
             "(train_scripts/ngram_floor.py), a non-neural reference a model should clear, not a law of training "
             "(the space-as-token paper's RoBERTa-base, 71.4 on the whole Arxiv set, is 1.3 points above this floor's "
             f"70.1 there); ± its test-set sampling error, {FLOOR_Z:g} x sqrt(p(1-p)/n) points for its accuracy p on "
             "the n test words (about 0.5 points at 8,000). A mean more than that above the floor is above it, more "
             "than that below is below it, and within it is at the floor: neither above nor below.",
    "rows": "Every row at every labelled size. Test accuracy of the best dev epoch (points; all runs and kept runs "
            "as above). ▲/▼: Welch's t-test p < 0.05 against the Unigram row at the same size; the comparison is "
            "drawn only where both rows are above the floor by more than its sampling error (at or below the floor: "
            "not drawn, and the cell says which row). Test; unit: the samples, as above: the fine-tuning seeds of "
            "one checkpoint per row, or the per-checkpoint means of N pretraining runs per row.",
    "probe": "A linear probe on the frozen encoder (train_scripts/probe.py): the mean of the last layer's states "
             "and the <s> state of every word, a logistic regression (C chosen on dev) on the first N training "
             "words, scored on the test words. The pretrained encoder gives one deterministic score per "
             "pretraining run; the random encoders (the same architecture and dictionary, one per seed) a mean ± sd. "
             "One pretraining run: its score is one draw from a distribution with the random encoders' spread, not "
             "an exact number, so p is the prediction-interval t (t = (x - mean) / (sd x sqrt(1 + 1/n)), n - 1 "
             "degrees of freedom) and the interval is the difference's, x - mean ± t x sd x sqrt(1 + 1/n); with N >= "
             "2 pretraining runs, Welch's t-test of the N pretrained scores against the random ones. Verdict and "
             "floor as above.",
    "flota": "Macro F1 (points) of the best dev epoch, selected by dev macro F1 (the paper's A.2; "
             "--lm-flota-select noisy-dev selects on a noisy copy of dev, as the authors' noise runs did), on the "
             "clean test set and on a copy with unseen whitespace noise (each space dropped with the stated "
             "probability; the same noisy text for every segmentation); mean ± sd over all seeds. FLOTA, FIRST "
             "and LONGEST at k pieces per word over the same vocabulary as 'standard'; diff and p: against the "
             "standard segmentation (Welch's t-test); p (Holm): Holm's correction over every test of the table. The "
             "paper tunes k on dev: the row with the best dev F1 per mode is its protocol's pick. The floor row: "
             "the character n-gram Naive Bayes on the same rows; the matched NB floor rows: the same Naive Bayes "
             "over each segmentation's own pieces (train_scripts/ngram_floor.py, piece_floor), clean and noisy: "
             "what that segmentation's pieces alone tell a bag-of-pieces classifier.",
}


def _stage_time(meta: dict) -> str:
    st = meta.get("stage_seconds")
    if not st:
        return ""
    total = sum(st.values())
    return (f" Stages summed (this run and resumed ones): {total / 60:.0f} min of commands ("
            + ", ".join(f"{k} {v / 60:.0f}" for k, v in st.items()) + f"), so about {total / 60 / 2:.0f} min on "
            "two cores.")


def _intro(c: SimpleNamespace) -> list:
    results = c.results
    s, meta = results["meta"]["settings"], results["meta"]
    data = results["data"]
    leak = data.get("leakage")
    leakage = "" if not leak else (
        f" Leakage rules of the ArXiv corpus (train_scripts/demo/pretraining/corpus.py): of {leak['titles']:,} ArXiv-L training "
        f"titles, {leak['removed_heldout_title']:,} equal to an ArXiv-S/L dev or test title, "
        f"{leak['removed_superbizarre_word']:,} containing a Superbizarre dev or test derivative as a word"
        + (f" and {leak['removed_superbizarre_stem']:,} more containing one by stem (a word lower-cased, split at "
           "and joined across hyphens, with one final -s, -es, -ed or -ing removed, equal to a derivative: "
           "'semirings', 'device-free')" if "removed_superbizarre_stem" in leak else "")
        + f" were removed; {leak['kept']:,} kept.")
    corpus = ", ".join(s["corpus"]) if isinstance(s["corpus"], list) else s["corpus"]
    sizes = ", ".join(_size(n) for n in s.get("ft_sizes", []))
    budget = (f"{s['ft_updates']:,} updates at every labelled size" if s.get("ft_updates")
              else f"{s['ft_epochs']} epochs")
    intro = (f"Preset {s['preset']} ({s['note']}). Corpus: {corpus} ({data['train']['words']:,} training "
             f"words in {data['train']['documents']:,} documents, {data['valid']['words']:,} validation words; "
             f"each row's tokeniser learned on it).{leakage} "
             f"Superbizarre fine-tuning: {sizes} labelled words, {budget}, batch {s['ft_batch']}, lr "
             f"{s['ft_lr']:g}, weight decay {s.get('ft_wd', 0.1):g}, dev and test the first {s['ft_rows'] or 'all'} "
             f"rows, {s['seeds']} seeds; the recipe's own defaults are the authors' released scripts' (lr 2e-5, "
             "weight decay 0.1, 20 epochs; the paper's Table 10 values with --paper-table10: "
             "docs/paper-scale-roberta.md). "
             f"Run {meta['date']}, {meta['seconds'] / 60:.0f} min, {s['jobs']} runs at a time with {s['threads']} "
             f"thread(s) each; load average at the end {', '.join(f'{x:.2f}' for x in meta['load'] or [])}."
             + _stage_time(meta))
    return [Section("Pretraining -> fine-tuning (RoBERTa)", [Para(intro)])]


def _table(heading: str, table: Optional[list], note: str, plot: Optional[str] = None, plots: dict = None) -> list:
    """A subsection of one table, its note and its plot (when drawn); none without a table."""
    if not table:
        return []
    image = [Image(plot, plots[plot])] if plots and plot in plots else []
    return [Section(heading, [Table(table), Para(note)] + image, level=3)]


def _budget(c: SimpleNamespace) -> list:
    return _table("Pretraining budget and loss", pretraining_table(c.results), NOTES["budget"],
                  "pretraining_curves", c.plots)


def _pppl(c: SimpleNamespace) -> list:
    return _table("Pseudo-perplexity per word on held-out text (BITE's question, section 4.3)",
                  pppl_table(c.results), NOTES["pppl"])


def _superbizarre(c: SimpleNamespace) -> list:
    s = c.results["meta"]["settings"]
    out = []
    for task in s["tasks"]:
        out += _table(f"Superbizarre {task}: pretrained against random init, by labelled size",
                      learning_curve_table(c.results, task, s["baseline"]), NOTES["curve"], "learning_curve", c.plots)
        out += _table(f"Superbizarre {task}: frozen-encoder probe", probe_table(c.results, task), NOTES["probe"])
        out += _table(f"Superbizarre {task}: rows", rows_table(c.results, task), NOTES["rows"], "superbizarre_seeds",
                      c.plots)
    return out


def _flota(c: SimpleNamespace) -> list:
    if not c.results["analysis"]["flota"]:
        return []
    s = c.results["meta"]["settings"]
    return _table(f"FLOTA on the pretrained {s['baseline']} model (ArXiv-{s['flota_set']}, "
                  f"{', '.join(s['flota_areas'])}; noise p {s['noise_p']})", flota_table(c.results), NOTES["flota"],
                  "flota_k", c.plots)


def _conclusions(c: SimpleNamespace) -> list:
    results = os.path.join(c.relative, "results.json")
    return [Section("What this run can and cannot conclude",
                    [Bullets(conclusions(c.results)),
                     Para(f"Command: `{c.results['meta']['command']}`; results: `{results}`.")], level=3)]


#: the pretraining part's report, in order: one function per section (``train_scripts/demo/report_document.py``)
SECTIONS = [_intro, _budget, _pppl, _superbizarre, _flota, _conclusions]


def sections(results: dict, outdir: str, relative: str = "") -> list:
    """The part's report sections (its plots drawn into ``outdir``); ``relative``: the part's folder as the report
    that shows them names it (the demo's report: ``pretraining``)."""
    context = SimpleNamespace(results=results, outdir=outdir, relative=relative, plots=_plots(results, outdir))
    return document.collect(SECTIONS, context)


def _plots(results: dict, outdir: str) -> dict:
    """{name: PNG path} of the part's plots that have data, drawn into ``outdir``."""
    drawn = {name: draw(results, os.path.join(outdir, f"{name}.png"))
             for name, draw in (("pretraining_curves", _plot_curves), ("learning_curve", _plot_learning_curve),
                                ("superbizarre_seeds", _plot_seeds), ("flota_k", _plot_flota))}
    return {name: path for name, path in drawn.items() if path}


def write_report(results: dict, outdir: str) -> dict:
    """The part's own REPORT.md and report.html in its folder (the demo's report has them too)."""
    parts = sections(results, outdir)
    paths = document.write(parts, outdir, "Pretraining -> fine-tuning")
    return {**paths, "plots": [b.path for s in parts for b in s.blocks if isinstance(b, Image)]}
