"""Reading text inputs strictly: files, ``.gz``, stdin and FIFOs, line by line or by byte range, with one-line
errors for undecodable UTF-8 and corrupt gzip data."""
from __future__ import annotations

import contextlib
import gzip
import os
import sys
from typing import IO, Iterable, Iterator

from preprocess.common import UserError, is_stream


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


def is_stream_input(path: str) -> bool:
    """``-``, ``/dev/stdin``, a FIFO or ``<(...)`` (``/dev/fd/N``), a character device: read once, in order."""
    return path in ("-", "/dev/stdin") or is_stream(path)


def require_input(path: str, what: str = "input file") -> str:
    """Like :func:`require_file`, but a FIFO, ``/dev/stdin`` or process substitution is a valid input too."""
    if path == "-" or (path and is_stream(path)):
        return path
    return require_file(path, what)


class PositionalReader:
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


#: what an undecodable line's message suggests by default: for a command with ``--errors`` (strict or replace)
ERRORS_HINT = "fix the input or pass --errors replace"
#: the suggestion of a reader whose command has no ``--errors``: what to do to the file
UTF8_HINT = "save the file as UTF-8"


def read_lines(path: str, errors: str = "strict", block_size: int = 1 << 22, start: int = 0,
               end: int | None = None, first_line: int = 0, fd: int | None = None,
               hint: str = ERRORS_HINT) -> Iterator[str]:
    """Yield the lines of ``path`` (``-`` = stdin) without their ``\\n`` / ``\\r\\n`` terminator.

    Only ``\\n`` ends a line, so a stray ``\\r`` or U+2028 inside a line never changes the line count.
    Undecodable UTF-8 raises :class:`UserError` naming file and line unless ``errors="replace"``; a corrupt or
    truncated ``.gz`` raises one naming file and position.
    The file is read and decoded in blocks of whole lines, which is several times faster than line by line.
    ``start``/``end`` read only that byte range of a plain file (it must start at a line start);
    ``first_line`` is the number of lines before ``start``, for error messages.  ``fd``: read this already open
    descriptor of ``path`` (positional reads; the name is used for messages only).  ``hint``: what the message of
    undecodable UTF-8 suggests after the place: an option the calling command has (:data:`ERRORS_HINT`, its
    ``--errors``), or, for a command without one, what to do to the file (:data:`UTF8_HINT`, or the reader's own).
    """
    name = "<stdin>" if path == "-" else path
    fh = PositionalReader(fd) if fd is not None else open_binary_input(path)
    if start:
        fh.seek(start)
    yield from lines_of(fh, name, errors, block_size, None if end is None else end - start, first_line, hint)


def lines_of(fh, name: str, errors: str = "strict", block_size: int = 1 << 22, remaining: int | None = None,
             first_line: int = 0, hint: str = ERRORS_HINT) -> Iterator[str]:
    """The lines of the open binary input ``fh`` as :func:`read_lines` gives them (closed at the end unless it
    is stdin); ``name`` is used in messages, ``hint`` as in :func:`read_lines`."""
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
            yield from _decode_lines(raw_lines, name, lineno, errors, hint)
            lineno += len(raw_lines)
        if rest:
            yield from _decode_lines([rest], name, lineno, errors, hint)
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


def _decode_lines(raw_lines: list[bytes], name: str, lineno: int, errors: str, hint: str) -> list[str]:
    try:
        text = b"\n".join(raw_lines).decode("utf-8", errors=errors)
    except UnicodeDecodeError:
        for i, raw in enumerate(raw_lines, lineno + 1):  # find the offending line for the message
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UserError(
                    f"{name}:{i}: invalid UTF-8 at byte {exc.start} ({exc.reason}); {hint}") from None
        raise
    lines = text.split("\n")
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines


def without_bom(lines: Iterable[str]) -> Iterator[str]:
    """``lines`` with a byte-order mark (U+FEFF) at the start of the first one dropped: an editor's or Excel's mark
    of the encoding, not text (a U+FEFF anywhere else is kept)."""
    it = iter(lines)
    for first in it:
        yield first[1:] if first.startswith("\ufeff") else first
        break
    yield from it


def count_lines(path: str, errors: str = "strict", hint: str = ERRORS_HINT) -> int:
    """The number of lines :func:`read_lines` yields for ``path`` (plain or ``.gz``): only ``\\n`` ends a line, so
    a stray ``\\r`` never adds one (text mode's universal newlines would), and a last line without ``\\n``
    counts.  The one line counter of the project; undecodable UTF-8 raises as in :func:`read_lines`."""
    return sum(1 for _ in read_lines(path, errors=errors, hint=hint))


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
    with (contextlib.nullcontext(PositionalReader(fd)) if fd is not None else open(path, "rb")) as fh:
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
