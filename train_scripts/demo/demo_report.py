"""The demo's one report (``OUTPUT/REPORT.md`` and ``OUTPUT/report.html``): the sections of every part that has
results, in the parts' order, then the run's versions and commands, rendered once by
``train_scripts/demo/report_document.py``.

    python -m train_scripts.demo.demo_report OUTPUT      # rewrite it (and the pretraining part's statistics and own
                                                    # report) from the results.json files, nothing rerun
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Optional

from train_scripts.demo import report_document as document


def _results(path: str) -> Optional[dict]:
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def write(outdir: str) -> Optional[dict]:
    """Write the report from ``OUTPUT/results.json`` (the translation part) and ``OUTPUT/pretraining/
    results.json`` (the pretraining part), whichever exist; their paths, or None when neither does."""
    from train_scripts.demo import lm_report, report

    sections, meta = [], {}
    translation = _results(os.path.join(outdir, "results.json"))
    if translation:
        sections += report.sections(translation, outdir)
        meta = translation.get("meta") or {}
    part = os.path.join(outdir, "pretraining")
    pretraining = _results(os.path.join(part, "results.json"))
    if pretraining:
        sections += lm_report.sections(pretraining, part, relative="pretraining")
    if not sections:
        return None
    if translation:
        sections += report.provenance_sections(meta)
    return document.write(sections, outdir, "Tokenisation scheme comparison")


def refresh_pretraining(outdir: str) -> None:
    """The pretraining part's statistics and stage times recomputed from its results and stage records, and its
    own REPORT.md and report.html rewritten (after a change of the analysis or report code)."""
    from pathlib import Path

    from train_scripts.demo import lm_report
    from train_scripts.demo.lm_scheduler import stage_seconds

    part = os.path.join(outdir, "pretraining")
    results = _results(os.path.join(part, "results.json"))
    if results is None:
        return
    results["analysis"] = lm_report.analyse(results)
    results["meta"]["stage_seconds"] = stage_seconds(Path(part) / ".stages")
    with open(os.path.join(part, "results.json"), "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=1, default=str)
    lm_report.write_report(results, part)


def main(argv=None) -> int:
    from preprocess.common import UserError

    ap = argparse.ArgumentParser(prog="python -m train_scripts.demo.demo_report",
                                 description="Rewrite the demo's REPORT.md and report.html (and the pretraining "
                                             "part's own) from the parts' results, nothing rerun")
    ap.add_argument("output", help="the demo's --output folder")
    args = ap.parse_args(argv)
    refresh_pretraining(args.output)
    paths = write(args.output)
    if paths is None:
        raise UserError(f"no results.json in {args.output} or {os.path.join(args.output, 'pretraining')}: run "
                        f"morphtok-demo --output {args.output} first")
    print(f"{paths['markdown']} {paths['html']}")
    return 0


if __name__ == "__main__":
    from preprocess.cli import run_main

    sys.exit(run_main(main))
