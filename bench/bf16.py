"""float32 vs bfloat16 (``--cpu-bf16``, fairseq_plugins/cpu_bf16.py) on this CPU, paired in one process.

    python bench/bf16.py [--rounds 20] [--vocab 8000] [--json OUT.json]
    python bench/bf16.py --same-models LM_FOLDER [--updates 100] [--seeds 1 2]
    python bench/bf16.py --compile [--rounds 10]

**Steps** (the default): fairseq's own ``Trainer.train_step`` (forward, loss, backward, Adam step) of two models
built as the recipes build them -- the ``pretrain_roberta.sh --small`` encoder (2 layers, 128 dimensions, FFN 512,
2 heads) on masked-LM batches of 32 x 128 tokens, and the same encoder with a two-class head on
sentence-classification batches of 32 x 64 tokens (the fine-tuning step) -- each once in float32 and once under
the plugin's wrappers, from the same initial weights.  The batches are random token ids of those shapes (a step's
cost depends on its shapes, not on the ids); data loading is not timed.  The four steps and a 1024^3 float32 and
bfloat16 matmul (the CPU's limits) are timed in turn, round after round, with the order reversed every other
round, so that all of them see the same load; medians are reported, as tokens per second and as ratios: bfloat16
over float32 for each, and each step's matrix-product rate (FLOPs counted by torch's FlopCounterMode) as a
fraction of the same dtype's matmul rate.  The load average is printed: on a busy machine the ratios are
indicative only.

**Same models** (``--same-models``): ``pretrain_roberta.sh --small --max-update N`` on LM_FOLDER (a
``train_scripts.binarize --lm`` folder) for each seed, float32 and ``--cpu-bf16`` alternately, and the
validation loss at update N of each run, with each run's wall time.

**torch.compile** (``--compile``): the same two float32 steps, once eager and once with the model under
``torch.compile`` (inductor, the default mode), timed in turn round after round as above; the compiled model's first
steps (its compilation) are timed apart and reported as the warm-up.

``--threads N`` sets torch's threads (the same-models runs' ``OMP_NUM_THREADS``): on a machine busy with other
work, two threads that wait for each other at every operation are slowed far more than one, so a loaded machine's
figures are taken with one thread.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run as a script: the checkout

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: pretrain_roberta.sh --small's encoder
SMALL = ["--arch", "roberta_base", "--encoder-layers", "2", "--encoder-embed-dim", "128",
         "--encoder-ffn-embed-dim", "512", "--encoder-attention-heads", "2", "--max-positions", "128",
         "--dropout", "0.1", "--attention-dropout", "0.1", "--optimizer", "adam", "--adam-betas", "(0.9, 0.98)",
         "--adam-eps", "1e-06", "--weight-decay", "0.01", "--lr", "0.0005", "--lr-scheduler", "fixed", "--cpu",
         "--seed", "1", "--num-workers", "0"]


def load() -> str:
    with open("/proc/loadavg", encoding="utf-8") as fh:
        return " ".join(fh.read().split()[:3])


def _dictionary(folder: str, size: int) -> None:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "dict.txt"), "w", encoding="utf-8") as fh:
        fh.writelines(f"w{i} 1\n" for i in range(size))


def trainer(kind: str, vocab: int, folder: str):
    """(fairseq Trainer, its task) for ``kind`` ``pretrain`` (masked_lm) or ``finetune`` (sentence_prediction)."""
    import torch
    from fairseq import options, tasks
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf
    from fairseq.trainer import Trainer

    if kind == "pretrain":
        _dictionary(folder, vocab)
        extra = [folder, "--task", "masked_lm", "--criterion", "masked_lm", "--tokens-per-sample", "128"]
    else:
        _dictionary(os.path.join(folder, "input0"), vocab)
        os.makedirs(os.path.join(folder, "label"), exist_ok=True)
        with open(os.path.join(folder, "label", "dict.txt"), "w", encoding="utf-8") as fh:
            fh.write("0 1\n1 1\n")
        extra = [folder, "--task", "sentence_prediction", "--criterion", "sentence_prediction", "--num-classes", "2",
                 "--init-token", "0", "--separator-token", "2"]
    parser = options.get_training_parser()
    cfg = convert_namespace_to_omegaconf(options.parse_args_and_arch(parser, [*extra, *SMALL]))
    torch.manual_seed(1)
    task = tasks.setup_task(cfg.task)
    model = task.build_model(cfg.model)
    return Trainer(cfg, task, model, task.build_criterion(cfg.criterion)), task


def batch(kind: str, task, batch_size: int, length: int):
    """A batch of random ids of the step's shape (masked LM: 15 % of the positions masked and predicted)."""
    import torch

    g = torch.Generator().manual_seed(0)
    d = task.source_dictionary
    tokens = torch.randint(d.nspecial, len(d) - 1, (batch_size, length), generator=g)
    sample = {"id": torch.arange(batch_size), "nsentences": batch_size, "ntokens": batch_size * length,
              "net_input": {"src_tokens": tokens, "src_lengths": torch.full((batch_size,), length)}}
    if kind == "pretrain":
        masked = torch.rand(batch_size, length, generator=g) < 0.15
        sample["target"] = torch.where(masked, tokens, torch.full_like(tokens, d.pad()))
        sample["net_input"]["src_tokens"] = torch.where(masked, torch.full_like(tokens, task.mask_idx), tokens)
    else:
        sample["target"] = torch.randint(0, 2, (batch_size, 1), generator=g)
    return sample


def matmul_seconds(dtype, n: int = 1024, reps: int = 5) -> float:
    import torch

    a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
    torch.mm(a, b)
    t0 = time.perf_counter()
    for _ in range(reps):
        torch.mm(a, b)
    return (time.perf_counter() - t0) / reps


def step_flops(tr, sample, bf16: bool) -> float:
    """The matrix-product FLOPs of one training step (forward and backward), by torch's FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    from fairseq_plugins import cpu_bf16

    with cpu_bf16.steps_in_bf16(bf16), FlopCounterMode(display=False) as counter:
        tr.train_step([sample])
    return float(counter.get_total_flops())


def steps(args) -> dict:
    import torch

    from fairseq_plugins import cpu_bf16

    cpu_bf16.install()
    if args.threads:
        torch.set_num_threads(args.threads)
    shapes = {"pretrain": (32, 128), "finetune": (32, 64)}
    timers, tokens, flops = {}, {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, (bsz, length) in shapes.items():
            for bf16 in (False, True):
                tr, task = trainer(kind, args.vocab, os.path.join(tmp, f"{kind}{int(bf16)}"))
                sample = batch(kind, task, bsz, length)
                for _ in range(args.warmup):
                    with cpu_bf16.steps_in_bf16(bf16):
                        tr.train_step([sample])
                flops[(kind, bf16)] = step_flops(tr, sample, bf16)
                timers[(kind, bf16)] = (tr, sample)
                tokens[kind] = bsz * length
    names = [*timers, ("matmul", False), ("matmul", True)]
    times = {name: [] for name in names}
    load_before = load()
    for r in range(args.rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            kind, bf16 = name
            if kind == "matmul":
                times[name].append(matmul_seconds(torch.bfloat16 if bf16 else torch.float32))
                continue
            tr, sample = timers[name]
            t0 = time.perf_counter()
            with cpu_bf16.steps_in_bf16(bf16):
                tr.train_step([sample])
            times[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(v) for name, v in times.items()}
    peak = {bf16: 2 * 1024 ** 3 / med[("matmul", bf16)] for bf16 in (False, True)}
    out = {"load_before": load_before, "load_after": load(), "cores": os.cpu_count(),
           "threads": torch.get_num_threads(), "rounds": args.rounds, "vocab": args.vocab,
           "matmul_gflops": {"float32": peak[False] / 1e9, "bfloat16": peak[True] / 1e9},
           "matmul_ratio": peak[True] / peak[False], "steps": {}}
    for kind in shapes:
        row = {}
        for bf16 in (False, True):
            dt = med[(kind, bf16)]
            row["bfloat16" if bf16 else "float32"] = {
                "ms": dt * 1e3, "tokens_per_s": tokens[kind] / dt, "gflops": flops[(kind, bf16)] / dt / 1e9,
                "of_matmul": flops[(kind, bf16)] / dt / peak[bf16]}
        row["ratio"] = med[(kind, False)] / med[(kind, True)]
        out["steps"][kind] = row
    return out


def report_steps(out: dict) -> str:
    lines = [f"load {out['load_before']} before, {out['load_after']} after; {out['cores']} cores, "
             f"{out['threads']} torch threads; {out['rounds']} rounds, medians; vocabulary {out['vocab']}",
             "", "| | float32 | bfloat16 | bfloat16 / float32 |", "|---|---:|---:|---:|",
             f"| matmul 1024^3, GFLOP/s | {out['matmul_gflops']['float32']:.0f} | "
             f"{out['matmul_gflops']['bfloat16']:.0f} | {out['matmul_ratio']:.2f} |"]
    for kind, label in (("pretrain", "--small pretraining step (32 x 128 tokens)"),
                        ("finetune", "classification fine-tuning step (32 x 64 tokens)")):
        row = out["steps"][kind]
        f, b = row["float32"], row["bfloat16"]
        lines.append(f"| {label}, tokens/s | {f['tokens_per_s']:.0f} ({f['ms']:.0f} ms) | "
                     f"{b['tokens_per_s']:.0f} ({b['ms']:.0f} ms) | {row['ratio']:.2f} |")
        lines.append(f"| ... its matrix products, share of the matmul rate | {f['of_matmul']:.0%} | "
                     f"{b['of_matmul']:.0%} | |")
    return "\n".join(lines)


def same_models(args) -> list[dict]:
    """The --small pretraining for each seed, float32 and bfloat16 alternately: validation loss and wall time."""
    from train_scripts.train_log import validation_curve

    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            for bf16 in ((False, True) if seed % 2 else (True, False)):
                save = os.path.join(tmp, f"s{seed}{'bf16' if bf16 else 'fp32'}")
                cmd = ["bash", os.path.join(REPO, "train_scripts", "pretrain_roberta.sh"), "--data", args.same_models,
                       "--save-dir", save, "--small", "--max-update", str(args.updates), "--seed", str(seed),
                       "--validate-interval-updates", str(args.updates), "--save-interval-updates", "0",
                       "--no-save"] + (["--cpu-bf16"] if bf16 else [])
                before = load()
                t0 = time.perf_counter()
                env = dict(os.environ, **({"OMP_NUM_THREADS": str(args.threads)} if args.threads else {}))
                proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env)
                wall = time.perf_counter() - t0
                if proc.returncode != 0:
                    raise SystemExit(f"error: {' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
                last = [r for r in validation_curve(os.path.join(save, "train.log")) if r["update"] == args.updates]
                runs.append({"seed": seed, "dtype": "bfloat16" if bf16 else "float32", "wall_s": wall,
                             "valid_loss": last[-1]["valid_loss"], "load": before})
    return runs


def report_same(runs: list[dict], updates: int) -> str:
    lines = ["| seed | float32 valid loss | bfloat16 valid loss | difference | float32 s | bfloat16 s | load |",
             "|---:|---:|---:|---:|---:|---:|---|"]
    for seed in sorted({r["seed"] for r in runs}):
        f, b = (next(r for r in runs if r["seed"] == seed and r["dtype"] == d) for d in ("float32", "bfloat16"))
        lines.append(f"| {seed} | {f['valid_loss']:.3f} | {b['valid_loss']:.3f} | "
                     f"{b['valid_loss'] - f['valid_loss']:+.3f} | {f['wall_s']:.0f} | {b['wall_s']:.0f} | "
                     f"{f['load']} / {b['load']} |")
    return f"validation loss at update {updates} (base 2)\n\n" + "\n".join(lines)


def compiled(args) -> dict:
    """Eager against ``torch.compile`` float32 steps: medians, their ratio and the compiled model's warm-up."""
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    shapes = {"pretrain": (32, 128), "finetune": (32, 64)}
    timers, warmup = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, (bsz, length) in shapes.items():
            for mode in ("eager", "compiled"):
                tr, task = trainer(kind, args.vocab, os.path.join(tmp, f"{kind}-{mode}"))
                if mode == "compiled":
                    tr._model = torch.compile(tr._model)   # before the trainer wraps it (its first .model)
                sample = batch(kind, task, bsz, length)
                t0 = time.perf_counter()
                for _ in range(max(args.warmup, 1)):
                    tr.train_step([sample])
                warmup[(kind, mode)] = time.perf_counter() - t0
                timers[(kind, mode)] = (tr, sample)
        load_before = load()
        times = {name: [] for name in timers}
        names = list(timers)
        for r in range(args.rounds):
            for name in (names if r % 2 == 0 else names[::-1]):
                tr, sample = timers[name]
                t0 = time.perf_counter()
                tr.train_step([sample])
                times[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(v) for name, v in times.items()}
    out = {"load_before": load_before, "load_after": load(), "cores": os.cpu_count(),
           "threads": torch.get_num_threads(), "rounds": args.rounds, "vocab": args.vocab, "steps": {}}
    for kind in shapes:
        out["steps"][kind] = {"eager_ms": med[(kind, "eager")] * 1e3, "compiled_ms": med[(kind, "compiled")] * 1e3,
                              "ratio": med[(kind, "eager")] / med[(kind, "compiled")],
                              "compiled_warmup_s": warmup[(kind, "compiled")],
                              "eager_warmup_s": warmup[(kind, "eager")]}
    return out


def report_compiled(out: dict) -> str:
    lines = [f"load {out['load_before']} before, {out['load_after']} after; {out['cores']} cores, "
             f"{out['threads']} torch threads; {out['rounds']} rounds, medians; float32",
             "", "| step | eager | torch.compile | eager / compiled | compiled warm-up |", "|---|---:|---:|---:|---:|"]
    for kind, label in (("pretrain", "--small pretraining (32 x 128 tokens)"),
                        ("finetune", "classification fine-tuning (32 x 64 tokens)")):
        row = out["steps"][kind]
        lines.append(f"| {label} | {row['eager_ms']:.0f} ms | {row['compiled_ms']:.0f} ms | {row['ratio']:.2f} | "
                     f"{row['compiled_warmup_s']:.0f} s |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python bench/bf16.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=20, help="timed rounds of every step and matmul (default 20)")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps of each model first (default 3)")
    p.add_argument("--vocab", type=int, default=8000, help="vocabulary size (default 8000, the German part's)")
    p.add_argument("--same-models", metavar="LM_FOLDER", help="run the same-models check on this binarize --lm folder")
    p.add_argument("--updates", type=int, default=100, help="updates of each same-models run (default 100)")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2], help="seeds of the same-models check")
    p.add_argument("--threads", type=int, help="torch threads (OMP_NUM_THREADS of the same-models runs); default: "
                   "torch's (one per core). On a loaded machine, 1: threads that wait for each other are slowed "
                   "most by a busy machine")
    p.add_argument("--compile", action="store_true", help="eager against torch.compile float32 steps instead")
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args(argv)
    if args.compile:
        result = compiled(args)
        print(report_compiled(result))
    elif args.same_models:
        result = same_models(args)
        print(report_same(result, args.updates))
    else:
        result = steps(args)
        print(report_steps(result))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
