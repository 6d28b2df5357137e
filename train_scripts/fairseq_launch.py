"""Run a fairseq command-line tool as one rank of a ``torchrun`` job, on GPUs or on CPUs (gloo).

    torchrun --nproc-per-node 4 -m train_scripts.fairseq_launch fairseq-train DATA --arch ... [--cpu]

fairseq's own torchrun support derives the device from ``RANK % torch.cuda.device_count()``, which divides by
zero without GPUs, and its spawn path asserts on the GPU count.  This wrapper instead hands fairseq explicit
``--distributed-init-method env:// --distributed-world-size W --distributed-rank R --device-id LOCAL_RANK
--distributed-no-spawn`` from torchrun's environment, so the same launch works on one node or several, with
NCCL on GPUs or ``--cpu --distributed-backend gloo``.  Without torchrun (no ``WORLD_SIZE``) it just runs the tool.

Diagnostics: with ``FAIRSEQ_LAUNCH_RANK_STATE_DIR=DIR`` every rank writes its in-memory model parameters to
``DIR/rank{R}.pt`` whenever fairseq reaches a checkpoint point (fairseq itself saves from rank 0 only), so a
test can check that data-parallel ranks stay identical.
"""
from __future__ import annotations

import os
import sys

TOOLS = {
    "fairseq-train": "fairseq_cli.train",
    "fairseq-validate": "fairseq_cli.validate",
}


def distributed_args(environ=os.environ) -> list[str]:
    """fairseq options for this torchrun rank (empty when not launched by torchrun or with one process)."""
    world = int(environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return []
    return ["--distributed-init-method", "env://", "--distributed-world-size", str(world),
            "--distributed-rank", environ["RANK"], "--device-id", environ.get("LOCAL_RANK", "0"),
            "--distributed-no-spawn"]


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


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in TOOLS:
        print(f"usage: python -m train_scripts.fairseq_launch {{{','.join(TOOLS)}}} ARGS...", file=sys.stderr)
        return 2
    import importlib

    import fairseq_plugins  # noqa: F401  (torch compatibility fixes before fairseq loads anything)

    tool = argv.pop(0)
    if os.environ.get("FAIRSEQ_LAUNCH_RANK_STATE_DIR") and tool == "fairseq-train":
        _dump_rank_state(os.environ["FAIRSEQ_LAUNCH_RANK_STATE_DIR"])
    sys.argv = [tool, *argv, *distributed_args()]
    importlib.import_module(TOOLS[tool]).cli_main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
