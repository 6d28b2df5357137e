"""``sentencepiece``: the baseline, one standard SentencePiece model (BPE or Unigram) shared by both languages,
decoded by fairseq's own ``--bpe sentencepiece``."""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from preprocess.common import UserError
from preprocess.models import spm
from preprocess.schemes.spaces import SpacesEncoder
from train_scripts.schemes import Scheme, option


@dataclass
class SentencePieceOptions(spm.SpmOptions):
    variant: str = option("default", "default: SentencePiece as it is; prime: spaces always their own token",
                          spm.VARIANTS)
    spm_model: str = option("", "use this trained SentencePiece model instead of learning one (e.g. the "
                                "space-as-token paper's published 16k models); sentencepiece and spaces schemes")


class SentencePieceScheme(Scheme):
    name = "sentencepiece"
    label = "SentencePiece"
    Options = SentencePieceOptions
    user_symbols: tuple[str, ...] = ()
    #: a given ``--spm-model`` can be this scheme's model (False in the subclasses that learn more than it)
    takes_spm_model = True

    @property
    def model(self) -> str:
        return self.path("spm.model")

    def train_model(self, inputs: list[str]) -> str:
        o = self.options
        if o.spm_model:
            return self.use_model(o.spm_model)
        return spm.train(inputs, self.path("spm"), model_type=o.model_type, variant=o.variant,
                         vocab_size=o.vocab_size, character_coverage=o.character_coverage,
                         input_sentence_size=o.input_sentence_size, seed=o.seed,
                         extra_symbols=list(self.user_symbols))

    def use_model(self, path: str) -> str:
        """A given model as this scheme's (``--spm-model``): checked, copied beside the learned ones, its
        dict.txt written; nothing is learned."""
        import shutil

        if not self.takes_spm_model:
            raise UserError(f"--spm-model is for the sentencepiece and spaces schemes, not {self.name}")
        spm.load_model(path)
        os.makedirs(os.path.dirname(self.model), exist_ok=True)
        shutil.copyfile(path, self.model)
        spm.write_fairseq_dict(self.model, self.path("spm.dict.txt"))
        return self.model

    def learn(self, train, workers=1, quiet=True):
        self.train_model([train[lang] for lang in self.langs])

    def spaces(self, lang: str) -> str:
        """``keep`` or ``drop`` the standalone ``▁`` pieces on this language (see the spaces scheme)."""
        return "keep"

    def encoder(self, lang, workers=1):
        return functools.partial(SpacesEncoder, self.model, self.spaces(lang))

    def dictionary(self, lang):
        return self.path("spm.dict.txt")

    def vocabulary_file(self, lang):
        return self.model

    def decode_args(self, lang):
        return ["--bpe", "sentencepiece", "--sentencepiece-model", self.model]

    def segmenter(self, lang):
        return SpacesEncoder(self.model, self.spaces(lang)).encode_pieces
