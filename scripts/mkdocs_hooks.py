"""MkDocs hook (mkdocs.yml ``hooks:``): the dated results pages live in bench/results/ and reach the site through
the docs/results link, so that every page's links are written as they resolve in the repository (on GitHub and in
an editor) and this hook turns them into the site's paths:

* on a manual page, ``../bench/results/X.md`` (from docs/) or ``../../bench/results/X.md`` (from docs/schemes/)
  becomes ``results/X.md`` / ``../results/X.md``;
* on a results page (the site's ``results/X.md``), ``../../docs/Y.md`` becomes ``../Y.md``.

Links are rewritten in the page's Markdown before it is rendered; fenced code is left as written."""
from __future__ import annotations

import posixpath
import re

LINK = re.compile(r"(?<!!)(\[[^\]]*\]\()([^)\s]+)(\))")


def site_target(page: str, target: str) -> str:
    """The link ``target`` of the page at ``page`` (its path under docs/) as the built site resolves it."""
    if re.match(r"^[a-z]+:", target) or target.startswith("#"):
        return target
    path, _, anchor = target.partition("#")
    in_repo = posixpath.normpath(posixpath.join("docs", posixpath.dirname(page), path))
    if page.startswith("results/"):     # the page itself is bench/results/NAME.md in the repository
        in_repo = posixpath.normpath(posixpath.join("bench/results", path))
    if in_repo.startswith("bench/results/"):
        site = "docs/results/" + in_repo[len("bench/results/"):]
    elif in_repo.startswith("docs/"):
        site = in_repo
    else:
        return target                   # outside both: left for MkDocs to report
    new = posixpath.relpath(site, posixpath.join("docs", posixpath.dirname(page)))
    return new + ("#" + anchor if anchor else "")


def on_page_markdown(markdown: str, page, config, files) -> str:
    src = page.file.src_uri
    parts = re.split(r"(^\s*```.*?^\s*```)", markdown, flags=re.S | re.M)
    for i in range(0, len(parts), 2):    # the odd pieces are fenced code (a link's text may hold inline code)
        parts[i] = LINK.sub(lambda m: m.group(1) + site_target(src, m.group(2)) + m.group(3), parts[i])
    return "".join(parts)
