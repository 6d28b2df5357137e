"""The ``wordmap`` scheme's one declaration: its options (:class:`WordmapOptions`), the encoder of the parsed
options (``preprocess.encode --scheme wordmap``, the ``--bpe wordmap`` adapter, the recipe) and the :data:`SCHEME`
that the registry (:mod:`preprocess.registry`, docs/adding-a-scheme.md) reads."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from preprocess.files.inputs import require_file
from preprocess.models.spm_model import load_model as load_spm
from preprocess.options import add_arguments, option, options_from
from preprocess.registry import SchemeDescriptor
from preprocess.schemes.wordmap.tokenizer import WordmapTokenizer, read_inventory
from preprocess.schemes.wordmap.vocabulary import WordmapVocabulary


@dataclass
class WordmapOptions:
    """Wordmap's tokenizer options, declared once: the ``preprocess.encode --scheme wordmap`` options, the ``--bpe
    wordmap`` adapter's config (``fairseq_plugins/wordmap.py``) and the decode arguments the recipe records
    (``train_scripts/schemes/wordmap.py``) are all derived from these fields (see :mod:`preprocess.options`)."""

    wordmap_vocab: Optional[str] = option(None, "Wordmap vocabulary (python -m preprocess.schemes.wordmap build); needed "
                                                "to encode only")
    wordmap_spm: Optional[str] = option(None, "base SentencePiece model for the non-verb words; needed to encode "
                                              "only")
    wordmap_dict: Optional[str] = option(None, "fairseq dictionary: verbs are written only with its pieces "
                                               "(Wordmap's, else the whole verb, else the base model's)")


def add_encoder_args(parser) -> None:
    add_arguments(parser, WordmapOptions)


def make_encoder(args) -> WordmapTokenizer:
    """The encoder of ``args`` (:class:`WordmapOptions`, an argparse namespace or the adapter's config)."""
    o = options_from(WordmapOptions, args)
    vocab = WordmapVocabulary.load(require_file(o.wordmap_vocab, "--wordmap-vocab"))
    sp = load_spm(require_file(o.wordmap_spm, "--wordmap-spm"))
    return WordmapTokenizer(vocab, sp, inventory=read_inventory(o.wordmap_dict) if o.wordmap_dict else None)


SCHEME = SchemeDescriptor(
    name="wordmap",
    options=WordmapOptions,
    make_encoder=make_encoder,
    add_arguments=add_encoder_args,
    files=("wordmap_vocab", "wordmap_spm", "wordmap_dict"),
    fairseq_bpe="wordmap",
    adapter="fairseq_plugins.wordmap",
    hf_export="preprocess.hf.wordmap:MorphtokWordmapTokenizer",
    recipe="train_scripts.schemes.wordmap:WordmapScheme",
)
