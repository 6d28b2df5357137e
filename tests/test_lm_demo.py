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
    """helped: >= 1 point, p < 0.05, >= 5 seeds each; no effect: the 95% interval inside +-1; else undetermined.
    A collapsed seed counts in the verdict (all runs), it does not force one."""
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


def test_compare_one_sample_probe_and_holm():
    from scipy import stats

    # the probe: one deterministic pretrained score against five random encoders
    c = lm_report.compare([60.0], [56.0, 56.5, 55.8, 56.2, 56.1])
    assert c["verdict"] == "helped" and c["diff"] == pytest.approx(60.0 - 56.12)
    assert c["p"] == pytest.approx(stats.ttest_1samp([56.0, 56.5, 55.8, 56.2, 56.1], 60.0).pvalue)
    assert c["low"] < c["diff"] < c["high"]
    # Holm: sorted p times (m - rank), running maximum, capped at 1; None stays None
    assert lm_report.holm([0.01, None, 0.04, 0.03]) == pytest.approx([0.03, None, 0.06, 0.06])
    assert lm_report.holm([0.5, 0.9]) == [1.0, 1.0]


def test_floor_marks_rows_below_it_and_no_row_conclusion_is_drawn():
    runs = [_run("unigram", "pretrained", s, a, size=8000) for s, a in enumerate([0.60, 0.61, 0.62], 1)]
    runs += [_run("unigram_prime", "pretrained", s, a, size=8000) for s, a in enumerate([0.70, 0.71, 0.72], 1)]
    res = _results(runs)
    res["floor"] = [{"part": "superbizarre", "task": "arxiv", "size": 8000, "test": {"accuracy": 0.645}}]
    res["pretraining"] = [{"row": "unigram", "label": "Unigram"}, {"row": "unigram_prime", "label": "Unigram'"}]
    res["analysis"] = a = lm_report.analyse(res)
    by_row = {e["row"]: e for e in a["superbizarre"]}
    assert by_row["unigram"]["below_floor"] and not by_row["unigram_prime"]["below_floor"]
    assert by_row["unigram"]["floor"] == pytest.approx(64.5)
    text = "\n".join(lm_report.conclusions(res))
    assert "Below the non-neural floor" in text and "Unigram at 8,000 words (61.0 against 64.5)" in text
    # Unigram' beats Unigram significantly, but Unigram is below the floor: no tokeniser conclusion is drawn, and the
    # rows table shows no mark either
    assert "differs from Unigram" not in text
    table = {r[0]: r for r in lm_report.rows_table(res, "arxiv")[1:]}
    assert table["Unigram'"][6] == "not drawn: Unigram is below the floor"
    assert table["Unigram (under-trained: below the floor)"][6] == ""
    # both above the floor: the comparison is drawn, in the table and in the conclusions
    res["floor"][0]["test"]["accuracy"] = 0.55
    res["analysis"] = lm_report.analyse(res)
    assert "▲ (p " in {r[0]: r for r in lm_report.rows_table(res, "arxiv")[1:]}["Unigram'"][6]
    assert "Unigram' differs from Unigram on arxiv by +10.0 points" in "\n".join(lm_report.conclusions(res))


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
    assert sorted(r["encoding"] for r in fl) == ["flota_k2", "standard"]
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
    assert f"Loaded checkpoint {part / 'rows' / 'unigram' / 'checkpoints' / 'checkpoint_last.pt'}" in pretrained_log
    pre = res["pretraining"][0]
    assert pre["updates"] == 10 and pre["sequences"] == 80 and pre["tokens"] > 0 and pre["valid_curve"]
    assert pre["valid_loss_per_word"] == pytest.approx(pre["valid_loss_per_token"] * pre["tokens_per_word"], rel=0.2)
    report = (part / "REPORT.md").read_text()
    for heading in ("Pretraining budget and loss", "Superbizarre arxiv: rows", "FLOTA on the pretrained",
                    "What this run can and cannot conclude", "not covered", "by labelled size",
                    "frozen-encoder probe", "Pseudo-perplexity per word", "floor (char n-gram NB)", "p (Holm)",
                    "Leakage rules of the ArXiv corpus"):
        assert heading in report, heading
    # the probe (one pretrained encoder, a random one per seed), the floor and the pseudo-perplexity were measured
    assert [p["row"] for p in res["probe"]] == ["unigram"] and len(res["probe"][0]["random"]) == 2
    assert {(f["part"], f["size"]) for f in res["floor"]} == {("superbizarre", 100), ("flota", 100)}
    assert pre["pppl_clean"]["words"] > 0 and pre["pppl_noisy"]["noise"] and pre["pppl_clean"]["pppl_per_word"] > 1
    assert (part / "report.html").read_text().count("data:image/png;base64") >= 2
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
