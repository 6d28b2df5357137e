"""The German part's statistics and its sections of the report: the corpus and its leakage counts, pretraining,
pseudo-perplexity per word (all words, verbs), the verb-feature and lexeme probes beside random encoders, GermEval
2018 beside its floor and random-init control, verdicts, and what the run says about HYP1 and HYP2.

The statistics follow the demo's one policy (``train_scripts/demo/policy.py``): every fine-tuning run in the
means (collapsed ones counted); the GermEval rows gated by the floor's three states; the primary family (Wordmap
against Unigram on GermEval, pretrained against random init per row) Holm-adjusted, the probes' tests exploratory
and uncorrected; Wordmap against Unigram reads "better" / "worse" / "not shown" / "not drawn" (:func:`policy.verdict`),
pretrained against random "helped" / "hurt" / "no effect" / "undetermined" (``statistics.compare``).
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

from train_scripts.demo import policy
from train_scripts.demo import report_format as fmt
from train_scripts.demo.german.plan import BASELINE, ROWS
from train_scripts.demo.report_document import Bullets, Para, Section, Table, collect
from train_scripts.demo.statistics import compare, summary, welch

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
            entry[feature] = {"score": score, "random": summary(rand), "vs_random": c}
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


def analyse(results: dict) -> dict:
    """The part's statistics (stored in results.json): GermEval per row and control (every run in the means,
    collapsed ones counted), each row's floor state, the primary tests and their Holm adjustment, the probes
    against their random encoders (exploratory, uncorrected)."""
    rows = [r["row"] for r in results.get("pretraining", [])] or list(ROWS)
    floor, margin = _floor(results)
    family = policy.Family("german")
    germeval = {}
    for row in rows:
        pre, ctrl = _scores(results, row, "pretrained"), _scores(results, row, "random")
        germeval[row] = {"pretrained": pre, "collapsed": pre["collapsed"], "random": ctrl,
                         "random_collapsed": ctrl["collapsed"],
                         "vs_control": compare(pre["values"], ctrl["values"]) if ctrl["values"] else None,
                         "floor": floor, "floor_margin": margin,
                         "floor_state": policy.floor_state(pre["mean"], floor, margin)}
        if germeval[row]["vs_control"]:
            family.primary(f"germeval/{row}/vs-random", germeval[row]["vs_control"]["p"])
    base = germeval.get(BASELINE, {}).get("pretrained", {}).get("values") or []
    for row in rows:
        if row != BASELINE:
            values = germeval[row]["pretrained"]["values"]
            germeval[row]["vs_baseline"] = compare(values, base)     # the difference, its interval and Welch's p
            family.primary(f"germeval/{row}/vs-{BASELINE}", welch(values, base))
    probes = _probes(results, rows, family)
    for row in rows:
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
    rec = family.record()
    return {"rows": rows, "germeval": germeval, "probes": probes, "tests": rec["primary"],
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
    table = [["row", "tokens / word", "updates", "epochs", "valid loss / token", "valid loss / word"]]
    for r in results.get("pretraining", []):
        table.append([_label(r["row"]), fmt.num(r.get("tokens_per_word"), 2), f"{r.get('updates', 0):,}",
                      fmt.num(r.get("epochs"), 2), fmt.num(r.get("valid_loss_per_token"), 2),
                      fmt.num(r.get("valid_loss_per_word"), 2)])
    return table


def pppl_table(results: dict) -> Optional[list]:
    pppl = results.get("pppl") or {}
    if not pppl:
        return None
    table = [["row", "PPPL / word (all)", "bits / word (all)", "floor: piece unigram (all)", "PPPL / word (verbs)",
              "bits / word (verbs)", "floor: piece unigram (verbs)", "words", "verb words", "tokens / word"]]
    for row, r in pppl.items():
        m = r.get("marked") or {}
        table.append([_label(row), fmt.num(r.get("pppl_per_word"), 1), fmt.num(r.get("bits_per_word"), 2),
                      fmt.num(r.get("unigram_bits_per_word"), 2), fmt.num(m.get("pppl_per_word"), 1),
                      fmt.num(m.get("bits_per_word"), 2), fmt.num(m.get("unigram_bits_per_word"), 2),
                      f"{r.get('words', 0):,}", f"{m.get('words', 0):,}", fmt.num(r.get("tokens_per_word"), 2)])
    return table


def probe_table(results: dict) -> Optional[list]:
    a = results.get("analysis") or {}
    probes = a.get("probes") or {}
    if not probes:
        return None
    rows = list(probes)
    header = ["measure", "majority / chance"]
    for row in rows:
        header += [f"{_label(row)}", f"{_label(row)}: random encoders", f"p (vs random; {policy.EXPLORATORY})"]
    table = [header]
    for feature in (*FEATURES, "lexeme"):
        first = probes[rows[0]].get(feature) or {}
        ref = first.get("chance") if feature == "lexeme" else first.get("majority")
        line = [f"{feature} {'(same lemma, %)' if feature == 'lexeme' else '(accuracy, %)'}", fmt.num(ref)]
        for row in rows:
            e = probes[row].get(feature) or {}
            c = e.get("vs_random") or {}
            line += [fmt.num(e.get("score")), _ms(e.get("random")), fmt.pval(c.get("p"))]
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


def conclusions(results: dict) -> list:
    """What the run shows about HYP1 and HYP2, and what it cannot."""
    a = results.get("analysis") or {}
    g, probes = a.get("germeval") or {}, a.get("probes") or {}
    out = []
    wm, base = g.get("wordmap") or {}, g.get(BASELINE) or {}
    b = wm.get("vs_baseline") or {}
    if b:
        verdict = b.get("verdict")
        out.append(f"HYP1 (a part-of-speech overhead for verbs improves a fine-tuned classifier): on GermEval 2018 "
                   f"coarse, Wordmap {_ms(wm.get('pretrained'))} against Unigram {_ms(base.get('pretrained'))} "
                   f"official F1, difference {fmt.comparison(b)} "
                   f"(Welch p {fmt.pval(b.get('p'))}, Holm {fmt.pval(b.get('holm_p'))}): {b.get('gate') or verdict}."
                   + (" This run therefore supports HYP1 at this scale." if verdict == "better" else
                      " This run therefore contradicts HYP1 at this scale." if verdict == "worse" else
                      " This run cannot decide HYP1."))
    wl, ul = (probes.get("wordmap") or {}).get("lexeme") or {}, (probes.get(BASELINE) or {}).get("lexeme") or {}
    if wl.get("score") is not None and ul.get("score") is not None:
        diff = wl["score"] - ul["score"]
        out.append(f"HYP2 (separating lexemic from functional morphs gives better lexemic tokens): a verb form's "
                   f"nearest other verb form shares its lemma {fmt.num(wl['score'])}% of the time with Wordmap's encoder "
                   f"and {fmt.num(ul['score'])}% with Unigram's ({diff:+.1f} points; random encoders "
                   f"{_ms(wl.get('random'))} and {_ms(ul.get('random'))}; chance {fmt.num(wl.get('chance'))}%). "
                   "One checkpoint per row: the difference is descriptive, not tested." + _segmentation_or_learning(
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
    out.append("What this run cannot show: whether the differences hold for another pretraining run (one checkpoint "
               "per row; the seeds vary fine-tuning only), at the thesis's scale (a BERT-base-sized model: the gpu "
               "preset), or on the thesis's own task (German Wikinews titles in 24 topics, which has no public "
               "copy; GermEval 2018 is the closest public German sentence classification).")
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
        ("German: pretraining", pretraining_table(c.r), "The same budget for both rows."),
        ("German: verbs, pseudo-perplexity", pppl_table(c.r), "Pseudo-perplexity per whitespace word on the UD "
         "German GSD test sentences: every piece masked alone in its sentence, a word's PLL the sum of its pieces'; "
         "'verbs': the gold VERB/AUX words alone. Per word, so rows with different segmentations compare. Floor: "
         "the same pieces scored without context, by their frequency in the row's pretraining text (add-one): a "
         "model under it in bits has learned something from the context."),
        ("German: verbs, probes", probe_table(c.r), "Frozen encoder, each word the mean of its pieces' last-layer "
         "states; a logistic regression per feature trained on UD dev verb tokens and scored on UD test. Lexeme: "
         "how often a verb form's nearest other verb form (cosine) shares its gold lemma. p: the pretrained "
         "encoder's one score against the random encoders' spread."),
        ("German: GermEval 2018 (HYP1)", germeval_table(c.r), "Mean ± sd "
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
    return [Section("German: HYP1 and HYP2", [Para(line) for line in conclusions(c.r)])]


SECTIONS = [_intro, _tables, _conclusions]


def sections(results: dict, folder: str) -> list:
    if "analysis" not in results:
        results = {**results, "analysis": analyse(results)}
    return collect(SECTIONS, SimpleNamespace(r=results, folder=folder))
