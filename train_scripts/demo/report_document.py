"""One report, two outputs: the demo's parts give lists of :class:`Section`, rendered here to Markdown
(``REPORT.md``) and to a self-contained HTML page (``report.html``, plots embedded as data URIs).

A section is a heading and its blocks, in order: :class:`Table`, :class:`Para`, :class:`Bullets`, :class:`Image`,
:class:`Code`.  A part's report is a list of *section functions*, each ``f(context) -> [Section, ...]`` (empty
when it has nothing to show): adding a table to the report is one function and one entry in that list, and both
outputs show it.  The marks (``UP``/``DOWN``), the page's style and the plots' matplotlib set-up are defined once,
here and in ``train_scripts/demo/report_plots.py``.
"""
from __future__ import annotations

import base64
import html
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Union

#: significantly higher / lower than the baseline row, in every part
UP, DOWN = "▲", "▼"

__all__ = ["UP", "DOWN", "Table", "Para", "Bullets", "Image", "Code", "Section", "collect", "markdown", "html_page",
           "write"]


@dataclass
class Table:
    """Rows of cells, the first the header; columns before ``left`` are text, the others numbers."""
    rows: list
    left: int = 1
    css: str = ""                    # an html class for the table (e.g. "tokens": monospace cells)


@dataclass
class Para:
    """A paragraph; ``strong`` is a bold lead-in (``**Example 1:** text``)."""
    text: str
    strong: str = ""
    css: str = ""                    # an html class ("lead": the report's opening findings)


@dataclass
class Bullets:
    items: list


@dataclass
class Image:
    alt: str
    path: str                        # a PNG; Markdown links it by its file name, html embeds it


@dataclass
class Code:
    lines: list
    lang: str = "bash"


Block = Union[Table, Para, Bullets, Image, Code]


@dataclass
class Section:
    heading: str
    blocks: list = field(default_factory=list)
    level: int = 2                   # 1: the title; 2: a section; 3: a subsection


def collect(functions: Iterable[Callable], context) -> list:
    """Every section the functions give for ``context``, in the functions' order."""
    return [section for f in functions for section in (f(context) or [])]


# --- tables ---------------------------------------------------------------------------------------------------

def markdown_table(table: list, left: int = 1) -> str:
    header, *body = table
    esc = lambda c: str(c).replace("|", "\\|")  # noqa: E731
    align = ["---"] * left + ["---:"] * (len(header) - left)
    lines = ["| " + " | ".join(esc(h) for h in header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


def html_table(table: list, left: int = 1) -> str:
    """Columns before ``left`` are text (left-aligned), the others numbers (right-aligned)."""
    header, *body = table

    def cls(i):
        return ' class="l"' if i < left else ""

    out = ["<table>", "<tr>" + "".join(f"<th{cls(i)}>{html.escape(str(h))}</th>" for i, h in enumerate(header))
           + "</tr>"]
    for row in body:
        out.append("<tr>" + "".join(f"<td{cls(i)}>{html.escape(str(c))}</td>" for i, c in enumerate(row)) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


# --- Markdown -------------------------------------------------------------------------------------------------

def _md_block(b: Block, base: str) -> str:
    if isinstance(b, Table):
        return markdown_table(b.rows, left=b.left)
    if isinstance(b, Para):
        return f"**{b.strong}**" + (f" {b.text}" if b.text else "") if b.strong else b.text
    if isinstance(b, Bullets):
        return "\n".join(f"- {x}" for x in b.items)
    if isinstance(b, Image):
        link = os.path.relpath(os.path.abspath(b.path), os.path.abspath(base)) if base else os.path.basename(b.path)
        return f"![{b.alt}]({link})"
    if isinstance(b, Code):
        return "\n".join([f"```{b.lang}", *b.lines, "```"])
    raise TypeError(f"not a report block: {b!r}")


def markdown(sections: list, base: str = "") -> str:
    """The sections as Markdown, a blank line between blocks; images linked relative to ``base``, the report's
    folder (a part's plots may lie in a folder of their own), or by their file name."""
    out = []
    for s in sections:
        out.append("#" * s.level + " " + s.heading)
        out += [_md_block(b, base) for b in s.blocks]
    return "\n\n".join(out) + "\n"


# --- HTML -----------------------------------------------------------------------------------------------------

#: the page's style, shared by every part
CSS = ("body{font-family:sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;line-height:1.4}"
       "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;"
       "vertical-align:top}.l{text-align:left}table.tokens td{font-family:monospace;font-size:90%}"
       "p.lead{font-size:105%}img{max-width:100%}code{font-size:90%}pre{background:#f6f6f6;padding:1em;"
       "overflow-x:auto}")


def _data_uri(path: str) -> str:
    with open(path, "rb") as fh:
        return "data:image/png;base64," + base64.b64encode(fh.read()).decode("ascii")


def _inline(text: str) -> str:
    """Text as html: escaped, Markdown's `code` spans as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(str(text)))


def _html_block(b: Block) -> str:
    e = html.escape
    if isinstance(b, Table):
        table = html_table(b.rows, left=b.left)
        return table.replace("<table>", f'<table class="{b.css}">', 1) if b.css else table
    if isinstance(b, Para):
        css = f' class="{b.css}"' if b.css else ""
        strong = f"<strong>{e(b.strong)}</strong>" + (" " if b.text else "") if b.strong else ""
        return f"<p{css}>{strong}{_inline(b.text)}</p>"
    if isinstance(b, Bullets):
        return "<ul>" + "".join(f"<li>{_inline(x)}</li>" for x in b.items) + "</ul>"
    if isinstance(b, Image):
        return f'<p><img alt="{e(b.alt)}" src="{_data_uri(b.path)}"></p>'
    if isinstance(b, Code):
        return "<pre>" + e("\n".join(b.lines)) + "</pre>"
    raise TypeError(f"not a report block: {b!r}")


def html_page(sections: list, title: str) -> str:
    """The sections as one self-contained page (``title``: the browser tab's)."""
    parts = []
    for s in sections:
        parts.append(f"<h{s.level}>{html.escape(s.heading)}</h{s.level}>")
        parts += [_html_block(b) for b in s.blocks if not (isinstance(b, Para) and not b.text and not b.strong)]
    return (f"<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>\n"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")


def write(sections: list, outdir: str, title: str) -> dict:
    """``REPORT.md`` and ``report.html`` of the sections into ``outdir``; their paths."""
    os.makedirs(outdir, exist_ok=True)
    paths = {"markdown": os.path.join(outdir, "REPORT.md"), "html": os.path.join(outdir, "report.html")}
    with open(paths["markdown"], "w", encoding="utf-8") as fh:
        fh.write(markdown(sections, base=outdir))
    with open(paths["html"], "w", encoding="utf-8") as fh:
        fh.write(html_page(sections, title))
    return paths

