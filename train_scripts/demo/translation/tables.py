"""The translation report's tables (``train_scripts/demo/translation/report.py``): a row of results.json -> table cells.

Reading a row (its label, a score with its interval and its mark against the baseline row), one table per section
of the report (quality, robustness, lengths and cost, tokeniser scores, training budget, morph boundaries, the
examples and each scheme's own metrics) as lists of rows, and :func:`markdown_table` / :func:`html_table`, which
render them (the pretraining part's report uses them too).
"""
from __future__ import annotations

import json
from typing import Optional

from preprocess.evaluate.noise import NOISES
from train_scripts.demo import policy
from train_scripts.demo import report_format as fmt
from train_scripts.demo.report_document import DOWN, UP, html_table, markdown_table  # noqa: F401
from train_scripts.demo.report_format import DASH  # noqa: F401  (the report's one dash, by its old name here)

#: the test sets of the tables: the clean one, then every noise kind of preprocess.evaluate.noise's one table
TEST_SETS = (("clean", "clean"), *((k.name, k.description) for k in NOISES.values()))
NOISE_SETS = TEST_SETS[1:]


# --- reading rows --------------------------------------------------------------------------------------------

def row_label(r: dict) -> str:
    return r.get("label") or r.get("name", "?")


def row_score(r: dict, test: str, metric: str) -> Optional[dict]:
    """The score dict of a row on one test set; older rows have a bare clean float."""
    s = ((r.get("tests") or {}).get(test) or {}).get(metric)
    if isinstance(s, dict) and s.get("score") is not None:
        return s
    if test == "clean" and isinstance(r.get(metric), (int, float)):
        return {"score": float(r[metric])}
    return None


def baseline_row(rows: list, meta: dict) -> Optional[dict]:
    name = meta.get("baseline")
    return next((r for r in rows if r.get("name") == name), None)


def _updates(r: dict, meta: dict):
    return r.get("num_updates") or meta.get("max_update")


def significance_mark(s: Optional[dict], base: Optional[dict]) -> str:
    """▲ / ▼ when the policy's verdict on the row's paired test against the baseline is higher / lower."""
    if not s or not base:
        return ""
    return {"higher": UP, "lower": DOWN}.get(policy.verdict(s.get("p_value"), s["score"] - base["score"]), "")


def _cell(r: dict, test: str, metric: str, base_row: Optional[dict], clean: Optional[dict] = None) -> str:
    s = row_score(r, test, metric)
    if s is None:
        return DASH
    text = fmt.num(s["score"])
    if s.get("ci") is not None:
        text += f" ± {fmt.num(s['ci'])}"
    base = row_score(base_row, test, metric) if base_row is not None and base_row is not r else None
    text += significance_mark(s, base)
    if clean is not None:
        text += f" ({fmt.signed(s['score'] - clean['score'])})"
    return text


# --- tables --------------------------------------------------------------------------------------------------

def quality_table(rows: list, meta: dict) -> list:
    """BLEU and chrF with 95% CI per test set, significance marks against the baseline, drops from clean."""
    base = baseline_row(rows, meta)
    present = [(k, name) for k, name in TEST_SETS if any(row_score(r, k, "bleu") for r in rows)] or [TEST_SETS[0]]
    header = ["scheme"]
    for metric in ("BLEU", "chrF"):
        header += [f"{metric} {name}" for _, name in present]
    body = []
    for r in rows:
        line = [row_label(r)]
        for metric in ("bleu", "chrf"):
            clean = row_score(r, "clean", metric)
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
        line = [row_label(r)]
        for k, _ in NOISE_SETS:
            line += [fmt.num((rob.get(k) or {}).get("mean"), 1, 100), fmt.num((rob.get(k) or {}).get("mean_changed"), 1, 100)]
        body.append(line)
    return [header] + body


def intrinsic_table(rows: list, meta: dict) -> list:
    """Lengths, training cost and the final validation loss."""
    base = baseline_row(rows, meta)
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
        line = [row_label(r), fmt.num(r.get("src_tok_per_sent"), 1), fmt.num(r.get("tgt_tok_per_sent"), 1),
                fmt.num(r.get("src_tok_per_word"), 2), fmt.num(r.get("tgt_tok_per_word"), 2), rel]
        if wall:
            line += [fmt.num(r.get("train_seconds"), 0)]
        else:
            secs, n = r.get("train_cpu_seconds"), _updates(r, meta)
            line += [fmt.num(secs, 0), fmt.num(n / secs if n and secs else None, 2)]
        line.append(fmt.num(r.get("final_valid_loss"), 3))
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
        body.append([row_label(r), fmt.num(src.get("renyi_efficiency"), 3), fmt.num(tgt.get("renyi_efficiency"), 3),
                     fmt.num(src.get("fertility"), 2), fmt.num(tgt.get("fertility"), 2), fmt.num(src.get("pieces_per_word"), 2),
                     fmt.num(tgt.get("pieces_per_word"), 2)])
    return [header] + body


TOKENIZER_SCORES_NOTE = ("Rényi efficiency (order 2.5, the tokenization-scorer package) of the unigram distribution "
                         "of each row's pieces on the clean test set; fertility = all pieces per whitespace word; "
                         "pieces per word leaves out standalone ▁ pieces (so space-as-token rows can be compared "
                         "with the others).")


def budget_table(rows: list, meta: dict) -> Optional[list]:
    """What each row's training saw: updates, sentence pairs, epochs, target tokens (fairseq's log) and source
    tokens (estimated from the mean encoded training source length), with the sentences relative to the
    baseline's."""
    if not any(r.get("budget") for r in rows):
        return None
    base = (baseline_row(rows, meta) or {}).get("budget") or {}
    header = ["scheme", "updates", "sentence pairs seen", "vs baseline", "epochs", "target tokens seen",
              "source tokens seen (est.)"]
    body = []
    for r in rows:
        b = r.get("budget") or {}
        rel = DASH
        if b.get("sentences") is not None and base.get("sentences"):
            rel = f"{100 * (b['sentences'] / base['sentences'] - 1):+.1f}%"
        body.append([row_label(r), fmt.count(b.get("updates", _updates(r, meta))), fmt.count(b.get("sentences")), rel,
                     fmt.num(b.get("epochs"), 1), fmt.count(b.get("tgt_tokens")), fmt.count(b.get("src_tokens_est"))])
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


def protocol_text(b: dict) -> str:
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
        body.append([row_label(r), fmt.count(b.get("n_gold")), fmt.count(b.get("n_words")), fmt.count(b.get("skipped")),
                     fmt.count(b.get("spelled")), fmt.share(b.get("coverage")),
                     fmt.num(b.get("precision"), 1, 100), fmt.num(b.get("recall"), 1, 100), fmt.num(b.get("f1"), 1, 100),
                     fmt.num(b.get("mean_pieces"), 2)])
    return [header] + body


BOUNDARY_NOTE = ("Boundary P/R/F1: Creutz et al. (2004), micro-averaged over the scored gold words; every row of a "
                 "table is scored on the same gold words. A scheme whose pieces do not spell a word (FLOTA keeps at "
                 "most k pieces and drops the rest) is scored by the edges of the characters its pieces cover, "
                 "placed in the word left to right: a dropped stretch counts as delimited on both sides and the "
                 "gold boundaries inside it as misses. Coverage: share of the scored words' characters inside a "
                 "piece; spelled exactly: words whose pieces spell them; skipped: words whose pieces cannot be "
                 "placed at all (normalisation, unknown symbols). Pieces/word over the scored words.")


def boundary_sections(rows: list) -> list:
    """[(heading, table, note)] per gold: the comparable rows first, each other gold apart."""
    out = []
    for i, (gold, group) in enumerate(boundary_groups(rows)):
        protocols = sorted({protocol_text(r["boundary"]) for r in group})
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
            out.append((key, ", ".join(fmt.num(x, 3) if isinstance(x, float) else str(x) for x in v)))
        elif isinstance(v, float):
            out.append((key, fmt.num(v, 4)))
        else:
            out.append((key, json.dumps(v, ensure_ascii=False) if isinstance(v, list) else str(v)))
    return out


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
            table.append([row_label(r), ex.get("tokens", DASH), ex.get("tokens_de", DASH)])
        out.append((first.get("raw", ""), first.get("raw_de", ""), table))
    return out


def extra_tables(rows: list) -> list:
    return [(row_label(r), [["metric", "value"]] + [list(kv) for kv in flatten(r["extra"])])
            for r in rows if r.get("extra")]
