"""A full disk is one line and an exit: every command that writes, run as a subprocess against a
small tmpfs made in the test, exits non-zero well within its time limit (a hang check, not a speed limit) with
exactly one ``error:`` line on stderr and leaves neither a partial nor a temporary file.

Before: ``morphtok-encode --workers 2`` on a ``.gz`` input printed its error and then hung (the parent waited at
exit for a queue's feeder thread blocked on a pipe no worker read any more); ``morphtok-average`` ended in
torch's 30-line ``RuntimeError: [enforce fail at inline_container.cc:672] . unexpected pos``;
``morphtok-binarize`` repeated fairseq-preprocess's traceback and left a partial ``data-bin``."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import cli_env

#: seconds a failing command may take before the test calls it hung (each takes about a second, binarize ~6 s)
HANG_S = 60
PAGE = 4096


def run(args: list, stdin=None) -> tuple[subprocess.CompletedProcess, float]:
    """Run a command (venv's bin first on PATH); fail the test when it is still running after HANG_S."""
    start = time.monotonic()
    try:
        proc = subprocess.run([str(a) for a in args], env=cli_env(), capture_output=True, text=True, stdin=stdin,
                              timeout=HANG_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{args[0]} still running after {HANG_S} s on a full disk: it hangs")
    return proc, time.monotonic() - start


def disk_full_error(proc: subprocess.CompletedProcess, elapsed: float, *fragments, progress: tuple = ()) -> str:
    """Exit status 2, no traceback, exactly one line on stderr (besides the command's own progress lines that
    start with one of ``progress``), an ``error:`` line saying the disk is full and that nothing was written."""
    assert proc.returncode == 2, proc.stderr
    assert elapsed < HANG_S
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith(progress)]
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith("error: cannot write ") and "No space left on device" in line, line
    assert line.endswith("nothing was written"), line
    for fragment in fragments:
        assert str(fragment) in line, (fragment, line)
    return line


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


# --- morphtok-encode: any worker count, any input kind ------------------------------------------------------------

@pytest.mark.parametrize("workers,kind", [(1, "gz"), (2, "gz"), (3, "gz"), (2, "plain"), (2, "stdin")])
def test_encode_on_a_full_disk_is_one_line_and_an_exit(workers, kind, shared_path, small_disk, tmp_path):
    """All of Multi30k's English training side (3 MB encoded) to a 64 KB disk: with a .gz input or stdin the parent
    hands chunks to the workers through a queue, and a chunk left in a full pipe used to hang the exit."""
    gz = shared_path("multi30k/train.en.gz")
    src = gz
    if kind != "gz":
        src = tmp_path / "train.en"
        subprocess.run(["sh", "-c", f"gzip -dc '{gz}' > '{src}'"], check=True)
    disk = small_disk(64 * 1024)
    out = disk / "train.tok.en"
    args = ["morphtok-encode", "--scheme", "spaces", "--model", shared_path("space_models/unigram_prime.model"),
            "--quiet", "--workers", workers, "--outputs", out, "--inputs", "-" if kind == "stdin" else src]
    if kind == "stdin":
        with open(src, "rb") as fh:
            proc, elapsed = run(args, stdin=fh)
    else:
        proc, elapsed = run(args)
    disk_full_error(proc, elapsed, out)
    assert files_under(disk) == []


# --- morphtok-average ------------------------------------------------------------------------------------------

@pytest.fixture
def checkpoints(tmp_path) -> list[Path]:
    """Two small fairseq-like checkpoints (256 KB of parameters each)."""
    torch = pytest.importorskip("torch")
    paths = []
    for i in range(2):
        path = tmp_path / f"checkpoint{i + 1}.pt"
        torch.save({"model": {"w": torch.full((64, 1024), float(i))}, "cfg": None, "extra_state": {},
                    "optimizer_history": [{"num_updates": i + 1}], "last_optimizer_state": None}, path)
        paths.append(path)
    return paths


@pytest.mark.parametrize("size", [64 * 1024, 192 * 1024])
def test_average_on_a_full_disk_is_one_line_and_an_exit(size, checkpoints, small_disk):
    """A disk with no room for the average (64 KB), and one that takes part of it (192 KB of 258 KB)."""
    disk = small_disk(size)
    out = disk / "checkpoint_avg.pt"
    proc, elapsed = run(["morphtok-average", "--inputs", *checkpoints, "--output", out])
    disk_full_error(proc, elapsed, out, progress=("averaging ",))
    assert "inline_container" not in proc.stderr and "unexpected pos" not in proc.stderr
    assert files_under(disk) == []


# --- morphtok-export -------------------------------------------------------------------------------------------

def test_export_on_a_full_disk_is_one_line_and_an_exit(shared_path, small_disk):
    """The error names the file in --out (not the hidden temporary directory), and the directory never appears."""
    pytest.importorskip("tokenizers")
    disk = small_disk(64 * 1024)
    out = disk / "tokenizer"
    proc, elapsed = run(["morphtok-export", "--scheme", "spaces", "--spaces-model",
                         shared_path("space_models/unigram_prime.model"), "--out", out])
    line = disk_full_error(proc, elapsed, out / "tokenizer.json")
    assert ".export-" not in line
    assert list(disk.iterdir()) == []


# --- morphtok-binarize ------------------------------------------------------------------------------------------

@pytest.fixture
def lm_corpus(shared_path, tmp_path) -> Path:
    import gzip
    with gzip.open(shared_path("multi30k/train.en.gz"), "rt", encoding="utf-8") as fh:
        lines = [next(fh) for _ in range(2100)]
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "train.en").write_text("".join(lines[:2000]), encoding="utf-8")
    (raw / "valid.en").write_text("".join(lines[2000:]), encoding="utf-8")
    return raw


def _binarize(raw: Path, out: Path) -> list:
    return ["morphtok-binarize", "--lm", "--scheme", "spaces", "--data", raw, "--src", "en", "--out", out,
            "--vocab-size", 500, "--workers", 1]


def _pages(path: Path) -> int:
    return sum(-(-p.stat().st_size // PAGE) * PAGE for p in path.rglob("*") if p.is_file())


def test_binarize_on_a_full_disk_is_one_line_and_an_exit(lm_corpus, small_disk, tmp_path):
    """The disk fills in the learn step (nothing written) and, measured from a reference run, in fairseq-preprocess
    (models and encoded text fit, the binarised data does not): one line naming data-bin, no partial data-bin; the
    steps that finished keep their complete files (the learned models are reused by the next run)."""
    disk = small_disk(64 * 1024)
    proc, elapsed = run(_binarize(lm_corpus, disk / "out"))
    disk_full_error(proc, elapsed, disk / "out" / "models" / "spm.model")
    assert files_under(disk) == []

    ref = tmp_path / "ref"
    proc, _ = run(_binarize(lm_corpus, ref))
    assert proc.returncode == 0, proc.stderr
    before = _pages(ref / "models") + _pages(ref / "tok")
    disk = small_disk(before + _pages(ref / "data-bin") // 2 // PAGE * PAGE)
    proc, elapsed = run(_binarize(lm_corpus, disk / "out"))
    disk_full_error(proc, elapsed, disk / "out" / "data-bin")
    assert not (disk / "out" / "data-bin").exists() and not (disk / "out" / "binarize.json").exists()
    finished = [name for name in files_under(ref) if name.startswith(("models/", "tok/"))]
    assert files_under(disk / "out") == finished
    shutil.rmtree(ref)


def test_tool_write_error_reads_the_last_line_of_a_traceback():
    from train_scripts.tools import tool_write_error
    err = tool_write_error("Traceback (most recent call last):\n  File ...\nOSError: [Errno 28] No space left on device\n")
    assert err is not None and err.errno == 28 and err.strerror == os.strerror(28)
    assert tool_write_error("OSError: [Errno 2] No such file or directory: 'x'\n") is None
    assert tool_write_error("ValueError: bad\n") is None
