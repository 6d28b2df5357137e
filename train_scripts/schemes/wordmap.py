"""``wordmap``: Wordmap German verb segmentation (Jung 2023) on the ``--wordmap-langs`` side, whose other words
are segmented by a base SentencePiece model of that language; the other language gets its own SentencePiece
model, so the dictionaries are not joined (train with ``--share-decoder-input-output-embed``).  Decoded by
``--bpe wordmap``.

Learning runs on the workers as encoding does (memory bounded by workers x chunk size): the training text is
tagged once for its verbs and once more when it is encoded (HanTa's tags, cached per word).  The dictionary is
the base model's pieces, then the pieces of the encoded training text, then every piece the Wordmap segmenter
writes for lower-case and capitalised verbs (``preprocess.schemes.wordmap.segmenter_pieces``); valid and test are
encoded with that dictionary as the inventory (``--wordmap-dict``), so a verb is never written with a piece
outside it.  A ``--vocab-size`` that a side's text cannot reach is capped for that side, with a warning."""
from __future__ import annotations

import functools
import os
import re
import sys
from dataclasses import dataclass

from preprocess.common import UserError
from preprocess.encode import FileEncoder, file_options
from preprocess.evaluate import morph
from preprocess.evaluate.wordmap import read_derivational_verbs
from preprocess.files.inputs import UTF8_HINT, read_lines
from preprocess.models import spm
from preprocess.options import to_args
from preprocess.schemes import wordmap
from preprocess.schemes.spaces import SpacesEncoder
from train_scripts.schemes import Scheme, option


@dataclass
class WordmapOptions(spm.SpmOptions):
    wordmap_langs: tuple = option(("de",), "languages Wordmap is applied to (German; comma-separated)")
    wordmap_max_lines: int = option(0, "extract verbs from the first N training lines (0 = all)")


_TOO_HIGH = re.compile(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)")


def _capped(lang: str, size: int, train):
    """``train(size)``, or, where SentencePiece says the ``lang`` side's text cannot give ``size`` pieces,
    ``train(largest size it can give)`` with a warning naming the side and the option."""
    try:
        return train(size)
    except UserError as exc:
        m = _TOO_HIGH.search(str(exc))
        if not m or int(m.group(2)) >= size:
            raise
        most = int(m.group(2))
        print(f"warning: wordmap: the {lang} training text gives at most {most} SentencePiece pieces; "
              f"--vocab-size {size} capped at {most} for the {lang} side", file=sys.stderr)
        return train(most)


class WordmapScheme(Scheme):
    name = "wordmap"
    label = "Wordmap"
    Options = WordmapOptions

    def applies(self, lang):
        return lang in self.options.wordmap_langs

    def tokenizer_options(self, lang, inventory: bool = True) -> wordmap.WordmapOptions:
        """The encoder options of the ``lang`` side (a Wordmap side): the files this scheme learned, with its
        dictionary as the inventory unless ``inventory`` is False (the training text, before the dictionary)."""
        return wordmap.WordmapOptions(wordmap_vocab=self.path(f"wordmap.{lang}.txt"), wordmap_spm=self._spm(lang),
                                      wordmap_dict=self.dictionary(lang) if inventory else None)

    def _spm(self, lang):
        return self.path(f"wordmap-spm.{lang}.model" if self.applies(lang) else f"spm.{lang}.model")

    def learn(self, train, workers=1, quiet=True):
        o = self.options
        os.makedirs(self.models_dir, exist_ok=True)   # also when another scheme delegates a side to this one
        for lang in self.langs:
            if not self.applies(lang):
                _capped(lang, o.vocab_size, lambda size, lang=lang: spm.train(
                    [train[lang]], self.path(f"spm.{lang}"), model_type=o.model_type, vocab_size=size,
                    character_coverage=o.character_coverage, input_sentence_size=o.input_sentence_size,
                    seed=o.seed))
                continue
            verbs = wordmap.extract_verbs_file(train[lang], workers=workers, max_lines=o.wordmap_max_lines,
                                               quiet=quiet, tmp_dir=self.models_dir)
            vocab = wordmap.build_vocabulary(verbs)
            vocab.save(self.path(f"wordmap.{lang}.txt"))
            wordmap.train_spm(read_lines(train[lang], hint=UTF8_HINT), self.path(f"wordmap-spm.{lang}"), o.vocab_size,
                              o.model_type, max_sentences=o.input_sentence_size)
            options = file_options(workers=workers, quiet=quiet, scheme="wordmap")
            factory = functools.partial(wordmap.make_encoder, self.tokenizer_options(lang, inventory=False))
            FileEncoder(options, factory=factory).encode_file(train[lang], self.encoded_train(lang))
            inventory = dict.fromkeys(spm.dictionary_pieces(self._spm(lang)))
            for line in read_lines(self.encoded_train(lang), hint=UTF8_HINT):
                inventory.update(dict.fromkeys(line.split()))
            inventory.update(dict.fromkeys(wordmap.segmenter_pieces(vocab)))
            spm.write_dict([p for p in inventory if p not in spm.FAIRSEQ_SPECIALS], self.dictionary(lang))

    def encoded_train(self, lang):
        return self.path(f"train.encoded.{lang}") if self.applies(lang) else None

    def encoder(self, lang, workers=1):
        if self.applies(lang):
            return functools.partial(wordmap.make_encoder, self.tokenizer_options(lang))
        return functools.partial(SpacesEncoder, self._spm(lang), "keep")

    def dictionary(self, lang):
        return self.path(f"dict.wordmap.{lang}.txt" if self.applies(lang) else f"spm.{lang}.dict.txt")

    def vocabulary_file(self, lang):
        return self._spm(lang)

    def decode_args(self, lang):
        if self.applies(lang):
            return ["--bpe", "wordmap", *to_args(self.tokenizer_options(lang))]
        return ["--bpe", "sentencepiece", "--sentencepiece-model", self._spm(lang)]

    def segmenter(self, lang):
        if self.applies(lang):
            return None  # verbs need their sentence (tagger); see boundary()
        return SpacesEncoder(self._spm(lang), "keep").encode_pieces

    def boundary(self, gold):
        """Creutz boundary P/R/F1 of the Wordmap vocabulary on German derivational verbs (gold["de"])."""
        lang = next((lang for lang in self.langs if self.applies(lang)), None)
        if lang is None or not gold.get("de_verbs"):
            return None
        vocab = wordmap.WordmapVocabulary.load(self.path(f"wordmap.{lang}.txt"))
        pairs = read_derivational_verbs(gold["de_verbs"])
        r = morph.evaluate(lambda w: wordmap.segment(w, vocab), pairs, "all")
        keep = ("precision", "recall", "f1", "mean_pieces", "n_words", "skipped", "n_gold", "spelled", "coverage",
                "protocol")
        return {**{k: r[k] for k in keep}, "gold": "German derivational verbs"}

    def intrinsic(self, raw, gold):
        lang = next((lang for lang in self.langs if self.applies(lang)), None)
        if lang is None:
            return {}
        voc = wordmap.WordmapVocabulary.load(self.path(f"wordmap.{lang}.txt"))
        return {"wordmap_vocabulary": {"functional": len(voc.functional), "lexemic": len(voc.lexemic)}}
