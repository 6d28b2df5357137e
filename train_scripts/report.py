"""REPORT.md and a self-contained report.html (plots embedded) for the scheme comparison (train_scripts/pipeline.py).

Input: ``results.json`` as the pipeline writes it: ``{"meta": {...}, "schemes": [row, ...]}``.  Every field is
optional except a row's ``name``: a missing value prints as "–", a plot without data is left out, so results
written by older versions of the pipeline still render.

A row (one scheme)::

    name, label, note, direction            "bite_unigram", "BITE+Unigram", free text, "en-de"
    tests       {"clean" | "infl" | "ws": {"bleu": S, "chrf": S}}   one entry per test set
                S = {"score", "mean", "ci", "p_value", "significant", ["identical_to_baseline"]}: what
                train_scripts.significance.compare() returns for the row (score; bootstrap mean and 95% CI
                half-width; paired test against the baseline row, None for the baseline itself)
    bleu, chrf  plain clean scores (older results; used when ``tests`` is missing)
    robustness  {"infl" | "ws": {"mean", "n", "mean_changed", "n_changed"}}: Ratcliff/Obershelp similarity of
                the row's *source* encoding of each clean test sentence and its perturbed copy
                (preprocess.evaluate.noise.mean_similarity)
    boundary    {"precision", "recall", "f1", "mean_pieces", "n_words", "skipped", "n_gold", "spelled",
                "coverage", "protocol", "gold"} (preprocess.evaluate.morph.evaluate; protocol "paper" or "all";
                pieces that do not spell a word are scored by the edges of the characters they cover)
    budget      {"updates", "sentences", "tgt_tokens", "src_tokens_est", "epochs", "train_pairs", ...}: what the
                training saw (pipeline.budget_seen)
    src_tok_per_sent, tgt_tok_per_sent, src_tok_per_word, tgt_tok_per_word   test-set lengths
    train_cpu_seconds   CPU seconds (user + system) of the training process and its children
    num_updates         updates trained (else meta["max_update"])
    train_seconds       wall seconds (older results; shown only when no CPU time is there)
    final_valid_loss, valid_curve ([[update, loss], ...])
    examples    [{"raw", "tokens", "raw_de", "tokens_de"}]: source and target, raw and encoded
    extra       scheme-specific intrinsic metrics, nested dicts of numbers/strings (rendered as tables)

``meta``::

    dataset, summary, preset ("cpu" | "gpu"), preset_note, preset_overrides {option: value given instead},
    baseline (a row name), max_update, seconds,
    noise        {"fraction", "seed", "files": {"infl": "test.infl.en", "ws": ...},
                  "stats": {"infl": {...}, "ws": {...}}}   (preprocess.evaluate.noise.perturb_lines counts)
    significance {"test", "test_name", "n_samples", "alpha", "n_sentences", "signatures": {"bleu", "chrf"}}
    bleu_signature, chrf_signature (else taken from the rows' ``bleu_signature`` / ``chrf_signature``)
    versions {package: version}, commands [str], skipped_stages [str]

    python -m train_scripts.report --results OUT/results.json --output OUT
"""
from __future__ import annotations

import argparse
import base64
import html
import json
import logging
import os
import sys
from typing import Optional

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from preprocess.common import run_main  # noqa: E402

logging.getLogger("matplotlib").setLevel(logging.WARNING)  # fairseq's imports may leave the root at DEBUG

DASH = "–"
TEST_SETS = (("clean", "clean"), ("infl", "inflection noise"), ("ws", "whitespace noise"))
NOISE_SETS = TEST_SETS[1:]
UP, DOWN = "▲", "▼"          # significantly higher / lower than the baseline row
PACKAGES = ("torch", "fairseq-fixed", "fairseq", "sentencepiece", "sacrebleu", "sacremoses", "nltk", "lemminflect",
            "HanTa", "matplotlib", "numpy")


def package_versions(packages=PACKAGES) -> dict:
    """Installed versions from the package metadata (HanTa, for one, has no ``__version__``)."""
    import platform
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


# --- reading rows --------------------------------------------------------------------------------------------

def _label(r: dict) -> str:
    return r.get("label") or r.get("name", "?")


def _score(r: dict, test: str, metric: str) -> Optional[dict]:
    """The score dict of a row on one test set; older rows have a bare clean float."""
    s = ((r.get("tests") or {}).get(test) or {}).get(metric)
    if isinstance(s, dict) and s.get("score") is not None:
        return s
    if test == "clean" and isinstance(r.get(metric), (int, float)):
        return {"score": float(r[metric])}
    return None


def _baseline(rows: list, meta: dict) -> Optional[dict]:
    name = meta.get("baseline")
    return next((r for r in rows if r.get("name") == name), None)


def _updates(r: dict, meta: dict):
    return r.get("num_updates") or meta.get("max_update")


def _fmt(value, digits=2, scale=1.0) -> str:
    if value is None:
        return DASH
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return f"{value * scale:.{digits}f}"
    return str(value)


def _mark(s: Optional[dict], base: Optional[dict]) -> str:
    if not s or not s.get("significant") or not base:
        return ""
    return UP if s["score"] > base["score"] else DOWN


def _cell(r: dict, test: str, metric: str, base_row: Optional[dict], clean: Optional[dict] = None) -> str:
    s = _score(r, test, metric)
    if s is None:
        return DASH
    text = f"{s['score']:.1f}"
    if s.get("ci") is not None:
        text += f" ± {s['ci']:.1f}"
    base = _score(base_row, test, metric) if base_row is not None and base_row is not r else None
    text += _mark(s, base)
    if clean is not None:
        text += f" ({s['score'] - clean['score']:+.1f})"
    return text


# --- tables --------------------------------------------------------------------------------------------------

def quality_table(rows: list, meta: dict) -> list:
    """BLEU and chrF with 95% CI per test set, significance marks against the baseline, drops from clean."""
    base = _baseline(rows, meta)
    present = [(k, name) for k, name in TEST_SETS if any(_score(r, k, "bleu") for r in rows)] or [TEST_SETS[0]]
    header = ["scheme"]
    for metric in ("BLEU", "chrF"):
        header += [f"{metric} {name}" for _, name in present]
    body = []
    for r in rows:
        line = [_label(r)]
        for metric in ("bleu", "chrf"):
            clean = _score(r, "clean", metric)
            for k, _ in present:
                line.append(_cell(r, k, metric, base, clean if k != "clean" and clean else None))
        body.append(line)
    return [header] + body


def robustness_table(rows: list) -> Optional[list]:
    if not any(r.get("robustness") for r in rows):
        return None
    header = ["scheme"]
    for _, name in NOISE_SETS:
        header += [f"similarity, {name}", f"similarity, {name}, changed sentences"]
    body = []
    for r in rows:
        rob = r.get("robustness") or {}
        line = [_label(r)]
        for k, _ in NOISE_SETS:
            line += [_fmt((rob.get(k) or {}).get("mean"), 1, 100), _fmt((rob.get(k) or {}).get("mean_changed"), 1, 100)]
        body.append(line)
    return [header] + body


def intrinsic_table(rows: list, meta: dict) -> list:
    """Lengths, training cost and the final validation loss."""
    base = _baseline(rows, meta)
    # CPU time; wall time only for older results that have nothing else
    wall = not any(r.get("train_cpu_seconds") for r in rows) and any(r.get("train_seconds") for r in rows)
    header = ["scheme", "src tok/sent", "tgt tok/sent", "src tok/word", "tgt tok/word", "src length vs baseline"]
    header += ["train s (wall)"] if wall else ["train CPU s", "updates per CPU s"]
    header += ["final valid loss"]
    body = []
    for r in rows:
        rel = DASH
        if base and base.get("src_tok_per_sent") and r.get("src_tok_per_sent") is not None:
            rel = f"{100 * (r['src_tok_per_sent'] / base['src_tok_per_sent'] - 1):+.1f}%"
        line = [_label(r), _fmt(r.get("src_tok_per_sent"), 1), _fmt(r.get("tgt_tok_per_sent"), 1),
                _fmt(r.get("src_tok_per_word")), _fmt(r.get("tgt_tok_per_word")), rel]
        if wall:
            line += [_fmt(r.get("train_seconds"), 0)]
        else:
            secs, n = r.get("train_cpu_seconds"), _updates(r, meta)
            line += [_fmt(secs, 0), _fmt(n / secs if n and secs else None, 2)]
        line.append(_fmt(r.get("final_valid_loss"), 3))
        body.append(line)
    return [header] + body


def tokenizer_scores_table(rows: list) -> Optional[list]:
    """Rényi efficiency, fertility and pieces per word of each row's test encodings, source and target
    (``morphtok-metrics-intrinsic``'s measures); None when no row has them."""
    if not any((r.get("tokenizer_scores") or {}).get("src") for r in rows):
        return None
    header = ["scheme", "src Rényi efficiency", "tgt Rényi efficiency", "src fertility", "tgt fertility",
              "src pieces/word", "tgt pieces/word"]
    body = []
    for r in rows:
        s = r.get("tokenizer_scores") or {}
        src, tgt = s.get("src") or {}, s.get("tgt") or {}
        body.append([_label(r), _fmt(src.get("renyi_efficiency"), 3), _fmt(tgt.get("renyi_efficiency"), 3),
                     _fmt(src.get("fertility")), _fmt(tgt.get("fertility")), _fmt(src.get("pieces_per_word")),
                     _fmt(tgt.get("pieces_per_word"))])
    return [header] + body


TOKENIZER_SCORES_NOTE = ("Rényi efficiency (order 2.5, the tokenization-scorer package) of the unigram distribution "
                         "of each row's pieces on the clean test set; fertility = all pieces per whitespace word; "
                         "pieces per word leaves out standalone ▁ pieces (so space-as-token rows can be compared "
                         "with the others).")


def _count(value) -> str:
    return DASH if value is None else f"{value:,.0f}"


def budget_table(rows: list, meta: dict) -> Optional[list]:
    """What each row's training saw: updates, sentence pairs, epochs, target tokens (fairseq's log) and source
    tokens (estimated from the mean encoded training source length), with the sentences relative to the
    baseline's."""
    if not any(r.get("budget") for r in rows):
        return None
    base = (_baseline(rows, meta) or {}).get("budget") or {}
    header = ["scheme", "updates", "sentence pairs seen", "vs baseline", "epochs", "target tokens seen",
              "source tokens seen (est.)"]
    body = []
    for r in rows:
        b = r.get("budget") or {}
        rel = DASH
        if b.get("sentences") is not None and base.get("sentences"):
            rel = f"{100 * (b['sentences'] / base['sentences'] - 1):+.1f}%"
        body.append([_label(r), _count(b.get("updates", _updates(r, meta))), _count(b.get("sentences")), rel,
                     _fmt(b.get("epochs"), 1), _count(b.get("tgt_tokens")), _count(b.get("src_tokens_est"))])
    return [header] + body


def _gold_key(r: dict):
    b = r.get("boundary") or {}
    return b.get("gold") if b else None


def boundary_groups(rows: list) -> list:
    """[(gold, rows)]: rows scored on the same gold words together, the gold most rows use first (the English
    gold of the demo), each other gold (Wordmap's German verbs) apart."""
    groups: dict = {}
    for r in rows:
        key = _gold_key(r)
        if key is not None and (r.get("boundary") or {}).get("f1") is not None:
            groups.setdefault(key, []).append(r)
    return sorted(groups.items(), key=lambda kv: -len(kv[1]))


def _protocol(b: dict) -> str:
    from preprocess.evaluate.morph import PROTOCOLS

    p = b.get("protocol")
    return PROTOCOLS.get(p, p) if p else "protocol not recorded (older results)"


def boundary_table(rows: list) -> list:
    """Boundary P/R/F1 with the words behind them: scored, skipped (pieces that cannot be placed in the word),
    spelled exactly, character coverage."""
    header = ["scheme", "gold words", "scored", "skipped", "spelled exactly", "coverage", "boundary P", "boundary R",
              "boundary F1", "pieces/word"]
    body = []
    for r in rows:
        b = r.get("boundary") or {}
        body.append([_label(r), _count(b.get("n_gold")), _count(b.get("n_words")), _count(b.get("skipped")),
                     _count(b.get("spelled")), _fmt(b.get("coverage"), 1, 100) + ("%" if b.get("coverage")
                                                                                 is not None else ""),
                     _fmt(b.get("precision"), 1, 100), _fmt(b.get("recall"), 1, 100), _fmt(b.get("f1"), 1, 100),
                     _fmt(b.get("mean_pieces"))])
    return [header] + body


def boundary_sections(rows: list) -> list:
    """[(heading, table, note)] per gold: the comparable rows first, each other gold apart."""
    out = []
    for i, (gold, group) in enumerate(boundary_groups(rows)):
        protocols = sorted({_protocol(r["boundary"]) for r in group})
        head = f"Morph boundaries on {gold}" + ("" if i == 0 else " (different gold: not comparable with the rows "
                                                               "above)")
        note = (f"Gold: {gold}; protocol: {'; '.join(protocols)}. " + BOUNDARY_NOTE)
        out.append((head, boundary_table(group), note))
    return out


def flatten(d, prefix: str = "") -> list:
    """Nested dict -> [(key path, value)] with " / " between levels; lists of scalars joined by commas."""
    out = []
    for k, v in d.items():
        key = f"{prefix} / {k}" if prefix else str(k)
        if isinstance(v, dict):
            out += flatten(v, key)
        elif isinstance(v, (list, tuple)) and all(not isinstance(x, (dict, list)) for x in v):
            out.append((key, ", ".join(_fmt(x, 3) if isinstance(x, float) else str(x) for x in v)))
        elif isinstance(v, float):
            out.append((key, _fmt(v, 4)))
        else:
            out.append((key, json.dumps(v, ensure_ascii=False) if isinstance(v, list) else str(v)))
    return out


def markdown_table(table: list, left: int = 1) -> str:
    header, *body = table
    esc = lambda c: str(c).replace("|", "\\|")  # noqa: E731
    align = ["---"] * left + ["---:"] * (len(header) - left)
    lines = ["| " + " | ".join(esc(h) for h in header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


def html_table(table: list, left: int = 1) -> str:
    """Columns before ``left`` are text (left-aligned), the others numbers (right-aligned)."""
    header, *body = table

    def cls(i):
        return ' class="l"' if i < left else ""

    out = ["<table>", "<tr>" + "".join(f"<th{cls(i)}>{html.escape(str(h))}</th>" for i, h in enumerate(header))
           + "</tr>"]
    for row in body:
        out.append("<tr>" + "".join(f"<td{cls(i)}>{html.escape(str(c))}</td>" for i, c in enumerate(row)) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def examples_tables(rows: list) -> list:
    """[(raw source, raw target, table)] per example: scheme | source tokens | target tokens."""
    out = []
    n = max((len(r.get("examples") or []) for r in rows), default=0)
    for i in range(n):
        have = [r for r in rows if len(r.get("examples") or []) > i]
        first = have[0]["examples"][i]
        table = [["scheme", "source tokens", "target tokens"]]
        for r in have:
            ex = r["examples"][i]
            table.append([_label(r), ex.get("tokens", DASH), ex.get("tokens_de", DASH)])
        out.append((first.get("raw", ""), first.get("raw_de", ""), table))
    return out


def extra_tables(rows: list) -> list:
    return [(_label(r), [["metric", "value"]] + [list(kv) for kv in flatten(r["extra"])])
            for r in rows if r.get("extra")]


# --- the words ------------------------------------------------------------------------------------------------

def _significant_findings(rows: list, base: dict) -> tuple:
    """({row label: {"higher": [test set names], "lower": [...]}}, rows x test sets with a test, n tests)."""
    found, tested, n = {}, set(), 0
    for k, name in TEST_SETS:
        b = _score(base, k, "bleu")
        if b is None:
            continue
        for r in rows:
            s = _score(r, k, "bleu")
            if r is base or s is None or s.get("p_value") is None:
                continue
            n += 1
            tested.add(_label(r))
            if s.get("significant"):
                side = "higher" if s["score"] > b["score"] else "lower"
                found.setdefault(_label(r), {"higher": [], "lower": []})[side].append(name)
    return found, tested, n


#: relative difference (sentence pairs seen, tokens per sentence) from which a row's budget or lengths count as
#: different from the baseline's
LENGTH_TOLERANCE = 0.10


def difference_kind(r: dict, base: dict) -> str:
    """Which kind of difference a significant result of row ``r`` against ``base`` can be: a sequence-length
    effect (under the same updates and token cap it saw fewer or more sentence pairs, or its sequences are longer
    or shorter) or, with budget and lengths within :data:`LENGTH_TOLERANCE`, a quality difference."""
    facts = []
    rb, bb = r.get("budget") or {}, base.get("budget") or {}
    if rb.get("sentences") and bb.get("sentences"):
        d = rb["sentences"] / bb["sentences"] - 1
        if abs(d) >= LENGTH_TOLERANCE:
            facts.append(f"it saw {100 * abs(d):.0f}% {'fewer' if d < 0 else 'more'} sentence pairs")
    for key, side in (("src_tok_per_sent", "source"), ("tgt_tok_per_sent", "target")):
        if r.get(key) and base.get(key):
            d = r[key] / base[key] - 1
            if abs(d) >= LENGTH_TOLERANCE:
                facts.append(f"its {side} is {100 * abs(d):.0f}% {'longer' if d > 0 else 'shorter'}")
    if facts:
        return (f"{_label(r)}: can be a sequence-length effect as much as a quality one ({' and '.join(facts)} "
                f"than {_label(base)}'s under the same number of updates)")
    if not rb or not bb:
        return f"{_label(r)}: cannot be told (no training budget recorded)"
    return (f"{_label(r)}: a quality difference at this budget (sentence pairs seen and sequence lengths within "
            f"{100 * LENGTH_TOLERANCE:.0f}% of {_label(base)}'s)")


def conclusions(rows: list, meta: dict) -> list:
    """The report's opening paragraphs, in plain words, from the numbers: the first says what this run can and
    cannot conclude; the others give the evidence (interval widths, the tests, the drops under noise)."""
    base = _baseline(rows, meta)
    sig = meta.get("significance") or {}
    alpha = sig.get("alpha", 0.05)
    n_sent = sig.get("n_sentences")
    scored = [r for r in rows if _score(r, "clean", "bleu")]
    if not scored:
        return ["No row has a BLEU score, so this run cannot compare the schemes' translation quality."]
    bleus = [_score(r, "clean", "bleu")["score"] for r in scored]
    found, tested, n_tests = _significant_findings(rows, base) if base is not None else ({}, set(), 0)

    # what can be concluded
    if not n_tests:
        can = ("What this run can conclude: little. No paired significance test against a baseline was run, "
               "so no row can be said to differ from another")
    elif not found:
        can = (f"What this run can conclude: no scheme's BLEU differs significantly from the baseline "
               f"{_label(base)} on any test set (p < {alpha}); the differences in the table are within what the "
               "choice of test sentences explains")
    else:
        parts = []
        for label, sides in found.items():
            bits = [f"{side} BLEU on the {' and '.join(sets)} test set{'s' if len(sets) > 1 else ''}"
                    for side, sets in sides.items() if sets]
            parts.append(f"{label} scores significantly {' and '.join(bits)}")
        quiet = sorted(tested - set(found))
        can = (f"What this run can conclude: with these trained models and this test set, compared with the "
               f"baseline {_label(base)} (p < {alpha}), " + "; ".join(parts)
               + (f"; {', '.join(quiet)} cannot be told apart from it on any test set" if quiet else "")
               + ". Which kind of difference each can be: "
               + "; ".join(difference_kind(r, base) for r in rows if _label(r) in found)
               + f". With {n_tests} tests uncorrected for multiple comparisons, about {n_tests * alpha:.1f} "
                 "significant results are expected by chance alone")
    cannot = ["whether the differences hold for another training run (one model per row: the intervals cover "
              "the choice of test sentences, not training variance)"]
    preset = meta.get("preset")
    if preset != "gpu" or max(bleus) < 30:
        cannot.append(f"whether they hold for a converged model (BLEU here is at most {max(bleus):.1f}"
                      + (f", preset {preset}" if preset else "")
                      + "; a converged Transformer-base reaches 35-40 on Multi30k En-De)")
    cannot.append("whether they hold for real non-standard text (the noise is synthetic: random re-inflection, "
                  "random space removal)")
    paras = [can + ". It cannot conclude " + "; nor ".join(cannot) + "."]

    # the evidence
    cis = [c for c in (_score(r, "clean", "bleu").get("ci") for r in scored) if c is not None]
    evidence = (f"Clean-test BLEU ranges from {min(bleus):.1f} to {max(bleus):.1f}"
                + (f" over {n_sent} test sentences" if n_sent else ""))
    if cis:
        width = f"±{min(cis):.1f}" if f"{min(cis):.1f}" == f"{max(cis):.1f}" else f"±{min(cis):.1f} to ±{max(cis):.1f}"
        evidence += (f"; sacreBLEU's 95% confidence intervals are {width} BLEU, so two rows whose intervals "
                     "overlap widely are not told apart by this test set")
    paras.append(evidence + ".")
    drops = []
    for k, name in NOISE_SETS:
        d = sorted((_score(r, "clean", "bleu")["score"] - _score(r, k, "bleu")["score"], _label(r)) for r in rows
                   if _score(r, "clean", "bleu") and _score(r, k, "bleu"))
        if d:
            drops.append(f"under {name} BLEU drops by {d[0][0]:.1f} ({d[0][1]}) to {d[-1][0]:.1f} ({d[-1][1]})")
    if drops:
        paras.append("Robustness: " + "; ".join(drops) + ". The drops themselves are not tested against each "
                     "other (each test compares a row with the baseline on the same test set); read them with the "
                     "confidence intervals and with the model-free similarity table below.")
    return paras


# --- plots ---------------------------------------------------------------------------------------------------

def _bar_positions(n_groups: int, n_bars: int, width: float = 0.8):
    w = width / n_bars
    return [[g - width / 2 + w * (j + 0.5) for g in range(n_groups)] for j in range(n_bars)], w


def _finish(fig, ax, rows, path, ylabel, title):
    ax.set_xticks(list(range(len(rows))))
    ax.set_xticklabels([_label(r) for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.set_ylim(top=ax.get_ylim()[1] * 1.18)   # room for the legend above the bars
        ax.legend(fontsize=8, ncol=3, loc="upper center")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_bleu(rows: list, path: str, meta: Optional[dict] = None) -> Optional[str]:
    """BLEU per scheme and test set; the whiskers are sacreBLEU's 95% interval around the bootstrap mean, the
    marks above them the significance marks of the table."""
    sets = [(k, name) for k, name in TEST_SETS if any(_score(r, k, "bleu") for r in rows)]
    if not sets:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.4))
    xs, w = _bar_positions(len(rows), len(sets))
    for j, (k, name) in enumerate(sets):
        heights, low, high = [], [], []
        for r in rows:
            s = _score(r, k, "bleu") or {}
            score = s.get("score") or 0.0
            heights.append(score)
            if s.get("ci") is not None and s.get("mean") is not None:
                low.append(max(0.0, score - (s["mean"] - s["ci"])))
                high.append(max(0.0, s["mean"] + s["ci"] - score))
            else:
                low.append(0.0)
                high.append(0.0)
        ax.bar(xs[j], heights, w, label=name, yerr=[low, high], capsize=3, error_kw={"elinewidth": 1})
        base_row = _baseline(rows, meta or {})
        base = _score(base_row, k, "bleu") if base_row else None
        for x, r, h, hi in zip(xs[j], rows, heights, high):
            mark = _mark(_score(r, k, "bleu"), base) if r is not base_row else ""
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
            ax.plot(xs, ys, marker="o", markersize=3, label=_label(r))
    ax.set_xlabel("update")
    ax.set_ylabel("validation loss (base 2)")
    ax.set_title("Validation loss per update")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_lengths(rows: list, path: str) -> Optional[str]:
    if not any(r.get("src_tok_per_sent") or r.get("tgt_tok_per_sent") for r in rows):
        return None
    fig, ax = plt.subplots(figsize=(7, 4.2))
    xs, w = _bar_positions(len(rows), 2)
    ax.bar(xs[0], [r.get("src_tok_per_sent") or 0 for r in rows], w, label="source (en)")
    ax.bar(xs[1], [r.get("tgt_tok_per_sent") or 0 for r in rows], w, label="target (de)")
    return _finish(fig, ax, rows, path, "tokens per sentence (test set)", "Sequence length by scheme")


# --- the page ------------------------------------------------------------------------------------------------

QUALITY_NOTE = ("Each cell: score ± half-width of sacreBLEU's 95% bootstrap confidence interval; {up} / {down}: "
                "significantly higher / lower than the baseline row on the same test set; (±x): change from the "
                "row's clean score. BLEU and chrF are sacreBLEU's on detokenised output, each scheme decoded by "
                "its own decoder; the noisy test sets perturb the English source only, the references stay.")
INTRINSIC_NOTE = ("Token counts are on the clean test set; per word = tokens / whitespace-separated words of the "
                  "raw text (inflection symbols, spaces and pieces all count). Source length vs baseline: the "
                  "relative increase of source tokens per sentence over the baseline row (for BITE the BITE "
                  "paper's Figure 8 measure). "
                  "Training cost in CPU seconds of the training process, which a busy shared machine does not "
                  "inflate the way it inflates wall time.")
BOUNDARY_NOTE = ("Boundary P/R/F1: Creutz et al. (2004), micro-averaged over the scored gold words; every row of a "
                 "table is scored on the same gold words. A scheme whose pieces do not spell a word (FLOTA keeps at "
                 "most k pieces and drops the rest) is scored by the edges of the characters its pieces cover, "
                 "placed in the word left to right: a dropped stretch counts as delimited on both sides and the "
                 "gold boundaries inside it as misses. Coverage: share of the scored words' characters inside a "
                 "piece; spelled exactly: words whose pieces spell them; skipped: words whose pieces cannot be "
                 "placed at all (normalisation, unknown symbols). Pieces/word over the scored words.")
BUDGET_NOTE = ("Every row trains for the same number of updates with the same token cap per batch (--max-tokens), so "
               "a scheme with longer sequences fits fewer sentence pairs into each update and sees fewer of them in "
               "all; sentence pairs and target tokens are summed from fairseq's log (mean batch x updates, per "
               "epoch), source tokens estimated from the mean encoded length of the training source.")
SIMILARITY_NOTE = ("Model-free robustness (BITE paper, Figure 5): the Ratcliff/Obershelp similarity (Python's "
                   "difflib) between each scheme's source encoding of a clean test sentence and of its perturbed "
                   "copy, in percent, averaged over all test sentences and over the sentences the noise changed.")
CURVES_NOTE = ("Validation loss is per target token: it compares schemes only where the target segmentation is "
               "the same (the primed schemes' targets contain many easy-to-predict space tokens, which lowers it).")


def _noise_lines(meta: dict) -> list:
    noise = meta.get("noise") or {}
    if not noise:
        return []
    out = [f"Noise: fraction {noise.get('fraction', DASH)}, seed {noise.get('seed', DASH)}."]
    for k, name in NOISE_SETS:
        st = (noise.get("stats") or {}).get(k) or {}
        f = (noise.get("files") or {}).get(k)
        unit = "inflectable words re-inflected" if k == "infl" else "spaces between words removed"
        if st or f:
            share = st.get("changed_share")
            out.append(f"{name.capitalize()}: {st.get('changed', DASH)} of {st.get('candidates', DASH)} {unit}"
                       + (f" ({100 * share:.1f}%)" if share is not None else "")
                       + (f", {st['changed_lines']} of {st.get('lines', DASH)} sentences changed"
                          if "changed_lines" in st else "")
                       + (f"; file: {f}" if f else "") + ".")
    return out


def _signatures(rows: list, meta: dict) -> tuple:
    sigs = (meta.get("significance") or {}).get("signatures") or {}
    bleu = sigs.get("bleu") or meta.get("bleu_signature") or next(
        (r.get("bleu_signature") for r in rows if r.get("bleu_signature")), DASH)
    chrf = sigs.get("chrf") or meta.get("chrf_signature") or next(
        (r.get("chrf_signature") for r in rows if r.get("chrf_signature")), DASH)
    return bleu, chrf


def _boundary_note(rows: list) -> str:
    groups = boundary_groups(rows)
    if not groups:
        return ""
    gold, group = groups[0]
    n = {(r["boundary"].get("n_words"), r["boundary"].get("skipped")) for r in group}
    words = ("; ".join(f"{_label(r)}: {_count(r['boundary'].get('n_words'))} scored, "
                       f"{_count(r['boundary'].get('skipped'))} skipped" for r in group) if len(n) > 1 else
             f"every row: {_count(group[0]['boundary'].get('n_words'))} words scored, "
             f"{_count(group[0]['boundary'].get('skipped'))} skipped")
    other = [f"{', '.join(_label(r) for r in g)} ({k})" for k, g in groups[1:]]
    return (f"Rows scored on {gold} ({'; '.join(sorted({_protocol(r['boundary']) for r in group}))}): {words}."
            + (f" Not in this chart (other gold, see the tables): {'; '.join(other)}." if other else ""))


def write_report(results: dict, outdir: str) -> dict:
    rows = results.get("schemes") or []
    meta = results.get("meta") or {}
    os.makedirs(outdir, exist_ok=True)
    title = f"Tokenisation scheme comparison on {meta.get('dataset', 'Multi30k En-De')}"
    plots = [
        ("BLEU with confidence intervals", "BLEU per scheme, clean and noisy test sets",
         plot_bleu(rows, os.path.join(outdir, "bleu_ci.png"), meta),
         f"Bars: BLEU; whiskers: 95% confidence interval; {UP} / {DOWN}: significantly higher / lower than the "
         "baseline row on the same test set."),
        ("Morphological boundaries", "boundary precision and F1 per scheme",
         plot_boundary(rows, os.path.join(outdir, "boundary.png")), _boundary_note(rows)),
        ("Source similarity under noise", "similarity of clean and perturbed encodings",
         plot_similarity(rows, os.path.join(outdir, "similarity.png")), ""),
        ("Validation loss", "validation loss per update",
         plot_curves(rows, os.path.join(outdir, "valid_loss.png")), CURVES_NOTE),
        ("Sequence lengths", "tokens per sentence", plot_lengths(rows, os.path.join(outdir, "seq_lengths.png")), ""),
    ]
    plots = [p for p in plots if p[2]]
    quality = quality_table(rows, meta)
    robustness = robustness_table(rows)
    intrinsic = intrinsic_table(rows, meta)
    budget = budget_table(rows, meta)
    scores = tokenizer_scores_table(rows)
    boundaries = boundary_sections(rows)
    words = conclusions(rows, meta)
    bleu_sig, chrf_sig = _signatures(rows, meta)
    base = _baseline(rows, meta)
    sig = meta.get("significance") or {}
    sig_line = (f"Significance: {sig.get('test_name', sig.get('test', 'paired test'))} against {_label(base)} "
                f"({sig.get('n_samples', DASH)} samples, p < {sig.get('alpha', 0.05)}, sacreBLEU)."
                if base is not None and sig else "")
    preset = meta.get("preset")
    changed = ", ".join(f"{k.replace('_', '-')} {v}" for k, v in (meta.get("preset_overrides") or {}).items())
    preset_line = (f"Preset: {preset}" + (f" ({meta['preset_note']})" if meta.get("preset_note") else "")
                   + (f"; changed from the preset: {changed}" if changed else "") + "." if preset else "")
    noise_lines = _noise_lines(meta)
    versions = sorted((meta.get("versions") or {}).items())
    commands = list(meta.get("commands") or [])

    # REPORT.md
    md = [f"# {title}", ""] + [p + "\n" for p in words]
    md += [x + "\n" for x in (meta.get("summary", ""), preset_line) if x]
    md += ["## Translation quality", "", markdown_table(quality), "", QUALITY_NOTE.format(up=UP, down=DOWN), ""]
    md += [f"- {x}" for x in [sig_line] + noise_lines if x]
    md += [f"- BLEU signature: `{bleu_sig}`", f"- chrF signature: `{chrf_sig}`", ""]
    if robustness:
        md += ["## Robustness without a model", "", markdown_table(robustness), "", SIMILARITY_NOTE, ""]
    if budget:
        md += ["## Training budget", "", markdown_table(budget), "", BUDGET_NOTE, ""]
    md += ["## Length and cost", "", markdown_table(intrinsic), "", INTRINSIC_NOTE, ""]
    if scores:
        md += ["## Tokeniser scores", "", markdown_table(scores), "", TOKENIZER_SCORES_NOTE, ""]
    for head, table, note in boundaries:
        md += [f"## {head}", "", markdown_table(table), "", note, ""]
    for head, alt, path, note in plots:
        md += [f"## {head}", "", f"![{alt}]({os.path.basename(path)})", ""] + ([note, ""] if note else [])
    md += ["## Examples", ""]
    for i, (src, tgt, table) in enumerate(examples_tables(rows), 1):
        md += [f"**Example {i}:** {src}" + (f" → {tgt}" if tgt else ""), "", markdown_table(table, left=3), ""]
    md += ["## Scheme-specific intrinsic metrics", ""]
    extras = extra_tables(rows)
    for label, table in extras:
        md += [f"**{label}**", "", markdown_table(table, left=1), ""]
    if not extras:
        md += ["none measured", ""]
    md += ["## Versions", ""] + [f"- {k}: `{v}`" for k, v in versions]
    md += ["", "## Commands", "", "```bash"] + commands + ["```", ""]
    md_path = os.path.join(outdir, "REPORT.md")
    with open(md_path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(md))

    # report.html
    def img(path):
        with open(path, "rb") as fh:
            return "data:image/png;base64," + base64.b64encode(fh.read()).decode("ascii")

    e = html.escape
    parts = [f"<h1>{e(title)}</h1>"] + [f"<p class=\"lead\">{e(p)}</p>" for p in words]
    parts += [f"<p>{e(x)}</p>" for x in (meta.get("summary", ""), preset_line) if x]
    parts += ["<h2>Translation quality</h2>", html_table(quality), f"<p>{e(QUALITY_NOTE.format(up=UP, down=DOWN))}</p>"]
    parts += [f"<p>{e(x)}</p>" for x in [sig_line] + noise_lines if x]
    parts += [f"<p>BLEU signature: <code>{e(bleu_sig)}</code><br>chrF signature: <code>{e(chrf_sig)}</code></p>"]
    if robustness:
        parts += ["<h2>Robustness without a model</h2>", html_table(robustness), f"<p>{e(SIMILARITY_NOTE)}</p>"]
    if budget:
        parts += ["<h2>Training budget</h2>", html_table(budget), f"<p>{e(BUDGET_NOTE)}</p>"]
    parts += ["<h2>Length and cost</h2>", html_table(intrinsic), f"<p>{e(INTRINSIC_NOTE)}</p>"]
    if scores:
        parts += ["<h2>Tokeniser scores</h2>", html_table(scores), f"<p>{e(TOKENIZER_SCORES_NOTE)}</p>"]
    for head, table, note in boundaries:
        parts += [f"<h2>{e(head)}</h2>", html_table(table), f"<p>{e(note)}</p>"]
    for head, alt, path, note in plots:
        parts += [f"<h2>{e(head)}</h2>", f'<img alt="{e(alt)}" src="{img(path)}">'] + ([f"<p>{e(note)}</p>"]
                                                                                       if note else [])
    parts.append("<h2>Examples</h2>")
    for i, (src, tgt, table) in enumerate(examples_tables(rows), 1):
        parts += [f"<h3>Example {i}</h3><p>{e(src)}" + (f"<br>{e(tgt)}" if tgt else "") + "</p>",
                  html_table(table, left=3).replace("<table>", '<table class="tokens">')]
    parts.append("<h2>Scheme-specific intrinsic metrics</h2>")
    for label, table in extras:
        parts += [f"<h3>{e(label)}</h3>", html_table(table, left=1)]
    if not extras:
        parts.append("<p>none measured</p>")
    parts += ["<h2>Versions</h2><ul>" + "".join(f"<li>{e(k)}: <code>{e(str(v))}</code></li>" for k, v in versions)
              + "</ul>", "<h2>Commands</h2><pre>" + e("\n".join(commands)) + "</pre>"]
    page = ("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Tokenisation scheme comparison</title>\n"
            "<style>body{font-family:sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;line-height:1.4}"
            "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
            "text-align:right;vertical-align:top}.l{text-align:left}table.tokens td{font-family:monospace;"
            "font-size:90%}p.lead{font-size:105%}img{max-width:100%}code{font-size:90%}pre{background:#f6f6f6;"
            "padding:1em;overflow-x:auto}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")
    html_path = os.path.join(outdir, "report.html")
    with open(html_path, "w", encoding="utf-8") as fh:
        fh.write(page)
    return {"markdown": md_path, "html": html_path, "plots": [p[2] for p in plots]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Write REPORT.md and report.html from a pipeline results.json")
    ap.add_argument("--results", required=True, help="the pipeline's results JSON")
    ap.add_argument("--output", required=True, help="report file to write")
    args = ap.parse_args(argv)
    with open(args.results, encoding="utf-8") as fh:
        results = json.load(fh)
    print(write_report(results, args.output))
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
