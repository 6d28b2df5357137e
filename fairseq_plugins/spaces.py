"""``--bpe spaces``: SentencePiece with space-as-token models (BPE', Unigram') and the "no spaces" variant."""
from fairseq.data.encoders import register_bpe
from fairseq.dataclass import FairseqDataclass

from fairseq_plugins._errors import required_path, user_errors
from preprocess.options import fairseq_config
from preprocess.spaces import SpacesEncoder, SpacesOptions
from preprocess.spm import SPACE_SYMBOL

#: the adapter's options: the encoder's one declaration (preprocess.spaces.SpacesOptions), --spaces-model required
SpacesBPEConfig = fairseq_config(SpacesOptions, "SpacesBPEConfig", FairseqDataclass, required=("spaces_model",))


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
