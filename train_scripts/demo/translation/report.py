"""REPORT.md and a self-contained report.html (plots embedded) for the scheme comparison (the translation part, train_scripts/demo/translation/part.py).

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
                training saw (rows.budget_seen)
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

    python -m train_scripts.demo.translation.report --results OUT/results.json --output OUT

This module: the words (:func:`conclusions`) and the page (:func:`write_report`); the tables:
``train_scripts/demo/translation/tables.py``; the plots: ``train_scripts/demo/report_plots.py``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from types import SimpleNamespace
from typing import Callable

from preprocess.cli import run_main
from preprocess.evaluate.noise import NOISES
from train_scripts.demo import policy
from train_scripts.demo import report_document as document
from train_scripts.demo import report_format as fmt
from train_scripts.demo.report_document import Bullets, Code, Image, Para, Section, Table, collect
from train_scripts.demo.translation.plots import plot_bleu, plot_boundary, plot_curves, plot_lengths, plot_similarity
from train_scripts.demo.translation.tables import (
    DASH,
    DOWN,
    NOISE_SETS,
    TEST_SETS,
    TOKENIZER_SCORES_NOTE,
    UP,
    baseline_row,
    boundary_groups,
    boundary_sections,
    budget_table,
    examples_tables,
    extra_tables,
    intrinsic_table,
    protocol_text,
    quality_table,
    robustness_table,
    row_label,
    row_score,
    tokenizer_scores_table,
)

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


# --- the words ------------------------------------------------------------------------------------------------

def _significant_findings(rows: list, base: dict) -> tuple:
    """({row label: {"higher": [test set names], "lower": [...]}}, rows x test sets with a test, n tests): every
    paired test against the baseline row is in this part's primary family, reported uncorrected
    (:class:`policy.Family` without a correction), each judged by :func:`policy.verdict`."""
    found, tested = {}, set()
    family = policy.Family("translation", correction=None)
    for k, name in TEST_SETS:
        b = row_score(base, k, "bleu")
        if b is None:
            continue
        for r in rows:
            s = row_score(r, k, "bleu")
            if r is base or s is None or s.get("p_value") is None:
                continue
            family.primary(f"{row_label(r)}/{k}/bleu", s["p_value"])
            tested.add(row_label(r))
            side = policy.verdict(s["p_value"], s["score"] - b["score"])
            if side in ("higher", "lower"):
                found.setdefault(row_label(r), {"higher": [], "lower": []})[side].append(name)
    return found, tested, family.record()["tests"]


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
        return (f"{row_label(r)}: can be a sequence-length effect as much as a quality one ({' and '.join(facts)} "
                f"than {row_label(base)}'s under the same number of updates)")
    if not rb or not bb:
        return f"{row_label(r)}: cannot be told (no training budget recorded)"
    return (f"{row_label(r)}: a quality difference at this budget (sentence pairs seen and sequence lengths within "
            f"{100 * LENGTH_TOLERANCE:.0f}% of {row_label(base)}'s)")


def conclusions(rows: list, meta: dict) -> list:
    """The report's opening paragraphs, in plain words, from the numbers: the first says what this run can and
    cannot conclude; the others give the evidence (interval widths, the tests, the drops under noise)."""
    base = baseline_row(rows, meta)
    sig = meta.get("significance") or {}
    alpha = sig.get("alpha", 0.05)
    n_sent = sig.get("n_sentences")
    scored = [r for r in rows if row_score(r, "clean", "bleu")]
    if not scored:
        return ["No row has a BLEU score, so this run cannot compare the schemes' translation quality."]
    bleus = [row_score(r, "clean", "bleu")["score"] for r in scored]
    found, tested, n_tests = _significant_findings(rows, base) if base is not None else ({}, set(), 0)

    # what can be concluded
    if not n_tests:
        can = ("What this run can conclude: little. No paired significance test against a baseline was run, "
               "so no row can be said to differ from another")
    elif not found:
        can = (f"What this run can conclude: no scheme's BLEU difference from the baseline {row_label(base)} is "
               f"shown on any test set (p < {alpha}); the differences in the table are within what the choice of "
               "test sentences explains")
    else:
        parts = []
        for label, sides in found.items():
            bits = [f"{side} BLEU on the {' and '.join(sets)} test set{'s' if len(sets) > 1 else ''}"
                    for side, sets in sides.items() if sets]
            parts.append(f"{label} scores significantly {' and '.join(bits)}")
        quiet = sorted(tested - set(found))
        can = (f"What this run can conclude: with these trained models and this test set, compared with the "
               f"baseline {row_label(base)} (p < {alpha}), " + "; ".join(parts)
               + (f"; for {', '.join(quiet)} a difference from it is {policy.NOT_SHOWN} on any test set"
                  if quiet else "")
               + ". Which kind of difference each can be: "
               + "; ".join(difference_kind(r, base) for r in rows if row_label(r) in found)
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
    cis = [c for c in (row_score(r, "clean", "bleu").get("ci") for r in scored) if c is not None]
    evidence = (f"Clean-test BLEU ranges from {min(bleus):.1f} to {max(bleus):.1f}"
                + (f" over {n_sent} test sentences" if n_sent else ""))
    if cis:
        width = f"±{min(cis):.1f}" if f"{min(cis):.1f}" == f"{max(cis):.1f}" else f"±{min(cis):.1f} to ±{max(cis):.1f}"
        evidence += (f"; sacreBLEU's 95% confidence intervals are {width} BLEU, so two rows whose intervals "
                     "overlap widely are not told apart by this test set")
    paras.append(evidence + ".")
    drops = []
    for k, name in NOISE_SETS:
        d = sorted((row_score(r, "clean", "bleu")["score"] - row_score(r, k, "bleu")["score"], row_label(r)) for r in rows
                   if row_score(r, "clean", "bleu") and row_score(r, k, "bleu"))
        if d:
            drops.append(f"under {name} BLEU drops by {d[0][0]:.1f} ({d[0][1]}) to {d[-1][0]:.1f} ({d[-1][1]})")
    if drops:
        paras.append("Robustness: " + "; ".join(drops) + ". The drops themselves are not tested against each "
                     "other (each test compares a row with the baseline on the same test set); read them with the "
                     "confidence intervals and with the model-free similarity table below.")
    return paras


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
        unit = NOISES[k].changed
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
    words = ("; ".join(f"{row_label(r)}: {fmt.count(r['boundary'].get('n_words'))} scored, "
                       f"{fmt.count(r['boundary'].get('skipped'))} skipped" for r in group) if len(n) > 1 else
             f"every row: {fmt.count(group[0]['boundary'].get('n_words'))} words scored, "
             f"{fmt.count(group[0]['boundary'].get('skipped'))} skipped")
    other = [f"{', '.join(row_label(r) for r in g)} ({k})" for k, g in groups[1:]]
    return (f"Rows scored on {gold} ({'; '.join(sorted({protocol_text(r['boundary']) for r in group}))}): {words}."
            + (f" Not in this chart (other gold, see the tables): {'; '.join(other)}." if other else ""))


def _plots(rows: list, meta: dict, outdir: str) -> list:
    """(heading, alt text, PNG path, note) of each plot that has data, drawn into ``outdir``."""
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
    return [p for p in plots if p[2]]


def _significance_line(rows: list, meta: dict) -> str:
    base = baseline_row(rows, meta)
    sig = meta.get("significance") or {}
    return (f"Significance: {sig.get('test_name', sig.get('test', 'paired test'))} against {row_label(base)} "
            f"({sig.get('n_samples', DASH)} samples, p < {sig.get('alpha', 0.05)}, sacreBLEU)."
            if base is not None and sig else "")


def _preset_line(meta: dict) -> str:
    preset = meta.get("preset")
    changed = ", ".join(f"{k.replace('_', '-')} {v}" for k, v in (meta.get("preset_overrides") or {}).items())
    return (f"Preset: {preset}" + (f" ({meta['preset_note']})" if meta.get("preset_note") else "")
            + (f"; changed from the preset: {changed}" if changed else "") + "." if preset else "")


# --- the sections, in the report's order ---------------------------------------------------------------------

def _title(c: SimpleNamespace) -> list:
    lead = [Para(p, css="lead") for p in conclusions(c.rows, c.meta)]
    lead += [Para(x) for x in (c.meta.get("summary", ""), _preset_line(c.meta)) if x]
    return [Section(f"Tokenisation scheme comparison on {c.meta.get('dataset', 'Multi30k En-De')}", lead, level=1)]


def _quality(c: SimpleNamespace) -> list:
    bleu_sig, chrf_sig = _signatures(c.rows, c.meta)
    notes = [x for x in [_significance_line(c.rows, c.meta)] + _noise_lines(c.meta) if x]
    return [Section("Translation quality", [Table(quality_table(c.rows, c.meta)),
                                            Para(QUALITY_NOTE.format(up=UP, down=DOWN)),
                                            Bullets(notes + [f"BLEU signature: `{bleu_sig}`",
                                                             f"chrF signature: `{chrf_sig}`"])])]


def _table_section(heading: str, table_of: Callable, note: str) -> Callable:
    """A section of one table and its note, or none where the table is None."""
    def section(c: SimpleNamespace) -> list:
        table = table_of(c)
        return [Section(heading, [Table(table), Para(note)])] if table else []
    return section


def _boundaries(c: SimpleNamespace) -> list:
    return [Section(head, [Table(table), Para(note)]) for head, table, note in boundary_sections(c.rows)]


def _plot_sections(c: SimpleNamespace) -> list:
    return [Section(head, [Image(alt, path)] + ([Para(note)] if note else []))
            for head, alt, path, note in _plots(c.rows, c.meta, c.outdir)]


def _examples(c: SimpleNamespace) -> list:
    blocks = []
    for i, (src, tgt, table) in enumerate(examples_tables(c.rows), 1):
        blocks += [Para(src + (f" → {tgt}" if tgt else ""), strong=f"Example {i}:"),
                   Table(table, left=3, css="tokens")]
    return [Section("Examples", blocks)]


def _extras(c: SimpleNamespace) -> list:
    blocks = [b for label, table in extra_tables(c.rows) for b in (Para("", strong=label), Table(table, left=1))]
    return [Section("Scheme-specific intrinsic metrics", blocks or [Para("none measured")])]


#: the translation part's report, in order: one function per section (``train_scripts/demo/report_document.py``)
SECTIONS = [
    _title,
    _quality,
    _table_section("Robustness without a model", lambda c: robustness_table(c.rows), SIMILARITY_NOTE),
    _table_section("Training budget", lambda c: budget_table(c.rows, c.meta), BUDGET_NOTE),
    _table_section("Length and cost", lambda c: intrinsic_table(c.rows, c.meta), INTRINSIC_NOTE),
    _table_section("Tokeniser scores", lambda c: tokenizer_scores_table(c.rows), TOKENIZER_SCORES_NOTE),
    _boundaries,
    _plot_sections,
    _examples,
    _extras,
]


def provenance_sections(meta: dict) -> list:
    """The run's package versions and commands: the last sections of the demo's report."""
    versions = sorted((meta.get("versions") or {}).items())
    return [Section("Versions", [Bullets([f"{k}: `{v}`" for k, v in versions])] if versions else []),
            Section("Commands", [Code(list(meta.get("commands") or []))])]


def sections(results: dict, outdir: str) -> list:
    """The translation part's sections (its plots drawn into ``outdir``)."""
    context = SimpleNamespace(rows=results.get("schemes") or [], meta=results.get("meta") or {}, outdir=outdir)
    return collect(SECTIONS, context)


def write_report(results: dict, outdir: str) -> dict:
    """REPORT.md and report.html of a translation results.json (the part alone, with its versions and commands)."""
    os.makedirs(outdir, exist_ok=True)
    parts = sections(results, outdir)
    paths = document.write(parts + provenance_sections(results.get("meta") or {}), outdir,
                           "Tokenisation scheme comparison")
    return {**paths, "plots": [b.path for s in parts for b in s.blocks if isinstance(b, Image)]}


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
