"""What a stage's record knows of the code it ran and the inputs it read, so that a resume never mixes versions.

A stage is skipped on a resume only when its options, its upstream stages, **the code it runs** and **the contents
of its inputs** are what its record says (``stages.Stages.run``).  Both digests are computed here:

* :func:`code_digest`: the project's source files a stage runs, found from its command (``python -m MODULE``, a
  recipe ``*.sh`` with what it sources and the modules it runs, ``fairseq_plugins/`` for a fairseq command) or from
  the modules named by the part (an in-process stage), each module with every project module it imports, read
  from the source (:func:`module_closure`); the digest of their contents, so a change of a comment counts and a
  checkout in another place or an install without git does not;
* :func:`input_digest`: every path the stage's options name outside the output folder (a data file, a data
  folder, a user's model), by contents: files up to :data:`WHOLE_BYTES` whole, larger ones by size, modification
  time and their first and last MiB (a corpus of gigabytes is not read again at every resume).

:func:`checkout` is the commit the run's code came from and whether the tree was clean; each record stores it, so
the report can name the commit the stages ran at and flag a mix (``demo_report.py``).
"""
from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import subprocess
from pathlib import Path

from preprocess.common import REPO

#: the project's top-level packages: an import of one of them is the project's code
PACKAGES = ("preprocess", "train_scripts", "fairseq_plugins")
#: inputs up to this size are read whole for their digest; larger ones by size, time and their ends
WHOLE_BYTES = 256 << 20
_END = 1 << 20


def _module_file(module: str) -> Path | None:
    base = REPO.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.lru_cache(maxsize=None)
def _imports(path: Path) -> tuple[str, ...]:
    """The project modules ``path`` imports (``from a.b import c``: ``a.b`` and, when it is a module, ``a.b.c``)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return ()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return tuple(m for m in found if m.split(".")[0] in PACKAGES)


#: modules that load others by name (``importlib``), and the folders of what they load: a module that imports one
#: of them runs any of those (the scheme registry loads every scheme's package; the plugins load their adapters)
DYNAMIC = {"preprocess/registry.py": ("preprocess/schemes", "train_scripts/schemes"),
           "train_scripts/schemes/__init__.py": ("train_scripts/schemes", "preprocess/schemes"),
           "fairseq_plugins/__init__.py": ("fairseq_plugins",)}


@functools.lru_cache(maxsize=None)
def module_closure(module: str) -> frozenset:
    """The source files of ``module`` and of every project module it imports, transitively (its packages'
    ``__init__.py`` included)."""
    seen: set[Path] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for i in range(1, len(parts) + 1):   # a module's packages run their __init__ first
            path = _module_file(".".join(parts[:i]))
            if path is not None and path not in seen:
                seen.add(path)
                todo += _imports(path)
                for folder in DYNAMIC.get(path.relative_to(REPO).as_posix(), ()):
                    todo += [".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
                             for p in sorted((REPO / folder).rglob("*.py"))]
    return frozenset(seen)


def _recipe_files(script: Path) -> set[Path]:
    """A recipe's own file, the files it sources (``common.sh``), the modules it runs (``python -m X``) and the
    fairseq plugins its fairseq commands load (``--user-dir``)."""
    out = {script}
    text = script.read_text(encoding="utf-8", errors="replace")
    for name in re.findall(r"^\s*(?:source|\.)\s+[^\n]*?([\w.-]+\.sh)\b", text, flags=re.M):
        sourced = script.parent / name
        if sourced.is_file() and sourced not in out:
            out |= _recipe_files(sourced)
    for module in re.findall(r"-m\s+((?:train_scripts|preprocess|fairseq_plugins)[\w.]*)", text):
        out |= module_closure(module)
    if "fairseq" in text:
        out |= module_closure("fairseq_plugins")
        out |= {p for p in (REPO / "fairseq_plugins").rglob("*.py")}
    return out


def code_files(command=None, modules=()) -> set[Path]:
    """The project files a stage runs: from its command (a list of words: ``python -m MODULE``, a ``*.sh`` recipe
    or a ``*.py`` script of the project) and from ``modules`` (the modules an in-process stage calls)."""
    files: set[Path] = set()
    for module in modules:
        files |= module_closure(module)
    words = [str(w) for w in command] if isinstance(command, (list, tuple)) else []
    for i, word in enumerate(words):
        if word == "-m" and i + 1 < len(words) and words[i + 1].split(".")[0] in PACKAGES:
            files |= module_closure(words[i + 1])
        elif word.endswith((".sh", ".py")) and Path(word).is_file():
            path = Path(word).resolve()
            if REPO.resolve() in path.parents:
                files |= _recipe_files(path) if word.endswith(".sh") else {path} | _script_imports(path)
    return files


def _script_imports(path: Path) -> set[Path]:
    out: set[Path] = set()
    for module in _imports(path):
        out |= module_closure(module)
    return out


@functools.lru_cache(maxsize=None)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        if size <= WHOLE_BYTES:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        else:
            h.update(f"{size}:{mtime_ns}".encode())
            h.update(fh.read(_END))
            fh.seek(size - _END)
            h.update(fh.read(_END))
    return h.hexdigest()


def _path_digest(path: Path) -> str:
    if path.is_file():
        st = path.stat()
        return _file_digest(str(path), st.st_size, st.st_mtime_ns)
    h = hashlib.sha256()
    for sub in sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        st = sub.stat()
        h.update(f"{sub.relative_to(path)}\0{_file_digest(str(sub), st.st_size, st.st_mtime_ns)}\0".encode())
    return h.hexdigest()


def code_digest(command=None, modules=()) -> str | None:
    """The digest of the contents of :func:`code_files` (relative paths and contents); None when a stage names no
    code of the project."""
    files = code_files(command, modules)
    if not files:
        return None
    root = REPO.resolve()
    h = hashlib.sha256()
    for path in sorted(files):
        rel = path.resolve().relative_to(root) if root in path.resolve().parents else path
        h.update(f"{rel}\0{_path_digest(path)}\0".encode())
    return h.hexdigest()[:16]


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def input_paths(key, out: Path) -> list[Path]:
    """The existing absolute paths ``key`` names outside the output folder ``out`` and outside the project's own
    code (which :func:`code_digest` covers), each once."""
    out, repo = Path(os.path.realpath(out)), REPO.resolve()
    found = []
    for word in _strings(key):
        if not word.startswith("/") or "\n" in word:
            continue
        path = Path(os.path.realpath(word))
        if path == out or out in path.parents or not path.exists():
            continue
        if (path == repo or repo in path.parents) and path.suffix in (".py", ".sh"):
            continue
        if path not in found:
            found.append(path)
    return found


def input_digest(key, out: Path) -> str | None:
    """The digest of the contents of every input ``key`` names (:func:`input_paths`); None when it names none."""
    paths = input_paths(key, out)
    if not paths:
        return None
    h = hashlib.sha256()
    for path in paths:
        h.update(f"{_path_digest(path)}\0".encode())
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def checkout() -> dict:
    """``{"commit": short hash or None, "clean": whether no tracked file differs from it}`` of the project's
    checkout (None and None outside a git checkout, e.g. an installed copy)."""
    def git(*args) -> str | None:
        try:
            proc = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    commit = git("rev-parse", "--short=12", "HEAD")
    if commit is None:
        return {"commit": None, "clean": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "clean": status == "" if status is not None else None}


def describe(commits: dict) -> str:
    """One sentence on the commits a part's stages ran at (``{"COMMIT" or "COMMIT+changes": stages}``)."""
    if not commits:
        return "The stages' records name no commit (they were written before records did)."
    if len(commits) == 1:
        (commit, n), = commits.items()
        return f"All {n} stage(s) ran at commit `{commit}`."
    listed = ", ".join(f"`{c}` ({n})" for c, n in sorted(commits.items(), key=lambda kv: -kv[1]))
    return (f"**A mix**: the stages ran at {len(commits)} versions of the code: {listed} (stage counts). Each stage "
            "was re-run when the code it runs changed, so its own numbers match its record's code; the mix is named "
            "so that it can be checked.")


def label(info: dict) -> str:
    """``COMMIT``, ``COMMIT+changes`` (tracked files differed from it) or ``unknown``."""
    if not info or not info.get("commit"):
        return "unknown"
    return info["commit"] + ("" if info.get("clean") else "+changes")
