"""``spaces``: space-as-token SentencePiece models (Gow-Smith et al. 2022: BPE', Unigram') and the paper's
"no spaces" variant, decoded by ``--bpe spaces``.

``--spaces drop`` removes the standalone ``▁`` tokens on the sides named by ``--no-spaces-side``: ``src`` (the
default) keeps the target lossless, so generated text decodes exactly; ``both`` is the paper's variant, whose
target decoding has to guess word boundaries (lossy).  For a monolingual ``--lm`` corpus the data keeps ``▁``
(masked-LM whole-word masking needs the word boundaries) and ``binarize.json`` records ``"spaces": "drop"`` so
that the pretraining task drops the space tokens after taking the word boundaries.
"""
from __future__ import annotations

from dataclasses import dataclass

from preprocess.models import spm
from preprocess.options import to_args
from preprocess.schemes.spaces import SPACE_MODES
from preprocess.schemes.spaces import SpacesOptions as SpacesEncoderOptions
from train_scripts.schemes import option
from train_scripts.schemes.sentencepiece import SentencePieceOptions, SentencePieceScheme


@dataclass
class SpacesOptions(SentencePieceOptions):
    variant: str = option("prime", "prime: spaces always their own token (BPE', Unigram'); default: plain "
                                   "SentencePiece", spm.VARIANTS)
    spaces: str = option("keep", "keep the standalone ▁ tokens, or drop them (the 'no spaces' variant)", SPACE_MODES)
    no_spaces_side: str = option("src", "with --spaces drop: the side(s) without ▁ tokens; src keeps decoding "
                                        "lossless, both is the paper's lossy variant", ("src", "tgt", "both"))


class SpacesScheme(SentencePieceScheme):
    name = "spaces"
    label = "space-as-token"
    Options = SpacesOptions

    def spaces(self, lang):
        o = self.options
        if o.spaces == "drop" and not self.lm and o.no_spaces_side in (self.side(lang), "both"):
            return "drop"
        return "keep"

    def decode_args(self, lang):
        options = SpacesEncoderOptions(spaces_model=self.model, spaces=self.spaces(lang))
        return ["--bpe", "spaces", *to_args(options, always=("spaces_model", "spaces"))]

    def record(self):
        return {"spaces": self.options.spaces} if self.lm else {}
