"""The demo's stages and the commands they run, for every part (``main.py`` runs each part on them).

:class:`Runner` runs a command in a process group of its own, logs it and records it in ``commands.txt`` (the
local launcher; ``slurm.SlurmRunner`` runs it as a SLURM job, behind the same :class:`StageRunner` interface);
:class:`Stages` runs a resumable stage; :class:`Scheduler` runs steps with dependencies, each command holding one
of ``--jobs`` slots (:class:`SlotRunner`) (skipped when its record, outputs and fingerprint are there); an interrupted
demo stops what it started (:func:`stop_group`, :func:`stop_descendants`; the demo is the subreaper of its
descendants, :func:`become_subreaper`, and SIGTERM becomes KeyboardInterrupt, :func:`interrupt_on_signal`); :func:`say`
writes one status line; :func:`versions` lists the software that ran.
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tqdm import tqdm

from preprocess.common import REPO
from preprocess.files.outputs import atomic_output
from train_scripts.demo import provenance
from train_scripts.tools import child_env, map_paths


class PipelineError(RuntimeError):
    pass


def say(message: str) -> None:
    """One status line on stderr in one ``write``: rows running side by side share the stream, and
    ``tqdm.write`` writes the text and its newline separately, so two rows' lines ran together."""
    line = message + "\n"
    with tqdm.external_write_mode(file=sys.stderr):
        sys.stderr.flush()
        try:
            fd = sys.stderr.fileno()
        except (AttributeError, OSError):   # a stream without a descriptor (captured): one write call there
            sys.stderr.write(line)
            return
        os.write(fd, line.encode("utf-8", "replace"))


def _fingerprint(key) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _is_command(key) -> bool:
    """Whether a stage's key is the command it runs (a list of words), whose code ``provenance`` reads from it."""
    return isinstance(key, (list, tuple)) and bool(key) and all(isinstance(w, str) for w in key)


def portable(value, roots: list[tuple[str, str]]):
    """``value`` (JSON-like) with every path inside one of ``roots``, (folder, name) pairs, written from the
    folder's name instead of its place (``/scratch/me/demo-output/schemes/x`` -> ``$OUT/schemes/x``), so that a
    stage record holds when the output folder or the checkout is moved or renamed.  The first root that holds a
    path names it (list the inner folder first); :func:`placed` undoes it."""
    return map_paths(value, roots)


def placed(value, roots: list[tuple[str, str]]):
    """:func:`portable`'s inverse, for the folders' places now."""
    return map_paths(value, [(name, folder) for folder, name in roots])

# --- running things --------------------------------------------------------------------------------------------

class StageRunner:
    """What runs a stage's command, the one interface of both launchers: :class:`Runner` (a process here) and
    ``slurm.SlurmRunner`` (a SLURM job per command).  The parts, the stages and the scheduler use only this.

    :meth:`run` runs one command with its stdout in ``log`` (stderr in ``log.err``), returns that stdout as text and
    raises :class:`PipelineError` naming the logs when the command fails; :meth:`attachable` says whether a command
    of a stage that an earlier run of the demo started is still at work (its outputs are then kept, and :meth:`run`
    waits for it instead of starting it again); :meth:`stop` ends what this runner started (an interrupted demo).
    :attr:`cpu_seconds` holds, per stage, the CPU seconds (user + system) its command and the processes it waited
    for used, measured where the command ran (the process here, the SLURM job there): a figure of the run, not of
    the demo's own process, so commands running side by side do not count each other's."""

    def __init__(self, out: Path, threads: int):
        self.out = out
        self.threads = threads
        self.cpu_seconds: dict[str, float] = {}

    def command(self, args: list, record: bool = True) -> list:
        """``args`` as words, ``python`` being this interpreter; with ``record``, written to ``commands.txt``
        (survives resumed runs) as the report shows them."""
        args = [str(a) for a in args]
        if args[0] == "python":
            args[0] = sys.executable
        if record:
            with open(self.out / "commands.txt", "a", encoding="utf-8") as fh:
                fh.write(shown(args) + "\n")
        return args

    def run(self, stage: str, args: list, log: Path, on_line=None, merge_stderr: bool = False) -> str:
        raise NotImplementedError

    def attachable(self, stage: str) -> bool:
        """Whether ``stage``'s command, started by an earlier run of the demo, is still at work (or has finished
        well since): :meth:`Stages.run` then keeps its outputs, and :meth:`run` attaches to it."""
        return False

    def stop(self) -> None:
        """End every command this runner started and that is still at work (the demo was interrupted)."""


def shown(args: list) -> str:
    """A command as one line of shell, this interpreter written ``python``."""
    return " ".join(shlex.quote(a) for a in args).replace(sys.executable, "python")


def stage_failed(stage: str, why: str, log: Path, lines: list) -> PipelineError:
    """The error of a failed command: one line naming the stage, why and both logs, then the logs' last lines."""
    err_log = log.with_suffix(".err")
    try:
        err_lines = err_log.read_text(encoding="utf-8", errors="replace").splitlines(True)[-6:]
    except OSError:
        err_lines = []
    tail = "".join(lines[-4:]) + "".join(err_lines)
    return PipelineError(f"pipeline stage {stage} failed ({why}); logs: {log} {err_log}\n{tail.strip()}")


class Runner(StageRunner):
    """Runs commands here, with logs under the output directory, and records them for the report."""

    def __init__(self, out: Path, threads: int):
        super().__init__(out, threads)
        self.env = child_env(threads)

    def run(self, stage: str, args: list, log: Path, on_line=None, merge_stderr: bool = False) -> str:
        """Run ``args``, stdout to ``log`` (and ``on_line``), stderr to ``log.err`` or, with ``merge_stderr``
        (a tool that logs only to stderr), into the stdout stream.  The command runs in a process group of its
        own: an interrupted pipeline (SIGINT, SIGTERM) stops the whole group (:func:`stop_group`), so no
        training process outlives it."""
        args = self.command(args)
        log.parent.mkdir(parents=True, exist_ok=True)
        err_log = log.with_suffix(".err")
        # stdout and stderr stay separate: merged, their buffers interleave mid-line and lines get lost
        with open(log, "w", encoding="utf-8") as fh, open(err_log, "w", encoding="utf-8") as err:
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge_stderr else err,
                                    text=True, env=self.env, cwd=REPO, start_new_session=True)
            lines = []
            try:
                for line in proc.stdout:
                    fh.write(line)
                    lines.append(line)
                    if on_line is not None:
                        on_line(line)
                rc, self.cpu_seconds[stage] = wait_with_usage(proc)
            except BaseException:  # interrupted: never leave a training process running behind us
                stop_group(proc)
                raise
        if rc != 0:
            raise stage_failed(stage, f"exit {rc}", log, lines)
        return "".join(lines)


def wait_with_usage(proc: subprocess.Popen) -> tuple:
    """``(exit status, CPU seconds)`` of ``proc`` once it has ended: ``os.wait4`` of that one process, whose
    resource usage includes the descendants it waited for (a recipe's torchrun and its workers) and nothing
    else this process runs at the same time."""
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except ChildProcessError:        # reaped already (the clean-up of an interrupted demo): no usage to read
        return proc.wait(), None
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime


#: seconds a stopped command's process group gets to finish (a checkpoint being written completes) before SIGKILL
STOP_GRACE = 20.0


def stop_group(proc: subprocess.Popen, grace: float = STOP_GRACE) -> None:
    """Stop ``proc`` and every process of its group (it was started with ``start_new_session``): SIGTERM (the
    recipes pass it on to fairseq, which finishes a checkpoint it is writing), then SIGKILL after ``grace``
    seconds to whatever is left of the group."""
    def signal_group(sig) -> bool:
        try:
            os.killpg(proc.pid, sig)
            return True
        except (ProcessLookupError, PermissionError):
            return False

    for sig in (signal.SIGINT, signal.SIGTERM):  # a second signal must not cut the clean-up short
        signal.signal(sig, signal.SIG_IGN)
    signal_group(signal.SIGTERM)
    deadline = time.time() + grace
    while time.time() < deadline:
        _reap()  # processes of the group orphaned on the way are re-parented to this (subreaper) process
        if proc.poll() is not None and not signal_group(0):
            break
        time.sleep(0.1)
    signal_group(signal.SIGKILL)
    proc.wait()


def _reap() -> None:
    """Collect exited children (orphans re-parented to this subreaper), so that they leave the process table."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


class Stages:
    """Resumable stages: ``<out>/.stages/<name>.json`` records a finished stage, the fingerprint of the options
    and inputs that produced it, and its result."""

    def __init__(self, out: Path):
        self.dir = out / ".stages"
        self.dir.mkdir(parents=True, exist_ok=True)
        #: the folders a fingerprint names by role, not by place (:func:`portable`): the output folder, then the
        #: checkout (whose recipes the commands run; the output folder may be inside it)
        self.roots = sorted({(os.path.realpath(out), "$OUT"), (os.path.realpath(REPO), "$REPO")},
                            key=lambda r: -len(r[0]))
        self.skipped: list[str] = []
        self.ran: list[str] = []
        self.fingerprints: dict[str, str] = {}
        #: the fingerprints as records written before they named folders by role hold them (absolute paths), so that
        #: a folder made by an older version resumes instead of rerunning every stage once
        self.legacy: dict[str, str] = {}
        #: the fingerprints as records held them before they held the digests of code and inputs
        self.older: dict[str, str] = {}
        #: the commit each stage of this run ran at (its record's; ``provenance.label``), for the report
        self.commits: dict[str, str] = {}
        self.out = out
        #: set when the demo is interrupted, before its processes are stopped: a stage that ends after it (its
        #: command stopped, or reaped by the clean-up, which reads as exit 0) is not recorded
        self.stopping = threading.Event()
        #: the time left of the part, said after each stage (``estimate.Progress``; None: not said)
        self.progress = None
        #: whether a stage's command, started by an earlier run, is still at work (``StageRunner.attachable``):
        #: its outputs (a training's save dir) are then kept for the command to go on with, not removed
        self.attached = lambda name: False

    def _left(self, name: str) -> str:
        return self.progress.done(name) if self.progress is not None else ""

    def _clear(self, name: str, outputs: list) -> None:
        """Remove a stage's outputs before it runs (an interrupted or outdated stage restarts cleanly), unless its
        command from an earlier run is still at work (:attr:`attached`): that command goes on with them."""
        if self.attached(name):
            say(f"[wait] {name}: its command from an earlier run is still at work; waiting for it")
            return
        for p in map(Path, outputs):
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()

    def run(self, name: str, outputs: list[Path], fn, key=None, after: tuple[str, ...] = (), quiet: bool = False,
            announce: bool = True, code: tuple[str, ...] = ()):
        """Run ``fn`` unless a record with the same fingerprint exists.  ``key``: the options and inputs of
        this stage (JSON-serialisable); ``after``: the stages whose results it uses (their fingerprints are part
        of this one, so a changed upstream stage reruns this one too); ``quiet``: a skip is neither shown nor
        listed; ``announce``: say
        ``[run ]`` here (False: ``fn`` says it when its work really starts, e.g. once it has a free core);
        ``code``: the project modules the stage runs, when its key is not a command that names them.

        The fingerprint also holds the digest of the code the stage runs and of the contents of the inputs its
        key names outside the output folder (``provenance.py``): the code of its command (``python -m X``, a
        recipe), else of ``code``, else of the module that defines ``fn`` (an in-process stage), each with the
        project modules it imports.  A record written before records held these digests is taken as done once
        and given them (it cannot say which code wrote it: its commit reads "unknown")."""
        digests = {"code": provenance.code_digest(key, code) or
                   (provenance.code_digest(None, (fn.__module__,)) if not _is_command(key) else None),
                   "inputs": provenance.input_digest(key, self.out)}
        fingerprint = _fingerprint({"key": portable(key, self.roots), "after": [self.fingerprints[a] for a in after],
                                    **digests})
        self.fingerprints[name] = fingerprint
        legacy = self.legacy[name] = _fingerprint({"key": key, "after": [self.legacy[a] for a in after]})
        # before the digests: the fingerprint of the key and upstream stages alone (by role, then by place)
        older = (_fingerprint({"key": portable(key, self.roots), "after": [self.older[a] for a in after]}), legacy)
        self.older[name] = older[0]
        record = self.dir / f"{name.replace('/', '__')}.json"
        if record.exists() and all(Path(p).exists() for p in outputs):
            saved = json.loads(record.read_text())
            undigested = "code" not in saved and saved.get("fingerprint") in older
            if saved.get("fingerprint") == fingerprint or undigested:
                if not quiet:
                    self.skipped.append(name)
                    say(f"[skip] {name} (done with the same options){self._left(name)}")
                self.commits[name] = saved.get("commit", "unknown")
                result = portable(saved["result"], self.roots)
                if saved["fingerprint"] != fingerprint or result != saved["result"]:
                    # an older record (its fingerprint, or paths in its result): written again as records are now
                    with atomic_output(record) as fh:
                        fh.write(json.dumps({**saved, "result": result, "fingerprint": fingerprint, **digests,
                                             "commit": self.commits[name]}, default=str))
                return placed(result, self.roots)
            why = ("its code changed" if saved.get("code") != digests["code"] else
                   "the contents of its inputs changed" if saved.get("inputs") != digests["inputs"] else
                   "its options or inputs changed")
            say(f"[rerun] {name}: {why}")
        self._clear(name, outputs)
        if announce:
            say(f"[run ] {name}")
        t0, waited = time.time(), slot_wait()
        try:
            result = fn()
        except PipelineError as exc:
            if str(exc).startswith("pipeline stage"):
                raise
            raise PipelineError(f"pipeline stage {name} failed: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - any stage failure is re-raised, named, with its cause chained
            raise PipelineError(f"pipeline stage {name} failed: {type(exc).__name__}: {exc}") from exc
        if self.stopping.is_set():
            raise PipelineStopped(f"{name}: interrupted")
        missing = [str(p) for p in outputs if not Path(p).exists()]
        if missing:
            raise PipelineError(f"pipeline stage {name} finished without its outputs: {missing}")
        seconds = time.time() - t0 - (slot_wait() - waited)   # its work: a wait for a free slot does not count
        self.commits[name] = provenance.label(provenance.checkout())
        with atomic_output(record) as fh:
            fh.write(json.dumps({"result": portable(result, self.roots), "fingerprint": fingerprint, "key": key,
                                 "seconds": seconds, **digests, "commit": self.commits[name]}, default=str))
        self.ran.append(name)
        if not quiet:   # (a pretraining stage runs for half an hour: the log says when each one ends)
            say(f"[done] {name} ({seconds:.0f} s){self._left(name)}")
        return result


# --- the scheduler -------------------------------------------------------------------------------------------

#: the seconds this thread has waited for a free slot, in all: a stage (which runs on its step's thread) counts
#: the time it worked, not the time it waited for a core
_waits = threading.local()


def slot_wait() -> float:
    """The seconds the calling thread has waited for a free slot so far."""
    return getattr(_waits, "seconds", 0.0)


class Slots:
    """``n`` slots taken in order of priority (lower first), then of arrival."""

    def __init__(self, n: int):
        import itertools
        import threading

        self.free, self.cv, self.waiting, self.order = n, threading.Condition(), [], itertools.count()

    def acquire(self, priority: int) -> None:
        import heapq

        with self.cv:
            ticket = (priority, next(self.order))
            heapq.heappush(self.waiting, ticket)
            while not (self.free > 0 and self.waiting[0] == ticket):
                self.cv.wait()
            heapq.heappop(self.waiting)
            self.free -= 1

    def release(self) -> None:
        with self.cv:
            self.free += 1
            self.cv.notify_all()


class Scheduler:
    """Steps with dependencies, at most ``jobs`` commands at a time: the one scheduler of both demo parts.

    Every step is a thread that waits for the steps it needs, then runs its stages; a command (a child process)
    runs only while it holds one of ``jobs`` slots (:class:`SlotRunner`), so the next step starts as soon as a
    core is free.  The first failure stops every step that has not started its command; it is raised once the
    running ones are done.  Interrupted (SIGINT, SIGTERM), the caller sets ``stopping`` before it stops the
    processes, so that no stage is recorded from then on."""

    def __init__(self, jobs: int):
        import threading

        self.slots = Slots(jobs)
        self.failed = threading.Event()
        #: set when the demo is interrupted, before its processes are stopped: a command that then ends (even
        #: "successfully": a child reaped by the clean-up reads as exit 0) must not record its stage
        self.stopping = threading.Event()
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=256)
        self.futures: list = []

    def slot(self, priority: int = 0):
        """A context holding one slot; raises when another step has failed (nothing new starts)."""
        import contextlib

        @contextlib.contextmanager
        def held():
            t0 = time.time()
            self.slots.acquire(priority)
            _waits.seconds = slot_wait() + time.time() - t0
            try:
                if self.failed.is_set():
                    raise PipelineStopped(STOPPED)
                yield
            finally:
                self.slots.release()
        return held()

    def add(self, fn, after=()):
        def step():
            for dep in after:
                dep.result()        # a failed dependency raises here: this step does not run
            if self.failed.is_set():
                raise PipelineStopped(STOPPED)
            try:
                return fn()
            except BaseException:
                self.failed.set()
                raise
        future = self.pool.submit(step)
        self.futures.append(future)
        return future

    def wait(self) -> None:
        try:
            done, _ = concurrent.futures.wait(self.futures, return_when=concurrent.futures.FIRST_EXCEPTION)
            errors = [f.exception() for f in done if f.exception() is not None]
            if errors:
                self.failed.set()
                concurrent.futures.wait(self.futures)
                first = next((e for e in errors if STOPPED not in str(e)), errors[0])
                raise first
        finally:
            self.pool.shutdown(wait=False, cancel_futures=True)


STOPPED = "not started: another step failed"


class PipelineStopped(RuntimeError):
    """A step not started because another one failed."""


class SlotRunner:
    """A :class:`StageRunner` whose commands each hold a slot of the scheduler; ``priority(stage)``: lower first (the
    longest steps, and those others wait for); ``announce``: say ``[run ]`` once the command has a slot (False
    where its stage said it already)."""

    def __init__(self, runner, scheduler: Scheduler, priority=lambda stage: 0, announce: bool = True):
        self.runner, self.scheduler, self.priority, self.announce = runner, scheduler, priority, announce
        #: wall seconds of each stage's command, from the moment it had a slot (not counting the wait for one)
        self.seconds: dict[str, float] = {}

    def run(self, stage: str, *args, **kwargs):
        with self.scheduler.slot(self.priority(stage)):
            if self.announce:
                say(f"[run ] {stage}")
            t0 = time.time()
            out = self.runner.run(stage, *args, **kwargs)
            self.seconds[stage] = time.time() - t0
        if self.scheduler.stopping.is_set():
            raise PipelineStopped(f"{stage}: interrupted")
        return out

    @property
    def cpu_seconds(self) -> dict:
        """The CPU seconds of each stage's command (:attr:`StageRunner.cpu_seconds`)."""
        return self.runner.cpu_seconds


def interrupt_on_signal(signum, frame):
    raise KeyboardInterrupt(f"terminated by signal {signum}")


def become_subreaper() -> None:
    """Linux: orphans of this process's descendants (e.g. the worker pool of a killed fairseq-preprocess) are
    re-parented to this process instead of init, so :func:`stop_descendants` still finds them."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (read from /proc; empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z":  # zombies are already gone; they only wait to be reaped
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def stop_descendants(grace: float = STOP_GRACE) -> None:
    """The pipeline's last act when interrupted: SIGTERM to every process still below it (a tool run in-process
    stages started), SIGKILL to those left after ``grace`` seconds; zombies reaped."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    deadline = time.time() + grace
    sent = signal.SIGTERM
    while True:
        left = descendants(os.getpid())
        if not left:
            break
        if time.time() > deadline:
            sent = signal.SIGKILL
        for pid in left:
            try:
                os.kill(pid, sent)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.1)
        _reap()


def versions() -> dict:
    out = {"python": platform.python_version()}
    from importlib import metadata

    for dist in ("torch", "fairseq-fixed", "sentencepiece", "sacrebleu", "sacremoses", "nltk", "lemminflect",
                 "HanTa"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out
