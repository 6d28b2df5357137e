"""Fixes that fairseq (0.12.x, fairseq-fixed) needs on current torch, applied when the plugin is imported.

**Checkpoints are data, not code.**  torch >= 2.6 loads with ``weights_only=True`` by default, and fairseq
checkpoints pickle ``argparse.Namespace`` (and, in some official checkpoints, omegaconf containers), so
``fairseq-generate``, ``fairseq-train --restore-file``, ``fairseq-interactive`` and ``fairseq-validate`` failed
with "Weights only load failed".  The plugin does not answer that with ``weights_only=False`` (which runs whatever
code a pickle names): ``fairseq.checkpoint_utils`` gets a ``torch.load`` that keeps ``weights_only=True`` and
allows exactly the globals fairseq checkpoints hold (:data:`CHECKPOINT_GLOBALS`).  A checkpoint that needs any other
global is refused with one line naming it; if you trust the file, allow that global with
``MORPHTOK_TRUST_CHECKPOINT_GLOBALS=module.Name[,module.Name...]``, or load it as fairseq always did (running
its code) with ``MORPHTOK_TRUST_CHECKPOINTS=1``.  A caller that passes ``weights_only`` explicitly keeps its choice,
and ``torch.load`` elsewhere is untouched.  ``fairseq.distributed.utils`` unpickles the objects that the ranks of
one run send each other (not files): it keeps fairseq's ``weights_only=False``.

**Every test sentence is translated.**  fairseq-fixed (fairseq main) changed
``fairseq.data.data_utils.batch_by_size`` to drop the last batch when its size is not a multiple of
``--required-batch-size-multiple`` (default 8).  For generation that silently loses up to 7 sentences of the test
set (30 test sentences -> 24 translations), so BLEU is computed on a subset without warning.  The plugin restores
fairseq 0.12.2's behaviour (every index ends up in a batch; only the batch *sizes* respect the multiple where they
can) **for generation and evaluation only**: when the batches are built by ``fairseq-generate``,
``fairseq-interactive``, ``fairseq-validate``, ``fairseq-eval-lm`` or the hub interface (``from_pretrained(...)
.translate``).  ``fairseq-train``'s training and validation batches stay fairseq's own, so loading the plugin
does not change a run's batches.  ``MORPHTOK_KEEP_LAST_BATCH=always`` or ``never`` overrides this.

A fix that cannot be applied is reported (a warning naming it), never skipped silently.
"""
from __future__ import annotations

import functools
import importlib
import os
import pickle
import re
import sys
import types
import warnings

from preprocess.common import UserError

#: environment variables: see the module docstring
TRUST_GLOBALS_ENV = "MORPHTOK_TRUST_CHECKPOINT_GLOBALS"
TRUST_ALL_ENV = "MORPHTOK_TRUST_CHECKPOINTS"
KEEP_LAST_BATCH_ENV = "MORPHTOK_KEEP_LAST_BATCH"

#: the globals a fairseq checkpoint holds besides tensors and plain containers: ``argparse.Namespace`` (``args``,
#: and ``cfg.model`` of legacy architectures), and the omegaconf containers some official checkpoints pickle as
#: ``cfg`` (a DictConfig/ListConfig pickles its metadata, its nodes and the builtin types they record)
CHECKPOINT_GLOBALS = (
    "argparse.Namespace",
    "omegaconf.dictconfig.DictConfig", "omegaconf.listconfig.ListConfig", "omegaconf.base.ContainerMetadata",
    "omegaconf.base.Metadata", "omegaconf.nodes.AnyNode", "typing.Any", "collections.defaultdict",
    "builtins.dict", "builtins.list", "builtins.int",
)

#: the fairseq modules whose frames mark batches built for generation or evaluation (see the module docstring)
GENERATION_FILES = ("fairseq_cli/generate.py", "fairseq_cli/interactive.py", "fairseq_cli/validate.py",
                    "fairseq_cli/eval_lm.py", "fairseq/hub_utils.py")


class CheckpointRefused(UserError):
    """A checkpoint needs a global outside the allowlist (one line: the file, the global, how to trust it)."""


def _resolve(name: str):
    module, _, attr = name.rpartition(".")
    try:
        return getattr(importlib.import_module(module or "builtins"), attr)
    except (ImportError, AttributeError):
        raise UserError(f"{TRUST_GLOBALS_ENV}: cannot import {name!r}") from None


def trusted_globals() -> list:
    """The allowlist as objects: :data:`CHECKPOINT_GLOBALS` plus what ``MORPHTOK_TRUST_CHECKPOINT_GLOBALS`` adds."""
    extra = [n.strip() for n in os.environ.get(TRUST_GLOBALS_ENV, "").split(",") if n.strip()]
    out = []
    for name in (*CHECKPOINT_GLOBALS, *extra):
        try:
            out.append(_resolve(name))
        except UserError:
            if name in extra:
                raise
            # omegaconf missing: a checkpoint pickling its containers could not be read anyway
    return out


def _source(args) -> str:
    name = getattr(args[0], "name", args[0]) if args else None  # a path, or an open file (fairseq passes one)
    return os.fspath(name) if isinstance(name, (str, os.PathLike)) else "a checkpoint"


def load_checkpoint(torch_module, *args, **kwargs):
    """``torch.load`` for fairseq's checkpoint loader: ``weights_only=True`` with :func:`trusted_globals` allowed
    (unless the caller chose ``weights_only`` or ``MORPHTOK_TRUST_CHECKPOINTS=1``); a checkpoint that needs
    another global is :class:`CheckpointRefused`."""
    if "weights_only" in kwargs:
        return torch_module.load(*args, **kwargs)
    if os.environ.get(TRUST_ALL_ENV, "") not in ("", "0"):
        return torch_module.load(*args, weights_only=False, **kwargs)
    try:
        with torch_module.serialization.safe_globals(trusted_globals()):
            return torch_module.load(*args, weights_only=True, **kwargs)
    except pickle.UnpicklingError as exc:
        found = re.search(r"GLOBAL ([\w.]+)", str(exc))
        name = found.group(1) if found else None
        if name is None:
            trust = f"{TRUST_ALL_ENV}=1 (loads it as plain fairseq does)"
        elif "is blocked" in str(exc):  # os, sys, posix: torch allows none of them in weights_only mode
            trust = f"{TRUST_ALL_ENV}=1 (loads it as plain fairseq does, running that code)"
        else:
            trust = f"{TRUST_GLOBALS_ENV}={name} (or {TRUST_ALL_ENV}=1 to load it as plain fairseq does)"
        what = f"the global {name}" if name else "more than tensors and the allowed globals"
        error = CheckpointRefused(f"refusing to load {_source(args)}: it needs {what}, which loading could run as "
                                  f"code; if you trust this file, allow it with {trust}")
        if _in_fairseq_cli():
            print(f"error: {error}", file=sys.stderr)
            raise SystemExit(2) from None
        raise error from None


def _in_fairseq_cli() -> bool:
    from fairseq_plugins._errors import in_fairseq_cli

    return in_fairseq_cli()


class _TorchWithLoad(types.ModuleType):
    """A stand-in for the ``torch`` module inside one fairseq module: everything is torch's, except ``load``."""

    def __init__(self, torch_module, load):
        super().__init__("torch")
        self._torch = torch_module
        self.load = functools.wraps(torch_module.load)(functools.partial(load, torch_module))

    def __getattr__(self, name):
        return getattr(self._torch, name)


def _load_trusted_object(torch_module, *args, **kwargs):
    """fairseq's own objects sent between the ranks of one run (not files): loaded as fairseq was written to."""
    kwargs.setdefault("weights_only", False)
    return torch_module.load(*args, **kwargs)


#: module -> the load it gets
_LOADERS = {"fairseq.checkpoint_utils": load_checkpoint, "fairseq.distributed.utils": _load_trusted_object}


def needs_patch(torch_module) -> bool:
    try:
        major, minor = (int(x) for x in torch_module.__version__.split("+")[0].split(".")[:2])
    except ValueError:
        return True
    return (major, minor) >= (2, 6)


# --- batch_by_size ---------------------------------------------------------------------------------------------

def keep_last_batch_here() -> bool:
    """Whether the batches now being built keep their last, smaller batch: ``MORPHTOK_KEEP_LAST_BATCH`` =
    ``always`` / ``never``, else (``generation``, the default) only under a generation or evaluation entry point
    (:data:`GENERATION_FILES` on the call stack)."""
    mode = os.environ.get(KEEP_LAST_BATCH_ENV, "generation").strip().lower() or "generation"
    if mode not in ("generation", "always", "never"):
        raise UserError(f"{KEEP_LAST_BATCH_ENV} must be generation, always or never, not {mode!r}")
    if mode != "generation":
        return mode == "always"
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.replace(os.sep, "/").endswith(GENERATION_FILES):
            return True
        frame = frame.f_back
    return False


def _batch_by_size(indices, num_tokens_fn, num_tokens_vec=None, max_tokens=None, max_sentences=None,
                   required_batch_size_multiple=1, fixed_shapes=None):
    """fairseq's ``batch_by_size``, except that for generation (:func:`keep_last_batch_here`) the last, smaller
    batch is kept, as in fairseq 0.12.2."""
    if fixed_shapes is not None or not keep_last_batch_here():
        return _ORIGINAL_BATCH_BY_SIZE(indices, num_tokens_fn, num_tokens_vec, max_tokens, max_sentences,
                                       required_batch_size_multiple, fixed_shapes)
    import numpy as np
    from fairseq.data.data_utils_fast import batch_by_size_fn, batch_by_size_vec

    max_tokens = int(max_tokens) if max_tokens is not None else -1
    max_sentences = max_sentences if max_sentences is not None else -1
    if not isinstance(indices, np.ndarray):
        indices = np.fromiter(indices, dtype=np.int64, count=-1)
    if num_tokens_vec is not None and not isinstance(num_tokens_vec, np.ndarray):
        num_tokens_vec = np.fromiter(num_tokens_vec, dtype=np.int64, count=-1)
    if num_tokens_vec is None:
        return batch_by_size_fn(indices, num_tokens_fn, max_tokens, max_sentences, required_batch_size_multiple)
    return batch_by_size_vec(indices, num_tokens_vec, max_tokens, max_sentences, required_batch_size_multiple)


_ORIGINAL_BATCH_BY_SIZE = None


def _keep_last_batch() -> bool:
    """Wrap fairseq-fixed's batch_by_size (which drops the last partial batch); False if fairseq keeps it."""
    global _ORIGINAL_BATCH_BY_SIZE
    import inspect

    from fairseq.data import data_utils

    current = data_utils.batch_by_size
    if current is _batch_by_size:
        return True
    if "b[:-1]" not in inspect.getsource(current):  # a fairseq that keeps every batch needs nothing
        return False
    _ORIGINAL_BATCH_BY_SIZE = current
    data_utils.batch_by_size = _batch_by_size
    return True


def _report(fix: str, exc: BaseException) -> None:
    warnings.warn(f"fairseq_plugins.compat: could not apply {fix} ({type(exc).__name__}: {exc}); "
                  f"fairseq runs without it", RuntimeWarning, stacklevel=3)


def apply() -> list[str]:
    """Apply the fixes; idempotent.  Returns the names of what was patched; a fix that fails is reported with a
    ``RuntimeWarning``."""
    import torch

    patched = []
    try:
        if _keep_last_batch():
            patched.append("fairseq.data.data_utils.batch_by_size")
    except (ImportError, OSError, TypeError) as exc:
        _report("the generation batch_by_size fix", exc)
    for name, load in _LOADERS.items():
        if load is load_checkpoint and not hasattr(torch.serialization, "safe_globals"):  # torch < 2.5
            _report(f"the allowlisted checkpoint loading of {name}", RuntimeError(f"torch {torch.__version__} "
                    "has no torch.serialization.safe_globals"))
            continue
        if load is _load_trusted_object and not needs_patch(torch):
            continue
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            _report(f"the torch.load fix of {name}", exc)
            continue
        if not isinstance(getattr(module, "torch", None), _TorchWithLoad):
            module.torch = _TorchWithLoad(torch, load)
        patched.append(name)
    return patched
