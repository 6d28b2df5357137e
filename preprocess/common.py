"""What every layer shares: the user-error type, the checkout's location, line flattening, file kinds, the
loading of compiled hot loops and a per-thread silencing of stderr.  Reading inputs is
:mod:`preprocess.files.inputs`, the output policy :mod:`preprocess.files.outputs`, a command's entry point
(signals, one-line errors) :mod:`preprocess.cli`."""
from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import threading
from pathlib import Path

#: Characters that would split a line in fairseq (which reads text files with universal newlines) or that
#: SentencePiece pieces never contain.  Encoders map them to a space before tokenising.
LINE_BREAKING = {"\n": " ", "\r": " ", "\x0b": " ", "\x0c": " ", "\x1c": " ", "\x1d": " ", "\x1e": " ",
                 "\x85": " ", "\u2028": " ", "\u2029": " "}
_LINE_BREAKING_TABLE = str.maketrans(LINE_BREAKING)
_LINE_BREAKING_RE = re.compile("[" + "".join(LINE_BREAKING) + "]")

#: The checkout this code runs from (the folder holding ``preprocess/``, ``train_scripts/``, ``fairseq_plugins/``):
#: the one place it is located.  Recipes start their shell scripts and child processes from it, the fairseq
#: plugins are ``REPO / "fairseq_plugins"`` and the shared data defaults to ``REPO.parent / "shared"``.
REPO = Path(__file__).resolve().parent.parent
#: the shared data folder of a checkout that has ``../shared`` beside it (the demo's data, NLTK's tagger data); the
#: recipes and the pipeline default to it, library code only as a last fallback (NLTK data)
SHARED_DATA = REPO.parent / "shared" / "data"


class UserError(Exception):
    """A problem the user can fix (missing model, bad option, undecodable input).

    Command-line tools print it as one line, ``error: <message>``, and exit with status 2.
    """


def flatten_line(text: str) -> str:
    """Replace characters that Python's ``str.splitlines`` or fairseq would treat as a line break."""
    if _LINE_BREAKING_RE.search(text) is None:  # the common case: a search is much cheaper than translate
        return text
    return text.translate(_LINE_BREAKING_TABLE)


def compiled_class(plain: type, compiled_module: str, source: str, digest) -> type:
    """``plain``'s namesake in ``compiled_module``, setup.py's Cython build of the file ``source`` (a path relative
    to the repository, for the message), when that build records ``digest()``, the SHA-256 of the source's current
    text; else ``plain`` itself (the same code as plain Python).  A stale build is reported once and not used, so
    editing the source never runs old code."""
    import importlib
    import warnings

    try:
        compiled = importlib.import_module(compiled_module)
    except ImportError:
        return plain
    if getattr(compiled, "SOURCE_SHA256", None) != digest():
        warnings.warn(f"{compiled.__file__} was built from an older {source} and is not used; "
                      "rebuild it with `make install` (or `pip install -e .`)", stacklevel=3)
        return plain
    return getattr(compiled, plain.__name__)


def is_stream(path: str) -> bool:
    """Character devices, FIFOs and sockets: written in place, never replaced."""
    import stat
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _PerThreadStderr:
    """``sys.stderr`` while a thread silences its own: that thread writes to its buffer, every other thread to the
    stream that was ``sys.stderr`` (attributes are looked up on the one the calling thread writes to)."""

    def __init__(self, stream):
        self.stream = stream
        self.local = threading.local()

    def __getattr__(self, name):
        return getattr(getattr(self.local, "sink", None) or self.stream, name)


_quiet_lock = threading.Lock()
_quiet_threads = 0


@contextlib.contextmanager
def quiet_stderr():
    """Drop what the calling thread writes to ``sys.stderr`` (a library's progress bars and chatter) while the
    block runs.  Unlike ``contextlib.redirect_stderr``, which swaps the stream of the whole process, other threads
    keep writing to it: the demo runs its stages on threads, and one stage's silenced scorer must not swallow
    another's status lines or errors."""
    global _quiet_threads
    with _quiet_lock:
        router = sys.stderr
        if not isinstance(router, _PerThreadStderr):
            router = sys.stderr = _PerThreadStderr(sys.stderr)
        _quiet_threads += 1
    before = getattr(router.local, "sink", None)
    router.local.sink = io.StringIO()
    try:
        yield
    finally:
        router.local.sink = before
        with _quiet_lock:
            _quiet_threads -= 1
            if _quiet_threads == 0 and sys.stderr is router:
                sys.stderr = router.stream
