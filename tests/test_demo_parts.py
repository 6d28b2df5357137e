"""A demo part is an interface (train_scripts/demo/part.py): a toy part in a file of its own, found through
``MORPHTOK_DEMO_PARTS`` without an edit to this project, shows in ``--help``, the plan (``--dry-run``), the run's log
and both formats of the one report; and the one ``--jobs`` policy every part gets."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from preprocess.common import REPO, UserError
from train_scripts.demo import main as demo_main
from train_scripts.demo.part import jobs_and_threads

TOY = '''
"""A toy part of the demo: one option, one stage, one section."""
import argparse

from train_scripts.demo.part import Part
from train_scripts.demo.report_document import Para, Section, Table


class ToyPart(Part):
    name = "toy"
    title = "counts to --toy-n"

    def add_options(self, group):
        group.add_argument("--toy-n", type=int, default=3, help="how far the toy part counts")

    def settings(self, options):
        if options.toy_n < 0:
            from preprocess.common import UserError
            raise UserError("--toy-n must be at least 0")
        return argparse.Namespace(n=options.toy_n, device="cpu")

    def width(self, args):
        return 1

    def plan(self, args):
        return [f"python -c 'print(list(range({args.n})))'"]

    def run(self, args, ctx):
        out = ctx.folder / "count.txt"

        def count():
            ctx.runner.run("toy/count", ["python", "-c", f"print(sum(range({args.n})))"], ctx.folder / "count.log")
            out.write_text((ctx.folder / "count.log").read_text())
            return {"sum": int(out.read_text())}

        return {"count": ctx.stages.run("toy/count", [out], count, key={"n": args.n}), "jobs": ctx.jobs}

    def sections(self, results, folder, relative=""):
        return [Section("Toy part", [Table([["n", "sum"], ["toy", str(results["count"]["sum"])]]),
                                     Para("The `toy` part counted.")])]


PART = ToyPart()
'''


@pytest.fixture
def toy_env(tmp_path):
    pkg = tmp_path / "toyparts"
    pkg.mkdir()
    (pkg / "morphtok_toy_part.py").write_text(textwrap.dedent(TOY))
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{pkg}", demo_main.PARTS_ENV: "morphtok_toy_part"}
    return env


def demo(env, *args, cwd=None):
    return subprocess.run([sys.executable, "-m", "train_scripts.demo.main", *map(str, args)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_a_toy_part_in_its_own_file_is_in_help_plan_log_and_both_reports(toy_env, tmp_path):
    helped = demo(toy_env, "--help")
    assert helped.returncode == 0, helped.stderr
    assert "--toy-n" in helped.stdout and "the toy part (--part toy or all): counts to --toy-n" in helped.stdout
    assert ",toy}" in helped.stdout.replace(" ", "").replace("\n", "").split("[--part")[1].split("[")[0]

    out = tmp_path / "out"
    plan = demo(toy_env, "--part", "toy", "--toy-n", "5", "--output", out, "--dry-run")
    assert plan.returncode == 0, plan.stderr
    assert "# === the toy part: counts to --toy-n" in plan.stdout and "range(5)" in plan.stdout
    assert not out.exists()                              # a dry run creates nothing

    ran = demo(toy_env, "--part", "toy", "--toy-n", "5", "--output", out)
    assert ran.returncode == 0, ran.stderr
    assert "[run ] toy/count" in ran.stderr and "[done] toy/count" in ran.stderr
    assert ran.stderr.index("# the toy part:") < ran.stderr.index("[run ] toy/count")   # the plan comes first
    results = json.loads((out / "toy" / "results.json").read_text())
    assert results["count"] == {"sum": 10} and results["jobs"] == 1      # its width: one command at a time
    assert results["meta"]["versions"] and results["meta"]["command"].startswith("morphtok-demo --part toy")
    md = (out / "REPORT.md").read_text(encoding="utf-8")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "## Toy part\n\n| n | sum |\n|---|---:|\n| toy | 10 |\n\nThe `toy` part counted." in md
    assert md.index("## Toy part") < md.index("## Commands")           # provenance stays last
    assert "<h2>Toy part</h2>" in page and "<p>The <code>toy</code> part counted.</p>" in page

    again = demo(toy_env, "--part", "toy", "--toy-n", "5", "--output", out)   # resumed: the stage is skipped
    assert again.returncode == 0 and "[skip] toy/count" in again.stderr


def test_a_part_setting_error_is_one_line_before_any_part_runs(toy_env, tmp_path):
    out = tmp_path / "out"
    bad = demo(toy_env, "--part", "toy", "--toy-n", "-1", "--output", out)
    assert bad.returncode == 2 and bad.stderr.strip() == "error: --toy-n must be at least 0"
    assert not out.exists()


def test_a_bad_parts_module_is_one_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), demo_main.PARTS_ENV: "no_such_module_here"}
    proc = demo(env, "--help")
    assert proc.returncode != 0 and "MORPHTOK_DEMO_PARTS: no_such_module_here has no demo part" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_one_jobs_policy_for_every_part(monkeypatch):
    monkeypatch.setattr("train_scripts.demo.part.cores", lambda: 2)
    assert jobs_and_threads(None, None, "cpu", 5) == (2, 1)          # one command per core ...
    assert jobs_and_threads(None, None, "cpu", 1) == (1, 2)          # ... but no more than the part can run
    assert jobs_and_threads(None, None, "gpu", 5) == (1, 2)          # one at a time on a GPU
    assert jobs_and_threads(3, None, "cpu", 5) == (3, 1) and jobs_and_threads(1, 4, "cpu", 5) == (1, 4)
    with pytest.raises(UserError, match="at least 1"):
        jobs_and_threads(0, None, "cpu", 5)


def test_the_shared_modules_import_no_part():
    """What every part shares (train_scripts/demo/*.py but the entry point) imports no part's folder."""
    import ast

    shared = [p for p in (REPO / "train_scripts" / "demo").glob("*.py") if p.name not in ("main.py", "__main__.py")]
    assert {p.name for p in shared} >= {"part.py", "stages.py", "rows.py", "statistics.py", "report_document.py"}
    parts = {d.name for d in (REPO / "train_scripts" / "demo").iterdir() if (d / "__init__.py").exists()}
    for path in shared:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert not any(name.startswith(f"train_scripts.demo.{part}") for part in parts), (path.name, name)


def test_the_plan_and_the_time_left(tmp_path):
    """A part's plan says its stages by kind, how many run at once and the time; after each stage the log says how
    many are left and the time left; a stage recorded by an earlier run counts nothing."""
    from train_scripts.demo import estimate

    costs = estimate.costs_from([("a/train", "train"), ("b/train", "train"), ("report", "report")],
                                {"train": 600, "report": 60})
    assert estimate.wall(costs, 2) == pytest.approx(630)
    lines = estimate.plan_lines("toy", costs, 2, 1, "cpu")
    assert lines[0] == ("# the toy part: 3 stages (3 to run), 2 command(s) at a time with 1 torch thread(s) each; "
                        "about 10 min")
    assert "train x2 (~10 min each), report x1 (~60 s each)" in lines[1]
    progress = estimate.Progress(costs, 2)
    assert progress.done("a/train") == " - 2 stage(s) left, about 6 min at 2 at a time"   # 660 s / 2
    assert progress.done("not/planned") == ""
    assert progress.done("b/train") == " - 1 stage(s) left, about 30 s at 2 at a time"
    assert progress.done("report") == " - the part's last stage"
    records = tmp_path / ".stages"
    records.mkdir()
    (records / "a__train.json").write_text(json.dumps({"seconds": 580.0}))
    assert estimate.wall(costs, 2, records) == pytest.approx(330)       # a resumed run: a/train is done
    assert "(2 to run)" in estimate.plan_lines("toy", costs, 2, 1, "cpu", records)[0]
    unknown = estimate.costs_from([("a", "x")], None)
    assert estimate.wall(unknown, 2) is None and "no estimate" in estimate.plan_lines("toy", unknown, 2, 1, "gpu")[0]


def test_every_part_plans_its_stages_with_figures_for_the_default_presets(tmp_path):
    """The default run's dry run states each part's stages and a time, and the total."""
    out = tmp_path / "o"
    proc = demo({**os.environ, "PYTHONPATH": str(REPO)}, "--dry-run", "--output", out)
    assert proc.returncode == 0, proc.stderr
    heads = [x for x in proc.stdout.splitlines() if x.startswith("# the ") and " part: " in x and "stages" in x]
    assert [h.split()[2] for h in heads] == ["translation", "pretraining", "german"]
    assert all("about" in h for h in heads), heads
    assert any(x.startswith("# in all: about") for x in proc.stdout.splitlines()) and not out.exists()
