"""``--cpu-bf16`` (issue 61): the recipes' option sets ``MORPHTOK_CPU_BF16=1`` for fairseq-train, under which the
plugin (fairseq_plugins/cpu_bf16.py) runs the criterion -- forward pass and loss -- of ``FairseqTask.train_step``
and ``valid_step`` under bfloat16 autocast on a CPU with native bfloat16, and float32 with one line elsewhere.
A real ``pretrain_roberta.sh --tiny --cpu-bf16`` run of 2 updates shows the model's linear layers computing in
bfloat16 in training and validation (a forward hook installed in fairseq-train's process) and a finite loss."""
from __future__ import annotations

import json
import math
import subprocess

import pytest
import torch
from fairseq.tasks import FairseqTask

from fairseq_plugins import cpu_bf16
from preprocess.common import REPO, UserError
from tests.conftest import cli_env, multi30k_slice, run_command


@pytest.fixture
def plugin(monkeypatch):
    """The wrappers installed for one test (as ``MORPHTOK_CPU_BF16=1`` installs them), removed afterwards."""
    cpu_bf16.uninstall()
    monkeypatch.setattr(cpu_bf16, "native_bf16", lambda: ["avx512_bf16"])
    assert cpu_bf16.apply({cpu_bf16.ENV: "1"})
    yield
    cpu_bf16.uninstall()


class Tiny(torch.nn.Module):
    def __init__(self, device="cpu"):
        super().__init__()
        self.linear = torch.nn.Linear(8, 4, device=device)

    def set_num_updates(self, n):
        pass

    def forward(self, x):
        return self.linear(x)


class Criterion:
    """Records the autocast state and the model's output dtype seen by each call."""

    def __init__(self):
        self.seen = []

    def __call__(self, model, sample):
        out = model(sample)
        self.seen.append((torch.is_autocast_enabled("cpu"), out.dtype))
        loss = out.float().pow(2).sum()
        return loss, 1, {"loss": loss.detach()}


class Optimizer:
    """fairseq's optimizer interface as train_step uses it: records the autocast state of the backward pass."""

    def __init__(self):
        self.backward_autocast = []

    def backward(self, loss):
        self.backward_autocast.append(torch.is_autocast_enabled("cpu"))
        loss.backward()


def steps(model, n=2):
    criterion, optimizer = Criterion(), Optimizer()
    sample = torch.randn(3, 8, device=next(model.parameters()).device)
    for i in range(n):
        FairseqTask.train_step(None, sample, model, criterion, optimizer, i)
    FairseqTask.valid_step(None, sample, model, criterion)
    return criterion, optimizer


def test_the_criterion_runs_in_bf16_and_the_backward_outside(plugin, capsys):
    model = Tiny()
    criterion, optimizer = steps(model)
    assert criterion.seen == [(True, torch.bfloat16)] * 3  # two training steps, one validation step
    assert optimizer.backward_autocast == [False, False]
    assert model.linear.weight.dtype == model.linear.weight.grad.dtype == torch.float32  # float32 master weights
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "bfloat16" in lines[0] and "avx512_bf16" in lines[0]


def test_a_cpu_without_native_bf16_falls_back_with_one_line(plugin, monkeypatch, capsys):
    monkeypatch.setattr(cpu_bf16, "native_bf16", lambda: [])
    criterion, _ = steps(Tiny())
    assert criterion.seen == [(False, torch.float32)] * 3
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "no native bfloat16" in lines[0] and "float32" in lines[0]


def test_a_model_off_the_cpu_is_left_to_fairseq(plugin, capsys):
    model = Tiny(device="meta")
    criterion, sample = Criterion(), torch.randn(3, 8, device="meta")
    FairseqTask.valid_step(None, sample, model, criterion)
    assert criterion.seen == [(False, torch.float32)]
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "ignored: the model is on meta" in lines[0] and "--fp16" in lines[0]


def test_a_benchmark_can_alternate_the_two_silently(plugin, capsys):
    model = Tiny()
    with cpu_bf16.steps_in_bf16(False):
        off, _ = steps(model, 1)
    with cpu_bf16.steps_in_bf16(True):
        on, _ = steps(model, 1)
    assert off.seen == [(False, torch.float32)] * 2 and on.seen == [(True, torch.bfloat16)] * 2
    assert capsys.readouterr().err == ""


def test_without_the_variable_nothing_is_patched():
    cpu_bf16.uninstall()
    original = FairseqTask.train_step
    assert not cpu_bf16.apply({}) and not cpu_bf16.apply({cpu_bf16.ENV: "0"})
    assert FairseqTask.train_step is original
    with pytest.raises(UserError, match="must be 1"):
        cpu_bf16.requested({cpu_bf16.ENV: "yes"})


def test_native_bf16_reads_the_cpu_flags(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_bf16 amx_tile amx_bf16\n\n"
                    "processor\t: 1\nflags\t\t: fpu sse2 avx512f avx512_bf16 amx_tile amx_bf16\n")
    assert cpu_bf16.native_bf16(str(info)) == ["avx512_bf16", "amx_bf16"]
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f\n")
    assert cpu_bf16.native_bf16(str(info)) == []


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    root = tmp_path_factory.mktemp("bf16")
    raw = multi30k_slice(root / "mt", 300, 40, 1)
    text = root / "text"
    text.mkdir()
    for split in ("train", "valid"):
        (text / f"{split}.en").write_text((raw / f"{split}.en").read_text())
    run_command(["python", "-m", "train_scripts.binarize", "--lm", "--scheme", "spaces", "--data", text, "--src", "en",
                 "--out", root / "lm", "--vocab-size", "400"])
    return root


def recipe_command(lm, *options):
    proc = run_command(["bash", "train_scripts/pretrain_roberta.sh", "--data", lm / "lm", "--save-dir", lm / "ck",
                        "--dry-run", *options], check=False)
    return proc


def test_the_option_sets_the_variable_for_fairseq_train_only(lm):
    with_option = recipe_command(lm, "--tiny", "--cpu-bf16")
    assert with_option.returncode == 0, with_option.stderr
    command = with_option.stdout.strip().splitlines()[-1]
    assert command.startswith("env MORPHTOK_CPU_BF16=1 ") and " fairseq-train " in command
    without = recipe_command(lm, "--tiny")
    assert "MORPHTOK_CPU_BF16" not in without.stdout
    gpus = recipe_command(lm, "--gpus", "2", "--cpu-bf16")
    assert gpus.returncode == 2 and gpus.stderr.strip().splitlines()[-1].startswith("error: --cpu-bf16 is for")


#: put first on PYTHONPATH, this sitecustomize puts a forward hook on every module of fairseq-train's process and
#: writes each new (mode, autocast on, dtype) of an nn.Linear output it sees to a file (fairseq_launch leaves with
#: os._exit, so an atexit handler would not run)
PROBE = '''
import json, os, sys
if "fairseq-train" in sys.argv:
    import torch
    seen = []
    def hook(module, inputs, output):
        if isinstance(module, torch.nn.Linear):
            key = f"{'train' if module.training else 'valid'} {torch.is_autocast_enabled('cpu')} {output.dtype}"
            if key not in seen:
                seen.append(key)
                with open(os.environ["BF16_PROBE"], "w") as fh:
                    json.dump(seen, fh)
    torch.nn.modules.module.register_module_forward_hook(hook)
'''


def test_a_tiny_pretraining_with_the_option_trains_in_bf16(lm):
    if not cpu_bf16.native_bf16():
        pytest.skip("this CPU has no native bfloat16: the run would be float32 (the fallback is tested above)")
    probe_dir, save, record = lm / "probe", lm / "ck-bf16", lm / "probe.json"
    probe_dir.mkdir()
    (probe_dir / "sitecustomize.py").write_text(PROBE)
    env = cli_env()
    env["PYTHONPATH"] = f"{probe_dir}:{env['PYTHONPATH']}"
    env["BF16_PROBE"] = str(record)
    proc = subprocess.run(["bash", "train_scripts/pretrain_roberta.sh", "--data", str(lm / "lm"), "--save-dir",
                           str(save), "--tiny", "--cpu-bf16", "--max-update", "2"], cwd=REPO, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert sum("MORPHTOK_CPU_BF16=1: forward passes and losses in bfloat16" in x for x in proc.stderr.splitlines()) == 1
    seen = json.loads(record.read_text())
    assert sorted(seen) == ["train True torch.bfloat16", "valid True torch.bfloat16"], seen  # every linear layer
    from train_scripts.train_log import train_curve, validation_curve

    train, valid = train_curve(save / "train.log"), validation_curve(save / "train.log")
    assert [r["update"] for r in train] == [2] and valid and valid[-1]["update"] == 2
    assert math.isfinite(train[0]["loss"]) and all(math.isfinite(r["valid_loss"]) for r in valid)
    state = torch.load(save / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert state["optimizer_history"][-1]["num_updates"] == 2
    assert all(v.dtype == torch.float32 for v in state["model"].values() if v.is_floating_point())
