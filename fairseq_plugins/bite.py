"""``--tokenizer bite``: Base-InflecTion Encoding as a fairseq tokenizer.

encode: raw text -> BITE tokens joined by spaces (``The dogs barked`` -> ``The dog [NNS] bark [VBD]``); a ``--bpe``
(``sentencepiece`` trained with the symbols as user-defined symbols, or ``spaces``) then segments that.
decode: after the BPE's decode, re-inflects every base with its symbol and restores spacing, so generated text
contains no inflection symbols (fairseq-generate's D- lines, fairseq-interactive's output).
"""
from dataclasses import dataclass, field

from fairseq.data.encoders import register_tokenizer
from fairseq.dataclass import FairseqDataclass

from preprocess.bite import BiteTokenizer


@dataclass
class BiteTokenizerConfig(FairseqDataclass):
    bite_pretokenizer: str = field(default="moses", metadata={
        "help": "word splitting before BITE: moses (sacremoses, no XML escaping), whitespace or bert"})
    bite_tagger: str = field(default="nltk", metadata={
        "help": "POS tagger: nltk (averaged perceptron; needs NLTK_DATA) or hanta (no NLTK data)"})
    bite_single_char: bool = field(default=False, metadata={
        "help": "inflection symbols as single characters U+266E..U+2678 instead of [TAG]"})


@register_tokenizer("bite", dataclass=BiteTokenizerConfig)
class BiteFairseqTokenizer:
    def __init__(self, cfg):
        self.bite = BiteTokenizer(pretokenizer=cfg.bite_pretokenizer, tagger=cfg.bite_tagger,
                                  single_char=cfg.bite_single_char)

    def encode(self, x: str) -> str:
        return " ".join(self.bite.tokenize(x))

    def decode(self, x: str) -> str:
        return self.bite.detokenize(x.split())
