"""Every message docs/troubleshooting.md quotes is one that something prints: this project's code (preprocess/,
train_scripts/, fairseq_plugins/, scripts/, tests/conftest.py, the Makefile) or what it runs (fairseq, torch,
submitit, sentencepiece, Python's argparse), a ``...`` (or PATH, DIR, N, M, X, Y) in the page standing for the
part that varies.

The page's messages: each entry's bold lead when it is a quoted message (``**`message`**``), and every other
code span that reads as a message (four words or more, or a parenthesised reason, and not a command line). A
message matches a string literal of the sources, an f-string's fields and %/{} placeholders varying too."""
from __future__ import annotations

import ast
import functools
import importlib.util
import re
import sys
import warnings
from pathlib import Path

import pytest

from conftest import REPO

PAGE = REPO / "docs" / "troubleshooting.md"

#: the page's words that stand for a varying part, besides ``...``
PLACEHOLDERS = ("PATH", "DIR", "N", "M", "X", "Y")

#: printed by something whose text cannot be read here, or put together from two places, each with the line of
#: code that raises or prints it (package, or "repo"; file under its folder; the text that must be there)
NOT_IN_TEXT = {
    # torch's CUDA caching allocator (C++, c10/cuda/CUDACachingAllocator.cpp): not in a CPU-only build's files
    "CUDA out of memory. Tried to allocate ...": ("torch", "cuda/__init__.py", "OutOfMemoryError"),
    # fairseq's import_user_module raises it with the path as the whole message
    "FileNotFoundError: .../fairseq_plugins": ("fairseq", "utils.py", "raise FileNotFoundError(module_path)"),
    # Python's import system: _ERR_MSG_PREFIX + repr(name)
    "No module named 'torch'": ("importlib", "_bootstrap.py", "_ERR_MSG_PREFIX = 'No module named '"),
    "No module named 'fairseq'": ("importlib", "_bootstrap.py", "_ERR_MSG_PREFIX = 'No module named '"),
    # preprocess.common.require_file's f"{what} not found: {path}", with what = "SentencePiece model"
    "SentencePiece model not found: PATH": ("repo", "preprocess/models/spm_model.py", 'require_file(path, "SentencePiece model")'),
}

#: a quoted message may carry the prefix the command line adds: run_main's ``error: `` (preprocess/common.py) or
#: argparse's ``PROG: error: ``
PREFIX = re.compile(r"^(\S+: )?error: ")

STAR = None   # a varying part, in a message pattern or a source template

CODE_SPAN = re.compile(r"`([^`]+)`")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
COMMAND_WORDS = {"make", "python", "bash", "source", "pytest", "pip"}


# --- the page ------------------------------------------------------------------------------------------------

def paragraphs(text: str) -> list[str]:
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", FENCE.sub("", text)) if p.strip()]


def is_command(span: str) -> bool:
    """A command line or code, not a message: ``make demo``, ``--user-dir $(...)``, ``from_pretrained(...)``."""
    words = span.split()
    first = words[0]
    if first.endswith(":"):
        return False
    return (first in COMMAND_WORDS or first.endswith(".sh") or first.startswith("$")
            or re.match(r"^(morphtok|fairseq)-[\w-]+$", first) is not None
            or (first.startswith("-") and len(words) > 1 and words[1][:1] in "$(")
            or re.match(r"^[a-z_][\w.]*[(=]", first) is not None)


def quoted_messages(text: str) -> list[str]:
    """The messages a troubleshooting page quotes (see the module's docstring), in page order, once each."""
    found = []
    for para in paragraphs(text):
        lead = re.match(r"^\*\*(.+?)\*\*", para)
        body = para
        if lead:
            spans = CODE_SPAN.findall(lead.group(1))
            rest = CODE_SPAN.sub("", lead.group(1)).strip(" /")
            if spans and re.fullmatch(r"(\w+:)?", rest):   # the entry is named by the message(s) it is about
                found += spans
            body = para[lead.end():]
        for span in CODE_SPAN.findall(body):
            if (len(span.split()) >= 4 or span.startswith("(")) and not is_command(span):
                found.append(span)
    return list(dict.fromkeys(found))


def message_pattern(message: str) -> list:
    """The message as a pattern: its characters, STAR for each varying part; a quoted message may be part of a
    longer one, so it starts and ends with STAR."""
    text = PREFIX.sub("", message)
    if text.startswith("(") and text.endswith(")"):   # a parenthesised reason, quoted from inside a message
        text = text[1:-1]
    words = "|".join(PLACEHOLDERS)
    parts = re.split(rf"\.\.\.|\b(?:{words})\b", text)
    pattern: list = [STAR]
    for i, part in enumerate(parts):
        if i:
            pattern.append(STAR)
        pattern += list(part)
    return compact(pattern + [STAR])


# --- the sources -----------------------------------------------------------------------------------------------

PERCENT = re.compile(r"%(\([^)]*\))?[-#0 +]*\d*(\.\d+)?[sdrifgxXc]|\{[^{}]*\}")
SHELL_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
SHELL_EXPANSION = re.compile(r"\$\(\(.*?\)\)|\$\([^)]*\)|\$\{[^}]*\}|\$\w+")


def compact(pattern: list) -> list:
    """Whitespace runs as one space, STAR runs as one STAR."""
    out: list = []
    for c in pattern:
        if c is not STAR and c.isspace():
            c = " "
        if out and (c is STAR and out[-1] is STAR or c == " " and out[-1] == " "):
            continue
        out.append(c)
    return out


def with_stars(text: str, placeholder: re.Pattern) -> list:
    pattern: list = []
    last = 0
    for m in placeholder.finditer(text):
        pattern += list(text[last:m.start()].replace("%%", "%")) + [STAR]
        last = m.end()
    return pattern + list(text[last:].replace("%%", "%"))


def python_templates(text: str) -> list[list]:
    """Every string literal of a Python file as a pattern (f-string fields, %- and {}-placeholders: STAR)."""
    try:
        with warnings.catch_warnings():   # invalid escapes in other packages' sources
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except SyntaxError:
        return []
    templates = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            templates.append(compact(with_stars(node.value, PERCENT)))
        elif isinstance(node, ast.JoinedStr):
            pattern: list = []
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    pattern += list(value.value)
                else:
                    pattern.append(STAR)
            templates.append(compact(pattern))
    return templates


def shell_templates(text: str) -> list[list]:
    """Every double-quoted string of a shell script or Makefile as a pattern (expansions: STAR)."""
    return [compact(with_stars(m.group(1), SHELL_EXPANSION)) for m in SHELL_STRING.finditer(text)]


@functools.lru_cache(maxsize=None)
def repo_files() -> list[Path]:
    files = [p for d in ("preprocess", "train_scripts", "fairseq_plugins", "scripts")
             for p in sorted((REPO / d).rglob("*")) if p.suffix in (".py", ".sh")]
    return files + [REPO / "tests" / "conftest.py", REPO / "Makefile"]


def package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    origin = Path(spec.origin)
    return origin.parent if origin.name == "__init__.py" else origin.parent


@functools.lru_cache(maxsize=None)
def package_files() -> list[Path]:
    """What this project runs: fairseq, torch, submitit and sentencepiece's Python files, argparse and the import
    system of the standard library."""
    stdlib = Path(ast.__file__).parent
    files = [stdlib / "argparse.py", stdlib / "importlib" / "_bootstrap.py"]
    for name in ("fairseq", "submitit", "sentencepiece", "torch"):
        folder = package_dir(name)
        if folder is not None:
            files += sorted(folder.rglob("*.py"))
    return files


@functools.lru_cache(maxsize=None)
def read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


@functools.lru_cache(maxsize=None)
def templates_of(path: Path) -> list[list]:
    text = read(path)
    return python_templates(text) if path.suffix == ".py" else shell_templates(text)


# --- matching ----------------------------------------------------------------------------------------------------

def can_match(a: list, b: list) -> bool:
    """Whether some text matches both the message ``a`` and the template ``b`` (characters and STARs, a STAR any
    run of characters), a STAR of the template standing for no space of the message's fixed text: an example value
    in the message (``'en'``, ``9``, ``input``) may fill a field of the template, but several words of it may not
    (they are a varying part the page must write as ``...``)."""
    n, m = len(a), len(b)
    below = [False] * (m + 1)   # row i + 1
    for i in range(n, -1, -1):
        row = [False] * (m + 1)
        for j in range(m, -1, -1):
            if i == n and j == m:
                row[j] = True
            elif i < n and a[i] is STAR:
                row[j] = below[j] or (j < m and row[j + 1])
            elif j < m and b[j] is STAR:
                row[j] = row[j + 1] or (i < n and a[i] != " " and below[j])
            elif i < n and j < m and a[i] == b[j]:
                row[j] = below[j + 1]
        below = row
    return below[0]


def anchors(pattern: list) -> list[str]:
    """The three longest words of the message's fixed text: a string that has none of them cannot be it."""
    text = "".join(" " if c is STAR else c for c in pattern)
    return sorted(set(re.findall(r"[\w'-]+", text)), key=lambda w: (-len(w), w))[:3]


def printed_by(message: str, files: list[Path]) -> Path | None:
    pattern = message_pattern(message)
    words = anchors(pattern)
    need = min(2, len(words))   # one of them may be an example value that fills a field of the template
    for path in files:
        if sum(w in read(path) for w in words) >= need:
            for template in templates_of(path):
                fixed = "".join(c for c in template if c is not STAR)
                if sum(w in fixed for w in words) >= need and can_match(pattern, template):
                    return path
    return None


def unprinted(messages: list[str], packages: bool = True) -> list[str]:
    """The messages nothing prints (with ``packages=False``: nothing in this repository)."""
    missing = []
    for message in messages:
        if message in NOT_IN_TEXT:
            continue
        if printed_by(message, repo_files()) is None and \
                (not packages or printed_by(message, package_files()) is None):
            missing.append(message)
    return missing


# --- the tests ---------------------------------------------------------------------------------------------------

def test_the_page_quotes_messages():
    messages = quoted_messages(PAGE.read_text(encoding="utf-8"))
    assert len(messages) >= 20, messages
    assert "Weights only load failed" in messages and "output X is the same file as input Y: refusing to " \
        "overwrite it" in messages
    assert not [m for m in messages if m.startswith(("make ", "python ", "bash ", "--user-dir $("))], messages


def test_every_quoted_message_is_printed_by_something():
    missing = unprinted(quoted_messages(PAGE.read_text(encoding="utf-8")))
    assert not missing, f"docs/troubleshooting.md quotes messages that nothing prints: {missing}"


@pytest.mark.parametrize("message", sorted(NOT_IN_TEXT))
def test_the_messages_read_elsewhere_are_on_the_page_and_their_code_is_there(message):
    assert message in quoted_messages(PAGE.read_text(encoding="utf-8")), f"no longer quoted: drop it: {message}"
    package, relpath, code = NOT_IN_TEXT[message]
    folder = {"importlib": Path(ast.__file__).parent / package, "repo": REPO}.get(package) or package_dir(package)
    if folder is None:
        pytest.skip(f"{package} is not installed")
    assert code in read(folder / relpath), f"{package}/{relpath} no longer has {code!r}"


def test_a_changed_message_fails():
    text = PAGE.read_text(encoding="utf-8")
    changed = text.replace("refusing to overwrite it", "refusing to replace it")
    assert changed != text
    ours = [m for m in quoted_messages(text) if printed_by(m, repo_files())]   # (other packages: slow to search)
    assert "output X is the same file as input Y: refusing to overwrite it" in ours
    changed_ours = [m.replace("overwrite", "replace") for m in ours]
    assert unprinted(changed_ours, packages=False) == ["output X is the same file as input Y: refusing to replace it"]
    assert unprinted([m for m in quoted_messages(changed) if m not in changed_ours]) == []


def test_the_matching():
    template = compact(with_stars("cannot write %s: %s%s; nothing was written", PERCENT))
    assert can_match(message_pattern("cannot write PATH: ...; nothing"), template)
    assert can_match(message_pattern("cannot write out.txt: ...; nothing"), template)   # an example value
    assert not can_match(message_pattern("cannot write PATH: No space left (disk full); nothing"), template)
    assert not can_match(message_pattern("cannot write PATH to disk"), list("cannot write x: y"))
    assert can_match(message_pattern("prog: error: no data: DIR missing"), [*"no data: ", STAR, *" missing"])
    assert quoted_messages("**`a b c d`** and `make demo now please` and `e f g h i`.\n") == ["a b c d", "e f g h i"]


if __name__ == "__main__":   # list what the page quotes and where each is printed
    for m in quoted_messages(PAGE.read_text(encoding="utf-8")):
        where = NOT_IN_TEXT.get(m) or printed_by(m, repo_files()) or printed_by(m, package_files())
        print(f"{m!r}\n    {where}", file=sys.stderr)
