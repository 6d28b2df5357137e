"""BITE's Hugging Face tokenizer class (``morphtok-export --scheme bite``): the tagger and the lemmatiser before the
subword model, which a ``tokenizer.json`` cannot express."""
from __future__ import annotations

from typing import Optional

from preprocess.hf import MorphtokTokenizer
from preprocess.models.spm_model import SPACE_SYMBOL


def sentencepiece_decode(text: str) -> str:
    """fairseq's ``--bpe sentencepiece`` decode (``SentencepieceBPE.decode``)."""
    return text.replace(" ", "").replace(SPACE_SYMBOL, " ").strip()


class MorphtokBiteTokenizer(MorphtokTokenizer):
    """BITE + its SentencePiece model (BITE+D), as ``preprocess.schemes.bite.BiteLineEncoder`` with ``subword_model``;
    decode as ``--tokenizer bite --bpe sentencepiece``.  ``exact``: ``--bite-exact`` (a word is split only where
    decoding gives it back), kept in ``tokenizer_config.json``."""

    vocab_files_names = {"vocab_file": "dict.txt", "subword_model_file": "subword.model"}

    #: init argument (the key ``tokenizer_config.json`` keeps) -> the :class:`~preprocess.schemes.bite.BiteOptions` field
    OPTION_KEYS = {"pretokenizer": "bite_pretokenizer", "tagger": "bite_tagger", "single_char": "bite_single_char",
                   "exact": "bite_exact"}

    def __init__(self, vocab_file: str, subword_model_file: str, pretokenizer: Optional[str] = None,
                 tagger: Optional[str] = None, single_char: Optional[bool] = None, exact: Optional[bool] = None,
                 options=None, **kwargs):
        """``options``: a :class:`~preprocess.schemes.bite.BiteOptions`; the keyword arguments that ``from_pretrained``
        passes from ``tokenizer_config.json`` (``pretokenizer``, ``tagger``, ``single_char``, ``exact``) replace
        its fields, and a missing one (``exact`` in a directory saved before it) takes the default."""
        from preprocess.options import options_from
        from preprocess.schemes.bite import BiteLineEncoder, BiteOptions
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
        from preprocess.common import UserError
        from preprocess.files.inputs import require_file
        from preprocess.models.fairseq_dict import dictionary_pieces, write_dict
        from preprocess.options import options_from
        from preprocess.schemes.bite import BiteOptions, check_subword_model

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
        return self.line_encoder.bite.detokenize(sentencepiece_decode(" ".join(tokens)).split())
