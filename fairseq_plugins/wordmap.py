"""``--bpe wordmap``: HanTa-tagged German, verbs segmented by Wordmap, other words by a base SentencePiece model.

``decode`` needs no model: pieces follow the SentencePiece convention (``▁`` starts a word, Wordmap continuation
pieces carry no mark), so it joins them and turns ``▁`` into spaces; it therefore also decodes plain
SentencePiece pieces (e.g. an English target side).  ``encode`` loads the vocabulary, the SentencePiece model and
HanTa on first use; with ``--wordmap-dict`` (the recipe's dictionary) a verb is written only with that dictionary's
pieces, as the recipe encoded valid and test.
"""
from fairseq.data.encoders import register_bpe
from fairseq.dataclass import FairseqDataclass

from fairseq_plugins._errors import user_errors
from preprocess.common import UserError
from preprocess.models.spm_model import SPACE_SYMBOL
from preprocess.options import fairseq_config, options_from
from preprocess.schemes.wordmap.hooks import WordmapOptions, make_encoder
from preprocess.schemes.wordmap.tokenizer import WordmapTokenizer, decode_line

#: the adapter's options: Wordmap's one declaration (preprocess.schemes.wordmap.WordmapOptions); all optional (decoding
#: needs none of them)
WordmapBPEConfig = fairseq_config(WordmapOptions, "WordmapBPEConfig", FairseqDataclass)


@register_bpe("wordmap", dataclass=WordmapBPEConfig)
class WordmapBPE:
    def __init__(self, cfg):
        with user_errors("--bpe wordmap"):
            self.options = options_from(WordmapOptions, cfg)
        self._tokenizer = None

    @property
    def tokenizer(self) -> WordmapTokenizer:
        if self._tokenizer is None:
            with user_errors("--bpe wordmap"):
                if not self.options.wordmap_vocab or not self.options.wordmap_spm:
                    raise UserError("--wordmap-vocab and --wordmap-spm are needed to encode text")
                self._tokenizer = make_encoder(self.options)
        return self._tokenizer

    def encode(self, x: str) -> str:
        return self.tokenizer.encode_line(x)

    def decode(self, x: str) -> str:
        return decode_line(x)

    def is_beginning_of_word(self, x: str) -> bool:
        return x.startswith(SPACE_SYMBOL)
