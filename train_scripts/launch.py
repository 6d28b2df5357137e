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
``SAVE_DIR/submitit``).  The launcher waits for the jobs and fails with the log of the first job that failed.

Training jobs are requeued when SLURM preempts them or their time runs out (submitit's checkpointing); fairseq
then resumes from ``SAVE_DIR/checkpoint_last.pt``.  A multi-node job runs one task per node; each task sets
``NNODES``, ``NODE_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT`` for the recipe's ``torchrun`` (see
``train_scripts/common.sh``).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

import submitit

from preprocess.common import UserError, atomic_output, run_main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
    g.add_argument("--cpus-per-task", type=int, default=None, help="CPUs of each job (each node's task)")
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


def _job_env() -> None:
    """Jobs import this project by module name: make sure they find it, whatever their working directory."""
    path = os.environ.get("PYTHONPATH", "")
    if REPO not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = REPO + (os.pathsep + path if path else "")


def wait(jobs: list, what: str) -> list:
    """Results of ``jobs``; the first failure becomes a UserError naming its log."""
    results = []
    for job in jobs:
        try:
            results.append(job.result())
        except submitit.core.utils.UncompletedJobError as exc:
            last = str(exc).strip().splitlines()[-1:] or ["(no message)"]
            raise UserError(f"{what} job {job.job_id} failed: {last[0]} (log: {job.paths.stderr})") from None
    return results


# --- preprocessing: learn once, then one job per shard -----------------------------------------------------------

def _binarize_job(scheme_modules: list, *args, **kwargs) -> dict:
    """``binarize.binarize`` in a job, after importing the schemes that ``--scheme-module`` registered."""
    from train_scripts import binarize
    from train_scripts.schemes import import_scheme_module

    for module in scheme_modules:
        import_scheme_module(module)
    return binarize.binarize(*args, **kwargs)


def preprocess(args: argparse.Namespace, binarize_argv: list) -> dict:
    from train_scripts import binarize

    b, config = binarize.parse_args(binarize_argv)
    if b.shard_id is not None or b.learn_only:
        raise UserError("launch preprocess decides --shard-id and --learn-only itself")
    modules = [os.path.abspath(m) if m.endswith(".py") else m for m in b.scheme_module]
    out = os.path.abspath(b.out)
    log_dir = args.log_dir or os.path.join(out, "submitit")
    common = dict(src=b.src, tgt=b.tgt, shards=b.shards, workers=b.workers, quiet=not b.verbose, lm=b.lm,
                  extra_tests=tuple(b.extra_test), srcdict=b.srcdict, tgtdict=b.tgtdict)
    raw = os.path.abspath(b.data)
    _job_env()

    learn = make_executor(args, log_dir, "binarize-learn")
    job = learn.submit(_binarize_job, modules, config, raw, out, learn_only=True, **common)
    print(f"learning the models: job {job.job_id} (log: {job.paths.stdout})", file=sys.stderr)
    [result] = wait([job], "learning")

    shard = make_executor(args, log_dir, "binarize-shard")
    with shard.batch():
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
    """One node's task: the recipe with this node's torchrun rendezvous.  Requeued as it is when preempted or out
    of time (Checkpointable's default); fairseq then resumes from the save dir's checkpoint_last.pt."""

    def __init__(self, command: list):
        self.command = command

    def __call__(self) -> int:
        env = dict(os.environ)
        job = submitit.JobEnvironment()
        env["NNODES"] = str(job.num_nodes)
        if job.num_nodes > 1:
            dist = submitit.helpers.TorchDistributedEnvironment()
            env.update(NODE_RANK=str(job.node), MASTER_ADDR=dist.master_addr, MASTER_PORT=str(dist.master_port))
        proc = subprocess.run(self.command, env=env, cwd=REPO)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(self.command[:2])} exited with status {proc.returncode}")
        return proc.returncode


def _option(argv: list, name: str):
    value = None
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith(name + "="):
            value = arg.split("=", 1)[1]
    return value


def train(args: argparse.Namespace, recipe_argv: list):
    script = recipe_path(args.recipe)
    save = _option(recipe_argv, "--save-dir")
    if not save:
        raise UserError("give the recipe's --save-dir after --")
    gpus = args.gpus_per_node
    if gpus is None:
        gpus = _visible_gpus() if args.executor == "local" else 0
    command = ["bash", script, *(["--gpus", str(gpus)] if gpus else []), *recipe_argv]
    log_dir = args.log_dir or os.path.join(os.path.abspath(save), "submitit")
    executor = make_executor(args, log_dir, f"{os.path.basename(script)[:-3]}", nodes=args.nodes, gpus_per_node=gpus)
    _job_env()
    job = executor.submit(RecipeJob(command))
    print(f"{os.path.basename(script)} on {args.nodes} node(s) x {gpus or 'no'} GPU(s): job {job.job_id} "
          f"(log: {job.paths.stdout})", file=sys.stderr)
    if args.no_wait:
        print(job.job_id)
        return job
    wait([job], "training")
    return job


def _visible_gpus() -> int:
    try:
        import torch
        return torch.cuda.device_count()
    except Exception:  # noqa: BLE001 - no usable torch means no GPU to give the job
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
