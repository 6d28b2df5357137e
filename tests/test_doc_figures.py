"""Every measured figure in the manual is tied to its run's record (scripts/doc_figures.py): a figure with a marker
agrees with the record it names, a measured-looking figure on README.md or docs/ without one fails, and a planned
time is the plan the code computes."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
import doc_figures  # noqa: E402


def test_every_figure_agrees_with_its_record():
    problems = doc_figures.check()
    assert not problems, "\n".join(problems)


@pytest.fixture
def planted(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "2026-01-01-run.json").write_text(json.dumps({
        "run": "a planted run", "date": "2026-01-01", "commit": "0000000", "machine": "2 cores, idle",
        "source": "this test", "figures": {"minutes": 16.4, "tests": {"passed": 1426}, "gain": 0.158}}))
    records = doc_figures.Records(folder)

    def problems(text: str, manual: bool = True) -> list:
        page = tmp_path / "page.md"
        page.write_text(text, encoding="utf-8")
        return [p.split(": ", 1)[1] for p in doc_figures.check_page(page, records, manual)]
    return problems


def test_a_planted_disagreement_is_found(planted):
    assert planted("took 16<!--fig:2026-01-01-run:minutes--> minutes, 1,426<!--fig:2026-01-01-run:tests.passed--> "
                   "tests, +0.16<!--fig:2026-01-01-run:gain--> and 0.158<!--fig:2026-01-01-run:gain-->\n") == []
    assert planted("took 17<!--fig:2026-01-01-run:minutes--> minutes\n") == [
        "17 disagrees with its record 2026-01-01-run:minutes = 16.4"]
    assert planted("took 16.5<!--fig:2026-01-01-run:minutes--> minutes\n") == [
        "16.5 disagrees with its record 2026-01-01-run:minutes = 16.4"]
    assert planted("16<!--fig:2026-01-01-run:minutes-->-16.4<!--fig:2026-01-01-run:minutes--> min\n") == []  # a range
    assert planted("16-17<!--fig:2026-01-01-run:minutes--> min\n") == [
        "17 disagrees with its record 2026-01-01-run:minutes = 16.4"]
    assert planted("1,425<!--fig:2026-01-01-run:tests.passed--> passed\n") == [
        "1,425 disagrees with its record 2026-01-01-run:tests.passed = 1426"]


def test_a_figure_without_a_record_is_found(planted):
    assert planted("`make test` took 35 minutes and ran 1,292 tests, 1.8x faster, 4-5 s\n") == [
        f"{f} has no record (a marker <!--fig:RECORD:KEY-->, or <!--setting--> for a setting)"
        for f in ("35 minutes", "1,292 tests", "1.8x", "5 s")]
    assert planted("jobs time out after 90<!--setting--> minutes; `--time 30 min`\n```\n120 s\n```\n") == []
    assert planted("35 minutes\n", manual=False) == []       # a dated results page: its figures are its output
    assert planted("16<!--fig:2026-01-01-run:minute--> min, 16<!--fig:2026-01-02-run:minutes--> min\n") == [
        "16 names 2026-01-01-run:minute, which has no key minute",
        "16 names 2026-01-02-run:minutes, which has no record 2026-01-02-run (FileNotFoundError)"]
    assert planted("took 16 <!--fig:2026-01-01-run:minutes--> minutes\n") == [
        "marker <!--fig:2026-01-01-run:minutes--> does not follow a figure directly"]


def test_the_plan_record_is_what_the_dry_run_prints(tmp_path):
    plan = doc_figures.planned_minutes()
    for name, options in doc_figures.PRESETS.items():
        run = subprocess.run([sys.executable, "-m", "train_scripts.demo.main", "--dry-run", "--output",
                              str(tmp_path / "out"), *options], cwd=REPO, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        total = next(line for line in run.stdout.splitlines() if line.startswith("# in all: about "))
        assert total == f"# in all: about {plan[name]['all']:.0f} min", (name, total)
        assert not (tmp_path / "out").exists()
        if name == "default":    # docs/demo.md shows the default plan's lines as the dry run prints them
            shown = re.search(r"^```text\n(# the translation part:.*?)^```", (REPO / "docs" / "demo.md").read_text(
                encoding="utf-8"), re.S | re.M).group(1).splitlines()
            assert shown == [line for line in run.stdout.splitlines()
                             if re.match(r"# the \w+ part: |# in all: ", line)]


def test_a_demo_record_holds_each_parts_minutes_and_results_digest(tmp_path):
    out = tmp_path / "out"
    for folder, seconds in ((out, 90.0), (out / "german", 30.0)):     # translation's folder is the output's own
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "results.json").write_text(json.dumps(
            {"score": 1.5, "path": str(folder), "meta": {"seconds": seconds, "date": "2026-01-01 10:00 UTC",
                                                         "load": [0.1, 0.2, 0.3], "commits": {"abc1234": 3}}}))
    record = doc_figures.record_of_demo(out, "morphtok-demo --part translation german")
    figures = record["figures"]
    assert set(figures) == {"translation", "german", "all"}
    assert (figures["translation"]["minutes"], figures["german"]["minutes"], figures["all"]["minutes"]) == (1.5, 0.5, 2.0)
    assert figures["translation"]["results_sha256"] != figures["german"]["results_sha256"]
    assert record["commit"] == "abc1234" and record["date"] == "2026-01-01 10:00 UTC"
    assert record["machine"].endswith("translation 0.10 0.20 0.30; german 0.10 0.20 0.30")
