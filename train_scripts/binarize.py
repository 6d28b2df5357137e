"""Learn, encode and binarise a corpus with any scheme: the one path from raw text to ``fairseq-train`` input.

    python -m train_scripts.binarize --scheme spaces --data raw/ --src en --tgt de --out work/spaces \\
        --vocab-size 8000 --workers 4 [--shards N [--shard-id K | --learn-only]] [--extra-test NAME ...]
    python -m train_scripts.binarize --lm --scheme spaces --data raw/ --src en --out work/lm    # RoBERTa

``--data`` holds ``{train,valid,test}.{SRC,TGT}`` (plain or ``.gz``; ``test`` is optional), as written by
``prepare_multi30k.sh`` / ``prepare_wmt14_en_de.sh``; with ``--lm`` only ``{train,valid}.SRC``.  Three steps:

1. **learn** the scheme's models and dictionaries from the training text (``OUT/models/``; skipped when
   ``OUT/models/learned.json`` records the same configuration);
2. **encode** every split with the scheme's encoders through ``preprocess.encode`` (``OUT/tok/``), line-aligned;
3. **binarise** with ``fairseq-preprocess`` into ``OUT/data-bin`` with the scheme's dictionaries.

The schemes come from the one registry (:mod:`preprocess.registry`), their options from their recipe classes in
``train_scripts/schemes/`` (``--scheme NAME --help`` lists a scheme's options); ``--scheme-module FILE.py`` adds a
scheme defined elsewhere.  The dictionary policy
is documented there: the dictionary is the scheme's inventory, written from its model.

Sharding: ``--shards N`` cuts the training text into N contiguous parts and writes ``OUT/data-bin/shard0`` ...
``shardN-1`` (valid/test in ``shard0``, every shard with the same dictionaries).  fairseq reads them as
``DATA=OUT/data-bin/shard0:OUT/data-bin/shard1:...`` and trains epoch *e* on shard *(e-1) mod N*.  One shard
alone: learn once (``--shards N --learn-only``), make ``OUT/models`` visible to the other machines (a shared
file system or a copy), run ``--shard-id K`` there.  ``train_scripts.launch`` does this as cluster jobs.

``--extra-test NAME`` binarises the raw ``NAME.{SRC,TGT}`` too, as fairseq's ``test1``, ``test2`` ... subsets
(e.g. a perturbed copy of the test set, evaluated with the same model); ``binarize.json`` maps names to subsets.

``OUT/binarize.json`` records the result (see :func:`binarize`), including the ``--bpe``/``--tokenizer``
arguments that ``fairseq-generate`` needs to decode the target language.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import json
import os
import shutil
import sys

from preprocess import registry
from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.encode import FileEncoder, file_options
from preprocess.files.inputs import UTF8_HINT, count_lines, read_lines
from preprocess.files.outputs import atomic_output
from preprocess.options import options_from
from train_scripts.fairseq_preprocess import COMMAND as PREPROCESS
from train_scripts.schemes import (
    Scheme,
    add_options,
    get_scheme,
    import_scheme_module,
    make_scheme,
)
from train_scripts.tools import map_paths, moved_root, run_tool

SPLITS = ("train", "valid", "test")


# --- helpers -------------------------------------------------------------------------------------------------

def read_record(path: str, hint: str = "give the output folder of morphtok-binarize") -> dict:
    """``binarize.json`` of an output folder of :func:`binarize` (the folder or the file), with its paths where
    they are now: the record names the folder it was written in (``out_dir``; older records: ``tok_dir``'s
    folder), and where the file has been moved since (a renamed clone, a copied experiment, another mount point)
    every recorded path in the tree that moved with it follows (:func:`train_scripts.tools.moved_root`: the raw
    text beside a demo's rows too).  ``hint``: what to give instead, for the error when there is no record."""
    path = os.path.join(path, "binarize.json") if os.path.isdir(path) else path
    if not os.path.isfile(path):
        raise UserError(f"no binarize.json at {path}: {hint}")
    try:
        with open(path, encoding="utf-8") as fh:
            info = json.load(fh)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read {path}: {exc}") from None
    if not isinstance(info, dict):
        raise UserError(f"{path} is not a binarize.json record (a JSON object)")
    recorded = info.get("out_dir") or (os.path.dirname(info["tok_dir"]) if isinstance(info.get("tok_dir"), str)
                                       else None)
    move = moved_root(recorded, os.path.dirname(os.path.abspath(path))) if isinstance(recorded, str) else None
    return map_paths(info, [move]) if move else info


def raw_file(raw_dir: str, split: str, lang: str, required: bool = True) -> str | None:
    for name in (f"{split}.{lang}", f"{split}.{lang}.gz"):
        path = os.path.join(raw_dir, name)
        if os.path.isfile(path):
            return path
    if required:
        raise UserError(f"missing {split}.{lang} (or .gz) in {raw_dir}")
    return None


def encode_file(factory, src: str, dst: str, workers: int = 1, quiet: bool = True) -> int:
    """Encode ``src`` into ``dst`` with the LineEncoder that ``factory()`` builds; returns the line count."""
    with FileEncoder(file_options(workers, quiet=quiet), factory) as enc:
        return enc.encode_file(src, dst)


def _write_lines_range(src: str, dst: str, start: int, stop: int) -> int:
    with atomic_output(dst) as out:
        n = 0
        for line in itertools.islice(read_lines(src, hint=UTF8_HINT), start, stop):
            out.write(line + "\n")
            n += 1
    return n


def scheme_from_info(info: dict) -> Scheme:
    """The configured scheme of a ``binarize.json`` (to encode more text exactly as the model's data)."""
    langs = (info["lang"],) if info.get("lm") else (info["src"], info["tgt"])
    return make_scheme(info["config"], langs, info["models_dir"])


# --- the steps -----------------------------------------------------------------------------------------------

def learn(scheme: Scheme, train: dict[str, str], workers: int = 1, quiet: bool = True,
          shard_id: int | None = None) -> None:
    """Learn the scheme's models into ``scheme.models_dir`` unless ``learned.json`` records the same
    configuration there."""
    record = os.path.join(scheme.models_dir, "learned.json")
    wanted = {"config": scheme.config(), "langs": list(scheme.langs)}
    if os.path.isfile(record):
        with open(record, encoding="utf-8") as fh:
            if json.load(fh) == wanted:
                return
        if shard_id is not None:
            raise UserError(f"{record} was learned with another configuration; use a fresh --out")
    elif shard_id is not None:
        print("note: no learned models in OUT/models; learning them here (run --learn-only once and share "
              "OUT/models so that every shard uses one model)", file=sys.stderr)
    os.makedirs(scheme.models_dir, exist_ok=True)
    try:
        scheme.learn(train, workers=workers, quiet=quiet)
    except UserError as exc:   # SentencePiece's own message names neither the option nor the training text
        import re
        too_high = re.search(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)", str(exc))
        if not too_high:
            raise
        raise UserError(f"--vocab-size {too_high.group(1)} is more than the {scheme.name} training text "
                        f"({', '.join(train[lang] for lang in scheme.langs if lang in train)}) gives a "
                        f"SentencePiece model: at most {too_high.group(2)}; give --vocab-size "
                        f"{too_high.group(2)} or less") from None
    with atomic_output(record) as fh:
        json.dump(wanted, fh, indent=1)


def _encode_split(scheme: Scheme, raw: str, dst: str, lang: str, split: str, rows: tuple[int, int] | None,
                  workers: int, quiet: bool) -> None:
    """Encode one split of one language; ``rows``: only lines [start, stop) (a training shard)."""
    done = scheme.encoded_train(lang) if split == "train" else None
    if done and os.path.isfile(done):  # encoded while learning: no second pass of the tagger
        if rows is None:
            with open(done, "rb") as src, atomic_output(dst, "wb") as out:
                shutil.copyfileobj(src, out)
        else:
            _write_lines_range(done, dst, *rows)
        return
    if rows is None:
        encode_file(scheme.encoder(lang, workers), raw, dst, workers, quiet)
        return
    part = os.path.join(os.path.dirname(dst), f".raw.{os.path.basename(dst)}")
    try:
        _write_lines_range(raw, part, *rows)
        encode_file(scheme.encoder(lang, workers), part, dst, workers, quiet)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(part)


def encode_and_binarize_shard(scheme: Scheme, raw_dir: str, out_dir: str, shard: int, shards: int,
                              dicts: dict[str, str], extra_tests: tuple[str, ...] = (), workers: int = 1,
                              quiet: bool = True) -> str:
    """Encode and binarise one shard (``shards == 1``: the whole corpus); returns its data-bin folder."""
    langs = scheme.langs
    tok = os.path.join(out_dir, "tok")
    os.makedirs(tok, exist_ok=True)
    bin_dir = os.path.join(out_dir, "data-bin") if shards == 1 else os.path.join(out_dir, "data-bin", f"shard{shard}")
    splits = ["train"]
    if shard == 0:
        splits += [s for s in ("valid", "test") if raw_file(raw_dir, s, langs[0], False)] + list(extra_tests)
    prefixes = {}
    for split in splits:
        name = f"train.shard{shard}" if split == "train" and shards > 1 else split
        expected = None
        for lang in langs:
            raw = raw_file(raw_dir, split, lang)
            rows = None
            if split == "train" and shards > 1:
                n = count_lines(raw, hint=UTF8_HINT)
                rows = (shard * n // shards, (shard + 1) * n // shards)
            dst = os.path.join(tok, f"{name}.{lang}")
            _encode_split(scheme, raw, dst, lang, split, rows, workers, quiet)
            expected = (rows[1] - rows[0]) if rows else count_lines(raw, hint=UTF8_HINT)
            got = count_lines(dst, hint=UTF8_HINT)
            if got != expected:  # never binarise misaligned text
                raise UserError(f"encoded {dst} has {got} lines, raw {split}.{lang} has {expected}")
        # --only-source without a language names the outputs train.bin, valid.bin, dict.txt (masked_lm's layout)
        prefixes[split] = os.path.join(tok, f"{name}.{langs[0]}" if scheme.lm else name)

    tests = [prefixes[s] for s in ["test", *extra_tests] if s in prefixes]
    _fairseq_preprocess(scheme, dicts, bin_dir, prefixes.get("train"), prefixes.get("valid"), tests, workers, quiet)
    return bin_dir


def _fairseq_preprocess(scheme: Scheme, dicts: dict[str, str], bin_dir: str, train: str | None, valid: str | None,
                        tests: list[str], workers: int, quiet: bool) -> None:
    """fairseq-preprocess of encoded text (file prefixes) into ``bin_dir`` with the given dictionaries."""
    langs = scheme.langs
    if os.path.isdir(bin_dir):
        shutil.rmtree(bin_dir)
    if scheme.lm:
        cmd = [*PREPROCESS, "--only-source", "--srcdict", dicts[langs[0]]]
    else:
        cmd = [*PREPROCESS, "--source-lang", langs[0], "--target-lang", langs[1]]
        if dicts[langs[0]] == dicts[langs[1]]:
            cmd += ["--joined-dictionary", "--srcdict", dicts[langs[0]]]
        else:
            cmd += ["--srcdict", dicts[langs[0]], "--tgtdict", dicts[langs[1]]]
    cmd += ["--destdir", bin_dir, "--workers", workers]
    for flag, prefix in (("--trainpref", train), ("--validpref", valid)):
        if prefix:
            cmd += [flag, prefix]
    if tests:
        cmd += ["--testpref", ",".join(tests)]
    try:
        run_tool(cmd, quiet, output=bin_dir)
    except BaseException:   # disk full, a failed tool, Ctrl-C: no partial data-bin is left behind
        shutil.rmtree(bin_dir, ignore_errors=True)
        raise


def binarize_test_sets(info: dict, raw_dir: str, names: list[str], out_dir: str, workers: int = 1,
                       quiet: bool = True) -> dict:
    """More test sets for a corpus binarised before (``info``: its binarize.json), with its learned scheme and
    dictionaries and nothing learned again: raw ``NAME.{SRC,TGT}`` -> ``OUT/tok/NAME.*`` and ``OUT/data-bin``
    subsets ``test``, ``test1``, ...  Returns ``{name: subset}`` (evaluate with ``data_bin=OUT/data-bin``)."""
    scheme = scheme_from_info(info)
    tok = os.path.join(out_dir, "tok")
    os.makedirs(tok, exist_ok=True)
    for name in names:
        counts = set()
        for lang in scheme.langs:
            raw = raw_file(raw_dir, name, lang)
            dst = os.path.join(tok, f"{name}.{lang}")
            _encode_split(scheme, raw, dst, lang, name, None, workers, quiet)
            counts |= {count_lines(raw, hint=UTF8_HINT), count_lines(dst, hint=UTF8_HINT)}
        if len(counts) != 1:
            raise UserError(f"{name}: the encoded or raw files of the two languages differ in line count")
    _fairseq_preprocess(scheme, info["dicts"], os.path.join(out_dir, "data-bin"), None, None,
                        [os.path.join(tok, name) for name in names], workers, quiet)
    return {name: ("test" if i == 0 else f"test{i}") for i, name in enumerate(names)}


def _aligned_lines(raw_dir: str, langs: tuple, extra_tests: tuple[str, ...]) -> dict:
    """Lines of each raw split there is (train and valid must be), checked equal across ``langs``:
    ``{split: n}``."""
    for split in ("train", "valid"):
        for lang in langs:
            raw_file(raw_dir, split, lang)
    lines = {}
    for split in [*SPLITS, *extra_tests]:
        if raw_file(raw_dir, split, langs[0], split in extra_tests):
            counts = {lang: count_lines(raw_file(raw_dir, split, lang), hint=UTF8_HINT) for lang in langs}
            if len(set(counts.values())) != 1:
                raise UserError(f"{split} files are not aligned: " +
                                ", ".join(f"{split}.{lang} has {n} lines" for lang, n in counts.items()))
            lines[split] = counts[langs[0]]
    return lines


def _dictionaries(scheme: Scheme, langs: tuple, srcdict: str | None, tgtdict: str | None) -> dict:
    """``{lang: dict.txt}``: the scheme's, or ``srcdict``/``tgtdict`` (the target's defaults to ``srcdict``)."""
    dicts = {lang: scheme.dictionary(lang) for lang in langs}
    if srcdict:
        dicts[langs[0]] = os.path.abspath(srcdict)
    if len(langs) > 1 and (tgtdict or srcdict):
        dicts[langs[1]] = os.path.abspath(tgtdict or srcdict)
    return dicts


def binarize(scheme_config: dict, raw_dir: str, out_dir: str, src: str = "en", tgt: str | None = "de",
             shards: int = 1, shard_id: int | None = None, workers: int = 1, learn_only: bool = False,
             quiet: bool = True, lm: bool = False, extra_tests: tuple[str, ...] = (),
             srcdict: str | None = None, tgtdict: str | None = None) -> dict:
    """Learn, encode and binarise; returns (and writes to ``OUT/binarize.json`` unless one shard or learning
    only) a dict with::

        scheme, config (the scheme's options), src, tgt (translation) or lang + lm=True (monolingual),
        data            fairseq's DATA: OUT/data-bin, or OUT/data-bin/shard0:OUT/data-bin/shard1:...
        data_bin        the shard folders
        dicts           {lang: dict.txt used}
        joined_dictionary, train_args   ["--share-all-embeddings"] or ["--share-decoder-input-output-embed"]
        generate_args   --bpe/--tokenizer ... decoding the target language (translation)
        source_args     the same for the source language (fairseq-interactive input)
        fairseq_args    the same for the language of an --lm corpus (--mask-whole-words, hub)
        test_subsets    {"test": "test", extra test name: "test1", ...}
        out_dir (the folder written, so that a moved folder is recognised: :func:`read_record`), tok_dir,
        models_dir, raw_dir, lines {split: n}, shards, and the scheme's own record (e.g. "spaces")

    ``scheme_config``: ``{"scheme": name, option: value, ...}`` (see ``train_scripts/schemes``).
    """
    raw_dir, out_dir = os.path.abspath(raw_dir), os.path.abspath(out_dir)
    langs = (src,) if lm else (src, tgt)
    if not lm and (not tgt or src == tgt):
        raise UserError("--src and --tgt must be two different languages")
    scheme = make_scheme(scheme_config, langs, os.path.join(out_dir, "models"))
    if shards < 1:
        raise UserError("--shards must be at least 1")
    if shard_id is not None and not 0 <= shard_id < shards:
        raise UserError(f"--shard-id must be in 0..{shards - 1}")
    lines = _aligned_lines(raw_dir, langs, extra_tests)
    if lines["train"] < shards:
        raise UserError(f"{lines['train']} training lines cannot make {shards} shards")
    for given in (srcdict, tgtdict):
        if given and not os.path.isfile(given):
            raise UserError(f"dictionary not found: {given}")

    os.makedirs(out_dir, exist_ok=True)
    learn(scheme, {lang: raw_file(raw_dir, "train", lang) for lang in langs}, workers, quiet, shard_id)
    dicts = _dictionaries(scheme, langs, srcdict, tgtdict)

    all_dirs = [os.path.join(out_dir, "data-bin")] if shards == 1 else \
        [os.path.join(out_dir, "data-bin", f"shard{k}") for k in range(shards)]
    if not learn_only:
        for k in ([shard_id] if shard_id is not None else range(shards)):
            encode_and_binarize_shard(scheme, raw_dir, out_dir, k, shards, dicts, tuple(extra_tests), workers, quiet)

    joined = lm or dicts[src] == dicts[tgt]
    result = {
        "scheme": scheme.name, "config": scheme.config(), "src": src,
        "data": ":".join(all_dirs), "data_bin": all_dirs, "shards": shards, "dicts": dicts,
        "joined_dictionary": joined,
        "train_args": ["--share-all-embeddings"] if joined else ["--share-decoder-input-output-embed"],
        "test_subsets": {name: ("test" if i == 0 else f"test{i}")
                         for i, name in enumerate(n for n in ["test", *extra_tests] if n in lines)},
        "out_dir": out_dir, "tok_dir": os.path.join(out_dir, "tok"), "models_dir": scheme.models_dir,
        "raw_dir": raw_dir,
        "lines": lines, **scheme.record(),
    }
    if lm:
        result.update({"lm": True, "lang": src, "fairseq_args": scheme.decode_args(src),
                       "dict": os.path.join(all_dirs[0], "dict.txt"),
                       "subword_model": scheme.vocabulary_file(src)})
    else:
        result.update({"tgt": tgt, "generate_args": scheme.decode_args(tgt), "source_args": scheme.decode_args(src)})
    if shard_id is None and not learn_only:
        with atomic_output(os.path.join(out_dir, "binarize.json")) as fh:
            json.dump(result, fh, indent=1)
    return result


# --- command line ----------------------------------------------------------------------------------------------

def build_parser(name: str | None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="morphtok-binarize", description=__doc__.split("\n\n")[0],
                                epilog="`--scheme NAME --help` lists that scheme's options.",
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--scheme", required=True, choices=registry.recipe_names(), help="tokenisation scheme")
    p.add_argument("--scheme-module", action="append", default=[],
                   help="import this module or .py file first (it registers more schemes)")
    p.add_argument("--data", required=True, help="folder with {train,valid,test}.{SRC,TGT} raw text")
    p.add_argument("--src", default="en", help="source language suffix (the language, with --lm)")
    p.add_argument("--tgt", default="de", help="target language suffix")
    p.add_argument("--out", required=True, help="output folder (models/, tok/, data-bin/, binarize.json)")
    p.add_argument("--lm", action="store_true",
                   help="monolingual data for RoBERTa pretraining: {train,valid}.SRC -> data-bin/dict.txt, train, "
                        "valid (--tgt is ignored)")
    p.add_argument("--shards", type=int, default=1, help="cut the training data into N data-bin shards")
    p.add_argument("--shard-id", type=int, default=None, help="encode and binarise only this shard")
    p.add_argument("--learn-only", action="store_true", help="only learn the models and dictionaries")
    p.add_argument("--extra-test", action="append", default=[], metavar="NAME",
                   help="also binarise raw NAME.{SRC,TGT} as a further test subset (test1, test2, ...)")
    p.add_argument("--srcdict", help="use this fairseq dictionary instead of the scheme's (e.g. a checkpoint's)")
    p.add_argument("--tgtdict", help="the same for the target side (default: --srcdict)")
    p.add_argument("--workers", type=int, default=1, help="processes for encoding and fairseq-preprocess")
    p.add_argument("--verbose", action="store_true", help="show progress and the commands run")
    if name in registry.recipe_names():
        add_options(p.add_argument_group(f"{name} options"), get_scheme(name).Options)
    return p


def _pre_parse(argv) -> str | None:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--scheme", help="the scheme (read first, to add its options)")
    pre.add_argument("--scheme-module", action="append", default=[],
                     help="module registering more schemes (read first)")
    known, _ = pre.parse_known_args(argv)
    for module in known.scheme_module:
        import_scheme_module(module)
    return known.scheme


def parse_args(argv=None) -> tuple[argparse.Namespace, dict]:
    """The parsed binarize command line and the scheme configuration it gives (``{"scheme": ..., option: ...}``)."""
    args = build_parser(_pre_parse(argv)).parse_args(argv)
    cls = get_scheme(args.scheme)
    return args, {"scheme": args.scheme, **dataclasses.asdict(options_from(cls.Options, args))}


def main(argv=None) -> int:
    args, config = parse_args(argv)
    result = binarize(config, args.data, args.out, args.src, args.tgt, shards=args.shards, shard_id=args.shard_id,
                      workers=args.workers, learn_only=args.learn_only, quiet=not args.verbose, lm=args.lm,
                      extra_tests=tuple(args.extra_test), srcdict=args.srcdict, tgtdict=args.tgtdict)
    keys = ("data", "dict", "fairseq_args") if args.lm else ("data", "joined_dictionary", "train_args", "generate_args")
    print(json.dumps({k: result[k] for k in keys}))
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
