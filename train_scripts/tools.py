"""Running fairseq's command-line tools from the recipes: one environment, one way to find and run a tool.

Every recipe module (binarize, evaluate, the demo pipeline) starts child processes through these helpers, so
that the project's packages (``PYTHONPATH``), the venv's console scripts (``PATH``) and NLTK's tagger data
(``NLTK_DATA``) are set the same way everywhere.
"""
from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from preprocess.common import REPO, SHARED_DATA, UserError  # noqa: F401  (SHARED_DATA: recipes' data)
from preprocess.files.outputs import write_error


def plugins_dir() -> str:
    """The ``--user-dir`` of this project's fairseq plugins."""
    return str(REPO / "fairseq_plugins")


def child_env(threads: int | None = None) -> dict:
    """The environment for child processes: the venv's bin/ first on PATH, the repository on PYTHONPATH, and
    NLTK_DATA extended by the venv's and the shared tagger data."""
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    nltk = [env.get("NLTK_DATA"), str(Path(sys.prefix) / "nltk_data"), str(SHARED_DATA / "nltk_data")]
    env["NLTK_DATA"] = os.pathsep.join(p for p in nltk if p)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    return env


def find_tool(name: str) -> str:
    """A console script of this Python's environment (the venv's bin/ first), else from PATH."""
    here = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.isfile(here):
        return here
    found = shutil.which(name)
    if not found:
        raise UserError(f"{name} not found (is fairseq installed in this environment?)")
    return found


#: a Python traceback's last line for a write the disk refused: ``OSError: [Errno 28] No space left on device``
_WRITE_ERROR_LINE = re.compile(r"^\w*(?:Error|Exception): \[Errno (\d+)\] ([^\n]*?)(?:: '[^'\n]*')?\s*$", re.M)


def tool_write_error(stderr: str) -> OSError | None:
    """The disk-full (quota, file size limit, read-only) error a failed tool ended with, read from its stderr."""
    for m in reversed(list(_WRITE_ERROR_LINE.finditer(stderr or ""))):
        if int(m.group(1)) in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS):
            return OSError(int(m.group(1)), os.strerror(int(m.group(1))))
    return None


def run_tool(cmd: list, quiet: bool = True, output: str | None = None) -> subprocess.CompletedProcess:
    """Run ``cmd`` (a fairseq tool name is looked up with :func:`find_tool`) in :func:`child_env`; a failure
    raises :class:`UserError` with the command and the end of its error output.  Returns the finished process
    (stdout and stderr captured; stderr is echoed unless ``quiet``).

    A tool that failed writing (disk full, quota, file size limit) is one line instead, as every writer of the
    project gives it (:func:`preprocess.common.write_error`), naming ``output`` (what the tool writes; the
    caller removes what it left)."""
    cmd = [str(c) for c in cmd]
    if cmd[0].startswith("fairseq-"):
        cmd[0] = find_tool(cmd[0])
    if not quiet:
        print("+ " + " ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, env=child_env(), capture_output=True, text=True)
    if not quiet and proc.stderr:
        sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        refused = tool_write_error((proc.stderr or "")[-3000:])
        if refused is not None:
            raise write_error(output or f"the output of {os.path.basename(cmd[0])}", refused)
        tail = (proc.stderr or "")[-3000:]
        raise UserError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{tail}".rstrip())
    return proc


def map_paths(value, moves: list[tuple[str, str]]):
    """``value`` (JSON-like: dicts, lists, strings, paths) with every path inside a folder ``old`` of ``moves``
    written inside its ``new`` instead (the first pair whose ``old`` holds it).  A string that joins several paths
    with ``os.pathsep`` (fairseq's ``DATA``, ``a:b``) is mapped part by part; other strings are left alone."""
    def one(text: str) -> str:
        for old, new in moves:
            if text == old or text.startswith(old + os.sep):
                return new + text[len(old):]
        return text

    def walk(v):
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        if isinstance(v, Path):
            v = str(v)
        if not isinstance(v, str):
            return v
        return os.pathsep.join(map(one, v.split(os.pathsep))) if os.pathsep in v else one(v)
    return walk(value)


def moved_root(recorded: str, actual: str) -> tuple[str, str] | None:
    """Where a folder tree was moved, from one folder in it: ``recorded`` (where it was) and ``actual`` (where it
    is), as (old, new) with their common trailing names taken off (``/a/demo/schemes/x`` and
    ``/b/moved/schemes/x``: ``/a/demo`` -> ``/b/moved``), so that the folders beside it that moved with it are
    found too; None where nothing moved."""
    old, new = Path(os.path.abspath(recorded)), Path(os.path.abspath(actual))
    if old == new:
        return None
    a, b = list(old.parts), list(new.parts)
    while len(a) > 1 and len(b) > 1 and a[-1] == b[-1]:
        a.pop()
        b.pop()
    return str(Path(*a)), str(Path(*b))
