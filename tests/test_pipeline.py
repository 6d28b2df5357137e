"""The comparison pipeline (make demo) on a small slice with two schemes: the report's columns (BLEU/chrF with CIs
on clean and perturbed test sets, significance against the baseline, robustness, boundary P/R/F1), the perturbed
test files, resuming, reruns after a changed option, the GPU preset's commands and bad options."""
import json
import math
import re

import pytest

from tests.conftest import require_shared

ARGS = ["--preset", "fast", "--schemes", "unigram", "unigram_prime_nospace", "--train-lines", "600", "--valid-lines", "40",
        "--test-lines", "30", "--vocab-size", "600", "--max-update", "12", "--valid-every", "4", "--average", "2",
        "--embed-dim", "32", "--ffn-dim", "64", "--layers", "1", "--example-ids", "0", "3"]
PNG = "data:image/png;base64,iVBORw0KGgo"
N_STAGES = 2 + 2 * 7   # data, noise; per row binarize, train, average, evaluate, binarize_noisy, evaluate_noisy,
                       # intrinsic


#: the translation part of the demo (morphtok-demo runs both parts by default)
DEMO = ["python", "-m", "train_scripts.demo.main", "--part", "translation"]


def _gold() -> list:
    """The gold files from the shared data wherever it is (SHARED_DATA), not only beside the checkout."""
    return ["--gold-en", require_shared("morph_gold/eng.word.dev.tsv"),
            "--gold-de", require_shared("morph_gold/deu.derivational.v1.tsv")]


def _pipeline(run_cli, data, out, *extra, check=True):
    return run_cli([*DEMO, "--data", data, "--output", out, *ARGS, *_gold(),
                    *extra], check=check)


def test_pipeline_small_slice_columns_noise_resume_and_rerun(run_cli, tmp_path):
    from preprocess.evaluate import noise

    out = tmp_path / "demo"
    data = require_shared("multi30k")
    first = _pipeline(run_cli, data, out)
    assert "[run ]" in first.stderr
    results = json.loads((out / "results.json").read_text())
    meta, rows = results["meta"], {r["name"]: r for r in results["schemes"]}
    assert set(rows) == {"unigram", "unigram_prime_nospace"} and meta["baseline"] == "unigram"
    assert meta["preset"] == "fast" and meta["preset_overrides"]["max_update"] == 12
    for name, row in rows.items():
        for test_set in ("clean", "infl", "ws"):
            for metric in ("bleu", "chrf"):
                s = row["tests"][test_set][metric]
                assert 0.0 <= s["score"] <= 100.0 and s["ci"] >= 0.0
                if name == "unigram":
                    assert s["p_value"] is None
                else:
                    assert 0.0 < s["p_value"] <= 1.0 and s["significant"] == (s["p_value"] < 0.05)
        assert row["tests"]["clean"]["bleu"]["score"] == row["bleu"]      # the recipe's own score
        for kind in ("infl", "ws"):
            assert 0.0 <= row["robustness"][kind]["mean"] <= 1.0 and row["robustness"][kind]["n"] == 30
        assert row["boundary"]["protocol"] == "paper" and row["boundary"]["n_words"] > 1000
        b = row["boundary"]
        assert b["n_words"] + b["skipped"] == b["n_gold"] and 0.0 < b["coverage"] <= 1.0
        # the budget it saw, from fairseq's log: 12 updates of at most 2048 tokens on 600 pairs
        budget = row["budget"]
        assert budget["updates"] == 12 and budget["train_pairs"] == 600
        assert 0 < budget["sentences"] and 0 < budget["tgt_tokens"] <= 12 * 2048
        assert budget["epochs"] == pytest.approx(budget["sentences"] / 600)
        assert {"precision", "recall", "f1"} <= set(row["boundary"])
        assert row["train_cpu_seconds"] > 0 and row["updates_per_cpu_second"] > 0
        assert row["hyps_with_token_marks"] == 0
        assert len(row["examples"]) == 2 and row["examples"][0]["tokens_de"]
        assert row["averaged"] == 2
        updates = [u for u, _ in row["valid_curve"]]  # every 4 updates, plus at each epoch end
        assert {4, 8, 12} <= set(updates) and updates == sorted(updates) and updates[-1] == 12
    # the rows ran through the recipes: binarize.json, the Transformer recipe's log, evaluate's outputs
    work = out / "schemes" / "unigram"
    assert json.loads((work / "binarized" / "binarize.json").read_text())["config"]["scheme"] == "sentencepiece"
    assert (work / "checkpoints" / "valid_log.jsonl").exists() and (work / "eval" / "scores.json").exists()
    assert "\u2581 " not in (out / "schemes" / "unigram_prime_nospace" / "binarized" / "tok" / "test.en").read_text()
    # the "no spaces" source has no space tokens, so dropping spaces hardly changes it
    assert rows["unigram_prime_nospace"]["robustness"]["ws"]["mean"] > rows["unigram"]["robustness"]["ws"]["mean"]

    # the perturbed test files beside the report: same line count, the requested fraction, reproducible
    clean = (out / "raw" / "test.en").read_text(encoding="utf-8").splitlines()
    ws = (out / "test.ws.en").read_text(encoding="utf-8").splitlines()
    infl = (out / "test.infl.en").read_text(encoding="utf-8").splitlines()
    assert len(ws) == len(infl) == len(clean) == 30 and ws != clean and infl != clean
    gaps = sum(len(c.split()) - 1 for c in clean)
    dropped = sum(len(c.split()) - len(w.split()) for c, w in zip(clean, ws))
    assert abs(dropped / gaps - 0.3) <= 4 * math.sqrt(0.3 * 0.7 / gaps)
    st = meta["noise"]["stats"]["infl"]
    assert sum(a != b for c, n in zip(clean, infl) for a, b in zip(c.split(), n.split())) == st["changed"]
    assert abs(st["changed_share"] - 0.3) <= 4 * math.sqrt(0.3 * 0.7 / st["candidates"])
    noise.write_noisy(str(out / "raw" / "test.en"), str(tmp_path / "again.en"), "ws", 0.3, 1)
    assert (tmp_path / "again.en").read_bytes() == (out / "test.ws.en").read_bytes()

    # the page: every column, the opening paragraph, embedded plots
    report = (out / "REPORT.md").read_text(encoding="utf-8")
    assert "| scheme | BLEU clean | BLEU inflection noise | BLEU whitespace noise | chrF clean |" in report
    assert re.search(r"\| Unigram \| \d+\.\d ± \d+\.\d \|", report)
    assert "boundary P | boundary R | boundary F1" in report and "What this run can conclude" in report
    assert "## Training budget" in report and "| Unigram | 12 |" in report
    html = (out / "report.html").read_text(encoding="utf-8")
    srcs = re.findall(r'src="([^"]*)"', html)
    assert len(srcs) == 5 and all(s.startswith(PNG) for s in srcs)

    # a rerun with the same options skips every stage
    again = _pipeline(run_cli, data, out)
    assert "[run ]" not in again.stderr and again.stderr.count("[skip]") == N_STAGES
    assert json.loads((out / "results.json").read_text())["schemes"] == results["schemes"]

    # the output folder moved (a renamed clone, another mount point): the records name it by role, not by place,
    # so every stage is still done
    moved = tmp_path / "moved"
    out.rename(moved)
    out = moved
    again = _pipeline(run_cli, data, out)
    assert "[run ]" not in again.stderr and again.stderr.count("[skip]") == N_STAGES
    assert json.loads((out / "results.json").read_text())["schemes"] == results["schemes"]

    # another noise seed reruns the noise and what uses it, never the training
    third = _pipeline(run_cli, data, out, "--noise-seed", "2")
    ran = set(re.findall(r"\[run \] (\S+)", third.stderr))
    assert {"noise", "unigram/binarize_noisy", "unigram/evaluate_noisy", "unigram_prime_nospace/evaluate_noisy"} <= ran
    assert not ran & {"data", "unigram/train", "unigram/binarize", "unigram/evaluate", "unigram_prime_nospace/train"}
    assert (out / "test.ws.en").read_text(encoding="utf-8").splitlines() != ws
    assert json.loads((out / "results.json").read_text())["meta"]["noise"]["seed"] == 2
    assert "Noise: fraction 0.3, seed 2." in (out / "REPORT.md").read_text(encoding="utf-8")

    # an interrupted stage (record gone, partial output left) is cleaned and rerun alone
    (out / ".stages" / "unigram__evaluate.json").unlink()
    (out / "schemes" / "unigram" / "eval" / "hyp.txt").write_text("partial\n")
    fourth = _pipeline(run_cli, data, out, "--noise-seed", "2")
    assert "[run ] unigram/evaluate" in fourth.stderr and fourth.stderr.count("[run ]") == 1
    assert len((out / "schemes" / "unigram" / "eval" / "hyp.txt").read_text().splitlines()) == 30

    # a changed training option reruns exactly the stages it affects (training and what uses the model)
    changed = [a if a != "12" else "16" for a in ARGS]
    fifth = run_cli([*DEMO, "--data", data, "--output", out, *changed, *_gold(),
                     "--noise-seed", "2"])
    reran = set(re.findall(r"\[run \] (\S+)", fifth.stderr))
    assert reran == {f"{row}/{stage}" for row in ("unigram", "unigram_prime_nospace")
                     for stage in ("train", "average", "evaluate", "evaluate_noisy")}
    assert "[rerun] unigram/train: its options or inputs changed" in fifth.stderr
    rows = json.loads((out / "results.json").read_text())["schemes"]
    assert all(r["valid_curve"][-1][0] == 16 for r in rows)
    assert "trained for 16 updates" in (out / "REPORT.md").read_text(encoding="utf-8")


def test_gpu_preset_dry_run_commands(run_cli, tmp_path):
    out = tmp_path / "gpu"
    proc = run_cli([*DEMO, "--preset", "gpu", "--dry-run", "--output", out,
                    "--schemes", "unigram", "bite_unigram"])
    lines = proc.stdout.splitlines()
    assert not out.exists()                                          # nothing written, nothing run
    preset = next(x for x in lines if x.startswith("# preset"))
    assert "train-lines 0, valid-lines 0, test-lines 0" in preset   # all of Multi30k
    train = [l for l in lines if "train_transformer_big.sh" in l]
    assert len(train) == 2
    for cmd in train:
        for opt in ("--encoder-layers 6", "--decoder-layers 6", "--encoder-embed-dim 512",
                    "--encoder-ffn-embed-dim 2048", "--encoder-attention-heads 8", "--dropout 0.3",
                    "--patience 10", "--max-update 30000", "--validate-interval-updates 500",
                    "--keep-interval-updates 15", "--gpus 1", "--validate-interval 1000000"):
            assert opt in cmd, opt
        assert "--cpu" not in cmd
    average = [l for l in lines if "average_checkpoints" in l]
    assert all("--num-update-checkpoints 5" in a and "--checkpoint-upper-bound" in a for a in average)
    evaluate = [l for l in lines if "train_scripts.evaluate" in l]
    assert len(evaluate) == 2 * 2 and not any("--cpu" in e for e in evaluate)
    assert sum("/noisy/ref.de" in e for e in evaluate) == 2           # one extra generate per row for both noises
    assert any("--scheme bite" in l and "--vocab-size 8000" in l for l in lines)


def test_bad_options_fail_before_any_work(run_cli, tmp_path):
    for args, message in ((["--preset", "tpu"], "unknown preset 'tpu'"),
                          (["--schemes", "unigram", "nope"], "unknown scheme 'nope'"),
                          (["--noise-fraction", "1.5"], "noise fraction must be between 0 and 1"),
                          (["--schemes", "bpe", "--baseline", "unigram"], "--mt-baseline 'unigram' is not among")):
        proc = run_cli([*DEMO, "--output", tmp_path / "o", *args], check=False)
        assert proc.returncode == 2 and proc.stderr == f"error: {proc.stderr[7:]}"
        assert message in proc.stderr and proc.stderr.count("\n") == 1
        assert not (tmp_path / "o").exists()


def test_misaligned_data_is_refused_before_the_first_stage(run_cli, tmp_path):
    """A misaligned split (the data stage used to fail on it) is the pre-flight's one line: exit 2, nothing made."""
    data = tmp_path / "data"
    data.mkdir()
    for split in ("train", "val", "test_2016_flickr"):
        (data / f"{split}.en").write_text("a\nb\n")
        (data / f"{split}.de").write_text("a\n")  # misaligned
    proc = run_cli([*DEMO, "--data", data, "--output", tmp_path / "o",
                    "--schemes", "unigram"], check=False)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "--mt-data: train.en has 2 lines and train.de 1: the train split is misaligned" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_default_preset_and_rows_dry_run(run_cli, tmp_path):
    """The default budget is the one at which models learn (2,000 updates); five rows by default, all nine one
    option away; the fast preset keeps the quick 250-update run."""
    out = tmp_path / "o"
    plain = run_cli([*DEMO, "--dry-run", "--output", out]).stdout
    preset = next(x for x in plain.splitlines() if x.startswith("# preset"))
    assert preset.startswith("# preset cpu (cpu):") and "max-update 2000" in preset
    rows = [line[2:] for line in plain.splitlines() if line.startswith("# ") and " " not in line[2:]]
    assert rows == ["unigram", "unigram_prime", "bite_unigram", "wordmap", "flota"]
    assert plain.count("--max-update 2000") == 5
    every = run_cli([*DEMO, "--dry-run", "--output", out, "--schemes", "all",
                     "--preset", "fast"]).stdout
    assert sum(line.startswith("# ") and " " not in line[2:] for line in every.splitlines()) == 9
    assert every.count("--max-update 250") == 9 and not out.exists()


@pytest.mark.parametrize("single_char", [False, True])
def test_leftover_marks_cover_every_bite_symbol(tmp_path, single_char):
    """The demo's ``hyps_with_token_marks`` asks the scheme for its marks: every symbol BITE writes (the eleven
    inflection symbols in both spellings, the escape and spacing marks) is counted, not only ``[VB*]``/``[NN*]``;
    a scheme that writes no symbols counts SentencePiece's ``▁`` alone."""
    from preprocess.schemes import bite
    from train_scripts.demo.translation.rows import hyps_with_token_marks
    from train_scripts.schemes import make_scheme

    scheme = make_scheme({"scheme": "bite", "bite_single_char": single_char}, ("en", "de"), str(tmp_path))
    symbols = bite.INFLECTION_SYMBOLS + bite.SINGLE_CHAR_SYMBOLS + (bite.ESCAPE, bite.GLUE, bite.SPACE_BEFORE_MARK)
    assert len(set(symbols)) == 25
    clean = ["Ein Hund läuft über [die] Wiese (JJ) NN VBD .", "zwei Männer ."]
    for symbol in symbols:
        assert hyps_with_token_marks([*clean, f"ein großer{symbol} Hund"], scheme) == 1, symbol
    assert hyps_with_token_marks(clean, scheme) == 0
    assert hyps_with_token_marks([*clean, "ein\u2581Hund"], scheme) == 1
    baseline = make_scheme({"scheme": "sentencepiece"}, ("en", "de"), str(tmp_path))
    assert hyps_with_token_marks(["ein [JJR] Hund", "ein\u2581Hund", "zwei"], baseline) == 1


def test_status_lines_of_rows_side_by_side_never_run_together(tmp_path):
    """Rows side by side share one stderr: each status line is one write (``tqdm.write`` wrote the text and its
    newline in two, so two rows' ``[run ]`` lines ran together and CI's stage parsing failed)."""
    import subprocess
    import sys

    from preprocess.common import REPO

    # the writers start together (each, once imported, says so and waits for one byte), so their lines overlap
    writer = ("import sys\nfrom train_scripts.demo.stages import say\n"
              "print('ready', flush=True)\nsys.stdin.read(1)\n"
              "for i in range(2000):\n    say(f'[run ] row{sys.argv[1]}/stage{i}')\n")
    err = tmp_path / "stderr.txt"
    with open(err, "wb") as fh:
        procs = [subprocess.Popen([sys.executable, "-c", writer, str(k)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=fh, cwd=REPO) for k in range(3)]
        assert all(p.stdout.readline() == b"ready\n" for p in procs)
        for p in procs:
            p.stdin.write(b"g")
            p.stdin.close()
        assert all(p.wait() == 0 for p in procs)
    lines = err.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6000
    assert all(re.fullmatch(r"\[run \] row[012]/stage\d+", line) for line in lines)


def test_a_stage_that_ran_says_when_it_ended(tmp_path, capsys):
    """``[run ]`` when a stage starts, ``[done] NAME (N s)`` when it ends (a pretraining stage runs for half an hour:
    the log shows it ended), nothing more for a stage skipped."""
    from train_scripts.demo.stages import Stages

    target = tmp_path / "out.txt"
    Stages(tmp_path).run("row/step", [target], lambda: target.write_text("x") and {"n": 1}, key=["k"])
    assert re.findall(r"^\[(?:run |done)\].*$", capsys.readouterr().err, re.M) == [
        "[run ] row/step", "[done] row/step (0 s)"]
    Stages(tmp_path).run("row/step", [target], lambda: pytest.fail("ran again"), key=["k"])
    assert capsys.readouterr().err == "[skip] row/step (done with the same options)\n"


def test_a_stages_time_is_its_work_not_its_wait_for_a_slot(tmp_path, capsys):
    """Two stages on one slot: the second waits about 2 s for it, then works about 1 s.  Its ``[done]`` line and its
    record give the work (the log once gave a fine-tuning run of 133 s as 3,162 s, its wait for a core included)."""
    import threading
    import time

    from train_scripts.demo.stages import Scheduler, Stages, slot_wait

    sched, stages = Scheduler(1), Stages(tmp_path)
    first_has_slot = threading.Event()

    def stage(name: str, seconds: float):
        out = tmp_path / name

        def work():
            with sched.slot():
                first_has_slot.set()
                time.sleep(seconds)
                out.write_text("x")
            return {}
        return stages.run(name, [out], work, key=[name], announce=False)

    sched.add(lambda: stage("first", 2.0))
    first_has_slot.wait()
    waited = sched.add(lambda: (stage("second", 1.0), slot_wait())[1])
    sched.wait()
    assert waited.result() >= 1.5        # it did wait for the slot
    done = dict(re.findall(r"^\[done\] (\w+) \((\d+) s\)$", capsys.readouterr().err, re.M))
    seconds = {name: json.loads((tmp_path / ".stages" / f"{name}.json").read_text())["seconds"]
               for name in ("first", "second")}
    assert done == {name: f"{s:.0f}" for name, s in seconds.items()}
    assert seconds["first"] >= 2.0 and 1.0 <= seconds["second"] < 1.9   # with its wait it would be 3 s


#: a command that works about a CPU second and says when it is done (a file), then exits
BUSY = "import sys, pathlib\nsum(i * i for i in range(12_000_000))\npathlib.Path(sys.argv[1]).write_text('done')\n"
#: a command that waits (no work) until that file is there, and half a second more, so that the busy command has
#: ended and been reaped while it still runs
IDLE = ("import sys, time, pathlib\nwhile not pathlib.Path(sys.argv[1]).exists():\n    time.sleep(0.02)\n"
        "time.sleep(0.5)\n")


def test_a_commands_cpu_seconds_are_its_own_not_those_of_a_command_beside_it(tmp_path):
    """The translation table's "train CPU s" is the training command's own CPU time: two commands side by side
    (as the scheduler runs two rows' trainings), one busy and one idle, are measured apart.  The demo process's
    ``getrusage(RUSAGE_CHILDREN)`` around a command counted every child reaped meanwhile (the idle command got the
    busy one's second), and nothing at all of a command run as a SLURM job."""
    import sys
    import threading

    from train_scripts.demo.stages import Runner

    runner, flag = Runner(tmp_path, 1), tmp_path / "busy-done"
    idle = threading.Thread(target=runner.run,
                            args=("idle", [sys.executable, "-c", IDLE, flag], tmp_path / "logs" / "idle.log"))
    idle.start()
    runner.run("busy", [sys.executable, "-c", BUSY, flag], tmp_path / "logs" / "busy.log")
    idle.join()
    busy, waited = runner.cpu_seconds["busy"], runner.cpu_seconds["idle"]
    assert busy > 0.3, runner.cpu_seconds
    assert waited < busy / 2, runner.cpu_seconds      # its interpreter's start-up and its polling only


def test_a_slurm_stage_job_reports_its_commands_cpu_seconds(tmp_path, monkeypatch):
    """On SLURM the CPU time is measured in the job (``StageJob`` returns it with the exit status) and read from
    the job's result; a job of an older version (an int) or an unreadable result gives no figure, not a failure."""
    import sys

    from train_scripts.demo import slurm

    for name, value in {"SUBMITIT_EXECUTOR": "local", "SUBMITIT_LOCAL_JOB_ID": "1", "SUBMITIT_LOCAL_NTASKS": "1",
                        "SUBMITIT_LOCAL_JOB_NUM_NODES": "1", "SUBMITIT_LOCAL_NODEID": "0",
                        "SUBMITIT_LOCAL_GLOBALID": "0", "SUBMITIT_LOCAL_LOCALID": "0"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    log = tmp_path / "busy.log"
    result = slurm.StageJob([sys.executable, "-c", BUSY, str(tmp_path / "flag")], log, False, 1)()
    assert result["status"] == 0 and result["cpu_seconds"] > 0.3, result

    pickle = tmp_path / "result.pkl"
    pickle.write_bytes(b"")

    class Job:
        paths = type("Paths", (), {"result_pickle": pickle})

        def __init__(self, value):
            self.value = value

        def result(self):
            if isinstance(self.value, Exception):
                raise self.value
            return self.value

    assert slurm.job_cpu_seconds(Job(result)) == result["cpu_seconds"]
    assert slurm.job_cpu_seconds(Job(0)) is None
    assert slurm.job_cpu_seconds(Job(RuntimeError("no result"))) is None
    pickle.unlink()                                   # not written (yet): not waited for
    assert slurm.job_cpu_seconds(Job(result)) is None
