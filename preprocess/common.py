"""Small pieces shared by every scheme: user errors, safe file output, strict line reading."""
from __future__ import annotations

import contextlib
import errno
import gzip
import os
import re
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Iterator

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


class Terminated(BaseException):
    """Raised in the main process on SIGTERM (SLURM's time limit and preemption signal), so that ``finally``
    blocks and :func:`atomic_output` clean up exactly as they do for Ctrl-C."""


def require_file(path: str, what: str) -> str:
    if not path:
        raise UserError(f"no {what} given")
    if os.path.isdir(path):
        raise UserError(f"{what} is a directory, not a file: {path}")
    if not os.path.isfile(path):
        raise UserError(f"{what} not found: {path}")
    if not os.access(path, os.R_OK):
        raise UserError(f"{what} is not readable (permission denied): {path}")
    return path


def check_output_path(path: str, what: str = "output file") -> str:
    """Fail early (before any work) on an output path that cannot be written: a directory, a name ending in a
    slash, or a path whose parent is a file or an unwritable folder.  Streams (``-``, character devices, FIFOs)
    are always accepted: they are written in place."""
    if is_stream_output(path):
        return path
    if not path:
        raise UserError(f"no {what} given")
    if path.endswith(("/", os.sep)):
        raise UserError(f"{what} {path} ends with a slash: give a file name, not a folder")
    if os.path.isdir(path):
        raise UserError(f"{what} is a directory: {path}; give a file name")
    target = output_target(path)
    parent = os.path.dirname(target)
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if parent and not os.path.isdir(parent):
        raise UserError(f"cannot write {what} {path}: {parent} is a file, not a directory")
    if parent and not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"cannot write {what} {path}: directory {parent} is not writable")
    return path


def output_target(path: str) -> str:
    """The regular file an output path names: a symlink (also a dangling one, or a chain) is followed to its
    target, so the file is replaced there and the link stays a link."""
    return os.path.realpath(path)


def is_stream_output(path: str) -> bool:
    """``-``, ``/dev/stdout``/``/dev/stderr`` and existing character devices, FIFOs and sockets: written in
    place, streaming, never replaced by a regular file."""
    return path in ("-", "/dev/stdout", "/dev/stderr") or _is_stream(path)


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


def _file_identity(path: str):
    """(device, inode) of the file ``path`` names after following links, or None when it does not exist yet."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return st.st_dev, st.st_ino


def check_distinct(outputs, inputs=()) -> None:
    """The output policy's first rule, checked before any work: no output is the same file as an input (a text,
    model or vocabulary the run reads), and no two outputs are one file.  Files are compared by device and inode,
    so ``./x``, an absolute path, a hard link and a symlink to ``x`` are all caught.  ``-`` and character devices
    (``/dev/null``, ``/dev/stdout``) are streams, not files, and are never compared.

    ``outputs`` and ``inputs`` are paths, or ``(path, what)`` pairs naming their role for the message."""
    def named(items, default):
        for item in items:
            path, what = (item, default) if isinstance(item, (str, os.PathLike)) else item
            if path and path != "-":
                yield os.fspath(path), what

    seen: dict = {}
    for path, what in named(inputs, "input"):
        ident = _file_identity(path)
        if ident is not None and not _is_stream(path):
            seen.setdefault(ident, (path, what))
    for path, what in named(outputs, "output"):
        ident = _file_identity(path)
        if ident is None or _is_stream(path):
            continue
        if ident in seen:
            other, other_what = seen[ident]
            raise UserError(f"{what} {path} is the same file as {other_what} {other}: refusing to overwrite it")
        seen[ident] = (path, what)


def _is_stream(path: str) -> bool:
    """Character devices, FIFOs and sockets: written in place, never replaced."""
    import stat
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def is_stream_input(path: str) -> bool:
    """``-``, ``/dev/stdin``, a FIFO or ``<(...)`` (``/dev/fd/N``), a character device: read once, in order."""
    return path in ("-", "/dev/stdin") or _is_stream(path)


def require_input(path: str, what: str = "input file") -> str:
    """Like :func:`require_file`, but a FIFO, ``/dev/stdin`` or process substitution is a valid input too."""
    if path == "-" or (path and _is_stream(path)):
        return path
    return require_file(path, what)


class _PositionalReader:
    """Reads a file descriptor shared with other processes at its own position (``os.pread``): forked workers
    read what the parent opened, never the path again, and no process moves another's file offset."""

    def __init__(self, fd: int):
        self.fd, self.pos = fd, 0

    def seek(self, pos: int, whence: int = 0) -> int:
        self.pos = pos if whence == 0 else self.pos + pos if whence == 1 else os.fstat(self.fd).st_size + pos
        return self.pos

    def tell(self) -> int:
        return self.pos

    def read(self, n: int) -> bytes:
        data = os.pread(self.fd, n, self.pos)
        self.pos += len(data)
        return data

    def close(self) -> None:   # the fd belongs to the opener
        pass


def open_binary_input(path: str) -> IO[bytes]:
    if path in ("-", "/dev/stdin"):
        return sys.stdin.buffer
    require_input(path, "input file")
    if path.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def corrupt_gzip(name: str, fh, exc: Exception) -> UserError:
    """One line for a truncated or corrupt ``.gz`` input: the file, the compressed byte offset where reading
    stopped and the decompressed bytes read until then."""
    raw = getattr(fh, "fileobj", None)
    where = []
    with contextlib.suppress(Exception):
        where.append(f"compressed byte {raw.tell()}")
    with contextlib.suppress(Exception):
        where.append(f"after {fh.tell()} decompressed bytes")
    reason = str(exc) or type(exc).__name__
    return UserError(f"{name}: corrupt or truncated gzip data ({reason}) at {', '.join(where) or 'unknown position'}")


def read_blocks(fh, name: str, block_size: int = 1 << 20, remaining: int | None = None) -> Iterator[bytes]:
    """Blocks of the open binary input ``fh`` (at most ``remaining`` bytes); a corrupt ``.gz`` is one line."""
    import zlib
    while remaining is None or remaining > 0:
        try:
            block = fh.read(block_size if remaining is None else min(block_size, remaining))
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise corrupt_gzip(name, fh, exc) from None
        if not block:
            return
        if remaining is not None:
            remaining -= len(block)
        yield block


def read_lines(path: str, errors: str = "strict", block_size: int = 1 << 22, start: int = 0,
               end: int | None = None, first_line: int = 0, fd: int | None = None) -> Iterator[str]:
    """Yield the lines of ``path`` (``-`` = stdin) without their ``\\n`` / ``\\r\\n`` terminator.

    Only ``\\n`` ends a line, so a stray ``\\r`` or U+2028 inside a line never changes the line count.
    Undecodable UTF-8 raises :class:`UserError` naming file and line unless ``errors="replace"``; a corrupt or
    truncated ``.gz`` raises one naming file and position.
    The file is read and decoded in blocks of whole lines, which is several times faster than line by line.
    ``start``/``end`` read only that byte range of a plain file (it must start at a line start);
    ``first_line`` is the number of lines before ``start``, for error messages.  ``fd``: read this already open
    descriptor of ``path`` (positional reads; the name is used for messages only).
    """
    name = "<stdin>" if path == "-" else path
    fh = _PositionalReader(fd) if fd is not None else open_binary_input(path)
    if start:
        fh.seek(start)
    yield from lines_of(fh, name, errors, block_size, None if end is None else end - start, first_line)


def lines_of(fh, name: str, errors: str = "strict", block_size: int = 1 << 22, remaining: int | None = None,
             first_line: int = 0) -> Iterator[str]:
    """The lines of the open binary input ``fh`` as :func:`read_lines` gives them (closed at the end unless it
    is stdin); ``name`` is used in messages."""
    lineno = first_line
    try:
        rest = b""
        for block in read_blocks(fh, name, block_size, remaining):
            block = rest + block
            cut = block.rfind(b"\n") + 1
            if cut == 0:  # no complete line yet (a very long line): keep reading
                rest = block
                continue
            rest = block[cut:]
            raw_lines = block[:cut - 1].split(b"\n")
            yield from _decode_lines(raw_lines, name, lineno, errors)
            lineno += len(raw_lines)
        if rest:
            yield from _decode_lines([rest], name, lineno, errors)
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


def _decode_lines(raw_lines: list[bytes], name: str, lineno: int, errors: str) -> list[str]:
    try:
        text = b"\n".join(raw_lines).decode("utf-8", errors=errors)
    except UnicodeDecodeError:
        for i, raw in enumerate(raw_lines, lineno + 1):  # find the offending line for the message
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UserError(
                    f"{name}:{i}: invalid UTF-8 at byte {exc.start} ({exc.reason}); "
                    "fix the input or pass --errors replace") from None
        raise
    lines = text.split("\n")
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines


def count_lines(path: str, errors: str = "strict") -> int:
    """The number of lines :func:`read_lines` yields for ``path`` (plain or ``.gz``): only ``\\n`` ends a line, so
    a stray ``\\r`` never adds one (text mode's universal newlines would), and a last line without ``\\n``
    counts.  The one line counter of the project; undecodable UTF-8 raises as in :func:`read_lines`."""
    return sum(1 for _ in read_lines(path, errors=errors))


def split_lines_file(path: str, segment_bytes: int, fd: int | None = None) -> tuple[int, list[tuple[int, int, int]]]:
    """Count the lines of a plain file and cut it into byte ranges of about ``segment_bytes`` that start at line
    starts (``segment_bytes <= 0``: one range).  Returns ``(lines, [(start, end, lines_before_start), ...])``.
    One sequential pass at disk speed; the ranges let worker processes read their own part of the file.
    ``fd``: count this open descriptor of ``path`` instead of opening the name again."""
    n = 0
    pos = 0
    last = b"\n"
    segments: list[tuple[int, int, int]] = []
    seg_start, seg_line = 0, 0
    with (contextlib.nullcontext(_PositionalReader(fd)) if fd is not None else open(path, "rb")) as fh:
        while True:
            block = fh.read(1 << 20)
            if not block:
                break
            offset = 0
            while segment_bytes > 0 and pos + len(block) - seg_start > segment_bytes:
                cut = block.find(b"\n", max(offset, seg_start + segment_bytes - 1 - pos))
                if cut < 0:
                    break
                n += block.count(b"\n", offset, cut + 1)
                offset = cut + 1
                segments.append((seg_start, pos + offset, seg_line))
                seg_start, seg_line = pos + offset, n
            n += block.count(b"\n", offset)
            pos += len(block)
            last = block[-1:]
    if pos > seg_start or not segments:
        segments.append((seg_start, pos, seg_line))
    return n + (last != b"\n"), segments


def current_umask() -> int:
    """The process's umask (read without changing it for good)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: errors that mean "this output cannot be written" (disk full, quota, file size limit, read-only, permission)
WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}


def write_error(path: str, exc: OSError) -> UserError:
    """The one line a failed write of ``path`` gives: the path and the system's reason."""
    reason = exc.strerror or str(exc)
    hint = {errno.ENOSPC: " (disk full)", errno.EDQUOT: " (disk quota exceeded)",
            errno.EFBIG: " (file size limit, see ulimit -f)"}.get(exc.errno, "")
    return UserError(f"cannot write {path}: {reason}{hint}; nothing was written")


def _temp_prefix(target: str) -> str:
    # the pid in the name lets a later run recognise (and remove) what a killed run left behind
    return f".{os.path.basename(target)}.{os.getpid()}."


_TEMP_RE = re.compile(r"\.(?P<pid>\d+)\.[^/]*\.tmp$")


def remove_stale_temporaries(path: str) -> list[str]:
    """Remove the temporary and part files that a killed run (SIGKILL, power loss) left next to the output
    ``path``: hidden files ``.<name>.<pid>.*.tmp`` whose process no longer exists.  Returns what was removed."""
    target = output_target(path)
    directory, base = os.path.dirname(target), os.path.basename(target)
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(f".{base}."):
            continue
        m = _TEMP_RE.search(name[len(base) + 1:])
        if m is None or not _pid_gone(int(m.group("pid"))):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(directory, name))
            removed.append(name)
    return removed


def _pid_gone(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:   # someone else's live process
        return False
    return False


def prepare_output(path: str) -> str:
    """Make the folder of the (link-resolved) output ``path``, as every command and worker count does, and remove
    stale temporaries of earlier killed runs; returns the regular file that will be replaced."""
    check_output_path(path)
    target = output_target(path)
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
    except OSError as exc:
        raise write_error(path, exc) from None
    remove_stale_temporaries(target)
    return target


def make_temp_file(path: str, tag: str = "") -> tuple[int, str]:
    """A hidden temporary file next to ``path`` (next to its target, for a symlink) whose mode follows the umask
    (mkstemp alone gives 0600, which a rename would carry over to the output: unreadable to the group on a shared
    cluster).  Its name carries this process id, so :func:`remove_stale_temporaries` can clean up after a killed
    run."""
    target = output_target(path)
    directory = os.path.dirname(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(target) + tag, suffix=".tmp", dir=directory)
        os.fchmod(fd, 0o666 & ~current_umask())
    except OSError as exc:
        raise write_error(path, exc) from None
    return fd, tmp


class _Output:
    """One output of :func:`atomic_outputs`: a temporary file beside the target, or a stream written in place."""

    def __init__(self, path: str, mode: str, encoding: str | None):
        self.path, self.mode, self.encoding = path, mode, encoding
        self.tmp = self.target = None
        self.fh = None
        self.stream = is_stream_output(path)

    def open(self):
        kwargs = {} if "b" in self.mode else {"encoding": self.encoding, "newline": "\n"}
        if self.path in ("-", "/dev/stdout"):   # the process's own stdout, whatever it is (pipe, file, tty)
            self.path = "-"
            self.fh = sys.stdout.buffer if "b" in self.mode else sys.stdout
            return self.fh
        if self.path == "/dev/stderr":
            self.fh = sys.stderr.buffer if "b" in self.mode else sys.stderr
            return self.fh
        if self.stream:   # a device, FIFO or socket: written in place, streaming; never replaced
            try:
                self.fh = open(self.path, self.mode, **kwargs)
            except OSError as exc:
                raise write_error(self.path, exc) from None
            return self.fh
        self.target = prepare_output(self.path)
        fd, self.tmp = make_temp_file(self.target)
        self.fh = os.fdopen(fd, self.mode, **kwargs)
        return self.fh

    def finish(self) -> None:
        """Flush and fsync (regular files), so that a later rename cannot publish data that is not on disk."""
        if self.fh is None:
            return
        if self.path in ("-", "/dev/stderr"):
            self.fh.flush()
            return
        try:
            self.fh.flush()
            if self.tmp is not None:
                os.fsync(self.fh.fileno())
            self.fh.close()
        except OSError as exc:
            raise write_error(self.path, exc) from None

    def commit(self) -> None:
        if self.tmp is not None:
            os.replace(self.tmp, self.target)
            self.tmp = None

    def abort(self) -> None:
        if self.fh is not None and self.path not in ("-", "/dev/stderr"):
            with contextlib.suppress(OSError):
                self.fh.close()
        if self.tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.tmp)
            self.tmp = None


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _is_write_error(exc: OSError, outputs: list[_Output]) -> bool:
    if exc.errno not in WRITE_ERRNOS:
        return False
    if exc.filename is None:
        return exc.errno not in (errno.EACCES, errno.EPERM, errno.EIO)  # EACCES on a read names its file
    return any(exc.filename in (o.tmp, o.path, o.target) for o in outputs)


@contextlib.contextmanager
def atomic_outputs(paths, mode: str = "w", encoding: str | None = "utf-8"):
    """Open several outputs that are published together or not at all (a model, its vocabulary and its
    dictionary): yields a list of file objects; each regular file is written to a temporary file beside its
    target (a symlink's target: the link stays a link), and only when every one of them is written and fsynced
    are they renamed into place.  On any error (disk full, permission, Ctrl-C, SIGTERM under :func:`run_main`)
    every temporary file is removed and the existing files are left as they were; a write error becomes one
    :class:`UserError` line naming the path.

    ``-``, ``/dev/stdout`` and existing character devices, FIFOs and sockets are written in place, streaming
    (they cannot be replaced atomically).  Outputs follow the umask; missing folders are created."""
    outputs = [_Output(os.fspath(p), mode, encoding) for p in paths]
    try:
        handles = [o.open() for o in outputs]
        try:
            yield handles
        except OSError as exc:
            if _is_write_error(exc, outputs):
                named = [o.path for o in outputs if exc.filename in (o.tmp, o.target, o.path)] or \
                    [o.path for o in outputs]
                raise write_error(", ".join(named), exc) from None
            raise
        for o in outputs:
            o.finish()
        for o in outputs:
            o.commit()
        for directory in {os.path.dirname(o.target) for o in outputs if o.target}:
            _fsync_dir(directory)
    except BaseException:
        for o in outputs:
            o.abort()
        raise


@contextlib.contextmanager
def atomic_output(path: str, mode: str = "w", encoding: str | None = "utf-8"):
    """Open ``path`` for writing through a temporary file that replaces ``path`` only on success
    (see :func:`atomic_outputs`, the same policy for one file).

    ``-`` writes to stdout.  On any exception (also Ctrl-C, and SIGTERM under :func:`run_main`) the temporary
    file is removed, so no partial output is left.  The file's mode follows the umask, like any file opened
    with ``open``.
    """
    with atomic_outputs([path], mode, encoding) as (fh,):
        yield fh


def _ignore_signal(signum, frame):
    pass


def _first_signal_only(signum, frame):
    """SIGINT/SIGTERM handler of :func:`run_main`: the first signal stops the command; later ones (``timeout``
    and shells often deliver two in quick succession, or the user presses Ctrl-C again) are ignored, so that the
    cleanup they would interrupt (temporary and part files, worker processes) always completes."""
    for s in (signal.SIGINT, signal.SIGTERM):   # a Python no-op, not SIG_IGN: a signal already pending would
        signal.signal(s, _ignore_signal)        # otherwise raise "ignored due to race condition"
    if signum == signal.SIGINT:
        raise KeyboardInterrupt()
    raise Terminated()


def handle_signals() -> None:
    """In the main process: SIGINT and SIGTERM handled as one (see :func:`_first_signal_only`); SIGXFSZ (file
    size limit, ``ulimit -f``) ignored, so exceeding it is a write error (EFBIG) with one line, not a crash."""
    if threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGINT, _first_signal_only)
    signal.signal(signal.SIGTERM, _first_signal_only)
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def run_main(main, argv=None) -> int:
    """Run a CLI ``main(argv)`` turning :class:`UserError` into a one-line message and exit status 2.

    Ctrl-C exits with 130 and SIGTERM with 143, after the same cleanup (temporary files removed), with one line
    instead of a traceback.  Signals after the first are ignored until the cleanup is done."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    handle_signals()
    try:
        return main(argv) or 0
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("error: terminated (SIGTERM)", file=sys.stderr)
        return 143
    except BrokenPipeError:  # stdout closed early (`... | head`): not an error; silence the flush at exit
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS):
            raise
        print(f"error: {write_error(exc.filename or 'output', exc)}", file=sys.stderr)
        return 2
    finally:
        if signal.getsignal(signal.SIGINT) is _first_signal_only:   # no signal came: as before (in-process use)
            for s, handler in saved.items():
                if handler is not None and threading.current_thread() is threading.main_thread():
                    signal.signal(s, handler)
