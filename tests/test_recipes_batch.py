"""The papers' global batch on any GPU and node count: the recipes' --dry-run commands (no GPU needed) and the
batch planner behind them."""
import json
import shlex

import pytest

from preprocess.common import UserError
from train_scripts.fairseq_launch import plan_batch

TRANSFORMER_BIG = 3584 * 8 * 16  # BITE appendix B.3 / Ott et al. (2018): tokens per update
ROBERTA = 2048  # space-as-token paper, Table 9: sequences per update


def _option(cmd: list[str], name: str) -> str:
    """The value fairseq would use: the last occurrence."""
    values = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == name]
    assert values, f"{name} missing from {' '.join(cmd)}"
    return values[-1]


def _dry_run(run_cli, script, data, tmp_path, *opts, check=True):
    proc = run_cli(["bash", f"train_scripts/{script}", "--data", data, "--save-dir", tmp_path / "save", "--dry-run",
                    *opts], check=check)
    return proc, shlex.split(proc.stdout.strip()) if proc.returncode == 0 else []


@pytest.fixture
def fake_bin(tmp_path):
    """A data-bin folder is all a dry run looks at (a joined dictionary, and dict.txt for the LM)."""
    d = tmp_path / "data-bin"
    d.mkdir()
    for name in ("dict.txt", "dict.en.txt", "dict.de.txt"):
        (d / name).write_text("a 1\n")
    return d


@pytest.mark.parametrize("nnodes,gpus", [(1, 1), (1, 2), (1, 4), (1, 8), (2, 8)])
def test_transformer_big_global_batch(run_cli, fake_bin, tmp_path, monkeypatch, nnodes, gpus):
    monkeypatch.setenv("NNODES", str(nnodes))  # run_cli's environment copies ours
    monkeypatch.delenv("NODE_RANK", raising=False)
    proc, cmd = _dry_run(run_cli, "train_transformer_big.sh", fake_bin, tmp_path, "--gpus", str(gpus))
    processes = nnodes * gpus
    max_tokens, update_freq = int(_option(cmd, "--max-tokens")), int(_option(cmd, "--update-freq"))
    assert max_tokens * update_freq * processes == TRANSFORMER_BIG
    assert max_tokens == 3584  # the paper's per-GPU batch is kept; only the accumulation changes
    assert "effective batch" in proc.stderr and "458,752 tokens per update" in proc.stderr
    # the printed command is the real launch: torchrun for several processes, GPU settings without any GPU here
    assert "--fp16" in cmd and "--cpu" not in cmd
    if processes > 1:
        assert cmd[1:3] == ["-m", "torch.distributed.run"] and _option(cmd, "--nproc-per-node") == str(gpus)
    if nnodes > 1:
        assert _option(cmd, "--nnodes") == "2" and "--node-rank" in cmd and "--master-addr" in cmd
    for expected in (("--max-update", "45000"), ("--patience", "5"), ("--keep-last-epochs", "15"),
                     ("--warmup-updates", "4000"), ("--lr", "0.001"), ("--dropout", "0.3")):
        assert _option(cmd, expected[0]) == expected[1], expected


@pytest.mark.parametrize("nnodes,gpus", [(1, 1), (1, 2), (1, 4), (1, 8), (2, 8)])
def test_roberta_global_batch(run_cli, fake_bin, tmp_path, monkeypatch, nnodes, gpus):
    for name, value in (("NNODES", str(nnodes)), ("NODE_RANK", "1"), ("MASTER_ADDR", "node0")):
        monkeypatch.setenv(name, value)
    proc, cmd = _dry_run(run_cli, "pretrain_roberta.sh", fake_bin, tmp_path, "--gpus", str(gpus))
    bsz, update_freq = int(_option(cmd, "--batch-size")), int(_option(cmd, "--update-freq"))
    assert bsz * update_freq * nnodes * gpus == ROBERTA and bsz == 16
    assert "2,048 sequences per update" in proc.stderr
    assert _option(cmd, "--tokens-per-sample") == "512" and _option(cmd, "--max-update") == "100000"
    assert _option(cmd, "--lr") == "0.0005" and _option(cmd, "--warmup-updates") == "10000"
    assert _option(cmd, "--lr-floor") == "0.0001" and _option(cmd, "--lr-shrink") == "0.2"
    if nnodes > 1:
        assert _option(cmd, "--node-rank") == "1" and _option(cmd, "--master-addr") == "node0"


def test_non_divisible_counts_use_the_nearest_and_say_so(run_cli, fake_bin, tmp_path, monkeypatch):
    proc, cmd = _dry_run(run_cli, "train_transformer_big.sh", fake_bin, tmp_path, "--gpus", "3")
    product = int(_option(cmd, "--max-tokens")) * int(_option(cmd, "--update-freq")) * 3
    assert product == 3556 * 43 * 3 == 458724 and "warning" in proc.stderr and "458,724" in proc.stderr
    proc, cmd = _dry_run(run_cli, "pretrain_roberta.sh", fake_bin, tmp_path, "--gpus", "3")
    assert int(_option(cmd, "--batch-size")) * int(_option(cmd, "--update-freq")) * 3 == 2046
    assert "warning" in proc.stderr and "2,046" in proc.stderr
    # more processes than sequences per update: a one-line error, nothing launched
    monkeypatch.setenv("NNODES", "4")
    proc, _ = _dry_run(run_cli, "pretrain_roberta.sh", fake_bin, tmp_path, "--gpus", "1024", check=False)
    assert proc.returncode == 2 and proc.stderr.strip().startswith("error:") and "at most 2048" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not proc.stdout


def test_user_batch_options_are_honoured(run_cli, fake_bin, tmp_path):
    # a larger per-GPU cap (80 GB GPUs): the accumulation shrinks, the global batch stays
    proc, cmd = _dry_run(run_cli, "train_transformer_big.sh", fake_bin, tmp_path, "--gpus", "8",
                         "--max-tokens", "7168")
    assert cmd.count("--max-tokens") == 1 and _option(cmd, "--update-freq") == "8"
    # an explicit update-freq is kept and the resulting batch reported, not hidden
    proc, cmd = _dry_run(run_cli, "train_transformer_big.sh", fake_bin, tmp_path, "--gpus", "8",
                         "--update-freq=4", "--patience", "2")
    assert _option(cmd, "--update-freq") == "4" and "--update-freq=4" not in cmd
    assert "warning" in proc.stderr and f"{8 * 4 * 3584:,}" in proc.stderr
    assert _option(cmd, "--keep-last-epochs") == "12" and cmd.count("--patience") == 1


def test_lm_data_passes_scheme_options(run_cli, fake_bin, tmp_path):
    out = tmp_path / "lm"
    out.mkdir()
    info = {"data": str(fake_bin), "lm": True, "spaces": "drop",
            "fairseq_args": ["--bpe", "spaces", "--spaces-model", "/m/spm model.model", "--spaces", "drop"]}
    (out / "binarize.json").write_text(json.dumps(info))
    _, cmd = _dry_run(run_cli, "pretrain_roberta.sh", out, tmp_path, "--gpus", "8", "--mask-whole-words")
    assert cmd[cmd.index("--bpe"):cmd.index("--bpe") + 6] == info["fairseq_args"]
    assert "--drop-space-tokens" in cmd and "--mask-whole-words" in cmd
    assert _option(cmd, "--task") == "masked_lm_words" and cmd[cmd.index("--user-dir") - 1] == str(fake_bin)


def test_bad_input_one_line_errors(run_cli, fake_bin, tmp_path, monkeypatch):
    proc, _ = _dry_run(run_cli, "train_transformer_big.sh", tmp_path / "missing", tmp_path, "--gpus", "8",
                       check=False)
    assert proc.returncode == 2 and proc.stderr.strip().startswith("error: no data-bin folder")
    proc, _ = _dry_run(run_cli, "train_transformer_big.sh", fake_bin, tmp_path, "--gpus", "two", check=False)
    assert proc.returncode == 2 and "--gpus must be a positive number" in proc.stderr
    # whole-word masking without the scheme's --bpe options would mask single pieces: refused
    proc, _ = _dry_run(run_cli, "pretrain_roberta.sh", fake_bin, tmp_path, "--gpus", "8", "--mask-whole-words",
                       check=False)
    assert proc.returncode == 2 and "needs the scheme's --bpe options" in proc.stderr
    # a real multi-node start without NODE_RANK / MASTER_ADDR stops before launching anything
    monkeypatch.setenv("NNODES", "2")
    monkeypatch.delenv("NODE_RANK", raising=False)
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    proc = run_cli(["bash", "train_scripts/train_transformer_big.sh", "--data", fake_bin, "--save-dir",
                    tmp_path / "s", "--cpu", "--gpus", "2"], check=False)
    assert proc.returncode == 2 and "needs NODE_RANK" in proc.stderr and "MASTER_ADDR" in proc.stderr


@pytest.mark.parametrize("processes", [1, 2, 4, 8, 16, 32, 64, 128])
def test_plan_batch_exact_on_powers_of_two(processes):
    assert plan_batch("tokens", TRANSFORMER_BIG, 3584, processes) == (3584, 128 // processes, TRANSFORMER_BIG)
    assert plan_batch("sequences", ROBERTA, 16, processes) == (16, 128 // processes, ROBERTA)


def test_plan_batch_nearest():
    for processes in (3, 5, 6, 7, 12, 24):
        per, uf, effective = plan_batch("tokens", TRANSFORMER_BIG, 3584, processes)
        assert per <= 3584 and effective == per * uf * processes <= TRANSFORMER_BIG
        assert TRANSFORMER_BIG - effective < processes * uf  # within one token per accumulated batch
        per, uf, effective = plan_batch("sequences", ROBERTA, 16, processes)
        assert per <= 16 and effective == per * uf * processes and abs(effective - ROBERTA) <= 0.02 * ROBERTA
    assert plan_batch("sequences", 32, 32, 3) == (11, 1, 33)  # fine-tuning on 3 GPUs: 33, nearer than 30
    with pytest.raises(UserError, match="at most 32"):
        plan_batch("sequences", 32, 32, 64)
    with pytest.raises(UserError, match="positive"):
        plan_batch("tokens", TRANSFORMER_BIG, 0, 8)


def test_an_own_lr_scheduler_replaces_the_papers_with_its_options(run_cli, fake_bin, tmp_path):
    """The plateau schedule's options would be refused by fairseq under another scheduler: they go with it."""
    plateau = ("--lr-shrink", "--lr-patience", "--lr-floor", "--warmup-init-lr")
    _, cmd = _dry_run(run_cli, "pretrain_roberta.sh", fake_bin, tmp_path, "--gpus", "1", "--cpu", "--small")
    assert _option(cmd, "--lr-scheduler") == "reduce_lr_on_plateau_floor" and all(o in cmd for o in plateau)
    _, cmd = _dry_run(run_cli, "pretrain_roberta.sh", fake_bin, tmp_path, "--gpus", "1", "--cpu", "--small",
                      "--lr-scheduler", "polynomial_decay")
    assert cmd.count("--lr-scheduler") == 1 and _option(cmd, "--lr-scheduler") == "polynomial_decay"
    assert not any(o in cmd for o in plateau) and _option(cmd, "--warmup-updates") == "150"
