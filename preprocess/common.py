"""Small pieces shared by every scheme: user errors, safe file output, strict line reading."""
from __future__ import annotations

import contextlib
import gzip
import os
import re
import signal
import sys
import tempfile
from typing import IO, Iterator

#: Characters that would split a line in fairseq (which reads text files with universal newlines) or that
#: SentencePiece pieces never contain.  Encoders map them to a space before tokenising.
LINE_BREAKING = {"\n": " ", "\r": " ", "\x0b": " ", "\x0c": " ", "\x1c": " ", "\x1d": " ", "\x1e": " ",
                 "\x85": " ", "\u2028": " ", "\u2029": " "}
_LINE_BREAKING_TABLE = str.maketrans(LINE_BREAKING)
_LINE_BREAKING_RE = re.compile("[" + "".join(LINE_BREAKING) + "]")


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


def _raise_terminated(signum, frame):
    raise Terminated()


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
    """Fail early (before any work) on an output path that cannot be written: a directory, or a path whose
    parent is a file."""
    if path == "-":
        return path
    if os.path.isdir(path):
        raise UserError(f"{what} is a directory: {path}; give a file name")
    parent = os.path.dirname(os.path.abspath(path))
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if parent and not os.path.isdir(parent):
        raise UserError(f"cannot write {what} {path}: {parent} is a file, not a directory")
    if parent and not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"cannot write {what} {path}: directory {parent} is not writable")
    return path


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


def open_binary_input(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    require_file(path, "input file")
    if path.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def read_lines(path: str, errors: str = "strict", block_size: int = 1 << 22, start: int = 0,
               end: int | None = None, first_line: int = 0) -> Iterator[str]:
    """Yield the lines of ``path`` (``-`` = stdin) without their ``\\n`` / ``\\r\\n`` terminator.

    Only ``\\n`` ends a line, so a stray ``\\r`` or U+2028 inside a line never changes the line count.
    Undecodable UTF-8 raises :class:`UserError` naming file and line unless ``errors="replace"``.
    The file is read and decoded in blocks of whole lines, which is several times faster than line by line.
    ``start``/``end`` read only that byte range of a plain file (it must start at a line start);
    ``first_line`` is the number of lines before ``start``, for error messages.
    """
    name = "<stdin>" if path == "-" else path
    fh = open_binary_input(path)
    lineno = first_line
    remaining = None if end is None else end - start
    try:
        if start:
            fh.seek(start)
        rest = b""
        while True:
            if remaining is None:
                block = fh.read(block_size)
            else:
                block = fh.read(min(block_size, remaining)) if remaining > 0 else b""
                remaining -= len(block)
            if not block:
                break
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


def count_lines(path: str) -> int | None:
    """Number of lines of a plain file (fast byte count), or None when unknown (stdin, gzip)."""
    if path == "-" or path.endswith(".gz"):
        return None
    return split_lines_file(require_file(path, "input file"), 0)[0]


def split_lines_file(path: str, segment_bytes: int) -> tuple[int, list[tuple[int, int, int]]]:
    """Count the lines of a plain file and cut it into byte ranges of about ``segment_bytes`` that start at line
    starts (``segment_bytes <= 0``: one range).  Returns ``(lines, [(start, end, lines_before_start), ...])``.
    One sequential pass at disk speed; the ranges let worker processes read their own part of the file."""
    n = 0
    pos = 0
    last = b"\n"
    segments: list[tuple[int, int, int]] = []
    seg_start, seg_line = 0, 0
    with open(path, "rb") as fh:
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


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def make_temp_file(path: str, tag: str = "") -> tuple[int, str]:
    """A hidden temporary file next to ``path`` whose mode follows the umask (mkstemp alone gives 0600, which a
    rename would carry over to the output: unreadable to the group on a shared cluster)."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + "." + tag, suffix=".tmp", dir=directory)
    os.fchmod(fd, 0o666 & ~_umask())
    return fd, tmp


@contextlib.contextmanager
def atomic_output(path: str, mode: str = "w", encoding: str | None = "utf-8"):
    """Open ``path`` for writing through a temporary file that replaces ``path`` only on success.

    ``-`` writes to stdout.  On any exception (also Ctrl-C, and SIGTERM under :func:`run_main`) the temporary
    file is removed, so no partial output is left.  The file's mode follows the umask, like any file opened
    with ``open``.
    """
    if path == "-":
        if "b" in mode:
            yield sys.stdout.buffer
        else:
            yield sys.stdout
        sys.stdout.flush()
        return
    check_output_path(path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = make_temp_file(path)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror}") from None
    try:
        kwargs = {} if "b" in mode else {"encoding": encoding, "newline": "\n"}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def handle_sigterm() -> None:
    """Turn SIGTERM into :class:`Terminated` in this (main) process, so cleanup runs as for Ctrl-C."""
    signal.signal(signal.SIGTERM, _raise_terminated)


def run_main(main, argv=None) -> int:
    """Run a CLI ``main(argv)`` turning :class:`UserError` into a one-line message and exit status 2.

    Ctrl-C exits with 130 and SIGTERM with 143, after the same cleanup (temporary files removed), with one line
    instead of a traceback."""
    handle_sigterm()
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
