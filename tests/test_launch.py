"""train_scripts.launch through submitit: sharded preprocessing as jobs of the local executor (learn once, one job
per shard) whose shard0:shard1 data trains; the SLURM executor's sbatch script (with a stand-in sbatch) and its
one-line error where SLURM is absent; the multi-node rendezvous a node's task hands to the recipe."""
import json
import os
import pickle
import subprocess
import sys

import torch

from tests.conftest import BIN, REPO, cli_env, multi30k_slice


def _launch(*args, env=None, check=True):
    proc = subprocess.run([sys.executable, "-m", "train_scripts.launch", *map(str, args)], cwd=REPO,
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
    env = {**cli_env(), "PATH": str(BIN)}  # the venv's tools, no SLURM
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
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "sbatch").write_text(FAKE_SBATCH)
    (fake / "srun").write_text("#!/bin/sh\nexit 1\n")
    for tool in ("sbatch", "srun"):
        os.chmod(fake / tool, 0o755)
    record, save = tmp_path / "job.sh", tmp_path / "ckpt"
    env = {**cli_env(), "PATH": f"{fake}{os.pathsep}{cli_env()['PATH']}", "RECORD": str(record)}
    proc = _launch("train", "--executor", "slurm", "--recipe", "roberta", "--nodes", "2", "--gpus-per-node", "8",
                   "--partition", "gpu", "--time", "90", "--cpus-per-task", "10", "--slurm-option", "account=proj",
                   "--no-wait", "--", "--data", "work/lm", "--save-dir", save, "--max-update", "5", env=env)
    assert proc.stdout.strip() == "4242"
    script = record.read_text()
    for line in ("#SBATCH --partition=gpu", "#SBATCH --nodes=2", "#SBATCH --gpus-per-node=8", "#SBATCH --time=90",
                 "#SBATCH --ntasks-per-node=1", "#SBATCH --cpus-per-task=10", "#SBATCH --account=proj"):
        assert line in script.splitlines(), line
    # what every node's task will run: the recipe with this node's GPUs and the user's options
    [pickled] = (save / "submitit").glob("*_submitted.pkl")
    with open(pickled, "rb") as fh:
        job = pickle.load(fh).function
    assert job.command == ["bash", str(REPO / "train_scripts" / "pretrain_roberta.sh"), "--gpus", "8", "--data",
                           "work/lm", "--save-dir", str(save), "--max-update", "5"]


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
