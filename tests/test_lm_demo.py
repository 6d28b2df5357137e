"""The pretraining part of the demo (train_scripts/demo/pretraining/) and the recipe options it needs:
the statistics on made-up runs (collapsed seeds, Welch tests, the "pretraining helped" rule, k tuned on dev), the
corpus split, the option routing of ``morphtok-demo --part``, the recipes' --small/--global-batch plan, and one
end-to-end run of the smallest preset on the shared data (then resumed: every stage skipped)."""
import gzip
import json
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli_env
from train_scripts.demo import demo_report
from train_scripts.demo.main import build_parser as demo_parser
from train_scripts.demo.pretraining import PART as LM_PART
from train_scripts.demo.pretraining import corpus as lm_corpus
from train_scripts.demo.pretraining import report as lm_report


def lm_settings(argv):
    """The pretraining part's settings from a morphtok-demo command line."""
    return LM_PART.settings(demo_parser().parse_args(argv))

# --- statistics on made-up runs --------------------------------------------------------------------------------

def _run(row, init, seed, acc, collapsed=False, part="superbizarre", **kw):
    r = {"part": part, "task": kw.pop("task", "arxiv"), "row": row, "init": init, "seed": seed,
         "size": kw.pop("size", 8000),
         "encoding": kw.pop("encoding", "standard"), "mode": kw.pop("mode", None), "k": kw.pop("k", None),
         "lr": 3e-4, "collapsed": collapsed, "majority": 0.526, "tokens_per_example": 4.0,
         "dev": {"accuracy": acc, "macro_f1": acc}, "test": {"accuracy": acc, "macro_f1": acc}}
    r.update(kw)
    return r


def _results(finetune):
    return {"meta": {"settings": {"baseline": "unigram", "corpus": ["arxiv"]}}, "finetune": finetune,
            "pretraining": []}


def test_collapsed_seeds_are_counted_not_averaged():
    runs = [_run("unigram", "pretrained", s, a) for s, a in enumerate([0.64, 0.65, 0.66], 1)]
    runs.append(_run("unigram", "pretrained", 4, 0.526, collapsed=True))
    e = lm_report.analyse(_results(runs))["superbizarre"][0]
    assert e["collapsed"] == 1 and e["n"] == 3 and e["seeds_run"] == 4
    assert e["mean"] == pytest.approx(65.0) and e["sd"] == pytest.approx(1.0)
    assert 52.6 in e["all"]   # shown per seed


def test_pretraining_verdicts_helped_no_effect_undetermined():
    """helped: the whole 95% interval >= 1 point, >= 5 seeds each; no effect: the 95% interval inside +-1; else
    undetermined. A collapsed seed counts in the verdict (all runs), it does not force one."""
    pre = [0.680, 0.684, 0.679, 0.683, 0.681]
    runs = [_run("unigram", "pretrained", s, a) for s, a in enumerate(pre, 1)]
    ctrl = [_run("unigram", "random", s, a - 0.03) for s, a in enumerate(pre, 1)]
    e = lm_report.analyse(_results(runs + ctrl))["superbizarre"][0]
    c = e["vs_control"]
    assert c["diff"] == pytest.approx(3.0) and c["p"] < 1e-6 and c["verdict"] == "helped"
    assert c["low"] < 3.0 < c["high"]
    # the same gap over four seeds is not enough by the definition
    assert lm_report.analyse(_results(runs[:4] + ctrl[:4]))["superbizarre"][0]["vs_control"]["verdict"] == \
        "undetermined"
    # a tiny, well-measured gap: no effect (the interval inside +-1 point)
    small = [_run("unigram", "random", s, a - 0.001) for s, a in enumerate(pre, 1)]
    assert lm_report.analyse(_results(runs + small))["superbizarre"][0]["vs_control"]["verdict"] == "no effect"
    # a noisy gap: undetermined, and the conclusion says so instead of "did not help"
    noisy = [_run("unigram", "random", s, a) for s, a in enumerate([0.66, 0.70, 0.64, 0.69, 0.67], 1)]
    res = _results(runs + noisy)
    res["pretraining"] = [{"row": "unigram", "label": "Unigram"}]
    res["analysis"] = lm_report.analyse(res)
    assert res["analysis"]["superbizarre"][0]["vs_control"]["verdict"] == "undetermined"
    text = "\n".join(lm_report.conclusions(res))
    assert "**undetermined**" in text and "NOT" not in text
    # the mirror: hurt
    worse = [_run("unigram", "random", s, a + 0.03) for s, a in enumerate(pre, 1)]
    assert lm_report.analyse(_results(runs + worse))["superbizarre"][0]["vs_control"]["verdict"] == "hurt"


def test_verdict_needs_the_interval_on_the_right_side():
    """Issue 53: "helped" read the point (>= 1 point with p < 0.05), so an interval reaching below +1 still read
    helped. Now the whole 95% interval must lie at or above +1 point (hurt: at or below -1): both sides of the rule."""
    pre = [68.0, 68.5, 67.5, 68.2, 67.8]
    noise = [0.4, -0.3, 0.2, -0.5, 0.1]
    short = lm_report.compare(pre, [x - 1.3 + e for x, e in zip(pre, noise)])
    assert short["diff"] >= 1 and short["p"] < 0.05 and short["low"] < 1 < short["high"]
    assert short["verdict"] == "undetermined"        # "helped" by the old, point-only rule
    clear = lm_report.compare(pre, [x - 2.0 + e for x, e in zip(pre, noise)])
    assert clear["low"] >= 1 and clear["verdict"] == "helped" and clear["test"] == "welch"
    assert lm_report.compare([x - 1.3 + e for x, e in zip(pre, noise)], pre)["verdict"] == "undetermined"
    assert lm_report.compare([x - 2.0 + e for x, e in zip(pre, noise)], pre)["verdict"] == "hurt"


def test_compare_probe_is_one_draw_prediction_interval_and_holm():
    """Issue 53: the probe's pretrained score was tested as an exact number (a one-sample t-test of the random
    encoders against it, whose interval is the random encoders' mean's). It is one draw from a distribution with
    the random encoders' spread: the prediction-interval t, and the interval of the difference."""
    import math

    import numpy as np
    from scipy import stats

    rand = [56.0, 56.5, 55.8, 56.2, 56.1]
    c = lm_report.compare([60.0], rand)
    scale = np.std(rand, ddof=1) * math.sqrt(1 + 1 / 5)
    assert c["diff"] == pytest.approx(60.0 - 56.12) and c["test"] == "prediction" and c["n"] == [1, 5]
    assert c["p"] == pytest.approx(2 * stats.t.sf(c["diff"] / scale, 4))
    half = stats.t.ppf(0.975, 4) * scale
    assert (c["low"], c["high"]) == pytest.approx((c["diff"] - half, c["diff"] + half))
    assert c["p"] > stats.ttest_1samp(rand, 60.0).pvalue    # the old test overstated it
    assert c["verdict"] == "helped"                          # the whole interval above +1 point
    # Holm: sorted p times (m - rank), running maximum, capped at 1; None stays None
    assert lm_report.holm([0.01, None, 0.04, 0.03]) == pytest.approx([0.03, None, 0.06, 0.06])
    assert lm_report.holm([0.5, 0.9]) == [1.0, 1.0]


def test_floor_has_three_states_and_no_row_conclusion_is_drawn_unless_both_are_above():
    """Issue 53: the floor rule had two states ("a model below it is under-trained"); a mean within the floor's
    test-set sampling error (one standard error, sqrt(p(1-p)/n): 0.53 points for 64.5% on 8,000 words) is now *at* the
    floor, neither above nor below, and a comparison is drawn only where both rows are above it."""
    rows = {"unigram": [0.60, 0.61, 0.62], "unigram_prime": [0.70, 0.71, 0.72],
            "unigram_prime_nospace": [0.647, 0.648, 0.649]}
    runs = [_run(row, "pretrained", s, a, size=8000) for row, accs in rows.items() for s, a in enumerate(accs, 1)]
    for r in runs:
        r["test"]["examples"] = 8000
    res = _results(runs)
    res["floor"] = [{"part": "superbizarre", "task": "arxiv", "size": 8000, "test": {"accuracy": 0.645}}]
    res["pretraining"] = [{"row": "unigram", "label": "Unigram"}, {"row": "unigram_prime", "label": "Unigram'"},
                          {"row": "unigram_prime_nospace", "label": "Unigram' no spaces"}]
    res["analysis"] = a = lm_report.analyse(res)
    by_row = {e["row"]: e for e in a["superbizarre"]}
    assert by_row["unigram"]["floor"] == pytest.approx(64.5)
    assert by_row["unigram"]["floor_margin"] == pytest.approx((0.645 * 0.355 / 8000) ** 0.5 * 100)
    assert [by_row[r]["floor_state"] for r in rows] == ["below", "above", "at"]    # 61.0, 71.0, 64.8 vs 64.5 ± 0.53
    assert by_row["unigram"]["below_floor"] and not by_row["unigram_prime_nospace"]["below_floor"]
    assert lm_report.floor_state(64.5 + 1.0, 64.5, 1.05) == "at" and lm_report.floor_state(63.4, 64.5, 1.05) == "below"
    text = "\n".join(lm_report.conclusions(res))
    assert "under-trained" not in text                       # a reference to clear, not a law of training
    assert "Unigram at 8,000 words (61.0 against 64.5 ± 0.5: below the floor)" in text
    assert "Unigram' no spaces at 8,000 words (64.8 against 64.5 ± 0.5: at the floor)" in text
    # Unigram' beats Unigram significantly, but Unigram is below the floor: no tokeniser conclusion is drawn, and the
    # rows table shows no mark either
    assert "differs from Unigram" not in text
    table = {r[0]: r for r in lm_report.rows_table(res, "arxiv")[1:]}
    assert table["Unigram'"][6] == "not drawn: Unigram is below the floor"
    assert table["Unigram' no spaces (at the floor)"][6] == "not drawn: this row is at the floor"
    assert table["Unigram (below the floor)"][6] == "" and table["Unigram'"][5] == "64.5 ± 0.5"
    assert table["Unigram'"][7] == "Welch; fine-tuning seeds of one checkpoint (3 v 3)"
    # both above the floor: the comparison is drawn, in the table and in the conclusions
    res["floor"][0]["test"]["accuracy"] = 0.55
    res["analysis"] = lm_report.analyse(res)
    assert "▲ (p " in {r[0]: r for r in lm_report.rows_table(res, "arxiv")[1:]}["Unigram'"][6]
    assert "Unigram' differs from Unigram on arxiv by +10.0 points at 8,000 labelled words" in \
        "\n".join(lm_report.conclusions(res))


def test_every_row_is_compared_at_every_labelled_size():
    """Issue 53: rows other than the baseline were fine-tuned at the largest size only, so the comparison at 1,000
    words (where Unigram cleared the floor) was never drawn. Every row now runs at every size of --lm-ft-sizes, and
    the rows table has each size, drawn or not by that size's floor."""
    from train_scripts.demo.pretraining.plan import plan_of

    a = lm_settings(["--dry-run"])                           # the cpu preset: 1,000 and 8,000 words, 5 seeds
    sb = [r for r in plan_of(a).finetune_runs() if r["part"] == "superbizarre"]
    for row in a.rows:
        assert sorted({r["size"] for r in sb if r["row"] == row and r["init"] == "pretrained"}) == [1000, 8000]
    assert len(sb) == len(a.rows) * 2 * 5 + 2 * 5           # and the baseline's random-init control at both
    runs = []
    for size, base, other in ((1000, 0.60, 0.62), (8000, 0.63, 0.66)):
        runs += [_run("unigram", "pretrained", s, base + s / 1000, size=size) for s in (1, 2, 3)]
        runs += [_run("unigram_prime", "pretrained", s, other + s / 1000, size=size) for s in (1, 2, 3)]
    res = _results(runs)
    res["floor"] = [{"part": "superbizarre", "task": "arxiv", "size": 1000, "test": {"accuracy": 0.55}},
                    {"part": "superbizarre", "task": "arxiv", "size": 8000, "test": {"accuracy": 0.645}}]
    res["pretraining"] = [{"row": "unigram", "label": "Unigram"}, {"row": "unigram_prime", "label": "Unigram'"}]
    res["analysis"] = lm_report.analyse(res)
    table = lm_report.rows_table(res, "arxiv")[1:]
    assert [(r[0], r[1]) for r in table] == [("Unigram", "1,000"), ("Unigram'", "1,000"),
                                             ("Unigram (below the floor)", "8,000"), ("Unigram'", "8,000")]
    assert "▲ (p " in table[1][6] and table[3][6] == "not drawn: Unigram is below the floor"
    text = "\n".join(lm_report.conclusions(res))
    assert "Unigram' differs from Unigram on arxiv by +2.0 points at 1,000 labelled words" in text
    assert "at 8,000 labelled words" not in text.split("differs from")[-1].split(".")[0]


def test_pretrain_seeds_plan_and_checkpoint_means():
    """--lm-pretrain-seeds N (a preset key: 1 on cpu and fast, 3 on gpu): N pretraining runs per row, every
    Superbizarre run on each checkpoint (the random-init control once: it reads no pretrained weights), and with
    N >= 2 the row and control tests take the per-checkpoint means as samples (the pretraining runs are the unit)."""
    import numpy as np
    from scipy import stats

    from train_scripts.demo.pretraining.plan import PRESETS, plan_of

    assert [PRESETS[p]["pretrain_seeds"] for p in ("cpu", "fast", "gpu")] == [1, 1, 3]
    a = lm_settings(["--lm-preset", "fast", "--lm-pretrain-seeds", "2", "--dry-run"])
    plan = plan_of(a)
    lines = LM_PART.plan(a)
    for row in a.rows:
        pre = [shlex.split(x) for x in lines if "pretrain_roberta.sh" in x and f"/rows/{row}/checkpoints" in x]
        assert [(c[c.index("--seed") + 1], Path(c[c.index("--save-dir") + 1]).name) for c in pre] == \
            [("1", "checkpoints"), ("2", "checkpoints-seed2")]
    assert plan.pretrained("unigram") == plan.ckpt_dir("unigram", 1) / "checkpoint_last.pt"   # seed 1, as before
    sb = [r for r in plan.finetune_runs() if r["part"] == "superbizarre"]
    assert sorted({(r["init"], r["pretrain_seed"]) for r in sb}) == [("pretrained", 1), ("pretrained", 2),
                                                                     ("random", 1)]
    assert len({str(r["save"]) for r in sb}) == len(sb)
    two = next(r for r in sb if r["pretrain_seed"] == 2)
    cmd = [str(x) for x in plan.finetune_command(two)]
    assert cmd[cmd.index("--pretrained") + 1] == str(plan.pretrained(two["row"], 2))
    with pytest.raises(Exception, match="--lm-pretrain-seeds"):
        lm_settings(["--lm-pretrain-seeds", "0", "--dry-run"])
    # the analysis: two checkpoints per row, three fine-tuning seeds each
    accs = {("unigram", 1): [0.640, 0.642, 0.641], ("unigram", 2): [0.650, 0.655, 0.652],
            ("unigram_prime", 1): [0.670, 0.671, 0.673], ("unigram_prime", 2): [0.662, 0.665, 0.664]}
    runs = [_run(row, "pretrained", s, v, pretrain_seed=k) for (row, k), vals in accs.items()
            for s, v in enumerate(vals, 1)]
    control = [0.60, 0.61, 0.605, 0.615, 0.62]
    runs += [_run("unigram", "random", s, v) for s, v in enumerate(control, 1)]
    res = _results(runs)
    res["meta"]["settings"]["pretrain_seeds"] = 2
    res["pretraining"] = [{"row": "unigram", "label": "Unigram"}, {"row": "unigram_prime", "label": "Unigram'"}]
    res["analysis"] = lm_report.analyse(res)
    e = {x["row"]: x for x in res["analysis"]["superbizarre"] if x["init"] == "pretrained"}
    means = {key: 100 * float(np.mean(v)) for key, v in accs.items()}
    base, prime = [means[("unigram", k)] for k in (1, 2)], [means[("unigram_prime", k)] for k in (1, 2)]
    assert e["unigram_prime"]["vs_baseline_n"] == [2, 2] and e["unigram_prime"]["vs_baseline_unit"] == \
        "2 pretraining runs"
    assert e["unigram_prime"]["vs_baseline_p"] == pytest.approx(stats.ttest_ind(prime, base, equal_var=False).pvalue)
    c = e["unigram"]["vs_control"]
    assert c["n"] == [2, 5] and c["unit"] == "2 pretraining runs"
    assert c["p"] == pytest.approx(stats.ttest_ind(base, [100 * v for v in control], equal_var=False).pvalue)
    table = {r[0]: r for r in lm_report.rows_table(res, "arxiv")[1:]}
    assert table["Unigram'"][7] == "Welch; 2 pretraining runs (2 v 2)" and " | " in table["Unigram'"][9]
    curve = lm_report.learning_curve_table(res, "arxiv", "unigram")
    assert curve[1][-1] == "Welch; 2 pretraining runs against random inits (2 v 5)"
    text = "\n".join(lm_report.conclusions(res))
    assert "pretrained 2 times" in text and "not covered" not in text
    # one checkpoint per row: the fine-tuning seeds are the unit, and the report says so
    one = _results([r for r in runs if r.get("pretrain_seed", 1) == 1])
    one["analysis"] = lm_report.analyse(one)
    e1 = next(x for x in one["analysis"]["superbizarre"] if x["row"] == "unigram_prime")
    assert e1["vs_baseline_n"] == [3, 3] and e1["vs_baseline_unit"] == "fine-tuning seeds of one checkpoint"


def test_probe_with_several_pretraining_runs_uses_welch():
    """The probe with N >= 2 pretraining runs: N pretrained scores (one per checkpoint) against the random encoders,
    Welch's t-test; with one, the prediction-interval t."""
    from scipy import stats

    def rec(seed, pre, rand):
        return {"task": "arxiv", "row": "unigram", "pretrain_seed": seed, "sizes": [1000],
                "pretrained": {"1000": {"test": {"accuracy": pre}}},
                "random": {str(i): {"1000": {"test": {"accuracy": v}}} for i, v in enumerate(rand, 1)}}

    rand = [0.52, 0.53, 0.515, 0.525, 0.52]
    res = _results([])
    res["probe"] = [rec(1, 0.573, rand), rec(2, 0.557, [])]
    p = lm_report.analyse(res)["probe"][0]
    assert p["pretrained_all"] == pytest.approx([57.3, 55.7]) and p["test"] == "welch" and p["n"] == [2, 5]
    assert p["p"] == pytest.approx(stats.ttest_ind([57.3, 55.7], [100 * v for v in rand], equal_var=False).pvalue)
    assert p["unit"] == "2 pretraining runs" and p["verdict"] == "undetermined"       # 57.3 and 55.7: too wide
    res["probe"] = [rec(1, 0.573, rand), rec(2, 0.574, [])]     # two close checkpoints: no 5-seed rule for a probe
    assert lm_report.analyse(res)["probe"][0]["verdict"] == "helped"
    res["probe"] = res["probe"][:1]
    p1 = lm_report.analyse(res)["probe"][0]
    assert p1["test"] == "prediction" and p1["unit"] == "one pretrained encoder, as one draw"


def test_welch_against_the_baseline_row():
    from scipy import stats

    base = [0.640, 0.643, 0.645, 0.641, 0.642]
    prime = [0.683, 0.682, 0.684, 0.680, 0.686]
    runs = [_run("unigram", "pretrained", s, a) for s, a in enumerate(base, 1)]
    runs += [_run("unigram_prime", "pretrained", s, a) for s, a in enumerate(prime, 1)]
    e = next(x for x in lm_report.analyse(_results(runs))["superbizarre"] if x["row"] == "unigram_prime")
    expected = stats.ttest_ind([100 * x for x in prime], [100 * x for x in base], equal_var=False).pvalue
    assert e["vs_baseline_p"] == pytest.approx(expected) and e["vs_baseline_diff"] == pytest.approx(4.08)


def test_flota_table_k_selected_on_dev_clean_and_noisy():
    runs = []
    for enc, mode, k, dev, clean, noisy in [("standard", None, None, .50, .50, .40), ("flota_k1", "flota", 1, .52,
                                            .53, .50), ("flota_k3", "flota", 3, .55, .54, .52)]:
        for seed in (1, 2):
            runs.append(_run("unigram", "pretrained", seed, clean + seed / 1000, part="flota", task="arxiv_physics_L",
                             encoding=enc, mode=mode, k=k, dev={"accuracy": 0, "macro_f1": dev + seed / 1000},
                             test_noisy={"accuracy": 0, "macro_f1": noisy + seed / 1000}))
    a = lm_report.analyse(_results(runs))
    assert a["flota_dev_selected"] == [{"task": "arxiv_physics_L", "mode": "flota", "k": 3, "lr": 3e-4}]
    k3 = next(e for e in a["flota"] if e["encoding"] == "flota_k3")
    assert k3["clean"]["mean"] == pytest.approx(54.15) and k3["noisy"]["mean"] == pytest.approx(52.15)
    assert k3["noisy_p"] is not None and k3["noisy_p"] < 0.05
    results = {**_results(runs), "analysis": a}
    results["meta"]["settings"]["vocab_size"] = 8000
    line = next(x for x in lm_report.conclusions(results) if "selected on dev" in x)
    assert line.startswith("FLOTA with k = 3 (selected on dev macro F1) on arxiv_physics_L: macro F1 54.2 ± 0.1 clean "
                           "against 50.2 ± 0.1") and "52.2 ± 0.1 against 40.2 ± 0.1 with whitespace noise" in line
    # four tests in the family (k1 and k3, clean and noisy): Holm multiplies the smallest p by 4
    assert a["flota_tests"] == 4 and k3["noisy_p_holm"] == pytest.approx(min(1.0, 4 * min(
        e[f"{c}_p"] for e in a["flota"] if e["mode"] for c in ("clean", "noisy"))))
    assert "Holm" in line


def test_flota_table_shows_the_matched_floor_of_each_segmentation():
    runs = [_run("unigram", "pretrained", 1, .50, part="flota", task="arxiv_physics_L", encoding=enc, mode=mode,
                 k=k, test_noisy={"accuracy": 0, "macro_f1": .40})
            for enc, mode, k in [("standard", None, None), ("flota_k2", "flota", 2)]]
    results = {**_results(runs), "analysis": lm_report.analyse(_results(runs))}
    results["piece_floor"] = [
        {"part": "flota", "task": "arxiv_physics_L", "encoding": "standard", "mode": None, "k": None,
         "dev": {"macro_f1": .611}, "test": {"macro_f1": .608}, "test_noisy": {"macro_f1": .539}},
        {"part": "flota", "task": "arxiv_physics_L", "encoding": "flota_k2", "mode": "flota", "k": 2,
         "dev": {"macro_f1": .615}, "test": {"macro_f1": .612}, "test_noisy": {"macro_f1": .589}}]
    table = lm_report.flota_table(results)
    rows = {r[1]: r for r in table[1:]}
    assert rows["matched NB floor (standard pieces)"][2:6] == ["–", "–", "61.1", "60.8"]   # one dash, every report
    assert rows["matched NB floor (standard pieces)"][9] == "53.9"
    assert rows["matched NB floor (FLOTA pieces)"][2] == "2" and rows["matched NB floor (FLOTA pieces)"][9] == "58.9"
    assert all(len(r) == len(table[0]) for r in table)


# --- data and options ---------------------------------------------------------------------------------------

def test_prepare_corpus_splits_documents_and_caps_words(tmp_path):
    src = tmp_path / "corpus"
    src.mkdir()
    docs = [[f"doc{d} line{i} w w" for i in range(3)] for d in range(100)]
    with gzip.open(src / "a.txt.gz", "wt") as fh:
        fh.write("\n\n".join("\n".join(d) for d in docs) + "\n")
    counts = lm_corpus.prepare_corpus(src, tmp_path / "raw", max_words=600)
    assert counts["valid"]["documents"] == 2 and counts["train"]["words"] == 600   # every 50th; 12 docs of 50 words
    train = (tmp_path / "raw" / "train.en").read_text()
    assert train.count("\n\n") == counts["train"]["documents"] and "doc" in train
    valid_docs = {line.split()[0] for line in (tmp_path / "raw" / "valid.en").read_text().split("\n") if line}
    assert not valid_docs & {line.split()[0] for line in train.split("\n") if line}   # no document in both
    again = lm_corpus.prepare_corpus(src, tmp_path / "raw2", max_words=600)
    assert again == counts and (tmp_path / "raw2" / "train.en").read_text() == train   # seeded


def test_one_parser_reads_both_parts_options():
    """One parser: the options of both parts and the shared ones, each read once; a part ignores the other's."""
    ns = demo_parser().parse_args(["--data", "d", "--output", "o", "--lm-seeds", "10", "--lm-rows", "a", "b",
                                   "--jobs", "2", "--schemes", "unigram", "--dry-run"])
    assert ns.part == ["all"] and ns.data == Path("d") and ns.output == Path("o") and ns.jobs == 2 and ns.dry_run
    assert ns.lm_seeds == 10 and ns.lm_rows == ["a", "b"] and ns.schemes == ["unigram"]
    # make demo always passes --data (translation's): with --part pretraining it is read and left unused
    ns = demo_parser().parse_args(["--data", "d", "--part", "pretraining", "--lm-seeds", "3"])
    assert ns.part == ["pretraining"] and ns.lm_seeds == 3
    with pytest.raises(SystemExit):
        demo_parser().parse_args(["--part", "both"])
    with pytest.raises(SystemExit):
        demo_parser().parse_args(["--lm-no-such-option", "1"])      # a typo is an error, not a silent no-op


def test_help_lists_both_parts_and_runs_nothing(tmp_path):
    """``--part pretraining --help`` once started the whole part (--help went to the other part)."""
    proc = subprocess.run([sys.executable, "-m", "train_scripts.demo.main", "--part", "pretraining", "--help"],
                          cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: morphtok-demo"), proc.stderr
    assert "--lm-preset" in proc.stdout and "--schemes" in proc.stdout and list(tmp_path.iterdir()) == []


def test_options_and_dry_run(run_cli, tmp_path):
    with pytest.raises(Exception, match="unknown row"):
        lm_settings(["--lm-rows", "wordmap", "--dry-run"])
    a = lm_settings(["--lm-rows", "unigram_prime", "--dry-run", "--lm-seeds", "10"])
    assert a.rows == ["unigram", "unigram_prime"] and a.seeds == 10   # the baseline row is always there
    assert "unigram" in lm_settings(["--lm-rows", "paper", "--dry-run"]).rows
    assert len(lm_settings(["--lm-rows", "paper", "--dry-run"]).rows) == 6
    # an input inside the folder the part rewrites is refused before anything is removed
    for corpus in (tmp_path / "o" / "pretraining" / "raw" / "train.en", tmp_path / "o" / "pretraining"):
        with pytest.raises(Exception, match="overlaps the output folder"):
            lm_settings(["--output", str(tmp_path / "o"), "--lm-corpus", str(corpus), "--dry-run"])
    p = lm_settings(["--lm-flota-paper", "--dry-run"])
    assert p.flota_batch == 64 and p.flota_lrs == [1e-5, 3e-5, 1e-4]
    proc = run_cli(["python", "-m", "train_scripts.demo.main", "--part", "pretraining", "--output", tmp_path,
                    "--dry-run", "--lm-budget", "epochs"])
    lines = proc.stdout.splitlines()
    pre = [shlex.split(x) for x in lines if "pretrain_roberta.sh" in x]
    assert len(pre) == 3 and all("--small" in c and c[c.index("--max-update") + 1] == "0" for c in pre)
    assert any("--random-init" in x for x in lines) and any("--noise-p" in x for x in lines)
    assert not list(tmp_path.iterdir())   # a dry run writes nothing


@pytest.mark.parametrize("opts,per,uf", [(["--small"], "32", "1"), (["--small", "--global-batch", "64"], "32", "2"),
                                         (["--small", "--global-batch", "16"], "16", "1")])
def test_pretrain_small_preset_batch(run_cli, tmp_path, opts, per, uf):
    d = tmp_path / "bin"
    d.mkdir()
    (d / "dict.txt").write_text("a 1\n")
    proc = run_cli(["bash", "train_scripts/pretrain_roberta.sh", "--data", d, "--save-dir", tmp_path / "s",
                    "--dry-run", "--gpus", "1", *opts])
    cmd = shlex.split(proc.stdout.strip())
    last = lambda name: [cmd[i + 1] for i, x in enumerate(cmd) if x == name][-1]  # noqa: E731
    assert (last("--batch-size"), last("--update-freq")) == (per, uf)
    assert last("--encoder-layers") == "2" and last("--tokens-per-sample") == "128"
    assert "warning" not in proc.stderr.lower()


# --- end to end: the smallest preset on the shared data --------------------------------------------------------

def test_pretraining_part_end_to_end_stop_and_resume(run_cli, shared_path, tmp_path):
    """SIGTERM while it fine-tunes stops every process it started; the rerun finishes from the finished stages;
    a third run runs nothing and gives the same results."""
    from tests.test_clean_stop import _alive, _descendants, _mentioning, _start, _wait_for

    shared_path("superbizarre/arxiv_train.csv")
    shared_path("flota_arxiv/arxiv_physics_1e+02_train.csv")
    shared_path("english_lm/abc.txt.gz")
    out = tmp_path / "demo"
    cmd = ["python", "-m", "train_scripts.demo.main", "--part", "pretraining", "--output", out,
           "--lm-preset", "fast", "--lm-rows", "unigram", "--lm-flota-set", "S", "--lm-flota-seeds", "1"]
    log = tmp_path / "first.log"
    proc = _start(cmd, log)
    # the random-init controls need no pretrained weights and may fine-tune while the row still pretrains: wait
    # for a fine-tuning run after the pretraining is recorded, so the rerun must skip the pretraining
    pretrained = out / "pretraining" / ".stages" / "lm__unigram__pretrain.json"
    _wait_for(lambda: pretrained.exists() and _mentioning("finetune_classification.sh"), proc,
              "a fine-tuning run after the pretraining", log)
    below = _descendants(proc.pid)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) != 0
    assert not _alive(below) and not _mentioning(str(out)), "processes outlived the stopped demo"
    # no interrupted stage is recorded as done (a child reaped by the clean-up reads as exit 0)
    records = list((out / "pretraining" / ".stages").glob("ft__*.json"))
    assert all("test" in json.loads(r.read_text())["result"] for r in records), "an interrupted run was recorded"
    resumed = run_cli(cmd)
    assert "[skip] lm/unigram/pretrain" in resumed.stderr and "[run ] ft/" in resumed.stderr
    part = out / "pretraining"
    res = json.loads((part / "results.json").read_text())
    runs = res["finetune"]
    sb = [r for r in runs if r["part"] == "superbizarre"]
    assert sorted((r["init"], r["seed"]) for r in sb) == [("pretrained", 1), ("pretrained", 2), ("random", 1),
                                                          ("random", 2)]
    assert all(r["test"]["examples"] == 100 and "test_noisy" not in r for r in sb)
    fl = [r for r in runs if r["part"] == "flota"]
    # the pretrained model and the random-weight control (the fast preset: one seed) at every segmentation
    assert sorted((r["init"], r["encoding"], r["seed"]) for r in fl) == [
        ("pretrained", "flota_k2", 1), ("pretrained", "standard", 1), ("random", "flota_k2", 1),
        ("random", "standard", 1)]
    assert all(r["test_noisy"]["examples"] == r["test"]["examples"] == 100 for r in fl)
    # the noisy test text is the same for both segmentations, and really noisy
    ft = part / "finetune" / "arxiv_physics_S" / "unigram"
    noisy = [(ft / enc / "data" / "raw" / "test1.input0").read_text() for enc in ("standard", "flota_k2")]
    clean = (ft / "standard" / "data" / "raw" / "test.input0").read_text()
    assert noisy[0] == noisy[1] != clean and noisy[0].count(" ") < clean.count(" ")
    # the control is fine-tuned from random weights, the other runs from the pretrained checkpoint
    logs = part / "logs"
    random_log = (logs / "ft_arxiv_unigram_standard_n100_random-seed1.log").read_text()
    pretrained_log = (logs / "ft_arxiv_unigram_standard_n100_pretrained-seed1.log").read_text()
    assert "from random weights" in random_log and "from random weights" not in pretrained_log
    assert "No existing checkpoint found" in random_log and "Loaded checkpoint" not in random_log
    flota_control = (logs / "ft_arxiv_physics_S_unigram_flota_k2_random-seed1.log").read_text()
    assert "from random weights" in flota_control and "Loaded checkpoint" not in flota_control
    assert f"Loaded checkpoint {part / 'rows' / 'unigram' / 'checkpoints' / 'checkpoint_last.pt'}" in pretrained_log
    pre = res["pretraining"][0]
    assert pre["updates"] == 10 and pre["sequences"] == 80 and pre["tokens"] > 0 and pre["valid_curve"]
    assert pre["valid_loss_per_word"] == pytest.approx(pre["valid_loss_per_token"] * pre["tokens_per_word"], rel=0.2)
    report = (out / "REPORT.md").read_text()     # the demo's one report (a part writes no report of its own)
    for heading in ("Pretraining budget and loss", "Superbizarre arxiv: rows", "FLOTA on the pretrained",
                    "What this run can and cannot conclude", "not covered", "by labelled size",
                    "frozen-encoder probe", "Pseudo-perplexity per word", "floor (char n-gram NB)", "p (Holm)",
                    "Leakage rules of the ArXiv corpus"):
        assert heading in report, heading
    # the probe (one pretrained encoder, a random one per seed), the floor and the pseudo-perplexity were measured
    assert [p["row"] for p in res["probe"]] == ["unigram"] and len(res["probe"][0]["random"]) == 2
    assert {(f["part"], f["size"]) for f in res["floor"]} == {("superbizarre", 100), ("flota", 100)}
    # the matched floor: the Naive Bayes over each FLOTA-table segmentation's own pieces, clean and noisy
    assert sorted(f["encoding"] for f in res["piece_floor"]) == ["flota_k2", "standard"]
    assert all(f["features"] == "pieces" and "test_noisy" in f for f in res["piece_floor"])
    assert "matched NB floor (standard pieces)" in report and "matched NB floor (FLOTA pieces)" in report
    assert pre["pppl_clean"]["words"] > 0 and pre["pppl_noisy"]["noise"] and pre["pppl_clean"]["pppl_per_word"] > 1
    # pseudo-perplexity's trivial floor beside each row (the pieces' add-one frequencies, no context)
    assert pre["pppl_clean"]["unigram_bits_per_word"] > 0 and pre["pppl_noisy"]["unigram_bits_per_word"] > 0
    assert "floor: piece unigram clean" in report
    assert (out / "report.html").read_text().count("data:image/png;base64") >= 2
    assert not (part / "REPORT.md").exists()
    # the demo's one report: the translation part's sections, then this part's, from both results.json files
    (out / "results.json").write_text(json.dumps({"schemes": [], "meta": {"dataset": "Toy", "commands": ["x"]}}))
    assert demo_report.write(str(out)) and demo_report.write(str(out))
    md, page = (out / "REPORT.md").read_text(), (out / "report.html").read_text()
    assert md.startswith("# Tokenisation scheme comparison on Toy") and md.count("Superbizarre arxiv: rows") == 1
    assert md.index("Superbizarre arxiv: rows") < md.index("## Commands")
    assert "](pretraining/pretraining_curves.png)" in md and (out / "pretraining" / "pretraining_curves.png").exists()
    assert "`pretraining/results.json`" in md
    assert page.count("<h1>") == 1 and page.count("Superbizarre arxiv: rows") == 1
    assert page.rstrip().endswith("</body></html>") and "data:image/png;base64" in page
    # resumed: nothing runs again, the same results
    again = run_cli(cmd)
    assert "[run ]" not in again.stderr and "[skip]" in again.stderr
    assert json.loads((part / "results.json").read_text())["finetune"] == runs


def test_published_space_models_as_rows(run_cli, shared_path, tmp_path):
    """--spm-model: the paper's own 16k models binarise a corpus without learning (the published_* rows); a
    scheme whose model must be learned from its own text (BITE) refuses it."""
    model = shared_path("space_models/unigram_prime.model")
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "train.en").write_text("a tokeniser keeps spaces .\nthe cats sleep outdoors .\n\nanother document .\n")
    (raw / "valid.en").write_text("spaces are tokens .\n")
    run_cli(["python", "-m", "train_scripts.binarize", "--lm", "--data", raw, "--src", "en", "--out", tmp_path / "lm",
             "--scheme", "spaces", "--spm-model", model])
    assert (tmp_path / "lm" / "models" / "spm.model").read_bytes() == model.read_bytes()
    assert len((tmp_path / "lm" / "data-bin" / "dict.txt").read_text().splitlines()) > 15000
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(model))
    tok = (tmp_path / "lm" / "tok" / "train.en").read_text().splitlines()
    assert tok[1] == " ".join(sp.encode("the cats sleep outdoors .", out_type=str))   # the published model's pieces
    bad = run_cli(["python", "-m", "train_scripts.binarize", "--lm", "--data", raw, "--src", "en", "--out",
                   tmp_path / "bite", "--scheme", "bite", "--spm-model", model], check=False)
    assert bad.returncode != 0 and "--spm-model is for the sentencepiece and spaces schemes" in bad.stderr
    a = lm_settings(["--lm-rows", "published", "--dry-run"])
    assert a.rows[0] == "unigram" and len(a.rows) == 7 and "published_unigram_prime_nospace" in a.rows
