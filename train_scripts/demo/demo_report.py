"""The demo's one report (``OUTPUT/REPORT.md`` and ``OUTPUT/report.html``): the sections of every part that has
results (``PART_FOLDER/results.json``), in the parts' order, then the run's versions and commands, rendered once by
``train_scripts/demo/report_document.py``.

    python -m train_scripts.demo.demo_report OUTPUT      # rewrite it from the results.json files, nothing rerun
                                                         # (each part's statistics recomputed first)
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Optional

from train_scripts.demo import provenance
from train_scripts.demo import report_document as document
from train_scripts.demo.parts import parts as demo_parts
from train_scripts.demo.report_document import Bullets, Code, Section

TITLE = "Tokenisation scheme comparison"


def _results(path: str) -> Optional[dict]:
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def part_results(outdir: str, parts: list) -> list:
    """``[(part, folder, results)]`` of every part whose ``results.json`` is there, in the parts' order."""
    from pathlib import Path

    found = []
    for part in parts:
        folder = str(part.folder(Path(outdir)))
        results = _results(os.path.join(folder, "results.json"))
        if results:
            found.append((part, folder, results))
    return found


def provenance_sections(found: list) -> list:
    """The software versions (the first part's run) and every part's commands: the report's last sections."""
    versions, commands = {}, []
    for part, _folder, results in found:
        p = part.provenance(results)
        versions = versions or p["versions"]
        commands += [c for c in p["commands"] if c not in commands]
    code = [f"{part.name}: {provenance.describe((results.get('meta') or {}).get('commits') or {})}"
            for part, _folder, results in found]
    return [Section("Versions", [Bullets([f"{k}: `{v}`" for k, v in sorted(versions.items())])] if versions else []),
            Section("Code", [Bullets(code)]), Section("Commands", [Code(commands)])]


def write(outdir: str, parts: list | None = None) -> Optional[dict]:
    """Write the report from every part's results (``parts``: default, the demo's); its paths, or None when no
    part has results."""
    if parts is None:
        parts = demo_parts()
    found = part_results(outdir, parts)
    sections = []
    for part, folder, results in found:
        relative = os.path.relpath(folder, outdir)
        sections += part.sections(results, folder, relative="" if relative == "." else relative)
    if not sections:
        return None
    return document.write(sections + provenance_sections(found), outdir, TITLE)


def refresh(outdir: str, parts: list) -> None:
    """Every part's results recomputed from what its run left (:meth:`Part.refresh`, e.g. the pretraining part's
    statistics and stage times after a change of its analysis code) and written back."""
    for part, folder, results in part_results(outdir, parts):
        with open(os.path.join(folder, "results.json"), "w", encoding="utf-8") as fh:
            json.dump(part.refresh(results, folder), fh, indent=1, default=str)


def main(argv=None) -> int:
    from preprocess.common import UserError

    ap = argparse.ArgumentParser(prog="python -m train_scripts.demo.demo_report",
                                 description="Rewrite the demo's REPORT.md and report.html from the parts' results, "
                                             "nothing rerun")
    ap.add_argument("output", help="the demo's --output folder")
    args = ap.parse_args(argv)
    refresh(args.output, demo_parts())
    paths = write(args.output)
    if paths is None:
        raise UserError(f"no part's results.json in {args.output}: run morphtok-demo --output {args.output} first")
    print(f"{paths['markdown']} {paths['html']}")
    return 0


if __name__ == "__main__":
    from preprocess.cli import run_main

    sys.exit(run_main(main))
