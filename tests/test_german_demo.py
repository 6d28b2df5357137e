"""The German part of the demo (train_scripts/demo/german/): its options and inputs before any work, its plan and
its time on 2 cores, its statistics and verdicts on constructed results (agreement, gold segmentation, GermEval,
probes), and (slow) the whole part end to end on the smallest preset."""
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
    assert sum("pretrain_roberta.sh" in x for x in lines) == 4          # 2 rows x 2 pretraining seeds
    assert "# no GermEval fine-tuning (--de-germeval-finetune to run it)" in lines
    assert any("train_scripts.agreement" in x and "--max-pairs 50" in x for x in lines)
    assert any("train_scripts.gold_segmentation" in x and x.count("--lm-data") == 2 for x in lines)
    a = settings("--part", "german", "--output", tmp_path / "o", "--de-preset", "fast", "--de-seeds", "3",
                 "--de-germeval-finetune", "--dry-run")
    lines = PART.plan(a)
    assert "# 9 GermEval fine-tuning runs, e.g.:" in lines             # 3 seeds x (2 rows + Unigram's control)
    assert any("--random-init" in x for x in lines) and any("--best-metric macro_f1" in x for x in lines)
    assert any(c.stage == "floor" for c in PART.stage_costs(a))
    assert not (tmp_path / "o").exists()


def test_the_cpu_preset_fits_50_minutes_on_2_cores_with_3_seeds_and_equal_dictionaries(tmp_path):
    from train_scripts.demo import estimate
    from train_scripts.demo.german.plan import plan_of

    a = settings("--part", "german", "--output", tmp_path / "o", "--dry-run")
    assert a.preset == "cpu" and a.pretrain_seeds >= 3 and a.probe_seeds >= 5 and a.agreement_pairs == 1000
    assert not a.germeval_finetune
    costs = PART.stage_costs(a)
    assert None not in [c.seconds for c in costs]
    assert estimate.wall(costs, 2) <= 50 * 60
    stages = [c.stage for c in costs]
    assert "lm/unigram/pretrain" in stages and "lm/wordmap/pretrain-seed3" in stages   # seed 1 keeps its name
    assert "agreement/wordmap" in stages and "gold" in stages and "floor" not in stages
    assert not any(s.startswith("ft/") for s in stages)
    binarize = {row: plan_of(a).binarize_command(row) for row in a.rows}
    assert binarize["unigram"][binarize["unigram"].index("--vocab-size") + 1] == 20298   # Wordmap's 20,295 entries
    assert binarize["wordmap"][binarize["wordmap"].index("--vocab-size") + 1] == 8000
    gpu = settings("--part", "german", "--output", tmp_path / "o", "--de-preset", "gpu", "--dry-run")
    assert gpu.germeval_finetune and "thesis's scale" not in PART.plan(gpu)[0]
    from train_scripts.demo.german.plan import PRESETS

    assert all("thesis's scale" not in p["note"] for p in PRESETS.values())


def test_de_init_restores_each_rows_extended_checkpoint(tmp_path):
    ckpt = tmp_path / "base" / "checkpoint.pt"
    a = settings("--part", "german", "--output", tmp_path / "o", "--de-preset", "fast", "--de-init", ckpt,
                 "--dry-run")
    lines = PART.plan(a)
    for row in a.rows:
        extended = tmp_path / "o" / "german" / "rows" / row / "init"
        assert any(x.startswith("python -m train_scripts.extend_checkpoint") and str(extended) in x for x in lines)
        assert any("--srcdict " + str(extended / "dict.txt") in x for x in lines)
        pretrain = [x for x in lines if "pretrain_roberta.sh" in x and f"/rows/{row}/" in x]
        assert pretrain and all(f"--restore-file {extended / 'checkpoint.pt'}" in x and "--reset-optimizer" in x
                                for x in pretrain)
    assert [c.stage for c in PART.stage_costs(a)].count("init/wordmap") == 1


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


def test_a_malformed_clams_file_is_one_line_naming_de_agreement(shared_path, tmp_path):
    from preprocess.common import UserError
    from train_scripts.demo.german.inputs import check
    from train_scripts.demo.german.part import CLAMS_FILES

    shared = shared_path("german/clams_de/simple_agrmt.txt").parent.parent
    bad = tmp_path / "clams"
    bad.mkdir()
    for name in CLAMS_FILES:
        (bad / name).write_text("True\tdie Katze schläft\nFalse\tdie Katze schlafen\n", encoding="utf-8")
    (bad / "vp_coord.txt").write_text("True\tdie Katze schläft\nTrue\tdie Katze schlafen\n", encoding="utf-8")
    with pytest.raises(UserError) as exc:
        check(shared / "germeval2018", shared / "ud_german_gsd", shared.parent / "multi30k", bad, CLAMS_FILES)
    text = str(exc.value)
    assert text.startswith("--de-agreement: ") and "vp_coord.txt:2: a True line" in text and "\n" not in text


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
    assert table[-1][0].startswith("lexeme") and table[-1][2] == "20.0" and table[-1][6] == "30.0"
    text = " ".join(de_report.conclusions(res))
    assert "HYP2" in text and "30.0% of the time with Wordmap's encoder" in text and "+10.0 points" in text
    assert "+9.7 of the difference came with pretraining" in text and "segmentation's" not in text   # 10.0 - 0.3
    # the same lexeme advantage in random encoders of the two segmentations: the segmentation's, not learned
    for r in probe["wordmap"]["random"]:
        r["lexeme"]["rate"] += 0.10
    res["analysis"] = de_report.analyse(res)
    text = " ".join(de_report.conclusions(res))
    assert "-0.3 of the difference came with pretraining" in text and "most of it is the segmentation's" in text


def _agreement_record(acc_by_construction, rng_seed, random=(50.0, 51.0)):
    import random as r

    rng = r.Random(rng_seed)
    cons, every = {}, []
    for name, acc in acc_by_construction.items():
        correct = [int(rng.random() < acc / 100) for _ in range(200)]
        every += correct
        cons[name] = {"pairs": 200, "accuracy": 100 * sum(correct) / 200, "correct": correct,
                      "random": list(random), "chance": 50.0}
    return {"form": "pretraining", "constructions": cons,
            "overall": {"pairs": len(every), "accuracy": 100 * sum(every) / len(every), "random": list(random)},
            "seconds": 1.0}


def test_agreement_per_seed_mcnemar_and_the_primary_paired_t_over_seeds():
    unigram = [_agreement_record({"simple_agrmt": 60, "vp_coord": 55}, k) for k in (1, 2, 3)]
    wordmap = [_agreement_record({"simple_agrmt": 90, "vp_coord": 56}, 10 + k) for k in (1, 2, 3)]
    res = {"pretraining": [{"row": "unigram"}, {"row": "wordmap"}], "finetune": [],
           "agreement_seeds": {"unigram": unigram, "wordmap": wordmap},
           "agreement": {"unigram": unigram[0], "wordmap": wordmap[0]}}
    res["analysis"] = a = de_report.analyse(res)
    c = a["agreement"]["comparisons"]["wordmap"]
    assert set(c) == {"simple_agrmt", "vp_coord", "overall"}
    assert c["simple_agrmt"]["diff"] > 20 and len(c["simple_agrmt"]["per_seed"]) == 3
    assert c["simple_agrmt"]["per_seed"][0]["mcnemar"]["p"] < 0.01               # exploratory, per seed
    assert c["simple_agrmt"]["verdict"] == "higher" and c["simple_agrmt"]["holm_p"] >= c["simple_agrmt"]["p"]
    tests = [t["test"] for t in a["tests"]]
    assert "agreement/overall/wordmap/vs-unigram" in tests and all(t.startswith("agreement/") for t in tests)
    assert all("mcnemar" in t["test"] for t in a["exploratory"] if t["test"].startswith("agreement/"))
    table = de_report.agreement_table(res)
    assert table[0][-1] == "verdict" and table[-1][0] == "overall"
    text = " ".join(de_report.conclusions(res))
    assert "affects model performance" in text and "Wordmap's segmentation affects agreement overall" in text
    assert "simple_agrmt higher" in text
    # two-sided: a lower Wordmap is "lower", a small one "not shown", never "no difference"
    res["agreement_seeds"] = {"unigram": wordmap, "wordmap": unigram}
    assert de_report.analyse(res)["agreement"]["comparisons"]["wordmap"]["simple_agrmt"]["verdict"] == "lower"
    assert de_report.analyse(res)["agreement"]["comparisons"]["wordmap"]["vp_coord"]["verdict"] == "not shown"


def test_gold_segmentation_intervals_and_the_deviations_paragraph():
    def cmp(d, low, high):
        return {"f1": {"difference": d, "low": low, "high": high, "excludes_zero": low > 0 or high < 0}}

    gold = {"rows": {"lm": {"consistency": {"any": {"f1": 0.30}, "longest": {"f1": 0.25}}, "boundary": {"f1": 0.5},
                            "verbs_aligned": 900},
                     "lm-2": {"consistency": {"any": {"f1": 0.28}, "longest": {"f1": 0.38}}, "boundary": {"f1": 0.5},
                              "verbs_aligned": 900}},
            "comparisons": {"lm-2 - lm": {"consistency": {"any": cmp(-0.02, -0.05, 0.01),
                                                          "longest": cmp(0.13, 0.10, 0.16)},
                                          "boundary": cmp(0.0, -0.004, 0.004)}},
            "row_order": ["unigram", "wordmap"]}
    res = {"pretraining": [{"row": "unigram"}, {"row": "wordmap"}], "finetune": [], "gold": gold,
           "dictionaries": {"unigram": {"entries": 20295, "parameters": 3048000},
                            "wordmap": {"entries": 20295, "parameters": 3048908}}}
    res["analysis"] = a = de_report.analyse(res)
    g = a["gold"]["comparisons"]["wordmap"]
    assert g["consistency/longest"]["verdict"] == "higher" and g["consistency/any"]["verdict"] == "not shown"
    assert g["boundary"]["verdict"] == "not shown"
    assert "gold/boundary/wordmap/vs-unigram" in [t["test"] for t in a["tests"]]    # primary, no p to adjust
    table = de_report.gold_table(res)
    assert table[1][0] == "Unigram" and table[-1][2].startswith("+0.130 [+0.100, +0.160]: higher")
    assert de_report.dictionary_table(res)[2][2:] == ["20,295", "3,048,908"]
    md = " ".join(b.text for sec in de_report.sections(res, "x") for b in sec.blocks if hasattr(b, "text"))
    for phrase in ("pretrained from scratch", "bert-base-german-cased", "34,774 lines", "500k GerParCor/OSCAR",
                   "Wikinews title classification in 24 classes", "'affects model performance'"):
        assert phrase in md
    assert "thesis's scale" not in md


def test_pseudo_perplexity_per_seed_with_the_floor_and_a_dash_without_the_bootstrap():
    recs = {"unigram": [{"bits_per_word": 14.0, "char_floor_bits_per_word": 12.0,
                         "marked": {"bits_per_word": 16.0, "char_floor_bits_per_word": 13.0}},
                        {"bits_per_word": 14.4, "marked": {"bits_per_word": 16.2}}],
            "wordmap": [{"bits_per_word": 13.0, "char_floor_bits_per_word": 12.0,
                         "marked": {"bits_per_word": 15.0, "char_floor_bits_per_word": 13.0}},
                        {"bits_per_word": 13.2, "marked": {"bits_per_word": 15.4}}]}
    res = {"pretraining": [{"row": "unigram"}, {"row": "wordmap"}], "finetune": [], "pppl_seeds": recs}
    res["analysis"] = de_report.analyse(res)
    table = de_report.pppl_table(res)
    assert table[1][1] == "14.20 ± 0.28 (n=2)" and table[1][2] == "12.00" and table[2][5] == "–"
    res["pppl_bootstrap"] = {"wordmap": [{"seed": 1, "all": {"difference": -1.0, "low": -1.2, "high": -0.8},
                                          "verbs": None}]}
    assert de_report.pppl_table(res)[2][5] == "-1.00 [-1.20, -0.80]"


def test_extend_checkpoint_inserts_rows_before_mask_keeps_ties_and_spells_new_pieces(tmp_path):
    import torch

    from train_scripts.extend_checkpoint import extend, extend_checkpoint, spell

    base = ["\u2581ge", "lauf", "en", "\u2581lauf", "t"]
    known = {e: 4 + i for i, e in enumerate(base)}
    assert spell("\u2581gelaufen", known) == [4, 5, 6] and spell("\u2581laufen", known) == [7, 6]
    assert spell("xyz", known) == []
    emb = torch.arange(10 * 3, dtype=torch.float32).reshape(10, 3)     # 4 specials + 5 entries + <mask>
    state = {"encoder.sentence_encoder.embed_tokens.weight": emb, "encoder.lm_head.weight": emb,
             "encoder.lm_head.bias": torch.arange(10, dtype=torch.float32), "other": torch.zeros(2)}
    out, counts = extend(state, base, ["\u2581gelaufen", "xyz"])
    e = out["encoder.sentence_encoder.embed_tokens.weight"]
    assert e.shape == (12, 3) and out["encoder.lm_head.weight"] is e           # still tied
    assert torch.equal(e[:9], emb[:9]) and torch.equal(e[11], emb[9])          # <mask> last, old rows kept
    assert torch.allclose(e[9], emb[4:7].mean(0)) and torch.allclose(e[10], emb[4:9].mean(0))
    assert out["encoder.lm_head.bias"].shape == (12,) and counts == {"spelled": 1, "unspelled": 1,
                                                                      "pieces_per_new_entry": 3.0}
    folder = tmp_path / "ckpt"
    folder.mkdir()
    torch.save({"model": state, "cfg": {}}, folder / "checkpoint.pt")
    (folder / "dict.txt").write_text("".join(f"{x} 5\n" for x in base), encoding="utf-8")
    row = tmp_path / "row.txt"
    row.write_text("\u2581lauf 3\n\u2581gelaufen 2\nxyz 1\n", encoding="utf-8")
    record = extend_checkpoint(str(folder / "checkpoint.pt"), str(row), str(tmp_path / "out"))
    assert record["added"] == 2 and record["entries"] == 7 and record["row_entries_in_base"] == 1
    assert (tmp_path / "out" / "dict.txt").read_text(encoding="utf-8").splitlines()[-1] == "xyz 1"


@pytest.mark.slow
def test_the_german_part_end_to_end_on_the_fast_preset(run_cli, shared_path, tmp_path):
    """Every stage runs on the real German data (the fast preset: a tiny model, 2 pretraining seeds), the report
    has every section, and a rerun skips every stage."""
    shared_path("german/germeval2018/germeval2018.training.txt")
    shared_path("german/ud_german_gsd/de_gsd-ud-test.conllu")
    shared_path("german/clams_de/simple_agrmt.txt")
    shared_path("morph_gold/deu.derivational.v1.tsv")
    shared_path("multi30k")
    out = tmp_path / "demo"
    cmd = ["python", "-m", "train_scripts.demo.main", "--part", "german", "--output", out, "--de-preset", "fast",
           "--de-probe-seeds", "2"]
    run_cli(cmd, timeout=1800)
    results = json.loads((out / "german" / "results.json").read_text())
    assert sorted((r["row"], r["pretrain_seed"]) for r in results["pretraining"]) == [
        ("unigram", 1), ("unigram", 2), ("wordmap", 1), ("wordmap", 2)]
    assert set(results["pppl"]) == {"unigram", "wordmap"} and all("marked" in r for r in results["pppl"].values())
    assert all(len(v) == 2 and all(r.get("bits_per_word") for r in v) for v in results["pppl_seeds"].values())
    assert all(len(r["random"]) == 2 for r in results["verb_probe"].values())
    assert all(len(v) == 2 and v[1]["random"] == [] for v in results["verb_probe_seeds"].values())
    assert all(len(v) == 2 for v in results["agreement_seeds"].values())
    assert len(results["agreement"]["unigram"]["overall"]["random"]) == 2
    assert results["gold"]["row_order"] == ["unigram", "wordmap"] and results["gold"]["comparisons"]
    sizes = {row: d["entries"] for row, d in results["dictionaries"].items()}
    assert abs(sizes["unigram"] - sizes["wordmap"]) <= 0.01 * sizes["wordmap"], sizes     # equal capacity
    assert all(d["parameters"] for d in results["dictionaries"].values())
    assert results["finetune"] == [] and "floor" not in results                          # GermEval: not asked
    corpus = results["data"]["corpus"]
    assert corpus["removed"]["ud_test"] >= 1 and corpus["removed"]["germeval_test"] == 0
    md = (out / "REPORT.md").read_text(encoding="utf-8")
    for heading in ("German: corpus and leakage", "German: dictionaries and model sizes", "German: agreement (HYP1)",
                    "German: HYP2 against gold segmentation", "German: verbs, pseudo-perplexity",
                    "German: verbs, probes", "German: HYP1 and HYP2", "German: deviations from the thesis"):
        assert f"## {heading}" in md
    # the plan's estimate against this run's own stage records: within a factor of 4 either way (the preset's
    # figures are one core's seconds on an idle 2-core machine; a test run shares the machine with other tests)
    from train_scripts.demo import estimate

    a = settings("--part", "german", "--output", out, "--de-preset", "fast", "--de-probe-seeds", "2", "--dry-run")
    costs = PART.stage_costs(a)
    recorded = [estimate.record_seconds(out / "german" / ".stages", c.stage) for c in costs]
    assert None not in recorded, [c.stage for c, r in zip(costs, recorded) if r is None]
    planned, actual = sum(c.seconds for c in costs), sum(recorded)
    assert actual / 4 < planned < actual * 4, (planned, actual)
    again = run_cli(cmd, timeout=600)
    assert "[run ]" not in again.stderr and "[skip] lm/wordmap/pretrain" in again.stderr
    assert os.path.isfile(out / "report.html")
