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


def apply() -> list[str]:
    """Patch fairseq's checkpoint loading for torch >= 2.6; idempotent. Returns the modules patched."""
    import torch

    if not needs_patch(torch):
        return []
    patched = []
    for name in _PATCHED_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if not isinstance(getattr(module, "torch", None), _TorchWithTrustedLoad):
            module.torch = _TorchWithTrustedLoad(torch)
        patched.append(name)
    return patched
