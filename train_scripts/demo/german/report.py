"""The German part's statistics and its sections of the report: the corpus and its leakage counts, the rows'
dictionaries and model sizes, pretraining, CLAMS agreement (HYP1's primary measure here), HYP2 against gold
morphology, whole-word pseudo-perplexity (all words, verbs) beside a character floor, the verb-feature and lexeme
probes beside random encoders, GermEval 2018 when it ran, verdicts, and how this part differs from the thesis.

The statistics follow the demo's one policy (``train_scripts/demo/policy.py``).  The part's **primary family**,
Holm-adjusted together: Wordmap against Unigram on agreement, per construction and overall (a paired t over the
pretraining seeds of the per-seed accuracy differences), and, when GermEval runs, its Wordmap-against-Unigram and
pretrained-against-random tests.  HYP2's consistency and boundary F1 are primary too, but the gold segmentation
record gives paired bootstrap intervals and no p: they are judged by their 95% interval and stay outside Holm's
adjustment (said beside them).  Everything else is **exploratory**, unadjusted: McNemar per seed, the probes
against random encoders, pseudo-perplexity's bootstrap intervals.  Verdicts are two-sided: "higher" / "lower" /
"not shown" (:func:`policy.verdict`), "not drawn" where GermEval's floor gate closes.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

from preprocess.evaluate.paired import mcnemar
from train_scripts.demo import policy
from train_scripts.demo import report_format as fmt
from train_scripts.demo.german.plan import BASELINE, ROWS
from train_scripts.demo.report_document import Bullets, Para, Section, Table, collect
from train_scripts.demo.statistics import compare, summary, welch

#: the sentence of HYP1 as the thesis words it (two-sided: "affects")
HYP1 = "a tokenisation with a part-of-speech overhead for verbs affects model performance"

FEATURES = ("VerbForm", "Tense", "Person", "Number", "Mood")
ALPHA = policy.ALPHA


def _label(row: str) -> str:
    return ROWS[row].label if row in ROWS else row


def _ms(s: Optional[dict]) -> str:
    """A summary with its count, as this part's tables show them: ``70.1 ± 0.4 (n=5)``."""
    return fmt.mean_sd(s, n=True)


# --- analysis ---------------------------------------------------------------------------------------------------

def _scores(results: dict, row: str, init: str) -> dict:
    """The official GermEval F1 (points) of a row's fine-tuning runs, collapsed ones in the mean and counted
    (:func:`policy.runs_summary`)."""
    runs = [r for r in results.get("finetune", []) if r["row"] == row and r["init"] == init
            and r.get("test_official")]
    return policy.runs_summary([r["test_official"]["macro_f1"] for r in runs], [r.get("collapsed") for r in runs])


def _floor(results: dict) -> tuple:
    """The floor's official F1 (points) and its sampling error on the test tweets (:func:`policy.floor_margin`);
    (None, None) without a floor."""
    f = next(iter(results.get("floor") or []), None)
    if not f:
        return None, None
    test = f.get("test") or {}
    value = test.get("germeval_f1", test.get("macro_f1"))
    if value is None:
        return None, None
    n = test.get("examples") or next((r["test"]["examples"] for r in results.get("finetune", [])
                                      if (r.get("test") or {}).get("examples")), None)
    return 100 * value, policy.floor_margin(100 * value, n)


def _probe_score(record: dict, feature: str) -> Optional[float]:
    f = (record.get("features") or {}).get(feature)
    return None if not f or f.get("accuracy") is None else 100 * f["accuracy"]


def _lexeme(record: dict) -> Optional[float]:
    lx = record.get("lexeme") or {}
    return None if lx.get("rate") is None else 100 * lx["rate"]


def _probes(results: dict, rows: list, family: policy.Family) -> dict:
    """The verb-feature and lexeme probes of every row against its random encoders (exploratory tests)."""
    probes = {}
    for row in rows:
        rec = (results.get("verb_probe") or {}).get(row) or {}
        randoms = rec.get("random") or []
        entry = {}
        for feature in (*FEATURES, "lexeme"):
            score = _lexeme(rec) if feature == "lexeme" else _probe_score(rec, feature)
            rand = [s for s in ((_lexeme(r) if feature == "lexeme" else _probe_score(r, feature)) for r in randoms)
                    if s is not None]
            c = compare([score], rand) if score is not None and len(rand) >= 2 else None
            seeds = [x for x in ((_lexeme(r) if feature == "lexeme" else _probe_score(r, feature))
                                 for r in (results.get("verb_probe_seeds") or {}).get(row) or [rec]) if x is not None]
            entry[feature] = {"score": score, "random": summary(rand), "vs_random": c, "seeds": summary(seeds)}
            if feature == "lexeme":
                entry[feature].update(chance=None if not rec.get("lexeme") else 100 * rec["lexeme"].get("chance", 0.0),
                                      queries=(rec.get("lexeme") or {}).get("queries"))
            else:
                entry[feature]["majority"] = None if not rec.get("features", {}).get(feature) else \
                    100 * rec["features"][feature].get("majority", 0.0)
            if c:
                family.exploratory(f"probe/{row}/{feature}/vs-random", c["p"])
                c["label"] = policy.EXPLORATORY
        probes[row] = entry
    return probes


def paired_t(a: list, b: list) -> Optional[float]:
    """Two-sided p of the paired t-test of ``a`` against ``b`` (one pair per pretraining seed); None with fewer
    than two pairs or no variance of the differences."""
    import numpy as np
    from scipy import stats

    if len(a) < 2 or len(a) != len(b) or np.ptp(np.subtract(a, b)) == 0:
        return None
    p = float(stats.ttest_rel(a, b).pvalue)
    return None if p != p else p


def _constructions(records: list) -> list:
    names = []
    for rec in records:
        for name in (rec or {}).get("constructions") or {}:
            if name not in names:
                names.append(name)
    return names + ["overall"]


def _cell(rec: Optional[dict], name: str) -> dict:
    rec = rec or {}
    return (rec.get("overall") if name == "overall" else (rec.get("constructions") or {}).get(name)) or {}


def _correct(rec: Optional[dict], name: str) -> Optional[list]:
    """The 0/1 per pair of a construction, or of all pairs in the constructions' order for "overall"."""
    if name != "overall":
        return _cell(rec, name).get("correct")
    parts = [c.get("correct") for c in ((rec or {}).get("constructions") or {}).values()]
    return None if not parts or any(x is None for x in parts) else [x for part in parts for x in part]


def _agreement(results: dict, rows: list, family: policy.Family) -> dict:
    """Agreement accuracy per construction, row and pretraining seed, the random-weight control (seed 1's random
    encoders) and chance; Wordmap against the baseline by McNemar per seed (exploratory) and across seeds by the
    paired t of the per-seed differences (primary)."""
    by_seed = results.get("agreement_seeds") or {r: [v] for r, v in (results.get("agreement") or {}).items()}
    if not any(by_seed.get(r) for r in rows):
        return {}
    out: dict = {"rows": {}, "comparisons": {}}
    names = _constructions([rec for r in rows for rec in by_seed.get(r) or []])
    for row in rows:
        recs = by_seed.get(row) or []
        out["rows"][row] = {}
        for name in names:
            accs = [_cell(rec, name).get("accuracy") for rec in recs]
            accs = [x for x in accs if x is not None]
            first = _cell(recs[0] if recs else None, name)
            out["rows"][row][name] = {"seeds": accs, "summary": summary(accs), "pairs": first.get("pairs"),
                                      "chance": first.get("chance", 50.0),
                                      "random": summary(list(first.get("random") or []))}
    for row in rows:
        if row == BASELINE or BASELINE not in out["rows"]:
            continue
        for name in names:
            a, b = out["rows"][row][name]["seeds"], out["rows"][BASELINE][name]["seeds"]
            n = min(len(a), len(b))
            diffs = [x - y for x, y in zip(a[:n], b[:n])]
            per_seed = []
            for k in range(n):
                ca, cb = (_correct((by_seed.get(r) or [None] * n)[k], name) for r in (BASELINE, row))
                m = mcnemar(ca, cb) if mcnemar and ca is not None and cb is not None and len(ca) == len(cb) \
                    else None
                per_seed.append({"seed": k + 1, "diff": diffs[k], "mcnemar": m})
                if m:
                    family.exploratory(f"agreement/{name}/{row}/vs-{BASELINE}/seed{k + 1}/mcnemar", m.get("p"))
            p = paired_t(a[:n], b[:n])
            test = f"agreement/{name}/{row}/vs-{BASELINE}"
            family.primary(test, p)
            out["comparisons"].setdefault(row, {})[name] = {
                "test": test, "diff": summary(diffs).get("mean"), "diffs": diffs, "p": p, "per_seed": per_seed}
    return out


def _gold(results: dict) -> dict:
    """HYP2 against gold: each row's consistency (both share modes) and boundary F1, and Wordmap minus the
    baseline with its paired bootstrap interval; primary, judged by the interval (the record has no p)."""
    g = results.get("gold") or {}
    if not g.get("rows"):
        return {}
    order = g.get("row_order") or list(ROWS)
    names = list(g["rows"])
    by_row = dict(zip(order, names))
    out = {"rows": {}, "comparisons": {}}
    for row, name in by_row.items():
        rec = g["rows"][name]
        out["rows"][row] = {"consistency": {m: (v or {}).get("f1") for m, v in (rec.get("consistency") or {}).items()},
                            "boundary": (rec.get("boundary") or {}).get("f1"),
                            "verbs_aligned": rec.get("verbs_aligned")}
    for row, name in by_row.items():
        if row == BASELINE or BASELINE not in by_row:
            continue
        c = (g.get("comparisons") or {}).get(f"{name} - {by_row[BASELINE]}") or {}
        entry = {}
        for mode, v in (c.get("consistency") or {}).items():
            entry[f"consistency/{mode}"] = _interval((v or {}).get("f1"))
        entry["boundary"] = _interval((c.get("boundary") or {}).get("f1"))
        out["comparisons"][row] = entry
    return out


def _interval(d: Optional[dict]) -> Optional[dict]:
    """A bootstrap difference with its interval and the two-sided word of the interval rule."""
    if not d or d.get("difference") is None:
        return None
    low, high = d.get("low"), d.get("high")
    word = policy.NOT_SHOWN if low is None or high is None or low <= 0 <= high else \
        ("higher" if low > 0 else "lower")
    return {"diff": d["difference"], "low": low, "high": high, "verdict": word}


def _pppl_seeds(results: dict, rows: list) -> dict:
    """Whole-word bits per word per row and pretraining seed, all words and verbs, with the character floor."""
    by_seed = results.get("pppl_seeds") or {r: [v] for r, v in (results.get("pppl") or {}).items()}
    out = {}
    for row in rows:
        recs = by_seed.get(row) or []
        out[row] = {"all": summary([r["bits_per_word"] for r in recs if r.get("bits_per_word") is not None]),
                    "verbs": summary([(r.get("marked") or {}).get("bits_per_word") for r in recs
                                      if (r.get("marked") or {}).get("bits_per_word") is not None]),
                    "floor": next((r.get("char_floor_bits_per_word") for r in recs
                                   if r.get("char_floor_bits_per_word") is not None), None),
                    "floor_verbs": next(((r.get("marked") or {}).get("char_floor_bits_per_word") for r in recs
                                         if (r.get("marked") or {}).get("char_floor_bits_per_word") is not None),
                                        None)}
    return out


def analyse(results: dict) -> dict:
    """The part's statistics (stored in results.json): GermEval per row and control (every run in the means,
    collapsed ones counted), each row's floor state, the primary tests and their Holm adjustment, the probes
    against their random encoders (exploratory, uncorrected)."""
    rows = list(dict.fromkeys(r["row"] for r in results.get("pretraining", []))) or list(ROWS)
    floor, margin = _floor(results)
    family = policy.Family("german")
    agreement = _agreement(results, rows, family)
    germeval = {}
    ran = any(r.get("test_official") for r in results.get("finetune", []))
    for row in rows if ran else []:
        pre, ctrl = _scores(results, row, "pretrained"), _scores(results, row, "random")
        germeval[row] = {"pretrained": pre, "collapsed": pre["collapsed"], "random": ctrl,
                         "random_collapsed": ctrl["collapsed"],
                         "vs_control": compare(pre["values"], ctrl["values"]) if ctrl["values"] else None,
                         "floor": floor, "floor_margin": margin,
                         "floor_state": policy.floor_state(pre["mean"], floor, margin)}
        if germeval[row]["vs_control"]:
            family.primary(f"germeval/{row}/vs-random", germeval[row]["vs_control"]["p"])
    base = germeval.get(BASELINE, {}).get("pretrained", {}).get("values") or []
    for row in rows if ran else []:
        if row != BASELINE:
            values = germeval[row]["pretrained"]["values"]
            germeval[row]["vs_baseline"] = compare(values, base)     # the difference, its interval and Welch's p
            family.primary(f"germeval/{row}/vs-{BASELINE}", welch(values, base))
    probes = _probes(results, rows, family)
    for row in rows if ran else []:
        g = germeval[row]
        if g["vs_control"]:
            g["vs_control"]["holm_p"] = q = family.p(f"germeval/{row}/vs-random")
            g["vs_control"]["verdict"] = policy.control_verdict(g["vs_control"], q)
        cmp = g.get("vs_baseline")
        if cmp is not None:
            cmp["holm_p"] = q = family.p(f"germeval/{row}/vs-{BASELINE}")
            states = {_label(row): g["floor_state"], _label(BASELINE): germeval.get(BASELINE, {}).get("floor_state")}
            cmp["verdict"] = policy.verdict(q, cmp.get("diff"), states.values(), words=("better", "worse"))
            cmp["gate"] = policy.gate_reason(states)
    for by_name in (agreement.get("comparisons") or {}).values():
        for c in by_name.values():
            c["holm_p"] = q = family.p(c["test"])
            c["verdict"] = policy.verdict(q, c.get("diff"))
    gold = _gold(results)
    for row, entry in (gold.get("comparisons") or {}).items():
        for name in entry:
            family.primary(f"gold/{name}/{row}/vs-{BASELINE}", None)   # judged by its interval: no p to adjust
    rec = family.record()
    return {"rows": rows, "germeval": germeval, "agreement": agreement, "gold": gold,
            "pppl": _pppl_seeds(results, rows), "probes": probes, "tests": rec["primary"],
            "exploratory": rec["exploratory"], "family": rec, "floor": floor, "floor_margin": margin}


# --- tables -----------------------------------------------------------------------------------------------------

def corpus_table(results: dict) -> Optional[list]:
    corpus = (results.get("data") or {}).get("corpus") or {}
    sources = corpus.get("sources") or {}
    if not sources:
        return None
    rules = list(corpus.get("rules") or [])
    rule_names = [r if isinstance(r, str) else r[0] for r in rules] or sorted(
        {k for s in sources.values() for k in (s.get("removed") or {})})
    table = [["source", "lines", *[f"removed: {r}" for r in rule_names], "kept", "train", "valid"]]
    for name, s in sources.items():
        removed = s.get("removed") or {}
        table.append([name, f"{s.get('lines', 0):,}", *[f"{removed.get(r, 0):,}" for r in rule_names],
                      f"{s.get('kept', 0):,}", f"{s.get('train', 0):,}", f"{s.get('valid', 0):,}"])
    return table


def pretraining_table(results: dict) -> list:
    table = [["row", "pretraining seed", "tokens / word", "updates", "epochs", "valid loss / token",
              "valid loss / word"]]
    for r in results.get("pretraining", []):
        table.append([_label(r["row"]), str(r.get("pretrain_seed", 1)), fmt.num(r.get("tokens_per_word"), 2),
                      f"{r.get('updates', 0):,}",
                      fmt.num(r.get("epochs"), 2), fmt.num(r.get("valid_loss_per_token"), 2),
                      fmt.num(r.get("valid_loss_per_word"), 2)])
    return table


def dictionary_table(results: dict) -> Optional[list]:
    """Each row's vocabulary option, fairseq dictionary entries and pretrained parameter count."""
    d = results.get("dictionaries") or {}
    if not d:
        return None
    s = (results.get("meta") or {}).get("settings") or {}
    sizes = {BASELINE: s.get("baseline_vocab_size") or s.get("vocab_size")}
    table = [["row", "--vocab-size", "dictionary entries", "parameters"]]
    for row, e in d.items():
        table.append([_label(row), fmt.count(sizes.get(row, s.get("vocab_size"))), fmt.count(e.get("entries")),
                      fmt.count(e.get("parameters"))])
    return table


def agreement_table(results: dict) -> Optional[list]:
    """Agreement accuracy per construction and row (mean ± sd over pretraining seeds, each seed's value), the
    random encoders and chance, Wordmap minus the baseline with the paired t over seeds, Holm, McNemar per seed and
    the verdict."""
    ag = (results.get("analysis") or {}).get("agreement") or {}
    if not ag.get("rows"):
        return None
    rows = list(ag["rows"])
    names = list(ag["rows"][rows[0]])
    header = ["construction", "pairs", "chance"]
    for row in rows:
        header += [f"{_label(row)} (seeds)", f"{_label(row)}: random encoders"]
    header += ["Wordmap - Unigram per seed", "McNemar p per seed", "p (paired t over seeds)", "p (Holm)", "verdict"]
    table = [header]
    for name in names:
        first = ag["rows"][rows[0]][name]
        line = [name, fmt.count(first.get("pairs")), fmt.num(first.get("chance"))]
        for row in rows:
            e = ag["rows"][row][name]
            line += [_ms(e["summary"]) + " (" + ", ".join(fmt.num(x) for x in e["seeds"]) + ")",
                     _ms(e.get("random"))]
        c = next((by_name[name] for by_name in (ag.get("comparisons") or {}).values() if name in by_name), None)
        if c:
            line += [", ".join(fmt.signed(x) for x in c["diffs"]) or fmt.DASH,
                     ", ".join(fmt.pval((x.get("mcnemar") or {}).get("p")) for x in c["per_seed"]) or fmt.DASH,
                     fmt.pval(c.get("p")), fmt.pval(c.get("holm_p")), c.get("verdict", fmt.DASH)]
        else:
            line += [fmt.DASH] * 5
        table.append(line)
    return table


def gold_table(results: dict) -> Optional[list]:
    """HYP2 against gold: consistency F1 (both share modes) and MorphyNet boundary F1 per row, and Wordmap minus
    the baseline with its paired bootstrap 95% interval."""
    g = (results.get("analysis") or {}).get("gold") or {}
    if not g.get("rows"):
        return None
    modes = sorted({m for e in g["rows"].values() for m in e["consistency"]})
    table = [["row", *[f"consistency F1 ({m})" for m in modes], "boundary F1 (MorphyNet)", "verbs aligned"]]
    for row, e in g["rows"].items():
        table.append([_label(row), *[fmt.num(e["consistency"].get(m), 3) for m in modes],
                      fmt.num(e.get("boundary"), 3), fmt.count(e.get("verbs_aligned"))])
    for row, c in (g.get("comparisons") or {}).items():
        cells = [c.get(f"consistency/{m}") for m in modes] + [c.get("boundary")]
        table.append([f"{_label(row)} - {_label(BASELINE)} [95% interval]",
                      *[(fmt.diff_ci(x["diff"], x["low"], x["high"], 3) + f": {x['verdict']}") if x else fmt.DASH
                        for x in cells], ""])
    return table


def pppl_table(results: dict) -> Optional[list]:
    """Whole-word bits per word per row (mean ± sd over pretraining seeds), all words and verbs, the character
    floor, and Wordmap minus the baseline per seed with the paired bootstrap interval."""
    a = (results.get("analysis") or {}).get("pppl") or {}
    if not any((e.get("all") or {}).get("n") for e in a.values()):
        return None
    table = [["row", "bits / word (all; seeds)", "character floor (all)", "bits / word (verbs; seeds)",
              "character floor (verbs)", f"- {_label(BASELINE)} per seed (all) [95%]",
              f"- {_label(BASELINE)} per seed (verbs) [95%]"]]
    boot = results.get("pppl_bootstrap") or {}
    for row, e in a.items():
        per = boot.get(row) or []

        def cells(kind, per=per, row=row):
            if row == BASELINE:
                return "(baseline)"
            done = [x.get(kind) for x in per if x.get(kind)]
            return "; ".join(fmt.diff_ci(d["difference"], d.get("low"), d.get("high"), 2) for d in done) \
                or fmt.DASH
        table.append([_label(row), _ms_digits(e.get("all"), 2), fmt.num(e.get("floor"), 2),
                      _ms_digits(e.get("verbs"), 2), fmt.num(e.get("floor_verbs"), 2), cells("all"),
                      cells("verbs")])
    return table


def _ms_digits(s: Optional[dict], digits: int) -> str:
    return fmt.mean_sd(s, digits=digits, n=True)


def probe_table(results: dict) -> Optional[list]:
    a = results.get("analysis") or {}
    probes = a.get("probes") or {}
    if not probes:
        return None
    rows = list(probes)
    header = ["measure", "majority / chance"]
    for row in rows:
        header += [f"{_label(row)}", f"{_label(row)}: random encoders", f"p (vs random; {policy.EXPLORATORY})",
                   f"{_label(row)}: every pretraining seed"]
    table = [header]
    for feature in (*FEATURES, "lexeme"):
        first = probes[rows[0]].get(feature) or {}
        ref = first.get("chance") if feature == "lexeme" else first.get("majority")
        line = [f"{feature} {'(same lemma, %)' if feature == 'lexeme' else '(accuracy, %)'}", fmt.num(ref)]
        for row in rows:
            e = probes[row].get(feature) or {}
            c = e.get("vs_random") or {}
            line += [fmt.num(e.get("score")), _ms(e.get("random")), fmt.pval(c.get("p")), _ms(e.get("seeds"))]
        table.append(line)
    return table


def germeval_table(results: dict) -> Optional[list]:
    a = results.get("analysis") or {}
    g = a.get("germeval") or {}
    if not g:
        return None
    table = [["row", "official F1 (pretrained, all runs)", "collapsed", "random init", "vs random init",
              "p (Holm)", "floor (char n-gram NB) ± sampling error", f"vs {_label(BASELINE)}", "p (Welch)",
              "p (Holm)", "verdict"]]
    for row, e in g.items():
        c = e.get("vs_control") or {}
        b = e.get("vs_baseline") or {}
        table.append([_label(row), _ms(e["pretrained"]) + policy.floor_note(e.get("floor_state")),
                      f"{e['collapsed']} / {e['pretrained']['n']}",
                      _ms(e["random"]) + (f", {e['random_collapsed']} collapsed" if e["random_collapsed"] else ""),
                      f"{fmt.comparison(c)}: {c.get('verdict')}" if c else fmt.DASH,
                      fmt.pval(c.get("holm_p")) if c else fmt.DASH, fmt.with_error(e.get("floor"), e.get("floor_margin")),
                      fmt.comparison(b) if b else "(baseline)", fmt.pval(b.get("p")) if b else fmt.DASH,
                      fmt.pval(b.get("holm_p")) if b else fmt.DASH,
                      (b.get("gate") or b.get("verdict", fmt.DASH)) if b else fmt.DASH])
    return table


# --- conclusions ------------------------------------------------------------------------------------------------

def _segmentation_or_learning(diff: float, wordmap: dict, base: dict, what: str) -> str:
    """Whether a difference between the rows is there before pretraining (their random encoders differ as much:
    the segmentation's, e.g. Wordmap gives a verb's forms a shared lexeme piece that any encoder's word state
    carries) or came with it."""
    wr, ur = (wordmap.get("random") or {}).get("mean"), (base.get("random") or {}).get("mean")
    if wr is None or ur is None:
        return ""
    seg = wr - ur
    learned = diff - seg
    verdicts = [(e.get("vs_random") or {}).get("verdict") for e in (wordmap, base)]
    text = (f" Random encoders of the two segmentations differ by {seg:+.1f} points on the same {what} probe, so "
            f"{learned:+.1f} of the difference came with pretraining (pretrained against random: Wordmap "
            f"{verdicts[0]}, Unigram {verdicts[1]})")
    if abs(learned) < abs(diff) / 2:
        text += ("; most of it is the segmentation's, present before any training, not what pretraining learned "
                 "about lexemes")
    return text + "."


#: every way this part differs from the thesis (Jung 2023, sections 1.2, 3.2.3 and 4), stated in the report
DEVIATIONS = (
    "How this part differs from the thesis. Regime: the thesis continued the masked-LM training of "
    "bert-base-german-cased with Wordmap's pieces added to its vocabulary; here each row's RoBERTa is pretrained "
    "from scratch (--de-init CHECKPOINT continues from a German RoBERTa for both rows, closer to the thesis, and is "
    "not what the cpu and fast presets run). Data: 34,774 lines of German (Multi30k, GermEval training tweets, UD "
    "dev) against the thesis's 500k GerParCor/OSCAR sentences. Task: CLAMS subject-verb agreement, pseudo-"
    "perplexity, frozen-encoder probes and gold segmentation (and GermEval 2018 when asked) against the thesis's "
    "German Wikinews title classification in 24 classes, which has no public copy. Vocabulary: Wordmap on an 8k "
    "Unigram base with the baseline at its dictionary size (about 20k entries each on the cpu corpus), not the "
    "thesis's 30k base vocabulary of bert-base-german-cased. HYP1's wording: the thesis's 'affects model "
    "performance', tested two-sided (higher, lower or not shown), not as 'improves'. Model: 2 layers and 128 "
    "dimensions in the cpu preset; the gpu preset's RoBERTa-base is BERT-base-sized but still pretrained from "
    "scratch on this corpus, so neither preset reproduces the thesis's design.")


def conclusions(results: dict) -> list:
    """What the run shows about HYP1 (agreement; GermEval when it ran) and HYP2 (gold segmentation, the lexeme
    probe), and what it cannot."""
    a = results.get("analysis") or {}
    g, probes = a.get("germeval") or {}, a.get("probes") or {}
    out = []
    ag = ((a.get("agreement") or {}).get("comparisons") or {}).get("wordmap") or {}
    if ag:
        words = {name: c.get("verdict", policy.NOT_SHOWN) for name, c in ag.items()}
        overall = ag.get("overall") or {}
        out.append(f"HYP1 ({HYP1}), on CLAMS agreement: Wordmap's segmentation affects agreement overall: "
                   f"{words.get('overall', policy.NOT_SHOWN)} (Wordmap minus Unigram "
                   f"{fmt.signed(overall.get('diff'))} points, mean over pretraining seeds; paired t p "
                   f"{fmt.pval(overall.get('p'))}, Holm {fmt.pval(overall.get('holm_p'))}); per construction: "
                   + "; ".join(f"{name} {word}" for name, word in words.items() if name != "overall") + ".")
    wm, base = g.get("wordmap") or {}, g.get(BASELINE) or {}
    b = wm.get("vs_baseline") or {}
    if b:
        verdict = b.get("verdict")
        out.append(f"HYP1 on GermEval 2018 coarse: Wordmap {_ms(wm.get('pretrained'))} against Unigram "
                   f"{_ms(base.get('pretrained'))} official F1, difference {fmt.comparison(b)} "
                   f"(Welch p {fmt.pval(b.get('p'))}, Holm {fmt.pval(b.get('holm_p'))}): {b.get('gate') or verdict}."
                   + (" The tweets therefore show an effect of Wordmap's segmentation." if verdict in ("better", "worse")
                      else " The tweets cannot decide HYP1."))
    gold = ((a.get("gold") or {}).get("comparisons") or {}).get("wordmap") or {}
    if gold:
        out.append("HYP2 (separating lexemic from functional morphs gives better lexemic tokens), against gold "
                   "morphology no row learned from: Wordmap minus Unigram "
                   + "; ".join(f"{name.replace('/', ' ')} F1 {fmt.diff_ci(c['diff'], c['low'], c['high'], 3)}: "
                               f"{c['verdict']}" for name, c in gold.items() if c)
                   + " (paired bootstrap 95% intervals over the verb forms and MorphyNet words; a segmentation has "
                     "no seed).")
    wl, ul = (probes.get("wordmap") or {}).get("lexeme") or {}, (probes.get(BASELINE) or {}).get("lexeme") or {}
    if wl.get("score") is not None and ul.get("score") is not None:
        diff = wl["score"] - ul["score"]
        out.append(f"HYP2 (separating lexemic from functional morphs gives better lexemic tokens): a verb form's "
                   f"nearest other verb form shares its lemma {fmt.num(wl['score'])}% of the time with Wordmap's encoder "
                   f"and {fmt.num(ul['score'])}% with Unigram's ({diff:+.1f} points; random encoders "
                   f"{_ms(wl.get('random'))} and {_ms(ul.get('random'))}; chance {fmt.num(wl.get('chance'))}%). "
                   "Pretraining seed 1's encoders: the difference is descriptive, not tested."
                   + _segmentation_or_learning(
                       diff, wl, ul, "lexeme"))
    feats = [f for f in FEATURES if (probes.get("wordmap") or {}).get(f, {}).get("score") is not None
             and (probes.get(BASELINE) or {}).get(f, {}).get("score") is not None]
    if feats:
        diffs = [probes["wordmap"][f]["score"] - probes[BASELINE][f]["score"] for f in feats
                 if probes.get(BASELINE, {}).get(f, {}).get("score") is not None]
        rand = [(probes["wordmap"][f].get("random") or {}).get("mean") is not None
                and (probes[BASELINE][f].get("random") or {}).get("mean") is not None for f in feats]
        if diffs:
            line = (f"Verb features (what Wordmap's inflection pieces should make visible): Wordmap minus Unigram "
                    f"probe accuracy over {', '.join(feats)}: " + ", ".join(f"{d:+.1f}" for d in diffs) + " points")
            if all(rand):
                seg = [probes["wordmap"][f]["random"]["mean"] - probes[BASELINE][f]["random"]["mean"] for f in feats]
                line += ("; between their random encoders: " + ", ".join(f"{d:+.1f}" for d in seg) + " points, so "
                         "what pretraining added is the difference of the two: "
                         + ", ".join(f"{d - s:+.1f}" for d, s in zip(diffs, seg)))
            out.append(line + ".")
    seeds = len((results.get("agreement_seeds") or {}).get(BASELINE) or []) or 1
    out.append(f"What this run cannot show: whether the differences hold beyond its {seeds} pretraining seed(s) per "
               "row and this small corpus, for a model continued from a pretrained German checkpoint as in the "
               "thesis (--de-init), or on the thesis's own task (German Wikinews titles in 24 topics, which has no "
               "public copy).")
    return out


# --- sections ---------------------------------------------------------------------------------------------------

def _intro(c: SimpleNamespace) -> list:
    s = (c.r.get("meta") or {}).get("settings") or {}
    corpus = (c.r.get("data") or {}).get("corpus") or {}
    germeval = (c.r.get("data") or {}).get("germeval") or {}
    ud = (c.r.get("data") or {}).get("ud") or {}
    blocks = [Para(f"Wordmap (Jung 2023) against a Unigram baseline, pretrained on the same German text with the "
                   f"same budget and seeds. Preset {s.get('preset')} ({s.get('note')}).")]
    notes = list(corpus.get("notes") or [])
    if notes:
        blocks.append(Bullets(notes))
    if germeval:
        rows = germeval.get("rows") or {}
        blocks.append(Para(f"GermEval 2018 coarse: {rows.get('train', 0):,} training, {rows.get('dev', 0):,} dev "
                           f"(a stratified {100 * germeval.get('dev_fraction', 0):.0f}% of the training tweets, seed "
                           f"{germeval.get('seed')}), {rows.get('test', 0):,} test tweets; the official F1 of "
                           "evaluationScriptGermeval2018.pl (the harmonic mean of the averaged precision and "
                           "recall)."))
    if ud:
        split = {s: ud.get(s) or {} for s in ("dev", "test")}
        blocks.append(Para("UD German GSD: " + ", ".join(
            f"{s} {v.get('sentences', 0):,} sentences ({v.get('verbs', 0):,} VERB/AUX words)" for s, v in split.items())
            + "; the probes are trained on dev and scored on test, pseudo-perplexity is on the test sentences (none "
              "of which is in the pretraining text)."))
    return [Section("German: Wordmap's own question", blocks)]


def _tables(c: SimpleNamespace) -> list:
    out = []
    for heading, table, note in (
        ("German: corpus and leakage", corpus_table(c.r), "Every line is compared after the stated normalisation; "
         "a GermEval test tweet, a UD test sentence or a Multi30k validation/test sentence is removed from the "
         "pretraining text, and so is an exact duplicate."),
        ("German: dictionaries and model sizes", dictionary_table(c.r), "Equal capacity: Wordmap's dictionary is "
         "its base Unigram's pieces plus every piece its segmenter can write, which no base size brings down to the "
         "baseline's 8k (12,786 segmenter pieces on the cpu corpus), so the Unigram baseline is learned at Wordmap's "
         "dictionary size. Entries: the rows' fairseq dict.txt; parameters: read from pretraining seed 1's "
         "checkpoint (the tied output projection counted once)."),
        ("German: pretraining", pretraining_table(c.r), "The same budget for both rows, every pretraining seed."),
        ("German: agreement (HYP1)", agreement_table(c.r), "CLAMS German subject-verb agreement pairs: a pair is "
         "right when the model scores the grammatical sentence higher (train_scripts.agreement, pretraining form); "
         "chance 50%. Each pretraining seed's accuracy in brackets; random encoders: the same architecture from "
         "random weights (they do not depend on pretraining: scored once). McNemar: the two rows' pairs at one "
         f"seed ({policy.EXPLORATORY}); the verdict is the paired t over seeds of the per-seed differences, "
         "Holm-adjusted over the part's primary family (agreement per construction and overall; GermEval's tests "
         "when it ran); two-sided: 'not shown' is no evidence either way, not 'no difference'."),
        ("German: HYP2 against gold segmentation", gold_table(c.r), "train_scripts.gold_segmentation on the rows' "
         "segmentations (no model, no seeds): consistency of the pieces of UD German GSD test's verb forms with "
         "their gold lemmas (any piece / the longest piece shared), boundary F1 on MorphyNet's verb derivations. "
         "Primary, but judged by the 95% paired bootstrap interval (higher / lower where it excludes zero, else not "
         "shown): the record has no p, so these tests are outside Holm's adjustment."),
        ("German: verbs, pseudo-perplexity", pppl_table(c.r), "Whole-word pseudo-perplexity on the UD German GSD "
         "test sentences (train_scripts.pseudo_perplexity --whole-words): bits per whitespace word, mean ± sd over "
         "pretraining seeds; 'verbs': the gold VERB/AUX words alone. Character floor: a segmentation-free "
         "character model's bits per word on the same words, the same for every row. The differences: per "
         f"pretraining seed, with the paired bootstrap 95% interval over the sentences ({policy.EXPLORATORY})."),
        ("German: verbs, probes", probe_table(c.r), "Frozen encoder, each word the mean of its pieces' last-layer "
         "states; a logistic regression per feature trained on UD dev verb tokens and scored on UD test. Lexeme: "
         "how often a verb form's nearest other verb form (cosine) shares its gold lemma. p: pretraining seed 1's "
         "encoder's score against the random encoders' spread (random encoders do not depend on pretraining: "
         "scored once); the last column: every pretraining seed's score, mean ± sd."),
        ("German: GermEval 2018 (HYP1, when asked)", germeval_table(c.r), "Mean ± sd "
         "over every fine-tuning seed (a collapsed run, one class for every dev tweet, stays in the mean and is "
         "counted); the interval is the difference's 95% interval; "
         "Holm: over this part's primary tests (Wordmap against Unigram, pretrained against random init per row; "
         "the probes' tests are exploratory, uncorrected). Floor: ± its sampling error, one binomial standard error "
         "on the test tweets; Wordmap is compared with Unigram only where both rows are above it (else not drawn); "
         "a non-significant difference is not shown (demo policy, docs/demo.md)."),
    ):
        if table:
            out.append(Section(heading, [Table(table), Para(note)]))
    return out


def _conclusions(c: SimpleNamespace) -> list:
    return [Section("German: HYP1 and HYP2", [Para(line) for line in conclusions(c.r)]),
            Section("German: deviations from the thesis", [Para(DEVIATIONS)])]


SECTIONS = [_intro, _tables, _conclusions]


def sections(results: dict, folder: str) -> list:
    if "analysis" not in results:
        results = {**results, "analysis": analyse(results)}
    return collect(SECTIONS, SimpleNamespace(r=results, folder=folder))
