"""The German part's inputs are checked by their contents before the first stage (train_scripts/demo/german/
inputs.py): a GermEval line without its label column, a CoNLL-U line of 6 columns, a test file that is a folder or
invalid UTF-8 is one line naming the demo's own option, the file and the line; exit 2; nothing created."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from preprocess.common import REPO, SHARED_DATA

GERMAN = SHARED_DATA / "german"
pytestmark = pytest.mark.skipif(not (GERMAN / "germeval2018").is_dir() or not (GERMAN / "ud_german_gsd").is_dir()
                                or not (SHARED_DATA / "multi30k").is_dir(),
                                reason="the German inputs are not in ../shared/data (docs/data.md)")


@pytest.fixture
def inputs(tmp_path):
    """Copies of the three German inputs (the test breaks one of them)."""
    ge, ud, m30k = tmp_path / "germeval", tmp_path / "ud", tmp_path / "multi30k"
    shutil.copytree(GERMAN / "germeval2018", ge)
    shutil.copytree(GERMAN / "ud_german_gsd", ud)
    m30k.mkdir()
    for p in (SHARED_DATA / "multi30k").iterdir():
        if p.name.endswith((".de", ".de.gz")):
            shutil.copy(p, m30k / p.name)
    return ge, ud, m30k


def demo(tmp_path, ge, ud, m30k):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "train_scripts.demo.main", "--part", "german", "--de-preset", "fast",
                           "--de-germeval", ge, "--de-ud", ud, "--de-multi30k", m30k, "--output", out],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
    return proc, out


def _edit_line(path, number, edit):
    lines = path.read_bytes().split(b"\n")
    lines[number - 1] = edit(lines[number - 1])
    path.write_bytes(b"\n".join(lines))


def _refused(proc, out, *words):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert "--errors" not in lines[0] and "--ud," not in lines[0] and "--data" not in lines[0]
    assert not out.exists()                           # refused before anything is created


def test_a_germeval_line_without_its_label_column(inputs, tmp_path):
    ge, ud, m30k = inputs
    _edit_line(ge / "germeval2018.training.txt", 7, lambda b: b.split(b"\t")[0])
    proc, out = demo(tmp_path, ge, ud, m30k)
    _refused(proc, out, "--de-germeval", "germeval2018.training.txt:7", "missing label column")


def test_a_conllu_line_of_six_columns(inputs, tmp_path):
    ge, ud, m30k = inputs
    path = ud / "de_gsd-ud-test.conllu"
    number = next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                  if line and not line.startswith("#"))
    _edit_line(path, number, lambda b: b"\t".join(b.split(b"\t")[:6]))
    proc, out = demo(tmp_path, ge, ud, m30k)
    _refused(proc, out, "--de-ud", f"de_gsd-ud-test.conllu:{number}")


def test_a_test_file_that_is_a_folder(inputs, tmp_path):
    ge, ud, m30k = inputs
    (ud / "de_gsd-ud-test.conllu").unlink()
    (ud / "de_gsd-ud-test.conllu").mkdir()
    proc, out = demo(tmp_path, ge, ud, m30k)
    _refused(proc, out, "--de-ud", "de_gsd-ud-test.conllu", "is a folder")


def test_invalid_utf8_names_the_demos_option(inputs, tmp_path):
    ge, ud, m30k = inputs
    _edit_line(ge / "germeval2018.test.txt", 3, lambda b: b"\xff\xfe" + b)
    proc, out = demo(tmp_path, ge, ud, m30k)
    _refused(proc, out, "--de-germeval", "germeval2018.test.txt", "3")


def test_a_multi30k_folder_without_its_test_files_names_the_demos_option(inputs, tmp_path):
    ge, ud, m30k = inputs
    for p in m30k.glob("test*"):
        p.unlink()
    proc, out = demo(tmp_path, ge, ud, m30k)
    _refused(proc, out, "--de-multi30k", "no Multi30k German test file")
    assert "(--multi30k)" not in proc.stderr             # the stand-alone command's option, not the demo's
