"""The pretraining part's statistics (``train_scripts/demo/pretraining/report.py`` renders them): :func:`analyse`
turns the runs into what the report states, on the demo's one policy (``train_scripts/demo/policy.py``).

Superbizarre: mean ± sd over every run (collapsed ones counted, and the mean without them, "kept"), each row's
floor state, each row against the Unigram row (gated by the floor) and against its random-init control; the
frozen-encoder probe; the FLOTA table: every segmentation against the standard one, clean and noisy, on the
pretrained model (gated by the character floor of its task) and on random weights (the control: does FLOTA's
effect need pretraining?).  The primary family (Holm): pretrained against random per size, the rows against
the baseline, FLOTA against standard clean and noisy on the pretrained model; the probe's and the random-weight
FLOTA tests are exploratory, uncorrected.
"""
from __future__ import annotations

from typing import Optional

from train_scripts.demo import policy
from train_scripts.demo.policy import FLOOR_WORDS, FLOOR_Z, floor_margin, floor_state  # noqa: F401  (the part's names)
from train_scripts.demo.statistics import compare, summary, welch

#: the unit of a test whose samples are fine-tuning seeds of one pretrained checkpoint (one pretraining run per row)
UNIT_SEEDS = "fine-tuning seeds of one checkpoint"


def labels(results: dict) -> dict:
    """``{row: its label}`` of the pretrained rows."""
    return {r["row"]: r["label"] for r in results["pretraining"]}


def run_label(r: dict) -> str:
    """A pretraining record's row label, with its pretraining seed after the first (--lm-pretrain-seeds)."""
    seed = r.get("pretrain_seed", 1)
    return r["label"] + (f" (pretraining seed {seed})" if seed > 1 else "")


def size_label(n) -> str:
    """A labelled size: ``8,000``, or ``all``."""
    return "all" if not n else f"{n:,}"


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
            # drawn only where both rows clear the floor by more than its sampling error (the policy's gate)
            entry["vs_baseline_drawn"] = policy.drawn(entry["floor_state"], entry["baseline_floor_state"])
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




def _flota_cells(results: dict, init: str) -> dict:
    """``{(task, encoding, lr): {"clean": group, "noisy": group, "runs": [...]}}`` of the FLOTA runs from ``init``
    weights (older results have no ``init``: pretrained)."""
    fl = [dict(r, key=(r["task"], r["encoding"], r["lr"])) for r in results["finetune"]
          if r["part"] == "flota" and r.get("init", "pretrained") == init]
    clean, noisy = _group(fl, "macro_f1", "test"), _group(fl, "macro_f1", "test_noisy")
    return {key: {"clean": g, "noisy": noisy.get(key, {"kept": [], "all": [], "collapsed": 0}),
                  "runs": [r for r in fl if r["key"] == key]} for key, g in clean.items()}


def _flota_floor(results: dict, task: str, cond: str, n: Optional[int]) -> tuple:
    """The character floor of a FLOTA task on the clean (``test``) or noisy (``test_noisy``) test set, in macro F1
    points, and its sampling error on ``n`` examples; (None, None) without one."""
    # one floor per FLOTA task, whatever its rows (its record's size is --lm-flota-rows: 0 for all of them)
    f = next((f for f in results.get("floor", []) if f["part"] == "flota" and f["task"] == task), None)
    if not f or cond not in f:
        return None, None
    value = 100 * f[cond]["macro_f1"]
    return value, floor_margin(value, n)


def _flota_analysis(results: dict, family: policy.Family) -> list:
    """The FLOTA table's entries: each pretrained cell against the standard segmentation (primary tests), its
    floor states, and the random-weight control of the same encoding (exploratory tests)."""
    pre, rnd = _flota_cells(results, "pretrained"), _flota_cells(results, "random")
    flota = []
    for key, cell in pre.items():
        task, enc, lr = key
        first, g = cell["runs"][0], cell["clean"]
        e = {"task": task, "encoding": enc, "mode": first.get("mode"), "k": first.get("k"), "lr": lr,
             "collapsed": g["collapsed"], "clean_kept": summary(g["kept"]), "clean_runs": len(g["all"]),
             "dev": summary([100 * r["dev"]["macro_f1"] for r in cell["runs"] if "dev" in r]),
             "tokens_per_example": first.get("tokens_per_example")}
        std = pre.get((task, "standard", lr))
        for cond, split in (("clean", "test"), ("noisy", "test_noisy")):
            values = cell[cond]["all"]
            n = next((r[split]["examples"] for r in cell["runs"] if (r.get(split) or {}).get("examples")), None)
            floor, margin = _flota_floor(results, task, split, n)
            std_values = std[cond]["all"] if std else []
            e[cond] = summary(values)
            e.update({f"{cond}_floor": floor, f"{cond}_floor_margin": margin,
                      f"{cond}_floor_state": floor_state(e[cond]["mean"], floor, margin),
                      f"{cond}_diff": summary(values)["mean"] - summary(std_values)["mean"]
                      if values and std_values else None,
                      f"{cond}_p": None if enc == "standard" else welch(values, std_values)})
            if enc != "standard":
                family.primary(f"flota/{task}/{enc}/{lr:g}/{cond}", e[f"{cond}_p"])
            # the random-weight control: the same encoding from random weights, against standard from random weights
            r_cell, r_std = rnd.get(key), rnd.get((task, "standard", lr))
            r_values = r_cell[cond]["all"] if r_cell else []
            r_std_values = r_std[cond]["all"] if r_std else []
            e[f"random_{cond}"] = summary(r_values)
            e[f"random_{cond}_floor_state"] = floor_state(e[f"random_{cond}"]["mean"], floor, margin)
            e[f"random_{cond}_diff"] = (summary(r_values)["mean"] - summary(r_std_values)["mean"]
                                        if r_values and r_std_values else None)
            e[f"random_{cond}_p"] = None if enc == "standard" else welch(r_values, r_std_values)
            if enc != "standard" and r_values:
                family.exploratory(f"flota/{task}/{enc}/{lr:g}/{cond}/random", e[f"random_{cond}_p"])
        e["random_runs"] = len(rnd[key]["clean"]["all"]) if key in rnd else 0
        flota.append(e)
    return flota


def _judge(a: dict, family: policy.Family) -> None:
    """Every verdict of the analysis from the family's p-values (Holm over the primary tests), in place."""
    for e in a["superbizarre"]:
        name = f"superbizarre/{e['task']}/{e['row']}/{e['size']}"
        if "vs_control" in e:
            e["vs_control"]["holm_p"] = q = family.p(name + "/vs-random")
            e["vs_control"]["verdict"] = policy.control_verdict(e["vs_control"], q)
        if "vs_baseline_p" in e:
            e["vs_baseline_p_holm"] = q = family.p(name + "/vs-baseline")
            e["vs_baseline_verdict"] = policy.verdict(q, e["vs_baseline_diff"],
                                                      (e["floor_state"], e["baseline_floor_state"]))
    for e in a["probe"]:
        e["label"] = policy.EXPLORATORY
    standard = {(e["task"], e["lr"]): e for e in a["flota"] if e["encoding"] == "standard"}
    for e in a["flota"]:
        std = standard.get((e["task"], e["lr"])) or {}
        for cond in ("clean", "noisy"):
            name = f"flota/{e['task']}/{e['encoding']}/{e['lr']:g}/{cond}"
            e[f"{cond}_p_holm"] = None if e["encoding"] == "standard" else family.p(name)
            e[f"{cond}_verdict"] = None if e["encoding"] == "standard" else policy.verdict(
                e[f"{cond}_p_holm"], e[f"{cond}_diff"], (e[f"{cond}_floor_state"], std.get(f"{cond}_floor_state")))
            e[f"random_{cond}_verdict"] = None if e["encoding"] == "standard" or not e["random_runs"] else \
                policy.verdict(e[f"random_{cond}_p"], e[f"random_{cond}_diff"],
                               (e[f"random_{cond}_floor_state"], std.get(f"random_{cond}_floor_state")))


def analyse(results: dict) -> dict:
    """The statistics of the report (a dict, stored in results.json under "analysis")."""
    base = results["meta"]["settings"]["baseline"]
    table, floor_of = _superbizarre_analysis(results, base)
    probe = _probe_analysis(results, floor_of)
    family = policy.Family("pretraining")
    for e in table:
        name = f"superbizarre/{e['task']}/{e['row']}/{e['size']}"
        if "vs_control" in e:
            family.primary(name + "/vs-random", e["vs_control"]["p"])
        if "vs_baseline_p" in e:
            family.primary(name + "/vs-baseline", e["vs_baseline_p"])
    for e in probe:
        family.exploratory(f"probe/{e['task']}/{e['row']}/{e['size']}/vs-random", e["p"])
    flota = _flota_analysis(results, family)
    best_k = {}
    for e in flota:   # the paper's protocol: k (and lr) tuned on dev, per mode
        if e["mode"] and e["dev"]["mean"] is not None:
            cur = best_k.get((e["task"], e["mode"]))
            if cur is None or e["dev"]["mean"] > cur["dev"]["mean"]:
                best_k[(e["task"], e["mode"])] = e
    a = {"superbizarre": table, "probe": probe, "flota": flota,
         "flota_tests": sum(e[f"{c}_p"] is not None for e in flota for c in ("clean", "noisy")),
         "flota_dev_selected": [{"task": t, "mode": m, "k": e["k"], "lr": e["lr"]} for (t, m), e in best_k.items()],
         "family": family.record()}
    _judge(a, family)
    return a
