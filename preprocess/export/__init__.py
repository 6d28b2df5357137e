"""Export a trained tokeniser as a Hugging Face tokenizer directory.

    morphtok-export --scheme spaces --model P.model [--spaces drop] --out DIR
    morphtok-export --scheme bite --subword-model spm.model [--tagger hanta] --out DIR
    morphtok-export --scheme flota --flota-vocab vocab.txt [--flota-k 3] --out DIR
    morphtok-export --scheme wordmap --wordmap-vocab wordmap.de.txt --wordmap-spm wordmap-spm.de.model \\
        --dict dict.wordmap.de.txt --out DIR

The scheme's options are those of ``morphtok-encode --scheme NAME`` (same names, same meaning); ``sentencepiece``
is ``spaces`` for a plain SentencePiece model.  ``spaces``/``sentencepiece`` write a ``tokenizer.json`` that the
``tokenizers`` library (and ``transformers``) load without this project; ``bite``, ``flota`` and ``wordmap``
write a directory for the tokenizer classes of :mod:`preprocess.hf`, with the models copied into it.
Ids are the fairseq dictionary ids (``dict.txt``: the scheme's own dictionary unless ``--dict`` gives one).
The directory appears only when everything was written.  See docs/export.md.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

from preprocess import registry
from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.files.outputs import WRITE_ERRNOS, check_distinct, current_umask, write_error

SHIM = "tokenization_morphtok.py"   # written by the tokenizer classes' save_pretrained (auto_map)


def build_parser(scheme: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="morphtok-export", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--scheme", required=True, choices=registry.all_names(), help="tokenisation scheme")
    parser.add_argument("--out", required=True, help="directory to write (must not exist or be empty)")
    parser.add_argument("--dict", default=None,
                        help="fairseq dict.txt giving the ids (default: the scheme's own dictionary; required for "
                             "wordmap: the dict.wordmap.LANG.txt that binarize wrote)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing non-empty --out directory")
    if scheme is not None:
        descriptor = registry.get(scheme, aliases=True)
        group = parser.add_argument_group(f"{scheme} options (as morphtok-encode --scheme {descriptor.name})")
        descriptor.add_encoder_args(group)
    return parser


def parse_args(argv=None) -> argparse.Namespace:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--scheme", help="the scheme (read first, to add its options)")
    known, _ = pre.parse_known_args(argv)
    return build_parser(known.scheme if known.scheme in registry.all_names() else None).parse_args(argv)


def _inputs(args) -> list[str]:
    """``--dict`` and the files the scheme's options name (its descriptor's ``files``)."""
    names = ("dict", *registry.get(args.scheme, aliases=True).files)
    return [getattr(args, n) for n in names if getattr(args, n, None)]


def _hf_modules():
    try:
        import tokenizers  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        raise UserError(f"export needs the hf extra (pip install .[hf]): {exc}") from None


def export(args: argparse.Namespace, out_dir: str) -> list[str]:
    """Write the tokenizer of ``args`` (parsed options) into the existing directory ``out_dir``: what the scheme's
    descriptor names as its Hugging Face export (:mod:`preprocess.registry`), a ``tokenizer.json`` writer or a
    tokenizer class of :mod:`preprocess.hf`."""
    from preprocess.export import tokenizer_json as hf_export

    dictionary = hf_export.read_fairseq_dict(args.dict) if args.dict else None
    target = registry.get(args.scheme, aliases=True).export_target()
    if target is None:
        raise UserError(f"scheme {args.scheme!r} has no Hugging Face export")
    if not isinstance(target, type):   # a tokenizer.json writer
        return target(args, out_dir, dictionary, scheme=args.scheme)

    tmp = tempfile.mkdtemp(prefix="morphtok-export-")
    try:
        tok = target.from_options(args, os.path.join(tmp, hf_export.DICT_FILE), dictionary)
        written = list(tok.save_pretrained(out_dir))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # auto_map: AutoTokenizer.from_pretrained(DIR, trust_remote_code=True) finds the class through the shim that
    # save_pretrained wrote, which imports it from the installed package (importing preprocess.hf
    # registers it, no flag needed)
    config_path = os.path.join(out_dir, "tokenizer_config.json")
    with open(config_path, encoding="utf-8") as fh:
        config = json.load(fh)
    config["auto_map"] = {"AutoTokenizer": [f"{SHIM[:-3]}.{type(tok).__name__}", None]}
    config["morphtok"] = {"scheme": args.scheme}
    hf_export.write_json(config_path, config)
    return written


def main(argv=None) -> int:
    args = parse_args(argv)
    _hf_modules()
    out = os.path.abspath(args.out)
    inputs = _inputs(args)
    check_distinct([out], inputs)
    for path in inputs:
        if os.path.commonpath([os.path.abspath(path), out]) == out:
            raise UserError(f"--out {args.out} holds an input ({path}); choose another directory")
    if os.path.isfile(out):
        raise UserError(f"--out is a file: {args.out}")
    if os.path.isdir(out) and os.listdir(out) and not args.overwrite:
        raise UserError(f"--out {args.out} exists and is not empty (give --overwrite to replace it)")
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(out)}.export-", dir=parent)
    os.chmod(tmp, 0o777 & ~current_umask())   # mkdtemp gives 0700, which the rename would keep
    try:
        try:
            export(args, tmp)
        except OSError as exc:   # a write into the new directory failed (disk full...): name --out, not tmp
            if exc.errno not in WRITE_ERRNOS:
                raise
            name = os.path.join(args.out, os.path.relpath(exc.filename, tmp)) if exc.filename else args.out
            raise write_error(name, exc) from None
        except UserError as exc:   # the same for the project's writers, which name the file they write
            raise UserError(str(exc).replace(tmp, args.out.rstrip(os.sep))) from None
        if os.path.isdir(out):
            shutil.rmtree(out)
        os.rename(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"wrote {args.out}: {', '.join(sorted(os.listdir(out)))}", file=sys.stderr)
    return 0


def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))
