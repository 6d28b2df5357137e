"""The translation part's inputs are checked by their contents before the first stage (``check_contents``): a
misaligned split or invalid UTF-8 in Multi30k is one line naming --mt-data and the file; exit 2; nothing created."""
from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys

import pytest

from preprocess.common import REPO, SHARED_DATA

M30K = SHARED_DATA / "multi30k"
pytestmark = pytest.mark.skipif(not M30K.is_dir(), reason="Multi30k is not in ../shared/data (docs/data.md)")


def demo(tmp_path, data):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "train_scripts.demo.main", "--part", "translation", "--mt-preset",
                           "fast", "--mt-data", data, "--output", out], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=300)
    return proc, out


@pytest.fixture
def data(tmp_path):
    copy = tmp_path / "multi30k"
    shutil.copytree(M30K, copy)
    return copy


def _write(path, lines: bytes):
    if path.suffix == ".gz":
        with gzip.open(path, "wb") as fh:
            fh.write(lines)
    else:
        path.write_bytes(lines)


def _split_file(data, name):
    return next(p for p in (data / f"{name}.gz", data / name) if p.exists())


def test_a_misaligned_split(data, tmp_path):
    path = _split_file(data, "val.de")
    _write(path, b"ein Satz\n" * 10)
    proc, out = demo(tmp_path, data)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("error: --mt-data:") and "misaligned" in proc.stderr and path.name in proc.stderr
    assert not out.exists()


def test_invalid_utf8(data, tmp_path):
    path = _split_file(data, "test_2016_flickr.en")
    with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as fh:
        lines = fh.read().split(b"\n")
    lines[4] = b"\xff" + lines[4]
    _write(path, b"\n".join(lines))
    proc, out = demo(tmp_path, data)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("error: --mt-data:") and ":5: invalid UTF-8" in proc.stderr
    assert "--errors" not in proc.stderr and not out.exists()
