"""The German part's statistics and its sections of the report: the corpus and its leakage counts, pretraining,
pseudo-perplexity per word (all words, verbs), the verb-feature and lexeme probes beside random encoders, GermEval
2018 beside its floor and random-init control, verdicts, and what the run says about HYP1 and HYP2.

Verdicts use the pretraining part's rule (``train_scripts/demo/statistics.py``): "helped" / "hurt" / "no effect" /
"undetermined" for pretrained against random init; Wordmap against Unigram: "better" / "worse" (Holm-adjusted
p < 0.05 over this part's tests and the 95% interval of the difference on that side of 0), "no difference" (the
interval inside +-1 point) or "undetermined".
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

from train_scripts.demo.german.plan import BASELINE, ROWS
from train_scripts.demo.report_document import Bullets, Para, Section, Table, collect
from train_scripts.demo.statistics import HELPED_POINTS, compare, holm, summary, welch

FEATURES = ("VerbForm", "Tense", "Person", "Number", "Mood")
ALPHA = 0.05


def _label(row: str) -> str:
    return ROWS[row].label if row in ROWS else row


def _f(v, d=1) -> str:
    return "–" if v is None else f"{v:.{d}f}"


def _p(p) -> str:
    return "–" if p is None else f"{p:.2g}"


def _ms(s: Optional[dict]) -> str:
    if not s or s.get("mean") is None:
        return "–"
    return f"{s['mean']:.1f}" + (f" ± {s['sd']:.1f}" if s.get("sd") is not None else "") + f" (n={s['n']})"


# --- analysis ---------------------------------------------------------------------------------------------------

def _scores(results: dict, row: str, init: str) -> tuple[list, int]:
    """The official GermEval F1 (points) of a row's fine-tuning runs that did not collapse; how many collapsed."""
    kept, collapsed = [], 0
    for r in results.get("finetune", []):
        if r["row"] == row and r["init"] == init and r.get("test_official"):
            if r.get("collapsed"):
                collapsed += 1
            else:
                kept.append(r["test_official"]["macro_f1"])
    return kept, collapsed


def _floor(results: dict) -> Optional[float]:
    f = next(iter(results.get("floor") or []), None)
    if not f:
        return None
    test = f.get("test") or {}
    value = test.get("germeval_f1", test.get("macro_f1"))
    return None if value is None else 100 * value


def _probe_score(record: dict, feature: str) -> Optional[float]:
    f = (record.get("features") or {}).get(feature)
    return None if not f or f.get("accuracy") is None else 100 * f["accuracy"]


def _lexeme(record: dict) -> Optional[float]:
    lx = record.get("lexeme") or {}
    return None if lx.get("rate") is None else 100 * lx["rate"]


def analyse(results: dict) -> dict:
    """The part's statistics (stored in results.json): GermEval per row and control, the tests and their Holm
    adjustment, the probes against their random encoders."""
    rows = [r["row"] for r in results.get("pretraining", [])] or list(ROWS)
    floor = _floor(results)
    germeval = {}
    for row in rows:
        kept, collapsed = _scores(results, row, "pretrained")
        ctrl, ctrl_collapsed = _scores(results, row, "random")
        germeval[row] = {"pretrained": summary(kept), "collapsed": collapsed, "random": summary(ctrl),
                         "random_collapsed": ctrl_collapsed, "vs_control": compare(kept, ctrl) if ctrl else None,
                         "floor": floor,
                         "above_floor": None if floor is None or not kept else sum(kept) / len(kept) > floor}
    tests = []   # (name, p) of every test of the part, Holm-adjusted together
    for row in rows:
        c = germeval[row]["vs_control"]
        if c:
            tests.append((f"germeval/{row}/vs-random", c["p"]))
    base = germeval.get(BASELINE, {}).get("pretrained", {}).get("values") or []
    for row in rows:
        if row == BASELINE:
            continue
        values = germeval[row]["pretrained"]["values"]
        cmp = compare(values, base)     # the difference, its interval and Welch's p
        germeval[row]["vs_baseline"] = cmp
        tests.append((f"germeval/{row}/vs-{BASELINE}", welch(values, base)))
    probes = {}
    for row in rows:
        rec = (results.get("verb_probe") or {}).get(row) or {}
        randoms = rec.get("random") or []
        entry = {}
        for feature in FEATURES:
            score = _probe_score(rec, feature)
            rand = [s for s in (_probe_score(r, feature) for r in randoms) if s is not None]
            c = compare([score], rand) if score is not None and len(rand) >= 2 else None
            entry[feature] = {"score": score, "random": summary(rand), "vs_random": c,
                              "majority": None if not rec.get("features", {}).get(feature) else
                              100 * rec["features"][feature].get("majority", 0.0)}
            if c:
                tests.append((f"probe/{row}/{feature}/vs-random", c["p"]))
        lx = _lexeme(rec)
        rand = [s for s in (_lexeme(r) for r in randoms) if s is not None]
        c = compare([lx], rand) if lx is not None and len(rand) >= 2 else None
        entry["lexeme"] = {"score": lx, "random": summary(rand), "vs_random": c,
                           "chance": None if not rec.get("lexeme") else 100 * rec["lexeme"].get("chance", 0.0),
                           "queries": (rec.get("lexeme") or {}).get("queries")}
        if c:
            tests.append((f"probe/{row}/lexeme/vs-random", c["p"]))
        probes[row] = entry
    adjusted = holm([p for _, p in tests])
    holm_p = {name: q for (name, _), q in zip(tests, adjusted)}
    for row in rows:
        cmp = germeval[row].get("vs_baseline")
        if cmp is not None:
            q = holm_p.get(f"germeval/{row}/vs-{BASELINE}")
            cmp["holm_p"] = q
            cmp["verdict"] = _row_verdict(cmp, q, germeval[row], germeval.get(BASELINE, {}))
    return {"rows": rows, "germeval": germeval, "probes": probes, "tests": [
        {"test": name, "p": p, "holm_p": holm_p[name]} for name, p in tests], "floor": floor}


def _row_verdict(cmp: dict, q, row: dict, base: dict) -> str:
    """Wordmap against Unigram: below the floor, no comparison is drawn; else better / worse / no difference /
    undetermined (module doc)."""
    if not row.get("above_floor") or not base.get("above_floor"):
        return "not drawn: a row is not above the floor"
    if cmp.get("low") is None:
        return "undetermined"
    if q is not None and q < ALPHA and cmp["low"] > 0:
        return "better"
    if q is not None and q < ALPHA and cmp["high"] < 0:
        return "worse"
    if -HELPED_POINTS < cmp["low"] and cmp["high"] < HELPED_POINTS:
        return "no difference"
    return "undetermined"


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
        table.append([_label(r["row"]), _f(r.get("tokens_per_word"), 2), f"{r.get('updates', 0):,}",
                      _f(r.get("epochs"), 2), _f(r.get("valid_loss_per_token"), 2),
                      _f(r.get("valid_loss_per_word"), 2)])
    return table


def pppl_table(results: dict) -> Optional[list]:
    pppl = results.get("pppl") or {}
    if not pppl:
        return None
    table = [["row", "PPPL / word (all)", "bits / word (all)", "floor: piece unigram (all)", "PPPL / word (verbs)",
              "bits / word (verbs)", "floor: piece unigram (verbs)", "words", "verb words", "tokens / word"]]
    for row, r in pppl.items():
        m = r.get("marked") or {}
        table.append([_label(row), _f(r.get("pppl_per_word"), 1), _f(r.get("bits_per_word"), 2),
                      _f(r.get("unigram_bits_per_word"), 2), _f(m.get("pppl_per_word"), 1),
                      _f(m.get("bits_per_word"), 2), _f(m.get("unigram_bits_per_word"), 2),
                      f"{r.get('words', 0):,}", f"{m.get('words', 0):,}", _f(r.get("tokens_per_word"), 2)])
    return table


def probe_table(results: dict) -> Optional[list]:
    a = results.get("analysis") or {}
    probes = a.get("probes") or {}
    if not probes:
        return None
    rows = list(probes)
    header = ["measure", "majority / chance"]
    for row in rows:
        header += [f"{_label(row)}", f"{_label(row)}: random encoders", "p (vs random)"]
    table = [header]
    for feature in (*FEATURES, "lexeme"):
        first = probes[rows[0]].get(feature) or {}
        ref = first.get("chance") if feature == "lexeme" else first.get("majority")
        line = [f"{feature} {'(same lemma, %)' if feature == 'lexeme' else '(accuracy, %)'}", _f(ref)]
        for row in rows:
            e = probes[row].get(feature) or {}
            c = e.get("vs_random") or {}
            line += [_f(e.get("score")), _ms(e.get("random")), _p(c.get("p"))]
        table.append(line)
    return table


def germeval_table(results: dict) -> Optional[list]:
    a = results.get("analysis") or {}
    g = a.get("germeval") or {}
    if not g:
        return None
    table = [["row", "official F1 (pretrained)", "random init", "vs random init", "floor (char n-gram NB)",
              f"vs {_label(BASELINE)}", "p (Welch)", "p (Holm)", "verdict"]]
    for row, e in g.items():
        c = e.get("vs_control") or {}
        b = e.get("vs_baseline") or {}
        table.append([_label(row), _ms(e["pretrained"]) + (f", {e['collapsed']} collapsed" if e["collapsed"] else ""),
                      _ms(e["random"]) if e["random"]["n"] else "–",
                      f"{_f(c.get('diff'))} [{_f(c.get('low'))}, {_f(c.get('high'))}]: {c.get('verdict')}" if c else "–",
                      _f(e.get("floor")),
                      f"{_f(b.get('diff'))} [{_f(b.get('low'))}, {_f(b.get('high'))}]" if b else "(baseline)",
                      _p(b.get("p")) if b else "–", _p(b.get("holm_p")) if b else "–",
                      b.get("verdict", "–") if b else "–"])
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
                   f"official F1, difference {_f(b.get('diff'))} [{_f(b.get('low'))}, {_f(b.get('high'))}] "
                   f"(Welch p {_p(b.get('p'))}, Holm {_p(b.get('holm_p'))}): {verdict}."
                   + (" This run therefore supports HYP1 at this scale." if verdict == "better" else
                      " This run therefore gives no support to HYP1 at this scale." if verdict in
                      ("worse", "no difference") else " This run cannot decide HYP1."))
    wl, ul = (probes.get("wordmap") or {}).get("lexeme") or {}, (probes.get(BASELINE) or {}).get("lexeme") or {}
    if wl.get("score") is not None and ul.get("score") is not None:
        diff = wl["score"] - ul["score"]
        out.append(f"HYP2 (separating lexemic from functional morphs gives better lexemic tokens): a verb form's "
                   f"nearest other verb form shares its lemma {_f(wl['score'])}% of the time with Wordmap's encoder "
                   f"and {_f(ul['score'])}% with Unigram's ({diff:+.1f} points; random encoders "
                   f"{_ms(wl.get('random'))} and {_ms(ul.get('random'))}; chance {_f(wl.get('chance'))}%). "
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
        ("German: GermEval 2018 (HYP1)", germeval_table(c.r), "Mean ± sd over fine-tuning seeds (collapsed runs, "
         "one class for every dev tweet, left out and counted); the interval is the difference's 95% interval; "
         "Holm: over every test of this part. A comparison is drawn only between rows above the floor."),
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
