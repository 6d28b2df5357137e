"""train_scripts.launch against a real SLURM: a two-node cluster on this machine (scripts/slurm_cluster.sh: munged,
slurmctld, ``slurmd -N n1`` and ``slurmd -N n2``), brought up once for this module and always taken down.

Sharded preprocessing as a job array equals the local executor byte for byte; a 2-node CPU training reaches world
size 2 with one rank per node and the launcher reports its checkpoint; a job requeued with ``scontrol requeue``
resumes from checkpoint_last.pt and the launcher reports the final success; sbatch refusals and a job that can
never start are one line each.  Skipped (with the reason) where SLURM is not installed or this is not root;
MORPHTOK_REQUIRE_SLURM=1 (CI) turns that into a failure."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from tests.conftest import REPO, cli_env, multi30k_slice, slurm_lock

SCRIPT = REPO / "scripts" / "slurm_cluster.sh"
REQUIRE = os.environ.get("MORPHTOK_REQUIRE_SLURM") == "1"
# its own state directory and ports, so a cluster a user brought up with the script's defaults is left alone
STATE = Path(os.environ.get("MORPHTOK_SLURM_TEST_DIR", f"/tmp/morphtok-slurm-pytest-{os.getpid()}"))
PORT = "17100"


def slurm_missing() -> str | None:
    """Why the SLURM tests cannot run here (None: they can)."""
    if os.geteuid() != 0:
        return "the local SLURM cluster needs root (scripts/slurm_cluster.sh starts munged and slurmd)"
    tools = ("sbatch", "squeue", "scontrol", "scancel", "sinfo", "slurmctld", "slurmd", "munged")
    missing = [t for t in tools if not (shutil.which(t) or os.access(f"/usr/sbin/{t}", os.X_OK))]
    if missing:
        return f"SLURM is not installed ({', '.join(missing)} missing): apt-get install slurm-wlm munge " \
               f"(make install does it as root)"
    return None


def require_slurm() -> None:
    why = slurm_missing()
    if why:
        if REQUIRE:
            pytest.fail(f"MORPHTOK_REQUIRE_SLURM=1 but {why}")
        pytest.skip(why)


def cluster(command: str, state: Path, port: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MORPHTOK_SLURM_DIR": str(state), "MORPHTOK_SLURM_PORT": port}
    return subprocess.run(["bash", str(SCRIPT), command], env=env, capture_output=True, text=True)


@pytest.fixture(scope="module")
def slurm_env():
    """The environment of a command that uses the module's cluster (SLURM_CONF set)."""
    require_slurm()
    lock = slurm_lock().__enter__()
    try:
        up = cluster("up", STATE, PORT)
        assert up.returncode == 0, f"slurm_cluster.sh up failed:\n{up.stderr}"
        assert up.stdout.strip() == f"export SLURM_CONF={STATE}/slurm.conf"
        yield {**cli_env(), "SLURM_CONF": str(STATE / "slurm.conf")}
    finally:
        down = cluster("down", STATE, PORT)
        lock.__exit__()
        assert down.returncode == 0, f"slurm_cluster.sh down failed:\n{down.stderr}"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return multi30k_slice(tmp_path_factory.mktemp("raw"), 300, 20, 10)


@pytest.fixture(scope="module")
def local_data(tmp_path_factory, corpus):
    """The corpus binarised in 3 shards by the local executor: the reference, and the training data."""
    out = tmp_path_factory.mktemp("local") / "sp"
    _launch("preprocess", *PREPROCESS, "--data", corpus, "--out", out, env=cli_env())
    return out


PREPROCESS = ("--scheme", "sentencepiece", "--vocab-size", "400", "--shards", "3")


def _launch(*args, env, cwd=REPO, check=True):
    proc = subprocess.run([sys.executable, "-m", "train_scripts.launch", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, proc.stderr[-6000:]
    return proc


def _job_nodes(env, job_ids) -> dict:
    proc = subprocess.run(["squeue", "-h", "-r", "-t", "all", "-j", ",".join(job_ids), "-o", "%i %N"], env=env,
                          capture_output=True, text=True, check=True)
    return dict(line.split() for line in proc.stdout.splitlines() if len(line.split()) == 2)


def _job_id(stderr: str) -> str:
    return re.search(r": job (\d+) \(log", stderr).group(1)


def test_cluster_script_is_idempotent_and_restores_the_host(tmp_path):
    require_slurm()
    with slurm_lock():
        _cluster_script_is_idempotent()


def _cluster_script_is_idempotent():
    state, port = Path(f"/tmp/morphtok-slurm-pytest-script-{os.getpid()}"), "17200"
    hosts = Path("/etc/hosts").read_text()
    try:
        first = cluster("up", state, port)
        assert first.returncode == 0, first.stderr
        again = cluster("up", state, port)  # already up: nothing new is started
        assert again.returncode == 0 and "started" not in again.stderr, again.stderr
        status = cluster("status", state, port)
        assert status.returncode == 0, status.stdout + status.stderr
        for daemon in ("munged", "slurmctld", "slurmd-n1", "slurmd-n2"):
            assert f"{daemon}: running" in status.stdout, status.stdout
        pids = [int((state / f).read_text()) for f in ("munge/munged.pid", "slurmctld.pid", "slurmd-n1.pid",
                                                         "slurmd-n2.pid")]
        assert "127.0.0.1 n1 n2" in Path("/etc/hosts").read_text()
    finally:
        down = cluster("down", state, port)
    assert down.returncode == 0, down.stderr
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
    assert Path("/etc/hosts").read_text() == hosts and not state.exists()
    assert cluster("down", state, port).returncode == 0  # down again: nothing to do
    assert cluster("status", state, port).returncode != 0


def test_sharded_preprocessing_job_array_equals_local(slurm_env, local_data, corpus, tmp_path):
    out = tmp_path / "sp"
    proc = _launch("preprocess", "--executor", "slurm", *PREPROCESS, "--data", corpus, "--out", out, env=slurm_env)
    shard_ids = re.search(r"3 shard job\(s\): (\S+), (\S+), (\S+) ", proc.stderr).groups()
    assert all(re.fullmatch(r"\d+_[012]", j) for j in shard_ids) and len({j.split("_")[0] for j in shard_ids}) == 1
    assert set(_job_nodes(slurm_env, shard_ids).values()) == {"n1", "n2"}  # one array, on both nodes

    def files(root: Path) -> dict:
        return {p.relative_to(root): p for p in sorted(root.rglob("*")) if p.is_file() and "submitit" not in p.parts}

    ours, reference = files(out), files(local_data)
    assert set(ours) == set(reference) and len(ours) > 10
    def masked(data: bytes, root: Path) -> bytes:
        # each run's own folder (logs, records), and the random name of the temporary folder sentencepiece
        # trains in (spm.model records it: two local runs differ there too), same length so protobufs stay valid
        return re.sub(rb"spm-train-[A-Za-z0-9_]{8}", b"spm-train-XXXXXXXX", data.replace(bytes(root), b"OUT"))

    for rel, path in ours.items():
        assert masked(path.read_bytes(), out) == masked(reference[rel].read_bytes(), local_data), rel


def _training_env(slurm_env):
    # no venv on PATH (as for a user who did not activate it): the job must use the launcher's interpreter
    return {**slurm_env, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}


def test_two_nodes_one_rank_each_world_size_two(slurm_env, local_data, tmp_path):
    env = {**_training_env(slurm_env), "FAIRSEQ_LAUNCH_RANK_STATE_DIR": str(tmp_path / "ranks")}
    os.symlink(local_data, tmp_path / "data")
    # relative paths, as a user writes them: resolved against the directory the launcher runs in
    proc = _launch("train", "--executor", "slurm", "--nodes", "2", "--cpu", "--", "--data", "data",
                   "--save-dir", "ckpt", "--tiny", "--max-update", "6", "--validate-interval-updates", "0",
                   env=env, cwd=tmp_path)
    job = _job_id(proc.stderr)
    save = tmp_path / "ckpt"
    assert f"training job {job} finished on 2 node(s); last checkpoint: {save}/checkpoint_last.pt" in proc.stderr
    assert _job_nodes(slurm_env, [job]) == {job: "n[1-2]"}
    logs = [(save / "submitit" / f"{job}_{task}_log.out").read_text() +
            (save / "submitit" / f"{job}_{task}_log.err").read_text() for task in (0, 1)]
    for task, log in enumerate(logs):  # task k runs on node k and is rank k of 2
        assert f"node={task}(2)" in log and f"distributed init (rank {task})" in log, log[-2000:]
    state = torch.load(save / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert state["cfg"]["distributed_training"]["distributed_world_size"] == 2
    assert state["cfg"]["distributed_training"]["distributed_backend"] == "gloo"
    assert state["optimizer_history"][-1]["num_updates"] == 6
    # both ranks trained the same model (data parallel across the nodes)
    ranks = [torch.load(tmp_path / "ranks" / f"rank{r}.pt", weights_only=False) for r in (0, 1)]
    assert [r["num_updates"] for r in ranks] == [6, 6]
    assert all(torch.equal(ranks[0]["model"][k], ranks[1]["model"][k]) for k in ranks[0]["model"])


def _run_again_at_once(env, job, launcher) -> None:
    """SLURM holds a requeued job back for a while (its begin time): let it start again a few seconds on.

    Not at once: slurmd refuses a credential issued in the same second as the one it revoked when it killed the
    job's last run ("Job 1 already killed, do not launch batch job", then the job ends as FAILED), and a run that
    submitit requeued itself on SIGUSR2 is back in PENDING within that second (CI saw it fail so)."""
    while launcher.poll() is None:
        state = subprocess.run(["squeue", "-h", "-j", job, "-o", "%T"], env=env, capture_output=True,
                               text=True).stdout.strip()
        if state == "PENDING":
            update = subprocess.run(["scontrol", "update", f"JobId={job}", "StartTime=now+3"], env=env,
                                    capture_output=True, text=True)
            assert update.returncode == 0, update.stderr
            return
        time.sleep(0.5)


def test_requeued_job_resumes_and_the_launcher_reports_success(slurm_env, local_data, tmp_path):
    """Interrupted twice: ``scontrol requeue`` (as preemption does), then the signal SLURM sends before the time
    limit (USR2: submitit requeues the job itself); each run goes on from checkpoint_last.pt."""
    save, err = tmp_path / "ckpt", tmp_path / "launcher.err"
    args = [sys.executable, "-m", "train_scripts.launch", "train", "--executor", "slurm", "--cpu", "--",
            "--data", str(local_data), "--save-dir", str(save), "--tiny", "--max-update", "60",
            "--validate-interval-updates", "0"]

    def saved_since(log: Path, marker: str) -> bool:  # a complete checkpoint ("Saved checkpoint" follows copies)
        text = log.read_text() if log.exists() else ""
        return marker in text and "Saved checkpoint" in text[text.rindex(marker):]

    with open(err, "w") as fh:
        launcher = subprocess.Popen(args, cwd=REPO, env=_training_env(slurm_env), stdout=subprocess.PIPE,
                                    stderr=fh, text=True)
        try:
            while not re.search(r": job \d+ \(log", err.read_text()) and launcher.poll() is None:
                time.sleep(0.5)
            job = _job_id(err.read_text())
            log = save / "submitit" / f"{job}_0_log.err"
            while launcher.poll() is None and not saved_since(log, "No existing checkpoint found"):
                time.sleep(0.5)
            requeue = subprocess.run(["scontrol", "requeue", job], env=slurm_env, capture_output=True, text=True)
            assert requeue.returncode == 0, requeue.stderr
            _run_again_at_once(slurm_env, job, launcher)
            while launcher.poll() is None and not saved_since(log, "Loaded checkpoint"):
                time.sleep(0.5)
            signal = subprocess.run(["scancel", "--signal=USR2", job], env=slurm_env, capture_output=True, text=True)
            assert signal.returncode == 0, signal.stderr
            _run_again_at_once(slurm_env, job, launcher)
            launcher.wait()
        finally:
            if launcher.poll() is None:
                launcher.kill()
    stderr = err.read_text()
    assert launcher.returncode == 0, stderr[-4000:]
    assert f"training job {job} finished on 1 node(s) after 2 requeue(s)" in stderr, stderr[-3000:]
    log = log.read_text()
    out = (save / "submitit" / f"{job}_0_log.out").read_text()
    assert "Caught signal SIGUSR2" in out + log
    # the first run started afresh; each requeued run went on from the checkpoint the run before saved
    assert log.count("No existing checkpoint found") == 1
    resumed = [int(n) for n in re.findall(r"Loaded checkpoint \S+/checkpoint_last\.pt \(epoch \d+ @ (\d+) updates\)",
                                          log)]
    assert len(resumed) == 2 and 1 <= resumed[0] < resumed[1] < 60, log[-3000:]
    state = torch.load(save / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert state["optimizer_history"][-1]["num_updates"] == 60


def test_sbatch_refusals_are_one_line_with_sbatchs_message(slurm_env, tmp_path):
    cases = [(["--gpus-per-node", "8"], "Invalid generic resource (gres) specification"),
             (["--partition", "nope"], "invalid partition specified: nope")]
    for options, message in cases:
        proc = _launch("train", "--executor", "slurm", *options, "--", "--data", tmp_path, "--save-dir",
                       tmp_path / "c", env=slurm_env, check=False)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith("error: sbatch refused the training job: ") and message in proc.stderr


def test_a_job_that_can_never_start_is_reported_with_slurms_reason(slurm_env, local_data, tmp_path):
    proc = _launch("train", "--executor", "slurm", "--cpu", "--cpus-per-task", "64", "--", "--data", local_data,
                   "--save-dir", tmp_path / "c", "--tiny", env=slurm_env, check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and lines[-1].startswith("error: training job ") and "(PartitionConfig" in lines[-1]
    job = _job_id(proc.stderr)
    assert "cancelled" in lines[-1]
    state = subprocess.run(["squeue", "-h", "-t", "all", "-j", job, "-o", "%T"], env=slurm_env,
                           capture_output=True, text=True).stdout.split()
    assert state in (["CANCELLED"], [])
