"""SentencePiece training and its command line; every SentencePiece name of the project imports from here.

The names come from three modules: the model reader (:mod:`preprocess.models.spm_model`), the fairseq dictionary
(:mod:`preprocess.models.fairseq_dict`) and the training (this one).

Every scheme that uses a SentencePiece model (space-as-token, BITE+subword, FLOTA over a ``.model``, Wordmap's
base model) loads it with :func:`~preprocess.models.spm_model.load_model` (one error behaviour: a missing, corrupt or
truncated file is a one-line :class:`~preprocess.common.UserError`; see
:func:`~preprocess.models.spm_model.check_model_proto`) and trains it with :func:`train`, which also writes the fairseq
``dict.txt`` (atomically) next to the model.

    python -m preprocess.models.spm train --input corpus.txt --model-prefix P [--model-type unigram] [--vocab-size 8000] \\
        [--variant prime] [--user-symbols bite]

The training options and their defaults are declared once, in :class:`SpmOptions`: this command line, the recipes'
``--vocab-size``/``--model-type``/... (every scheme's options derive from it) and the metrics that train models
all take them from there.
    python -m preprocess.models.spm dict --model P.model --output dict.txt
"""
from __future__ import annotations

import argparse
import gzip
import importlib
import itertools
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from typing import Iterable

from preprocess.cli import run_main
from preprocess.common import UserError, flatten_line
from preprocess.files.inputs import read_blocks, read_lines, require_file
from preprocess.files.outputs import atomic_outputs, check_distinct, check_output_path, prepare_output
from preprocess.models.fairseq_dict import (  # noqa: F401  (re-exported: the fairseq dictionary's own module)
    FAIRSEQ_SPECIALS,
    SPECIAL_TOKENS,
    dictionary_pieces,
    write_dict,
    write_fairseq_dict,
)
from preprocess.models.spm_model import (  # noqa: F401  (re-exported: the model reader's own module)
    SPACE_SYMBOL,
    check_model_proto,
    is_prime_model,
    load_model,
    model_proto_fields,
)
from preprocess.options import add_arguments, option

MODEL_TYPES = ("unigram", "bpe")
#: ``default``: SentencePiece as it is; ``prime``: space-as-token (BPE', Unigram'; see preprocess.schemes.spaces)
VARIANTS = ("default", "prime")
#: the default sample SentencePiece trains on (``SpmOptions.input_sentence_size``): the space-as-token paper's 1M
SAMPLE_SENTENCES = 1_000_000


@dataclass
class SpmOptions:
    """The project's one set of SentencePiece training options, with its one set of defaults.

    Every tool that trains a model takes these: ``morphtok-spm train``, every recipe scheme (its options class
    extends this one, so ``morphtok-binarize --vocab-size`` is this field) and the metrics that train models.
    The defaults are chosen for the recipes' corpora and for lossless round trips, not copied from one paper:

    * ``vocab_size`` 8000: a size a Multi30k-sized corpus (29k sentence pairs, the demo's data) can reach on
      either side; 16,000 cannot be reached there.  Gow-Smith et al. (2022) train with 16,000 on 1M Wikipedia
      sentences with SentencePiece's other defaults (their published models' trainer spec): give
      ``--vocab-size 16000 --character-coverage 0.9995`` to replicate them (docs/schemes/spaces.md).
    * ``character_coverage`` 1.0: every character of the training text is in the model, so no character of it
      becomes ``<unk>`` (BITE's and the space-as-token schemes' decoding give back the input).  SentencePiece's
      own default, 0.9995, suits scripts with thousands of characters.
    * ``seed`` 1: a model trained twice on the same text is the same model.
    * ``input_sentence_size`` 1,000,000 (:data:`SAMPLE_SENTENCES`): memory bounded by design, whatever the corpus
      size.  The training text is streamed once through a seeded random (reservoir) sample of this many
      sentences (:func:`sample_sentences`; SentencePiece's own sampling ignores its seed), and SentencePiece
      trains on the sample; a corpus with fewer sentences is used whole, in order (the same model as with 0,
      byte for byte).  Gow-Smith et
      al. (2022) trained their tokenisers on 1M sentences (sections 4 and 5).  The learn step's peak memory grows
      with the sample, not the corpus: about 2.5 GB for 1M sentences of ~21 words (unigram, 8000 pieces; 1.9 GB
      were measured for 0.76M such sentences).  0 trains on every sentence, as fairseq's own WMT
      preparation does (``prepare-wmt14en2de.sh`` runs ``learn_bpe.py`` on all of it): memory then grows with the
      corpus (~30 GB for WMT14 En-De's ~230M words at that rate).
    """

    vocab_size: int = option(8000, "subword vocabulary size (number of pieces)")
    model_type: str = option("unigram", "SentencePiece algorithm", MODEL_TYPES)
    character_coverage: float = option(1.0, "share of the training text's characters the model covers (1.0: all)")
    input_sentence_size: int = option(
        SAMPLE_SENTENCES, "train SentencePiece on a seeded random sample of this many sentences (a smaller corpus "
        "is used whole); bounds the learn step's memory: about 2.5 GB per million sentences of ~21 words. "
        "0 = every sentence, as fairseq's own WMT preparation does (memory then grows with the corpus)")
    seed: int = option(1, "SentencePiece random seed (sampling, shuffling)")


def named_user_symbols(spec: str | None) -> list[str]:
    """A symbol list for ``--user-symbols``: a comma-separated list, ``MODULE:ATTRIBUTE`` naming a tuple of
    symbols in a ``preprocess`` module, or the name of a symbol set a scheme declares (its descriptor's
    ``user_symbols``: BITE's ``bite`` and ``bite-single``; :mod:`preprocess.registry`)."""
    if not spec:
        return []
    if ":" not in spec and "," not in spec:
        from preprocess import registry

        named = registry.user_symbols()
        if spec in named:
            return list(named[spec])
    if ":" in spec and "," not in spec:
        module, attr = spec.split(":", 1)
        try:
            return list(getattr(importlib.import_module(f"preprocess.{module}"), attr))
        except (ImportError, AttributeError):
            raise UserError(f"unknown symbol set {spec!r}") from None
    return [s for s in spec.split(",") if s]


def _trainer_options(model_type: str, variant: str, vocab_size: int, character_coverage: float,
                     input_sentence_size: int, num_threads: int, extra_symbols: list[str] | None,
                     extra_options: dict | None, quiet: bool) -> dict:
    """SentencePieceTrainer's options for :func:`train` (``extra_options`` last, so they override the others)."""
    symbols = list(extra_symbols or [])
    options = dict(model_type=model_type, vocab_size=vocab_size, character_coverage=character_coverage,
                   input_sentence_size=input_sentence_size, num_threads=num_threads,
                   shuffle_input_sentence=True, minloglevel=2 if quiet else 0)
    if variant == "prime":
        symbols = [SPACE_SYMBOL] + [s for s in symbols if s != SPACE_SYMBOL]
        options["add_dummy_prefix"] = False
    if symbols:
        options["user_defined_symbols"] = symbols
    options.update(extra_options or {})
    return options


def _output_files(model_prefix: str, inputs: list[str]) -> list[str]:
    """``P.model``, ``P.vocab`` and ``P.dict.txt``, checked (``P`` a file name prefix, no output an input)."""
    if not model_prefix or model_prefix.endswith(("/", os.sep)) or os.path.isdir(model_prefix):
        raise UserError(f"model prefix {model_prefix!r} is a folder: give a file name prefix, e.g. "
                        f"{os.path.join(model_prefix or '.', 'spm')}")
    outputs = [model_prefix + ext for ext in (".model", ".vocab", ".dict.txt")]
    for path in outputs:
        check_output_path(path)
    check_distinct([(p, "output") for p in outputs], [(p, "training input") for p in inputs])
    return outputs


def _sampled(inputs: list[str], sentences: Iterable[str] | None, size: int, seed: int | None,
             workdir: str) -> tuple[list[str], Iterable[str] | None]:
    """``(inputs, sentences)`` to train on, with at most ``size`` sentences: more are sampled
    (:func:`sample_sentences`) into ``workdir/sample.txt`` and a ``note:`` on stderr says so."""
    stream = itertools.chain.from_iterable(read_lines(p, errors="replace") for p in inputs) if inputs \
        else (sentences or ())
    sample, total = sample_sentences(stream, size, seed)
    if total > size:
        inputs, sentences = [os.path.join(workdir, "sample.txt")], None
        with open(inputs[0], "w", encoding="utf-8", newline="\n") as out:
            for line in sample:
                out.write(flatten_line(line) + "\n")
        print(f"note: SentencePiece is trained on a random sample of {len(sample):,} of the {total:,} "
              f"training sentences (--input-sentence-size {size}, seed {seed}; 0 = all)", file=sys.stderr)
    elif not inputs:
        sentences = sample   # every sentence, as read (the iterable may not be read twice)
    return inputs, sentences


def _plain_text(inputs: list[str], workdir: str) -> list[str]:
    """``inputs``, each ``.gz`` decompressed into ``workdir`` (SentencePiece reads plain text only)."""
    plain = []
    for i, path in enumerate(inputs):
        if path.endswith(".gz"):
            dst = os.path.join(workdir, f"input{i}.txt")
            with gzip.open(path, "rb") as src, open(dst, "wb") as out:
                for block in read_blocks(src, path):   # a corrupt .gz: one line with file and position
                    out.write(block)
            path = dst
        plain.append(path)
    return plain


def train(inputs: list[str], model_prefix: str, model_type: str = SpmOptions.model_type, variant: str = "default",
          vocab_size: int = SpmOptions.vocab_size, character_coverage: float = SpmOptions.character_coverage,
          input_sentence_size: int = SpmOptions.input_sentence_size, seed: int | None = SpmOptions.seed,
          num_threads: int = 2, extra_symbols: list[str] | None = None,
          extra_options: dict | None = None, quiet: bool = True, sentences: Iterable[str] | None = None) -> str:
    """Train a SentencePiece model and write ``P.model``, ``P.vocab`` and the fairseq ``P.dict.txt``.

    ``inputs``: text files; or ``sentences``, an iterable of lines, with ``inputs`` empty.  Defaults: :class:`SpmOptions`
    (``seed=None``: SentencePiece's own, unseeded).  Either is read as a stream: with more non-blank lines than
    ``input_sentence_size`` (> 0), SentencePiece trains on a seeded random sample of that many
    (:func:`sample_sentences`, memory bounded by the sample) and a ``note:`` line on stderr says so; 0 = all.

    ``variant="prime"`` makes ``▁`` a user-defined symbol (always its own piece) and turns off the dummy prefix:
    the space-as-token models of Gow-Smith et al. (2022).  Returns the path of ``P.model``.  Inputs may be
    gzip-compressed.  The files appear only when training succeeded.
    """
    import sentencepiece as spm

    if model_type not in MODEL_TYPES:
        raise UserError(f"model type must be one of {', '.join(MODEL_TYPES)}, not {model_type!r}")
    if variant not in VARIANTS:
        raise UserError(f"variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
    for path in inputs:
        require_file(path, "training input")
    options = _trainer_options(model_type, variant, vocab_size, character_coverage, input_sentence_size,
                               num_threads, extra_symbols, extra_options, quiet)
    if seed is not None:
        spm.set_random_generator_seed(seed)

    outputs = _output_files(model_prefix, inputs)
    prepare_output(outputs[0])
    workdir = tempfile.mkdtemp(prefix="spm-train-")
    try:
        if input_sentence_size > 0:   # our own seeded sample: SentencePiece's reservoir ignores the seed
            inputs, sentences = _sampled(inputs, sentences, input_sentence_size, seed, workdir)
        options["input_sentence_size"] = 0   # SentencePiece trains on all of what it is given
        plain = _plain_text(inputs, workdir)
        tmp_prefix = os.path.join(workdir, "model")
        source = {"input": plain} if plain else \
            {"sentence_iterator": (flatten_line(s) for s in sentences or () if s.strip())}
        try:
            spm.SentencePieceTrainer.train(model_prefix=tmp_prefix, **source, **options)
        except RuntimeError as exc:
            raise UserError(f"SentencePiece training failed: {str(exc).splitlines()[0]}") from None
        write_fairseq_dict(tmp_prefix + ".model", tmp_prefix + ".dict.txt")
        # the three files are published together or not at all (disk full: no model without its dictionary)
        with atomic_outputs(outputs, "wb") as dsts:
            for ext, dst in zip((".model", ".vocab", ".dict.txt"), dsts):
                with open(tmp_prefix + ext, "rb") as src:
                    shutil.copyfileobj(src, dst)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return model_prefix + ".model"


def sample_sentences(lines: Iterable[str], size: int, seed: int | None) -> tuple[list[str], int]:
    """A uniform random sample of at most ``size`` of the non-blank ``lines``, read once and streamed (memory:
    ``size`` lines, whatever the corpus size), in corpus order; and the number of non-blank lines read.  Seeded:
    the same lines and seed give the same sample (``seed=None``: unseeded).  With ``size`` or fewer lines, the
    sample is every line, in order.  (Reservoir sampling, Vitter's Algorithm R.)"""
    import random

    rng = random.Random(seed)
    kept: list[tuple[int, str]] = []
    n = 0
    for line in lines:
        if not line.strip():   # SentencePiece skips them too
            continue
        if n < size:
            kept.append((n, line))
        else:
            j = rng.randrange(n + 1)
            if j < size:
                kept[j] = (n, line)
        n += 1
    kept.sort()
    return [line for _, line in kept], n


# --- command line --------------------------------------------------------------------------------------------

def _parse_kv(items: list[str]) -> dict:
    out = {}
    for item in items or []:
        if "=" not in item:
            raise UserError(f"--spm-option wants KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        out[key.strip().lstrip("-")] = value
    return out


def build_parser(prog: str = "python -m preprocess.models.spm", default_variant: str = "default",
                 description: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=description or __doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a SentencePiece model (default or space-as-token)",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    t.add_argument("--input", nargs="+", required=True, help="training text files (.gz allowed)")
    t.add_argument("--model-prefix", required=True, help="writes PREFIX.model, PREFIX.vocab, PREFIX.dict.txt")
    t.add_argument("--variant", choices=VARIANTS, default=default_variant,
                   help="prime: spaces always their own token (BPE'/Unigram'); default: SentencePiece's default")
    add_arguments(t, SpmOptions)
    t.add_argument("--num-threads", type=int, default=2, help="trainer threads")
    t.add_argument("--user-symbols", default=None,
                   help="extra user-defined symbols: a comma-separated list, or the name of a symbol set a scheme "
                        "declares (its descriptor's user_symbols: BITE's [NNS]... symbols and its escape/spacing "
                        "marks are 'bite', the single-character ones 'bite-single')")
    t.add_argument("--spm-option", action="append", metavar="KEY=VALUE",
                   help="any other SentencePiece trainer option, e.g. byte_fallback=true (repeatable)")
    d = sub.add_parser("dict", help="write the fairseq dict.txt of an existing model")
    d.add_argument("--model", required=True, help="SentencePiece .model file")
    d.add_argument("--output", required=True, help="dict.txt to write")
    return parser


def main(argv=None, parser: argparse.ArgumentParser | None = None) -> int:
    args = (parser or build_parser()).parse_args(argv)
    if args.command == "train":
        path = train(args.input, args.model_prefix, args.model_type, args.variant, args.vocab_size,
                     args.character_coverage, args.input_sentence_size, args.seed, args.num_threads,
                     named_user_symbols(args.user_symbols), _parse_kv(args.spm_option))
        print(f"wrote {path}, {args.model_prefix}.vocab, {args.model_prefix}.dict.txt", file=sys.stderr)
    else:
        check_output_path(args.output)
        check_distinct([(args.output, "--output")], [(args.model, "--model")])
        n = write_fairseq_dict(args.model, args.output)
        print(f"wrote {args.output} ({n} entries)", file=sys.stderr)
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
