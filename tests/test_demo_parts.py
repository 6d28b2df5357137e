"""A demo part is an interface (train_scripts/demo/part.py): a toy part in a folder of its own, added to the list
of parts (train_scripts/demo/parts.py, here through ``MORPHTOK_DEMO_PARTS``) without another edit to this project,
shows in ``--help``, the plan (``--dry-run``), the run's log and both formats of the one report, and reads its input
from ``--shared-data``; no part's folder imports another's; and the one ``--jobs`` policy every part gets."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from preprocess.common import REPO, UserError
from train_scripts.demo import main as demo_main
from train_scripts.demo import parts as demo_parts
from train_scripts.demo.part import jobs_and_threads

TOY = '''
"""A toy part of the demo: one option, one stage, one section."""
import argparse

from train_scripts.demo.part import Part
from train_scripts.demo.report_document import Para, Section, Table


class ToyPart(Part):
    name = "toy"
    title = "counts to --toy-n"
    shared_inputs = {"--toy-start": "toy/start.txt"}

    def add_options(self, group):
        group.add_argument("--toy-n", type=int, default=3, help="how far the toy part counts")
        group.add_argument("--toy-start", default=None, help="a file whose number is added to the sum")

    def settings(self, options):
        if options.toy_n < 0:
            from preprocess.common import UserError
            raise UserError("--toy-n must be at least 0")
        start = int(open(options.toy_start).read()) if options.toy_start else 0
        return argparse.Namespace(n=options.toy_n, start=start, device="cpu")

    def width(self, args):
        return 1

    def plan(self, args):
        return [f"python -c 'print(list(range({args.n})))'"]

    def run(self, args, ctx):
        out = ctx.folder / "count.txt"

        def count():
            ctx.runner.run("toy/count", ["python", "-c", f"print({args.start} + sum(range({args.n})))"],
                           ctx.folder / "count.log")
            out.write_text((ctx.folder / "count.log").read_text())
            return {"sum": int(out.read_text())}

        return {"count": ctx.stages.run("toy/count", [out], count, key={"n": args.n, "start": args.start}),
                "jobs": ctx.jobs}

    def sections(self, results, folder, relative=""):
        return [Section("Toy part", [Table([["n", "sum"], ["toy", str(results["count"]["sum"])]]),
                                     Para("The `toy` part counted.")])]


PART = ToyPart()
'''


@pytest.fixture
def toy_env(tmp_path):
    pkg = tmp_path / "toyparts"
    (pkg / "morphtok_toy_part").mkdir(parents=True)       # the part's own folder, nothing else
    (pkg / "morphtok_toy_part" / "__init__.py").write_text(textwrap.dedent(TOY))
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{pkg}", demo_parts.PARTS_ENV: "morphtok_toy_part"}
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

    listed = subprocess.run([sys.executable, "-m", "train_scripts.demo.parts"], env=toy_env, capture_output=True,
                            text=True, timeout=120)
    assert listed.returncode == 0 and listed.stdout.splitlines()[-1].startswith("toy\tmorphtok_toy_part\t")


def test_shared_data_reaches_each_parts_inputs_and_the_command_line_wins(toy_env, tmp_path):
    """``--shared-data DIR`` (``make demo SHARED=DIR``) sets a part's declared input (``Part.shared_inputs``) that
    the command line leaves unset; an option given on the command line wins; an optional input
    (``Part.optional_inputs``) is taken from DIR only when it is there."""
    shared = tmp_path / "shared"
    (shared / "toy").mkdir(parents=True)
    (shared / "toy" / "start.txt").write_text("100\n")
    out = tmp_path / "out"
    ran = demo(toy_env, "--part", "toy", "--toy-n", "5", "--shared-data", shared, "--output", out)
    assert ran.returncode == 0, ran.stderr
    assert json.loads((out / "toy" / "results.json").read_text())["count"] == {"sum": 110}
    own = tmp_path / "mine.txt"
    own.write_text("1000\n")
    ran = demo(toy_env, "--part", "toy", "--toy-n", "5", "--shared-data", shared, "--toy-start", own, "--output", out)
    assert ran.returncode == 0 and json.loads((out / "toy" / "results.json").read_text())["count"] == {"sum": 1010}

    all_parts = demo_parts.parts()
    ap = demo_main.build_parser(all_parts)
    empty = tmp_path / "empty"
    empty.mkdir()
    options = demo_main.parse(ap, ["--shared-data", str(empty)], all_parts)
    assert options.de_ud == empty / "german" / "ud_german_gsd"          # required: named, so the refusal names it
    assert options.data == ap.get_default("data")                     # optional (a download): the default kept
    assert demo_main.parse(ap, [], all_parts).de_ud == ap.get_default("de_ud")   # no --shared-data: the defaults


def test_no_part_imports_another_parts_folder_and_nothing_imports_the_entry_point():
    """A part's folder imports the shared modules, never another part's folder (what two parts share lives in a
    shared module or folder, e.g. the language-model pipeline in lm/, which imports no part); and no module but ``__main__.py`` imports the entry point (``main.py``): no circle through it."""
    import ast

    demo_dir = REPO / "train_scripts" / "demo"
    folders = {m.rsplit(".", 1)[1] for m in demo_parts.PARTS}
    packages = {d.name for d in demo_dir.iterdir() if (d / "__init__.py").exists()}
    assert folders <= packages and "lm" in packages - folders    # lm/: the pipeline two parts share, no part's
    for path in demo_dir.rglob("*.py"):
        own = path.relative_to(demo_dir).parts[0] if path.parent != demo_dir else None
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                for other in folders - {own}:
                    if own is not None:
                        assert not name.startswith(f"train_scripts.demo.{other}"), (str(path), name)
                if path.name != "__main__.py":
                    assert name != "train_scripts.demo.main", (str(path), name)


def test_a_part_setting_error_is_one_line_before_any_part_runs(toy_env, tmp_path):
    out = tmp_path / "out"
    bad = demo(toy_env, "--part", "toy", "--toy-n", "-1", "--output", out)
    assert bad.returncode == 2 and bad.stderr.strip() == "error: --toy-n must be at least 0"
    assert not out.exists()


def test_a_bad_parts_module_is_one_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), demo_parts.PARTS_ENV: "no_such_module_here"}
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

    shared = [p for p in (REPO / "train_scripts" / "demo").glob("*.py")
              if p.name not in ("main.py", "__main__.py", "parts.py")]   # the list of parts names them, as strings
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
    assert [h.split()[2] for h in heads] == [m.rsplit(".", 1)[1] for m in demo_parts.PARTS]
    assert all("about" in h for h in heads), heads
    assert any(x.startswith("# in all: about") for x in proc.stdout.splitlines()) and not out.exists()
