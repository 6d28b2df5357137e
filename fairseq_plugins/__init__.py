"""fairseq plugin: ``--user-dir $(python -m fairseq_plugins)`` registers every scheme of this project.

Importing the package applies the torch compatibility fixes (:mod:`fairseq_plugins.compat`), installs
bfloat16 mixed precision on the CPU where ``MORPHTOK_CPU_BF16=1`` asks for it (:mod:`fairseq_plugins.cpu_bf16`),
and imports every adapter module in this directory (and the adapter that a scheme's descriptor names, :mod:`preprocess.registry`),
so a new scheme's adapter is a new file here and nothing else.

The one exception is ``python -m fairseq_plugins``, which only prints this directory: Python imports the package
before it runs ``__main__``, and importing torch and fairseq for that would take seconds.  While ``-m`` locates
its module, ``sys.argv[0]`` is ``"-m"`` (Python's documented behaviour), so the adapters are skipped then; any other
import (fairseq's ``--user-dir``, ``import fairseq_plugins``, ``python -m train_scripts...``) registers them.

Under ``fairseq-interactive`` the package also warns when the data folder's ``binarize.json`` records different
encodings for the two sides: fairseq-interactive applies one ``--bpe``/``--tokenizer`` to both, so either the
input or the output would be silently mis-encoded (``morphtok-translate`` applies each side's own).
"""
from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys


def register() -> None:
    """Apply the compatibility fixes and, under ``MORPHTOK_CPU_BF16=1``, bfloat16 on the CPU
    (:mod:`fairseq_plugins.cpu_bf16`), and import (register) every adapter module, this directory's and those that
    the scheme registry's descriptors name (``adapter``: a scheme of another package); importing twice is
    harmless."""
    from fairseq_plugins import compat, cpu_bf16
    from fairseq_plugins._errors import user_errors
    from preprocess import registry

    compat.apply()
    with user_errors(cpu_bf16.ENV):
        cpu_bf16.apply()
    for info in pkgutil.iter_modules(__path__):
        if info.name not in ("compat", "cpu_bf16", "__main__") and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    for descriptor in registry.descriptors():
        if descriptor.adapter:
            importlib.import_module(descriptor.adapter)


def interactive_pair_warning(argv: list) -> str | None:
    """The warning for a ``fairseq-interactive`` command line whose data folder (``OUT/data-bin`` of
    ``morphtok-binarize``) belongs to a pair encoded differently on each side; None otherwise."""
    if not argv or not (os.path.basename(argv[0]) == "fairseq-interactive"
                        or argv[0].endswith(os.path.join("fairseq_cli", "interactive.py"))):
        return None
    for arg in argv[1:]:
        first = arg.split(":")[0]
        if arg.startswith("-") or not os.path.isdir(first):
            continue
        record = os.path.join(os.path.dirname(os.path.abspath(first)), "binarize.json")
        try:
            with open(record, encoding="utf-8") as fh:
                info = json.load(fh)
            data_bin = [os.path.realpath(p) for p in info.get("data_bin", [])]
            source, target = info["source_args"], info["generate_args"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        if os.path.realpath(first) in data_bin and source != target:
            return (f"warning: {record} records different encodings for the source ({' '.join(source)}) and the "
                    f"target ({' '.join(target)}); fairseq-interactive applies one --bpe/--tokenizer to both, so "
                    f"the input or the output is mis-encoded without an error: use morphtok-translate --data "
                    f"{os.path.dirname(record)} --checkpoint CHECKPOINT")
    return None


if not (sys.argv[:1] == ["-m"] and "fairseq" not in sys.modules):
    register()
    _warning = interactive_pair_warning(sys.argv)
    if _warning:
        print(_warning, file=sys.stderr)
