"""The manual: README.md is a start page (at most 12 KB), docs/ builds with ``mkdocs build --strict`` (a broken link
or a page missing from the navigation fails), every relative link in README.md and docs/ resolves, and the quick
start in docs/ is the README's, command for command."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")


def markdown_files() -> list[Path]:
    return [REPO / "README.md", REPO / "CHANGELOG.md", *sorted((REPO / "docs").rglob("*.md"))]


def relative_links(path: Path) -> list[str]:
    text = CODE.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
    return [t for t in LINK.findall(text) if not re.match(r"^[a-z]+:", t) and not t.startswith("#")]


def test_readme_is_a_start_page():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode("utf-8")) <= 12 * 1024
    first_block = re.search(r"^```bash\n(.*?)^```", readme, re.S | re.M).group(1)
    assert [line.split()[:2] for line in first_block.splitlines()] == [["make", "demo"], ["make", "test"]]


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(path):
    missing = [t for t in relative_links(path) if not (path.parent / t.split("#")[0]).exists()]
    assert not missing, f"{path.relative_to(REPO)}: links to missing files: {missing}"


PRIVATE = re.compile(r"(?<!\w)/work/|(?<!\w)/home/|\bVM\b(?!\*)")   # not the example /abs/work/, not STTS's VM*


def test_no_page_names_the_machine_it_ran_on():
    """A result page says what ran and how (the command, the machine's cores and load), not where on the machine
    that recorded it: paths in it are relative to the checkout (``demo-output/``, ``../shared/data``)."""
    pages = markdown_files() + sorted((REPO / "bench" / "results").glob("*.md"))
    found = [f"{p.relative_to(REPO)}:{n}" for p in pages
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if PRIVATE.search(line)]
    assert not found, found
    assert PRIVATE.search("--output /work/demo44") and PRIVATE.search("an idle VM")
    assert not PRIVATE.search("--output demo44 on a 2-core machine, /abs/work/x, verbs (VV*, VM*)")


def test_the_link_check_sees_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("see [there](nowhere.md) and [here](page.md#x), not `[code](x.md)`\n", encoding="utf-8")
    assert relative_links(page) == ["nowhere.md", "page.md#x"]


def test_docs_quick_start_is_the_readme_quick_start():
    def bash_blocks(text):
        return re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Quick start.*?$(.*?)(?=^## )", readme, re.S | re.M).group(1)
    page = (REPO / "docs" / "quickstart.md").read_text(encoding="utf-8")
    assert bash_blocks(section) == bash_blocks(page)


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is installed by make install")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]
    assert (tmp_path / "site" / "index.html").exists()
