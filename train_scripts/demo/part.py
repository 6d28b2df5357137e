"""A part of ``make demo``: the interface every part implements, and what the run skeleton hands each one.

A part is one question asked on real data (the translation comparison, RoBERTa pretraining -> fine-tuning, ...).
``train_scripts/demo/main.py`` owns everything the parts share: it builds one parser from every part's options,
reads the command line once, asks each chosen part for its settings (every error before any work), sets ``--jobs``
and ``--threads`` by one policy (:func:`jobs_and_threads`), runs each part on a fresh :class:`Context` (the
scheduler, the command runner and the resumable stages of ``stages.py``, in the part's own folder), writes each
part's ``results.json`` and then the one report (``demo_report.py``) from every part's sections.  A part therefore
holds only its question:

    class MyPart(Part):
        name, title = "mine", "what it asks"
        def add_options(self, group): group.add_argument("--mine-size", type=int, default=10)
        def settings(self, options): return argparse.Namespace(size=options.mine_size, device="cpu")
        def plan(self, args): return ["python -m something --size 10"]
        def run(self, args, ctx): return {"answer": ctx.stages.run("mine/answer", [], lambda: 42)}
        def sections(self, results, folder, relative=""): return [Section("Mine", [Para(str(results["answer"]))])]

    PART = MyPart()      # in its own module (a folder of its own: train_scripts/demo/mine/__init__.py), listed in
                         # train_scripts/demo/parts.py's PARTS or in MORPHTOK_DEMO_PARTS (module names, comma-separated)

The parts ``make demo`` runs, in order: :data:`train_scripts.demo.parts.PARTS`, then those of ``MORPHTOK_DEMO_PARTS``.
"""
from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path

from preprocess.common import UserError
from train_scripts.demo.stages import Scheduler, StageRunner, Stages


@dataclass
class Context:
    """What the run skeleton hands a part's :meth:`Part.run`: where it writes and what runs its steps."""

    output: Path                  # the demo's --output
    folder: Path                  # this part's folder (its stages, logs and results.json)
    runner: StageRunner           # runs a command, logged, in commands.txt (here or as a SLURM job: --launcher)
    stages: Stages                # resumable stages, recorded in folder/.stages
    scheduler: Scheduler          # at most `jobs` commands at a time (a SlotRunner holds a slot per command)
    jobs: int
    threads: int
    argv: list = field(default_factory=list)   # the demo's command line, for the report


class Part:
    """One part of the demo.  Subclasses set :attr:`name` and :attr:`title` and implement the methods below;
    the run skeleton (``main.py``) calls them in this order: :meth:`add_options` (building the one parser),
    :meth:`settings`, :meth:`width` and :meth:`device` (the ``--jobs`` policy), then :meth:`plan` (``--dry-run``)
    or :meth:`run`, and :meth:`sections` whenever the report is written."""

    #: ``--part NAME``; the part's folder is ``OUTPUT/NAME`` (:meth:`folder`)
    name: str = ""
    #: one line for ``--help`` and the plan
    title: str = ""
    #: the option that chooses the part's preset (named in the pre-flight's refusals)
    preset_flag: str = "--preset"
    #: bytes a run of each preset writes into the part's folder (the pre-flight's disk check; ``preflight.py``)
    disk: dict = {}
    #: the part's inputs in the shared data folder: ``{option: path relative to it}``.  ``morphtok-demo
    #: --shared-data DIR`` (``make demo SHARED=DIR``) sets each such option that the command line leaves unset to
    #: ``DIR/path``; without ``--shared-data`` the options keep their own defaults
    shared_inputs: dict = {}
    #: those of :attr:`shared_inputs` that the part can do without (it falls back, e.g. to a download): set from
    #: ``--shared-data`` only when the path is there
    optional_inputs: frozenset = frozenset()

    def add_options(self, group: argparse._ArgumentGroup) -> None:
        """The part's own options, in its group of the demo's parser (names that no other part uses)."""

    def settings(self, options: argparse.Namespace) -> argparse.Namespace:
        """The part's settings from the parsed command line; a bad option or a missing input is a
        :class:`UserError` (one line), raised before any part runs.  Must not create anything."""
        raise NotImplementedError

    def check_inputs(self, args: argparse.Namespace) -> None:
        """The pre-flight's look at the inputs' contents (``preflight.check``, before the first stage of any
        part): small inputs read whole, large ones sampled, by the readers the stages use; a bad file is one
        :class:`UserError` naming the part's option, the file and the line.  Must not create anything."""

    def device(self, args: argparse.Namespace) -> str:
        """``cpu`` or ``gpu``: what the chosen preset runs on."""
        return getattr(args, "device", "cpu")

    def width(self, args: argparse.Namespace) -> int:
        """How many of the part's commands can usefully run at once (the ``--jobs`` default is at most this)."""
        return 1_000_000

    def folder(self, output: Path) -> Path:
        return output / self.name

    def disk_bytes(self, args: argparse.Namespace) -> int:
        """What a run with these settings writes, about (0: unknown)."""
        return int(self.disk.get(getattr(args, "preset", ""), 0))

    def stage_costs(self, args: argparse.Namespace) -> list:
        """Every stage the part will run, in the order the scheduler takes them, with one core's seconds each
        from the preset's recorded figures (``estimate.Cost``); [] when the part cannot say."""
        return []

    def plan(self, args: argparse.Namespace) -> list:
        """The commands the part would run (``--dry-run``), as lines; ``#`` lines are comments."""
        raise NotImplementedError

    def run(self, args: argparse.Namespace, ctx: Context) -> dict:
        """Run every stage of the part (on ``ctx``); its results (JSON), which the skeleton writes to
        ``folder/results.json`` with the run's common facts under ``meta``.  Raise ``PipelineError`` or
        ``UserError`` on failure."""
        raise NotImplementedError

    def sections(self, results: dict, folder: str, relative: str = "") -> list:
        """The part's sections of the one report (``report_document.Section``), its plots drawn into ``folder``;
        ``relative``: ``folder`` relative to the report's."""
        raise NotImplementedError

    def refresh(self, results: dict, folder: str) -> dict:
        """The results with what is computed from them recomputed (``python -m train_scripts.demo.demo_report``
        after a change of the analysis code); by default unchanged."""
        return results

    def provenance(self, results: dict) -> dict:
        """``{"versions": {...}, "commands": [...]}`` of the part's run, for the report's last sections."""
        meta = results.get("meta") or {}
        return {"versions": meta.get("versions") or {}, "commands": meta.get("commands") or []}


def cores() -> int:
    """The CPU cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def jobs_and_threads(jobs: int | None, threads: int | None, device: str, width: int) -> tuple[int, int]:
    """The demo's one ``--jobs`` / ``--threads`` policy, for every part: on a GPU one command at a time; on CPUs
    one command per core, but no more than the part can run at once (``width``); each command gets the cores
    shared out as torch threads (at least one).  Why commands side by side rather than more threads per command:
    the demo's models are small, so a second torch thread gains little, and beside any other busy process two
    threads wait on each other at every operation (measured here: 2-4x slower than 1)."""
    if jobs is None:
        jobs = 1 if device == "gpu" else max(1, min(cores(), width))
    if jobs < 1 or (threads is not None and threads < 1):
        raise UserError("--jobs and --threads must be at least 1")
    return jobs, threads if threads is not None else max(1, cores() // jobs)
