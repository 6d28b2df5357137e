"""Fixes that fairseq (0.12.x, fairseq-fixed) needs on current torch, applied when the plugin is imported.

torch >= 2.6 loads with ``weights_only=True`` by default, but fairseq checkpoints pickle ``argparse.Namespace``
and omegaconf objects, so ``fairseq-generate``, ``fairseq-train --restore-file``, ``fairseq-interactive`` and
``fairseq-validate`` fail with "Weights only load failed".  fairseq's CLIs import ``--user-dir`` while parsing
options, before any checkpoint is read, so importing this plugin is early enough.

The fix is deliberately narrow: only the two places where fairseq itself loads its own pickles
(``fairseq.checkpoint_utils`` for checkpoints, ``fairseq.distributed.utils`` for objects broadcast between
ranks) get a ``torch.load`` whose default is ``weights_only=False``, i.e. the behaviour fairseq was written for.
Any caller that passes ``weights_only`` explicitly keeps its choice, and ``torch.load`` elsewhere is untouched.
Loading a checkpoint runs pickle code, so load only checkpoints you trust, as always with fairseq.

fairseq-fixed (fairseq main) also changed ``fairseq.data.data_utils.batch_by_size`` to drop the last batch when
its size is not a multiple of ``--required-batch-size-multiple`` (default 8).  For ``fairseq-generate`` and
``fairseq-validate`` that silently loses up to 7 sentences of the test set (30 test sentences -> 24
translations), so BLEU is computed on a subset without warning.  The plugin restores fairseq 0.12.2's
behaviour: every index ends up in a batch; only the batch *sizes* respect the multiple where they can.
"""
from __future__ import annotations

import functools
import importlib
import types

_PATCHED_MODULES = ("fairseq.checkpoint_utils", "fairseq.distributed.utils")


class _TorchWithTrustedLoad(types.ModuleType):
    """A stand-in for the ``torch`` module inside one fairseq module: everything is torch's, except ``load``."""

    def __init__(self, torch_module):
        super().__init__("torch")
        self._torch = torch_module

        @functools.wraps(torch_module.load)
        def load(*args, **kwargs):
            kwargs.setdefault("weights_only", False)
            return torch_module.load(*args, **kwargs)

        self.load = load

    def __getattr__(self, name):
        return getattr(self._torch, name)


def needs_patch(torch_module) -> bool:
    try:
        major, minor = (int(x) for x in torch_module.__version__.split("+")[0].split(".")[:2])
    except ValueError:
        return True
    return (major, minor) >= (2, 6)


def _batch_by_size_keeping_all(indices, num_tokens_fn, num_tokens_vec=None, max_tokens=None,
                               max_sentences=None, required_batch_size_multiple=1, fixed_shapes=None):
    """fairseq 0.12.2's ``batch_by_size``: the same batches, but the last, smaller batch is kept."""
    import numpy as np
    from fairseq.data.data_utils_fast import batch_by_size_fn, batch_by_size_vec

    if fixed_shapes is not None:
        return _ORIGINAL_BATCH_BY_SIZE(indices, num_tokens_fn, num_tokens_vec, max_tokens, max_sentences,
                                       required_batch_size_multiple, fixed_shapes)
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
    """Replace fairseq-fixed's batch_by_size (which drops the last partial batch); True if patched."""
    global _ORIGINAL_BATCH_BY_SIZE
    import inspect

    from fairseq.data import data_utils

    current = data_utils.batch_by_size
    if current is _batch_by_size_keeping_all:
        return True
    if "b[:-1]" not in inspect.getsource(current):  # a fairseq that keeps every batch needs nothing
        return False
    _ORIGINAL_BATCH_BY_SIZE = current
    data_utils.batch_by_size = _batch_by_size_keeping_all
    return True


def apply() -> list[str]:
    """Apply the fixes; idempotent. Returns the names of what was patched."""
    import torch

    patched = []
    try:
        if _keep_last_batch():
            patched.append("fairseq.data.data_utils.batch_by_size")
    except (ImportError, OSError, TypeError):
        pass
    if not needs_patch(torch):
        return patched
    for name in _PATCHED_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if not isinstance(getattr(module, "torch", None), _TorchWithTrustedLoad):
            module.torch = _TorchWithTrustedLoad(torch)
        patched.append(name)
    return patched
