"""The manual's figures tied to their records: every measured figure in README.md and docs/ carries a marker naming
the record it comes from, and ``check`` compares the figure with the record.

A **record** is a small JSON file beside its dated results page, ``bench/results/NAME.json``::

    {"run": "what ran (the command)", "date": "2026-12-02", "commit": "86a7ac9",
     "machine": "2 cores, load 0.1 before / 0.3 after",
     "source": "how this file was made (written by the run, or transcribed from NAME.md's output)",
     "figures": {"minutes": 16.5, "tests": {"passed": 1426, "skipped": 2}}}

A **marker** follows its figure directly, as an HTML comment (invisible on GitHub, in MkDocs and in most
editors' previews)::

    `make test` took 16.5<!--fig:2026-12-02-make-test:minutes--> minutes

and resolves the dotted key inside the record's ``figures``.  The figure agrees when the record's value rounded
to the figure's decimals is the figure (``1,426`` and ``1426``, ``16`` for 16.4, ``+0.16`` for 0.158).  One record
is not a file: ``plan`` is the demo's plan computed from the code as ``morphtok-demo --dry-run`` prints it, in
minutes (``plan:default.all``, ``plan:fast.translation``: the presets as ``PRESETS`` below names them), so that a
planned time in the manual changes when the plan's figures do.

A measured figure without a marker (a number followed by a unit of time, ``tests`` or a speed ratio ``x``,
outside code) is an error on the manual's own pages (README.md, docs/ but not the dated results pages, whose
figures are their runs' output); a number of that shape that is a setting, not a measurement ("jobs time out after
90 minutes"), says so with ``<!--setting-->`` after it.

    python scripts/doc_figures.py check            # every page; one line per problem, exit 1 if any
    python scripts/doc_figures.py record DEMO_OUTPUT bench/results/NAME.json --run "make demo ..."
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"

#: a figure: a sign only where it is not a range's dash (``4-5``, ``4<!--...-->-5``)
NUMBER = r"(?:(?<![\d>])[-+\u2212])?\d[\d,]*(?:\.\d+)?"
#: a figure and its marker: ``35<!--fig:2026-11-29-make-test:minutes-->``
MARKED = re.compile(rf"(?P<figure>{NUMBER})<!--fig:(?P<record>[\w.-]+):(?P<key>[\w.\-]+)-->")
#: a marker not directly after a number (a space between them, or a word): an error of its own
MARKER = re.compile(r"<!--fig:[^>]*-->")
SETTING = "<!--setting-->"
#: a measured-looking figure: a number and a unit of time, a count of tests, or a ratio (``1.8x``)
MEASURED = re.compile(rf"(?<![\w.=/])(?<![A-Za-z]-)(?P<figure>{NUMBER})(?P<mark>(?:<!--[^>]*-->)?)"
                      r"(?P<unit>\s?(?:minutes?|min|hours?|seconds?|s|ms|tests)\b|x(?![\w]))")
FENCE = re.compile(r"^\s*```.*?^\s*```", re.S | re.M)
CODE = re.compile(r"`(?:[^`\n]|\n(?!\s*\n))*`")   # inline code, which may run over a line break

#: the preset combinations ``plan:NAME.PART`` computes (``morphtok-demo --dry-run`` with these options)
PRESETS = {"default": [], "fast": ["--mt-preset", "fast", "--lm-preset", "fast", "--de-preset", "fast"]}


def manual_pages() -> list[Path]:
    """The pages whose measured figures must carry markers: README.md and docs/ (not the dated results pages,
    reached through the docs/results link, nor the generated command reference)."""
    pages = [REPO / "README.md"]
    for root, dirs, files in os.walk(REPO / "docs"):
        dirs[:] = [d for d in dirs if not (Path(root) / d).is_symlink() and d != "reference"]
        pages += [Path(root) / f for f in files if f.endswith(".md")]
    return sorted(pages)


def all_pages() -> list[Path]:
    """Every page whose markers are resolved: the manual's, CHANGELOG.md and the dated results pages."""
    return sorted({*manual_pages(), REPO / "CHANGELOG.md", *RESULTS.glob("*.md")})


def prose(text: str) -> str:
    """The page without its code (fenced blocks and inline code blanked, line numbers kept)."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # noqa: E731
    return CODE.sub(blank, FENCE.sub(blank, text))


def as_number(figure: str) -> float:
    return float(figure.replace(",", "").replace("\u2212", "-"))


def decimals(figure: str) -> int:
    return len(figure.split(".")[1]) if "." in figure else 0


def agrees(figure: str, value) -> bool:
    """Whether ``figure`` as printed is ``value`` rounded to the figure's decimals."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    d = decimals(figure)
    return abs(as_number(figure) - value) <= 0.5 * 10 ** -d + 1e-9 * max(1.0, abs(value))


def lookup(figures: dict, key: str):
    value = figures
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(key)
        value = value[part]
    return value


class Records:
    """The records, read once each; ``plan`` computed from the demo's code."""

    def __init__(self, folder: Path = RESULTS):
        self.folder = folder
        self.cache: dict = {}

    def figures(self, name: str) -> dict:
        if name not in self.cache:
            if name == "plan":
                self.cache[name] = planned_minutes()
            else:
                path = self.folder / f"{name}.json"
                record = json.loads(path.read_text(encoding="utf-8"))   # OSError, ValueError: the caller's
                self.cache[name] = record["figures"]
        return self.cache[name]


def planned_minutes() -> dict:
    """``{preset: {part: minutes, "all": minutes}}``: the plan ``morphtok-demo --dry-run`` prints, per preset."""
    sys.path.insert(0, str(REPO))
    from train_scripts.demo import estimate
    from train_scripts.demo.main import build_parser, chosen, parse, part_settings
    from train_scripts.demo.parts import parts

    out = {}
    for name, options in PRESETS.items():
        every = parts()
        args = parse(build_parser(every), ["--output", "/nonexistent/demo-output", *options], every)
        row, total = {}, 0.0
        for part in chosen(args, every):
            settings = part_settings(part, args)
            seconds = estimate.wall(part.stage_costs(settings), settings.jobs)
            row[part.name] = seconds / 60
            total += seconds
        row["all"] = total / 60
        out[name] = row
    return out


def check_page(path: Path, records: Records, require_markers: bool) -> list:
    """Problems of one page, each ``PATH:LINE: what``."""
    text = prose(path.read_text(encoding="utf-8"))
    where = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    problems = []
    for n, line in enumerate(text.splitlines(), 1):
        bound = {m.start("record") - len("<!--fig:") for m in MARKED.finditer(line)}
        for m in MARKER.finditer(line):
            if m.start() not in bound:
                problems.append(f"{where}:{n}: marker {m.group(0)} does not follow a figure directly")
        for m in MARKED.finditer(line):
            figure, name, key = m.group("figure", "record", "key")
            try:
                value = lookup(records.figures(name), key)
            except (OSError, ValueError, KeyError) as exc:
                what = f"no key {key}" if isinstance(exc, KeyError) else f"no record {name} ({exc.__class__.__name__})"
                problems.append(f"{where}:{n}: {figure} names {name}:{key}, which has {what}")
                continue
            if not agrees(figure, value):
                problems.append(f"{where}:{n}: {figure} disagrees with its record {name}:{key} = {value}")
        if require_markers:
            for m in MEASURED.finditer(line):
                if not m.group("mark"):
                    problems.append(f"{where}:{n}: {m.group('figure')}{m.group('unit')} has no record "
                                    f"(a marker <!--fig:RECORD:KEY-->, or {SETTING} for a setting)")
    return problems


def check(pages: Optional[list] = None, records: Optional[Records] = None) -> list:
    records = records or Records()
    manual = set(manual_pages())
    return [p for page in (pages or all_pages()) for p in check_page(page, records, page in manual)]


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def record_of_demo(output: Path, run: str) -> dict:
    """A record of a finished ``morphtok-demo`` output folder: each part's minutes (wall, from its results'
    ``meta``), date and load at its end, and the digest of its results (``meta`` left out), with the commits its
    stages ran at; the results themselves stay in the output folder."""
    import hashlib

    sys.path.insert(0, str(REPO))
    from train_scripts.demo.demo_report import part_results
    from train_scripts.demo.parts import parts

    figures, dates, loads, commits = {}, [], [], set()
    for part, _, results in part_results(str(output), parts()):
        meta = dict(results.get("meta") or {})
        rest = {k: v for k, v in results.items() if k != "meta"}
        digest = hashlib.sha256(json.dumps(rest, sort_keys=True, default=str).replace(
            str(output.resolve()), "OUT").encode()).hexdigest()[:16]
        figures[part.name] = {"minutes": round(meta.get("seconds", 0) / 60, 2),
                              "seconds": round(meta.get("seconds", 0), 1), "results_sha256": digest}
        dates.append(meta.get("date") or "")
        load = meta.get("load")
        loads.append(f"{part.name} " + (" ".join(f"{x:.2f}" for x in load) if load else "?"))
        commits.update((meta.get("commits") or {}).keys())
    if not figures:
        raise SystemExit(f"error: {output}: no part's results.json (not a finished morphtok-demo output folder)")
    figures["all"] = {"minutes": round(sum(f["minutes"] for f in figures.values()), 2)}
    return {"run": run, "date": min(d for d in dates if d) if any(dates) else time.strftime("%Y-%m-%d"),
            "commit": ", ".join(sorted(commits)) or git("rev-parse", "--short", "HEAD"),
            "machine": f"{os.cpu_count()} cores; load average at each part's end: " + "; ".join(loads),
            "source": f"scripts/doc_figures.py record {output.name}", "figures": figures}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="resolve every page's markers; one line per problem")
    rec = sub.add_parser("record", help="write the record of a finished morphtok-demo output folder")
    rec.add_argument("output", type=Path)
    rec.add_argument("record", type=Path)
    rec.add_argument("--run", required=True, help="the command that ran, as the record states it")
    args = ap.parse_args(argv)
    if args.command == "check":
        problems = check()
        print("\n".join(problems) if problems else "every figure agrees with its record")
        return 1 if problems else 0
    record = record_of_demo(args.output, args.run)
    tmp = args.record.with_name(args.record.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, args.record)
    print(f"{args.record}: {len(record['figures']) - 1} part(s), {record['figures']['all']['minutes']} minutes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
