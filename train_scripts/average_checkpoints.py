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
``model``), so it loads in ``fairseq-generate --path avg.pt`` like any other.

What is averaged is checked before anything is written: the inputs must be different files (compared by device
and inode, so a symlink or a second spelling of one checkpoint is refused), the output must not be one of them,
and every input must have been saved with the same architecture and the same value of every model argument
(``cfg.model``, or the model's own options of a legacy ``args`` namespace): checkpoints of two architectures
whose tensors happen to have the same shapes are refused with one line naming the first difference, instead of
being averaged under the first one's configuration.  The output is written through a temporary file beside it
(``preprocess.common.atomic_output``), so it follows the umask and a failure leaves nothing.

When the wanted checkpoints are not in the folder (for instance after a short ``--max-update`` run, which saves
only ``checkpoint_best.pt`` and ``checkpoint_last.pt``), the error lists what the folder holds and which of the
modes above would work with it.  Floating-point tensors are summed
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

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.files.outputs import atomic_output, check_distinct, check_output_path, write_error

EPOCH_PATTERN = re.compile(r"^checkpoint(\d+)\.pt$")
BEST_PATTERN = re.compile(r"^checkpoint\.best_.*_(\d+\.?\d*)\.pt$")
UPDATE_PATTERN = re.compile(r"^checkpoint_\d+_(\d+)\.pt$")


def inventory(directory: str) -> dict:
    """The checkpoints of a fairseq save folder by kind: ``{"epoch": [(E, path)], "update": [(U, path)],
    "best": [path] (checkpoint.best_*), "other": [names] (checkpoint_best.pt, checkpoint_last.pt, ...)}``,
    numbered lists in ascending order."""
    found: dict = {"epoch": [], "update": [], "best": [], "other": []}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if (m := EPOCH_PATTERN.match(name)):
            found["epoch"].append((int(m.group(1)), path))
        elif (m := UPDATE_PATTERN.match(name)):
            found["update"].append((int(m.group(1)), path))
        elif BEST_PATTERN.match(name):
            found["best"].append(path)
        elif name.endswith(".pt"):
            found["other"].append(name)
    found["epoch"].sort()
    found["update"].sort()
    return found


def describe_folder(directory: str) -> str:
    """What ``directory`` holds and which averaging modes would work with it: the end of every "not enough
    checkpoints" message, so that the advice never names a mode that finds nothing."""
    inv = inventory(directory)
    have = []
    if inv["epoch"]:
        have.append(f"{len(inv['epoch'])} epoch checkpoints (checkpoint{inv['epoch'][0][0]}.pt .. "
                    f"checkpoint{inv['epoch'][-1][0]}.pt)")
    if inv["update"]:
        have.append(f"{len(inv['update'])} update checkpoints (checkpoint_E_U.pt, updates {inv['update'][0][0]} .. "
                    f"{inv['update'][-1][0]})")
    if inv["best"]:
        have.append(f"{len(inv['best'])} checkpoint.best_*.pt")
    if inv["other"]:
        have.append(", ".join(inv["other"]))
    modes = []
    if len(inv["epoch"]) > 1:
        modes.append(f"--num-epoch-checkpoints {len(inv['epoch'])} or fewer")
    if len(inv["update"]) > 1:
        modes.append(f"--num-update-checkpoints {len(inv['update'])} or fewer")
    if len(inv["best"]) > 1:
        modes.append(f"--num-best-checkpoints {len(inv['best'])} or fewer")
    text = f"{directory} holds {'; '.join(have) if have else 'no checkpoints'}"
    if modes:
        return text + ": it can average with " + ", ".join(modes)
    return (text + ": nothing to average there; save several checkpoints while training (epoch checkpoints, "
            "i.e. without --no-epoch-checkpoints and with --keep-last-epochs N; or --save-interval-updates N "
            "--keep-interval-updates K), or use checkpoint_best.pt alone")


def _load(path: str, mmap: bool = False) -> dict:
    import torch

    if not os.path.isfile(path):
        raise UserError(f"checkpoint not found: {path}")
    try:
        state = torch.load(path, map_location="cpu", weights_only=False, mmap=mmap)
    except Exception as exc:  # noqa: BLE001 - torch.load's errors vary with the file: reported as one line
        raise UserError(f"cannot read checkpoint {path}: {str(exc).splitlines()[0] if str(exc) else exc!r}") \
            from None
    if not isinstance(state, dict) or "model" not in state:
        raise UserError(f"{path} is not a fairseq checkpoint (no 'model' entry)")
    return state


def model_config(state: dict) -> dict | None:
    """The saved model configuration of a checkpoint: ``{"arch": ..., option: value, ...}``, or None when the
    checkpoint records none.  fairseq >= 0.10 saves ``cfg["model"]`` (a dict of the model's options, or the whole
    legacy ``argparse.Namespace``); older checkpoints ``args``.  From a namespace, which also holds the training
    and task options, only ``arch`` and the options the architecture's model class declares (its ``add_args``)
    are kept, so that checkpoints of one run resumed with another --max-update or learning rate still agree."""
    cfg = state.get("cfg")
    model = cfg.get("model") if hasattr(cfg, "get") else None
    if model is None:
        model = state.get("args")
    if model is None:
        return None
    if isinstance(model, argparse.Namespace):
        items = dict(vars(model))
        names = _model_option_names(items.get("arch"))
        if names is not None:
            items = {k: v for k, v in items.items() if k in names or k in ("arch", "_name")}
    else:
        try:
            from omegaconf import OmegaConf

            if OmegaConf.is_config(model):
                model = OmegaConf.to_container(model)
        except ImportError:
            pass
        items = dict(model)
    if "arch" not in items and "_name" in items:
        items["arch"] = items["_name"]
    items.pop("_name", None)
    return items


def _model_option_names(arch) -> set | None:
    """The option names (dests) of the model class registered for ``arch``, or None when fairseq or the
    architecture is unknown here (then every saved option is compared)."""
    try:
        from fairseq.models import ARCH_MODEL_REGISTRY

        import fairseq_plugins  # noqa: F401  (architectures of this project's plugins)
    except ImportError:
        return None
    cls = ARCH_MODEL_REGISTRY.get(arch)
    if cls is None or not hasattr(cls, "add_args"):
        return None
    parser = argparse.ArgumentParser(add_help=False)
    try:
        cls.add_args(parser)
    except (argparse.ArgumentError, AttributeError, KeyError, TypeError, ValueError) as exc:
        # a model whose add_args needs more than a bare parser: compare every option (stricter), and say so
        print(f"note: {arch}'s options could not be listed ({type(exc).__name__}: {exc}); comparing every "
              "option of the checkpoints", file=sys.stderr)
        return None
    return {action.dest for action in parser._actions}


def first_config_difference(first: dict | None, other: dict | None) -> str | None:
    """The first option (``arch`` first, then by name) whose value differs, as ``"NAME: A vs B"``, or None."""
    if first is None and other is None:
        return None
    if first is None or other is None:
        return "saved model configuration: " + ("none vs present" if first is None else "present vs none")
    missing = object()
    keys = ["arch"] + sorted((set(first) | set(other)) - {"arch"})
    for key in keys:
        a, b = first.get(key, missing), other.get(key, missing)
        if a is missing and b is missing:
            continue
        if a is missing or b is missing or a != b:
            show = lambda v: "(not set)" if v is missing else repr(v)  # noqa: E731
            return f"{key}: {show(a)} vs {show(b)}"
    return None


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
    check_distinct_inputs(paths)
    state = None
    models = []
    for path in paths:
        loaded = _load(path)
        models.append(loaded["model"])
        if state is None:
            state, first_config = loaded, model_config(loaded)
        else:
            difference = first_config_difference(first_config, model_config(loaded))
            if difference:
                raise UserError(f"{path} was saved with another model configuration than {paths[0]} "
                                f"({difference}): refusing to average checkpoints of different models")
    for i in range(1, len(models)):
        for j in range(i):
            if _same_parameters(models[j], models[i]):
                print(f"warning: {paths[i]} holds the same parameters as {paths[j]} (one is a copy of the other, "
                      f"as checkpoint_best.pt and checkpoint_last.pt often are): the average weights them twice",
                      file=sys.stderr)
                break
    state["model"] = average_state_dicts(models, paths)
    if not keep_optimizer_state:
        state["last_optimizer_state"] = None
    state["averaged_from"] = [os.path.abspath(p) for p in paths]
    return state


def _same_parameters(a: dict, b: dict) -> bool:
    """Every tensor equal (stops at the first difference, so different checkpoints cost one comparison)."""
    import torch

    if a.keys() != b.keys():
        return False
    for key, value in a.items():
        other = b[key]
        if torch.is_tensor(value) != torch.is_tensor(other):
            return False
        if torch.is_tensor(value) and (value.shape != other.shape or value.dtype != other.dtype
                                       or not torch.equal(value, other)):
            return False
    return True


def check_distinct_inputs(paths: list[str]) -> None:
    """Refuse one checkpoint given twice, compared as files (device and inode), so a symlink, a hard link or
    another spelling of the same file is caught."""
    seen: dict = {}
    for path in paths:
        if not os.path.isfile(path):
            raise UserError(f"checkpoint not found: {path}")
        st = os.stat(path)
        if (st.st_dev, st.st_ino) in seen:
            raise UserError(f"{path} and {seen[st.st_dev, st.st_ino]} are the same file: averaging a checkpoint "
                            f"with itself would weight it twice")
        seen[st.st_dev, st.st_ino] = path


def last_checkpoints(directory: str, n: int, by: str = "epoch", upper_bound: int | None = None) -> list[str]:
    """The ``n`` most recent ``checkpointE.pt`` (``by="epoch"``) or ``checkpoint_E_U.pt`` (``by="update"``)
    files of ``directory`` (newest first), ignoring those numbered above ``upper_bound``."""
    if not os.path.isdir(directory):
        raise UserError(f"not a directory: {directory}")
    found = [(number, path) for number, path in inventory(directory)[by]
             if upper_bound is None or number <= upper_bound]
    found.sort(reverse=True)
    if len(found) < n:
        kind = "checkpointE.pt" if by == "epoch" else "checkpoint_E_U.pt"
        bound = f" numbered at most {upper_bound}" if upper_bound is not None else ""
        raise UserError(f"asked for the last {n} {by} checkpoints ({kind}) but found {len(found)}{bound}; "
                        f"{describe_folder(directory)}")
    return [path for _, path in found[:n]]


def best_epoch(directory: str) -> tuple[int, int]:
    """(epoch, number of updates) of ``directory/checkpoint_best.pt``, which must be an end-of-epoch checkpoint."""
    epoch, updates, end_of_epoch = _best_position(directory)
    if not end_of_epoch:
        raise UserError(_mid_epoch_message(directory, epoch, updates))
    return epoch, updates


def _best_position(directory: str) -> tuple[int, int, bool]:
    """(epoch, updates, saved at the end of the epoch) of ``directory/checkpoint_best.pt``; the epoch is the one
    the checkpoint was saved in (fairseq records the *next* epoch at an epoch end)."""
    path = os.path.join(directory, "checkpoint_best.pt")
    if not os.path.isfile(path):
        raise UserError(f"no checkpoint_best.pt in {directory}: --best-and-previous needs a run that validated; "
                        f"{describe_folder(directory)}")
    state = _load(path, mmap=True)
    iterator = (state.get("extra_state") or {}).get("train_iterator") or {}
    history = state.get("optimizer_history") or [{}]
    updates = int(history[-1].get("num_updates", -1))
    if "epoch" not in iterator:
        raise UserError(f"{path} records no training position (extra_state.train_iterator): not a checkpoint "
                        f"saved by fairseq-train; average explicit --inputs files instead")
    end_of_epoch = iterator.get("iterations_in_epoch", 0) == 0
    return int(iterator["epoch"]) - end_of_epoch, updates, end_of_epoch


def _mid_epoch_message(directory: str, epoch: int, updates: int) -> str:
    return (f"{os.path.join(directory, 'checkpoint_best.pt')} was saved in the middle of epoch {epoch} (after "
            f"update {updates}: training stopped at --max-update, or --save-interval-updates saved it), and "
            f"{directory} has no checkpoint_E_U.pt of update {updates} to count back from: --best-and-previous "
            f"needs the epoch or update checkpoints before the best one; {describe_folder(directory)}")


def best_and_previous(directory: str, n: int) -> list[str]:
    """The checkpoint that ``checkpoint_best.pt`` is a copy of and the ``n`` checkpoints saved before it, oldest
    first; a one-line error when any of them is missing.

    At an epoch end that is ``checkpointB.pt`` (B: the best epoch) and the ``n`` epoch checkpoints before it, all
    of which must exist.  A best checkpoint saved in the middle of an epoch (``--save-interval-updates``) is the
    update checkpoint ``checkpoint_E_U.pt`` with the same number of updates, averaged with the ``n`` update
    checkpoints before it."""
    if n < 0:
        raise UserError("--best-and-previous must be 0 or more")
    epoch, updates, end_of_epoch = _best_position(directory)
    inv = inventory(directory)
    by_update = {u: path for u, path in inv["update"]}
    if not end_of_epoch or (not os.path.isfile(os.path.join(directory, f"checkpoint{epoch}.pt"))
                            and updates in by_update):
        if updates not in by_update:
            raise UserError(_mid_epoch_message(directory, epoch, updates))
        before = [path for u, path in inv["update"] if u < updates]
        if len(before) < n:
            raise UserError(f"the best checkpoint is the update checkpoint {os.path.basename(by_update[updates])}, "
                            f"with {len(before)} update checkpoints before it, not {n}: lower --best-and-previous "
                            f"or keep more with --keep-interval-updates; {describe_folder(directory)}")
        return before[len(before) - n:] + [by_update[updates]]
    if epoch - n < 1:
        raise UserError(f"the best checkpoint is epoch {epoch}: it has no {n} epochs before it to average with "
                        f"(use --best-and-previous {epoch - 1} or train longer)")
    paths = [os.path.join(directory, f"checkpoint{e}.pt") for e in range(epoch - n, epoch + 1)]
    missing = [os.path.basename(p) for p in paths if not os.path.isfile(p)]
    if missing:
        if len(missing) == len(paths):
            raise UserError(f"the best epoch is {epoch}, but {directory} has none of checkpoint{epoch - n}.pt .. "
                            f"checkpoint{epoch}.pt (was it trained with --no-epoch-checkpoints?); "
                            f"{describe_folder(directory)}")
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
        folders = [p for p in inputs if os.path.isdir(p)]
        where = "; " + describe_folder(folders[0]) if len(folders) == 1 else ""
        raise UserError(f"asked for the {n} best checkpoints but found {len(scored)} checkpoint.best_*_VALUE.pt "
                        f"files (written by fairseq-train --keep-best-checkpoints N){where}")
    return [f for _, f in scored[:n]]


class _WriteErrorRecorder:
    """A binary file for ``torch.save`` that remembers the first ``OSError`` of a write or flush.

    torch's zip writer does not let a failed write end the save: it goes on to write the archive's end, fails
    again on the short file and raises its own ``RuntimeError`` ("[enforce fail at inline_container.cc:...]
    unexpected pos ..."), with the disk-full error buried in its context.  The recorded error is the one to
    report."""

    def __init__(self, fh):
        self._fh = fh
        self.error: OSError | None = None

    def _call(self, method, *args):
        try:
            return method(*args)
        except OSError as exc:
            if self.error is None:
                self.error = exc
            raise

    def write(self, data) -> int:
        return self._call(self._fh.write, data)

    def flush(self) -> None:
        return self._call(self._fh.flush)

    def __getattr__(self, name):
        return getattr(self._fh, name)


def save_checkpoint(state: dict, path: str) -> None:
    """torch.save through :func:`preprocess.common.atomic_output`: a failure never leaves a truncated checkpoint,
    and the file's mode follows the umask.  A write that fails (disk full, quota, file size limit) is the one
    line every writer of the project gives (:func:`preprocess.common.write_error`), not torch's traceback."""
    import torch

    with atomic_output(path, "wb") as fh:
        sink = _WriteErrorRecorder(fh)
        try:
            torch.save(state, sink)
        except Exception:   # noqa: BLE001 - torch reports a failed write as RuntimeError (or the OSError itself)
            if sink.error is not None:
                raise write_error(path, sink.error) from None
            raise


def check_output(output: str, inputs: list[str]) -> None:
    """Before any work: the output is a file name (not a folder), writable, and none of the inputs."""
    if output.endswith(("/", os.sep)) or os.path.isdir(output):
        raise UserError(f"--output {output} is a directory: give the averaged checkpoint's file name, e.g. "
                        f"{os.path.join(output, 'checkpoint_avg.pt')}")
    check_output_path(output, "--output")
    check_distinct([(output, "--output")], [(p, "input checkpoint") for p in inputs])


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
                raise UserError(f"{path} is a directory: give a mode (--num-epoch-checkpoints, "
                                f"--num-update-checkpoints, --num-best-checkpoints, --best-and-previous); "
                                f"{describe_folder(path)}")
    check_output(args.output, paths)
    check_distinct_inputs(paths)
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
