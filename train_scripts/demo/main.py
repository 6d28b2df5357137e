"""``make demo`` (``morphtok-demo``): every part of the comparison, one command line, one report.

The parts (``parts.py``: :data:`~train_scripts.demo.parts.PARTS`, then any listed in ``MORPHTOK_DEMO_PARTS``) each
implement :class:`~train_scripts.demo.
part.Part`.  This module is the one run skeleton: one parser with every part's options, the command line read once,
every chosen part's settings checked before any work, one ``--jobs`` policy, then each part run on the shared
machinery (signals, subreaper, scheduler, runner, stages) in its own folder, its ``results.json`` written, and the
one report (``OUTPUT/REPORT.md``, ``OUTPUT/report.html``) written once at the end.  SIGINT or SIGTERM stops every
process the demo started; an interrupted stage is not recorded, so a rerun redoes it and skips the finished ones.
``--launcher slurm`` runs every command as a SLURM job instead (``slurm.py``, docs/cluster-demo.md): the same
stages, records, plan and report.

    morphtok-demo --output demo-output [--part all|translation|pretraining|...] [--dry-run] [--jobs N]
        [--launcher slurm --slurm-partition P --slurm-gpus-per-job G ...] [the parts' options: --help lists them]
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import time
from collections import Counter
from pathlib import Path

from preprocess.cli import run_main
from preprocess.common import UserError
from train_scripts.demo import estimate, preflight, slurm
from train_scripts.demo.part import Context, Part, jobs_and_threads
from train_scripts.demo.parts import parts
from train_scripts.demo.stages import (
    PipelineError,
    Runner,
    Scheduler,
    StageRunner,
    Stages,
    become_subreaper,
    interrupt_on_signal,
    say,
    stop_descendants,
    versions,
)
from train_scripts.tools import child_env


def build_parser(all_parts: list | None = None) -> argparse.ArgumentParser:
    """``morphtok-demo``'s one parser: the options every part takes, then each part's own, in a group per part."""
    all_parts = parts() if all_parts is None else all_parts
    ap = argparse.ArgumentParser(prog="morphtok-demo", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--output", type=Path, default=Path("demo-output"),
                    help="everything is written here (the translation part at the top, every other part in "
                         "OUTPUT/PART)")
    ap.add_argument("--part", nargs="+", default=["all"], choices=["all", *(p.name for p in all_parts)],
                    help="the parts to run: " + "; ".join(f"{p.name}: {p.title}" for p in all_parts)
                         + "; all: every part, one report")
    ap.add_argument("--dry-run", action="store_true", help="print every part's commands, run nothing")
    ap.add_argument("--jobs", type=int, default=None,
                    help="commands at the same time (default: one per CPU core, at most as many as a part can run "
                         "at once; 1 with a gpu preset)")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads of each command (default: CPU cores / jobs)")
    ap.add_argument("--shared-data", type=Path, default=None,
                    help="a folder laid out as ../shared/data (docs/data.md): every part's input option that the "
                         "command line leaves unset is taken from it (default: each option's own default)")
    slurm.add_options(ap)
    for part in all_parts:
        part.add_options(ap.add_argument_group(f"the {part.name} part (--part {part.name} or all): {part.title}"))
    return ap


#: an input option the command line left unset (:func:`parse`)
_UNSET = object()


def parse(ap: argparse.ArgumentParser, argv: list, all_parts: list) -> argparse.Namespace:
    """The command line, with ``--shared-data DIR`` applied: each part's :attr:`Part.shared_inputs` option that
    ``argv`` does not set becomes ``DIR/its path`` (an optional one only when that path is there); without
    ``--shared-data`` every option keeps its default."""
    actions = {option: action for action in ap._actions for option in action.option_strings}
    inputs = [(part, option) for part in all_parts for option in part.shared_inputs]
    # argparse fills only the attributes the namespace lacks: a sentinel left in place means "not on the command line"
    options = ap.parse_args(argv, namespace=argparse.Namespace(**{actions[o].dest: _UNSET for _, o in inputs}))
    for part, option in inputs:
        dest = actions[option].dest
        if getattr(options, dest) is not _UNSET:
            continue
        path = options.shared_data / part.shared_inputs[option] if options.shared_data else None
        if path is not None and (option not in part.optional_inputs or path.exists()):
            setattr(options, dest, path)
        else:
            setattr(options, dest, ap.get_default(dest))
    return options


def chosen(options: argparse.Namespace, all_parts: list) -> list:
    return all_parts if "all" in options.part else [p for p in all_parts if p.name in options.part]


def part_settings(part: Part, options: argparse.Namespace, cluster: slurm.Settings | None = None) -> argparse.Namespace:
    """The part's settings, with ``jobs`` and ``threads`` by the demo's one policy; on SLURM (``cluster``) the
    jobs at once are ``--slurm-max-jobs`` (at most the part's width) and each command's threads are the CPUs of its
    job."""
    args = part.settings(options)
    if cluster is None:
        args.jobs, args.threads = jobs_and_threads(options.jobs, options.threads, part.device(args), part.width(args))
    else:
        args.jobs, args.threads = max(1, min(cluster.max_jobs, part.width(args))), options.threads or cluster.cpus
    return args


def plan_summary(todo: list, settings: dict, output: Path, cluster: slurm.Settings | None = None) -> list:
    """Every chosen part's plan (its stages in the scheduler's order, how many at once, the time it should take)
    and the total: what the dry run prints and a run says before its first stage (``estimate.py``); on SLURM
    (``cluster``) at the cluster's width, with the jobs it submits (one per stage, with its resources)."""
    lines, total = [], 0.0
    for part in todo:
        args = settings[part.name]
        costs = part.stage_costs(args)
        done = part.folder(output) / ".stages"
        lines += estimate.plan_lines(part.name, costs, args.jobs, args.threads, getattr(args, "preset", "?"),
                                     done if done.is_dir() else None)
        if cluster is not None:
            lines += slurm.job_lines(part.name, costs, cluster, args.jobs)
        seconds = estimate.wall(costs, args.jobs, done if done.is_dir() else None)
        total = None if seconds is None or total is None else total + seconds
    if len(todo) > 1:
        lines.append(f"# in all: about {estimate.minutes(total)}" if total is not None else
                     "# in all: no estimate (a chosen preset has no recorded figures)")
    return lines


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    all_parts = parts()
    options = parse(build_parser(all_parts), argv, all_parts)
    todo = chosen(options, all_parts)
    output = options.output.resolve()
    try:   # every chosen part's options and inputs, before any part runs
        cluster = slurm.settings(options, output)
        settings = {part.name: part_settings(part, options, cluster) for part in todo}
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:   # what the run needs, checked once (a gpu preset's device and the disk only when it would run)
        if options.dry_run:
            preflight.check_output(output)
            notes = []
        else:
            notes = preflight.check(todo, settings, output, cluster)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for note in notes:
        say(note)
    if options.dry_run:   # before anything is written
        print("\n".join(plan_summary(todo, settings, output, cluster)))
        for part in todo:
            print(f"# === the {part.name} part: {part.title}")
            print("\n".join(part.plan(settings[part.name])))
        return 0
    for line in plan_summary(todo, settings, output, cluster):
        say(line)
    signal.signal(signal.SIGTERM, interrupt_on_signal)  # a killed demo stops its child processes too
    become_subreaper()
    os.environ["NLTK_DATA"] = child_env()["NLTK_DATA"]  # BITE runs in this process (binarize, metrics)
    for part in todo:
        status = run_part(part, settings[part.name], output, argv, cluster)
        if status:
            return status
    from train_scripts.demo import demo_report

    paths = demo_report.write(str(output), all_parts)
    if paths:
        say(f"report: {paths['markdown']} and {paths['html']} (every part that has results)")
    return 0


def make_runner(part: Part, args: argparse.Namespace, folder: Path, cluster: slurm.Settings | None) -> StageRunner:
    """The part's stage runner: its commands as processes here, or as SLURM jobs (``--launcher slurm``)."""
    if cluster is None:
        return Runner(folder, args.threads)
    kinds = {cost.stage: cost.kind for cost in part.stage_costs(args)}
    return slurm.SlurmRunner(folder, args.threads, cluster, kinds, part.name)


def run_part(part: Part, args: argparse.Namespace, output: Path, argv: list,
             cluster: slurm.Settings | None = None) -> int:
    """One part on fresh shared machinery in its folder; its ``results.json``.  0, or 1 when a stage failed."""
    folder = part.folder(output)
    folder.mkdir(parents=True, exist_ok=True)
    runner = make_runner(part, args, folder, cluster)
    stages = Stages(folder)
    stages.attached = runner.attachable
    ctx = Context(output=output, folder=folder, runner=runner, stages=stages, scheduler=Scheduler(args.jobs),
                  jobs=args.jobs, threads=args.threads, argv=argv)
    stages.progress = estimate.Progress(part.stage_costs(args), args.jobs)
    say(f"=== the {part.name} part: {part.title} ({args.jobs} command(s) at a time, {args.threads} torch "
        f"thread(s) each{', as SLURM jobs' if cluster is not None else ''})")
    t0 = time.time()
    try:
        results = part.run(args, ctx)
    except (PipelineError, UserError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BaseException:  # interrupted (SIGINT, SIGTERM): nothing this run started may outlive it
        ctx.scheduler.stopping.set()
        stages.stopping.set()
        runner.stop()
        stop_descendants()
        raise
    meta = results.setdefault("meta", {})
    meta.setdefault("seconds", time.time() - t0)
    meta.setdefault("versions", versions())
    meta.setdefault("date", time.strftime("%Y-%m-%d %H:%M %Z"))
    meta.setdefault("load", os.getloadavg() if hasattr(os, "getloadavg") else None)
    meta.setdefault("command", " ".join(shlex.quote(a) for a in ["morphtok-demo", *argv]))
    # the commit each of its stages ran at (ran now, or recorded by an earlier run and skipped): the report flags a mix
    meta["commits"] = dict(Counter(stages.commits.values()))
    (folder / "results.json").write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
    say(f"=== the {part.name} part done ({time.time() - t0:.0f} s)")
    return 0


def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
