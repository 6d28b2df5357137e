"""Mixed precision on the CPU: ``MORPHTOK_CPU_BF16=1`` runs fairseq's forward passes and losses in bfloat16.

fairseq's own ``--bf16`` asks for an XLA device and does not run with ``--cpu``; its ``--fp16``/``--amp`` are for
GPUs.  On a CPU with native bfloat16 arithmetic (the ``avx512_bf16`` or ``amx_bf16`` flag of ``/proc/cpuinfo``) a
bfloat16 matrix product is several times faster than a float32 one, and the recipes' CPU models spend most of
their time in matrix products.  With ``MORPHTOK_CPU_BF16=1`` in the environment of ``fairseq-train --cpu
--user-dir fairseq_plugins`` (the recipes' ``--cpu-bf16`` sets it), the plugin wraps ``FairseqTask.train_step``
and ``valid_step`` so that the criterion (the model's forward pass and the loss) runs under
``torch.autocast("cpu", dtype=torch.bfloat16)``:

* the weights stay float32 (autocast casts them per operation), so the gradients, the optimizer and its state,
  the checkpoints and every later use of the model (scoring, generation, the hub) are float32 as before;
* the backward pass runs outside autocast, as torch recommends (its operations follow the forward's dtypes);
* autocast keeps its own float32 operations (softmax, losses), and fairseq's criteria compute their log-softmax
  in float32, so the loss is float32.

Nothing else changes: not the batches, not the learning rate, not the task.  A task whose ``train_step`` or
``valid_step`` neither is fairseq's nor calls it (``super()``) is not affected; every task of this project's
recipes (masked_lm_words, sentence_prediction, translation) is.

Where it does not apply, training is float32 and one line on stderr (rank 0) says why, at the first step: a CPU
without native bfloat16 (emulated bfloat16 would be slower than float32), a model that is not on the CPU (on
GPUs use fairseq's ``--fp16``/``--bf16``), or weights that are not float32 (fairseq's ``--fp16`` on the CPU).
Where it applies, one line says so.  ``MORPHTOK_CPU_BF16=0`` or unset: the plugin patches nothing.
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys

from preprocess.common import UserError

#: the environment variable that turns it on (``1``) or leaves fairseq as it is (``0`` or unset)
ENV = "MORPHTOK_CPU_BF16"

#: the ``/proc/cpuinfo`` flags of native bfloat16 arithmetic (x86: AVX512-BF16, AMX-BF16)
BF16_FLAGS = ("avx512_bf16", "amx_bf16")

#: per process: None until the first step, then whether the steps run under autocast
_decision: bool | None = None
#: the unwrapped ``FairseqTask.train_step`` / ``valid_step`` while the wrappers are installed
_originals: dict = {}


def requested(environ=os.environ) -> bool:
    """Whether ``MORPHTOK_CPU_BF16`` asks for bfloat16 (``1``); ``0`` or empty: no; anything else is a
    :class:`~preprocess.common.UserError`."""
    value = environ.get(ENV, "").strip()
    if value not in ("", "0", "1"):
        raise UserError(f"must be 1 (bfloat16 forward passes on the CPU) or 0, not {value!r}")
    return value == "1"


def native_bf16(cpuinfo: str = "/proc/cpuinfo") -> list[str]:
    """The native bfloat16 features of this CPU (:data:`BF16_FLAGS` found in ``cpuinfo``'s flags), empty if none.
    Where ``cpuinfo`` cannot be read (not Linux), torch's own CPU probe answers."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as fh:
            flags = set()
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() == "flags":
                    flags.update(value.split())
        return [f for f in BF16_FLAGS if f in flags]
    except OSError:
        import torch

        probe = {"avx512_bf16": "_is_avx512_bf16_supported", "amx_bf16": "_is_amx_tile_supported"}
        return [flag for flag, name in probe.items() if getattr(torch.cpu, name, lambda: False)()]


def _say(line: str) -> None:
    if os.environ.get("RANK", "0") == "0":
        print(line, file=sys.stderr, flush=True)


def decide(model) -> bool:
    """Whether this process's steps run under bfloat16 autocast, decided at its first step from ``model`` and the
    CPU (:func:`native_bf16`), with the one line that says so; later calls return the same answer silently."""
    global _decision
    if _decision is not None:
        return _decision
    import torch

    param = next(iter(model.parameters()), None)
    device = param.device.type if param is not None else "cpu"
    features = native_bf16()
    if device != "cpu":
        _say(f"{ENV}=1 ignored: the model is on {device}, not the CPU (on GPUs use fairseq's --fp16 or --bf16)")
        _decision = False
    elif param is not None and param.dtype != torch.float32:
        _say(f"{ENV}=1 ignored: the model's weights are {str(param.dtype).replace('torch.', '')}, not float32 "
             f"(leave out fairseq's --fp16/--bf16 to train in bfloat16 on the CPU)")
        _decision = False
    elif not features:
        _say(f"{ENV}=1: this CPU has no native bfloat16 (no {' or '.join(BF16_FLAGS)} flag in /proc/cpuinfo): "
             f"training in float32")
        _decision = False
    else:
        _say(f"{ENV}=1: forward passes and losses in bfloat16 (torch.autocast on the CPU: "
             f"{', '.join(features)}); weights, gradients and optimizer in float32")
        _decision = True
    return _decision


@contextlib.contextmanager
def steps_in_bf16(on: bool):
    """Inside, the wrapped steps run under bfloat16 autocast (``on``) or without, whatever :func:`decide` would
    say, and print nothing (for a benchmark that alternates the two in one process, ``bench/bf16.py``); the
    wrappers must be installed (:func:`install`)."""
    global _decision
    before, _decision = _decision, bool(on)
    try:
        yield
    finally:
        _decision = before


class Bf16Criterion:
    """A criterion whose calls (``criterion(model, sample)``: the forward pass and the loss) run under
    ``torch.autocast("cpu", dtype=torch.bfloat16)``; every attribute is the wrapped criterion's."""

    def __init__(self, criterion):
        self.criterion = criterion

    def __call__(self, *args, **kwargs):
        import torch

        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.criterion(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.criterion, name)


def _under_bf16(original):
    """``FairseqTask.train_step`` or ``valid_step`` (``original``) with the criterion in :class:`Bf16Criterion`
    where :func:`decide` says so."""
    @functools.wraps(original)
    def step(self, sample, model, criterion, *args, **kwargs):
        if decide(model):
            criterion = Bf16Criterion(criterion)
        return original(self, sample, model, criterion, *args, **kwargs)
    return step


def install() -> None:
    """Wrap ``FairseqTask.train_step`` and ``valid_step`` (once; see the module docstring)."""
    if _originals:
        return
    from fairseq.tasks import FairseqTask

    for name in ("train_step", "valid_step"):
        _originals[name] = getattr(FairseqTask, name)
        setattr(FairseqTask, name, _under_bf16(_originals[name]))


def uninstall() -> None:
    """Restore fairseq's ``train_step`` and ``valid_step`` and forget the decision (for tests)."""
    global _decision
    from fairseq.tasks import FairseqTask

    for name, original in _originals.items():
        setattr(FairseqTask, name, original)
    _originals.clear()
    _decision = None


def apply(environ=os.environ) -> bool:
    """Install the wrappers if ``MORPHTOK_CPU_BF16=1`` (:func:`requested`); returns whether it did.  Called when
    the plugin is imported."""
    if not requested(environ):
        return False
    install()
    return True
