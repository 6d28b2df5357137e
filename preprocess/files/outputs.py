"""The output policy of every command that writes: checked before any work, written through a temporary file
beside the target and published by a rename only when complete; a failed write is one line and leaves nothing."""
from __future__ import annotations

import contextlib
import errno
import os
import re
import sys
import tempfile

from preprocess.common import UserError, is_stream


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
    return path in ("-", "/dev/stdout", "/dev/stderr") or is_stream(path)


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
        if ident is not None and not is_stream(path):
            seen.setdefault(ident, (path, what))
    for path, what in named(outputs, "output"):
        ident = _file_identity(path)
        if ident is None or is_stream(path):
            continue
        if ident in seen:
            other, other_what = seen[ident]
            raise UserError(f"{what} {path} is the same file as {other_what} {other}: refusing to overwrite it")
        seen[ident] = (path, what)


def current_umask() -> int:
    """The process's umask.  Linux shows it in ``/proc/self/status``; elsewhere it is read by setting it and
    setting it back, which for that instant gives another thread's new files the mask 022."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
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


def write_record(record, output: str | None, echo: bool = True) -> None:
    """A command's JSON result: written to ``output`` through :func:`atomic_output` (all or nothing) when one is
    given, and printed when ``echo`` is set (the evaluation commands print it either way, so a log keeps it)."""
    import json

    text = json.dumps(record, indent=1, ensure_ascii=False)
    if output:
        with atomic_output(output) as fh:
            fh.write(text + "\n")
    if echo:
        print(text)
