"""The older path of :mod:`preprocess.hf` (kept: the ``tokenization_morphtok.py`` shims that ``morphtok-export``
wrote before each scheme's class had a module of its own import the classes from here).

Importing it registers every scheme's class with ``AutoTokenizer``, as importing :mod:`preprocess.hf` does; a class
(``MorphtokBiteTokenizer``) or another name of a scheme's ``preprocess/hf/<scheme>.py`` is found through the registry,
where the scheme's descriptor names its class (``hf_export``)."""
from __future__ import annotations

import sys

from preprocess.hf import SHIM, SHIM_TEXT, MorphtokTokenizer, shim_text, tokenizer_classes  # noqa: F401


def __getattr__(name: str):
    """A name of a scheme's tokenizer module: the class itself, or another name its module defines."""
    classes = list(tokenizer_classes().values())
    for cls in classes:
        if cls.__name__ == name:
            return cls
    for cls in classes:
        if hasattr(sys.modules[cls.__module__], name):
            return getattr(sys.modules[cls.__module__], name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
