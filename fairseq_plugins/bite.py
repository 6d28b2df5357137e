"""``--tokenizer bite``: Base-InflecTion Encoding as a fairseq tokenizer.

encode: raw text -> BITE's subword text (``The dogs barked.`` -> ``The dog[NNS] bark[VBD].``: each symbol glued to
its base, the sentence's own spacing), which a ``--bpe`` (``sentencepiece`` or ``spaces``, with a model from
``preprocess.schemes.bite.train_subword_model``) segments with one piece per symbol; ``--bite-word-format`` gives BITE's
word form instead (``The dog [NNS] bark [VBD] .``).  decode: after the BPE's decode, re-inflects every base with its
symbol and restores spacing (both forms), so generated text contains no inflection symbols (fairseq-generate's D-
lines, fairseq-interactive's output).
At start-up the SentencePiece model of ``--bpe sentencepiece``/``spaces`` is checked for the inflection symbols:
a model trained without them turns every symbol into ``<unk>`` or characters, silently.
"""
from dataclasses import dataclass, field

from fairseq.data.encoders import register_tokenizer
from fairseq.dataclass import FairseqDataclass

from fairseq_plugins._errors import MISSING, user_errors
from preprocess.options import fairseq_config, options_from
from preprocess.schemes.bite import BiteOptions, BiteTokenizer, check_subword_model


@dataclass
class BiteTokenizerConfig(fairseq_config(BiteOptions, "BiteOptionsConfig", FairseqDataclass)):
    """BITE's one declaration of its options (preprocess.schemes.bite.BiteOptions), plus the adapter's output form."""

    bite_word_format: bool = field(default=False, metadata={
        "help": "encode to BITE's word form (symbols and punctuation as separate words) instead of the subword "
                "text (symbols glued to their base), for a vocabulary built on preprocess.encode --scheme bite "
                "output; decoding reads both"})


def _subword_model(cfg):
    """The SentencePiece model of the --bpe built beside this tokenizer (fairseq keeps the root config as the
    parent of cfg), or None."""
    get_parent = getattr(cfg, "_get_parent", None)
    bpe = getattr(get_parent(), "bpe", None) if get_parent else None
    name = getattr(bpe, "_name", None) if bpe is not None else None
    path = {"sentencepiece": "sentencepiece_model", "spaces": "spaces_model"}.get(name)
    path = bpe.get(path) if path else None
    return path if path and path != MISSING else None


@register_tokenizer("bite", dataclass=BiteTokenizerConfig)
class BiteFairseqTokenizer:
    def __init__(self, cfg):
        with user_errors("--tokenizer bite"):
            # converted once: a config saved before --bite-exact existed lacks it (the default, then)
            options = options_from(BiteOptions, cfg)
            self.bite = BiteTokenizer(pretokenizer=options.bite_pretokenizer, tagger=options.bite_tagger,
                                      single_char=options.bite_single_char, exact=options.bite_exact)
            model = _subword_model(cfg)
            if model:
                check_subword_model(model, options.bite_single_char)
        self.word_format = cfg.bite_word_format

    def encode(self, x: str) -> str:
        tokens = self.bite.tokenize(x)
        return " ".join(tokens) if self.word_format else self.bite.subword_text(tokens)

    def decode(self, x: str) -> str:
        return self.bite.detokenize(x.split())
