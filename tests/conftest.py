"""Shared test fixtures: where the shared data lives and how to run the real command-line tools."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SHARED_DATA", REPO.parent / "shared" / "data"))
REQUIRE_SHARED = os.environ.get("REQUIRE_SHARED_DATA") == "1"
BIN = Path(sys.executable).parent


def require_shared(relpath: str) -> Path:
    """``../shared/data/<relpath>``; skips the test when it is missing (fails under REQUIRE_SHARED_DATA=1).
    The plain function, for module-scoped fixtures; tests take the ``shared_path`` fixture."""
    path = SHARED / relpath
    if not path.exists():
        if REQUIRE_SHARED:
            pytest.fail(f"shared data missing (REQUIRE_SHARED_DATA=1): {path}")
        pytest.skip(f"shared data not available: {path}")
    return path


@pytest.fixture
def shared_path():
    """``shared_path("multi30k/train.en.gz")`` -> Path; skips (or fails under REQUIRE_SHARED_DATA=1) if absent."""
    return require_shared


def cli_env() -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    nltk_dirs = [p for p in (env.get("NLTK_DATA"), str(BIN.parent / "nltk_data"), str(SHARED / "nltk_data")) if p]
    env["NLTK_DATA"] = os.pathsep.join(nltk_dirs)
    env["PYTHONPATH"] = f"{REPO}{os.pathsep}{env.get('PYTHONPATH', '')}"
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    return env


def run_command(args, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    """Run a command as ``run_cli`` does (the plain function, for module-scoped fixtures)."""
    args = [str(a) for a in args]
    if args[0] == "python":
        args[0] = sys.executable
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("cwd", REPO)
    proc = subprocess.run(args, env=cli_env(), **kwargs)
    if check and proc.returncode != 0:
        raise AssertionError(f"command failed ({proc.returncode}): {' '.join(args)}\n"
                             f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}")
    return proc


@pytest.fixture
def run_cli():
    """``run_cli(["fairseq-train", ...])``: venv bin first on PATH, NLTK_DATA set; asserts exit 0 by default."""
    return run_command


# NLTK data for in-process tests (BITE): the venv's download, else the shared copy
os.environ["NLTK_DATA"] = cli_env()["NLTK_DATA"]


#: a transformer small enough to train a few updates on one CPU core in seconds
TINY_TRANSFORMER_ARGS = [
    "--arch", "transformer", "--encoder-layers", "1", "--decoder-layers", "1",
    "--encoder-embed-dim", "32", "--decoder-embed-dim", "32",
    "--encoder-ffn-embed-dim", "64", "--decoder-ffn-embed-dim", "64",
    "--encoder-attention-heads", "2", "--decoder-attention-heads", "2",
    "--optimizer", "adam", "--lr", "0.001", "--criterion", "label_smoothed_cross_entropy",
    "--label-smoothing", "0.1", "--max-tokens", "2000", "--cpu", "--no-progress-bar", "--log-format", "simple",
    "--seed", "1",
]


def multi30k_slice(dest: Path, n_train: int = 1500, n_valid: int = 60, n_test: int = 37) -> Path:
    """Write raw ``{train,valid,test}.{en,de}`` slices of the shared Multi30k into ``dest``."""
    import gzip

    sources = {"train": ("train", n_train), "valid": ("val", n_valid), "test": ("test_2016_flickr", n_test)}
    dest.mkdir(parents=True, exist_ok=True)
    for split, (name, n) in sources.items():
        for lang in ("en", "de"):
            with gzip.open(require_shared(f"multi30k/{name}.{lang}.gz"), "rt", encoding="utf-8") as fh:
                lines = [next(fh) for _ in range(n)]
            (dest / f"{split}.{lang}").write_text("".join(lines), encoding="utf-8")
    return dest


def pytest_configure(config):
    # registered here until the project's pytest configuration registers it (another change may)
    config.addinivalue_line("markers", "slow: takes more than about 20 seconds (deselect with -m 'not slow')")
