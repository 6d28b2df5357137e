"""A clean stop: SIGTERM to a recipe (train_transformer_big.sh) or to the demo pipeline while it trains stops every
process it started (nothing left in /proc below it or anywhere with its output folder on the command line), leaves
only checkpoints that load, and a rerun resumes (the recipe from checkpoint_last.pt, the pipeline by skipping the
finished stages)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from tests.conftest import REPO, cli_env, multi30k_slice, require_shared

pytestmark = pytest.mark.slow

HANG_GUARD = 300   # seconds; only so that a broken stop fails the test instead of hanging it (not a speed check)


def _processes() -> dict[int, tuple[int, str, str]]:
    """{pid: (parent pid, state, command line)} of every process in /proc."""
    out = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(entry.name)] = (int(fields[1]), fields[0], cmd)
    return out


def _descendants(pid: int) -> set[int]:
    procs = _processes()
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, _, _) in procs.items():
            if ppid == parent and child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pids) -> list[str]:
    procs = _processes()
    return [procs[p][2] for p in pids if p in procs and procs[p][1] != "Z"]


def _mentioning(text: str) -> list[str]:
    """Live processes (other than this test) whose command line contains ``text``."""
    return [cmd for pid, (_, state, cmd) in _processes().items()
            if text in cmd and state != "Z" and pid != os.getpid()]


def _wait_for(condition, proc: subprocess.Popen, what: str, log: Path) -> None:
    deadline = time.time() + HANG_GUARD
    while not condition():
        if proc.poll() is not None:
            pytest.fail(f"the command ended (exit {proc.returncode}) before {what}:\n{log.read_text()[-3000:]}")
        if time.time() > deadline:
            proc.kill()
            pytest.fail(f"no {what} after {HANG_GUARD} s:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)


def _start(args: list, log: Path) -> subprocess.Popen:
    args = [sys.executable if a == "python" else str(a) for a in args]
    with open(log, "w") as fh:
        return subprocess.Popen(args, stdout=fh, stderr=subprocess.STDOUT, env=cli_env(), cwd=REPO)


def _checkpoints_load(save: Path) -> list[str]:
    names = []
    for path in sorted(save.glob("*.pt")):
        state = torch.load(path, map_location="cpu", weights_only=False)   # a truncated file raises here
        assert "model" in state, path
        names.append(path.name)
    assert not list(save.glob("*.tmp")), "a half-written checkpoint was left"
    return names


@pytest.fixture(scope="module")
def binarized(tmp_path_factory):
    from tests.conftest import run_command

    root = tmp_path_factory.mktemp("stop")
    raw = multi30k_slice(root / "raw", 300, 20, 10)
    out = root / "bin"
    run_command(["python", "-m", "train_scripts.binarize", "--scheme", "sentencepiece", "--data", raw, "--src", "en",
                 "--tgt", "de", "--out", out, "--vocab-size", "400", "--workers", "1"])
    return out


def test_sigterm_to_the_recipe_stops_fairseq_and_a_rerun_resumes(binarized, tmp_path):
    save, log = tmp_path / "ckpt", tmp_path / "train.out"
    recipe = ["bash", "train_scripts/train_transformer_big.sh", "--data", binarized, "--save-dir", save, "--tiny",
              "--max-update", "1000000"]
    proc = _start(recipe, log)
    _wait_for(lambda: (save / "checkpoint_last.pt").exists() and _mentioning(f"fairseq-train {binarized}"), proc,
              "a checkpoint and a running fairseq-train", log)
    below = _descendants(proc.pid)
    assert any("fairseq-train" in c for c in _alive(below))
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(timeout=HANG_GUARD)
    assert rc == 143
    assert _alive(below) == [] and _mentioning(str(save)) == []
    names = _checkpoints_load(save)
    assert "checkpoint_last.pt" in names
    done = torch.load(save / "checkpoint_last.pt", map_location="cpu", weights_only=False)["optimizer_history"][-1]
    updates = done["num_updates"]

    # a rerun resumes from checkpoint_last.pt and trains on to the new limit
    again = subprocess.run([*[str(a) for a in recipe[:-1]], str(updates + 2)], env=cli_env(), cwd=REPO, check=False,
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"@ {updates} updates" in again.stdout + again.stderr   # fairseq: "loaded checkpoint ... (epoch E @ N updates)"
    state = torch.load(save / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert state["optimizer_history"][-1]["num_updates"] == updates + 2


@pytest.mark.parametrize("schemes", [["unigram"], ["unigram", "unigram_prime"]], ids=["one-row", "rows-side-by-side"])
def test_sigterm_to_the_pipeline_during_training_stops_everything_and_a_rerun_resumes(tmp_path, schemes):
    """One row (trained in the pipeline's process tree) and two rows side by side (--jobs 2: a pipeline process
    per row, each with its own fairseq-train)."""
    data, out = require_shared("multi30k"), tmp_path / "demo"
    args = ["python", "-m", "train_scripts.demo.main", "--part", "translation", "--preset", "fast", "--data", data,
            "--output", out, "--schemes", *schemes, "--jobs", str(len(schemes)), "--train-lines", "300", "--valid-lines", "20",
            "--test-lines", "10", "--vocab-size", "400", "--valid-every", "5", "--embed-dim", "32", "--ffn-dim", "64",
            "--layers", "1", "--example-ids", "0"]
    log = tmp_path / "pipeline.out"
    proc = _start([*args, "--max-update", "1000000"], log)
    ckpts = [out / "schemes" / name / "checkpoints" for name in schemes]
    _wait_for(lambda: all((c / "checkpoint_last.pt").exists() and _mentioning(f"--save-dir {c}") for c in ckpts),
              proc, "a running training stage in every row", log)
    below = _descendants(proc.pid)
    assert sum("fairseq-train" in c for c in _alive(below)) >= len(schemes)
    assert any("train_transformer_big.sh" in c for c in _alive(below))
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(timeout=HANG_GUARD)
    assert rc in (130, 143) and "error: interrupted" in log.read_text()
    assert _alive(below) == [] and _mentioning(str(out)) == []
    for ckpt in ckpts:
        _checkpoints_load(ckpt)
    assert not list((out / ".stages").glob("*__train.json"))     # no training stage is recorded as done

    # a rerun skips what was finished and reruns the interrupted stages from a clean folder
    again = subprocess.run([sys.executable if a == "python" else str(a) for a in args] + ["--max-update", "10"],
                           env=cli_env(), cwd=REPO, capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "[skip] data" in again.stderr and (out / "results.json").exists()
    for name in schemes:
        assert f"[skip] {name}/binarize" in again.stderr and f"[run ] {name}/train" in again.stderr


def test_fairseq_finishes_a_checkpoint_it_is_writing_before_a_signal_takes_effect(tmp_path):
    """train_scripts.fairseq_launch wraps fairseq's save_checkpoint: SIGTERM during the save (here sent by the save
    itself, half-way) is held until the checkpoint is complete, then stops the process as usual (exit by SIGTERM,
    nothing after the save runs)."""
    script = f"""
import os, signal
from fairseq import checkpoint_utils
from train_scripts import fairseq_launch

def save_checkpoint(*args, **kwargs):
    with open({str(tmp_path / 'ckpt')!r}, "w") as fh:
        fh.write("first half")
        os.kill(os.getpid(), signal.SIGTERM)
        fh.write(" second half")
    return "saved"

checkpoint_utils.save_checkpoint = save_checkpoint
fairseq_launch._atomic_checkpoints()
checkpoint_utils.save_checkpoint.best = 1.5       # fairseq keeps its best loss on the function: still works
assert checkpoint_utils.save_checkpoint.best == 1.5
checkpoint_utils.save_checkpoint()
print("training went on after the signal")
"""
    proc = subprocess.run([sys.executable, "-c", script], env=cli_env(), cwd=REPO, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == -signal.SIGTERM, proc.stderr[-2000:]
    assert (tmp_path / "ckpt").read_text() == "first half second half"
    assert "training went on" not in proc.stdout


def test_a_killed_checkpoint_copy_leaves_the_previous_checkpoint_whole(tmp_path, monkeypatch):
    """fairseq copies the saved checkpoint to checkpoint_last.pt; train_scripts.fairseq_launch makes the copy a
    rename, so a copy that dies half-way (SIGKILL from SLURM after a requeue) leaves the old file as it was."""
    import shutil

    from fairseq.file_io import PathManager

    from train_scripts import fairseq_launch

    original = PathManager.copy
    try:
        fairseq_launch._atomic_copies()
        src, dst = tmp_path / "checkpoint3.pt", tmp_path / "checkpoint_last.pt"
        src.write_bytes(b"new checkpoint " * 1000)
        dst.write_bytes(b"old checkpoint")
        assert PathManager.copy(str(src), str(dst), overwrite=True)
        assert dst.read_bytes() == src.read_bytes() and not list(tmp_path.glob("*.part"))

        dst.write_bytes(b"old checkpoint")

        def dies_half_way(a, b):
            with open(b, "wb") as fh:
                fh.write(open(a, "rb").read()[:100])
            raise KeyboardInterrupt("killed")

        monkeypatch.setattr(shutil, "copyfile", dies_half_way)
        with pytest.raises(KeyboardInterrupt):
            PathManager.copy(str(src), str(dst), overwrite=True)
        assert dst.read_bytes() == b"old checkpoint"   # the resumed run loads the previous checkpoint
    finally:
        PathManager.copy = staticmethod(original) if not isinstance(original, staticmethod) else original
