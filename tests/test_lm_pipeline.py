"""The demo's one language-model pipeline (train_scripts/demo/lm/): its typed settings refuse a missing field, and
the two parts that run it import neither each other nor are imported by it."""
import ast
import dataclasses

import pytest

from tests.conftest import REPO
from train_scripts.demo.lm.plan import STANDARD, Settings, Task

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
