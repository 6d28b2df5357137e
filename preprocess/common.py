"""Small pieces shared by every scheme: user errors, safe file output, strict line reading."""
from __future__ import annotations

import contextlib
import gzip
import os
import re
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


def require_file(path: str, what: str) -> str:
    if not path:
        raise UserError(f"no {what} given")
    if not os.path.isfile(path):
        raise UserError(f"{what} not found: {path}")
    return path


def open_binary_input(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    require_file(path, "input file")
    if path.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def read_lines(path: str, errors: str = "strict", block_size: int = 1 << 22) -> Iterator[str]:
    """Yield the lines of ``path`` (``-`` = stdin) without their ``\\n`` / ``\\r\\n`` terminator.

    Only ``\\n`` ends a line, so a stray ``\\r`` or U+2028 inside a line never changes the line count.
    Undecodable UTF-8 raises :class:`UserError` naming file and line unless ``errors="replace"``.
    The file is read and decoded in blocks of whole lines, which is several times faster than line by line.
    """
    name = "<stdin>" if path == "-" else path
    fh = open_binary_input(path)
    lineno = 0
    try:
        rest = b""
        while True:
            block = fh.read(block_size)
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
    n = 0
    last = b"\n"
    with open(path, "rb") as fh:
        while True:
            block = fh.read(1 << 20)
            if not block:
                break
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


@contextlib.contextmanager
def atomic_output(path: str, mode: str = "w", encoding: str | None = "utf-8"):
    """Open ``path`` for writing through a temporary file that replaces ``path`` only on success.

    ``-`` writes to stdout.  On any exception the temporary file is removed, so no partial output is left.
    """
    if path == "-":
        if "b" in mode:
            yield sys.stdout.buffer
        else:
            yield sys.stdout
        sys.stdout.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        kwargs = {} if "b" in mode else {"encoding": encoding, "newline": "\n"}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def run_main(main, argv=None) -> int:
    """Run a CLI ``main(argv)`` turning :class:`UserError` into a one-line message and exit status 2."""
    try:
        return main(argv) or 0
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
