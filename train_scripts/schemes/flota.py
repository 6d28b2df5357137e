"""``flota``: Few Longest Token Approximation (Hofmann et al. 2022) over a vocabulary.

With ``--flota-vocab`` (a token list, SentencePiece model, ``dict.txt``, BERT ``vocab.txt``, GPT-2
``encoder.json`` ...) nothing is learned: every language is segmented by FLOTA and the dictionary is that
vocabulary.  Without it, a SentencePiece model is learned on both languages (``--vocab-size``, ``--model-type``)
and FLOTA segments the ``--flota-langs`` sides over its vocabulary, the others keep the model's own segmentation:
FLOTA against its baseline at the same vocabulary.  Decoded by ``--bpe flota`` on a FLOTA side."""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from preprocess.common import UserError
from preprocess.models import spm
from preprocess.models.vocabularies import load_vocab, write_fairseq_dict
from preprocess.options import option, options_from, to_args
from preprocess.schemes import flota
from train_scripts.schemes.sentencepiece import SentencePieceOptions, SentencePieceScheme


@dataclass
class FlotaSchemeOptions(flota.FlotaOptions, SentencePieceOptions):
    """The SentencePiece options, FLOTA's own (:class:`preprocess.schemes.flota.FlotaOptions`, here ``--flota-vocab`` is
    optional: none learns a SentencePiece model) and the languages FLOTA segments."""

    flota_langs: tuple = option(("en",), "with a learned model: the languages FLOTA segments (comma-separated)")


def _tokenizer_options(options, **overrides) -> flota.FlotaOptions:
    """The tokenizer part of the scheme's options (``overrides``: the vocabulary and style the scheme resolved)."""
    return options_from(flota.FlotaOptions, options, **overrides)


class FlotaScheme(SentencePieceScheme):
    name = "flota"
    label = "FLOTA"
    takes_spm_model = False
    Options = FlotaSchemeOptions
    finetune_options = ("flota_k", "flota_mode")

    def validate(self):
        if self.options.flota_vocab:
            self.options.flota_vocab = os.path.abspath(self.options.flota_vocab)
            if not os.path.isfile(self.options.flota_vocab):
                raise UserError(f"FLOTA vocabulary not found: {self.options.flota_vocab}")
        if self.options.flota_gpt2_encoder:
            self.options.flota_gpt2_encoder = os.path.abspath(self.options.flota_gpt2_encoder)
            if not self.options.flota_vocab:
                raise UserError("--flota-gpt2-encoder goes with --flota-vocab (the checkpoint's dict.txt of ids)")
        if self.options.flota_k < 1:
            raise UserError("flota_k must be at least 1")

    @property
    def vocab(self) -> str:
        return self.options.flota_vocab or self.model

    @property
    def style(self) -> str:
        if self.options.flota_gpt2_encoder:
            return "gpt2"
        return self.options.flota_style if self.options.flota_vocab else "sentencepiece"

    def vocabulary_file(self, lang):
        return self.vocab

    def applies(self, lang):
        return bool(self.options.flota_vocab) or lang in self.options.flota_langs

    def learn(self, train, workers=1, quiet=True):
        if self.options.flota_vocab:
            write_fairseq_dict(self.options.flota_vocab, self.dictionary(self.langs[0]))
        else:
            super().learn(train, workers, quiet)

    def dictionary(self, lang):
        return self.path("flota.dict.txt") if self.options.flota_vocab else super().dictionary(lang)

    def tokenizer_options(self) -> flota.FlotaOptions:
        """FLOTA's options with the vocabulary and style this configuration resolves to."""
        return _tokenizer_options(self.options, flota_vocab=self.vocab, flota_style=self.style)

    def encoder(self, lang, workers=1):
        if not self.applies(lang):
            return super().encoder(lang, workers)
        return functools.partial(flota.make_encoder, self.tokenizer_options())

    def decode_args(self, lang):
        if not self.applies(lang):
            return super().decode_args(lang)
        return ["--bpe", "flota", *to_args(self.tokenizer_options(),
                                           always=("flota_vocab", "flota_style", "flota_k", "flota_mode"))]

    def segmenter(self, lang):
        if not self.applies(lang):
            return super().segmenter(lang)
        return flota.tokenizer_from_options(self.tokenizer_options()).tokenize_word

    @classmethod
    def finetune_encoder(cls, lm, options):
        """FLOTA over the pretrained model's SentencePiece vocabulary (or the FLOTA vocabulary it was binarised
        with), with ``options``' ``flota_k`` and ``flota_mode``: FLOTA is a fine-tuning-time tokeniser."""
        vocab = lm.get("subword_model") or lm["config"].get("flota_vocab")
        if not vocab:
            raise UserError("the pretrained model has no subword vocabulary for FLOTA")
        style = "sentencepiece" if vocab.endswith(".model") else lm["config"].get("flota_style", "auto")
        chosen = _tokenizer_options(options, flota_vocab=vocab, flota_style=style)
        described = {"scheme": cls.name, "flota_vocab": vocab, "flota_style": style,
                     "flota_k": chosen.flota_k, "flota_mode": chosen.flota_mode}
        # any noise is written into the raw text by the caller, not applied by the encoder
        return described, functools.partial(flota.make_encoder, flota.FlotaOptions(
            flota_vocab=vocab, flota_style=style, flota_k=chosen.flota_k, flota_mode=chosen.flota_mode),
            flota.NoiseOptions())

    def intrinsic(self, raw, gold):
        if not gold.get("en") or not any(self.applies(lang) for lang in self.langs):
            return {}
        from preprocess.evaluate import flota as flota_eval

        two_morph = flota_eval.read_two_morph_gold(gold["en"])
        words = flota_eval.select_words(two_morph, frozenset(load_vocab(self.vocab).tokens), spm.SPACE_SYMBOL)
        out = {"n_two_morph_words": len(words)}
        if words:
            out["morph"] = flota_eval.morph_metrics(self.vocab, self.style, "flota", words)
        return out
