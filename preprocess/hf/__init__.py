"""Hugging Face tokenizer classes for the schemes a ``tokenizer.json`` cannot express: BITE (a POS tagger and a
lemmatiser before the subword model), FLOTA (its longest-substring search) and Wordmap (HanTa-tagged verbs).

Each class is a ``transformers.PreTrainedTokenizer`` whose segmentation is the project's own encoder and whose
decode is the project's own decode (what the scheme's fairseq ``--bpe``/``--tokenizer`` gives), with the fairseq
dictionary ids of ``dict.txt`` (see :mod:`preprocess.hf_export`).  ``save_pretrained`` copies the models into the
directory; ``from_pretrained(DIR)`` reads them from there.

Importing this module registers the classes with ``AutoTokenizer``, so ``AutoTokenizer.from_pretrained(DIR)``
works after ``import preprocess.hf_tokenizers``; without that import, ``morphtok-export`` writes a small
``tokenization_morphtok.py`` into the directory (``auto_map``), so ``AutoTokenizer.from_pretrained(DIR,
trust_remote_code=True)`` works wherever this package is installed.

The input text is read literally, as the project's encoders read it: ``<s>`` in the text is three characters, not
the special token (``split_special_tokens=True``).  ``add_special_tokens=True`` (the default of ``__call__`` and
``encode``) appends ``</s>`` as fairseq's binarisation does.
"""
from __future__ import annotations

import os
from typing import Optional

from transformers import AutoConfig, AutoTokenizer, PretrainedConfig, PreTrainedTokenizer

from preprocess.hf_export import UNK_ID, copy_file, fairseq_ids, read_fairseq_dict
from preprocess.outputs import atomic_output
from preprocess.spm import FAIRSEQ_SPECIALS, SPACE_SYMBOL, SPECIAL_TOKENS

#: written beside the files by save_pretrained: what ``auto_map`` in tokenizer_config.json names
SHIM = "tokenization_morphtok.py"
SHIM_TEXT = '''"""Loads the morphtok tokenizer classes from the installed package, for AutoTokenizer with
trust_remote_code=True.  Written by save_pretrained of preprocess.hf_tokenizers; needs this package installed
with its hf extra (pip install morphtok-fairseq[hf])."""
from preprocess.hf_tokenizers import (MorphtokBiteTokenizer, MorphtokFlotaTokenizer,  # noqa: F401
                                      MorphtokWordmapTokenizer)
'''


def shim_text(cls: type) -> str:
    """The shim of ``cls``: :data:`SHIM_TEXT`, plus the import of a class defined outside this module (a scheme of
    another package)."""
    if cls.__module__ == __name__:
        return SHIM_TEXT
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


def _sentencepiece_decode(text: str) -> str:
    """fairseq's ``--bpe sentencepiece`` decode (``SentencepieceBPE.decode``)."""
    return text.replace(" ", "").replace(SPACE_SYMBOL, " ").strip()


class MorphtokBiteTokenizer(MorphtokTokenizer):
    """BITE + its SentencePiece model (BITE+D), as ``preprocess.bite.BiteLineEncoder`` with ``subword_model``;
    decode as ``--tokenizer bite --bpe sentencepiece``.  ``exact``: ``--bite-exact`` (a word is split only where
    decoding gives it back), kept in ``tokenizer_config.json``."""

    vocab_files_names = {"vocab_file": "dict.txt", "subword_model_file": "subword.model"}

    #: init argument (the key ``tokenizer_config.json`` keeps) -> the :class:`~preprocess.bite.BiteOptions` field
    OPTION_KEYS = {"pretokenizer": "bite_pretokenizer", "tagger": "bite_tagger", "single_char": "bite_single_char",
                   "exact": "bite_exact"}

    def __init__(self, vocab_file: str, subword_model_file: str, pretokenizer: Optional[str] = None,
                 tagger: Optional[str] = None, single_char: Optional[bool] = None, exact: Optional[bool] = None,
                 options=None, **kwargs):
        """``options``: a :class:`~preprocess.bite.BiteOptions`; the keyword arguments that ``from_pretrained``
        passes from ``tokenizer_config.json`` (``pretokenizer``, ``tagger``, ``single_char``, ``exact``) replace
        its fields, and a missing one (``exact`` in a directory saved before it) takes the default."""
        from preprocess.bite import BiteLineEncoder, BiteOptions
        from preprocess.options import options_from
        given = dict(pretokenizer=pretokenizer, tagger=tagger, single_char=single_char, exact=exact)
        self.options = options_from(BiteOptions, options, **{self.OPTION_KEYS[k]: v for k, v in given.items()
                                                             if v is not None})
        self.subword_model_file = subword_model_file
        saved = {k: getattr(self.options, field) for k, field in self.OPTION_KEYS.items()}
        self.encoder_args = (saved["pretokenizer"], saved["tagger"], saved["single_char"])
        self.line_encoder = BiteLineEncoder.from_options(self.options, subword_model_file)
        super().__init__(vocab_file, **saved, **kwargs)

    @classmethod
    def from_options(cls, args, dict_path, dictionary=None):
        from preprocess.bite import BiteOptions, check_subword_model
        from preprocess.common import UserError
        from preprocess.inputs import require_file
        from preprocess.options import options_from
        from preprocess.spm import dictionary_pieces, write_dict

        if getattr(args, "training_text", False) or not args.subword_model:
            raise UserError("export --scheme bite needs --subword-model (BITE+D: the BITE scheme's spm.model)")
        options = options_from(BiteOptions, args)
        require_file(args.subword_model, "SentencePiece model (--subword-model)")
        check_subword_model(args.subword_model, options.bite_single_char)
        write_dict(dictionary if dictionary is not None else dictionary_pieces(args.subword_model), dict_path)
        return cls(dict_path, args.subword_model, options=options)

    def _segment(self, text: str) -> list[str]:
        return self.line_encoder.encode_lines([text])[0].split()

    def _detokenize(self, tokens: list[str]) -> str:
        return self.line_encoder.bite.detokenize(_sentencepiece_decode(" ".join(tokens)).split())


#: FLOTA vocabulary file name by what :func:`preprocess.vocabularies.load_vocab` reads from its extension
FLOTA_VOCAB_FILES = {"flota_model_file": "flota_vocab.model", "flota_json_file": "flota_vocab.json",
                     "flota_list_file": "flota_vocab.txt"}


def flota_vocab_slot(path: str) -> str:
    """The init argument of :class:`MorphtokFlotaTokenizer` that holds a FLOTA vocabulary file ``path``."""
    if path.endswith(".model"):
        return "flota_model_file"
    if path.endswith(".json"):
        return "flota_json_file"
    return "flota_list_file"


class MorphtokFlotaTokenizer(MorphtokTokenizer):
    """FLOTA over a vocabulary, as ``preprocess.flota.make_encoder`` with the same ``--flota-*`` options; decode as
    ``--bpe flota``."""

    vocab_files_names = {"vocab_file": "dict.txt", **FLOTA_VOCAB_FILES, "gpt2_encoder_file": "gpt2_encoder.json"}

    #: the files among :class:`~preprocess.flota.FlotaOptions` (init arguments of their own, copied on save); every
    #: other field is an init argument of the same name, kept in ``tokenizer_config.json``
    FILE_OPTIONS = ("flota_vocab", "flota_gpt2_encoder")

    def __init__(self, vocab_file: str, flota_model_file: Optional[str] = None, flota_json_file: Optional[str] = None,
                 flota_list_file: Optional[str] = None, gpt2_encoder_file: Optional[str] = None, options=None,
                 **kwargs):
        """``options``: a :class:`~preprocess.flota.FlotaOptions`; the ``flota_*`` keyword arguments that
        ``from_pretrained`` passes from ``tokenizer_config.json`` replace its fields (a missing one takes the
        default).  The vocabulary and encoder files are the ``*_file`` arguments."""
        import dataclasses

        from preprocess import flota
        from preprocess.options import options_from
        files = [f for f in (flota_model_file, flota_json_file, flota_list_file) if f]
        if len(files) != 1:
            raise ValueError(f"a FLOTA tokenizer needs exactly one vocabulary file, got {files}")
        self.flota_model_file, self.flota_json_file, self.flota_list_file = \
            flota_model_file, flota_json_file, flota_list_file
        self.gpt2_encoder_file = gpt2_encoder_file
        names = [f.name for f in dataclasses.fields(flota.FlotaOptions) if f.name not in self.FILE_OPTIONS]
        given = {name: kwargs.pop(name) for name in names if kwargs.get(name) is not None}
        kwargs = {k: v for k, v in kwargs.items() if k not in names}
        self.options = options_from(flota.FlotaOptions, options, **given, flota_vocab=files[0],
                                    flota_gpt2_encoder=gpt2_encoder_file)
        self.line_encoder = flota.make_encoder(self.options, flota.NoiseOptions())
        super().__init__(vocab_file, **{name: getattr(self.options, name) for name in names}, **kwargs)

    @classmethod
    def from_options(cls, args, dict_path, dictionary=None):
        from preprocess.common import UserError
        from preprocess.flota import FlotaOptions, NoiseOptions
        from preprocess.hf_export import flota_dictionary
        from preprocess.inputs import require_file
        from preprocess.options import options_from
        from preprocess.spm import write_dict

        if options_from(NoiseOptions, args).noise_p:
            raise UserError("--noise-p is a test-set perturbation, not part of a tokenizer: export without it")
        options = options_from(FlotaOptions, args)
        require_file(options.flota_vocab, "FLOTA vocabulary (--flota-vocab)")
        write_dict(dictionary if dictionary is not None else flota_dictionary(options.flota_vocab), dict_path)
        vocab = {flota_vocab_slot(options.flota_vocab): options.flota_vocab}
        return cls(dict_path, gpt2_encoder_file=options.flota_gpt2_encoder, options=options, **vocab)

    def _segment(self, text: str) -> list[str]:
        return self.line_encoder.encode_line(text).split()

    def _detokenize(self, tokens: list[str]) -> str:
        return self.line_encoder.tokenizer.decode(tokens)


class MorphtokWordmapTokenizer(MorphtokTokenizer):
    """Wordmap (HanTa-tagged verbs) + its base SentencePiece model, as ``preprocess.wordmap.WordmapTokenizer``;
    decode as ``--bpe wordmap``."""

    vocab_files_names = {"vocab_file": "dict.txt", "wordmap_vocab_file": "wordmap.txt",
                         "wordmap_spm_file": "wordmap-spm.model"}

    def __init__(self, vocab_file: str, wordmap_vocab_file: str, wordmap_spm_file: str, **kwargs):
        from preprocess import wordmap
        self.wordmap_vocab_file, self.wordmap_spm_file = wordmap_vocab_file, wordmap_spm_file
        # the dictionary is also the inventory verbs are written with, as the recipe encodes (``--wordmap-dict``)
        self.line_encoder = wordmap.make_encoder(wordmap.WordmapOptions(wordmap_vocab=wordmap_vocab_file,
                                                                        wordmap_spm=wordmap_spm_file,
                                                                        wordmap_dict=vocab_file))
        super().__init__(vocab_file, **kwargs)

    @classmethod
    def from_options(cls, args, dict_path, dictionary=None):
        from preprocess.common import UserError
        from preprocess.inputs import require_file
        from preprocess.spm import write_dict

        if dictionary is None:
            raise UserError("export --scheme wordmap needs --dict: Wordmap's dictionary is its base model's pieces "
                            "plus the pieces of its encoded training text (binarize writes dict.wordmap.LANG.txt)")
        write_dict(dictionary, dict_path)
        return cls(dict_path, require_file(args.wordmap_vocab, "--wordmap-vocab"),
                   require_file(args.wordmap_spm, "--wordmap-spm"))

    def _segment(self, text: str) -> list[str]:
        return self.line_encoder.encode_pieces(text)

    def _detokenize(self, tokens: list[str]) -> str:
        from preprocess.wordmap import decode_line
        return decode_line(" ".join(tokens))


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
