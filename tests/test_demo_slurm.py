"""``morphtok-demo --launcher slurm`` (train_scripts/demo/slurm.py) against a real two-node SLURM on this machine
(scripts/slurm_cluster.sh, brought up once for this module with a state directory and port of its own, as
tests/test_slurm.py does, and always taken down).

The toy part of tests/test_demo_parts.py gives the same results.json on SLURM as locally; a job requeued mid-stage
(``scontrol requeue``, as preemption does) goes on from the file it checkpointed to; a demo killed while its job
runs and started again attaches to that job (its outputs kept, nothing submitted twice); an interrupted demo
cancels its job; a failed job is one line naming its logs; a missing partition is one line within 5 s; and
``--dry-run --launcher slurm`` lists one job per stage with its resources and creates nothing.  With
MORPHTOK_SLURM_STUDY=1, every real part with the fast presets runs locally and on the cluster and the two
results.json agree value for value (scripts/compare_demo_runs.py; about half an hour, so not in make test).  The
cluster's tests
skip, saying why, where SLURM is not installed or this is not root (MORPHTOK_REQUIRE_SLURM=1: a failure)."""
from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from preprocess.common import REPO
from tests.conftest import cli_env, multi30k_slice, slurm_lock
from tests.test_demo_parts import TOY
from tests.test_slurm import _run_again_at_once, cluster, require_slurm

STATE = Path(f"/tmp/morphtok-slurm-demo-pytest-{os.getpid()}")
PORT = "17300"

# a stage that counts to N, one step every S seconds, checkpointing to STATE/ckpt after each step and going on
# from it when run again (as fairseq does from checkpoint_last.pt); STATE/starts lists where each run started
RESUMABLE = '''
import os, sys, time
state, n, pause, fail = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
os.makedirs(state, exist_ok=True)
ckpt = os.path.join(state, "ckpt")
start = int(open(ckpt).read()) if os.path.exists(ckpt) else 0
with open(os.path.join(state, "starts"), "a") as fh:
    fh.write(f"{start}\\n")
print(f"starting at {start}", flush=True)
if fail:
    print("toy failure", file=sys.stderr, flush=True)
    sys.exit(3)
for i in range(start, n):
    time.sleep(pause)
    with open(ckpt + ".tmp", "w") as fh:
        fh.write(str(i + 1))
    os.replace(ckpt + ".tmp", ckpt)
    print(f"step {i + 1}", flush=True)
print(n, flush=True)
'''

RESUME_PART = f'''
"""A toy part with one resumable stage (a training's stand-in): it checkpoints to a file and goes on from it."""
import argparse

from train_scripts.demo.estimate import costs_from
from train_scripts.demo.part import Part
from train_scripts.demo.report_document import Para, Section

SCRIPT = {RESUMABLE!r}


class ResumePart(Part):
    name = "resume"
    title = "counts to --resume-n, resumably"

    def add_options(self, group):
        group.add_argument("--resume-n", type=int, default=10, help="how far it counts")
        group.add_argument("--resume-pause", type=float, default=0.5, help="seconds per step")
        group.add_argument("--resume-fail", action="store_true", help="the command fails")

    def settings(self, options):
        return argparse.Namespace(n=options.resume_n, pause=options.resume_pause, fail=options.resume_fail,
                                  device="cpu")

    def width(self, args):
        return 1

    def stage_costs(self, args):
        return costs_from([("resume/count", "train/toy")], {{"train/toy": args.n * args.pause}})

    def plan(self, args):
        return [f"python -c SCRIPT STATE {{args.n}} {{args.pause}}"]

    def run(self, args, ctx):
        state = ctx.folder / "state"

        def count():
            out = ctx.runner.run("resume/count", ["python", "-c", SCRIPT, state, args.n, args.pause,
                                                  int(args.fail)], ctx.folder / "count.log")
            return {{"total": int(out.split()[-1]),
                    "starts": [int(x) for x in (state / "starts").read_text().split()]}}

        return {{"count": ctx.stages.run("resume/count", [state], count, key={{"n": args.n}})}}

    def sections(self, results, folder, relative=""):
        return [Section("Resume part", [Para(str(results["count"]["total"]))])]


PART = ResumePart()
'''


TRAIN_PART = '''
"""A part with one real training stage: the translation recipe\'s --tiny model on --train-data for a few updates."""
import argparse
import json

from train_scripts.demo.estimate import costs_from
from train_scripts.demo.part import Part
from train_scripts.demo.report_document import Para, Section


class TrainPart(Part):
    name = "train"
    title = "a tiny translation training"

    def add_options(self, group):
        group.add_argument("--train-data", default=None, help="binarised data")
        group.add_argument("--train-updates", type=int, default=40, help="updates")

    def settings(self, options):
        return argparse.Namespace(data=options.train_data, updates=options.train_updates, device="cpu")

    def width(self, args):
        return 1

    def stage_costs(self, args):
        return costs_from([("train/tiny", "train")], {"train": 60})

    def plan(self, args):
        return ["bash train_scripts/train_transformer_big.sh --cpu --tiny ..."]

    def run(self, args, ctx):
        save = ctx.folder / "ckpt"

        def train():
            out = ctx.runner.run("train/tiny", ["bash", "train_scripts/train_transformer_big.sh", "--cpu", "--data",
                                                args.data, "--save-dir", save, "--tiny", "--max-update",
                                                args.updates, "--validate-interval-updates", "0"],
                                 ctx.folder / "train.log", merge_stderr=True)
            last = [line for line in out.splitlines() if "train_num_updates" in line][-1]
            return {"updates": int(json.loads(last.split("INFO:train:", 1)[1])["train_num_updates"])}

        return {"train": ctx.stages.run("train/tiny", [save], train, key={"updates": args.updates})}

    def sections(self, results, folder, relative=""):
        return [Section("Train part", [Para(str(results["train"]["updates"]))])]


PART = TrainPart()
'''


@pytest.fixture(scope="module")
def parts_path(tmp_path_factory):
    """A folder with the toy part (tests/test_demo_parts.py's), the resumable one and the training one, each a
    module of its own."""
    pkg = tmp_path_factory.mktemp("demo-slurm-parts")
    for module, text in (("morphtok_toy_part", TOY), ("morphtok_resume_part", RESUME_PART),
                         ("morphtok_train_part", TRAIN_PART)):
        (pkg / module).mkdir()
        (pkg / module / "__init__.py").write_text(textwrap.dedent(text))
    return pkg


@pytest.fixture(scope="module")
def binarised(tmp_path_factory):
    """A slice of Multi30k binarised with a small sentencepiece model: the training stage's data."""
    raw = multi30k_slice(tmp_path_factory.mktemp("raw"), 300, 20, 10)
    out = tmp_path_factory.mktemp("data") / "sp"
    proc = subprocess.run([sys.executable, "-m", "train_scripts.binarize", "--scheme", "sentencepiece",
                           "--vocab-size", "400", "--data", raw, "--out", out], env=cli_env(), cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def demo_env(parts_path, extra=None) -> dict:
    env = cli_env()
    env["PYTHONPATH"] = f"{REPO}{os.pathsep}{parts_path}"
    env["MORPHTOK_DEMO_PARTS"] = "morphtok_toy_part,morphtok_resume_part,morphtok_train_part"
    return {**env, **(extra or {})}


@pytest.fixture(scope="module")
def slurm_env(parts_path):
    """The environment of a demo that uses the module's cluster (SLURM_CONF set)."""
    require_slurm()
    lock = slurm_lock().__enter__()
    try:
        up = cluster("up", STATE, PORT)
        assert up.returncode == 0, f"slurm_cluster.sh up failed:\n{up.stderr}"
        yield demo_env(parts_path, {"SLURM_CONF": str(STATE / "slurm.conf")})
    finally:
        down = cluster("down", STATE, PORT)
        lock.__exit__()
        assert down.returncode == 0, f"slurm_cluster.sh down failed:\n{down.stderr}"


#: the cluster's nodes have one CPU each
ON_SLURM = ("--launcher", "slurm", "--slurm-cpus-per-job", "1", "--slurm-time", "10")


def demo_args(*args) -> list:
    return [sys.executable, "-m", "train_scripts.demo.main", *map(str, args)]


def demo(env, *args, timeout=600):
    return subprocess.run(demo_args(*args), env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout)


def squeue(env, *args) -> list:
    proc = subprocess.run(["squeue", "-h", "-t", "all", *args], env=env, capture_output=True, text=True)
    return proc.stdout.split()


def wait_for(what, condition, timeout=180.0, proc=None):
    deadline = time.time() + timeout
    while not condition():
        assert time.time() < deadline, f"timed out waiting for {what}"
        assert proc is None or proc.poll() is None, f"the demo ended while waiting for {what}"
        time.sleep(0.3)


def started_at(state: Path) -> list:
    path = state / "starts"
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def checkpoint(state: Path) -> int:
    try:
        return int((state / "ckpt").read_text() or 0)
    except (OSError, ValueError):
        return 0


# --- without a cluster -----------------------------------------------------------------------------------------

def test_nothing_but_the_entry_point_knows_the_launcher():
    """The parts, the stages, the scheduler and the shared modules import neither the SLURM launcher nor
    submitit: only main.py chooses the runner."""
    demo_dir = REPO / "train_scripts" / "demo"
    for path in demo_dir.rglob("*.py"):
        if path.parent == demo_dir and path.name in ("main.py", "slurm.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.ImportFrom) and node.module == "train_scripts.demo":
                names = [f"train_scripts.demo.{a.name}" for a in node.names]
            for name in names:
                assert name not in ("train_scripts.demo.slurm", "train_scripts.launch") and \
                    not name.startswith("submitit"), (str(path), name)


def test_a_dry_run_on_slurm_lists_one_job_per_stage_and_creates_nothing(parts_path, tmp_path):
    out = tmp_path / "out"
    proc = demo(demo_env(parts_path), "--part", "resume", "toy", "--output", out, "--dry-run", "--launcher", "slurm",
                "--slurm-partition", "gpu", "--slurm-gpus-per-job", "1", "--slurm-cpus-per-job", "8",
                "--slurm-time", "30", "--slurm-time-train", "600", "--slurm-max-jobs", "3",
                "--slurm-extra", "account=proj")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "#   job resume/count (train/toy): partition gpu, 8 CPU(s), 1 GPU(s), 600 min" in lines, proc.stdout
    assert any(x.startswith("# the resume part on SLURM: one job per stage") for x in lines)
    assert "#   (the part lists no stages: one job per command of its plan below)" in lines   # the toy part
    assert any(x.startswith("# the resume part: 1 stages (1 to run), 1 command(s) at a time with 8 torch")
               for x in lines), proc.stdout
    assert not out.exists()
    # a real part: as many jobs as stages, at the cluster's width (the estimate's jobs)
    proc = demo(demo_env(parts_path), "--part", "pretraining", "--lm-preset", "fast", "--output", out, "--dry-run",
                "--launcher", "slurm", "--slurm-max-jobs", "6", "--slurm-time-kind", "pretrain=90")
    assert proc.returncode == 0, proc.stderr
    head = next(x for x in proc.stdout.splitlines() if x.startswith("# the pretraining part: "))
    stages = int(head.split("part: ")[1].split()[0])
    jobs = [x for x in proc.stdout.splitlines() if x.startswith("#   job ")]
    assert len(jobs) == stages > 5 and "6 command(s) at a time" in head, head
    assert all(x.endswith(", 90 min") for x in jobs if " (pretrain)" in x) and any(" (pretrain)" in x for x in jobs)
    assert not out.exists()


def test_bad_slurm_options_are_one_line(parts_path, tmp_path):
    for args, message in ((["--slurm-time-kind", "train"], "error: --slurm-time-kind wants KIND=MINUTES"),
                          (["--slurm-max-jobs", "0"], "error: --slurm-max-jobs must be at least 1, not 0"),
                          (["--slurm-extra", "qos"], "error: --slurm-extra wants KEY=VALUE")):
        proc = demo(demo_env(parts_path), "--part", "toy", "--output", tmp_path / "o", "--launcher", "slurm", *args)
        assert proc.returncode == 2 and proc.stderr.strip().startswith(message), proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


# --- on the cluster --------------------------------------------------------------------------------------------

def test_a_missing_partition_is_refused_in_one_line_within_5_s(slurm_env, tmp_path):
    out = tmp_path / "out"
    t0 = time.time()
    proc = demo(slurm_env, "--part", "toy", "--output", out, *ON_SLURM, "--slurm-partition", "nope")
    assert time.time() - t0 < 5.0
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == "error: --slurm-partition nope: the cluster has no such partition (sinfo lists " \
                                  "debug)"
    assert not out.exists()
    proc = demo(slurm_env, "--part", "toy", "--output", out, *ON_SLURM, "--slurm-gpus-per-job", "1")
    assert proc.returncode == 2 and proc.stderr.strip().startswith(
        "error: --slurm-gpus-per-job 1: the nodes of partition debug have at most 0 GPU(s)"), proc.stderr


def test_the_toy_part_on_slurm_gives_the_local_results(slurm_env, tmp_path):
    local, remote = tmp_path / "local", tmp_path / "slurm"
    ran = demo(slurm_env, "--part", "toy", "--toy-n", "5", "--output", local)
    assert ran.returncode == 0, ran.stderr
    ran = demo(slurm_env, "--part", "toy", "--toy-n", "5", "--output", remote, *ON_SLURM)
    assert ran.returncode == 0, ran.stderr
    assert "[slurm] toy/count: job " in ran.stderr and "SLURM: jobs go to partition debug" in ran.stderr
    ours, theirs = (json.loads((o / "toy" / "results.json").read_text()) for o in (remote, local))
    assert {k: v for k, v in ours.items() if k != "meta"} == {k: v for k, v in theirs.items() if k != "meta"} == \
        {"count": {"sum": 10}, "jobs": 1}
    assert (remote / "toy" / "count.log").read_text() == (local / "toy" / "count.log").read_text() == "10\n"
    assert (remote / "toy" / "count.err").exists()
    record = json.loads((remote / "toy" / ".stages" / "toy__count.json").read_text())
    assert record["result"] == {"sum": 10} and not (remote / "toy" / ".stages" / "toy__count.job").exists()
    assert list((remote / ".slurm").glob("*_0_log.out"))               # submitit's logs: OUTPUT/.slurm
    again = demo(slurm_env, "--part", "toy", "--toy-n", "5", "--output", remote, *ON_SLURM)   # resumed: no job
    assert again.returncode == 0 and "[skip] toy/count" in again.stderr and "[slurm]" not in again.stderr


def _job_of(folder: Path) -> str | None:
    try:
        return json.loads((folder / ".stages" / "resume__count.job").read_text())["job_id"]
    except (OSError, ValueError):
        return None


def requeued_run(env, args: list, err: Path, what: str, ready, job_of):
    """The demo with ``args`` on the cluster (stderr to ``err``), its stage's job requeued (``scontrol requeue``,
    as preemption does) once ``ready()``; waits for the demo to end.  ``(process, job id)``."""
    with open(err, "w") as fh:
        proc = subprocess.Popen(demo_args(*args, *ON_SLURM), env=env, cwd=REPO, stderr=fh,
                                stdout=subprocess.DEVNULL)
        try:
            wait_for(what, ready, proc=proc)
            job = job_of()
            requeue = subprocess.run(["scontrol", "requeue", job], env=env, capture_output=True, text=True)
            assert requeue.returncode == 0, requeue.stderr
            _run_again_at_once(env, job, proc)
            proc.wait(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
    return proc, job


def test_a_requeued_job_goes_on_from_its_checkpoint(slurm_env, tmp_path):
    """``scontrol requeue`` mid-stage (as preemption does): SLURM runs the same command again, which goes on from
    the checkpoint the first run wrote; the demo waits for it and records the stage once."""
    out = tmp_path / "out"
    folder, err = out / "resume", tmp_path / "demo.err"
    before = set(squeue(slurm_env, "-o", "%i"))
    proc, job = requeued_run(slurm_env, ["--part", "resume", "--resume-n", "16", "--output", out], err,
                             "the job's first checkpoints", lambda: checkpoint(folder / "state") >= 3,
                             lambda: _job_of(folder))
    stderr = err.read_text()
    assert proc.returncode == 0, stderr[-3000:]
    assert f"stage resume/count job {job} was requeued" in stderr
    results = json.loads((folder / "results.json").read_text())["count"]
    starts = results["starts"]
    assert results["total"] == 16 and len(starts) == 2 and starts[0] == 0 and 3 <= starts[1] < 16, results
    assert (folder / "count.log").read_text().startswith(f"starting at {starts[1]}\n")   # the last run's log
    assert set(squeue(slurm_env, "-o", "%i")) - before == {job}     # submitted once
    assert _job_of(folder) is None


def test_a_requeued_training_stage_resumes_from_checkpoint_last(slurm_env, binarised, tmp_path):
    """A real training stage (the translation recipe's --tiny model) requeued once it has saved a checkpoint: the
    job runs the same command again and fairseq goes on from SAVE_DIR/checkpoint_last.pt, which nothing removed."""
    import torch

    out = tmp_path / "out"
    folder, err = out / "train", tmp_path / "demo.err"
    log = folder / "train.log"

    def saved() -> bool:
        text = log.read_text() if log.exists() else ""
        return "No existing checkpoint found" in text and "Saved checkpoint" in text

    proc, job = requeued_run(slurm_env, ["--part", "train", "--train-data", binarised, "--train-updates", "40",
                                         "--output", out], err, "the first checkpoint", saved,
                             lambda: json.loads((folder / ".stages" / "train__tiny.job").read_text())["job_id"])
    stderr = err.read_text()
    assert proc.returncode == 0, stderr[-3000:]
    assert f"stage train/tiny job {job} was requeued" in stderr
    text = log.read_text()                   # the last run's log: it went on from the first run's checkpoint
    assert "No existing checkpoint found" not in text and "Loaded checkpoint" in text, text[-2000:]
    state = torch.load(folder / "ckpt" / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert state["optimizer_history"][-1]["num_updates"] == 40
    assert json.loads((folder / "results.json").read_text())["train"] == {"updates": 40}


def test_a_restarted_demo_attaches_to_its_running_job(slurm_env, tmp_path):
    """The demo is killed (SIGKILL: nothing cancels its job) while a stage's job runs; started again, it waits for
    that job instead of submitting another, and the job's outputs are kept: the command ran once, from 0."""
    out = tmp_path / "out"
    folder = out / "resume"
    args = ("--part", "resume", "--resume-n", "12", "--output", out, *ON_SLURM)
    before = set(squeue(slurm_env, "-o", "%i"))
    first = subprocess.Popen(demo_args(*args), env=slurm_env, cwd=REPO, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        wait_for("the job's first checkpoint", lambda: checkpoint(folder / "state") >= 1, proc=first)
    finally:
        first.kill()
        first.wait()
    job = _job_of(folder)
    assert job and squeue(slurm_env, "-j", job, "-o", "%T") == ["RUNNING"]
    again = demo(slurm_env, *args)
    assert again.returncode == 0, again.stderr
    assert f"[attach] resume/count: SLURM job {job} of an earlier run" in again.stderr, again.stderr
    assert "[wait] resume/count" in again.stderr and "[slurm] resume/count" not in again.stderr
    assert json.loads((folder / "results.json").read_text())["count"] == {"total": 12, "starts": [0]}
    assert set(squeue(slurm_env, "-o", "%i")) - before == {job}     # nothing submitted twice
    assert (folder / "commands.txt").read_text().count("python -c") == 1      # recorded once, by the first run


def test_an_interrupted_demo_cancels_its_job_and_a_failed_job_is_one_line(slurm_env, tmp_path):
    out = tmp_path / "out"
    folder = out / "resume"
    proc = subprocess.Popen(demo_args("--part", "resume", "--resume-n", "200", "--output", out, *ON_SLURM),
                            env=slurm_env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for("the job's first checkpoint", lambda: checkpoint(folder / "state") >= 1, proc=proc)
        job = _job_of(folder)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0 and f"cancelled SLURM job(s) {job}" in stderr, stderr[-2000:]
    wait_for("the job's end", lambda: squeue(slurm_env, "-j", job, "-o", "%T") in (["CANCELLED"], []), 60)
    assert _job_of(folder) is None and not (folder / ".stages" / "resume__count.json").exists()

    failed = demo(slurm_env, "--part", "resume", "--resume-fail", "--output", tmp_path / "failed", *ON_SLURM)
    assert failed.returncode == 1, failed.stderr
    error = next(x for x in failed.stderr.splitlines() if x.startswith("error: "))
    log = tmp_path / "failed" / "resume" / "count.log"
    assert error.startswith("error: pipeline stage resume/count failed (exit 3; SLURM job ") and \
        error.endswith(f"; logs: {log} {log.with_suffix('.err')}"), error
    assert "toy failure" in failed.stderr.split(error, 1)[1]      # the log's last lines follow, as locally


#: every part with the fast presets, locally and on the cluster (the demo's real parts, not the toy ones)
FAST = ("--mt-preset", "fast", "--lm-preset", "fast", "--de-preset", "fast")


@pytest.mark.skipif(os.environ.get("MORPHTOK_SLURM_STUDY") != "1",
                    reason="every part's fast presets twice, locally and as SLURM jobs: about 25 minutes on 2 cores, "
                           "over make test's budget; MORPHTOK_SLURM_STUDY=1 runs it (a run's record: "
                           "bench/results/2026-12-02-slurm-study.md)")
def test_every_part_with_the_fast_presets_on_slurm_gives_the_local_results(slurm_env, tmp_path):
    from tests.conftest import SHARED

    env = {k: v for k, v in slurm_env.items() if k != "MORPHTOK_DEMO_PARTS"}
    env["PYTHONPATH"] = str(REPO)
    local, remote = tmp_path / "local", tmp_path / "slurm"
    on_slurm = ("--launcher", "slurm", "--slurm-cpus-per-job", "1", "--slurm-time", "30")
    for out, extra in ((local, ()), (remote, on_slurm)):
        ran = demo(env, "--shared-data", SHARED, "--output", out, *FAST, *extra, timeout=3600)
        assert ran.returncode == 0, ran.stderr[-3000:]
    compared = subprocess.run([sys.executable, str(REPO / "scripts" / "compare_demo_runs.py"), local, remote],
                              capture_output=True, text=True)
    assert compared.returncode == 0, compared.stdout[-3000:]
    assert compared.stdout.splitlines()[-1].startswith("3 part(s), ")
