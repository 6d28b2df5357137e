"""The fairseq-free algorithm layer, one kind of component per folder (as in Hugging Face ``tokenizers``).

* :mod:`preprocess.schemes`: the tokenisation schemes, one module or package each, found by
  :mod:`preprocess.registry` (``spaces``, ``bite``, ``flota``, ``wordmap``);
* :mod:`preprocess.models`: SentencePiece models, fairseq dictionaries and vocabularies the schemes build on;
* :mod:`preprocess.tagging`: the part-of-speech taggers (NLTK's perceptron, HanTa) and their compiled loops;
* :mod:`preprocess.files`: the input and output policy of every command (reading, atomic writes, model checks);
* :mod:`preprocess.export` and :mod:`preprocess.hf`: the Hugging Face export and its tokenizer classes;
* :mod:`preprocess.evaluate`: the intrinsic metrics;
* here: the registry, the options, ``preprocess.encode`` (every scheme's command) and the shared helpers.

Module paths of the older flat layout (``preprocess.bite``, ``preprocess.spm``, ...) still import: console scripts
installed before the move and ``python -m preprocess.flota`` name them.  :data:`MOVED` maps each to its new place;
the old name gives the same module object (``preprocess.bite is preprocess.schemes.bite``).  ``train_scripts``
adds the demo modules' older paths to the same table.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

#: old module path -> new module path
MOVED = {
    "preprocess.spaces": "preprocess.schemes.spaces",
    "preprocess.bite": "preprocess.schemes.bite",
    "preprocess.bite_text": "preprocess.schemes.bite.text",
    "preprocess.bite_tokenizer": "preprocess.schemes.bite.tokenizer",
    "preprocess.flota": "preprocess.schemes.flota",
    "preprocess.flota_search": "preprocess.schemes.flota.search",
    "preprocess.wordmap": "preprocess.schemes.wordmap",
    "preprocess.taggers": "preprocess.tagging",
    "preprocess.hanta_fast": "preprocess.tagging.hanta_fast",
    "preprocess.perceptron_fast": "preprocess.tagging.perceptron_fast",
    "preprocess.inputs": "preprocess.files.inputs",
    "preprocess.outputs": "preprocess.files.outputs",
    "preprocess.integrity": "preprocess.files.integrity",
    "preprocess.spm": "preprocess.models.spm",
    "preprocess.spm_model": "preprocess.models.spm_model",
    "preprocess.fairseq_dict": "preprocess.models.fairseq_dict",
    "preprocess.vocabularies": "preprocess.models.vocabularies",
    "preprocess.hf_export": "preprocess.export.tokenizer_json",
}


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old path of :data:`MOVED` as its new module; ``python -m OLD`` runs the new module's code (a
    package's ``__main__``)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=MOVED[fullname])

    def create_module(self, spec):
        module = importlib.import_module(spec.origin)
        spec.loader_state = module.__spec__   # the import system sets the old spec on it: exec_module restores this
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state

    def get_code(self, fullname):
        new = MOVED[fullname]
        if importlib.util.find_spec(new).submodule_search_locations is not None:
            new += ".__main__"
        return importlib.util.find_spec(new).loader.get_code(new)


sys.meta_path.append(_Moved())
