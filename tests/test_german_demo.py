"""The German part of the demo (train_scripts/demo/german/): its options and inputs before any work, its plan, its
statistics and verdicts on constructed results, and (slow) the whole part end to end on the smallest preset."""
from __future__ import annotations

import json
import os

import pytest

from train_scripts.demo.german import PART
from train_scripts.demo.german import report as de_report
from train_scripts.demo.main import build_parser


def settings(*argv):
    return PART.settings(build_parser().parse_args([str(a) for a in argv]))


def test_settings_plan_and_dry_run_create_nothing(tmp_path):
    a = settings("--part", "german", "--output", tmp_path / "o", "--de-preset", "fast", "--de-seeds", "3",
                 "--dry-run")
    assert a.rows == ["unigram", "wordmap"] and a.seeds == 3 and a.preset_overrides == {"seeds": 3}
    lines = PART.plan(a)
    assert any("--scheme wordmap" in x and "--src de" in x for x in lines)
    assert sum("pretrain_roberta.sh" in x for x in lines) == 2
    assert "# 9 GermEval fine-tuning runs, e.g.:" in lines             # 3 seeds x (2 rows + Unigram's control)
    assert any("--random-init" in x for x in lines) and any("--best-metric macro_f1" in x for x in lines)
    assert not (tmp_path / "o").exists()


def test_a_missing_input_is_one_line_naming_the_option(tmp_path):
    with pytest.raises(Exception) as exc:
        settings("--part", "german", "--output", tmp_path / "o", "--de-ud", tmp_path / "nowhere")
    text = str(exc.value)
    assert text.startswith("the german part's input is missing: ") and "(--de-ud; UD German GSD" in text
    assert "\n" not in text and not (tmp_path / "o").exists()


def test_an_input_inside_the_part_folder_is_refused(tmp_path):
    inside = tmp_path / "o" / "german" / "raw"
    with pytest.raises(Exception, match="overlaps the output folder"):
        settings("--output", tmp_path / "o", "--de-multi30k", inside, "--dry-run")


def _results(unigram, wordmap, control, floor=0.60, probe=None):
    ft = []
    for row, init, scores in (("unigram", "pretrained", unigram), ("wordmap", "pretrained", wordmap),
                              ("unigram", "random", control)):
        for seed, s in enumerate(scores, 1):
            ft.append({"row": row, "init": init, "seed": seed, "collapsed": False,
                       "test_official": {"macro_f1": s}})
    probe = probe or {}
    return {"pretraining": [{"row": "unigram"}, {"row": "wordmap"}], "finetune": ft,
            "floor": [{"test": {"germeval_f1": floor}}], "verb_probe": probe}


def test_wordmap_against_unigram_verdicts_and_holm():
    base = [70.0, 70.5, 69.8, 70.2, 70.1]
    better = [73.0, 73.4, 72.8, 73.1, 73.3]
    a = de_report.analyse(_results(base, better, [62.0, 62.5, 61.8, 62.3, 62.1]))
    w = a["germeval"]["wordmap"]["vs_baseline"]
    assert w["verdict"] == "better" and w["diff"] == pytest.approx(3.0, abs=0.01)
    assert w["holm_p"] >= w["p"]                                   # adjusted over the part's two tests
    assert a["germeval"]["unigram"]["vs_control"]["verdict"] == "helped"
    assert [t["test"] for t in a["tests"]] == ["germeval/unigram/vs-random", "germeval/wordmap/vs-unigram"]
    a = de_report.analyse(_results(base, [x - 3 for x in better], [62.0, 62.5, 61.8, 62.3, 62.1]))
    assert a["germeval"]["wordmap"]["vs_baseline"]["verdict"] == "not shown"     # not significant: not "no difference"
    # a row under the floor: no comparison is drawn from it, whatever its p
    a = de_report.analyse(_results(base, better, [62.0, 62.5, 61.8, 62.3, 62.1], floor=0.71))
    assert a["germeval"]["wordmap"]["vs_baseline"]["verdict"] == "not drawn"
    assert a["germeval"]["wordmap"]["vs_baseline"]["gate"] == "not drawn: Unigram is below the floor"
    text = " ".join(de_report.conclusions({**_results(base, better, [62.0]), "analysis": a}))
    assert "HYP1" in text and "cannot decide HYP1" in text


def test_probes_against_random_encoders_and_the_hyp2_paragraph():
    def record(acc, rate):
        return {"features": {f: {"accuracy": acc, "majority": 0.5} for f in de_report.FEATURES},
                "lexeme": {"rate": rate, "chance": 0.04, "queries": 100}}

    probe = {"unigram": {**record(0.80, 0.20), "random": [record(0.60, 0.05), record(0.62, 0.06),
                                                          record(0.61, 0.05)]},
             "wordmap": {**record(0.85, 0.30), "random": [record(0.60, 0.05), record(0.61, 0.07),
                                                          record(0.62, 0.05)]}}
    res = _results([70.0, 70.5], [71.0, 71.5], [60.0, 61.0], probe=probe)
    res["analysis"] = a = de_report.analyse(res)
    assert a["probes"]["wordmap"]["lexeme"]["score"] == pytest.approx(30.0)
    assert a["probes"]["unigram"]["Tense"]["vs_random"]["p"] < 0.05
    table = de_report.probe_table(res)
    assert table[-1][0].startswith("lexeme") and table[-1][2] == "20.0" and table[-1][5] == "30.0"
    text = " ".join(de_report.conclusions(res))
    assert "HYP2" in text and "30.0% of the time with Wordmap's encoder" in text and "+10.0 points" in text
    assert "+9.7 of the difference came with pretraining" in text and "segmentation's" not in text   # 10.0 - 0.3
    # the same lexeme advantage in random encoders of the two segmentations: the segmentation's, not learned
    for r in probe["wordmap"]["random"]:
        r["lexeme"]["rate"] += 0.10
    res["analysis"] = de_report.analyse(res)
    text = " ".join(de_report.conclusions(res))
    assert "-0.3 of the difference came with pretraining" in text and "most of it is the segmentation's" in text


@pytest.mark.slow
def test_the_german_part_end_to_end_on_the_fast_preset(run_cli, shared_path, tmp_path):
    """Every stage runs on the real German data (the fast preset: a tiny model), the report has every section,
    and a rerun skips every stage."""
    shared_path("german/germeval2018/germeval2018.training.txt")
    shared_path("german/ud_german_gsd/de_gsd-ud-test.conllu")
    shared_path("multi30k")
    out = tmp_path / "demo"
    cmd = ["python", "-m", "train_scripts.demo.main", "--part", "german", "--output", out, "--de-preset", "fast",
           "--de-seeds", "1", "--de-probe-seeds", "2"]
    run_cli(cmd, timeout=1800)
    results = json.loads((out / "german" / "results.json").read_text())
    assert {r["row"] for r in results["pretraining"]} == {"unigram", "wordmap"}
    assert set(results["pppl"]) == {"unigram", "wordmap"} and all("marked" in r for r in results["pppl"].values())
    assert all(r["unigram_bits_per_word"] > 0 and r["marked"]["unigram_bits_per_word"] > 0
               for r in results["pppl"].values())                       # the floor beside every row
    assert all(len(r["random"]) == 2 for r in results["verb_probe"].values())
    assert len(results["finetune"]) == 3 and all(r.get("test_official") for r in results["finetune"])
    corpus = results["data"]["corpus"]
    assert corpus["removed"]["ud_test"] >= 1 and corpus["removed"]["germeval_test"] == 0
    md = (out / "REPORT.md").read_text(encoding="utf-8")
    for heading in ("German: corpus and leakage", "German: verbs, pseudo-perplexity", "German: verbs, probes",
                    "German: GermEval 2018 (HYP1)", "German: HYP1 and HYP2"):
        assert f"## {heading}" in md
    # the plan's estimate against this run's own stage records: within a factor of 4 either way (the preset's
    # figures are one core's seconds on an idle 2-core machine; a test run shares the machine with other tests)
    from train_scripts.demo import estimate

    a = settings("--part", "german", "--output", out, "--de-preset", "fast", "--de-seeds", "1", "--de-probe-seeds",
                 "2", "--dry-run")
    costs = PART.stage_costs(a)
    recorded = [estimate.record_seconds(out / "german" / ".stages", c.stage) for c in costs]
    assert None not in recorded                            # the plan names every stage the run recorded
    planned, actual = sum(c.seconds for c in costs), sum(recorded)
    assert actual / 4 < planned < actual * 4, (planned, actual)
    again = run_cli(cmd, timeout=600)
    assert "[run ]" not in again.stderr and "[skip] lm/wordmap/pretrain" in again.stderr
    assert os.path.isfile(out / "report.html")
