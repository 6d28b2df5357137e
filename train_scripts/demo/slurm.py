"""``morphtok-demo --launcher slurm``: every command a stage runs is one SLURM job, submitted through submitit.

The run skeleton (``main.py``) builds a :class:`SlurmRunner` instead of the local ``stages.Runner``; both implement
``stages.StageRunner``, so the parts, the stages (records, fingerprints, resume), the scheduler (a job is submitted
when its step has one of ``--slurm-max-jobs`` slots, i.e. as soon as its dependencies are done), the plan, the
pre-flight and the report are those of a local run.  What this module adds to them:

* the options (:func:`add_options`, read by :func:`settings`) and the jobs a dry run lists (:func:`job_lines`);
* :class:`StageJob`, the job: the launcher's ``RecipeJob`` (``train_scripts/launch.py``: the launcher's
  interpreter and checkout in the job's environment, requeued as it is when SLURM preempts it or its time runs
  out, so a training goes on from ``SAVE_DIR/checkpoint_last.pt``) running the stage's command with its stdout and
  stderr in the stage's own logs, which the demo reads as they grow (``on_line``);
* :class:`SlurmRunner`: submits with the launcher's executor set-up and sbatch refusals
  (``launch.make_executor``, ``launch.submission``), follows the job in SLURM until it runs no more
  (``launch.wait_slurm``: requeues waited for, a job that can never start cancelled with SLURM's reason), records
  each running stage's job in ``OUT/PART/.stages/NAME.job`` so that a demo restarted while its jobs run attaches to
  them instead of submitting again, and cancels its jobs (``scancel``) when the demo is interrupted.

The job's folder (``--slurm-folder``, default ``OUTPUT/.slurm``) holds submitit's scripts, pickles and logs; the
output folder and the checkout must be on a file system the nodes share.  See docs/cluster-demo.md.
"""
from __future__ import annotations

import argparse
import json
import re
import resource
import threading
from dataclasses import dataclass, field
from pathlib import Path

import submitit

from preprocess.common import REPO, UserError
from preprocess.files.outputs import atomic_output
from train_scripts import launch
from train_scripts.demo.stages import StageRunner, say, shown, stage_failed

#: the kinds of stage (``estimate.Cost.kind``, up to its first ``/``) that ``--slurm-time-train`` sets the time of
TRAINING = ("train", "pretrain", "finetune")
#: a job state SLURM is done with (``launch.FINAL_STATES``) that leaves the stage's outputs good to attach to
DONE_WELL = "COMPLETED"

# the job's command: its stdout (and stderr) into the stage's logs, its torch threads; exec, so that the signals
# SLURM sends on requeue or cancellation reach the command itself
_WRAPPER = ('out=$1 err=$2 merge=$3; export OMP_NUM_THREADS=$4; shift 4; : >"$err"; '
            'if [ "$merge" = 1 ]; then exec "$@" >"$out" 2>&1; fi; exec "$@" >"$out" 2>"$err"')


# --- options ---------------------------------------------------------------------------------------------------

def add_options(ap: argparse.ArgumentParser) -> None:
    """``--launcher`` and the cluster's options, in a group of their own."""
    ap.add_argument("--launcher", choices=("local", "slurm"), default="local",
                    help="local: every command a process on this machine; slurm: every command one SLURM job "
                         "(docs/cluster-demo.md)")
    g = ap.add_argument_group("the SLURM launcher (--launcher slurm): one job per command, through submitit")
    g.add_argument("--slurm-partition", default=None, help="the partition of every job (default: the cluster's)")
    g.add_argument("--slurm-gpus-per-job", type=int, default=0, help="GPUs of every job (a gpu preset needs 1)")
    g.add_argument("--slurm-cpus-per-job", type=int, default=4,
                   help="CPUs of every job, also each command's torch threads")
    g.add_argument("--slurm-mem-gb", type=float, default=None, help="memory of every job, in GB (default: SLURM's)")
    g.add_argument("--slurm-time", type=int, default=240, help="time limit of a stage's job, in minutes")
    g.add_argument("--slurm-time-train", type=int, default=None,
                   help="time limit of a training stage's job (kinds train, pretrain, finetune), in minutes "
                        "(default: --slurm-time)")
    g.add_argument("--slurm-time-kind", action="append", default=[], metavar="KIND=MIN",
                   help="time limit of the jobs of one kind of stage (as the plan names kinds, e.g. "
                        "finetune/flota=90 or evaluate=30; repeatable; the most specific wins)")
    g.add_argument("--slurm-max-jobs", type=int, default=None,
                   help="jobs at the same time (the scheduler's width, as --jobs; default --jobs, else 4), at most "
                        "as many as a part can run at once")
    g.add_argument("--slurm-extra", action="append", default=[], metavar="KEY=VALUE",
                   help="any other sbatch option, as submitit's additional parameters, e.g. account=proj, "
                        "qos=high, constraint=a100 (repeatable)")
    g.add_argument("--slurm-folder", type=Path, default=None,
                   help="submitit's folder: job scripts, pickles and logs (default OUTPUT/.slurm)")


@dataclass
class Settings:
    """The cluster's settings of a ``--launcher slurm`` run (:func:`settings`)."""

    partition: str | None
    gpus: int
    cpus: int
    mem_gb: float | None
    time: int
    time_train: int | None
    time_kinds: dict = field(default_factory=dict)
    max_jobs: int = 4
    extra: list = field(default_factory=list)
    folder: Path = Path(".slurm")

    def minutes(self, kind: str | None) -> int:
        """A job's time limit by its stage's kind: ``--slurm-time-kind`` for the kind, else for its family (the
        kind up to its first ``/``), else ``--slurm-time-train`` for a training, else ``--slurm-time``."""
        family = (kind or "").split("/")[0]
        for key in (kind, family):
            if key in self.time_kinds:
                return self.time_kinds[key]
        if family in TRAINING and self.time_train is not None:
            return self.time_train
        return self.time

    def executor_args(self, minutes: int) -> argparse.Namespace:
        """The options ``launch.make_executor`` reads, for a job of ``minutes``."""
        return argparse.Namespace(executor="slurm", time=minutes, partition=self.partition, cpus_per_task=self.cpus,
                                  mem_gb=self.mem_gb, slurm_option=list(self.extra))

    def resources(self, minutes: int) -> str:
        where = f"partition {self.partition}" if self.partition else "the default partition"
        return (f"{where}, {self.cpus} CPU(s), {self.gpus} GPU(s)"
                + (f", {self.mem_gb:g} GB" if self.mem_gb else "") + f", {minutes} min")


def settings(options: argparse.Namespace, output: Path) -> Settings | None:
    """The cluster's settings from the command line (None with ``--launcher local``); a bad value is one
    ``UserError`` line.  Creates nothing."""
    if options.launcher != "slurm":
        return None
    for flag, value, least in (("--slurm-gpus-per-job", options.slurm_gpus_per_job, 0),
                               ("--slurm-cpus-per-job", options.slurm_cpus_per_job, 1),
                               ("--slurm-time", options.slurm_time, 1),
                               ("--slurm-time-train", options.slurm_time_train, 1),
                               ("--slurm-max-jobs", options.slurm_max_jobs, 1)):
        if value is not None and value < least:
            raise UserError(f"{flag} must be at least {least}, not {value}")
    kinds = {}
    for item in options.slurm_time_kind:
        kind, sep, minutes = item.partition("=")
        if not sep or not kind or not minutes.isdigit() or int(minutes) < 1:
            raise UserError(f"--slurm-time-kind wants KIND=MINUTES (at least 1), not {item!r}")
        kinds[kind] = int(minutes)
    for item in options.slurm_extra:
        key, sep, _ = item.partition("=")
        if not sep or not key:
            raise UserError(f"--slurm-extra wants KEY=VALUE (an sbatch option without its dashes), not {item!r}")
    max_jobs = options.slurm_max_jobs or options.jobs or 4
    return Settings(partition=options.slurm_partition, gpus=options.slurm_gpus_per_job,
                    cpus=options.slurm_cpus_per_job, mem_gb=options.slurm_mem_gb, time=options.slurm_time,
                    time_train=options.slurm_time_train, time_kinds=kinds, max_jobs=max_jobs,
                    extra=list(options.slurm_extra),
                    folder=(options.slurm_folder or output / ".slurm").resolve())


def job_lines(name: str, costs: list, cluster: Settings, jobs: int) -> list:
    """What a dry run lists of a part's jobs: one per stage (its kind), with its resources."""
    lines = [f"# the {name} part on SLURM: one job per stage, submitted once its dependencies are done, at most "
             f"{jobs} at a time; logs in {cluster.folder} (a stage that runs no command, e.g. reading the data "
             "in the demo's own process, runs where the demo runs)"]
    if not costs:
        return lines + ["#   (the part lists no stages: one job per command of its plan below)"]
    return lines + [f"#   job {c.stage} ({c.kind}): {cluster.resources(cluster.minutes(c.kind))}" for c in costs]


# --- the job ---------------------------------------------------------------------------------------------------

class StageJob(launch.RecipeJob):
    """A stage's command as a SLURM job: the launcher's :class:`~train_scripts.launch.RecipeJob` (its environment,
    requeued as it is, a command stopped by SLURM's signal waited out), run in the checkout, with stdout in ``log``
    and stderr in ``log.err`` (or merged, as ``Runner.run``'s ``merge_stderr``) and ``threads`` torch threads."""

    def __init__(self, args: list, log: Path, merge_stderr: bool, threads: int):
        super().__init__(["bash", "-c", _WRAPPER, "morphtok-stage", str(log), str(log.with_suffix(".err")),
                          "1" if merge_stderr else "0", str(threads), *args], str(REPO))

    def __call__(self) -> dict:
        """The command's exit status and the CPU seconds it used in this job (this run of it: a requeued job's
        earlier runs are not counted), which the demo reads from the job's result."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        status = super().__call__()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return {"status": status, "cpu_seconds": cpu}


# --- the runner ------------------------------------------------------------------------------------------------

class SlurmRunner(StageRunner):
    """``stages.StageRunner`` on SLURM: :meth:`run` submits the command as one job (:class:`StageJob`), follows it
    until SLURM runs it no more, feeds its log to ``on_line`` as it grows and returns its stdout, or raises
    ``PipelineError`` naming the logs; the running job of each stage is recorded in ``OUT/PART/.stages/NAME.job``
    (:meth:`attachable`, :meth:`stop`).  ``kinds``: each stage's kind (the plan's), for its time limit."""

    #: seconds between two reads of a running job's log
    POLL_S = 1.0

    def __init__(self, out: Path, threads: int, cluster: Settings, kinds: dict, part: str):
        super().__init__(out, threads)
        self.cluster, self.kinds, self.part = cluster, kinds, part
        self.records = out / ".stages"
        self.live: dict = {}          # stage -> the SlurmJob this runner follows
        self.lock = threading.Lock()
        launch.job_env()              # what sbatch exports to the jobs: this checkout and interpreter first

    def record(self, stage: str) -> Path:
        return self.records / f"{stage.replace('/', '__')}.job"

    def earlier(self, stage: str) -> dict | None:
        """The job an earlier run of the demo submitted for ``stage`` and recorded, if any."""
        try:
            return json.loads(self.record(stage).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def attachable(self, stage: str) -> bool:
        """The recorded job of ``stage`` is still in SLURM's queue (pending, running, requeued) or has completed;
        a job that ended otherwise is forgotten (its record removed): the stage runs again."""
        saved = self.earlier(stage)
        if saved is None:
            return False
        job_id = saved["job_id"]
        states = launch.slurm_states([job_id])
        if states is None:   # SLURM does not answer now: keep the outputs, run() follows the job
            return True
        state = (states.get(job_id, ("", ""))[0].split() or [""])[0].upper()
        if state and state not in launch.FINAL_STATES or state == DONE_WELL:
            return True
        if not state:        # forgotten by the controller: its result pickle says how it ended
            job = submitit.SlurmJob(saved["folder"], job_id)
            outcomes = launch._task_outcomes(job)   # noqa: SLF001 - the launcher's reading of a job's results
            if all(outcomes) and all(o[0] == "success" for o in outcomes):
                return True
        self.record(stage).unlink(missing_ok=True)
        return False

    def run(self, stage: str, args: list, log: Path, on_line=None, merge_stderr: bool = False) -> str:
        """Run ``args`` as one SLURM job (or attach to the one an earlier run of the demo submitted), stdout in
        ``log``, stderr in ``log.err`` or merged into stdout; the command's stdout as text."""
        saved = self.earlier(stage) if self.attachable(stage) else None
        words = self.command(args, record=saved is None)
        if saved is not None and saved["command"] != shown(words):
            raise stage_failed(stage, f"SLURM job {saved['job_id']} of an earlier run still runs another command "
                               f"for it; scancel {saved['job_id']} or wait for it, then run the demo again",
                               log, [])
        log.parent.mkdir(parents=True, exist_ok=True)
        if saved is not None:
            job = submitit.SlurmJob(saved["folder"], saved["job_id"])
            say(f"[attach] {stage}: SLURM job {job.job_id} of an earlier run (log: {job.paths.stderr})")
        else:
            job = self.submit(stage, words, log, merge_stderr)
        with self.lock:
            self.live[stage] = job
        error = self.follow(stage, job, log, on_line)   # interrupted: the job stays live, for stop() to cancel
        with self.lock:
            self.live.pop(stage, None)
        self.record(stage).unlink(missing_ok=True)
        lines = _read(log).splitlines(True)
        if error is not None:
            status = re.search(r"exited with status (-?\d+)", str(error))
            why = (f"exit {status.group(1)}" if status else str(error).split(" failed: ", 1)[-1].split(" (log: ")[0])
            raise stage_failed(stage, f"{why}; SLURM job {job.job_id}, its log {job.paths.stderr}", log, lines)
        self.cpu_seconds[stage] = job_cpu_seconds(job)
        return "".join(lines)

    def submit(self, stage: str, words: list, log: Path, merge_stderr: bool):
        """Submit the command's job and record it (``.stages/NAME.job``) before anything else can happen."""
        minutes = self.cluster.minutes(self.kinds.get(stage))
        self.cluster.folder.mkdir(parents=True, exist_ok=True)
        executor = launch.make_executor(self.cluster.executor_args(minutes), str(self.cluster.folder),
                                        f"morphtok-{self.part}-{stage}", gpus_per_node=self.cluster.gpus)
        with launch.submission(f"stage {stage}"):
            job = executor.submit(StageJob(words, log, merge_stderr, self.threads))
        with atomic_output(self.record(stage)) as fh:
            fh.write(json.dumps({"job_id": job.job_id, "folder": str(self.cluster.folder), "command": shown(words),
                                 "log": str(log)}))
        say(f"[slurm] {stage}: job {job.job_id} ({self.cluster.resources(minutes)}; log: {job.paths.stderr})")
        return job

    def follow(self, stage: str, job, log: Path, on_line) -> BaseException | None:
        """Wait for ``job`` to end (``launch.wait_slurm``, on a thread of its own) while its log is read as it
        grows, each new line to ``on_line``; the job's failure, or None."""
        outcome: list = []

        def wait():
            try:
                launch.wait_slurm([job], f"stage {stage}")
                outcome.append(None)
            except BaseException as exc:  # noqa: BLE001 - handed to the stage's thread, which raises it
                outcome.append(exc)

        waiter = threading.Thread(target=wait, name=f"slurm {stage}", daemon=True)
        waiter.start()
        seen, partial = 0, ""
        while True:
            ended = not waiter.is_alive()
            text = _read(log)
            if len(text) < seen:     # a requeued run wrote its log anew
                seen, partial = 0, ""
            partial += text[seen:]
            seen = len(text)
            *whole, partial = partial.split("\n")
            lines = [line + "\n" for line in whole] + ([partial] if ended and partial else [])
            for line in lines if on_line is not None else ():
                on_line(line)
            if ended:
                return outcome[0] if outcome else RuntimeError("the job was not followed to its end")
            waiter.join(self.POLL_S)

    def stop(self) -> None:
        """Cancel every job this runner follows (``scancel``, submitit's ``job.cancel``) and forget their records:
        a rerun submits them again."""
        with self.lock:
            jobs = dict(self.live)
        for stage, job in jobs.items():
            job.cancel(check=False)
            self.record(stage).unlink(missing_ok=True)
        if jobs:
            say(f"cancelled SLURM job(s) {', '.join(j.job_id for j in jobs.values())}")


def job_cpu_seconds(job) -> float | None:
    """The CPU seconds a finished :class:`StageJob` reports in its result (None from a job of an older version,
    which reported its exit status alone, or where the result cannot be read).  Only a result already written is
    read: ``job.result()`` would otherwise wait on ``sacct``, which a cluster without accounting lacks."""
    try:
        if not Path(job.paths.result_pickle).exists():
            return None
        result = job.result()
    except Exception:  # noqa: BLE001 - a figure of the report, never a reason to fail a finished stage
        return None
    return result.get("cpu_seconds") if isinstance(result, dict) else None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
