"""Every console script of setup.py answers ``--help`` (each one smoke-tested; real invocations of the
tools are in their own test files, e.g. test_metrics_cli.py)."""
from __future__ import annotations

import pytest

from conftest import console_scripts

SCRIPTS = console_scripts()


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_help(script, run_cli):
    proc = run_cli([script, "--help"])
    assert proc.stdout.lstrip().startswith("usage:") and not proc.stderr.strip(), proc.stderr[-2000:]
