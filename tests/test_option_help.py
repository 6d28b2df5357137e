"""Every option of every console script has help text: the parsers each script builds for ``--help``,
its subcommands' included, are collected and their options without help listed."""
from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import sys

import pytest

from tests.conftest import console_scripts

SCRIPTS = console_scripts()


def parsers_of(name: str, module: str, monkeypatch) -> list[argparse.ArgumentParser]:
    """The argument parsers ``name --help`` builds (subcommand parsers included)."""
    built: list[argparse.ArgumentParser] = []
    init = argparse.ArgumentParser.__init__

    def recording_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        built.append(self)

    monkeypatch.setattr(argparse.ArgumentParser, "__init__", recording_init)
    monkeypatch.setattr(sys, "argv", [name, "--help"])
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            pytest.raises(SystemExit) as exit_:
        importlib.import_module(module).cli()
    assert exit_.value.code in (0, None), f"{name} --help exited with {exit_.value.code}"
    return built


def options_without_help(parser: argparse.ArgumentParser) -> list[str]:
    return [a.option_strings[0] for a in parser._actions
            if a.option_strings and not isinstance(a, argparse._HelpAction) and not (a.help or "").strip()]


def test_every_console_script_is_covered():
    assert {"morphtok-encode", "morphtok-wordmap", "morphtok-binarize", "morphtok-demo"} <= set(SCRIPTS)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_every_option_has_help(name, monkeypatch):
    parsers = parsers_of(name, SCRIPTS[name], monkeypatch)
    assert parsers, f"{name} --help built no argparse parser"
    missing = sorted({f"{p.prog} {o}" for p in parsers for o in options_without_help(p)})
    assert not missing, f"options without help: {missing}"
