"""train_scripts.launch through submitit: sharded preprocessing as jobs of the local executor (learn once, one job
per shard) whose shard0:shard1 data trains; the SLURM executor's sbatch script (with a stand-in sbatch: the 2 x 8
V100 set-up as a dry run) and its one-line error where SLURM is absent; the multi-node rendezvous a node's task
hands to the recipe; GPUs asked for where there are none.  tests/test_slurm.py runs the launcher against real
SLURM daemons."""
import json
import os
import pickle
import subprocess
import sys

import torch

from tests.conftest import BIN, REPO, cli_env, multi30k_slice


def _launch(*args, env=None, check=True, cwd=REPO):
    proc = subprocess.run([sys.executable, "-m", "train_scripts.launch", *map(str, args)], cwd=cwd,
                          env=env or cli_env(), capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def test_two_shards_two_jobs_then_training_on_both(tmp_path):
    raw = multi30k_slice(tmp_path / "raw", 300, 20, 10)
    out, logs = tmp_path / "sp", tmp_path / "logs"
    proc = _launch("preprocess", "--log-dir", logs, "--scheme", "sentencepiece", "--data", raw, "--out", out,
                   "--vocab-size", "400", "--shards", "2")
    info = json.loads((out / "binarize.json").read_text())
    shards = [out / "data-bin" / "shard0", out / "data-bin" / "shard1"]
    assert info["data"] == ":".join(map(str, shards)) == json.loads(proc.stdout.splitlines()[-1])["data"]
    # one learning job, then one job per shard: three submitit jobs, each with its own result
    shard_line = next(x for x in proc.stderr.splitlines() if "shard job(s)" in x)
    shard_ids = shard_line.split(": ", 1)[1].split(" (")[0].split(", ")
    assert len(shard_ids) == 2 and len(set(shard_ids)) == 2
    results = sorted(p.name for p in logs.glob("*_result.pkl"))
    assert len(results) == 3 and all(any(r.startswith(j + "_") for r in results) for j in shard_ids)
    from fairseq.data import data_utils

    sizes = [len(data_utils.load_indexed_dataset(str(s / "train.en-de.en"), None)) for s in shards]
    assert sizes == [150, 150]
    assert (shards[0] / "dict.en.txt").read_text() == (shards[1] / "dict.en.txt").read_text()

    # the recipe as a job of the same executor: two epochs read shard0, then shard1
    ckpt = tmp_path / "ckpt"
    _launch("train", "--recipe", "translation", "--gpus-per-node", "0", "--", "--data", out, "--save-dir", ckpt,
            "--tiny", "--max-epoch", "2", "--validate-interval-updates", "0")
    [log] = (ckpt / "submitit").glob("*_0_log.err")  # it ran as a submitit job, whose log this is
    log = log.read_text()
    for k, shard in enumerate(shards):
        assert f"loaded 150 examples from: {shard}/train.en-de.en" in log, k
    state = torch.load(ckpt / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert state["cfg"]["task"]["data"] == info["data"]
    assert state["optimizer_history"][-1]["num_updates"] > 0
    assert "end of epoch 2 " in log and "end of epoch 3 " not in log
    assert (ckpt / "checkpoint2.pt").exists() and not (ckpt / "checkpoint3.pt").exists()


def test_slurm_without_sbatch_is_a_one_line_error(tmp_path):
    env = {**cli_env(), "PATH": str(BIN)}  # the venv's tools, no SLURM (whatever this machine has installed)
    assert not (BIN / "sbatch").exists()
    for args in (["preprocess", "--executor", "slurm", "--scheme", "spaces", "--data", tmp_path, "--out",
                  tmp_path / "o", "--shards", "2"],
                 ["train", "--executor", "slurm", "--", "--data", tmp_path, "--save-dir", tmp_path / "c"]):
        proc = _launch(*args, env=env, check=False)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith("error: --executor slurm needs SLURM's sbatch") and "--executor local" in proc.stderr
    proc = _launch("train", "--nodes", "2", "--", "--save-dir", tmp_path / "c", env=env, check=False)
    assert proc.returncode == 2 and "--executor slurm" in proc.stderr


FAKE_SBATCH = """#!/bin/sh
cp "$1" "$RECORD"
echo "Submitted batch job 4242"
"""


def test_slurm_job_script_has_the_requested_resources(tmp_path):
    """What a user runs on V100 nodes (2 nodes x 8 GPUs, NCCL), up to sbatch (a stand-in records the script), and
    each node's recipe as a dry run."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "sbatch").write_text(FAKE_SBATCH)
    (fake / "srun").write_text("#!/bin/sh\nexit 1\n")
    for tool in ("sbatch", "srun"):
        os.chmod(fake / tool, 0o755)
    record, save = tmp_path / "job.sh", tmp_path / "ckpt"
    (tmp_path / "lm").mkdir()
    (tmp_path / "lm" / "dict.txt").write_text("a 1\n")
    env = {**cli_env(), "PATH": f"{fake}{os.pathsep}{cli_env()['PATH']}", "RECORD": str(record)}
    proc = _launch("train", "--executor", "slurm", "--recipe", "roberta", "--nodes", "2", "--gpus-per-node", "8",
                   "--partition", "gpu", "--time", "90", "--cpus-per-task", "10", "--mem-gb", "64",
                   "--slurm-option", "account=proj", "--slurm-option", "qos=high",
                   "--slurm-option", "constraint=volta32gb", "--no-wait", "--", "--data", "lm",
                   "--save-dir", "ckpt", "--max-update", "5", env=env, cwd=tmp_path)
    assert proc.stdout.strip() == "4242"
    script = record.read_text()
    for line in ("#SBATCH --partition=gpu", "#SBATCH --nodes=2", "#SBATCH --gpus-per-node=8", "#SBATCH --time=90",
                 "#SBATCH --ntasks-per-node=1", "#SBATCH --cpus-per-task=10", "#SBATCH --account=proj",
                 "#SBATCH --qos=high", "#SBATCH --constraint=volta32gb", "#SBATCH --mem=64GB"):
        assert line in script.splitlines(), line
    # the job runs with the launching interpreter
    assert f"{sys.executable} -u -m submitit.core._submit" in script
    # what every node's task will run: the recipe with this node's GPUs and the user's options, relative paths
    # made absolute against the directory the launcher ran in (and run there)
    [pickled] = (save / "submitit").glob("*_submitted.pkl")
    with open(pickled, "rb") as fh:
        job = pickle.load(fh).function
    assert job.command == ["bash", str(REPO / "train_scripts" / "pretrain_roberta.sh"), "--gpus", "8", "--data",
                           str(tmp_path / "lm"), "--save-dir", str(save), "--max-update", "5"]
    assert job.cwd == str(tmp_path)
    # node 1 of 2 as a dry run: torchrun with 8 processes on this node, rendezvous at node 0, NCCL (no --cpu, no
    # gloo), fp16, and the paper's 2,048 sequences over the 16 GPUs
    dry = subprocess.run([*job.command[:2], "--dry-run", *job.command[2:]], cwd=REPO, capture_output=True, text=True,
                         env={**cli_env(), "NNODES": "2", "NODE_RANK": "1", "MASTER_ADDR": "gpu3",
                              "MASTER_PORT": "29533"})
    assert dry.returncode == 0, dry.stderr
    command = dry.stdout.strip().splitlines()[-1]
    assert ("-m torch.distributed.run --nnodes 2 --node-rank 1 --master-addr gpu3 --master-port 29533 "
            "--nproc-per-node 8 -m train_scripts.fairseq_launch fairseq-train") in command
    assert "--fp16" in command and "--cpu" not in command and "gloo" not in command
    assert "effective batch" in dry.stderr and "= 16 process(es)" in dry.stderr


def test_cpu_ranks_use_gloo_on_any_layout():
    """2 nodes x 1 CPU process is distributed too: gloo and legacy_ddp, not fairseq's default NCCL."""
    from train_scripts.fairseq_launch import distributed_args

    two_nodes = {"WORLD_SIZE": "2", "RANK": "1", "LOCAL_RANK": "0"}
    cpu = distributed_args(two_nodes, ["data", "--cpu"])
    assert cpu[cpu.index("--distributed-backend") + 1] == "gloo" and cpu[cpu.index("--ddp-backend") + 1] == "legacy_ddp"
    assert "--distributed-backend" not in distributed_args(two_nodes, ["data"])  # GPUs: fairseq's NCCL
    mine = distributed_args(two_nodes, ["data", "--cpu", "--ddp-backend=no_c10d"])
    assert "--ddp-backend" not in mine and "--distributed-backend" in mine
    assert distributed_args({"WORLD_SIZE": "1"}, ["--cpu"]) == []


def test_relative_paths_are_resolved_against_the_users_directory():
    from train_scripts.launch import absolute_paths

    assert absolute_paths(["--data", "a:b/c", "--save-dir=ck", "--tiny", "--lr", "1", "--data", "/abs"], "/u") == \
        ["--data", "/u/a:/u/b/c", "--save-dir=/u/ck", "--tiny", "--lr", "1", "--data", "/abs"]


def test_gpus_without_gpus_is_one_line_naming_cpu(tmp_path):
    visible = torch.cuda.device_count()
    more = str(visible + 1)
    env = {**cli_env(), "PATH": str(BIN)}  # no SLURM needed: refused before anything is submitted
    for args in (["train", "--gpus-per-node", more, "--", "--data", tmp_path, "--save-dir", tmp_path / "c"],
                 ["train", "--", "--gpus", more, "--data", tmp_path, "--save-dir", tmp_path / "c"],
                 ["train", "--executor", "slurm", "--", "--gpus", "8", "--data", tmp_path, "--save-dir",
                  tmp_path / "c"]):
        proc = _launch(*args, env=env, check=False)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith("error: ") and "--cpu" in proc.stderr, proc.stderr
    assert not (tmp_path / "c").exists()
    # the recipes themselves (on a node without GPUs): one line naming --cpu, not --gpus CPU ranks in disguise
    (tmp_path / "dict.txt").write_text("a 1\n")  # enough data for the recipes to reach their device check
    for recipe in ("train_transformer_big.sh", "pretrain_roberta.sh"):
        proc = subprocess.run(["bash", str(REPO / "train_scripts" / recipe), "--data", str(tmp_path), "--save-dir",
                               str(tmp_path / "c"), "--gpus", more], cwd=REPO, env={**cli_env(),
                              "CUDA_VISIBLE_DEVICES": ""}, capture_output=True, text=True)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "asks for GPUs but CUDA sees none" in proc.stderr and "--cpu" in proc.stderr


def test_node_task_sets_the_torchrun_rendezvous(tmp_path):
    """A node's task of a 2-node SLURM job (as SLURM sets its environment) exports what common.sh's launch()
    hands to torchrun: NNODES, NODE_RANK, MASTER_ADDR (the first node) and MASTER_PORT."""
    seen = tmp_path / "env.txt"
    code = ("from train_scripts.launch import RecipeJob; import sys; "
            "RecipeJob(['bash', '-c', 'echo $NNODES $NODE_RANK $MASTER_ADDR $MASTER_PORT > ' + sys.argv[1]])()")
    env = {**cli_env(), "SUBMITIT_EXECUTOR": "slurm", "SLURM_JOB_ID": "77", "SLURM_JOB_NUM_NODES": "2",
           "SLURM_NODEID": "1", "SLURM_PROCID": "1", "SLURM_LOCALID": "0", "SLURM_NTASKS": "2",
           "SLURM_JOB_NODELIST": "gpu[3-4]", "SLURM_STEP_NODELIST": "gpu[3-4]", "MASTER_PORT": "29533"}
    proc = subprocess.run([sys.executable, "-c", code, str(seen)], cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert seen.read_text().split() == ["2", "1", "gpu3", "29533"]


def _follow(monkeypatch, tmp_path, states: list, log: str):
    """wait_slurm on a fake job: SLURM answers ``states`` one poll after another (the last one for ever), its
    submitit log is ``log``, a fake clock advances by each sleep; returns the result or the one-line error and
    the clock at the end."""
    from types import SimpleNamespace

    from preprocess.common import UserError
    from train_scripts import launch
    (tmp_path / "6_0_log.out").write_text(log)
    job = SimpleNamespace(job_id="6", paths=SimpleNamespace(stdout=tmp_path / "6_0_log.out",
                                                            stderr=tmp_path / "6_0_log.err"))
    clock = [0.0]
    answers = iter(states)
    last = [states[-1]]
    monkeypatch.setattr(launch.time, "time", lambda: clock[0])
    monkeypatch.setattr(launch.time, "sleep", lambda s: clock.__setitem__(0, clock[0] + s))
    monkeypatch.setattr(launch, "slurm_states", lambda ids: {"6": (next(answers, last[0]), "")})
    monkeypatch.setattr(launch, "_task_outcomes", lambda j: [("success", "done")])
    try:
        return launch.wait_slurm([job], "training"), clock[0]
    except UserError as e:
        return str(e), clock[0]


def test_a_job_that_requeued_itself_is_waited_for_through_a_failed_state(monkeypatch, tmp_path):
    """SIGUSR2 near the time limit: submitit requeues the job and its run ends; SLURM showed FAILED for several
    seconds before PENDING once (CI). With submitit's "Requeued job" the launcher waits (up to REQUEUE_GRACE_S);
    without it, a failure is concluded after CONFIRM_FINAL_S."""
    from train_scripts import launch
    requeued = "submitit INFO - Starting with JobEnvironment(job_id=6)\nsubmitit INFO - Requeued job 6\n"
    failing = ["RUNNING"] + ["FAILED"] * 8 + ["PENDING", "RUNNING", "COMPLETED"]
    assert _follow(monkeypatch, tmp_path, failing, requeued)[0] == [["done"]]
    message, _ = _follow(monkeypatch, tmp_path, failing, requeued.replace("Requeued job 6", "done"))
    assert "SLURM ended it as FAILED" in message
    # a requeue that never comes back: FAILED after the grace
    message, clock = _follow(monkeypatch, tmp_path, ["RUNNING", "FAILED"], requeued)
    assert "SLURM ended it as FAILED" in message and clock >= launch.REQUEUE_GRACE_S
    # the run after the requeue started (a later "Starting with"): its failure counts at once
    message, clock = _follow(monkeypatch, tmp_path, ["RUNNING", "FAILED"], requeued + "Starting with JobEnvironment\n")
    assert "SLURM ended it as FAILED" in message and clock < launch.REQUEUE_GRACE_S


def test_preprocess_jobs_use_the_cpus_they_ask_for():
    """--cpus-per-task C gives each preprocessing job C workers, unless binarize's --workers is given."""
    import argparse

    from train_scripts.launch import job_workers

    with_cpus, without = argparse.Namespace(cpus_per_task=8), argparse.Namespace(cpus_per_task=None)
    assert job_workers(with_cpus, ["--scheme", "spaces"], 1) == 8
    assert job_workers(with_cpus, ["--scheme", "spaces", "--workers", "2"], 2) == 2
    assert job_workers(with_cpus, ["--workers=1"], 1) == 1
    assert job_workers(without, ["--scheme", "spaces"], 1) == 1
