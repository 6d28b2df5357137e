"""Multi-seed runner: its statistics are scipy's (mean, sample sd, Welch's t-test), and it runs every (scheme, seed)
once with the right options.  The runner test uses a stand-in for finetune_classification.sh that writes a score
from its options; the real recipe is exercised by tests/test_recipes_roberta.py."""
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from preprocess.common import UserError
from train_scripts import multiseed


def _synthetic():
    rng = np.random.default_rng(7)
    return {
        "baseline": list(rng.normal(0.70, 0.010, 10)),
        "spaces": list(rng.normal(0.72, 0.030, 10)),   # another variance: Welch differs from Student
        "flota": list(rng.normal(0.705, 0.012, 7)),    # and another number of seeds
    }


def test_summary_is_scipys_mean_sd_and_welch():
    scores = _synthetic()
    summary = multiseed.summarize(scores, "baseline")
    for name, values in scores.items():
        row = summary[name]
        described = stats.describe(values)  # scipy: mean and the unbiased (n - 1) variance
        assert row["n"] == len(values) and row["scores"] == pytest.approx(values)
        assert row["mean"] == pytest.approx(described.mean, rel=1e-12)
        assert row["sd"] == pytest.approx(math.sqrt(described.variance), rel=1e-12)
        if name == "baseline":
            assert "p" not in row and "t" not in row
            continue
        welch = stats.ttest_ind(values, scores["baseline"], equal_var=False)
        student = stats.ttest_ind(values, scores["baseline"], equal_var=True)
        assert row["t"] == pytest.approx(welch.statistic, rel=1e-12)
        assert row["p"] == pytest.approx(welch.pvalue, rel=1e-12)
        assert row["p"] != pytest.approx(student.pvalue, rel=1e-3)  # it is Welch's test, not Student's
        assert row["baseline"] == "baseline"


def test_summary_without_baseline_and_bad_input():
    scores = _synthetic()
    plain = multiseed.summarize(scores)
    assert all("p" not in row for row in plain.values())
    with pytest.raises(UserError, match="baseline 'nope'"):
        multiseed.summarize(scores, "nope")
    with pytest.raises(UserError, match="at least two seeds"):
        multiseed.summarize({"a": [0.5], "b": [0.4, 0.6]}, "b")
    # no variance on either side: scipy's t is undefined, reported as None rather than nan
    flat = multiseed.summarize({"a": [0.5, 0.5], "b": [0.5, 0.5]}, "b")
    assert flat["a"]["p"] is None and flat["a"]["sd"] == 0.0
    table = multiseed.format_table(flat, "accuracy")
    assert table.splitlines()[2] == "| a | 2 | 0.5000 | 0.0000 | n/a | n/a |"


STAND_IN = r"""#!/usr/bin/env bash
# stand-in for finetune_classification.sh: accuracy = 0.6 + seed/100 (+ 0.05 with --encode flota)
set -euo pipefail
echo "$*" >> "$CALLS"
"$PY" - "$@" <<'EOF'
import json, os, sys
a = sys.argv[1:]
opt = lambda k: a[len(a) - 1 - a[::-1].index(k) + 1]
acc = 0.6 + int(opt("--seed")) / 100 + (0.05 if "--encode" in a else 0.0)
os.makedirs(opt("--save-dir"), exist_ok=True)
for name in ("dev", "test"):
    with open(os.path.join(opt("--save-dir"), name + "_scores.json"), "w") as fh:
        json.dump({"accuracy": acc if name == "test" else 0.0, "macro_f1": acc / 2}, fh)
EOF
"""


def test_runner_runs_each_seed_once_and_reports(tmp_path):
    recipe, calls, out = tmp_path / "recipe.sh", tmp_path / "calls.txt", tmp_path / "seeds"
    recipe.write_text(STAND_IN)
    for name in ("a.pt", "lm"):
        (tmp_path / name).touch()
    env = {"CALLS": str(calls), "PY": sys.executable, "PATH": "/usr/bin:/bin"}
    cmd = [sys.executable, "-m", "train_scripts.multiseed", "--out", out, "--csv-prefix", tmp_path / "csv",
           "--seeds", "3", "--recipe", recipe, "--baseline", "base",
           "--scheme", "base", tmp_path / "a.pt", tmp_path / "lm",
           "--scheme", "flota", tmp_path / "a.pt", tmp_path / "lm", "--encode flota --flota-k 2",
           "--", "--tiny", "--max-rows", "20"]
    from tests.conftest import REPO

    proc = subprocess.run([str(c) for c in cmd], cwd=REPO, env={**env, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = calls.read_text().splitlines()
    assert len(lines) == 6
    for line in lines:  # every run: the common options, its scheme's options, its own folders and seed
        assert "--tiny --max-rows 20" in line and line.count("--seed") == 1
        seed = line.split("--seed ")[1].split()[0]
        scheme = "flota" if "--encode flota --flota-k 2" in line else "base"
        assert f"--save-dir {out}/{scheme}/seed{seed} " in line + " "
        assert f"--work {out}/{scheme}/seed{seed}/data" in line
    report = json.loads((out / "multiseed.json").read_text())
    expected = multiseed.summarize({"base": [0.61, 0.62, 0.63], "flota": [0.66, 0.67, 0.68]}, "base")
    assert report["schemes"]["base"]["scores"] == pytest.approx(expected["base"]["scores"])
    assert report["schemes"]["flota"]["p"] == pytest.approx(expected["flota"]["p"])
    assert report["schemes"]["flota"]["mean"] == pytest.approx(0.67)
    assert "| flota | 3 | 0.6700 |" in proc.stdout
    # a second call finds every run finished and only reports; --report-only reads another metric
    proc = subprocess.run([str(c) for c in cmd], cwd=REPO, env={**env, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True)
    assert proc.returncode == 0 and len(calls.read_text().splitlines()) == 6
    proc = subprocess.run([sys.executable, "-m", "train_scripts.multiseed", "--out", str(out), "--report-only",
                           "--metric", "macro_f1", "--baseline", "base"], cwd=REPO,
                          env={**env, "PYTHONPATH": str(REPO)}, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "multiseed.json").read_text())["schemes"]["base"]["mean"] == pytest.approx(0.31)


def test_runner_bad_input(tmp_path):
    from tests.conftest import REPO

    no_slurm = tmp_path / "bin"  # a PATH without sbatch, whatever this machine has installed
    no_slurm.mkdir()

    def run(*args):
        return subprocess.run([sys.executable, "-m", "train_scripts.multiseed", "--out", str(tmp_path / "o"),
                               *map(str, args)], cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": str(no_slurm)},
                              capture_output=True, text=True)

    bad = run("--csv-prefix", "x", "--scheme", "a", "only-two")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --scheme wants NAME PRETRAINED LM_DATA")
    bad = run("--csv-prefix", "x", "--scheme", "a", "p", "l", "--baseline", "b")
    assert bad.returncode == 2 and "--baseline 'b' is not one of" in bad.stderr
    bad = run("--report-only")
    assert bad.returncode == 2 and "no runs in" in bad.stderr
    bad = run("--csv-prefix", "x", "--scheme", "a", "p", "l", "--executor", "slurm")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "sbatch" in bad.stderr and "--executor local" in bad.stderr
