"""The manual: README.md is a start page (at most 12 KB as shown, its figures' markers not counted), docs/ builds with ``mkdocs build --strict`` (a broken link
or a page missing from the navigation fails), every relative link in README.md and docs/ resolves, and the quick
start in docs/ is the README's, command for command."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")


#: Markdown files kept as test data (an old version's README, tests/test_legacy_files.py): their links are that version's
FIXTURES = ("tests/data/",)


def markdown_files() -> list[Path]:
    """Every Markdown file of the repository (git's list, or the tree where git is absent), once: the dated results
    pages as bench/results/, not again through the docs/results link."""
    try:
        names = subprocess.run(["git", "ls-files", "*.md"], cwd=REPO, capture_output=True, text=True,
                               check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(REPO)) for p in REPO.rglob("*.md") if ".venv" not in p.parts]
    return sorted(REPO / n for n in set(names)
                  if not n.startswith(FIXTURES) and not n.startswith("docs/results/") and (REPO / n).is_file())


def relative_links(path: Path, text: str | None = None) -> list[str]:
    text = CODE.sub("", FENCE.sub("", path.read_text(encoding="utf-8") if text is None else text))
    return [t for t in LINK.findall(text) if not re.match(r"^[a-z]+:", t)]


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but hyphens and underscores dropped, spaces
    to hyphens (one hyphen per space); MkDocs' own anchors are checked by its strict build."""
    text = re.sub(r"`|\*|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set:
    seen, out = {}, set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", text), re.M):
        slug = github_slug(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def dead_links(path: Path, text: str | None = None) -> list[str]:
    """The links of ``path`` (or of ``text`` as if it were on ``path``) that do not resolve as written in the
    repository: a missing file, a path through the docs/results link (which only MkDocs' build has:
    scripts/mkdocs_hooks.py writes the site's paths), or an anchor that is none of the target's headings."""
    text = path.read_text(encoding="utf-8") if text is None else text
    dead = []
    for target in relative_links(path, text):
        file, _, anchor = target.partition("#")
        if not file:
            found = anchor in anchors(text)
        else:
            written = Path(os.path.normpath(path.parent / file))
            through = written.is_relative_to(REPO / "docs" / "results")
            found = written.exists() and not through
            if found and anchor and written.suffix == ".md":
                found = anchor in anchors(written.read_text(encoding="utf-8"))
        if not found:
            dead.append(target)
    return dead


def test_readme_is_a_start_page():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    shown = re.sub(r"<!--.*?-->", "", readme, flags=re.S)     # the figures' record markers are not read
    assert len(shown.encode("utf-8")) <= 12 * 1024
    first_block = re.search(r"^```bash\n(.*?)^```", readme, re.S | re.M).group(1)
    assert [line.split()[:2] for line in first_block.splitlines()] == [["make", "demo"], ["make", "test"]]


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(path):
    dead = dead_links(path)
    assert not dead, f"{path.relative_to(REPO)}: dead links: {dead}"


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
    page.write_text("# A `code` heading, here\n\nsee [there](nowhere.md), [here](page.md#x), [up](#a-code-heading-here)"
                    " and [down](#nope), not `[code](x.md)`\n", encoding="utf-8")
    assert relative_links(page) == ["nowhere.md", "page.md#x", "#a-code-heading-here", "#nope"]
    assert dead_links(page) == ["nowhere.md", "page.md#x", "#nope"]
    assert github_slug("8. bfloat16 on the CPU (`--cpu-bf16`)") == "8-bfloat16-on-the-cpu---cpu-bf16"
    through = REPO / "docs" / "benchmarks.md"
    assert dead_links(through, "[r](results/2026-12-02-bf16.md)") == ["results/2026-12-02-bf16.md"]
    assert dead_links(through, "[r](../bench/results/2026-12-02-bf16.md)") == []


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
