"""The demo's one statistics policy (train_scripts/demo/policy.py) and number formatter (report_format.py), rule
by rule, and that each of the three parts' reports (translation, pretraining, German) applies them: the floor
gate, the test families, collapsed runs, the verdict words, and the FLOTA random-weight control columns."""
import pytest

from train_scripts.demo import policy
from train_scripts.demo import report_format as fmt
from train_scripts.demo.german import report as de_report
from train_scripts.demo.pretraining import report as lm_report
from train_scripts.demo.statistics import holm
from train_scripts.demo.translation import report as tr_report
from train_scripts.demo.translation import tables as tr_tables

# --- the rules ------------------------------------------------------------------------------------------------

def test_the_floor_gate_has_three_states_and_draws_only_between_cells_above():
    margin = policy.floor_margin(64.5, 8000)
    assert margin == pytest.approx((0.645 * 0.355 / 8000) ** 0.5 * 100)       # one binomial standard error
    assert [policy.floor_state(m, 64.5, margin) for m in (65.2, 64.8, 63.9)] == ["above", "at", "below"]
    assert policy.floor_state(50.0, None, None) is None                          # no floor: nothing to clear
    assert policy.drawn("above", "above") and policy.drawn("above", None)
    assert not policy.drawn("above", "at") and not policy.drawn("below", "above")
    assert policy.verdict(1e-6, 5.0, ("above", "below")) == "not drawn"          # whatever its p
    assert policy.gate_reason({"this row": "above", "Unigram": "at"}) == "not drawn: Unigram is at the floor"
    assert policy.gate_reason({"a": "above", "b": None}) is None


def test_a_family_adjusts_its_primary_tests_only_and_labels_the_exploratory_ones():
    fam = policy.Family("toy")
    fam.primary("a", 0.01)
    fam.primary("b", 0.04)
    fam.exploratory("probe", 0.096)
    assert fam.p("a") == pytest.approx(0.02) and fam.p("b") == pytest.approx(0.04)    # Holm over the two alone
    assert fam.p("probe") == 0.096                                                      # unchanged
    rec = fam.record()
    assert rec["tests"] == 2 and [t["test"] for t in rec["primary"]] == ["a", "b"]
    assert rec["exploratory"] == [{"test": "probe", "p": 0.096, "label": "exploratory, uncorrected"}]
    raw = policy.Family("translation", correction=None)
    raw.primary("x", 0.03)
    assert raw.p("x") == 0.03 and raw.record()["primary"][0]["holm_p"] is None


def test_collapsed_runs_stay_in_the_mean_and_are_counted():
    s = policy.runs_summary([70.0, 72.0, 40.0], [False, False, True])
    assert s["mean"] == pytest.approx(60.667, abs=1e-3) and s["n"] == 3 and s["collapsed"] == 1
    assert s["kept"]["mean"] == pytest.approx(71.0)


def test_the_verdict_words():
    assert policy.verdict(0.2, 1.0) == "not shown"          # not significant: an absence of evidence
    assert policy.verdict(None, 1.0) == "not shown"         # untested
    assert policy.verdict(0.01, 1.0) == "higher" and policy.verdict(0.01, -1.0) == "lower"
    assert policy.verdict(0.01, 1.0, words=("better", "worse")) == "better"
    assert policy.control_verdict({"verdict": "helped"}, 0.2) == "undetermined"   # Holm's p decides it
    assert policy.control_verdict({"verdict": "no effect"}, 0.9) == "no effect"


def test_one_number_format_and_one_dash():
    assert fmt.DASH == "–" and fmt.num(None) == fmt.pval(None) == fmt.mean_sd({}) == fmt.count(None) == "–"
    assert fmt.num(3.14159, 2) == "3.14" and fmt.num(0.749, 1, 100) == "74.9" and fmt.share(0.749) == "74.9%"
    assert fmt.pval(0.0192) == "0.019" and fmt.pval(0.00035) == "3.5e-04"
    assert fmt.mean_sd({"mean": 64.31, "sd": 0.24, "n": 5}) == "64.3 ± 0.2"
    assert fmt.mean_sd({"mean": 64.31, "sd": None, "n": 1}, n=True) == "64.3 (n=1)"
    assert fmt.diff_ci(2.1, 0.8, 3.4) == "+2.1 [+0.8, +3.4]" and fmt.diff_ci(-0.4) == "-0.4"
    assert fmt.count(8000) == "8,000"


# --- the German part ------------------------------------------------------------------------------------------

def _german(unigram, wordmap, control, floor=0.60, collapsed=(), probe=None):
    ft = []
    for row, init, scores in (("unigram", "pretrained", unigram), ("wordmap", "pretrained", wordmap),
                              ("unigram", "random", control)):
        for seed, s in enumerate(scores, 1):
            ft.append({"row": row, "init": init, "seed": seed, "collapsed": (row, init, seed) in collapsed,
                       "test_official": {"macro_f1": s}, "test": {"examples": 3000}})
    return {"pretraining": [{"row": "unigram"}, {"row": "wordmap"}], "finetune": ft,
            "floor": [{"test": {"germeval_f1": floor}}], "verb_probe": probe or {}}


def _probe_record(acc, rate):
    return {"features": {f: {"accuracy": acc, "majority": 0.5} for f in de_report.FEATURES},
            "lexeme": {"rate": rate, "chance": 0.04, "queries": 100}}


def test_german_collapsed_runs_are_in_the_means_and_counted():
    base = [70.0, 70.5, 69.8, 70.2, 52.0]
    res = _german(base, [71.0, 71.5, 70.8, 71.2, 71.1], [62.0, 62.5, 61.8, 62.3, 62.1],
                  collapsed={("unigram", "pretrained", 5)})
    res["analysis"] = a = de_report.analyse(res)
    g = a["germeval"]["unigram"]
    assert g["pretrained"]["mean"] == pytest.approx(sum(base) / 5) and g["collapsed"] == 1
    assert g["pretrained"]["values"] == base
    row = {r[0]: r for r in de_report.germeval_table(res)[1:]}["Unigram"]
    assert row[2] == "1 / 5"


def test_german_family_and_gate():
    probe = {"unigram": {**_probe_record(0.80, 0.20), "random": [_probe_record(0.60, 0.05),
                                                                 _probe_record(0.62, 0.06)]},
             "wordmap": {**_probe_record(0.85, 0.30), "random": [_probe_record(0.60, 0.05),
                                                                 _probe_record(0.61, 0.07)]}}
    base, better = [70.0, 70.5, 69.8, 70.2, 70.1], [73.0, 73.4, 72.8, 73.1, 73.3]
    res = _german(base, better, [62.0, 62.5, 61.8, 62.3, 62.1], probe=probe)
    res["analysis"] = a = de_report.analyse(res)
    primary = [t["test"] for t in a["tests"]]
    assert primary == ["germeval/unigram/vs-random", "germeval/wordmap/vs-unigram"]       # 2 primaries, not 14
    assert len(a["exploratory"]) == 12 and all(t["label"] == "exploratory, uncorrected" for t in a["exploratory"])
    tense = a["probes"]["unigram"]["Tense"]["vs_random"]
    assert next(t for t in a["exploratory"] if t["test"] == "probe/unigram/Tense/vs-random")["p"] == tense["p"]
    ps = [t["p"] for t in a["tests"]]
    assert [t["holm_p"] for t in a["tests"]] == pytest.approx(holm(ps))
    assert a["germeval"]["wordmap"]["vs_baseline"]["verdict"] == "better"
    assert "exploratory, uncorrected" in de_report.probe_table(res)[0][4]
    # a floor with its sampling error: Unigram within it is at the floor, and the comparison is not drawn
    res = _german(base, better, [62.0], floor=0.705)
    res["analysis"] = a = de_report.analyse(res)
    assert a["germeval"]["unigram"]["floor_state"] == "at"
    assert a["germeval"]["unigram"]["floor_margin"] == pytest.approx((0.705 * 0.295 / 3000) ** 0.5 * 100)
    assert a["germeval"]["wordmap"]["vs_baseline"]["verdict"] == "not drawn"
    row = {r[0]: r for r in de_report.germeval_table(res)[1:]}
    assert row["Wordmap"][-1] == "not drawn: Unigram is at the floor" and row["Unigram"][6] == "70.5 ± 0.8"
    assert "cannot decide HYP1" in " ".join(de_report.conclusions(res))


def test_german_non_significant_reads_not_shown():
    res = _german([70.0, 70.5, 69.8], [70.1, 70.4, 69.9], [62.0, 62.5, 61.8])
    res["analysis"] = de_report.analyse(res)
    assert res["analysis"]["germeval"]["wordmap"]["vs_baseline"]["verdict"] == "not shown"
    text = " ".join(de_report.conclusions(res))
    assert ": not shown." in text and "no difference" not in text


# --- the pretraining part -------------------------------------------------------------------------------------

def _ft(part, row, init, seed, acc, noisy=None, **kw):
    r = {"part": part, "task": kw.pop("task", "arxiv"), "row": row, "init": init, "seed": seed,
         "size": kw.pop("size", 8000), "encoding": kw.pop("encoding", "standard"), "mode": kw.pop("mode", None),
         "k": kw.pop("k", None), "lr": 3e-4, "collapsed": False, "majority": 0.5, "tokens_per_example": 4.0,
         "dev": {"accuracy": acc, "macro_f1": acc},
         "test": {"accuracy": acc, "macro_f1": acc, "examples": 2000, "classes_predicted": 2}}
    if noisy is not None:
        r["test_noisy"] = {"accuracy": noisy, "macro_f1": noisy, "examples": 2000, "classes_predicted": 2}
    r.update(kw)
    return r


def _flota_results(random=True, floor=0.60):
    runs = []
    cells = {"pretrained": {"standard": (0.64, 0.50), "flota_k2": (0.645, 0.56)},
             "random": {"standard": (0.40, 0.30), "flota_k2": (0.41, 0.36)}}
    for init, encs in cells.items():
        if init == "random" and not random:
            continue
        for enc, (clean, noisy) in encs.items():
            mode, k = (None, None) if enc == "standard" else ("flota", 2)
            for seed in (1, 2, 3):
                e = seed / 1000
                runs.append(_ft("flota", "unigram", init, seed, clean + e, noisy + e * 2, task="arxiv_physics_L",
                                encoding=enc, mode=mode, k=k))
    res = {"meta": {"settings": {"baseline": "unigram", "corpus": ["arxiv"], "vocab_size": 8000}},
           "finetune": runs, "pretraining": [{"row": "unigram", "label": "Unigram"}],
           "floor": [{"part": "flota", "task": "arxiv_physics_L", "size": 0, "dev": {"macro_f1": floor},
                      "test": {"macro_f1": floor}, "test_noisy": {"macro_f1": floor - 0.1}}]}
    res["analysis"] = lm_report.analyse(res)
    return res


def test_flota_random_weight_control_columns():
    res = _flota_results()
    a = res["analysis"]
    k2 = next(e for e in a["flota"] if e["encoding"] == "flota_k2")
    # the existing columns read the pretrained runs only
    assert k2["clean"]["mean"] == pytest.approx(64.7) and k2["clean_runs"] == 3
    assert k2["random_clean"]["mean"] == pytest.approx(41.2) and k2["random_runs"] == 3
    assert k2["random_noisy_diff"] == pytest.approx(6.0) and k2["random_noisy_p"] < 0.05
    # the random-weight tests are exploratory: outside Holm's family
    assert a["flota_tests"] == 2 and a["family"]["tests"] == 2
    assert any(t["test"].endswith("/noisy/random") for t in a["family"]["exploratory"])
    table = lm_report.flota_table(res)
    head, rows = table[0], {r[1]: r for r in table[1:]}
    col = head.index("random init: clean")
    assert rows["FLOTA"][col] == "41.2 ± 0.1" and rows["FLOTA"][col + 1] == "+1.0"
    assert head[col + 2] == "p (exploratory, uncorrected)"
    assert all(len(r) == len(head) for r in table)
    line = next(x for x in lm_report.conclusions(res) if "need pretraining" in x)
    assert "On the pretrained model +0.5 clean and +6.0 noisy" in line and "on random weights +1.0 clean" in line


def test_flota_without_random_runs_shows_the_dash():
    res = _flota_results(random=False)
    table = lm_report.flota_table(res)
    col = table[0].index("random init: clean")
    assert {r[1]: r for r in table[1:]}["FLOTA"][col:col + 3] == ["–", "–", "–"]
    assert not any("need pretraining" in x for x in lm_report.conclusions(res))


def test_flota_cells_under_the_floor_are_not_drawn():
    """Every FLOTA cell under the character floor: the policy's gate, as in the German part, not "significant"."""
    res = _flota_results(floor=0.678)
    k2 = next(e for e in res["analysis"]["flota"] if e["encoding"] == "flota_k2")
    assert k2["clean_floor_state"] == "below" and k2["noisy_verdict"] == "not drawn"
    assert k2["noisy_p_holm"] < 0.05                                   # significant, yet not drawn
    table = lm_report.flota_table(res)
    row = {r[1]: r for r in table[1:]}["FLOTA"]
    assert row[table[0].index("verdict noisy")] == "not drawn" and "(below the floor)" in row[5]
    floor_row = {r[1]: r for r in table[1:]}["floor (char n-gram NB) ± sampling error"]
    assert floor_row[5] == "67.8 ± 1.0"
    # both above: drawn, and higher
    res = _flota_results(floor=0.30)
    k2 = next(e for e in res["analysis"]["flota"] if e["encoding"] == "flota_k2")
    assert k2["noisy_verdict"] == "higher"


def test_pretraining_rows_family_and_not_shown():
    runs = [_ft("superbizarre", row, "pretrained", s, acc + s / 1000)
            for row, acc in (("unigram", 0.64), ("unigram_prime", 0.641)) for s in (1, 2, 3)]
    runs += [_ft("superbizarre", "unigram", "random", s, 0.60 + s / 1000) for s in (1, 2, 3)]
    res = {"meta": {"settings": {"baseline": "unigram", "corpus": ["arxiv"]}}, "finetune": runs,
           "pretraining": [{"row": "unigram", "label": "Unigram"}, {"row": "unigram_prime", "label": "Unigram'"}]}
    res["analysis"] = a = lm_report.analyse(res)
    assert a["family"]["tests"] == 2                                   # vs random and vs baseline
    e = next(x for x in a["superbizarre"] if x["row"] == "unigram_prime")
    assert e["vs_baseline_p_holm"] >= e["vs_baseline_p"] and e["vs_baseline_verdict"] == "not shown"
    text = "\n".join(lm_report.conclusions(res))
    assert "a difference not shown (both above the floor)" in text and "no difference" not in text
    cell = {r[0]: r for r in lm_report.rows_table(res, "arxiv")[1:]}["Unigram'"][6]
    assert cell.endswith("; not shown)") and "Holm" in cell


# --- every report calls the one policy ------------------------------------------------------------------------

def test_each_report_takes_its_verdict_words_from_the_policy(monkeypatch):
    calls = []
    real = policy.verdict

    def spy(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(policy, "verdict", spy)
    de_report.analyse(_german([70.0, 70.5], [71.0, 71.5], [60.0, 61.0]))
    assert calls, "German"
    calls.clear()
    _flota_results()
    assert calls, "pretraining"
    calls.clear()
    clean = {"bleu": {"score": 30.0, "p_value": 0.5}}
    rows = [{"name": "unigram", "tests": {"clean": {"bleu": {"score": 31.0}}}},
            {"name": "bpe", "tests": {"clean": clean}}]
    text = " ".join(tr_report.conclusions(rows, {"baseline": "unigram"}))
    assert calls, "translation"
    assert "is shown on any test set" in text and "no scheme's BLEU difference" in text
    assert tr_tables.quality_table(rows, {"baseline": "unigram"})[2][1] == "30.0"     # no mark: not shown
