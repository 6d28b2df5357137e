"""Every console script of setup.py answers ``--help`` (issue 29: each one smoke-tested; real invocations of the
tools are in their own test files, e.g. test_metrics_cli.py)."""
from __future__ import annotations

import ast

import pytest

from conftest import REPO


def console_scripts() -> dict:
    tree = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "CONSOLE_SCRIPTS":
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py has no CONSOLE_SCRIPTS")


SCRIPTS = console_scripts()


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_help(script, run_cli):
    proc = run_cli([script, "--help"])
    assert proc.stdout.lstrip().startswith("usage:") and not proc.stderr.strip(), proc.stderr[-2000:]
