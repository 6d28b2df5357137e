"""The demo's one language-model pipeline (train_scripts/demo/lm/): its typed settings refuse a missing field,
the two parts that run it import neither each other nor are imported by it, and the pretraining part's FLOTA
random-weight control is planned (and shown by the dry run) for every segmentation and seed."""
import ast
import dataclasses
import shlex

import pytest

from tests.conftest import REPO
from train_scripts.demo.lm.plan import STANDARD, Settings, Task
from train_scripts.demo.main import build_parser
from train_scripts.demo.pretraining import PART as LM_PART
from train_scripts.demo.pretraining.plan import flota_encodings, plan_of

DEMO = REPO / "train_scripts" / "demo"


def _imports(folder) -> dict:
    """Every module each .py file under ``folder`` imports (absolute names; ``from X import Y`` also as X.Y)."""
    out = {}
    for path in sorted(folder.rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        out[path.relative_to(REPO).as_posix()] = names
    return out


def _reaching(imports: dict, package: str) -> list:
    return [f"{path}: {name}" for path, names in imports.items() for name in sorted(names)
            if name == package or name.startswith(package + ".")]


def test_neither_part_imports_the_other_and_the_pipeline_imports_no_part():
    assert not _reaching(_imports(DEMO / "german"), "train_scripts.demo.pretraining")
    assert not _reaching(_imports(DEMO / "pretraining"), "train_scripts.demo.german")
    lm = _imports(DEMO / "lm")
    assert lm, "the shared pipeline's modules are there"
    for part in ("pretraining", "german", "translation"):
        assert not _reaching(lm, f"train_scripts.demo.{part}")


def _settings(**given):
    task = Task(part="t", name="t", prefix=REPO / "t", metric="accuracy", max_rows=0, sizes=None, epochs=1,
                updates=0, batch=8, lrs=(1e-3,), wd=0.0, seeds=1, rows=("r",), every_pretraining=False,
                controls=(), control_seeds=0, encodings=(STANDARD,), noise=0.0, noise_seed=1, noisy_dev=False)
    fields = dict(output=REPO, folder="x", lang="en", row_table={}, rows=("r",), vocab_size=100, device="cpu",
                  model=(), budget="updates", max_update=1, max_epoch=0, pretrain_seeds=1, tasks=(task,))
    fields.update(given)
    return Settings(**{k: v for k, v in fields.items() if v is not None})


def test_the_settings_refuse_a_missing_field():
    assert _settings().pretrain_seeds == 1
    for field in dataclasses.fields(Settings):
        with pytest.raises(TypeError, match=field.name):
            _settings(**{field.name: None})
    with pytest.raises(TypeError, match="metric"):
        Task(part="t", name="t", prefix=REPO, max_rows=0, sizes=None, epochs=1, updates=0, batch=8, lrs=(1e-3,),
             wd=0.0, seeds=1, rows=("r",), every_pretraining=False, controls=(), control_seeds=0,
             encodings=(STANDARD,), noise=0.0, noise_seed=1, noisy_dev=False)


def _lm(*argv):
    return LM_PART.settings(build_parser().parse_args(["--dry-run", *argv]))


@pytest.mark.parametrize("preset,seeds", [("cpu", 3), ("fast", 1), ("gpu", 3)])
def test_flota_random_weight_control_is_planned(preset, seeds):
    a = _lm("--lm-preset", preset)
    assert a.flota_control_seeds == seeds
    runs = plan_of(a).finetune_runs()
    control = [r for r in runs if r["part"] == "flota" and r["init"] == "random"]
    encodings = flota_encodings(a)
    assert len(control) == len(encodings) * len(a.flota_areas) * seeds
    assert sorted({(r["encoding"], r["mode"], r["k"]) for r in control}, key=str) == \
        sorted({(e.name, e.mode, e.k) for e in encodings}, key=str)
    assert {r["seed"] for r in control} == set(range(1, seeds + 1))
    assert {r["lr"] for r in control} == {a.flota_lrs[0]} and {r["row"] for r in control} == {a.baseline}
    # each control fine-tunes on its segmentation's data (the pretrained runs'), in a folder of its own
    pretrained = {r["encoding"]: r for r in runs if r["part"] == "flota" and r["init"] == "pretrained"}
    assert all(r["data"] == pretrained[r["encoding"]]["data"] for r in control)
    assert len({str(r["save"]) for r in runs}) == len(runs)
    # the plan's stage costs count them with the FLOTA runs
    costs = {c.stage: c.kind for c in LM_PART.stage_costs(a)}
    assert all(costs[r["name"]] == "finetune/flota" for r in control)


def test_flota_control_options_and_the_dry_run(run_cli, tmp_path):
    a = _lm("--lm-preset", "fast", "--lm-flota-control-seeds", "2", "--lm-flota-paper")
    control = [r for r in plan_of(a).finetune_runs() if r["part"] == "flota" and r["init"] == "random"]
    assert len(control) == 2 * 2 and {r["lr"] for r in control} == {1e-5}    # the first of --lm-flota-paper's lrs
    none = _lm("--lm-flota-control-seeds", "0")
    assert not [r for r in plan_of(none).finetune_runs() if r["part"] == "flota" and r["init"] == "random"]
    with pytest.raises(Exception, match="--lm-flota-control-seeds"):
        _lm("--lm-flota-control-seeds", "-1")
    proc = run_cli(["python", "-m", "train_scripts.demo.main", "--part", "pretraining", "--output", tmp_path / "o",
                    "--dry-run", "--lm-preset", "fast"])
    control = [shlex.split(x) for x in proc.stdout.splitlines()
               if "finetune_classification.sh" in x and "/arxiv_physics_L/" in x and "--random-init" in x]
    assert len(control) == 1 and control[0][control[0].index("--save-dir") + 1].endswith("standard/random-seed1")
    assert "finetune/flota x6" in proc.stdout        # 2 segmentations x (2 pretrained seeds + 1 control)
    assert not (tmp_path / "o").exists()
