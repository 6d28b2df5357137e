"""The console scripts of the schemes inside this project, read from their modules' source (nothing is imported).

A scheme's module (``preprocess/schemes/<name>.py``, or a package's ``__init__.py``) that has tools of its own lists them
in a literal beside its descriptor::

    #: this scheme's command-line tools (setup.py reads this literal; nothing is imported)
    CONSOLE_SCRIPTS = {"morphtok-mine": "preprocess.schemes.mine", "morphtok-metrics-mine": "preprocess.evaluate.mine"}

and ``setup.py`` installs them with the project's other tools (its own ``CONSOLE_SCRIPTS``), each as
``NAME = MODULE:cli``.  The scheme modules are the ones :mod:`preprocess.registry` finds under ``preprocess/schemes/`` (a
line starting ``SCHEME = SchemeDescriptor(``, or a package's one-line import of ``SCHEME``).

This module imports only the standard library: ``setup.py`` runs it by path (``runpy``) before anything is
installed, and the tests and ``scripts/gen_command_reference.py`` read the same list through
:func:`console_scripts`.
"""
from __future__ import annotations

import ast
import os
import re

#: what :mod:`preprocess.registry` takes for a scheme's declaration (it uses this pattern)
DECLARES = re.compile(r"^(SCHEME\s*=\s*SchemeDescriptor\(|from\s+[\w.]+\s+import\s+[^#\n]*\bSCHEME\b)", re.M)
#: the name of the literal a scheme module lists its tools in
NAME = "CONSOLE_SCRIPTS"


def _literal(tree: ast.Module) -> dict:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
        if any(getattr(t, "id", None) == NAME for t in targets):
            value = ast.literal_eval(node.value)
            if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                      for k, v in value.items()):
                raise ValueError(f"{NAME} must be a literal dict of script name -> module")
            return value
    return {}


def scheme_sources(root: str) -> list:
    """The source files that declare a scheme directly under ``root/preprocess/schemes``, sorted by scheme name."""
    base = os.path.join(root, "preprocess", "schemes")
    out = []
    for entry in sorted(os.listdir(base)):
        path = os.path.join(base, entry, "__init__.py") if os.path.isdir(os.path.join(base, entry)) else \
            os.path.join(base, entry) if entry.endswith(".py") else None
        if path is None or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as fh:
            if DECLARES.search(fh.read()):
                out.append(path)
    return out


def scheme_console_scripts(root: str) -> dict:
    """``{script: module}`` of every scheme inside the project at ``root``, in the order of the scheme names."""
    out = {}
    for path in scheme_sources(root):
        with open(path, encoding="utf-8") as fh:
            try:
                scripts = _literal(ast.parse(fh.read(), path))
            except ValueError as exc:
                raise ValueError(f"{path}: {exc}") from None
        clash = sorted(set(out) & set(scripts))
        if clash:
            raise ValueError(f"{path}: console script {clash[0]} is declared twice")
        out.update(scripts)
    return out


def setup_console_scripts(root: str) -> dict:
    """``setup.py``'s ``CONSOLE_SCRIPTS`` (the tools that are no scheme's), read from its source."""
    with open(os.path.join(root, "setup.py"), encoding="utf-8") as fh:
        return _literal(ast.parse(fh.read()))


def console_scripts(root: str) -> dict:
    """Every console script ``setup.py`` installs: its own, then the schemes'."""
    common, schemes = setup_console_scripts(root), scheme_console_scripts(root)
    clash = sorted(set(common) & set(schemes))
    if clash:
        raise ValueError(f"console script {clash[0]} is in setup.py and in a scheme's {NAME}")
    return {**common, **schemes}
