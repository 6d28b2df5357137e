"""The layers point down, read from the source with ``ast`` (nothing is imported).

``preprocess/`` is the algorithm layer: it imports neither fairseq nor the recipes, the adapters or the
benchmarks, and its tokenisers do not import the evaluation code built on them (``preprocess/evaluate/``).
``fairseq_plugins/`` adapts ``preprocess/`` and imports no recipe; ``train_scripts/`` imports no benchmark or
test.  Imports inside functions count too: a lazy import is still a dependency.  No two modules import each other
at module level, and no benchmark imports another benchmark that imports it (they share ``bench/timing.py``)."""
from __future__ import annotations

import ast
import itertools
from pathlib import Path

from tests.conftest import REPO

PACKAGES = ("preprocess", "fairseq_plugins", "train_scripts")


def _module(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, top_level_only: bool = False) -> set:
    """Every module name ``path`` imports (``from a.b import c`` gives ``a.b`` and ``a.b.c``); relative imports are
    not used in this code base and are ignored."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else ast.walk(tree)
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _modules(*folders: str) -> dict:
    return {_module(p): p for folder in folders for p in sorted((REPO / folder).rglob("*.py"))}


def forbidden(module: str, imported: str) -> bool:
    """Whether ``module`` may not import ``imported`` (the rules of the module docstring)."""
    top = imported.split(".")[0]
    if module.startswith("preprocess.evaluate"):
        return top in ("fairseq", "fairseq_cli", "train_scripts", "fairseq_plugins", "bench", "tests")
    if module.startswith("preprocess"):
        return (top in ("fairseq", "fairseq_cli", "train_scripts", "fairseq_plugins", "bench", "tests")
                or imported.startswith("preprocess.evaluate"))
    if module.startswith("fairseq_plugins"):
        return top in ("train_scripts", "bench", "tests")
    return top in ("bench", "tests")


def test_the_rules_catch_an_upward_import():
    assert forbidden("preprocess.schemes.flota", "preprocess.evaluate.noise")
    assert forbidden("preprocess.models.spm", "fairseq.data")
    assert forbidden("fairseq_plugins.bite", "train_scripts.schemes")
    assert not forbidden("preprocess.evaluate.bite", "preprocess.schemes.bite")
    assert not forbidden("train_scripts.binarize", "fairseq_plugins")


def test_no_upward_import():
    upward = [f"{module} imports {name}" for module, path in _modules(*PACKAGES).items()
              for name in sorted(_imports(path)) if forbidden(module, name)]
    assert not upward, "\n".join(upward)


def test_no_two_modules_import_each_other_at_module_level():
    modules = _modules(*PACKAGES)
    graph = {m: _imports(p, top_level_only=True) & set(modules) for m, p in modules.items()}
    circles = [f"{a} <-> {b}" for a, b in itertools.combinations(sorted(graph), 2)
               if b in graph[a] and a in graph[b]]
    assert not circles, "\n".join(circles)


def test_no_import_circle_between_benchmarks():
    """The benchmarks import each other by file name (``bench/`` is put on sys.path), anywhere in the file."""
    bench = {p.stem: p for p in sorted((REPO / "bench").glob("*.py"))}
    graph = {name: {i.split(".")[0] for i in _imports(path)} & set(bench) - {name} for name, path in bench.items()}

    def reaches(start: str, goal: str, seen: set) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph[start])

    circles = [name for name in sorted(graph) if reaches(name, name, {name})]
    assert not circles, f"benchmarks in an import circle: {circles} ({graph})"
    assert "timing" in graph["bite"] | graph["wordmap"]


def _private_imports(path: Path) -> list:
    """``from pkg.mod import _name`` in ``path``: a private name of another module of this project (the
    benchmarks import each other by file name, ``from timing import ...``, so those names count too)."""
    ours = {*PACKAGES, "bench", *(p.stem for p in (REPO / "bench").glob("*.py"))}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [f"{node.module}.{alias.name}" for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and not node.level
            and node.module.split(".")[0] in ours
            for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__")]


def test_the_private_import_rule_catches_one(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from preprocess.schemes.bite.text import _x, public\nfrom os import _exit\nfrom timing import _y\n",
                    encoding="utf-8")
    assert _private_imports(path) == ["preprocess.schemes.bite.text._x", "timing._y"]


def test_no_module_imports_another_modules_private_name():
    """A name a module shares is public: a split module's seam is its public names, not an underscore."""
    found = [f"{module} imports {name}" for module, path in _modules(*PACKAGES, "bench").items()
             for name in _private_imports(path)]
    assert not found, "\n".join(found)
