"""Every module of the three packages imports (``make test-fast`` runs this, so an import error anywhere, a
module no other fast test reaches included, fails the fast loop).  ``__main__`` modules are run only by ``-m``."""
from __future__ import annotations

import importlib

import pytest

from tests.conftest import REPO

MODULES = sorted(
    ".".join(p.relative_to(REPO).with_suffix("").parts[:-1] if p.name == "__init__.py"
             else p.relative_to(REPO).with_suffix("").parts)
    for package in ("preprocess", "fairseq_plugins", "train_scripts") for p in (REPO / package).rglob("*.py")
    if p.name != "__main__.py")


def test_every_package_module_is_listed():
    assert {"preprocess.registry", "preprocess.schemes.wordmap.hooks", "train_scripts.demo.pretraining.scheduler",
            "fairseq_plugins.bite"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_module_imports(module):
    importlib.import_module(module)
