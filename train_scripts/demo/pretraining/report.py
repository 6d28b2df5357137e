"""The pretraining part of the demo's report (``train_scripts/demo/pretraining/part.py``): tables, prose and
sections.  Its statistics are :func:`analysis.analyse`'s (``train_scripts/demo/pretraining/analysis.py``, on the
demo's one policy, ``train_scripts/demo/policy.py``), its plots ``pretraining/plots.py``'s, its number formats
``train_scripts/demo/report_format.py``'s; :func:`write_report` writes ``REPORT.md`` and a self-contained
``report.html`` (plots embedded) into the part's folder from :func:`sections`, which the demo's one report shows
too (``train_scripts/demo/demo_report.py``).
"""
from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Optional

from train_scripts.demo import policy
from train_scripts.demo import report_document as document
from train_scripts.demo import report_format as fmt
from train_scripts.demo.pretraining.analysis import (  # noqa: F401  (the part's statistics, by their old names)
    FLOOR_WORDS,
    FLOOR_Z,
    UNIT_SEEDS,
    analyse,
    floor_margin,
    floor_state,
    run_label,
    size_label,
)
from train_scripts.demo.pretraining.analysis import labels as row_labels
from train_scripts.demo.pretraining.plots import PLOTS
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

# --- formatting -----------------------------------------------------------------------------------------------

def _fl(e: dict) -> str:
    """The floor and its sampling error: ``64.5 ± 0.5``."""
    return fmt.with_error(e.get("floor"), e.get("floor_margin"))


def _state(e: dict) -> str:
    return policy.floor_note(e.get("floor_state"))


def _unit(test: Optional[str], unit: str, n: list) -> str:
    """``Welch; fine-tuning seeds of one checkpoint (5 v 5)``: which test, on which samples."""
    name = {"welch": "Welch", "prediction": "prediction-interval t"}.get(test or "", "Welch")
    return f"{name}; {unit} ({n[0]} v {n[1]})"


def pretraining_table(results: dict) -> list:
    head = ["row", "updates", "sequences", "tokens", "epochs", "tokens/word", "valid loss/token (bits)",
            "valid loss/word (bits)", "valid loss/char (bits)", "wall (min)"]
    rows = [head]
    for r in results["pretraining"]:
        rows.append([run_label(r), f"{r['updates']:,}", f"{r['sequences']:,}", f"{r['tokens']:,}", fmt.num(r["epochs"], 2),
                     fmt.num(r["tokens_per_word"], 2), fmt.num(r["valid_loss_per_token"], 3), fmt.num(r["valid_loss_per_word"], 2),
                     fmt.num(r["valid_loss_per_char"], 3), fmt.num(r["seconds"] / 60, 1)])
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
        out.append([r["label"], f"{c['words']:,}", fmt.num(c["tokens_per_word"], 2), fmt.num(c["pppl_per_word"], 1),
                    fmt.num(c["bits_per_word"], 2), fmt.num(c.get("unigram_bits_per_word"), 2),
                    fmt.num(n["pppl_per_word"], 1) if n else fmt.DASH, fmt.num(n["bits_per_word"], 2) if n else fmt.DASH,
                    fmt.num(n.get("unigram_bits_per_word"), 2) if n else fmt.DASH,
                    f"{n['bits_per_word'] - c['bits_per_word']:+.2f}" if n else fmt.DASH])
    return out if len(out) > 1 else []


def _entries(results: dict, task: str, **match) -> list:
    return [e for e in results["analysis"]["superbizarre"] if e["task"] == task
            and all(e.get(k) == v for k, v in match.items())]


def learning_curve_table(results: dict, task: str, row: str) -> list:
    """The baseline row pretrained against random init at every labelled size, beside the floor."""
    head = ["labelled words", "epochs", "floor (char n-gram NB) ± sampling error", "pretrained: all runs", "kept",
            "collapsed", "random init: all runs", "kept", "collapsed", "difference [95% CI]", "p", "p (Holm)",
            "verdict", "test; unit (n)"]
    out = [head]
    for e in sorted(_entries(results, task, row=row, init="pretrained"), key=lambda e: e["size"] or 10 ** 12):
        if "vs_control" not in e:
            continue
        c = e["vs_control"]
        out.append([size_label(e["size"]), str(e.get("epochs") or fmt.DASH), _fl(e),
                    fmt.mean_sd(e["all_runs"]) + _state(e), fmt.mean_sd(e), f"{e['collapsed']} / {e['seeds_run']}",
                    fmt.mean_sd(e["control_all"]), fmt.mean_sd(e["control_kept"]),
                    f"{e['control_collapsed']} / {e['control_all']['n']}", fmt.comparison(c), fmt.pval(c["p"]),
                    fmt.pval(c.get("holm_p")), c["verdict"],
                    _unit(c.get("test"), c.get("unit", UNIT_SEEDS) + " against random inits", c["n"])])
    return out if len(out) > 1 else []


def _mark(verdict: Optional[str]) -> str:
    """▲ / ▼ after a difference the policy calls higher / lower, else nothing."""
    return {"higher": f" {UP}", "lower": f" {DOWN}"}.get(verdict or "", "")


def _vs_baseline(e: dict, base_label: str) -> str:
    """The rows table's comparison cell: the difference, its mark, p and Holm's p where drawn, else why it is
    not (the policy's gate)."""
    if "vs_baseline_p" not in e:
        return ""
    gate = policy.gate_reason({"this row": e["floor_state"], base_label: e["baseline_floor_state"]})
    if gate:
        return gate
    verdict = e.get("vs_baseline_verdict")
    return (f"{fmt.signed(e['vs_baseline_diff'])}{_mark(verdict)} (p {fmt.pval(e['vs_baseline_p'])}, Holm "
            f"{fmt.pval(e.get('vs_baseline_p_holm'))}; {verdict})")


def rows_table(results: dict, task: str) -> list:
    """Every pretrained row at every labelled size, against the baseline row and the floor."""
    labels = row_labels(results)
    base = results["meta"]["settings"]["baseline"]
    head = ["row", "labelled words", "test accuracy: all runs", "kept runs", "collapsed",
            "floor (char n-gram NB) ± sampling error", f"vs {labels.get(base, base)} (diff, p, Holm; verdict)",
            "test; unit (n)", "tokens per word", "per seed (| between checkpoints)"]
    out = [head]
    for e in sorted(_entries(results, task, init="pretrained"), key=lambda e: e["size"] or 10 ** 12):
        unit = _unit("welch", e["vs_baseline_unit"], e["vs_baseline_n"]) if "vs_baseline_unit" in e else ""
        seeds = " | ".join(" ".join(f"{v:.1f}" for v in vals) for vals in e.get("checkpoints", {}).values()) \
            if len(e.get("checkpoints", {})) > 1 else " ".join(f"{v:.1f}" for v in e["all"])
        out.append([labels.get(e["row"], e["row"]) + _state(e), size_label(e["size"]), fmt.mean_sd(e["all_runs"]),
                    fmt.mean_sd(e), f"{e['collapsed']} / {e['seeds_run']}", _fl(e),
                    _vs_baseline(e, labels.get(base, base)), unit, fmt.num(e["tokens_per_example"], 2), seeds])
    return out


def probe_table(results: dict, task: str) -> list:
    labels = row_labels(results)
    head = ["row", "labelled words", "floor (char n-gram NB) ± sampling error", "pretrained encoder",
            "random encoders (mean ± sd)", "difference [95% CI]", f"p ({policy.EXPLORATORY})", "verdict",
            "test; unit (n)"]
    out = [head]
    for e in results["analysis"].get("probe", []):
        if e["task"] == task:
            pre = e.get("pretrained_all") or [e["pretrained"]]
            out.append([labels.get(e["row"], e["row"]), size_label(e["size"]), _fl(e),
                        (fmt.mean_sd(summary(pre)) if len(pre) > 1 else fmt.num(e["pretrained"])) + _state(e),
                        fmt.mean_sd(e["random"]), fmt.comparison(e), fmt.pval(e["p"]), e["verdict"],
                        _unit(e.get("test"), e.get("unit", "one pretrained encoder, as one draw") + " against random "
                              "encoders", e["n"])])
    return out if len(out) > 1 else []


def _flota_cell(e: dict, cond: str) -> str:
    """A FLOTA cell's mean ± sd, with its floor state where it does not clear the floor."""
    return fmt.mean_sd(e[cond]) + policy.floor_note(e.get(f"{cond}_floor_state"))


def _floor_value(f: dict, split: str, margin: Optional[float] = None) -> str:
    """A floor record's macro F1 on ``split`` (points), ± its sampling error when given."""
    return fmt.with_error(100 * f[split]["macro_f1"], margin) if split in f else fmt.DASH


def _tests(e: dict, key: str, adjusted: bool = True) -> list:
    """A FLOTA cell's test against the standard segmentation: diff, p (and Holm's p); blank for standard."""
    if not e["mode"]:
        return [""] * (3 if adjusted else 2)
    cells = [fmt.signed(e.get(f"{key}_diff")), fmt.pval(e.get(f"{key}_p"))]
    return cells + [fmt.pval(e.get(f"{key}_p_holm"))] if adjusted else cells


def flota_table(results: dict) -> list:
    """Every FLOTA cell on the pretrained model against the standard segmentation (clean and noisy: diff, p, Holm,
    the policy's verdict), then the random-weight control of the same encoding, then the floors."""
    head = ["data", "segmentation", "k", "lr", "dev F1", "test F1 clean", "diff", "p", "p (Holm)", "test F1 noisy",
            "diff", "p", "p (Holm)", "collapsed", "tokens per example", "verdict clean", "verdict noisy",
            "random init: clean", "diff", f"p ({policy.EXPLORATORY})", "random init: noisy", "diff",
            f"p ({policy.EXPLORATORY})"]
    out = [head]
    flota = results["analysis"]["flota"]
    for e in flota:
        name = "standard" if e["mode"] is None else e["mode"].upper()
        out.append([e["task"], name, fmt.DASH if e["k"] is None else str(e["k"]), f"{e['lr']:g}",
                    fmt.mean_sd(e["dev"]), _flota_cell(e, "clean"), *_tests(e, "clean"), _flota_cell(e, "noisy"),
                    *_tests(e, "noisy"), f"{e['collapsed']} / {e['clean_runs']}", fmt.num(e["tokens_per_example"], 1),
                    e.get("clean_verdict") or "", e.get("noisy_verdict") or "",
                    fmt.mean_sd(e.get("random_clean")), *_tests(e, "random_clean", adjusted=False),
                    fmt.mean_sd(e.get("random_noisy")), *_tests(e, "random_noisy", adjusted=False)])
    blank = [""] * (len(head) - 10)
    for f in results.get("floor", []):
        if f["part"] == "flota":
            cell = next((e for e in flota if e["task"] == f["task"]), {})
            out.append([f["task"], "floor (char n-gram NB) ± sampling error", fmt.DASH, fmt.DASH,
                        _floor_value(f, "dev"), _floor_value(f, "test", cell.get("clean_floor_margin")), "", "", "",
                        _floor_value(f, "test_noisy", cell.get("noisy_floor_margin")), *blank])
    for f in results.get("piece_floor", []):   # the matched floor: the same Naive Bayes over each segmentation's pieces
        name = "standard" if f.get("mode") is None else f["mode"].upper()
        out.append([f["task"], f"matched NB floor ({name} pieces)", fmt.DASH if f.get("k") is None else str(f["k"]),
                    fmt.DASH, _floor_value(f, "dev"), _floor_value(f, "test"), "", "", "",
                    _floor_value(f, "test_noisy"), *blank])
    return out


def _verdict_line(what: str, size, c: dict, e: Optional[dict] = None) -> str:
    where = f" at {size_label(size)} labelled words"
    core = f"{fmt.comparison(c)} points, p {fmt.pval(c['p'])}" + (
        f", Holm {fmt.pval(c['holm_p'])}" if c.get("holm_p") is not None else "")
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
                f"{labels.get(e['row'], e['row'])} at {size_label(e['size'])} words ({e['all_runs']['mean']:.1f} against "
                f"{_fl(e)}: {FLOOR_WORDS[e['floor_state']]})" for e in short) + "."]


def _row_lines(a: dict, labels: dict, baseline: str) -> list:
    """The conclusions' lines on the tokeniser comparisons drawn (both rows above the floor) at each size, by the
    policy's verdict on Holm's p."""
    out = []
    for e in a["superbizarre"]:
        if not e.get("vs_baseline_drawn") or e.get("vs_baseline_p") is None:
            continue
        where = f"on {e['task']} at {size_label(e['size'])} labelled words"
        unit = _unit("welch", e["vs_baseline_unit"], e["vs_baseline_n"])
        ps = f"p {fmt.pval(e['vs_baseline_p'])}, Holm {fmt.pval(e.get('vs_baseline_p_holm'))}"
        if e.get("vs_baseline_verdict") not in ("higher", "lower"):
            out.append(f"{labels[e['row']]} against {labels.get(baseline, baseline)} {where}: "
                       f"{e['vs_baseline_diff']:+.1f} points ({ps}; {unit}): a difference {policy.NOT_SHOWN} (both "
                       "above the floor).")
            continue
        base = next(b for b in a["superbizarre"] if b["task"] == e["task"] and b["row"] == baseline
                    and b["init"] == "pretrained" and b["size"] == e["size"])
        lengths = ""
        if base.get("tokens_per_example") and e.get("tokens_per_example"):
            lengths = (f"; its inputs are {e['tokens_per_example']:.2f} tokens per word against "
                       f"{base['tokens_per_example']:.2f}: part of the difference can be a sequence-length effect")
        out.append(f"{labels[e['row']]} differs from {labels.get(baseline, baseline)} on {e['task']} by "
                   f"{e['vs_baseline_diff']:+.1f} points at {size_label(e['size'])} labelled words ({ps}, {unit}; "
                   f"both above the floor){lengths}.")
    return out


def _flota_verdict(pick: dict, std: dict) -> str:
    """The FLOTA conclusion's verdict, clean and noisy (the policy's words; not drawn: which cell is not above the
    floor)."""
    parts = []
    for cond, name in (("clean", "clean"), ("noisy", "with whitespace noise")):
        v = pick.get(f"{cond}_verdict") or policy.NOT_SHOWN
        if v == policy.NOT_DRAWN:
            v = policy.gate_reason({pick["mode"].upper(): pick.get(f"{cond}_floor_state"),
                                    "standard": std.get(f"{cond}_floor_state")})
        parts.append(f"{name}: {v}")
    return "; ".join(parts)


def _flota_control_line(pick: dict, std: dict) -> Optional[str]:
    """Whether FLOTA's effect needs pretraining: the same comparison on pretrained and on random weights."""
    if not pick.get("random_runs"):
        return None
    return (f"Does {pick['mode'].upper()}'s effect (k = {pick['k']}, {pick['task']}) need pretraining? On the "
            f"pretrained model {fmt.signed(pick['clean_diff'])} clean and {fmt.signed(pick['noisy_diff'])} noisy "
            f"macro F1 against the standard segmentation; on random weights {fmt.signed(pick['random_clean_diff'])} "
            f"clean (p {fmt.pval(pick['random_clean_p'])}: {pick['random_clean_verdict']}) and "
            f"{fmt.signed(pick['random_noisy_diff'])} noisy (p {fmt.pval(pick['random_noisy_p'])}: "
            f"{pick['random_noisy_verdict']}; {policy.EXPLORATORY}), random-weight means "
            f"{fmt.mean_sd(pick['random_clean'])} and {fmt.mean_sd(pick['random_noisy'])} against the standard "
            f"segmentation's {fmt.mean_sd(std.get('random_clean'))} and {fmt.mean_sd(std.get('random_noisy'))}.")


def conclusions(results: dict) -> list:
    """What this run can and cannot conclude, computed from its numbers."""
    a, s = results["analysis"], results["meta"]["settings"]
    labels = row_labels(results)
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
        out.append(f"{sel['mode'].upper()} with k = {sel['k']} (selected on dev macro F1) on {sel['task']}: macro F1 "
                   f"{fmt.mean_sd(pick['clean'])} clean against {fmt.mean_sd(std['clean'])} for the standard "
                   f"segmentation (p {fmt.pval(pick['clean_p'])}, Holm {fmt.pval(pick['clean_p_holm'])}), "
                   f"{fmt.mean_sd(pick['noisy'])} against {fmt.mean_sd(std['noisy'])} with whitespace noise (p "
                   f"{fmt.pval(pick['noisy_p'])}, Holm {fmt.pval(pick['noisy_p_holm'])}); "
                   f"{_flota_verdict(pick, std)}; {fmt.num(pick['tokens_per_example'], 1)} tokens per title against "
                   f"{fmt.num(std['tokens_per_example'], 1)}.")
        control = _flota_control_line(pick, std)
        if control:
            out.append(control)
    for f in results.get("floor", []):
        cells = [e for e in a["flota"] if e["task"] == f["task"] and e["clean"]["mean"] is not None]
        if f["part"] == "flota" and cells and max(e["clean"]["mean"] for e in cells) < 100 * f["test"]["macro_f1"]:
            out.append(f"Every FLOTA-table cell on {f['task']} is below the non-neural floor "
                       f"({max(e['clean']['mean'] for e in cells):.1f} at best against "
                       f"{100 * f['test']['macro_f1']:.1f} macro F1): the fine-tuned models are under-trained there, "
                       f"and no comparison between segmentations is drawn from them ({policy.NOT_DRAWN}).")
    family = a.get("family") or {}
    if family.get("tests"):
        out.append(f"Holm's correction runs over this part's {family['tests']} primary tests (pretrained against "
                   f"random init per size, every row against {labels.get(s['baseline'], s['baseline'])}, and the "
                   f"FLOTA table's {a['flota_tests']}: every segmentation against the standard one, clean and noisy); "
                   f"the probe's and the random-weight FLOTA tests are {policy.EXPLORATORY}. A difference whose "
                   f"Holm p is not under {policy.ALPHA} is {policy.NOT_SHOWN}, and one whose cells are not both "
                   f"above the floor is {policy.NOT_DRAWN}.")
    if a["flota"]:
        corpus = ", ".join(s["corpus"]) if isinstance(s["corpus"], list) else s["corpus"]
        mech = (" The model was pretrained on in-domain text (the ArXiv titles), so the long pieces FLOTA keeps "
                "have embeddings learned in the domain: the table tests the paper's mechanism (a few long, "
                "informative pieces per word) rather than the transfer of a general-domain model."
                if "arxiv" in corpus else "")
        out.append("FLOTA works over the row's own vocabulary (the baseline row's Unigram model, "
                   f"{s['vocab_size']:,} pieces), not BERT's, GPT-2's or XLNet's as in the paper; the FLOTA table "
                   "is the paper's question asked of this model." + mech)
    return out


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
             "every seed, the runs that collapsed to one class on dev included (the tests use them); 'kept': "
             "without them. Difference: pretrained minus random init, its 95% interval, Welch's p and its Holm "
             "adjustment over the part's primary tests (helped and hurt need the Holm p under 0.05 too). Verdict (the interval, not only the point): helped "
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
            "as above). ▲/▼ (higher / lower): Welch's t-test against the Unigram row at the same size, Holm-adjusted "
            "p < 0.05 over the part's primary tests; else the difference is not shown. The comparison is drawn only "
            "where both rows are above the floor by more than its sampling error (at or below the floor: not drawn, "
            "and the cell says which row). Test; unit: the samples, as above: the fine-tuning seeds of "
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
             "standard segmentation (Welch's t-test); p (Holm): Holm's correction over the part's primary tests "
             "(this table's clean and noisy tests among them); verdict: higher / lower / not shown by the Holm p, "
             "not drawn where the cell or the standard one is not above the character floor of its task (± its "
             "sampling error, one binomial standard error on the test titles, the macro F1 read as a proportion). "
             "Random init: the same segmentation fine-tuned from random weights (the control: does FLOTA's effect "
             "need pretraining?), its diff and p against the standard segmentation from random weights "
             "(exploratory, uncorrected); a dash where no random-weight runs exist. The "
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
    sizes = ", ".join(size_label(n) for n in s.get("ft_sizes", []))
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
    """{name: PNG path} of the part's plots that have data, drawn into ``outdir`` (``pretraining/plots.py``)."""
    drawn = {name: draw(results, os.path.join(outdir, f"{name}.png")) for name, draw in PLOTS}
    return {name: path for name, path in drawn.items() if path}


def write_report(results: dict, outdir: str) -> dict:
    """The part's own REPORT.md and report.html in its folder (the demo's report has them too)."""
    parts = sections(results, outdir)
    paths = document.write(parts, outdir, "Pretraining -> fine-tuning")
    return {**paths, "plots": [b.path for s in parts for b in s.blocks if isinstance(b, Image)]}
