"""The recipe side of every scheme: one module per scheme, one :class:`Scheme` subclass per module.

A scheme says how raw parallel (or monolingual) text becomes fairseq input and how fairseq's output is turned
back into text.  Every orchestrator (``train_scripts.binarize``, ``train_scripts.evaluate``, the ``make demo``
pipeline) works only through this interface.  Which schemes exist is the one registry's business
(:mod:`preprocess.registry`): a scheme's descriptor names its recipe class (``recipe="train_scripts.schemes.mine:
MineScheme"``), imported when a command uses it::

    class MyScheme(Scheme):
        name = "mine"                             # optional: the registry sets it from the descriptor
        Options = MyOptions                       # a dataclass; every field becomes a --option of the CLIs
        def learn(self, train, workers, quiet): ...   # write the models under self.models_dir
        def encoder(self, lang, workers=1): ...       # a picklable factory of a preprocess LineEncoder
        def decode_args(self, lang): ...              # --bpe/--tokenizer options for fairseq-generate / hub

A recipe-only scheme (no encode CLI, adapter or export of its own: a test's combination of two schemes, say) is
registered with ``@register_scheme`` by being imported (``--scheme-module`` of the CLIs imports a file or module
by name; a module declaring ``SCHEME = SchemeDescriptor(...)`` is registered the same way).

**Dictionary policy** (the one place it is decided): a scheme's fairseq dictionary is its *inventory*, the tokens
its models can emit, written from the model (``preprocess.models.spm.write_fairseq_dict``), never counted from the
encoded data.  Why: the dictionary size is then exactly the paper's vocabulary size, it is known as soon as the
model is learned, so shards encoded on different machines (or a corpus encoded later for fine-tuning) share ids
without a counting pass over the whole corpus.  Wordmap is the one scheme whose inventory is open (a verb it
cannot segment stays whole): its dictionary is its base model's pieces plus the pieces of its encoded training
text.  ``binarize --srcdict`` overrides the policy with a given dictionary (e.g. an official checkpoint's).
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import os
import sys
from typing import Callable, ClassVar

from preprocess import registry
from preprocess.common import UserError
from preprocess.models.spm import SpmOptions
from preprocess.options import add_arguments, make_options, option  # noqa: F401  (re-exported)


def register_scheme(cls: type["Scheme"]) -> type["Scheme"]:
    """Class decorator for a recipe-only scheme: a descriptor with ``cls`` as its recipe, registered under
    ``cls.name`` in the one registry (:func:`preprocess.registry.register`)."""
    if not getattr(cls, "name", None):
        raise TypeError(f"{cls.__name__} needs a name")
    registry.register(registry.SchemeDescriptor(name=cls.name, options=cls.Options, recipe=cls))
    return cls


def get_scheme(name: str) -> type["Scheme"]:
    """The recipe class of scheme (or alias) ``name``, from the registry."""
    cls = registry.get(name, aliases=True).recipe_class(name)
    if cls is None:
        raise UserError(f"scheme {name!r} has no recipe (morphtok-binarize cannot run it)")
    return cls


def import_scheme_module(spec: str) -> None:
    """Import a module (``package.module``) or a ``.py`` file that defines and registers schemes (its ``SCHEME``
    descriptor, or classes decorated with :func:`register_scheme`)."""
    if spec.endswith(".py"):
        if not os.path.isfile(spec):
            raise UserError(f"scheme module not found: {spec}")
        name = "_scheme_module_" + os.path.splitext(os.path.basename(spec))[0]
        module_spec = importlib.util.spec_from_file_location(name, spec)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(spec)
    registry.from_module(module)


# --- options (declared once: preprocess.options) ---------------------------------------------------------------

def add_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup, options_cls: type) -> None:
    """One ``--name`` per field of a scheme's options (see :func:`preprocess.options.add_arguments`)."""
    add_arguments(parser, options_cls, aliases=False)


# --- the scheme interface ------------------------------------------------------------------------------------

EncoderFactory = Callable[[], object]  # returns a preprocess LineEncoder (encode_lines(list[str]) -> list[str])


class Scheme:
    """One configured scheme for one corpus: ``Scheme(options, langs, models_dir)``.

    ``langs`` is ``(src, tgt)`` for translation or ``(lang,)`` for a monolingual (``--lm``) corpus; ``side(lang)``
    says which of the two a language is.  All paths live under ``models_dir``; a scheme computes them from its
    options, so a learned ``models_dir`` copied to another machine is all another shard needs.
    """

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    Options: ClassVar[type] = SpmOptions   # the SentencePiece options; a scheme's class extends it
    #: the fields of ``Options`` that :meth:`finetune_encoder` takes (``morphtok-classification-data prepare
    #: --encode NAME`` offers them); empty: the scheme has no fine-tuning-time encoding
    finetune_options: ClassVar[tuple] = ()

    def __init__(self, options, langs: tuple[str, ...], models_dir: str):
        self.options = options if isinstance(options, self.Options) else make_options(self.Options, options)
        self.langs = tuple(langs)
        self.lm = len(self.langs) == 1
        self.models_dir = models_dir
        self.validate()

    # -- what every scheme provides ------------------------------------------------------------------------
    def validate(self) -> None:
        """Raise :class:`UserError` for option combinations that cannot work (called before any work)."""

    def learn(self, train: dict[str, str], workers: int = 1, quiet: bool = True) -> None:
        """Learn the models from the raw training text ``{lang: path}`` into ``models_dir``."""
        raise NotImplementedError

    def encoder(self, lang: str, workers: int = 1) -> EncoderFactory:
        """A picklable zero-argument factory of the LineEncoder for ``lang`` (built again in each worker)."""
        raise NotImplementedError

    def dictionary(self, lang: str) -> str:
        """The fairseq ``dict.txt`` of ``lang`` (written by :meth:`learn`)."""
        raise NotImplementedError

    def decode_args(self, lang: str) -> list[str]:
        """fairseq options that turn model output in ``lang`` back into text (``--bpe ... --tokenizer ...``):
        for fairseq-generate/interactive, ``--mask-whole-words``, and hub ``from_pretrained``."""
        raise NotImplementedError

    # -- optional ------------------------------------------------------------------------------------------
    @classmethod
    def finetune_encoder(cls, lm: dict, options) -> tuple[dict, EncoderFactory]:
        """A fine-tuning-time encoding by this scheme over a pretrained model's vocabulary (FLOTA's use: the model
        is pretrained with the standard segmentation): ``(description, factory)`` for the ``binarize --lm``
        record ``lm``, with ``options`` (the scheme's ``Options``; the fields of :attr:`finetune_options` are
        used).  The description is what ``classification.json`` records as ``encoding``."""
        raise UserError(f"scheme {cls.name!r} has no fine-tuning-time encoding")

    @property
    def joined(self) -> bool:
        """Both sides share one dictionary (``--joined-dictionary``, ``--share-all-embeddings``)."""
        return len({self.dictionary(lang) for lang in self.langs}) == 1

    def token_marks(self) -> tuple[str, ...]:
        """Symbols of this scheme's own that decoded text must not contain (besides ``▁``, which no scheme's
        decoded text may hold): the demo counts hypotheses that still hold one."""
        return ()

    def word_symbols(self, lang: str) -> frozenset:
        """Pieces of this scheme's own that stand for a word of their own in ``lang`` (BITE's inflection
        symbols): pseudo-perplexity per word counts each as a word, as the BITE paper counts them."""
        return frozenset()

    def encoded_train(self, lang: str) -> str | None:
        """The complete training text of ``lang`` already encoded while learning (so expensive work such as
        tagging is done once), or None."""
        return None

    def segmenter(self, lang: str) -> Callable[[str], list[str]] | None:
        """word -> pieces, for the morphological boundary metric; None where it does not apply."""
        return None

    def boundary(self, gold: dict[str, str]) -> dict | None:
        """Morph boundary precision/recall/F1 (Creutz et al.) of :meth:`segmenter` against gold segmentations
        (``gold["en"]``: a SIGMORPHON 2022 word-level file); None where no gold applies."""
        seg = self.segmenter("en") if "en" in self.langs and gold.get("en") else None
        if seg is None:
            return None
        from preprocess.evaluate import morph

        r = morph.evaluate(seg, morph.read_gold(gold["en"]))
        keep = ("precision", "recall", "f1", "mean_pieces", "n_words", "skipped", "n_gold", "spelled", "coverage",
                "protocol")
        return {**{k: r[k] for k in keep if k in r},
                "gold": os.path.basename(gold["en"])}

    def intrinsic(self, raw: dict[str, list[str]], gold: dict[str, str]) -> dict:
        """Scheme-specific intrinsic metrics (``raw``: {"train.en": lines, "test.de": lines, ...})."""
        return {}

    def vocabulary_file(self, lang: str) -> str | None:
        """The file holding the token inventory of ``lang`` (what FLOTA over this model's vocabulary reads)."""
        return None

    def record(self) -> dict:
        """Extra keys for ``binarize.json`` (e.g. what a fairseq task must know about the data)."""
        return {}

    # -- helpers -------------------------------------------------------------------------------------------
    def side(self, lang: str) -> str:
        return "src" if lang == self.langs[0] else "tgt"

    def path(self, *parts: str) -> str:
        return os.path.join(self.models_dir, *parts)

    def config(self) -> dict:
        return {"scheme": self.name, **dataclasses.asdict(self.options)}


def make_scheme(config: dict, langs: tuple[str, ...], models_dir: str) -> Scheme:
    """A scheme from a configuration dict ``{"scheme": name, option: value, ...}``."""
    config = dict(config)
    cls = get_scheme(config.pop("scheme", None) or "")
    return cls(make_options(cls.Options, config), langs, models_dir)
