"""The demo's pre-flight (train_scripts/demo/preflight.py): what a run cannot do is refused at once, in one line with
exit 2, creating nothing; each situation is made here (no GPU is this machine's normal case; a GPU is faked at the
check's seam, a full disk at shutil's)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from preprocess.cli import run_main
from preprocess.common import REPO, UserError
from train_scripts.demo import preflight
from train_scripts.demo.main import main


def demo(*args):
    return run_main(main, [str(a) for a in args])


def one_error(capsys, status) -> str:
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_an_output_that_cannot_be_created_is_one_line_and_nothing_is_made(capsys):
    err = one_error(capsys, demo("--part", "translation", "--output", "/proc/morphtok-nope/out"))
    assert err.startswith("error: --output /proc/morphtok-nope/out cannot be created or written in /proc")
    assert not Path("/proc/morphtok-nope").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder: the refusal cannot be made here")
def test_a_read_only_parent_is_refused(tmp_path, capsys):
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        err = one_error(capsys, demo("--part", "translation", "--output", parent / "out"))
        assert "cannot be created or written" in err and list(parent.iterdir()) == []
    finally:
        parent.chmod(0o755)


@pytest.mark.parametrize("part, flag", [("translation", "--mt-preset"), ("pretraining", "--lm-preset"),
                                        ("german", "--de-preset")])
def test_a_gpu_preset_without_a_gpu_is_refused_before_anything(part, flag, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(preflight, "cuda_devices", lambda: 0)
    out = tmp_path / "out"
    err = one_error(capsys, demo("--part", part, flag, "gpu", "--output", out))
    assert err == (f"error: {flag} gpu trains on a GPU but CUDA sees none on this machine; use {flag} cpu (or fast), "
                   "or run on a machine with a GPU")
    assert not out.exists()


def test_a_gpu_is_enough_for_a_gpu_preset(monkeypatch):
    """With a (faked) CUDA device the device check passes; the other parts' cpu presets never ask for one."""
    from train_scripts.demo.main import build_parser, chosen, part_settings
    from train_scripts.demo.parts import parts

    all_parts = parts()
    options = build_parser(all_parts).parse_args(["--preset", "gpu", "--lm-preset", "gpu", "--dry-run"])
    todo = chosen(options, all_parts)[:2]
    settings = {p.name: part_settings(p, options) for p in todo}
    monkeypatch.setattr(preflight, "cuda_devices", lambda: 1)
    preflight.check_devices(todo, settings)
    monkeypatch.setattr(preflight, "cuda_devices", lambda: 0)
    with pytest.raises(UserError, match="--mt-preset gpu trains on a GPU"):
        preflight.check_devices(todo, settings)


def test_too_little_disk_is_refused_before_anything(tmp_path, capsys, monkeypatch):
    class Usage:
        free = 10_000_000
    monkeypatch.setattr(preflight.shutil, "disk_usage", lambda path: Usage())
    out = tmp_path / "out"
    err = one_error(capsys, demo("--part", "translation", "--output", out))
    assert err.startswith(f"error: --output {out}: 0.0 GB free, and the run writes about 0.2 GB")
    assert not out.exists()


def test_a_missing_compiled_extension_is_a_note_not_a_refusal(monkeypatch):
    import importlib

    real = importlib.import_module

    def without_flota_search(name, *a, **k):
        if name == "preprocess.schemes.flota._search":
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(preflight.importlib, "import_module", without_flota_search)
    assert preflight.slow_paths() == ["FLOTA's search"]


def test_a_run_says_its_plan_before_its_first_stage(tmp_path):
    """The plan the dry run prints (stages, commands at once, time) opens a real run's log too."""
    proc = subprocess.run([sys.executable, "-m", "train_scripts.demo.main", "--part", "german", "--de-preset",
                           "fast", "--output", tmp_path / "o", "--de-ud", tmp_path / "missing-ud"],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "the german part's input is missing" in proc.stderr   # refused first
    dry = subprocess.run([sys.executable, "-m", "train_scripts.demo.main", "--part", "german", "--de-preset", "fast",
                          "--output", tmp_path / "o", "--dry-run"],
                         env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
    plan = [x for x in dry.stdout.splitlines() if x.startswith("# the german part:")]
    assert len(plan) == 1 and "stages (" in plan[0] and "about" in plan[0] and not (tmp_path / "o").exists()
