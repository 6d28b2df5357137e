"""Every repository path a page names exists: README.md and docs/**/*.md (CONTRACTS.md, the generated command
reference and the dated results included).

What counts as naming a repository path:
* a path that starts with one of the repository's own top-level folders or files (``train_scripts/...``,
  ``preprocess/...``, ``setup.py``), anywhere on the page (prose, code, command blocks), not inside a URL;
* a module path of the repository's packages in code (``python -m preprocess.evaluate.morph``,
  ``train_scripts.hub.load_translation``): its module (or package) must exist;
* a bare ``NAME.py`` / ``NAME.sh`` in code: a file of that name must be in the repository;
* a relative markdown link that leads into the repository.
Placeholders (``<name>``, ``NAME``, ``DATE``, ``*``, ``{a,b}``) are read as wildcards: something must match.
Paths the user creates (``work/``, ``ckpt/``, ``data-bin/``, ``OUT/...``, ``../shared/data``) do not start with
a repository folder and are not checked; the few that could collide with one are listed below."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import REPO

#: top-level names that a checkout gets from running things, not from the repository (see .gitignore): a page's
#: `work/wmt` or `.venv/bin/python` is the user's, even where that folder exists
USER_FOLDERS = {".venv", "build", "site", "work", "demo-output", "quickstart", "dist", "data-bin", "ckpt", "data"}

#: named on purpose although absent, each with the reason
ABSENT_ON_PURPOSE = {
    # prepare_wmt14_en_de.sh reads this checksum list if the user adds one; none ships (the page says so)
    "train_scripts/checksums/wmt14_en_de.sha256",
    # written by bench/scale_corpus.py when it is run (no such run is committed yet)
    "bench/results/DATE-TIME-scale-corpus.md",
}

#: names in code that are the user's own or written by a command, not the repository's
NOT_REPOSITORY_NAMES = {
    "FILE.py",                     # a placeholder: a scheme's module file
    "JOBID_submission.sh",         # written by submitit into the log folder
    "tokenization_morphtok.py",    # written by morphtok-export into the tokenizer folder
    "prepare-wmt14en2de.sh",       # fairseq's script (examples/translation), which prepare_wmt follows
    "preprocess.mine", "fairseq_plugins.mine",   # adding-a-scheme.md's example: the user's own scheme modules
}

PACKAGES = ("preprocess", "train_scripts", "fairseq_plugins", "bench", "scripts", "tests")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|\b(?:www\.|github\.com/|[\w-]+\.(?:org|com|io|net)/)\S*")
PLACEHOLDER = re.compile(r"<[^<>/]+>|\.\.\.|\b(?:[A-Z][A-Z0-9_]{2,}|N)\b|\*+|\$\w+|\$\{[^}]*\}")


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def roots() -> list[str]:
    """The repository's top-level folders and files (what a repository path starts with)."""
    return sorted(p.name for p in REPO.iterdir()
                  if p.name not in USER_FOLDERS and not p.name.startswith(".") and p.name != "__pycache__")


def compiled_modules() -> set[str]:
    """Modules setup.py compiles (they exist once built): setup.py's COMPILED values."""
    tree = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "COMPILED":
            return set(ast.literal_eval(node.value).values())
    return set()


def path_names(text: str) -> list[str]:
    """Repository paths the text names (see the module's docstring), in order."""
    text = URL.sub(" ", text)
    names = "|".join(re.escape(r) for r in roots())
    pattern = re.compile(rf"(?<![\w./$<>{{}}-])(?:\./)?((?:{names})(?:/[\w.*<>{{}},$-]*)*)")
    found = []
    for match in pattern.finditer(text):
        path = match.group(1).rstrip(".,;:")
        if "/" in path or "." in path and (REPO / path.split("/")[0]).is_file():
            found.append(path)
    return found


def code_of(text: str) -> list[str]:
    return [m.group(0) for m in FENCE.finditer(text)] + CODE.findall(FENCE.sub("", text))


def module_names(text: str) -> list[str]:
    pattern = re.compile(rf"(?<![\w./-])(?:{'|'.join(PACKAGES)})(?:\.(?:[A-Za-z_]\w*|\*))+")
    return [m for code in code_of(URL.sub(" ", text)) for m in pattern.findall(code)]


def file_names(text: str) -> list[str]:
    pattern = re.compile(r"(?<![\w./<>$*-])[\w-]+\.(?:py|sh)\b(?![\w/-])")
    return [m for code in code_of(URL.sub(" ", text)) for m in pattern.findall(code)]


def exists(path: str) -> bool:
    """Whether ``path`` (placeholders as wildcards, ``{a,b}`` as alternatives) names something in the repository."""
    braces = re.search(r"\{([^{}]*)\}", path)
    if braces:
        return all(exists(path[:braces.start()] + alt + path[braces.end():]) for alt in braces.group(1).split(","))
    glob = PLACEHOLDER.sub("*", path.rstrip("/"))
    if glob.endswith("/*") and "*" not in glob[:-2]:   # `train_scripts/...`: the folder
        glob = glob[:-2]
    if "*" not in glob:
        return (REPO / glob).exists()
    return any(REPO.glob(glob))


def module_exists(name: str) -> bool:
    parts = name.split(".")
    if parts[1] == "*" or name in compiled_modules():
        return True
    for k in range(len(parts), 1, -1):   # the longest module prefix; what follows it is an attribute
        base = REPO.joinpath(*parts[:k])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file() or base.is_dir():
            return True
    return False


def missing_in(page: Path, text: str) -> list[str]:
    tracked = {p.name for r in roots() for p in [REPO / r, *(REPO / r).rglob("*")] if p.is_file()}
    missing = [p for p in path_names(text) if p not in ABSENT_ON_PURPOSE and not exists(p)]
    missing += [m for m in module_names(text) if m not in NOT_REPOSITORY_NAMES and not module_exists(m)]
    missing += [f for f in file_names(text) if f not in NOT_REPOSITORY_NAMES and f not in tracked]
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        resolved = (page.parent / target.split("#")[0]).resolve()
        if resolved.is_relative_to(REPO.resolve()) and not resolved.exists():
            missing.append(target)
    return list(dict.fromkeys(missing))


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_repository_path_exists(page):
    missing = missing_in(page, page.read_text(encoding="utf-8"))
    assert not missing, f"{page.relative_to(REPO)} names repository paths that do not exist: {missing}"


def test_a_wrong_path_is_found(tmp_path):
    page = REPO / "docs" / "page.md"
    text = ("Run `bash train_scripts/prepare_wmt14_en_de.sh --out work/wmt`, then train_scripts/nothing.py; "
            "`python -m preprocess.nothing`, `pretrain_roberta.sh`, `gone.sh`, [a](../train_scripts/none.py), "
            "train_scripts/{binarize,gone}.py, tests/test_*_paper.py, https://example.org/train_scripts/x.py, "
            "`ckpt/x/train.log`, `preprocess/schemes/<name>.py`, `bench/results/DATE-make-bench.md`.\n")
    assert missing_in(page, text) == ["train_scripts/nothing.py", "train_scripts/{binarize,gone}.py",
                                      "preprocess.nothing", "gone.sh", "../train_scripts/none.py"]


def test_the_allow_lists_are_needed():
    """Each exception is still named by some page (else it is dropped from the list)."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages())
    unused = [n for n in sorted(ABSENT_ON_PURPOSE | NOT_REPOSITORY_NAMES) if n not in text]
    assert not unused, f"no page names these any more: remove them from the lists: {unused}"
