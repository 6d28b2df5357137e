"""``--bpe flota``: FLOTA over a pretrained model's vocabulary, for fine-tuning and inference.

    fairseq-preprocess ... --srcdict dict.txt   (dict.txt from preprocess.models.vocabularies.write_fairseq_dict(vocab, path))
    fairseq-train ... --bpe flota --flota-vocab vocab.txt --flota-style wordpiece --flota-k 3

Every emitted piece is a token of the vocabulary, so it is in a dictionary written by ``write_fairseq_dict``
from that vocabulary.  A word without any vocabulary substring gives nothing (as in the paper's code), or
``--flota-unk TOKEN``.  ``decode`` joins pieces back into words and is lossy by design: FLOTA drops the
characters it does not cover.  An official fairseq RoBERTa/BART ``dict.txt`` holds GPT-2 ids: with
``--flota-vocab dict.txt --flota-gpt2-encoder encoder.json`` the pieces are written as those ids.
"""
from fairseq.data.encoders import register_bpe
from fairseq.dataclass import FairseqDataclass

from fairseq_plugins._errors import required_path, user_errors
from preprocess.models.fairseq_dict import FAIRSEQ_SPECIALS
from preprocess.options import fairseq_config, options_from
from preprocess.schemes.flota import STYLES, FlotaOptions, tokenizer_from_options

#: the adapter's options: FLOTA's one declaration (preprocess.schemes.flota.FlotaOptions), --flota-vocab required
FlotaBPEConfig = fairseq_config(FlotaOptions, "FlotaBPEConfig", FairseqDataclass, required=("flota_vocab",))


@register_bpe("flota", dataclass=FlotaBPEConfig)
class FlotaBPE:
    def __init__(self, cfg):
        with user_errors("--bpe flota"):
            required_path(cfg, "flota_vocab")
            self.tokenizer = tokenizer_from_options(options_from(FlotaOptions, cfg))   # converted once
        self.style = self.tokenizer.style
        self.marker, self.marker_on_start, _ = STYLES[self.style]

    def encode(self, x: str) -> str:
        return " ".join(self.tokenizer.tokenize(x))

    def decode(self, x: str) -> str:
        return self.tokenizer.decode(x)

    def is_beginning_of_word(self, x: str) -> bool:
        if x in FAIRSEQ_SPECIALS:
            return True
        x = getattr(self.tokenizer, "id_to_piece", {}).get(x, x)  # an official checkpoint's GPT-2 id
        if self.marker_on_start:
            return x.startswith(self.marker)
        return not (x.startswith(self.marker) and len(x) > len(self.marker))
