"""The pretraining part's inputs are checked by their contents before the first stage (``check_contents``): a
broken fine-tuning CSV or a corrupt published model is one line naming the part's option and the file; exit 2;
nothing created."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from preprocess.common import REPO, SHARED_DATA

pytestmark = pytest.mark.skipif(not (SHARED_DATA / "superbizarre").is_dir() or
                                not (SHARED_DATA / "flota_arxiv").is_dir(),
                                reason="the Superbizarre and FLOTA sets are not in ../shared/data (docs/data.md)")


def demo(tmp_path, *args):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "train_scripts.demo.main", "--part", "pretraining", "--lm-preset",
                           "fast", *map(str, args), "--output", out], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=300)
    return proc, out


def _refused(proc, out, *words):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert all(w in lines[0] for w in words), lines[0]
    assert not out.exists()


def test_a_csv_row_without_its_label(tmp_path):
    sb = tmp_path / "superbizarre"
    shutil.copytree(SHARED_DATA / "superbizarre", sb)
    path = sb / "arxiv_test.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].rsplit(",", 1)[0] + ","        # the label column left empty
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc, out = demo(tmp_path, "--lm-superbizarre", sb)
    _refused(proc, out, "--lm-superbizarre", "arxiv_test.csv:4", "missing text or label")


def test_a_corrupt_published_model(tmp_path, monkeypatch):
    from preprocess.common import UserError
    from train_scripts.demo.main import build_parser, parse, part_settings
    from train_scripts.demo.parts import parts
    from train_scripts.demo.pretraining import part
    from train_scripts.demo.rows import Row

    bad = tmp_path / "unigram_default.model"
    bad.write_bytes(b"not a sentencepiece model")
    rows = part.lm_rows()
    monkeypatch.setattr(part, "lm_rows", lambda: {**rows, "published_unigram": Row(
        "published_unigram", "x", {**rows["published_unigram"].config, "spm_model": str(bad)}, "")})
    everything = parts()
    options = parse(build_parser(everything), ["--lm-rows", "published_unigram", "--lm-preset", "fast",
                                               "--output", str(tmp_path / "o")], everything)
    with pytest.raises(UserError, match=r"^--lm-rows: .*unigram_default.model"):
        part.PART.check_inputs(part_settings(part.PART, options))
