"""The demo's parts: the one list that the entry point (``main.py``), the report (``demo_report.py``), the
Makefile's data folder (``--shared-data``) and the tests read.

A part is a module (a folder of its own under ``train_scripts/demo/``, or any importable module) whose ``PART`` is a
:class:`~train_scripts.demo.part.Part`.  :data:`PARTS` are this project's, in the order they run and report; the
modules named in ``MORPHTOK_DEMO_PARTS`` (comma-separated) come after them.  Adding a part is its folder and one
entry here: its options, plan, stages, results, report sections and inputs under ``--shared-data`` (its
``Part.shared_inputs``) come from the part itself.

    python -m train_scripts.demo.parts       # the parts, one per line: NAME MODULE TITLE
"""
from __future__ import annotations

import importlib
import os
import sys

from preprocess.common import UserError
from train_scripts.demo.part import Part

#: the demo's parts, in the order they run and report (modules whose ``PART`` is a :class:`Part`)
PARTS = ("train_scripts.demo.translation", "train_scripts.demo.pretraining", "train_scripts.demo.german")
#: more parts, from outside this project (module names, comma-separated): each module's ``PART``
PARTS_ENV = "MORPHTOK_DEMO_PARTS"


def modules() -> list[str]:
    """Every part's module, in order: :data:`PARTS`, then those of ``MORPHTOK_DEMO_PARTS`` (each once)."""
    extra = [m.strip() for m in os.environ.get(PARTS_ENV, "").split(",") if m.strip()]
    return list(dict.fromkeys([*PARTS, *extra]))


def parts() -> list[Part]:
    """Every part, in order (:func:`modules`); a module without a ``PART`` is one line (``UserError``)."""
    out = []
    for module in modules():
        try:
            part = importlib.import_module(module).PART
        except (ImportError, AttributeError) as exc:
            raise UserError(f"{PARTS_ENV}: {module} has no demo part ({exc})") from exc
        if not isinstance(part, Part):
            raise UserError(f"{PARTS_ENV}: {module}.PART is not a train_scripts.demo.part.Part")
        out.append(part)
    return out


def main(argv=None) -> int:
    for module, part in zip(modules(), parts()):
        print(part.name, module, part.title, sep="\t")
    return 0


if __name__ == "__main__":
    from preprocess.cli import run_main

    sys.exit(run_main(main))
