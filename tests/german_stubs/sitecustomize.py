"""Test stubs of the two measures the German part calls that are not on main yet (issue 59, items 4a and 4b), by
their contract: on ``PYTHONPATH`` (``tests/test_german_demo.py``'s end-to-end test), this finder serves
``train_scripts.agreement`` from ``stub_agreement.py`` where the real module is missing, and
``train_scripts.pseudo_perplexity`` from ``stub_pseudo_perplexity.py`` where the real one has no ``--whole-words``.
Once the real commands land, nothing here takes effect."""
import importlib.abc
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _real_path(name):
    for entry in sys.path:
        path = os.path.join(entry, *name.split(".")) + ".py"
        if entry != HERE and os.path.isfile(path):
            return path
    return None


def _needs_stub(name):
    real = _real_path(name)
    if name == "train_scripts.agreement":
        return real is None
    if name == "train_scripts.pseudo_perplexity":
        return real is not None and "--whole-words" not in open(real, encoding="utf-8").read()
    return False


class _StubFinder(importlib.abc.MetaPathFinder):
    STUBS = {"train_scripts.agreement": "stub_agreement.py",
             "train_scripts.pseudo_perplexity": "stub_pseudo_perplexity.py"}

    def find_spec(self, name, path=None, target=None):
        if name in self.STUBS and _needs_stub(name):
            return importlib.util.spec_from_file_location(name, os.path.join(HERE, self.STUBS[name]))
        return None


sys.meta_path.insert(0, _StubFinder())
