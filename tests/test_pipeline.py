"""The comparison pipeline (make demo) with a tiny configuration: report rows, plots, and resumability."""
import json

from tests.conftest import _shared_path

ARGS = ["--schemes", "unigram", "unigram_prime_nospace", "--train-lines", "600", "--valid-lines", "40",
        "--test-lines", "30", "--vocab-size", "600", "--max-update", "12", "--valid-every", "4", "--average", "2",
        "--embed-dim", "32", "--layers", "1", "--example-ids", "0", "3"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_pipeline_tiny_end_to_end_and_resume(run_cli, tmp_path):
    out = tmp_path / "demo"
    data = _shared_path("multi30k")
    first = run_cli(["python", "-m", "train_scripts.pipeline", "--data", data, "--output", out, *ARGS])
    report = (out / "REPORT.md").read_text(encoding="utf-8")
    for label in ("| Unigram |", "| Unigram' no spaces |"):
        assert label in report
    results = json.loads((out / "results.json").read_text())
    rows = {r["name"]: r for r in results["schemes"]}
    assert set(rows) == {"unigram", "unigram_prime_nospace"}
    for row in rows.values():
        assert 0.0 <= row["bleu"] <= 100.0 and 0.0 <= row["chrf"] <= 100.0
        assert row["hyps_with_token_marks"] == 0
        updates = [u for u, _ in row["valid_curve"]]  # every 4 updates, plus at each epoch end
        assert {4, 8, 12} <= set(updates) and updates == sorted(updates) and updates[-1] == 12
        assert row["final_valid_loss"] == row["valid_curve"][-1][1]
        assert row["averaged"] == 2 and row["train_cpu_seconds"] > 0
        assert row["boundary"]["n_words"] > 1000
        assert len(row["examples"]) == 2
    # the "no spaces" source is shorter than the same model with spaces would be, and never contains ▁ alone
    assert "\u2581 " not in (out / "schemes" / "unigram_prime_nospace" / "binarized" / "tok" / "test.en").read_text()
    # the rows ran through the recipes: binarize.json, the Transformer recipe's log, evaluate's outputs
    work = out / "schemes" / "unigram"
    assert json.loads((work / "binarized" / "binarize.json").read_text())["config"]["scheme"] == "sentencepiece"
    assert (work / "checkpoints" / "valid_log.jsonl").exists() and (work / "eval" / "scores.json").exists()
    for png in ("valid_loss.png", "seq_lengths.png"):
        assert (out / png).read_bytes()[:8] == PNG_MAGIC
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") == 2 and "Unigram&#x27; no spaces" in html
    assert "train_transformer_big.sh" in report and "BLEU signature: `nrefs:1" in report
    assert "[run ]" in first.stderr

    # a rerun skips every finished stage and rebuilds the same report
    again = run_cli(["python", "-m", "train_scripts.pipeline", "--data", data, "--output", out, *ARGS])
    assert "[run ]" not in again.stderr and again.stderr.count("[skip]") == 1 + 2 * 5
    assert json.loads((out / "results.json").read_text())["schemes"] == results["schemes"]

    # an interrupted stage (record gone, partial output left) is cleaned and rerun alone
    (out / ".stages" / "unigram__evaluate.json").unlink()
    (out / "schemes" / "unigram" / "eval" / "hyp.txt").write_text("partial\n")
    third = run_cli(["python", "-m", "train_scripts.pipeline", "--data", data, "--output", out, *ARGS])
    assert "[run ] unigram/evaluate" in third.stderr and third.stderr.count("[run ]") == 1
    assert len((out / "schemes" / "unigram" / "eval" / "hyp.txt").read_text().splitlines()) == 30

    # a changed option reruns exactly the stages it affects (training and what uses the model), never mixes runs
    changed = [a if a != "12" else "16" for a in ARGS]
    fourth = run_cli(["python", "-m", "train_scripts.pipeline", "--data", data, "--output", out, *changed])
    reran = {line.split()[-1] for line in fourth.stderr.splitlines() if line.startswith("[run ]")}
    assert reran == {f"{row}/{stage}" for row in ("unigram", "unigram_prime_nospace")
                     for stage in ("train", "average", "evaluate")}
    assert "[rerun] unigram/train: its options or inputs changed" in fourth.stderr
    rows = json.loads((out / "results.json").read_text())["schemes"]
    assert all(r["valid_curve"][-1][0] == 16 for r in rows)
    assert "trained for 16 updates" in (out / "REPORT.md").read_text(encoding="utf-8")


def test_pipeline_reports_the_failing_stage(run_cli, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for split in ("train", "val", "test_2016_flickr"):
        (data / f"{split}.en").write_text("a\nb\n")
        (data / f"{split}.de").write_text("a\n")  # misaligned
    proc = run_cli(["python", "-m", "train_scripts.pipeline", "--data", data, "--output", tmp_path / "o",
                    "--schemes", "unigram"], check=False)
    assert proc.returncode != 0
    assert "pipeline stage data failed" in proc.stderr and "misaligned train" in proc.stderr
