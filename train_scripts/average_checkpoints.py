"""Average the parameters of several fairseq checkpoints (the "average the last N checkpoints" step of the
Transformer-big and RoBERTa recipes).

    python -m train_scripts.average_checkpoints --inputs ckpt/checkpoint9.pt ckpt/checkpoint10.pt --output avg.pt
    python -m train_scripts.average_checkpoints --inputs ckpt/ --num-epoch-checkpoints 5 --output avg.pt
    python -m train_scripts.average_checkpoints --inputs ckpt/ --num-update-checkpoints 5 --output avg.pt
    python -m train_scripts.average_checkpoints --inputs ckpt/ --best-and-previous 9 --output avg.pt
    python -m train_scripts.average_checkpoints --inputs ckpt/checkpoint.best_loss_*.pt --num-best-checkpoints 5 \
        --output avg.pt

The options are those of fairseq's ``scripts/average_checkpoints.py`` (``--inputs``, ``--output``,
``--num-epoch-checkpoints``, ``--num-update-checkpoints``, ``--num-best-checkpoints``, ``--checkpoint-upper-bound``)
plus ``--best-and-previous N``: the BITE paper's "the selected checkpoint with the previous nine" (appendix B.3)
is ``--best-and-previous 9``: the epoch of ``checkpoint_best.pt`` is found and ``checkpointE.pt`` is averaged with
the N epoch checkpoints before it, all of which must exist (``train_transformer_big.sh`` keeps the last
patience + 10 epochs so they do).  ``--num-best-checkpoints N`` averages the N lowest-valued
``checkpoint.best_METRIC_VALUE.pt`` files that ``fairseq-train --keep-best-checkpoints`` writes (given as files, or
their directory), as fairseq's script does.

The result is a complete fairseq checkpoint (the first input's configuration and metadata, the averaged
``model``), so it loads in ``fairseq-generate --path avg.pt`` like any other.  Floating-point tensors are summed
in float64 and the mean is cast back to the tensor's dtype, so the average of two float32 checkpoints is the
correctly rounded mean of each parameter.  Non-floating tensors (integer buffers such as version counters) must
be identical in every input and are copied.  The optimizer state of the first input is dropped unless
``--keep-optimizer-state`` is given (it is not an average, and it doubles the file size); to resume training
from an average use ``fairseq-train --restore-file avg.pt --reset-optimizer``.

fairseq checkpoints pickle ``argparse``/omegaconf objects, so they are read with ``weights_only=False`` (the
torch >= 2.6 default would refuse them): average only checkpoints you trust, as with fairseq itself.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import sys

from preprocess.common import UserError, run_main

EPOCH_PATTERN = re.compile(r"^checkpoint(\d+)\.pt$")
BEST_PATTERN = re.compile(r"^checkpoint\.best_.*_(\d+\.?\d*)\.pt$")
UPDATE_PATTERN = re.compile(r"^checkpoint_\d+_(\d+)\.pt$")


def _load(path: str, mmap: bool = False) -> dict:
    import torch

    if not os.path.isfile(path):
        raise UserError(f"checkpoint not found: {path}")
    try:
        state = torch.load(path, map_location="cpu", weights_only=False, mmap=mmap)
    except Exception as exc:  # corrupt / not a torch file: one line, not a traceback
        raise UserError(f"cannot read checkpoint {path}: {str(exc).splitlines()[0] if str(exc) else exc!r}") \
            from None
    if not isinstance(state, dict) or "model" not in state:
        raise UserError(f"{path} is not a fairseq checkpoint (no 'model' entry)")
    return state


def average_state_dicts(state_dicts: list[dict], names: list[str] | None = None) -> "collections.OrderedDict":
    """Mean of several model state dicts with the same keys and shapes (see the module doc for dtypes)."""
    import torch

    if not state_dicts:
        raise UserError("nothing to average: no checkpoints given")
    names = names or [f"#{i}" for i in range(len(state_dicts))]
    keys = list(state_dicts[0].keys())
    for sd, name in zip(state_dicts[1:], names[1:]):
        if set(sd.keys()) != set(keys):
            missing = sorted(set(keys) - set(sd.keys()))[:3]
            extra = sorted(set(sd.keys()) - set(keys))[:3]
            raise UserError(f"{name} has different parameters from {names[0]} "
                            f"(missing {missing}, extra {extra}): checkpoints of different models")
    averaged = collections.OrderedDict()
    n = len(state_dicts)
    for key in keys:
        first = state_dicts[0][key]
        tensors = [sd[key] for sd in state_dicts]
        if not torch.is_tensor(first):
            averaged[key] = first
            continue
        for t, name in zip(tensors[1:], names[1:]):
            if t.shape != first.shape:
                raise UserError(f"{key}: shape {tuple(t.shape)} in {name} but {tuple(first.shape)} in {names[0]}")
        if first.is_floating_point():
            total = torch.zeros(first.shape, dtype=torch.float64)
            for t in tensors:
                total += t.detach().to(device="cpu", dtype=torch.float64)
            averaged[key] = (total / n).to(first.dtype)
        else:
            for t, name in zip(tensors[1:], names[1:]):
                if not torch.equal(t.cpu(), first.cpu()):
                    raise UserError(f"{key}: non-floating tensor differs between {names[0]} and {name}")
            averaged[key] = first.detach().cpu().clone()
    return averaged


def average_checkpoints(paths: list[str], keep_optimizer_state: bool = False) -> dict:
    """Load fairseq checkpoints and return a checkpoint state whose ``model`` is their parameter mean.

    The other entries (``cfg``/``args``, ``extra_state`` ...) are the first checkpoint's; ``averaged_from``
    lists the inputs.  Save it with ``torch.save(state, path)``.
    """
    paths = [str(p) for p in paths]
    if not paths:
        raise UserError("nothing to average: no checkpoints given")
    if len(set(map(os.path.abspath, paths))) != len(paths):
        raise UserError("the same checkpoint is given twice")
    state = None
    models = []
    for path in paths:
        loaded = _load(path)
        models.append(loaded["model"])
        if state is None:
            state = loaded
    state["model"] = average_state_dicts(models, paths)
    if not keep_optimizer_state:
        state["last_optimizer_state"] = None
    state["averaged_from"] = [os.path.abspath(p) for p in paths]
    return state


def last_checkpoints(directory: str, n: int, by: str = "epoch", upper_bound: int | None = None) -> list[str]:
    """The ``n`` most recent ``checkpointE.pt`` (``by="epoch"``) or ``checkpoint_E_U.pt`` (``by="update"``)
    files of ``directory`` (newest first), ignoring those numbered above ``upper_bound``."""
    pattern = EPOCH_PATTERN if by == "epoch" else UPDATE_PATTERN
    if not os.path.isdir(directory):
        raise UserError(f"not a directory: {directory}")
    found = []
    for name in os.listdir(directory):
        m = pattern.match(name)
        if m and (upper_bound is None or int(m.group(1)) <= upper_bound):
            found.append((int(m.group(1)), os.path.join(directory, name)))
    found.sort(reverse=True)
    if len(found) < n:
        kind = "checkpointN.pt (--save-interval)" if by == "epoch" else \
            "checkpoint_E_U.pt (--save-interval-updates)"
        raise UserError(f"asked for the last {n} {by} checkpoints but {directory} has {len(found)} {kind} files")
    return [path for _, path in found[:n]]


def best_epoch(directory: str) -> tuple[int, int]:
    """(epoch, number of updates) of ``directory/checkpoint_best.pt``, which must be an end-of-epoch checkpoint."""
    path = os.path.join(directory, "checkpoint_best.pt")
    if not os.path.isfile(path):
        raise UserError(f"no checkpoint_best.pt in {directory}: --best-and-previous needs a run that validated")
    state = _load(path, mmap=True)
    iterator = (state.get("extra_state") or {}).get("train_iterator") or {}
    if "epoch" not in iterator or iterator.get("iterations_in_epoch", 0) != 0:
        raise UserError(f"{path} was saved in the middle of an epoch (--save-interval-updates), not at an epoch end: "
                        f"average update checkpoints with --num-update-checkpoints instead")
    # fairseq records the *next* epoch in a checkpoint saved at the end of an epoch
    return int(iterator["epoch"]) - 1, int(state["optimizer_history"][-1]["num_updates"])


def best_and_previous(directory: str, n: int) -> list[str]:
    """``checkpointB.pt`` (B: the epoch of checkpoint_best.pt) and the ``n`` epoch checkpoints before it, oldest
    first; a one-line error when any of them is missing."""
    if n < 0:
        raise UserError("--best-and-previous must be 0 or more")
    epoch, updates = best_epoch(directory)
    if epoch - n < 1:
        raise UserError(f"the best checkpoint is epoch {epoch}: it has no {n} epochs before it to average with "
                        f"(use --best-and-previous {epoch - 1} or train longer)")
    paths = [os.path.join(directory, f"checkpoint{e}.pt") for e in range(epoch - n, epoch + 1)]
    missing = [os.path.basename(p) for p in paths if not os.path.isfile(p)]
    if missing:
        raise UserError(f"the best epoch is {epoch}, but {directory} lacks {', '.join(missing)} of the {n + 1} "
                        f"checkpoints to average: train with --keep-last-epochs of at least --patience + 10 "
                        f"(train_transformer_big.sh does) or lower --best-and-previous")
    found = _load(paths[-1], mmap=True)["optimizer_history"][-1]["num_updates"]
    if found != updates:
        raise UserError(f"checkpoint_best.pt ({updates} updates) is not {os.path.basename(paths[-1])} ({found} "
                        f"updates): the folder mixes runs; average explicit --inputs files instead")
    return paths


def best_checkpoints(inputs: list[str], n: int) -> list[str]:
    """fairseq's --num-best-checkpoints: the ``n`` ``checkpoint.best_METRIC_VALUE.pt`` with the lowest VALUE."""
    if n < 1:
        raise UserError("--num-best-checkpoints must be at least 1")
    files = []
    for path in inputs:
        files += [os.path.join(path, f) for f in os.listdir(path)] if os.path.isdir(path) else [path]
    scored = sorted((float(m.group(1)), f) for f in files if (m := BEST_PATTERN.match(os.path.basename(f))))
    if len(scored) < n:
        raise UserError(f"asked for the {n} best checkpoints but found {len(scored)} checkpoint.best_*_VALUE.pt "
                        f"files (written by fairseq-train --keep-best-checkpoints N)")
    return [f for _, f in scored[:n]]


def save_checkpoint(state: dict, path: str) -> None:
    """torch.save through a temporary file, so a failure never leaves a truncated checkpoint."""
    import tempfile

    import torch

    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        torch.save(state, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m train_scripts.average_checkpoints",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--inputs", nargs="+", required=True,
                   help="checkpoint files to average, or one directory together with --num-*-checkpoints")
    p.add_argument("--output", required=True, help="where to write the averaged checkpoint")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--num-epoch-checkpoints", type=int, metavar="N",
                       help="average the last N checkpointE.pt files of the --inputs directory")
    group.add_argument("--num-update-checkpoints", type=int, metavar="N",
                       help="average the last N checkpoint_E_U.pt files of the --inputs directory")
    group.add_argument("--num-best-checkpoints", type=int, metavar="N",
                       help="average the N lowest-valued checkpoint.best_METRIC_VALUE.pt files among --inputs "
                            "(files or their directory; written by fairseq-train --keep-best-checkpoints)")
    group.add_argument("--best-and-previous", type=int, metavar="N",
                       help="average the epoch checkpoint of checkpoint_best.pt with the N epoch checkpoints "
                            "before it (the BITE paper: N=9); one --inputs directory")
    p.add_argument("--checkpoint-upper-bound", type=int, metavar="K",
                   help="with --num-*-checkpoints: ignore checkpoints numbered above K (epoch or update)")
    p.add_argument("--keep-optimizer-state", action="store_true",
                   help="keep the first input's optimizer state (by default it is dropped)")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    n = args.num_epoch_checkpoints or args.num_update_checkpoints
    if args.checkpoint_upper_bound is not None and n is None:
        raise UserError("--checkpoint-upper-bound needs --num-epoch-checkpoints or --num-update-checkpoints")
    if args.best_and_previous is not None:
        if len(args.inputs) != 1 or not os.path.isdir(args.inputs[0]):
            raise UserError("--best-and-previous takes exactly one --inputs directory")
        paths = best_and_previous(args.inputs[0], args.best_and_previous)
    elif args.num_best_checkpoints is not None:
        paths = best_checkpoints(args.inputs, args.num_best_checkpoints)
    elif n is not None:
        if len(args.inputs) != 1:
            raise UserError("--num-epoch-checkpoints/--num-update-checkpoints take exactly one --inputs directory")
        if n < 1:
            raise UserError("the number of checkpoints must be at least 1")
        by = "epoch" if args.num_epoch_checkpoints else "update"
        paths = last_checkpoints(args.inputs[0], n, by, args.checkpoint_upper_bound)
    else:
        paths = args.inputs
        for path in paths:
            if os.path.isdir(path):
                raise UserError(f"{path} is a directory: give --num-epoch-checkpoints or --num-update-checkpoints")
    print(f"averaging {len(paths)} checkpoints: {' '.join(paths)}", file=sys.stderr)
    state = average_checkpoints(paths, keep_optimizer_state=args.keep_optimizer_state)
    save_checkpoint(state, args.output)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
