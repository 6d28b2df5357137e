"""The README's quick start, run as written: its bash block and its Python block, from a folder laid out like the
repository root (links to the checkout's files, ``../shared`` beside it), so that the commands' relative paths
mean what they mean for a reader and nothing is written into the checkout."""
from __future__ import annotations

import os
import re
import subprocess

import pytest

from conftest import REPO, SHARED, require_shared

pytestmark = pytest.mark.slow


def readme_blocks(section: str) -> dict[str, str]:
    """The fenced blocks of one ``## `` section of README.md, by language."""
    text = open(REPO / "README.md", encoding="utf-8").read()
    match = re.search(rf"^## {re.escape(section)}.*?$(.*?)(?=^## )", text, re.S | re.M)
    assert match, f"README.md has no section '## {section}'"
    return {lang: body for lang, body in re.findall(r"^```(\w+)\n(.*?)^```", match.group(1), re.S | re.M)}


def test_the_quick_start_block_is_what_the_test_runs():
    blocks = readme_blocks("Quick start")
    assert set(blocks) == {"bash", "python"}
    for step in ("prepare_multi30k.sh", "morphtok-encode --scheme spaces", "morphtok-encode --scheme bite",
                 "morphtok-encode --scheme flota", "morphtok-binarize", "train_transformer_big.sh", "--tiny",
                 "morphtok-average", "morphtok-evaluate", "morphtok-translate"):
        assert step in blocks["bash"], step


def test_quick_start_runs_as_written(tmp_path):
    for name in ("multi30k", "space_models", "flota_vocabs"):
        require_shared(name)
    blocks = readme_blocks("Quick start")
    root = tmp_path / "checkout"
    root.mkdir()
    for name in os.listdir(REPO):
        if name not in ("quickstart", ".git"):
            os.symlink(REPO / name, root / name)
    os.symlink(SHARED.parent, tmp_path / "shared")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(str(REPO / ".venv")))
    if not os.path.exists(REPO / ".venv" / "bin" / "activate"):
        pytest.skip("the quick start needs the project's .venv (make install)")
    script = "set -euo pipefail\n" + blocks["bash"]
    run = subprocess.run(["bash", "-c", script], cwd=root, env=env, capture_output=True, text=True)
    assert run.returncode == 0, f"quick start failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"

    q = root / "quickstart"
    n_test = sum(1 for _ in open(q / "data" / "test.en", encoding="utf-8"))
    assert n_test == 1000
    for scheme in ("spaces", "bite", "flota"):
        lines = (q / f"test.{scheme}.en").read_text(encoding="utf-8").splitlines()
        assert len(lines) == n_test, scheme
    assert (q / "ckpt" / "averaged.pt").stat().st_size > 0
    scores = (q / "eval" / "scores.json").read_text(encoding="utf-8")
    assert '"bleu"' in scores.lower()
    translation = run.stdout.strip().splitlines()[-1]
    assert translation and "▁" not in translation          # decoded text, not pieces

    py = subprocess.run([str(REPO / ".venv" / "bin" / "python"), "-c", blocks["python"]], cwd=root, env=env,
                        capture_output=True, text=True)
    assert py.returncode == 0, py.stderr[-3000:]
    assert py.stdout.strip(), "the hub example printed nothing"
