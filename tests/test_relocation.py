"""A moved or renamed output folder (or checkout) keeps its records: stage records name the folders by role
(train_scripts.demo.stages), and binarize.json's paths follow the folder it is in now (train_scripts.binarize.read_record).
The end-to-end case, a whole demo folder moved and resumed, is in test_pipeline.py."""
import json
import os

import pytest

from preprocess.common import UserError
from train_scripts.binarize import read_record
from train_scripts.demo.stages import Stages
from train_scripts.tools import map_paths, moved_root


def test_moved_root_takes_off_the_common_trailing_names():
    assert moved_root("/a/demo/schemes/x/binarized", "/b/moved/schemes/x/binarized") == ("/a/demo", "/b/moved")
    assert moved_root("/a/demo/bin", "/a/demo/bin2") == ("/a/demo/bin", "/a/demo/bin2")   # renamed in place
    assert moved_root("/a/demo/bin", "/a/demo/bin") is None


def test_map_paths_maps_whole_components_and_pathsep_lists_only():
    moves = [("/a/demo", "/b/m")]
    value = {"x": ["/a/demo/raw", "/a/demo", "/a/demo2/raw", "--opt", "/a/demo/s0:/a/demo/s1"], "n": 3}
    assert map_paths(value, moves) == {"x": ["/b/m/raw", "/b/m", "/a/demo2/raw", "--opt", "/b/m/s0:/b/m/s1"],
                                       "n": 3}


def _record(out, raw, **extra):
    info = {"out_dir": str(out), "tok_dir": str(out / "tok"), "raw_dir": str(raw), "data": f"{out}/data-bin",
            "generate_args": ["--bpe", "sentencepiece", "--sentencepiece-model", f"{out}/models/spm.model"],
            "shared": "/elsewhere/dict.txt", **extra}
    out.mkdir(parents=True)
    (out / "binarize.json").write_text(json.dumps(info))
    return info


def test_read_record_follows_a_moved_tree(tmp_path):
    old = tmp_path / "demo"
    info = _record(old / "schemes" / "x" / "binarized", old / "raw")
    assert read_record(str(old / "schemes" / "x" / "binarized")) == info   # not moved: as written
    os.rename(old, tmp_path / "moved")
    new = tmp_path / "moved"
    got = read_record(str(new / "schemes" / "x" / "binarized" / "binarize.json"))
    here = new / "schemes" / "x" / "binarized"
    assert got["tok_dir"] == str(here / "tok") and got["data"] == f"{here}/data-bin"
    assert got["raw_dir"] == str(new / "raw")   # beside the row, moved with the demo folder
    assert got["generate_args"][-1] == f"{here}/models/spm.model" and got["shared"] == "/elsewhere/dict.txt"


def test_read_record_of_an_older_record_uses_its_tok_dir(tmp_path):
    info = _record(tmp_path / "a" / "bin", tmp_path / "raw")
    del info["out_dir"]
    (tmp_path / "a" / "bin" / "binarize.json").write_text(json.dumps(info))
    os.rename(tmp_path / "a", tmp_path / "b")
    assert read_record(str(tmp_path / "b" / "bin"))["data"] == f"{tmp_path}/b/bin/data-bin"


def test_read_record_errors_are_one_line(tmp_path):
    with pytest.raises(UserError, match="no binarize.json at .*: give it"):
        read_record(str(tmp_path), "give it")
    (tmp_path / "binarize.json").write_text("{")
    with pytest.raises(UserError, match="cannot read"):
        read_record(str(tmp_path))
    (tmp_path / "binarize.json").write_text("[]")
    with pytest.raises(UserError, match="not a binarize.json record"):
        read_record(str(tmp_path))


def test_a_stage_done_in_a_moved_folder_stays_done_with_its_paths_placed(tmp_path):
    def stage(out):
        target = out / "work" / "model.pt"

        def run():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("m")
            return {"model": str(target), "n": 1}
        return Stages(out).run("row/train", [target], run, key=["train", str(out / "work"), "--seed", "1"])

    first = stage(tmp_path / "a")
    assert first == {"model": str(tmp_path / "a" / "work" / "model.pt"), "n": 1}
    record = (tmp_path / "a" / ".stages" / "row__train.json").read_text()
    assert str(tmp_path / "a") not in record.split('"key"')[0]   # the result is recorded by role
    os.rename(tmp_path / "a", tmp_path / "b")
    stages = Stages(tmp_path / "b")
    again = stages.run("row/train", [tmp_path / "b" / "work" / "model.pt"], lambda: pytest.fail("ran again"),
                       key=["train", str(tmp_path / "b" / "work"), "--seed", "1"])
    assert again == {"model": str(tmp_path / "b" / "work" / "model.pt"), "n": 1}
    assert stages.skipped == ["row/train"]


def test_a_record_written_before_the_roles_is_still_done_and_is_upgraded(tmp_path):
    """Records of an older version hold fingerprints of the absolute paths: such a folder resumes (no stage reruns
    once after an upgrade), and its records are rewritten by role, so the folder can then be moved."""
    import hashlib

    def old_fingerprint(key, after=()):   # the fingerprint as the older version computed it
        text = json.dumps({"key": key, "after": list(after)}, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    out = tmp_path / "a"
    (out / ".stages").mkdir(parents=True)
    (out / "raw").write_text("r")
    (out / "data").write_text("d")
    (out / "model").write_text("m")
    k1, k2 = ["prep", str(out / "data")], ["train", str(out / "model")]
    f1 = old_fingerprint(k1)
    # "noise": no path in its key (the same fingerprint then and now), a path in its result
    (out / ".stages" / "noise.json").write_text(json.dumps({"result": {"file": str(out / "raw")},
                                                            "fingerprint": old_fingerprint({"seed": 1}),
                                                            "key": {"seed": 1}}))
    for name, key, fp, result in (("data", k1, f1, {"n": 1}),
                                  ("train", k2, old_fingerprint(k2, [f1]), {"model": str(out / "model")})):
        (out / ".stages" / f"{name}.json").write_text(json.dumps({"result": result, "fingerprint": fp, "key": key}))
    stages = Stages(out)
    assert stages.run("data", [out / "data"], lambda: pytest.fail("ran again"), key=k1) == {"n": 1}
    assert stages.run("train", [out / "model"], lambda: pytest.fail("ran again"), key=k2,
                      after=("data",)) == {"model": str(out / "model")}
    assert Stages(out).run("noise", [out / "raw"], lambda: pytest.fail("ran again"),
                           key={"seed": 1}) == {"file": str(out / "raw")}
    assert '"$OUT/model"' in (out / ".stages" / "train.json").read_text()   # upgraded
    assert '"$OUT/raw"' in (out / ".stages" / "noise.json").read_text()
    os.rename(out, tmp_path / "b")
    new = tmp_path / "b"
    stages = Stages(new)
    stages.run("data", [new / "data"], lambda: pytest.fail("ran again"), key=["prep", str(new / "data")])
    assert stages.run("noise", [new / "raw"], lambda: pytest.fail("ran again"),
                      key={"seed": 1}) == {"file": str(new / "raw")}
    assert stages.run("train", [new / "model"], lambda: pytest.fail("ran again"), key=["train", str(new / "model")],
                      after=("data",)) == {"model": str(new / "model")}
