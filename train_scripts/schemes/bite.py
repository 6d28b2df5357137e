"""``bite``: Base-InflecTion Encoding (Tan et al. 2020) on the ``--bite-langs`` sides (English: its lemmatiser
is English-only), then one SentencePiece model trained on BITE's output (and the other side's raw text) with the
inflection symbols as user symbols.  Decoded by ``--tokenizer bite --bpe sentencepiece`` on a BITE side.

The training text is tagged once: the BITE output written to train the subword model is also what the training
split is encoded from."""
from __future__ import annotations

import functools
from dataclasses import dataclass

from preprocess.encode import FileEncoder, file_options
from preprocess.evaluate import bite as bite_eval
from preprocess.models import spm
from preprocess.options import options_from, to_args
from preprocess.schemes import bite
from preprocess.schemes.bite import BiteLineEncoder
from train_scripts.schemes import option
from train_scripts.schemes.sentencepiece import SentencePieceOptions, SentencePieceScheme


@dataclass
class BiteSchemeOptions(bite.BiteOptions, SentencePieceOptions):
    """The SentencePiece options, BITE's own (:class:`preprocess.schemes.bite.BiteOptions`) and the sides it applies to."""

    bite_langs: tuple = option(("en",), "languages BITE is applied to (comma-separated)")


class BiteScheme(SentencePieceScheme):
    name = "bite"
    takes_spm_model = False
    label = "BITE"
    Options = BiteSchemeOptions

    @property
    def user_symbols(self):
        return bite.USER_SYMBOLS_SINGLE if self.options.bite_single_char else bite.USER_SYMBOLS

    def token_marks(self) -> tuple[str, ...]:
        """What decoded text must not contain: every symbol BITE writes, the inflection symbols in both spellings
        (``[VBD]`` and its single character, whichever ``--bite-single-char`` chose) and the escape and spacing
        marks.  The demo counts hypotheses that still hold one (``hyps_with_token_marks``)."""
        return tuple(dict.fromkeys(bite.USER_SYMBOLS + bite.USER_SYMBOLS_SINGLE))

    def applies(self, lang: str) -> bool:
        return lang in self.options.bite_langs

    def word_symbols(self, lang: str) -> frozenset:
        """The inflection symbols in the spelling ``--bite-single-char`` chose (none where BITE does not apply)."""
        if not self.applies(lang):
            return frozenset()
        return frozenset(bite.SINGLE_CHAR_SYMBOLS if self.options.bite_single_char else bite.INFLECTION_SYMBOLS)

    def _bite_options(self) -> bite.BiteOptions:
        """The BITE part of the scheme's options (:class:`preprocess.schemes.bite.BiteOptions`)."""
        return options_from(bite.BiteOptions, self.options)

    def _bite_encoder(self, *args, **kwargs) -> functools.partial:
        """``BiteLineEncoder`` with this scheme's BITE options (``args``, ``kwargs``: the rest of its arguments)."""
        return functools.partial(BiteLineEncoder.from_options, self._bite_options(), *args, **kwargs)

    def learn(self, train, workers=1, quiet=True):
        inputs = []
        for lang in self.langs:
            if self.applies(lang):  # the subword model learns from BITE's output on this side
                bite_text = self.path(f"train.bite.{lang}")
                with FileEncoder(file_options(workers, quiet=quiet), self._bite_encoder()) as enc:
                    enc.encode_file(train[lang], bite_text)
                # the subword model learns from the words without their symbols (the symbols are user symbols,
                # glued to their word when encoding: one token each, never a lone ▁ before one)
                text = self.path(f"train.text.{lang}")
                with FileEncoder(file_options(workers, quiet=quiet),
                                 self._bite_encoder(None, bite_input=True, training_text=True)) as enc:
                    enc.encode_file(bite_text, text)
                inputs.append(text)
            else:
                inputs.append(train[lang])
        self.train_model(inputs)
        for lang in self.langs:
            if self.applies(lang):
                subword = self._bite_encoder(self.model, bite_input=True)
                with FileEncoder(file_options(workers, quiet=quiet), subword) as enc:
                    enc.encode_file(self.path(f"train.bite.{lang}"), self.path(f"train.encoded.{lang}"))

    def encoded_train(self, lang):
        return self.path(f"train.encoded.{lang}") if self.applies(lang) else None

    def encoder(self, lang, workers=1):
        if self.applies(lang):
            return self._bite_encoder(self.model)
        return super().encoder(lang, workers)

    def decode_args(self, lang):
        if not self.applies(lang):
            return super().decode_args(lang)
        args = to_args(self._bite_options(), always=("bite_tagger", "bite_pretokenizer"))
        return ["--tokenizer", "bite", *args] + super().decode_args(lang)

    def intrinsic(self, raw, gold):
        lang = next((lang for lang in self.langs if self.applies(lang)), None)
        if lang is None:
            return {}
        o, bite_options = self.options, self._bite_options()
        cov = bite_eval.coverage_report(raw[f"train.{lang}"], [500, 1000, 2000, 4000], bite_options)
        words = sorted({w for line in raw[f"test.{lang}"] for w in line.split()})
        # the paper's Figure 8 at this vocabulary size: the same algorithm without BITE, trained on the raw text
        baseline = spm.train([], self.path("figure8-baseline"), model_type=o.model_type, variant=o.variant,
                             vocab_size=o.vocab_size, character_coverage=o.character_coverage, seed=o.seed,
                             sentences=[line for l in self.langs for line in raw[f"train.{l}"]],
                             extra_options={"hard_vocab_limit": False})
        o8 = bite_eval.sequence_lengths(raw[f"test.{lang}"], baseline, self.model, bite_options)
        return {"coverage": {k: cov[k] for k in ("types_unencoded", "types_bite", "coverage_unencoded",
                                                 "coverage_bite")},
                "symbol_complexity_lambda2": bite_eval.model_complexity(self.model, words),
                "figure8": o8,
                # encode -> decode of the test sentences, the published algorithm and --bite-exact
                "round_trip": {mode: {k: r[k] for k in ("sentences", "unchanged", "rate")}
                               for mode, r in bite_eval.round_trip_report(
                                   raw[f"test.{lang}"], bite_options, self.model).items()}}
