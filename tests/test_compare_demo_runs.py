"""scripts/compare_demo_runs.py: two demo output folders' results.json value for value, meta, timings and the
folders' own paths left out; a planted difference is found and named, a part missing on one side is a difference."""
from __future__ import annotations

import json
import subprocess
import sys

from preprocess.common import REPO
from train_scripts.demo.parts import parts

SCRIPT = REPO / "scripts" / "compare_demo_runs.py"


def write_run(out, results_of):
    """A finished demo's output folder: each part's results.json under the folder its part uses."""
    for part in parts():
        if part.name in results_of:
            folder = part.folder(out)
            folder.mkdir(parents=True, exist_ok=True)
            body = dict(results_of[part.name], meta={"seconds": 1.0, "date": str(out)},
                        model=str(folder / "model.pt"),
                        # timings, which depend on the machine: other in every run, left out
                        rows=[{"seconds": len(str(out)) / 7, "train_cpu_seconds": len(str(out)) / 3,
                               "updates_per_cpu_second": 3 / len(str(out)), "bleu": 20.0}])
            (folder / "results.json").write_text(json.dumps(body))


def compare(a, b, *extra):
    return subprocess.run([sys.executable, str(SCRIPT), str(a), str(b), *extra], capture_output=True, text=True)


def test_the_same_results_on_two_machines_agree_and_a_planted_difference_is_named(tmp_path):
    names = [p.name for p in parts()]
    results = {name: {"bleu": {"bpe": 20.25, "unigram": 19.5}, "n": [1, 2, 3]} for name in names}
    write_run(tmp_path / "a", results)
    write_run(tmp_path / "bb", results)           # other meta, paths and timings: the same results
    same = compare(tmp_path / "a", tmp_path / "bb")
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.splitlines()[-1] == (f"{len(names)} part(s), {len(names) * 6} numbers compared "
                                            f"({len(names) * 3} timings left out): the same")

    planted = json.loads(json.dumps(results))
    planted[names[0]]["bleu"]["unigram"] = 19.51
    write_run(tmp_path / "c", planted)
    differ = compare(tmp_path / "a", tmp_path / "c")
    assert differ.returncode == 1
    assert f"{names[0]}.bleu.unigram: 19.5 != 19.51" in differ.stdout
    assert compare(tmp_path / "a", tmp_path / "c", "--tolerance", "0.02").returncode == 0


def test_a_part_missing_on_one_side_differs_and_an_empty_folder_is_an_error(tmp_path):
    names = [p.name for p in parts()]
    write_run(tmp_path / "a", {n: {"x": 1} for n in names})
    write_run(tmp_path / "b", {n: {"x": 1} for n in names[1:]})
    missing = compare(tmp_path / "a", tmp_path / "b")
    assert missing.returncode == 1 and names[0] in missing.stdout
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty2").mkdir()
    empty = compare(tmp_path / "empty", tmp_path / "empty2")
    assert empty.returncode == 2 and empty.stderr.startswith("error: ")
    assert compare(tmp_path / "a", tmp_path / "nowhere").returncode == 2
