"""Run a fairseq command-line tool as one rank of a ``torchrun`` job, on GPUs or on CPUs (gloo).

    torchrun --nproc-per-node 4 -m train_scripts.fairseq_launch fairseq-train DATA --arch ... [--cpu]

fairseq's own torchrun support derives the device from ``RANK % torch.cuda.device_count()``, which divides by
zero without GPUs, and its spawn path asserts on the GPU count.  This wrapper instead hands fairseq explicit
``--distributed-init-method env:// --distributed-world-size W --distributed-rank R --device-id LOCAL_RANK
--distributed-no-spawn`` from torchrun's environment, so the same launch works on one node or several, with
NCCL on GPUs or ``--cpu --distributed-backend gloo``.  Without torchrun (no ``WORLD_SIZE``) it just runs the tool.

Batch planning: ``python -m train_scripts.fairseq_launch plan-batch --unit tokens --global 458752 --per-process
3584 --processes 16`` prints ``PER_PROCESS UPDATE_FREQ EFFECTIVE`` (the recipes ``read`` it) and, on stderr, one
line with the effective batch.  The papers give a *global* batch per update (Transformer-big: 3,584 tokens x 8
GPUs x update-freq 16 = 458,752 tokens; RoBERTa: 2,048 sequences; fine-tuning: 32 sentences); the global batch is
``processes x per-process batch x update-freq``, so on other GPU counts the update frequency (and where needed the
per-process batch, never above its memory cap) is recomputed, see :func:`plan_batch`.

Diagnostics: with ``FAIRSEQ_LAUNCH_RANK_STATE_DIR=DIR`` every rank writes its in-memory model parameters to
``DIR/rank{R}.pt`` whenever fairseq reaches a checkpoint point (fairseq itself saves from rank 0 only), so a
test can check that data-parallel ranks stay identical.
"""
from __future__ import annotations

import argparse
import logging
import math
import os
import sys

TOOLS = {
    "fairseq-train": "fairseq_cli.train",
    "fairseq-validate": "fairseq_cli.validate",
}


def distributed_args(environ=os.environ, tool_args: list[str] = ()) -> list[str]:
    """fairseq options for this torchrun rank (empty when not launched by torchrun or with one process).

    A run on the CPU (``--cpu`` in ``tool_args``) with several processes, on one node or across nodes, also gets
    ``--distributed-backend gloo --ddp-backend legacy_ddp`` unless the tool's arguments choose them: fairseq's
    default NCCL backend does not exist without CUDA, and torch's DDP refuses CPU modules with device ids."""
    world = int(environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return []
    args = ["--distributed-init-method", "env://", "--distributed-world-size", str(world),
            "--distributed-rank", environ["RANK"], "--device-id", environ.get("LOCAL_RANK", "0"),
            "--distributed-no-spawn"]
    if "--cpu" in tool_args:
        given = {a.split("=", 1)[0] for a in tool_args}
        if "--distributed-backend" not in given:
            args += ["--distributed-backend", "gloo"]
        if "--ddp-backend" not in given:
            args += ["--ddp-backend", "legacy_ddp"]
    return args


def _dump_rank_state(directory: str) -> None:
    """Make fairseq's save_checkpoint (called on every rank) also save this rank's parameters."""
    import torch
    from fairseq import checkpoint_utils

    original = checkpoint_utils.save_checkpoint

    def save_checkpoint(cfg, trainer, epoch_itr, val_loss, *args, **kwargs):
        os.makedirs(directory, exist_ok=True)
        state = {k: v.detach().cpu().clone() for k, v in trainer.get_model().state_dict().items()}
        torch.save({"rank": trainer.data_parallel_rank, "num_updates": trainer.get_num_updates(), "model": state},
                   os.path.join(directory, f"rank{trainer.data_parallel_rank}.pt"))
        return original(cfg, trainer, epoch_itr, val_loss, *args, **kwargs)

    checkpoint_utils.save_checkpoint = save_checkpoint


def _atomic_checkpoints() -> None:
    """Hold SIGTERM, SIGINT and SIGHUP while fairseq saves a checkpoint: fairseq writes the first file through a
    temporary name but *copies* it to the others (checkpoint_last.pt, checkpoint_best.pt), so a signal during the
    copy would leave a truncated checkpoint that a resumed run cannot load.  A signal that arrives meanwhile is
    noted (a Python handler, so whichever thread the kernel hands it to, nothing dies mid-write) and raised again
    as soon as the save returns, with the usual effect (train_scripts/common.sh gives the group time for that)."""
    import signal
    import threading

    from fairseq import checkpoint_utils

    original = checkpoint_utils.save_checkpoint
    held = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

    def save_checkpoint(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            return original(*args, **kwargs)
        pending: list[int] = []
        previous = {sig: signal.signal(sig, lambda signum, frame: pending.append(signum)) for sig in held}
        try:
            return original(*args, **kwargs)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for sig in dict.fromkeys(pending):
                signal.raise_signal(sig)

    checkpoint_utils.save_checkpoint = save_checkpoint
    _atomic_copies()


def _atomic_copies() -> None:
    """fairseq copies the saved checkpoint to checkpoint_last.pt (and _best) in place: a process killed outright
    during the copy (SIGKILL, e.g. from SLURM once a requeued step's task has ended) left an empty
    checkpoint_last.pt that the requeued run cannot load.  A local copy is made to ``DEST.part`` beside it and
    renamed over ``DEST``: a killed copy leaves the previous checkpoint whole (and at most that one ``.part``,
    overwritten by the next copy)."""
    import shutil

    from fairseq.file_io import PathManager

    original = PathManager.copy

    def copy(src_path: str, dst_path: str, overwrite: bool = False) -> bool:
        if "://" in str(src_path) or "://" in str(dst_path) or (os.path.exists(dst_path) and not overwrite):
            return original(src_path, dst_path, overwrite=overwrite)
        part = f"{dst_path}.part"
        shutil.copyfile(src_path, part)
        os.replace(part, dst_path)
        return True

    PathManager.copy = staticmethod(copy)


def plan_batch(unit: str, global_batch: int, per_process: int, processes: int,
               update_freq: int | None = None) -> tuple[int, int, int]:
    """(per-process batch, update-freq, effective global batch) for ``processes`` data-parallel workers.

    ``per_process`` is the per-process cap (``--max-tokens`` or ``--batch-size``, bounded by GPU memory);
    ``update_freq`` fixes the accumulation instead of deriving it.  Exact whenever the global batch divides:
    Transformer-big on 1, 2, 4, 8, 16 ... GPUs keeps 3,584 tokens and sets update-freq 128 / GPUs.  Otherwise
    the nearest reachable batch is used (never silently: callers print the effective batch):

    * ``tokens`` (``--max-tokens``, a cap on padded tokens per batch): update-freq = ceil(global / (processes x
      cap)), then the cap is lowered to floor(global / (processes x update-freq)), so the product is at most
      ``global`` and within ``processes x update-freq`` tokens of it (3 GPUs: 3,556 x 43 x 3 = 458,724).
    * ``sequences`` (``--batch-size``, exact sequence counts): among update-freq from ceil(global / (processes x
      cap)) to twice that, the batch size min(cap, round(global / (processes x update-freq))) whose product is
      nearest to ``global`` (ties: fewer accumulation steps).  RoBERTa's 2,048 on 3 GPUs: 11 x 62 x 3 = 2,046.
    """
    from preprocess.common import UserError

    if min(global_batch, per_process, processes) < 1 or (update_freq is not None and update_freq < 1):
        raise UserError("batch sizes, process counts and --update-freq must be positive")
    if unit not in ("tokens", "sequences"):
        raise UserError(f"unit must be tokens or sequences, not {unit!r}")
    if unit == "sequences" and processes > global_batch:
        raise UserError(f"a global batch of {global_batch} sequences cannot be split over {processes} processes: "
                        f"use at most {global_batch} (NNODES x --gpus)")
    if update_freq is not None:
        candidates = [update_freq]
    else:
        first = math.ceil(global_batch / (processes * per_process))
        candidates = [first] if unit == "tokens" else range(first, 2 * first + 1)
    best = None
    for uf in candidates:
        if unit == "tokens":
            per = min(per_process, global_batch // (processes * uf))
        else:
            per = min(per_process, max(1, round(global_batch / (processes * uf))))
        if per < 1:
            raise UserError(f"{processes} processes x update-freq {uf} exceed the global batch of {global_batch} "
                            f"{unit}: use fewer processes or a smaller --update-freq")
        effective = processes * per * uf
        if best is None or abs(effective - global_batch) < abs(best[2] - global_batch):
            best = (per, uf, effective)
    return best


def _plan_batch_cli(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m train_scripts.fairseq_launch plan-batch",
                                description="per-process batch and update-freq for a global batch (see plan_batch)")
    p.add_argument("--unit", choices=["tokens", "sequences"], required=True)
    p.add_argument("--global", dest="global_batch", type=int, required=True, help="global batch per update")
    p.add_argument("--per-process", type=int, required=True, help="per-process cap (--max-tokens / --batch-size)")
    p.add_argument("--processes", type=int, required=True, help="NNODES x processes per node")
    p.add_argument("--update-freq", type=int, help="fixed update frequency (derived when absent)")
    p.add_argument("--fixed-per-process", action="store_true",
                   help="with --update-freq: keep --per-process as given (both given by the user)")
    p.add_argument("--name", default="batch", help="what the batch is called in the printed line")
    args = p.parse_args(argv)
    if args.fixed_per_process and args.update_freq is not None:
        per, uf = args.per_process, args.update_freq
        effective = args.processes * per * uf
    else:
        per, uf, effective = plan_batch(args.unit, args.global_batch, args.per_process, args.processes,
                                        args.update_freq)
    flag = "--max-tokens" if args.unit == "tokens" else "--batch-size"
    line = (f"effective {args.name}: {effective:,} {args.unit} per update = {args.processes} process(es) x "
            f"{flag} {per} x --update-freq {uf}")
    if effective == args.global_batch:
        line += " (exactly the target global batch)"
    else:
        diff = 100.0 * (effective - args.global_batch) / args.global_batch
        line += (f"; warning: the target {args.global_batch:,} is not reachable exactly with these settings, "
                 f"using the nearest ({diff:+.3f}%)")
    print(line, file=sys.stderr)
    print(per, uf, effective)
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "plan-batch":
        from preprocess.cli import run_main

        return run_main(_plan_batch_cli, argv[1:])
    if not argv or argv[0] not in TOOLS:
        print(f"usage: python -m train_scripts.fairseq_launch {{{','.join(TOOLS)},plan-batch}} ARGS...",
              file=sys.stderr)
        return 2
    import importlib

    import fairseq_plugins  # noqa: F401  (torch compatibility fixes before fairseq loads anything)

    tool = argv.pop(0)
    if tool == "fairseq-train":
        _atomic_checkpoints()
    if os.environ.get("FAIRSEQ_LAUNCH_RANK_STATE_DIR") and tool == "fairseq-train":
        _dump_rank_state(os.environ["FAIRSEQ_LAUNCH_RANK_STATE_DIR"])
    sys.argv = [tool, *argv, *distributed_args(tool_args=argv)]
    importlib.import_module(TOOLS[tool]).cli_main()
    return 0


if __name__ == "__main__":
    status = main()
    # The tool has finished and closed its files.  Leave without running C++ static destructors: after masked-LM
    # training with whole-word masking on CPU, one of them aborts the process now and then ("terminate called
    # without an active exception", no Python frame; seen with OMP_NUM_THREADS=1), turning a finished run into
    # exit status 134.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
