"""``wordmap``: Wordmap German verb segmentation (Jung 2023) on the ``--wordmap-langs`` side, whose other words
are segmented by a base SentencePiece model of that language; the other language gets its own SentencePiece
model, so the dictionaries are not joined (train with ``--share-decoder-input-output-embed``).  Decoded by
``--bpe wordmap``.

The training text is tagged once (HanTa): the tags that give the verbs for the vocabulary are remembered and
reused when the training text is encoded."""
from __future__ import annotations

import functools
from dataclasses import dataclass

from preprocess import spm, wordmap
from preprocess.common import atomic_output, read_lines
from preprocess.evaluate import morph
from preprocess.evaluate.wordmap import read_derivational_verbs
from preprocess.spaces import SpacesEncoder
from train_scripts.schemes import Scheme, SubwordOptions, option, register_scheme


@dataclass
class WordmapOptions(SubwordOptions):
    wordmap_langs: tuple = option(("de",), "languages Wordmap is applied to (German; comma-separated)")
    wordmap_max_lines: int = option(0, "extract verbs from the first N training lines (0 = all)")


class _RememberingTagger:
    """HanTa's ``tag_sent`` with every answer remembered, so a sentence is tagged once per run."""

    def __init__(self, tagger):
        self.tagger = tagger
        self.memo: dict = {}

    def tag_sent(self, tokens, taglevel=1):
        key = (tuple(tokens), taglevel)
        if key not in self.memo:
            self.memo[key] = self.tagger.tag_sent(list(tokens), taglevel=taglevel)
        return self.memo[key]


@register_scheme
class WordmapScheme(Scheme):
    name = "wordmap"
    label = "Wordmap"
    Options = WordmapOptions

    def applies(self, lang):
        return lang in self.options.wordmap_langs

    def _spm(self, lang):
        return self.path(f"wordmap-spm.{lang}.model" if self.applies(lang) else f"spm.{lang}.model")

    def learn(self, train, workers=1, quiet=True):
        o = self.options
        for lang in self.langs:
            if not self.applies(lang):
                spm.train([train[lang]], self.path(f"spm.{lang}"), model_type=o.model_type,
                          vocab_size=o.vocab_size, character_coverage=o.character_coverage,
                          input_sentence_size=o.input_sentence_size, seed=o.seed)
                continue
            lines = list(read_lines(train[lang]))
            tagger = _RememberingTagger(wordmap.load_tagger())
            verbs = wordmap.extract_verbs(lines[:o.wordmap_max_lines] if o.wordmap_max_lines else lines,
                                          tagger=tagger, progress=not quiet)
            wordmap.build_vocabulary(verbs).save(self.path(f"wordmap.{lang}.txt"))
            wordmap.train_spm(lines, self.path(f"wordmap-spm.{lang}"), o.vocab_size, o.model_type)
            tok = wordmap.WordmapTokenizer(self.path(f"wordmap.{lang}.txt"), self._spm(lang), tagger=tagger)
            inventory = dict.fromkeys(spm.dictionary_pieces(self._spm(lang)))
            with atomic_output(self.encoded_train(lang)) as out:
                for line in lines:
                    pieces = tok.encode_pieces(line)
                    inventory.update(dict.fromkeys(pieces))
                    out.write(" ".join(pieces) + "\n")
            spm.write_dict([p for p in inventory if p not in spm.FAIRSEQ_SPECIALS], self.dictionary(lang))

    def encoded_train(self, lang):
        return self.path(f"train.encoded.{lang}") if self.applies(lang) else None

    def encoder(self, lang, workers=1):
        if self.applies(lang):
            return functools.partial(wordmap.WordmapTokenizer, self.path(f"wordmap.{lang}.txt"), self._spm(lang))
        return functools.partial(SpacesEncoder, self._spm(lang), "keep")

    def dictionary(self, lang):
        return self.path(f"dict.wordmap.{lang}.txt" if self.applies(lang) else f"spm.{lang}.dict.txt")

    def vocabulary_file(self, lang):
        return self._spm(lang)

    def decode_args(self, lang):
        if self.applies(lang):
            return ["--bpe", "wordmap", "--wordmap-vocab", self.path(f"wordmap.{lang}.txt"),
                    "--wordmap-spm", self._spm(lang)]
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
