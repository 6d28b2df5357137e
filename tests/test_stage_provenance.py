"""A stage's record knows the code it ran and the contents of its inputs (train_scripts/demo/provenance.py): a resume
re-runs a stage whose code or inputs changed, says why, and re-runs the stages that depend on it and no other; the
report names the commit the stages ran at and flags a mix."""
from __future__ import annotations

import json

import pytest

from train_scripts.demo import provenance
from train_scripts.demo.stages import Stages


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A project of three modules (a imports b; c alone) that the digests read instead of this checkout."""
    root = tmp_path / "repo"
    pkg = root / "train_scripts"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from train_scripts import b\n")
    (pkg / "b.py").write_text("X = 1\n")
    (pkg / "c.py").write_text("Y = 1\n")
    monkeypatch.setattr(provenance, "REPO", root)
    for cached in (provenance.module_closure, provenance._imports):
        cached.cache_clear()
    yield root
    for cached in (provenance.module_closure, provenance._imports):
        cached.cache_clear()


def _run_all(out, stages_ran, inputs):
    stages = Stages(out)

    def step(name):
        def fn():
            stages_ran.append(name)
            (out / name).write_text(name)
            return {"name": name}
        return fn

    stages.run("s1", [out / "s1"], step("s1"), key=["python", "-m", "train_scripts.a"])
    stages.run("s2", [out / "s2"], step("s2"), key=["python", "-m", "train_scripts.c"], after=("s1",))
    stages.run("s3", [out / "s3"], step("s3"), key=["python", "-m", "train_scripts.c"])
    stages.run("s4", [out / "s4"], step("s4"), key=["python", "-m", "train_scripts.c", "--data", str(inputs)])
    return stages


def test_a_change_of_code_or_input_reruns_that_stage_and_its_dependents_only(repo, tmp_path, capfd):
    out = tmp_path / "out"
    out.mkdir()
    data = tmp_path / "data.txt"
    data.write_text("one\n")
    ran = []
    _run_all(out, ran, data)
    assert ran == ["s1", "s2", "s3", "s4"]
    ran.clear()
    _run_all(out, ran, data)
    assert ran == []                                   # nothing changed: every stage skipped

    (repo / "train_scripts" / "b.py").write_text("X = 2  # an imported module of s1's command changed\n")
    capfd.readouterr()
    _run_all(out, ran, data)
    assert ran == ["s1", "s2"]                         # s1 and what depends on it; s3, s4 run the other module
    assert "[rerun] s1: its code changed" in capfd.readouterr().err

    ran.clear()
    data.write_text("two\n")                           # the same path, other contents
    _run_all(out, ran, data)
    assert ran == ["s4"]
    assert "[rerun] s4: the contents of its inputs changed" in capfd.readouterr().err


def test_an_in_process_stage_is_tied_to_the_code_of_its_module(repo, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    ran = []

    def run():
        return Stages(out).run("data", [], lambda: ran.append(1) or {}, key={"words": 10}, code=("train_scripts.a",))

    run()
    run()
    assert ran == [1]
    (repo / "train_scripts" / "b.py").write_text("X = 3\n")
    run()
    assert ran == [1, 1]


def test_records_store_digests_and_commit_and_an_older_record_is_taken_once(tmp_path):
    out = tmp_path / "out"
    stages = Stages(out)
    stages.run("a", [], lambda: {"n": 1}, key=["python", "-m", "train_scripts.binarize", "--x", "1"])
    record = json.loads((out / ".stages" / "a.json").read_text())
    assert record["code"] and len(record["code"]) == 16 and record["commit"]
    assert stages.commits == {"a": record["commit"]}

    # a record as written before the digests: the fingerprint of key and upstream stages only
    old = {k: v for k, v in record.items() if k not in ("code", "inputs", "commit")}
    old["fingerprint"] = _older_fingerprint(out, record["key"])
    (out / ".stages" / "a.json").write_text(json.dumps(old))
    again = Stages(out)
    assert again.run("a", [], lambda: pytest.fail("ran again"), key=record["key"]) == {"n": 1}
    assert again.commits == {"a": "unknown"}
    upgraded = json.loads((out / ".stages" / "a.json").read_text())
    assert upgraded["code"] == record["code"] and upgraded["commit"] == "unknown"


def _older_fingerprint(out, key):
    """The fingerprint as records held it before the digests: the key (folders by role) and no upstream stage."""
    from train_scripts.demo.stages import _fingerprint, portable

    return _fingerprint({"key": portable(key, Stages(out).roots), "after": []})


def test_the_report_names_the_commit_and_flags_a_mix():
    assert provenance.describe({"abc123": 12}) == "All 12 stage(s) ran at commit `abc123`."
    mixed = provenance.describe({"abc123": 10, "def456+changes": 2})
    assert mixed.startswith("**A mix**") and "`abc123` (10), `def456+changes` (2)" in mixed
    assert "no commit" in provenance.describe({})
    assert provenance.label({"commit": "abc", "clean": False}) == "abc+changes"
    assert provenance.label({"commit": None, "clean": None}) == "unknown"


def test_code_of_a_recipe_covers_what_it_sources_and_runs():
    from preprocess.common import REPO

    files = provenance.code_files(["bash", str(REPO / "train_scripts" / "pretrain_roberta.sh"), "--data", "x"])
    names = {p.name for p in files}
    assert {"pretrain_roberta.sh", "common.sh"} <= names
    assert any(p.parent.name == "fairseq_plugins" or "fairseq_plugins" in p.parts for p in files)
    # a command that reaches the scheme registry runs any scheme: every scheme's package counts
    binarize = provenance.code_files(["python", "-m", "train_scripts.binarize", "--scheme", "wordmap"])
    assert any(p.parent.name == "wordmap" and "schemes" in p.parts for p in binarize)
