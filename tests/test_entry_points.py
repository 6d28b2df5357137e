"""Entry points a newcomer runs by hand: ``python -m fairseq_plugins`` answers without loading
torch or fairseq (and fairseq's --user-dir still registers every scheme), and ``morphtok-train-log`` never writes
an empty file with exit status 0."""
import json
import sys

from tests.conftest import REPO, run_command

_LOG = [
    '2024-01-01 10:00:00 | INFO | train_inner | {"epoch": 1, "update": 0.5, "loss": "9.5", "lr": "0.001", '
    '"num_updates": "10"}',
    '2024-01-01 10:00:01 | INFO | valid | {"epoch": 1, "valid_loss": "9.1", "valid_nll_loss": "9.0", '
    '"valid_ppl": "512", "valid_num_updates": "10"}',
    '2024-01-01 10:00:02 | INFO | valid | {"epoch": 2, "valid_loss": "8.2", "valid_nll_loss": "8.1", '
    '"valid_ppl": "274", "valid_num_updates": "20"}',
]


def test_user_dir_without_torch_or_fairseq():
    proc = run_command([sys.executable, "-X", "importtime", "-m", "fairseq_plugins"])
    assert proc.stdout.strip() == str(REPO / "fairseq_plugins")
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    assert "torch" not in imported and "fairseq" not in imported and "numpy" not in imported


def test_user_dir_still_registers_the_schemes(tmp_path):
    """fairseq imports the --user-dir package by name: every adapter registers, the torch fixes apply."""
    code = ("import argparse, sys; from fairseq import utils; from fairseq.registry import REGISTRIES; "
            f"utils.import_user_module(argparse.Namespace(user_dir={str(REPO / 'fairseq_plugins')!r})); "
            "print(sorted(REGISTRIES['bpe']['registry']), sorted(REGISTRIES['tokenizer']['registry']))")
    out = run_command([sys.executable, "-c", code], cwd=tmp_path).stdout
    for name in ("'spaces'", "'flota'", "'wordmap'", "'bite'"):
        assert name in out


def test_train_log_plot_and_empty_log(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("\n".join(_LOG) + "\n")
    png = tmp_path / "curve.png"
    run_command(["python", "-m", "train_scripts.train_log", log, "--output", png])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000
    jsonl = tmp_path / "valid.jsonl"
    run_command(["python", "-m", "train_scripts.train_log", log, "--output", jsonl])
    assert [json.loads(line)["update"] for line in jsonl.read_text().splitlines()] == [10, 20]
    # a log without json records (e.g. --log-format simple): one line, exit 2, no file
    plain = tmp_path / "plain.log"
    plain.write_text("2024-01-01 10:00:00 | INFO | valid | epoch 001 | valid on 'valid' subset | loss 9.1\n")
    for output in (tmp_path / "empty.png", tmp_path / "empty.jsonl"):
        bad = run_command(["python", "-m", "train_scripts.train_log", plain, "--output", output], check=False)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no validation records" in bad.stderr
        assert not output.exists()
