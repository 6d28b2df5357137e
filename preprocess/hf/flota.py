"""FLOTA's Hugging Face tokenizer class (``morphtok-export --scheme flota``): its longest-substring search, which a
``tokenizer.json`` cannot express."""
from __future__ import annotations

from typing import Optional

from preprocess.export.tokenizer_json import read_fairseq_dict
from preprocess.hf import MorphtokTokenizer


def flota_dictionary(vocab_path: str) -> list[str]:
    """The dictionary the flota scheme writes for ``--flota-vocab`` (``train_scripts/schemes/flota.py``:
    :func:`preprocess.models.vocabularies.fairseq_dict_tokens`).  A fairseq ``dict.txt`` (e.g. an official checkpoint's, for
    ``--flota-gpt2-encoder``) is read as fairseq reads it."""
    from preprocess.models.vocabularies import fairseq_dict_tokens, load_vocab
    vocab = load_vocab(vocab_path)
    if vocab.kind == "fairseq":
        return read_fairseq_dict(vocab_path)
    return fairseq_dict_tokens(vocab)[0]


#: FLOTA vocabulary file name by what :func:`preprocess.models.vocabularies.load_vocab` reads from its extension
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
    """FLOTA over a vocabulary, as ``preprocess.schemes.flota.make_encoder`` with the same ``--flota-*`` options; decode as
    ``--bpe flota``."""

    vocab_files_names = {"vocab_file": "dict.txt", **FLOTA_VOCAB_FILES, "gpt2_encoder_file": "gpt2_encoder.json"}

    #: the files among :class:`~preprocess.schemes.flota.FlotaOptions` (init arguments of their own, copied on save); every
    #: other field is an init argument of the same name, kept in ``tokenizer_config.json``
    FILE_OPTIONS = ("flota_vocab", "flota_gpt2_encoder")

    def __init__(self, vocab_file: str, flota_model_file: Optional[str] = None, flota_json_file: Optional[str] = None,
                 flota_list_file: Optional[str] = None, gpt2_encoder_file: Optional[str] = None, options=None,
                 **kwargs):
        """``options``: a :class:`~preprocess.schemes.flota.FlotaOptions`; the ``flota_*`` keyword arguments that
        ``from_pretrained`` passes from ``tokenizer_config.json`` replace its fields (a missing one takes the
        default).  The vocabulary and encoder files are the ``*_file`` arguments."""
        import dataclasses

        from preprocess.options import options_from
        from preprocess.schemes import flota
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
        from preprocess.files.inputs import require_file
        from preprocess.models.fairseq_dict import write_dict
        from preprocess.options import options_from
        from preprocess.schemes.flota import FlotaOptions, NoiseOptions

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
