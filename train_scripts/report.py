"""REPORT.md and a self-contained report.html for the scheme comparison (train_scripts/pipeline.py).

Input: ``results.json`` as the pipeline writes it: ``{"meta": {...}, "schemes": [row, ...]}``.  Each row has
``name``, ``label``, ``direction``, and, where measured, ``bleu``, ``chrf``, the sacreBLEU signatures, sequence
lengths (``src_tok_per_sent``, ``tgt_tok_per_sent``, ``src_tok_per_word``, ``tgt_tok_per_word``), ``vocab``,
``boundary`` (P/R/F1 on gold morphs), ``train_seconds``, ``final_valid_loss``, ``valid_curve`` ([update, loss]
pairs), ``examples`` and ``extra`` (scheme-specific intrinsic metrics).  Missing values print as "–".

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

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

logging.getLogger("matplotlib").setLevel(logging.WARNING)  # fairseq's imports may leave the root at DEBUG

DASH = "–"


def _fmt(value, digits=2, scale=1.0) -> str:
    if value is None:
        return DASH
    if isinstance(value, (int, float)):
        return f"{value * scale:.{digits}f}"
    return str(value)


def main_table(rows: list[dict]) -> list[list[str]]:
    header = ["scheme", "BLEU", "chrF", "src tok/sent", "tgt tok/sent", "src tok/word", "tgt tok/word",
              "boundary P", "boundary F1", "train s", "final valid loss"]
    body = []
    for r in rows:
        b = r.get("boundary") or {}
        body.append([r.get("label", r["name"]), _fmt(r.get("bleu"), 1), _fmt(r.get("chrf"), 1),
                     _fmt(r.get("src_tok_per_sent"), 1), _fmt(r.get("tgt_tok_per_sent"), 1),
                     _fmt(r.get("src_tok_per_word")), _fmt(r.get("tgt_tok_per_word")),
                     _fmt(b.get("precision"), 1, 100), _fmt(b.get("f1"), 1, 100),
                     _fmt(r.get("train_seconds"), 0), _fmt(r.get("final_valid_loss"), 3)])
    return [header] + body


def markdown_table(table: list[list[str]]) -> str:
    header, *body = table
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def html_table(table: list[list[str]]) -> str:
    header, *body = table
    out = ["<table>", "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>"]
    for row in body:
        out.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def plot_curves(rows: list[dict], path: str) -> str:
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for r in rows:
        curve = r.get("valid_curve") or []
        if curve:
            xs, ys = zip(*curve)
            ax.plot(xs, ys, marker="o", markersize=3, label=r.get("label", r["name"]))
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


def plot_lengths(rows: list[dict], path: str) -> str:
    labels = [r.get("label", r["name"]) for r in rows]
    src = [r.get("src_tok_per_sent") or 0 for r in rows]
    tgt = [r.get("tgt_tok_per_sent") or 0 for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    xs = range(len(rows))
    width = 0.4
    ax.bar([x - width / 2 for x in xs], src, width, label="source (en)")
    ax.bar([x + width / 2 for x in xs], tgt, width, label="target (de)")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("tokens per sentence (test set)")
    ax.set_title("Sequence length by scheme")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _examples_md(rows: list[dict]) -> str:
    lines = []
    n = max((len(r.get("examples") or []) for r in rows), default=0)
    for i in range(n):
        source = next((r["examples"][i]["raw"] for r in rows if len(r.get("examples") or []) > i), "")
        lines.append(f"**Example {i + 1}:** {source}\n")
        lines.append("| scheme | source tokens |")
        lines.append("|---|---|")
        for r in rows:
            ex = (r.get("examples") or [])
            if len(ex) > i:
                lines.append(f"| {r.get('label', r['name'])} | `{ex[i]['tokens'].replace('|', '/')}` |")
        lines.append("")
    return "\n".join(lines)


def _extra_md(rows: list[dict]) -> str:
    out = []
    for r in rows:
        extra = r.get("extra") or {}
        if extra:
            out.append(f"**{r.get('label', r['name'])}**\n")
            out.append("```json\n" + json.dumps(extra, indent=1, sort_keys=True) + "\n```\n")
    return "\n".join(out)


def write_report(results: dict, outdir: str) -> dict:
    rows = results["schemes"]
    meta = results.get("meta", {})
    curves = plot_curves(rows, os.path.join(outdir, "valid_loss.png"))
    lengths = plot_lengths(rows, os.path.join(outdir, "seq_lengths.png"))
    table = main_table(rows)
    sig = next((r.get("bleu_signature") for r in rows if r.get("bleu_signature")), DASH)
    chrf_sig = next((r.get("chrf_signature") for r in rows if r.get("chrf_signature")), DASH)

    md = [f"# Tokenisation scheme comparison on {meta.get('dataset', 'Multi30k En-De')}", "",
          meta.get("summary", ""), "",
          "## Results", "", markdown_table(table), "",
          "BLEU and chrF: sacreBLEU on detokenised test output (each scheme decoded by its own decoder). "
          "Token counts are on the test set; per word = tokens / whitespace-separated words of the raw text "
          "(inflection symbols, spaces and pieces all count). Boundary P/F1: Creutz et al. (2004) on the "
          "gold English morph segmentations (German derivational verbs for Wordmap), see `intrinsic` below.",
          "", f"- BLEU signature: `{sig}`", f"- chrF signature: `{chrf_sig}`", "",
          "## Validation loss", "", "![validation loss per update](valid_loss.png)", "",
          "Validation loss is per target token: it compares schemes only where the target segmentation is the "
          "same (the primed schemes' targets contain many easy-to-predict space tokens, which lowers it).", "",
          "## Sequence lengths", "", "![tokens per sentence](seq_lengths.png)", "",
          "## Examples", "", _examples_md(rows),
          "## Scheme-specific intrinsic metrics", "", _extra_md(rows) or "none measured", "",
          "## Versions", ""]
    for k, v in sorted((meta.get("versions") or {}).items()):
        md.append(f"- {k}: `{v}`")
    md += ["", "## Commands", "", "```bash"] + list(meta.get("commands") or []) + ["```", ""]
    md_text = "\n".join(md)
    with open(os.path.join(outdir, "REPORT.md"), "w", encoding="utf-8") as fh:
        fh.write(md_text)

    def img(path):
        with open(path, "rb") as fh:
            return "data:image/png;base64," + base64.b64encode(fh.read()).decode("ascii")

    ex_html = []
    n = max((len(r.get("examples") or []) for r in rows), default=0)
    for i in range(n):
        src = next((r["examples"][i]["raw"] for r in rows if len(r.get("examples") or []) > i), "")
        ex_html.append(f"<h3>Example {i + 1}</h3><p>{html.escape(src)}</p><table>")
        for r in rows:
            ex = r.get("examples") or []
            if len(ex) > i:
                ex_html.append(f"<tr><th>{html.escape(r.get('label', r['name']))}</th>"
                               f"<td><code>{html.escape(ex[i]['tokens'])}</code></td></tr>")
        ex_html.append("</table>")
    versions = "".join(f"<li>{html.escape(k)}: <code>{html.escape(str(v))}</code></li>"
                       for k, v in sorted((meta.get("versions") or {}).items()))
    commands = html.escape("\n".join(meta.get("commands") or []))
    extra = html.escape(_extra_md(rows))
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Tokenisation scheme comparison</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}}
table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}
td:first-child,th:first-child{{text-align:left}}code{{font-size:90%}}pre{{background:#f6f6f6;padding:1em;
overflow-x:auto}}</style></head><body>
<h1>Tokenisation scheme comparison on {html.escape(meta.get('dataset', 'Multi30k En-De'))}</h1>
<p>{html.escape(meta.get('summary', ''))}</p>
<h2>Results</h2>{html_table(table)}
<p>BLEU signature: <code>{html.escape(sig)}</code><br>chrF signature: <code>{html.escape(chrf_sig)}</code></p>
<h2>Validation loss</h2><img alt="validation loss per update" src="{img(curves)}">
<h2>Sequence lengths</h2><img alt="tokens per sentence" src="{img(lengths)}">
<h2>Examples</h2>{''.join(ex_html)}
<h2>Scheme-specific intrinsic metrics</h2><pre>{extra}</pre>
<h2>Versions</h2><ul>{versions}</ul>
<h2>Commands</h2><pre>{commands}</pre>
</body></html>
"""
    with open(os.path.join(outdir, "report.html"), "w", encoding="utf-8") as fh:
        fh.write(page)
    return {"markdown": os.path.join(outdir, "REPORT.md"), "html": os.path.join(outdir, "report.html"),
            "plots": [curves, lengths]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Write REPORT.md and report.html from a pipeline results.json")
    ap.add_argument("--results", required=True)
    ap.add_argument("--output", required=True)
    args = ap.parse_args(argv)
    with open(args.results, encoding="utf-8") as fh:
        results = json.load(fh)
    print(write_report(results, args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
