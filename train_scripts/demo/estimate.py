"""Time a user can plan: every part's stages with the seconds each is expected to take, the plan shown before a run
(and by ``--dry-run``), and the time left after each stage.

A part gives its stages in the order the scheduler takes them, each with a *kind* (``Part.stage_costs``); a kind's
seconds come from the preset's recorded figures (``FIGURES`` in the part's plan: one core's seconds per stage of
that kind, measured in a finished run on this project's 2-core machine) or, where the output folder holds a record
of that stage from an earlier run, from that record.  A part's time is its stages' seconds shared out over the
commands that run at once (``--jobs``): an estimate that ignores the waits of the dependencies, so a part with one
long stage (pretraining) finishes later than it says when fewer stages than jobs are left.

    costs = part.stage_costs(args)        # [Cost("lm/unigram/pretrain", "pretrain", 1530.0), ...]
    lines = plan_lines(part, args, costs) # what the dry run and the run's first lines show
    progress = Progress(costs, jobs, folder / ".stages")   # Stages calls progress.done(name) after each stage
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Optional


@dataclass
class Cost:
    stage: str                # the stage's name (its record: .stages/<name with / as __>.json)
    kind: str                 # what it does (a key of the part's FIGURES)
    seconds: Optional[float]  # one core's seconds expected; None: no figure for this preset


def record_seconds(folder: Path, stage: str) -> Optional[float]:
    """The seconds a finished stage took, from its record in ``folder`` (``.stages``), or None."""
    path = folder / f"{stage.replace('/', '__')}.json"
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return saved.get("seconds")


def costs_from(stages: list, figures: Optional[dict]) -> list:
    """``[(stage, kind)]`` with the preset's seconds per kind (None when the preset has no figures)."""
    return [Cost(stage, kind, None if figures is None or kind not in figures else float(figures[kind]))
            for stage, kind in stages]


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def wall(costs: list, jobs: int, done: Optional[Path] = None) -> Optional[float]:
    """The part's expected wall seconds: its stages' seconds over ``jobs`` commands at once; a stage recorded in
    ``done`` (a resumed run) costs nothing.  None when a stage has no figure."""
    total = 0.0
    for c in costs:
        if done is not None and record_seconds(done, c.stage) is not None:
            continue
        if c.seconds is None:
            return None
        total += c.seconds
    return total / max(1, jobs)


def plan_lines(name: str, costs: list, jobs: int, threads: int, preset: str, done: Optional[Path] = None) -> list:
    """The plan of a part: its stages by kind in the scheduler's order, how many run at once, and the estimate."""
    kinds: dict = {}
    for c in costs:
        k = kinds.setdefault(c.kind, {"n": 0, "seconds": c.seconds, "recorded": 0})
        k["n"] += 1
        if done is not None and record_seconds(done, c.stage) is not None:
            k["recorded"] += 1
    order = ", ".join(f"{k} x{v['n']}" + (f" (~{minutes(v['seconds'])} each)" if v["seconds"] is not None else "")
                      + (f", {v['recorded']} done" if v["recorded"] else "") for k, v in kinds.items())
    estimate = wall(costs, jobs, done)
    left = sum(1 for c in costs if done is None or record_seconds(done, c.stage) is None)
    when = (f"about {minutes(estimate)}" if estimate is not None else
            f"no estimate (preset {preset} has no recorded figures on this machine)")
    return [f"# the {name} part: {len(costs)} stages ({left} to run), {jobs} command(s) at a time with {threads} "
            f"torch thread(s) each; {when}",
            f"#   by kind, in the order the scheduler reaches them: {order}"]


class Progress:
    """The time left of a part, said after each stage: ``Stages`` calls :meth:`done` with the stage's name."""

    def __init__(self, costs: list, jobs: int, records: Optional[Path] = None):
        self.left = {c.stage: c for c in costs}
        self.jobs = max(1, jobs)
        self.lock = threading.Lock()
        self.records = records

    def done(self, stage: str) -> str:
        """``" - N stages left, about M min"`` after ``stage``, or "" for a stage the plan does not list."""
        with self.lock:
            if self.left.pop(stage, None) is None:
                return ""
            n = len(self.left)
            if not n:
                return " - the part's last stage"
            seconds = [c.seconds for c in self.left.values()]
            if any(s is None for s in seconds):
                return f" - {n} stage(s) left"
            return f" - {n} stage(s) left, about {minutes(sum(seconds) / self.jobs)} at {self.jobs} at a time"
