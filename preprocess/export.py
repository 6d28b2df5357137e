"""Export a trained tokeniser as a Hugging Face tokenizer directory.

    morphtok-export --scheme spaces --model P.model [--spaces drop] --out DIR
    morphtok-export --scheme bite --subword-model spm.model [--tagger hanta] --out DIR
    morphtok-export --scheme flota --flota-vocab vocab.txt [--flota-k 3] --out DIR
    morphtok-export --scheme wordmap --wordmap-vocab wordmap.de.txt --wordmap-spm wordmap-spm.de.model \\
        --dict dict.wordmap.de.txt --out DIR

The scheme's options are those of ``morphtok-encode --scheme NAME`` (same names, same meaning); ``sentencepiece``
is ``spaces`` for a plain SentencePiece model.  ``spaces``/``sentencepiece`` write a ``tokenizer.json`` that the
``tokenizers`` library (and ``transformers``) load without this project; ``bite``, ``flota`` and ``wordmap``
write a directory for the tokenizer classes of :mod:`preprocess.hf_tokenizers`, with the models copied into it.
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

from preprocess.common import WRITE_ERRNOS, UserError, check_distinct, current_umask, run_main, write_error
from preprocess.spm import dictionary_pieces, write_dict

#: export scheme -> the preprocess.encode scheme whose options it takes
SCHEMES = {"spaces": "spaces", "sentencepiece": "spaces", "bite": "bite", "flota": "flota", "wordmap": "wordmap"}
SHIM = "tokenization_morphtok.py"   # written by the tokenizer classes' save_pretrained (auto_map)


def build_parser(scheme: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="morphtok-export", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--scheme", required=True, choices=sorted(SCHEMES), help="tokenisation scheme")
    parser.add_argument("--out", required=True, help="directory to write (must not exist or be empty)")
    parser.add_argument("--dict", default=None,
                        help="fairseq dict.txt giving the ids (default: the scheme's own dictionary; required for "
                             "wordmap: the dict.wordmap.LANG.txt that binarize wrote)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing non-empty --out directory")
    if scheme is not None:
        from preprocess.encode import scheme_module
        group = parser.add_argument_group(f"{scheme} options (as morphtok-encode --scheme {SCHEMES[scheme]})")
        scheme_module(SCHEMES[scheme]).add_encoder_args(group)
    return parser


def parse_args(argv=None) -> argparse.Namespace:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--scheme", help="the scheme (read first, to add its options)")
    known, _ = pre.parse_known_args(argv)
    return build_parser(known.scheme if known.scheme in SCHEMES else None).parse_args(argv)


def _inputs(args) -> list[str]:
    names = ("dict", "spaces_model", "subword_model", "flota_vocab", "flota_gpt2_encoder", "wordmap_vocab", "wordmap_spm")
    return [getattr(args, n) for n in names if getattr(args, n, None)]


def _hf_modules():
    try:
        import tokenizers  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        raise UserError(f"export needs the hf extra (pip install .[hf]): {exc}") from None


def export(args: argparse.Namespace, out_dir: str) -> list[str]:
    """Write the tokenizer of ``args`` (parsed options) into the existing directory ``out_dir``."""
    from preprocess import hf_export

    dictionary = hf_export.read_fairseq_dict(args.dict) if args.dict else None
    if SCHEMES[args.scheme] == "spaces":
        return hf_export.export_sentencepiece(args.spaces_model, out_dir, args.spaces, dictionary, scheme=args.scheme)

    from preprocess import hf_tokenizers
    from preprocess.common import require_file
    tmp = tempfile.mkdtemp(prefix="morphtok-export-")
    try:
        dict_path = os.path.join(tmp, hf_export.DICT_FILE)
        if args.scheme == "bite":
            if getattr(args, "training_text", False) or not args.subword_model:
                raise UserError("export --scheme bite needs --subword-model (BITE+D: the BITE scheme's spm.model)")
            require_file(args.subword_model, "SentencePiece model (--subword-model)")
            from preprocess.bite import check_subword_model
            check_subword_model(args.subword_model, args.bite_single_char)
            write_dict(dictionary if dictionary is not None else dictionary_pieces(args.subword_model), dict_path)
            tok = hf_tokenizers.MorphtokBiteTokenizer(dict_path, args.subword_model, args.bite_pretokenizer,
                                                      args.bite_tagger, args.bite_single_char,
                                                      exact=args.bite_exact)
        elif args.scheme == "flota":
            if getattr(args, "noise_p", 0.0):
                raise UserError("--noise-p is a test-set perturbation, not part of a tokenizer: export without it")
            require_file(args.flota_vocab, "FLOTA vocabulary (--flota-vocab)")
            write_dict(dictionary if dictionary is not None else hf_export.flota_dictionary(args.flota_vocab),
                       dict_path)
            vocab = {hf_tokenizers.flota_vocab_slot(args.flota_vocab): args.flota_vocab}
            tok = hf_tokenizers.MorphtokFlotaTokenizer(
                dict_path, gpt2_encoder_file=args.flota_gpt2_encoder, flota_style=args.flota_style,
                flota_k=args.flota_k, flota_mode=args.flota_mode, flota_strict=args.flota_strict,
                flota_max_len=args.flota_max_len, flota_unk=args.flota_unk, flota_byte_level=args.flota_byte_level,
                flota_case=args.flota_case, **vocab)
        else:   # wordmap
            if dictionary is None:
                raise UserError("export --scheme wordmap needs --dict: Wordmap's dictionary is its base model's pieces "
                                "plus the pieces of its encoded training text (binarize writes dict.wordmap.LANG.txt)")
            write_dict(dictionary, dict_path)
            tok = hf_tokenizers.MorphtokWordmapTokenizer(dict_path, require_file(args.wordmap_vocab, "--wordmap-vocab"),
                                                         require_file(args.wordmap_spm, "--wordmap-spm"))
        written = list(tok.save_pretrained(out_dir))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # auto_map: AutoTokenizer.from_pretrained(DIR, trust_remote_code=True) finds the class through the shim that
    # save_pretrained wrote, which imports it from the installed package (importing preprocess.hf_tokenizers
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


if __name__ == "__main__":
    cli()
