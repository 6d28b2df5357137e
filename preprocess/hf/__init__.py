"""Hugging Face tokenizer classes, for the schemes a ``tokenizer.json`` cannot express (BITE's tagger, FLOTA's
search, Wordmap's HanTa-tagged verbs): the common part, :class:`MorphtokTokenizer`; each scheme's subclass lives in
its own module, ``preprocess/hf/<scheme>.py``, and its descriptor names it (``hf_export``,
:mod:`preprocess.registry`).

Each class is a ``transformers.PreTrainedTokenizer`` whose segmentation is the project's own encoder and whose
decode is the project's own decode (what the scheme's fairseq ``--bpe``/``--tokenizer`` gives), with the fairseq
dictionary ids of ``dict.txt`` (see :mod:`preprocess.export.tokenizer_json`).  ``save_pretrained`` copies the models into the
directory; ``from_pretrained(DIR)`` reads them from there.

Importing this package (or :mod:`preprocess.hf_tokenizers`, the older path) registers every scheme's class with
``AutoTokenizer``, so ``AutoTokenizer.from_pretrained(DIR)`` works after ``import preprocess.hf``; without that
import, ``morphtok-export`` writes a small ``tokenization_morphtok.py`` into the directory (``auto_map``), so
``AutoTokenizer.from_pretrained(DIR, trust_remote_code=True)`` works wherever this package is installed.

The input text is read literally, as the project's encoders read it: ``<s>`` in the text is three characters, not
the special token (``split_special_tokens=True``).  ``add_special_tokens=True`` (the default of ``__call__`` and
``encode``) appends ``</s>`` as fairseq's binarisation does.
"""
from __future__ import annotations

import os
from typing import Optional

from transformers import AutoConfig, AutoTokenizer, PretrainedConfig, PreTrainedTokenizer

from preprocess.export.tokenizer_json import UNK_ID, copy_file, fairseq_ids, read_fairseq_dict
from preprocess.files.outputs import atomic_output
from preprocess.models.fairseq_dict import FAIRSEQ_SPECIALS, SPECIAL_TOKENS

#: written beside the files by save_pretrained: what ``auto_map`` in tokenizer_config.json names
SHIM = "tokenization_morphtok.py"
SHIM_TEXT = '''"""Loads the morphtok tokenizer class from the installed package, for AutoTokenizer with
trust_remote_code=True.  Written by save_pretrained of preprocess.hf; needs this package installed with its hf
extra (pip install morphtok-fairseq[hf])."""
import preprocess.hf  # noqa: F401  (registers every scheme's class with AutoTokenizer)
'''


def shim_text(cls: type) -> str:
    """The shim of ``cls``: :data:`SHIM_TEXT` and the import of ``cls`` from its module.  (The shims written before
    the classes had modules of their own import them from :mod:`preprocess.hf_tokenizers`, which still has them.)"""
    return SHIM_TEXT + f"from {cls.__module__} import {cls.__name__}  # noqa: F401\n"


class MorphtokTokenizer(PreTrainedTokenizer):
    """Common part: the fairseq dictionary (``dict.txt``) and the files a scheme needs, copied on save.

    Subclasses set ``vocab_files_names`` (init argument -> file name in the directory) and implement
    :meth:`_segment` (text -> pieces, the project's encoder) and :meth:`_detokenize` (pieces -> text, the
    project's decode)."""

    vocab_files_names = {"vocab_file": "dict.txt"}
    model_input_names = ["input_ids", "attention_mask"]

    def __init__(self, vocab_file: str, bos_token=SPECIAL_TOKENS["bos_token"], pad_token=SPECIAL_TOKENS["pad_token"],
                 eos_token=SPECIAL_TOKENS["eos_token"], unk_token=SPECIAL_TOKENS["unk_token"],
                 **kwargs):
        self.vocab_file = vocab_file
        self.fairseq_ids = fairseq_ids(read_fairseq_dict(vocab_file))
        self.fairseq_tokens = {i: t for t, i in self.fairseq_ids.items()}
        kwargs.setdefault("split_special_tokens", True)    # the text is read literally, as the project does
        kwargs.setdefault("clean_up_tokenization_spaces", False)
        kwargs["special_tokens_pattern"] = "eos"           # fairseq appends </s>
        super().__init__(bos_token=bos_token, pad_token=pad_token, eos_token=eos_token, unk_token=unk_token,
                         **kwargs)

    # -- vocabulary --------------------------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return len(self.fairseq_ids)

    def get_vocab(self) -> dict[str, int]:
        vocab = dict(self.fairseq_ids)
        vocab.update(getattr(self, "_added_tokens_encoder", {}))
        return vocab

    def _convert_token_to_id(self, token: str) -> int:
        return self.fairseq_ids.get(token, UNK_ID)

    def _convert_id_to_token(self, index: int) -> str:
        return self.fairseq_tokens.get(index, FAIRSEQ_SPECIALS[UNK_ID])

    # -- the scheme ----------------------------------------------------------------------------------------------
    def _tokenize(self, text: str, **kwargs) -> list[str]:
        return self._segment(text)

    def convert_tokens_to_string(self, tokens: list[str]) -> str:
        return self._detokenize(list(tokens))

    def _segment(self, text: str) -> list[str]:
        raise NotImplementedError

    def _detokenize(self, tokens: list[str]) -> str:
        raise NotImplementedError

    @classmethod
    def from_options(cls, args, dict_path: str, dictionary: Optional[list[str]] = None) -> "MorphtokTokenizer":
        """The tokenizer of the scheme's parsed encode options ``args`` (``morphtok-export``), its ``dict.txt``
        written to ``dict_path`` first: ``dictionary`` (``--dict``) or the scheme's own."""
        raise NotImplementedError

    # -- saving --------------------------------------------------------------------------------------------------
    def save_vocabulary(self, save_directory: str, filename_prefix: Optional[str] = None) -> tuple[str, ...]:
        if not os.path.isdir(save_directory):
            raise ValueError(f"not a directory: {save_directory}")
        prefix = f"{filename_prefix}-" if filename_prefix else ""
        written = []
        for attr, name in self.vocab_files_names.items():
            src = getattr(self, attr, None)
            if not src:
                continue
            dst = os.path.join(save_directory, prefix + name)
            if os.path.abspath(src) != os.path.abspath(dst):
                copy_file(src, dst)
            written.append(dst)
        shim = os.path.join(save_directory, SHIM)
        with atomic_output(shim) as out:
            out.write(shim_text(type(self)))
        return tuple(written) + (shim,)


def tokenizer_classes() -> dict[str, type]:
    """scheme name -> tokenizer class, for every scheme whose descriptor's ``hf_export`` is a class
    (:mod:`preprocess.registry`)."""
    from preprocess import registry

    out = {}
    for descriptor in registry.descriptors():
        target = descriptor.export_target()
        if isinstance(target, type) and issubclass(target, MorphtokTokenizer):
            out[descriptor.name] = target
    return out


def _register() -> None:
    """Make ``AutoTokenizer.from_pretrained`` find the classes by the ``tokenizer_class`` of
    ``tokenizer_config.json`` (``AutoTokenizer.register`` wants a configuration class per tokenizer class)."""
    for scheme, cls in tokenizer_classes().items():
        model_type = f"morphtok-{scheme}"
        config = type(f"Morphtok{scheme.capitalize()}Config", (PretrainedConfig,), {"model_type": model_type})
        AutoConfig.register(model_type, config, exist_ok=True)
        AutoTokenizer.register(config, tokenizer_class=cls, exist_ok=True)


_register()
