"""The command reference (docs/reference/commands.md) is generated from the parsers themselves by
scripts/gen_command_reference.py: it fails here when the page is stale (an option added, changed or removed without
regenerating), and every console script of setup.py and every shell recipe has its section.

Regenerate with ``python scripts/gen_command_reference.py``."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO, console_scripts

GENERATOR = REPO / "scripts" / "gen_command_reference.py"
PAGE = REPO / "docs" / "reference" / "commands.md"


def generator():
    """The generator as a module (its pure functions only: no parser is built in this process)."""
    spec = importlib.util.spec_from_file_location("gen_command_reference", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module



def test_the_page_is_current():
    recorded = re.search(r"argparse of Python (\d+\.\d+)", PAGE.read_text(encoding="utf-8")).group(1)
    if recorded != "%d.%d" % sys.version_info[:2]:
        pytest.skip(f"the page was generated with Python {recorded}'s argparse, which lays the help out differently")
    # a fresh process: no parser patched, no scheme registered by another test, the user's COLUMNS ignored
    env = {k: v for k, v in os.environ.items() if k not in ("MORPHTOK_SCHEMES", "COLUMNS")}
    env["PYTHONPATH"] = f"{REPO}{os.pathsep}{env.get('PYTHONPATH', '')}"
    proc = subprocess.run([sys.executable, str(GENERATOR), "--check"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-6000:]


def test_every_console_script_and_recipe_has_a_section():
    headings = {line[3:].strip() for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("## ")}
    recipes = {f"train_scripts/{p.name}" for p in (REPO / "train_scripts").glob("*.sh") if p.name != "common.sh"}
    missing = (set(console_scripts()) | recipes) - headings
    assert not missing, f"not in docs/reference/commands.md: {sorted(missing)}"


def test_check_names_the_stale_sections():
    gen = generator()
    page = PAGE.read_text(encoding="utf-8")
    assert gen.differences(page, page) == []
    stale = page.replace("  --workers WORKERS     processes for encoding and fairseq-preprocess",
                         "  --workers WORKERS     processes", 1)
    assert stale != page, "the test's sample option is no longer on the page: pick another"
    assert gen.differences(page, stale) == ["out of date: morphtok-binarize"]
    without = page.replace("\n## morphtok-report\n", "\n", 1)
    assert "missing section: morphtok-report" in gen.differences(page, without)


def test_check_exits_1_on_a_stale_page(tmp_path):
    gen = generator()
    stale = tmp_path / "commands.md"
    stale.write_text("# Command reference\n\n## morphtok-old\n", encoding="utf-8")
    gen.render = lambda: PAGE.read_text(encoding="utf-8")   # the page as generated, without building parsers
    assert gen.main(["--check", "--page", str(stale)]) == 1
    assert gen.main(["--check", "--page", str(PAGE)]) == 0
