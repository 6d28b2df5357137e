"""``--bpe spaces``: SentencePiece with space-as-token models (BPE', Unigram') and the "no spaces" variant."""
from dataclasses import dataclass, field

from fairseq.data.encoders import register_bpe
from fairseq.dataclass import FairseqDataclass

from fairseq_plugins._errors import required_path, user_errors
from preprocess.spaces import SpacesEncoder
from preprocess.spm import SPACE_SYMBOL


@dataclass
class SpacesBPEConfig(FairseqDataclass):
    spaces_model: str = field(default="???", metadata={"help": "path to the SentencePiece .model"})
    spaces: str = field(default="keep", metadata={
        "help": "keep: standalone ▁ pieces are tokens (lossless decode); drop: the paper's 'no spaces' variant, "
                "whose decode is lossy (word boundaries are guessed)"})


@register_bpe("spaces", dataclass=SpacesBPEConfig)
class SpacesBPE:
    def __init__(self, cfg):
        with user_errors("--bpe spaces"):
            self.encoder = SpacesEncoder(required_path(cfg, "spaces_model"), cfg.spaces)

    def encode(self, x: str) -> str:
        return self.encoder.encode(x)

    def decode(self, x: str) -> str:
        return self.encoder.decode(x)

    def is_beginning_of_word(self, x: str) -> bool:
        # a word starts after a standalone ▁ (prime) or with a ▁-prefixed piece (default models)
        return x.startswith(SPACE_SYMBOL)
