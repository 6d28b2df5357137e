"""Run the recipes as ``submitit`` jobs: on this machine (the local executor, the default) or on a SLURM cluster.

    # sharded preprocessing: one job learns the models once, then one job per shard, then OUT/binarize.json
    python -m train_scripts.launch preprocess --shards 8 --scheme spaces --data raw/ --out work/spaces \\
        [any train_scripts.binarize option] [--executor slurm --partition cpu --time 240 --cpus-per-task 8]

    # training: a recipe on NODES x GPUS (torchrun on every node, fairseq's data parallelism across all of them)
    python -m train_scripts.launch train --recipe translation [--nodes 4 --gpus-per-node 8] \\
        [--executor slurm --partition gpu --time 4320] -- --data work/spaces --save-dir ckpt/spaces [recipe options]

The same command runs on one machine (``--executor local``: submitit starts the jobs as local processes, with
the same logs and results) and on SLURM (``--executor slurm``: one ``sbatch`` job, or one job array, per step;
the shards of a step run in parallel).  Job logs go to ``--log-dir`` (default ``OUT/submitit`` or
``SAVE_DIR/submitit``).  The launcher waits for the jobs' final outcome and fails with the log of the first job that
failed; on SLURM it follows each job's state in the scheduler, so a requeued job is waited for until it ends, an
``sbatch`` refusal is one line with sbatch's message, and a job that SLURM keeps pending for a reason that cannot
clear (e.g. more CPUs than any node has) is cancelled and reported with SLURM's reason.

Jobs run with the Python of the environment that launched them (its ``bin`` first on ``PATH``) in the directory
the launcher was started from; the recipe's ``--data`` and ``--save-dir`` are made absolute against it.
Training jobs are requeued when SLURM preempts them or their time runs out (submitit's checkpointing, or
``scontrol requeue``); fairseq then resumes from ``SAVE_DIR/checkpoint_last.pt``.  A multi-node job runs one task
per node; each task sets ``NNODES``, ``NODE_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT`` for the recipe's
``torchrun`` (see ``train_scripts/common.sh``).  See docs/cluster.md.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

import submitit

from preprocess.cli import run_main
from preprocess.common import REPO, UserError, quiet_stderr
from preprocess.files.outputs import atomic_output

RECIPES = {
    "translation": "train_transformer_big.sh",
    "roberta": "pretrain_roberta.sh",
    "classification": "finetune_classification.sh",
}


# --- executors -------------------------------------------------------------------------------------------------

def add_executor_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("where the jobs run (submitit)")
    g.add_argument("--executor", choices=("local", "slurm"), default="local",
                   help="local: processes on this machine; slurm: sbatch jobs on a SLURM cluster")
    g.add_argument("--log-dir", default=None, help="submitit's folder for job scripts, pickles and logs")
    g.add_argument("--time", type=int, default=1440, help="time limit of each job, in minutes")
    g.add_argument("--partition", default=None, help="SLURM partition")
    g.add_argument("--cpus-per-task", type=int, default=None, help="CPUs of each job (each node's task); for preprocess also binarize's --workers, "
                   "unless that is given")
    g.add_argument("--mem-gb", type=float, default=None, help="memory of each job (each node), in GB")
    g.add_argument("--slurm-option", action="append", default=[], metavar="KEY=VALUE",
                   help="any other sbatch option, e.g. account=proj, qos=high, constraint=volta32gb (repeatable)")


def make_executor(args: argparse.Namespace, log_dir: str, name: str, nodes: int = 1, gpus_per_node: int = 0):
    """A submitit executor for one step's jobs; a one-line error when SLURM is asked for where it is absent."""
    if args.executor == "slurm" and shutil.which("sbatch") is None:
        raise UserError("--executor slurm needs SLURM's sbatch, which is not on PATH here; "
                        "--executor local runs the same jobs on this machine")
    if args.executor == "local" and nodes > 1:
        raise UserError(f"--nodes {nodes} needs a cluster (--executor slurm); the local executor has one node")
    executor = submitit.AutoExecutor(folder=log_dir, cluster=args.executor)
    params = {"name": name, "timeout_min": int(args.time), "nodes": nodes, "tasks_per_node": 1,
              "gpus_per_node": gpus_per_node}
    if args.cpus_per_task:
        params["cpus_per_task"] = args.cpus_per_task
    if args.mem_gb:
        params["mem_gb"] = args.mem_gb
    if args.executor == "slurm":
        if args.partition:
            params["slurm_partition"] = args.partition
        extra = {}
        for item in args.slurm_option:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise UserError(f"--slurm-option wants KEY=VALUE, not {item!r}")
            extra[key.replace("_", "-")] = value
        if extra:
            params["slurm_additional_parameters"] = extra
    executor.update_parameters(**params)
    return executor


def _prepend(environ, name: str, entry: str) -> None:
    path = environ.get(name, "")
    if entry not in path.split(os.pathsep):
        environ[name] = entry + (os.pathsep + path if path else "")


def job_env(environ=os.environ) -> None:
    """What a job inherits from the launcher (sbatch exports the submitting environment): this project on
    PYTHONPATH whatever the job's directory, and the launching interpreter's ``bin`` (its venv: python, torchrun,
    fairseq-train) first on PATH, so a recipe finds them without an activated venv."""
    _prepend(environ, "PYTHONPATH", str(REPO))
    _prepend(environ, "PATH", os.path.dirname(sys.executable))


@contextlib.contextmanager
def submission(what: str):
    """sbatch refusing a job (bad gres, partition, account...) becomes one line with sbatch's own message."""
    try:
        with quiet_stderr():   # submitit echoes sbatch's stderr before raising: the error line says it once
            yield
    except (submitit.core.utils.FailedJobError, submitit.core.utils.FailedSubmissionError) as exc:
        lines = [re.sub(r"^sbatch: (error: )?", "", x.strip()) for x in str(exc).strip().splitlines() if x.strip()]
        raise UserError(f"sbatch refused the {what} job: {'; '.join(lines) or 'no message'}") from None


def wait(jobs: list, what: str) -> list:
    """Results of ``jobs`` (each job's list of task results); the first failure becomes a UserError naming its log.
    SLURM jobs are followed in the scheduler until they end (see :func:`wait_slurm`)."""
    if jobs and isinstance(jobs[0], submitit.SlurmJob):
        return wait_slurm(jobs, what)
    results = []
    for job in jobs:
        try:
            results.append(job.results())
        except submitit.core.utils.UncompletedJobError as exc:
            last = str(exc).strip().splitlines()[-1:] or ["(no message)"]
            raise UserError(f"{what} job {job.job_id} failed: {last[0]} (log: {job.paths.stderr})") from None
    return results


#: job states after which SLURM runs the job no more (a requeued job goes back to PENDING instead)
FINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
                "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT"}
#: pending reasons that only an administrator (or a new submission) can clear: the request fits no node or limit
STUCK_REASONS = re.compile(r"PartitionConfig|PartitionNodeLimit|PartitionTimeLimit|BadConstraints|InvalidAccount|"
                           r"InvalidQOS|DependencyNeverSatisfied|(QOS|Assoc)\w*PerJob\w*")


def slurm_states(job_ids: list) -> dict | None:
    """{job id: (state, reason)} for the jobs the SLURM controller still knows (squeue, array tasks one by one);
    None when squeue could not answer (e.g. the controller is not reachable for a moment)."""
    proc = subprocess.run(["squeue", "-h", "-r", "-t", "all", "-j", ",".join(job_ids), "-o", "%i|%T|%r"],
                          capture_output=True, text=True)
    states = {}
    for line in proc.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 3:
            states[parts[0]] = (parts[1], parts[2])
    if proc.returncode != 0 and "invalid job id" not in proc.stderr.lower():
        return None
    if proc.returncode != 0 and not states:  # squeue knows none of them any more: ask accounting, if any
        acct = subprocess.run(["sacct", "-X", "-n", "-P", "-o", "JobID,State", "-j", ",".join(job_ids)],
                              capture_output=True, text=True)
        for line in acct.stdout.splitlines() if acct.returncode == 0 else []:
            job_id, _, state = line.strip().partition("|")
            states[job_id] = (state.split()[0] if state else "UNKNOWN", "")
    return states


def _task_outcomes(job) -> list:
    """Each task's (outcome, result) from submitit's result pickles; None for a task without one."""
    outcomes = []
    for task in job._tasks:  # noqa: SLF001 - the task ids submitit gave the job (one per node)
        path = submitit.core.utils.JobPaths(job.paths.folder, job_id=job.job_id, task_id=task).result_pickle
        outcomes.append(submitit.core.utils.pickle_load(path) if path.exists() else None)
    return outcomes


#: seconds a final state must last (seen again on a later poll) before a job counts as ended
CONFIRM_FINAL_S = 5.0
#: seconds a job whose last run requeued it (submitit's log says so) may show a failed state before that counts:
#: SLURM can show FAILED for several seconds between such a run's end and the job's return to PENDING
REQUEUE_GRACE_S = 120.0


def _requeued_itself(job) -> bool:
    """submitit's log of the job's first task says that its latest run requeued the job (on SIGUSR2: the time limit
    is near, or preemption): "Requeued job" after the last "Starting with"."""
    try:
        with open(job.paths.stdout, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return False
    start = text.rfind("Starting with")
    return start >= 0 and "Requeued job" in text[start:]


def _follow_state(job_id: str, state: str, reason: str, seen_state: dict, what: str) -> None:
    """Record a job's new ``state``: say so when SLURM has requeued it; cancel it (UserError) when it is pending
    for a reason that cannot clear."""
    previous = seen_state.get(job_id)
    if state and state != previous:
        if previous in ("RUNNING", "COMPLETING") and state in ("PENDING", "REQUEUED", "REQUEUE_HOLD"):
            print(f"{what} job {job_id} was requeued (preempted, out of time or `scontrol requeue`): "
                  f"waiting for it to run again", file=sys.stderr)
        seen_state[job_id] = state
    if state == "PENDING" and STUCK_REASONS.fullmatch(reason or ""):
        subprocess.run(["scancel", job_id], capture_output=True)
        raise UserError(f"{what} job {job_id} cannot start: SLURM keeps it pending ({reason}: no node or "
                        f"limit of the partition fits the request); it was cancelled, ask for resources "
                        f"that `sinfo -N -l` shows (--cpus-per-task, --mem-gb, --gpus-per-node, --time, "
                        f"--partition)")


def _final_confirmed(job, job_id: str, state: str, ending: dict) -> bool:
    """Whether the final ``state`` a poll shows for a job concludes it: only when a later poll, CONFIRM_FINAL_S on,
    still says so.  Once, the requeue test's launcher read FAILED for a job that submitit was requeueing itself
    (SIGUSR2), then gave up on it (and a job whose run has just requeued it is given REQUEUE_GRACE_S to come
    back).  ``ending``: job id -> (final state, when first seen)."""
    first = ending.setdefault(job_id, (state, time.time()))
    if first[0] != state:
        ending[job_id] = (state, time.time())
        return False
    lasted = time.time() - first[1]
    return lasted >= CONFIRM_FINAL_S and (lasted >= REQUEUE_GRACE_S or state == "COMPLETED"
                                          or not _requeued_itself(job))


def _job_results(job, job_id: str, state: str, what: str) -> list:
    """The results of a job's tasks, once SLURM has ended it as ``state``; UserError if it failed or left none."""
    outcomes = _task_outcomes(job)
    for _ in range(30):  # results on a shared file system may show up a little after the job's end
        if all(outcomes) or state not in ("COMPLETED", "UNKNOWN"):
            break
        time.sleep(1)
        outcomes = _task_outcomes(job)
    errors = [outcome[1] for outcome in outcomes if outcome and outcome[0] == "error"]
    if state in ("COMPLETED", "UNKNOWN") and all(outcomes) and not errors:
        return [result for _, result in outcomes]
    if errors:
        last = str(errors[0]).strip().splitlines()[-1:] or ["(no message)"]
        detail = last[0]
    elif state in ("COMPLETED", "UNKNOWN"):
        detail = "it left no result"
    else:
        detail = f"SLURM ended it as {state}"
    raise UserError(f"{what} job {job_id} failed: {detail} (log: {job.paths.stderr})")


def wait_slurm(jobs: list, what: str, poll_s: float = 2.0, max_poll_s: float = 15.0) -> list:
    """Follow ``jobs`` in SLURM until each has reached a final state, then read their results.

    A result written by a run that SLURM then requeues (preemption, time limit, ``scontrol requeue``) is not the
    outcome: the job is waited for until SLURM runs it no more.  A job pending for a reason that cannot clear is
    cancelled and reported with SLURM's reason; a job the controller has forgotten counts as ended once its
    results are there (or a minute after it was last seen)."""
    by_id = {job.job_id: job for job in jobs}
    seen_state: dict = {}
    last_seen = {job_id: time.time() for job_id in by_id}
    final: dict = {}
    ending: dict = {}   # job id -> (final state, when first seen), until a later poll confirms it
    start = time.time()
    while len(final) < len(by_id):
        waiting = [j for j in by_id if j not in final]
        states = slurm_states(waiting)
        if states is None:  # no answer this time: nothing is concluded, ask again later
            time.sleep(max_poll_s)
            continue
        for job_id in waiting:
            job = by_id[job_id]
            state, reason = states.get(job_id, ("", ""))
            state = state.split()[0].upper() if state else ""
            if state:
                last_seen[job_id] = time.time()
            _follow_state(job_id, state, reason, seen_state, what)
            if state in FINAL_STATES:
                if _final_confirmed(job, job_id, state, ending):
                    final[job_id] = state
                continue
            ending.pop(job_id, None)
            if not state:
                outcomes = _task_outcomes(job)
                if all(outcomes) or time.time() - last_seen[job_id] > 60:
                    final[job_id] = "UNKNOWN"
        if len(final) < len(by_id):
            time.sleep(min(max_poll_s, max(poll_s, (time.time() - start) / 10)))
    return [_job_results(job, job_id, final[job_id], what) for job_id, job in by_id.items()]


# --- preprocessing: learn once, then one job per shard -----------------------------------------------------------

def _binarize_job(scheme_modules: list, *args, **kwargs) -> dict:
    """``binarize.binarize`` in a job, after importing the schemes that ``--scheme-module`` registered."""
    from train_scripts import binarize
    from train_scripts.schemes import import_scheme_module

    for module in scheme_modules:
        import_scheme_module(module)
    return binarize.binarize(*args, **kwargs)


def job_workers(args: argparse.Namespace, binarize_argv: list, workers: int) -> int:
    """binarize's ``--workers`` in each job: as given, or else one per CPU the job asks for (``--cpus-per-task``),
    so that a job of 16 CPUs does not encode and binarise in one process."""
    given = any(a == "--workers" or a.startswith("--workers=") for a in map(str, binarize_argv))
    return args.cpus_per_task if args.cpus_per_task and not given else workers


def preprocess(args: argparse.Namespace, binarize_argv: list) -> dict:
    from train_scripts import binarize

    b, config = binarize.parse_args(binarize_argv)
    if b.shard_id is not None or b.learn_only:
        raise UserError("launch preprocess decides --shard-id and --learn-only itself")
    modules = [os.path.abspath(m) if m.endswith(".py") else m for m in b.scheme_module]
    out = os.path.abspath(b.out)
    log_dir = args.log_dir or os.path.join(out, "submitit")
    common = dict(src=b.src, tgt=b.tgt, shards=b.shards, workers=job_workers(args, binarize_argv, b.workers),
                  quiet=not b.verbose, lm=b.lm,
                  extra_tests=tuple(b.extra_test), srcdict=b.srcdict, tgtdict=b.tgtdict)
    raw = os.path.abspath(b.data)
    job_env()

    learn = make_executor(args, log_dir, "binarize-learn")
    with submission("learning"):
        job = learn.submit(_binarize_job, modules, config, raw, out, learn_only=True, **common)
    print(f"learning the models: job {job.job_id} (log: {job.paths.stdout})", file=sys.stderr)
    [[result]] = wait([job], "learning")  # one job of one task

    shard = make_executor(args, log_dir, "binarize-shard")
    with submission("shard"), shard.batch():
        jobs = [shard.submit(_binarize_job, modules, config, raw, out, shard_id=k, **common) for k in range(b.shards)]
    print(f"{len(jobs)} shard job(s): {', '.join(j.job_id for j in jobs)} (logs in {log_dir})", file=sys.stderr)
    wait(jobs, "shard")
    # every shard is there: write the record that a one-machine run of binarize writes
    with atomic_output(os.path.join(out, "binarize.json")) as fh:
        json.dump(result, fh, indent=1)
    return result


# --- training: a recipe on nodes x GPUs ------------------------------------------------------------------------

def recipe_path(recipe: str) -> str:
    path = os.path.join(REPO, "train_scripts", RECIPES[recipe]) if recipe in RECIPES else os.path.abspath(recipe)
    if not os.path.isfile(path):
        raise UserError(f"recipe not found: {recipe} (known: {', '.join(RECIPES)}, or a path to a .sh recipe)")
    return path


class RecipeJob(submitit.helpers.Checkpointable):
    """One node's task: the recipe with this node's torchrun rendezvous, run in ``cwd`` (the directory the launcher
    was started from).  Requeued as it is when preempted or out of time (Checkpointable's default); fairseq then
    resumes from the save dir's checkpoint_last.pt."""

    def __init__(self, command: list, cwd: str | None = None):
        self.command = command
        self.cwd = cwd

    def __call__(self) -> int:
        env = dict(os.environ)
        job_env(env)
        job = submitit.JobEnvironment()
        env["NNODES"] = str(job.num_nodes)
        if job.num_nodes > 1:
            dist = submitit.helpers.TorchDistributedEnvironment()
            env.update(NODE_RANK=str(job.node), MASTER_ADDR=dist.master_addr, MASTER_PORT=str(dist.master_port))
        proc = subprocess.run(self.command, env=env, cwd=self.cwd or REPO)
        if proc.returncode in STOPPED_BY_SIGNAL and os.environ.get("SLURM_JOB_ID"):
            # SLURM signals every process of a job it requeues, preempts or cancels: the recipe stops cleanly (its
            # process group, checkpoint_last.pt kept) while this process, which submitit keeps alive through
            # SIGTERM, would record a failure before SLURM requeues the job.  Wait for SLURM to end this instance
            # (it sends SIGKILL after KillWait); only a recipe stopped for another reason gets past the wait.
            print(f"{' '.join(self.command[:2])} stopped by a signal (status {proc.returncode}): waiting for SLURM "
                  "to requeue or end this job", file=sys.stderr, flush=True)
            time.sleep(REQUEUE_WAIT_S)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(self.command[:2])} exited with status {proc.returncode}")
        return proc.returncode


#: exit statuses of a recipe stopped by SIGTERM / SIGINT (shell convention and Python's negative signal numbers)
STOPPED_BY_SIGNAL = (143, 130, -15, -2)
#: how long a SLURM task whose recipe was stopped by a signal waits to be killed or requeued before failing
REQUEUE_WAIT_S = 300


def _option(argv: list, name: str):
    value = None
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith(name + "="):
            value = arg.split("=", 1)[1]
    return value


#: recipe options that name files or folders: made absolute against the launcher's directory
PATH_OPTIONS = ("--data", "--save-dir", "--pretrained", "--lm-data", "--csv-prefix", "--work")


def absolute_paths(argv: list, cwd: str) -> list:
    """``argv`` with the values of :data:`PATH_OPTIONS` absolute (``--data a:b`` shard lists part by part)."""
    def resolve(value: str) -> str:
        return ":".join(os.path.join(cwd, part) if part else part for part in value.split(":"))

    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        name, sep, value = arg.partition("=")
        if name in PATH_OPTIONS and sep:
            out.append(f"{name}={resolve(value)}")
        elif arg in PATH_OPTIONS and i + 1 < len(argv):
            out += [arg, resolve(argv[i + 1])]
            i += 1
        else:
            out.append(arg)
        i += 1
    return out


def check_gpus(args: argparse.Namespace, recipe_argv: list, gpus: int) -> None:
    """GPUs asked for where the job cannot have them: one line naming --cpu instead of CPU ranks in disguise."""
    cpu = args.cpu or "--cpu" in recipe_argv or "--tiny" in recipe_argv
    asked = _option(recipe_argv, "--gpus") or _option(recipe_argv, "--nproc")
    dry = "--dry-run" in recipe_argv
    if args.cpu and args.gpus_per_node:
        raise UserError(f"--cpu and --gpus-per-node {args.gpus_per_node} contradict each other: choose one")
    if dry:
        return
    if args.executor == "local":
        visible = _visible_gpus()
        want = args.gpus_per_node or 0
        if not cpu and asked and asked.isdigit():
            want = max(want, int(asked))
        if want > visible:
            raise UserError(f"{want} GPU(s) asked for but CUDA sees {visible} here: add --cpu to train on CPU "
                            f"processes (the recipe's --gpus N then counts CPU processes)")
    elif not cpu and asked and asked.isdigit() and int(asked) > gpus:
        raise UserError(f"the recipe's --gpus {asked} asks for GPUs but the job requests {gpus} per node: give "
                        f"--gpus-per-node {asked}, or add --cpu to run {asked} CPU process(es) per node")


def train(args: argparse.Namespace, recipe_argv: list):
    script = recipe_path(args.recipe)
    cwd = os.getcwd()
    recipe_argv = absolute_paths(recipe_argv, cwd)
    save = _option(recipe_argv, "--save-dir")
    if not save:
        raise UserError("give the recipe's --save-dir after --")
    gpus = args.gpus_per_node
    if gpus is None:
        gpus = _visible_gpus() if args.executor == "local" and not args.cpu else 0
    check_gpus(args, recipe_argv, gpus)
    cpu = ["--cpu"] if args.cpu and "--cpu" not in recipe_argv else []
    command = ["bash", script, *cpu, *(["--gpus", str(gpus)] if gpus else []), *recipe_argv]
    log_dir = args.log_dir or os.path.join(save, "submitit")
    executor = make_executor(args, log_dir, f"{os.path.basename(script)[:-3]}", nodes=args.nodes, gpus_per_node=gpus)
    job_env()
    with submission("training"):
        job = executor.submit(RecipeJob(command, cwd))
    print(f"{os.path.basename(script)} on {args.nodes} node(s) x {gpus or 'no'} GPU(s): job {job.job_id} "
          f"(log: {job.paths.stdout})", file=sys.stderr)
    if args.no_wait:
        print(job.job_id)
        return job
    wait([job], "training")
    last = os.path.join(save, "checkpoint_last.pt")
    saved = f"; last checkpoint: {last}" if os.path.exists(last) else "; no checkpoint_last.pt in the save dir"
    restarts = _restarts(job.job_id) if args.executor == "slurm" else 0
    again = f" after {restarts} requeue(s)" if restarts else ""
    print(f"training job {job.job_id} finished on {args.nodes} node(s){again}{saved}", file=sys.stderr)
    return job


def _restarts(job_id: str) -> int:
    """How often SLURM requeued the job (0 when the controller no longer knows it)."""
    proc = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True)
    found = re.search(r"\bRestarts=(\d+)", proc.stdout)
    return int(found.group(1)) if found else 0


def _visible_gpus() -> int:
    try:
        import torch
        return torch.cuda.device_count()
    except (ImportError, OSError, RuntimeError):  # no usable torch (missing, broken CUDA libraries): no GPU to give
        return 0


# --- command line ----------------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m train_scripts.launch", description=__doc__.split("\n\n")[0],
                                allow_abbrev=False,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    pre = sub.add_parser("preprocess", formatter_class=argparse.ArgumentDefaultsHelpFormatter, allow_abbrev=False,
                         help="learn once, then encode and binarise one job per shard (binarize options follow)",
                         description="Every option that is not a launcher option goes to train_scripts.binarize "
                                     "(--scheme, --data, --out, --shards, ...).")
    add_executor_args(pre)
    tr = sub.add_parser("train", formatter_class=argparse.ArgumentDefaultsHelpFormatter, allow_abbrev=False,
                        help="run a training recipe as one job on NODES x GPUS (recipe options after --)",
                        description="Everything after -- goes to the recipe (--data, --save-dir, ...).")
    tr.add_argument("--recipe", default="translation",
                    help=f"{', '.join(f'{k} ({v})' for k, v in RECIPES.items())}, or a path to a recipe")
    tr.add_argument("--nodes", type=int, default=1, help="nodes (SLURM only beyond 1)")
    tr.add_argument("--gpus-per-node", type=int, default=None,
                    help="GPUs per node, one training process each (default: local: the visible GPUs; slurm: 0)")
    tr.add_argument("--cpu", action="store_true",
                    help="train on CPU processes (gloo): passes --cpu to the recipe, asks for no GPUs")
    tr.add_argument("--no-wait", action="store_true", help="print the job id and return once it is submitted")
    add_executor_args(tr)
    return p


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv and argv[0] == "train" and "--" in argv:
        cut = argv.index("--")
        args, rest = parser.parse_args(argv[:cut]), argv[cut + 1:]
    else:
        args, rest = parser.parse_known_args(argv)
    if args.command == "preprocess":
        result = preprocess(args, rest)
        print(json.dumps({k: result[k] for k in ("data", "train_args", "generate_args", "fairseq_args")
                          if k in result}))
    else:
        if args.nodes < 1:
            raise UserError("--nodes must be at least 1")
        train(args, rest)
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
