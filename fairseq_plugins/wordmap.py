"""``--bpe wordmap``: HanTa-tagged German, verbs segmented by Wordmap, other words by a base SentencePiece model.

``decode`` needs no model: pieces follow the SentencePiece convention (``▁`` starts a word, Wordmap continuation
pieces carry no mark), so it joins them and turns ``▁`` into spaces; it therefore also decodes plain
SentencePiece pieces (e.g. an English target side).  ``encode`` loads the vocabulary, the SentencePiece model and
HanTa on first use.
"""
from dataclasses import dataclass, field

from fairseq.data.encoders import register_bpe
from fairseq.dataclass import FairseqDataclass

from fairseq_plugins._errors import user_errors
from preprocess.common import UserError
from preprocess.spm import SPACE_SYMBOL
from preprocess.wordmap import WordmapTokenizer, decode_line


@dataclass
class WordmapBPEConfig(FairseqDataclass):
    wordmap_vocab: str = field(default="", metadata={
        "help": "Wordmap vocabulary file (python -m preprocess.wordmap build); needed to encode only"})
    wordmap_spm: str = field(default="", metadata={
        "help": "base SentencePiece .model for the non-verb words; needed to encode only"})


@register_bpe("wordmap", dataclass=WordmapBPEConfig)
class WordmapBPE:
    def __init__(self, cfg):
        self.vocab_path = cfg.wordmap_vocab
        self.spm_path = cfg.wordmap_spm
        self._tokenizer = None

    @property
    def tokenizer(self) -> WordmapTokenizer:
        if self._tokenizer is None:
            with user_errors("--bpe wordmap"):
                if not self.vocab_path or not self.spm_path:
                    raise UserError("--wordmap-vocab and --wordmap-spm are needed to encode text")
                self._tokenizer = WordmapTokenizer(self.vocab_path, self.spm_path)
        return self._tokenizer

    def encode(self, x: str) -> str:
        return self.tokenizer.encode_line(x)

    def decode(self, x: str) -> str:
        return decode_line(x)

    def is_beginning_of_word(self, x: str) -> bool:
        return x.startswith(SPACE_SYMBOL)
