"""Tokenise and binarise a prepared parallel corpus with any scheme, ready for ``fairseq-train``.

    python -m train_scripts.binarize --scheme spaces --data raw/ --src en --tgt de --out work/spaces \\
        --vocab-size 8000 --workers 4 [--shards N [--shard-id K]]

``--data`` holds ``{train,valid,test}.{SRC,TGT}`` (plain or ``.gz``; ``test`` is optional), as written by
``prepare_multi30k.sh`` / ``prepare_wmt14_en_de.sh``.  Three steps:

1. **learn** the subword model(s) on the training text and write the fairseq dictionaries (``OUT/models/``);
2. **encode** every split with ``preprocess.encode`` (``OUT/tok/``), line-aligned;
3. **binarise** with ``fairseq-preprocess`` into ``OUT/data-bin`` -- one joined dictionary where both sides
   share a model, ``--workers`` processes.

Schemes (``--scheme``):

* ``sentencepiece`` -- the baseline: a standard SentencePiece model (``--model-type unigram|bpe``) shared by
  both languages; decoded by fairseq's own ``--bpe sentencepiece``.
* ``spaces`` -- space-as-token (BPE'/Unigram', ``--variant prime``); ``--spaces drop`` is the paper's lossy
  "no spaces" variant; decoded by ``--bpe spaces``.
* ``bite`` -- BITE on the ``--bite-langs`` sides (English: its lemmatiser is English-only), then one
  SentencePiece model trained with the inflection symbols as user symbols on both sides; decoded by
  ``--tokenizer bite --bpe sentencepiece`` when the target is a BITE language.
* ``flota`` -- FLOTA segmentation with an existing vocabulary (``--flota-vocab``, nothing is learned; the
  dictionary is the vocabulary); ``--flota-noise-p`` drops spaces in the *test* split only (evaluation-time
  noise); decoded by ``--bpe flota``.
* ``wordmap`` -- Wordmap verb segmentation on the ``--wordmap-langs`` side (German) with its own base
  SentencePiece model, a separate SentencePiece model for the other side, so the dictionaries are *not*
  joined (train with ``--share-decoder-input-output-embed``, not ``--share-all-embeddings``).

Sharding: ``--shards N`` cuts the training text into N contiguous parts and writes ``OUT/data-bin/shard0`` ...
``shardN-1`` (valid/test in ``shard0``, every shard with the same dictionaries).  fairseq reads them as
``DATA=OUT/data-bin/shard0:OUT/data-bin/shard1:...`` and trains epoch *e* on shard *(e-1) mod N*.  Steps 2-3 of
one shard run alone with ``--shard-id K``: learn once (``--shards N --learn-only``), copy ``OUT/models`` to the
other machines, run ``--shard-id K`` there and collect the ``shardK`` folders.

``OUT/binarize.json`` records the result (see :func:`binarize`), including the ``--bpe``/``--tokenizer``
arguments that ``fairseq-generate`` needs to decode the target language.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys

from preprocess.common import UserError, atomic_output, read_lines, run_main

SCHEMES = ("sentencepiece", "spaces", "bite", "flota", "wordmap")
SPLITS = ("train", "valid", "test")

#: every option of a scheme configuration, with its default (``binarize()`` accepts a dict with any subset)
DEFAULTS = {
    "scheme": "spaces",
    # SentencePiece (sentencepiece, spaces, bite; the base models of wordmap)
    "vocab_size": 8000,
    "model_type": "unigram",
    "variant": None,            # default: "prime" for spaces, "default" otherwise
    "spaces": "keep",           # spaces: keep | drop
    "character_coverage": 1.0,
    "input_sentence_size": 0,   # sample this many training sentences for SentencePiece (0 = all)
    "seed": 1,
    # BITE
    "bite_langs": ["en"],
    "bite_tagger": "nltk",
    "bite_pretokenizer": "moses",
    "bite_single_char": False,
    # FLOTA
    "flota_vocab": None,
    "flota_style": "auto",
    "flota_k": 3,
    "flota_mode": "flota",
    "flota_noise_p": 0.0,       # test split only
    "flota_noise_seed": 0,
    # Wordmap
    "wordmap_langs": ["de"],
    "wordmap_max_lines": 0,     # tag only the first N training lines to extract verbs (0 = all)
}


def make_config(scheme_config: dict | None = None, **overrides) -> dict:
    """A complete, validated scheme configuration: DEFAULTS updated with ``scheme_config`` and ``overrides``."""
    cfg = dict(DEFAULTS)
    for source in (scheme_config or {}, overrides):
        for key, value in source.items():
            key = key.replace("-", "_")
            if key not in DEFAULTS:
                raise UserError(f"unknown scheme option {key!r}; known: {', '.join(sorted(DEFAULTS))}")
            if value is not None:
                cfg[key] = value
    if cfg["scheme"] not in SCHEMES:
        raise UserError(f"unknown scheme {cfg['scheme']!r}; choose from {', '.join(SCHEMES)}")
    if cfg["variant"] is None:
        cfg["variant"] = "prime" if cfg["scheme"] == "spaces" else "default"
    if cfg["model_type"] not in ("unigram", "bpe"):
        raise UserError(f"model_type must be unigram or bpe, not {cfg['model_type']!r}")
    if cfg["spaces"] not in ("keep", "drop"):
        raise UserError(f"spaces must be keep or drop, not {cfg['spaces']!r}")
    for key in ("bite_langs", "wordmap_langs"):
        if isinstance(cfg[key], str):
            cfg[key] = [x for x in cfg[key].split(",") if x]
        cfg[key] = list(cfg[key])
    if cfg["scheme"] == "flota":
        if not cfg["flota_vocab"]:
            raise UserError("--scheme flota needs --flota-vocab (a token list, SentencePiece model, dict.txt ...)")
        cfg["flota_vocab"] = os.path.abspath(cfg["flota_vocab"])
        if not os.path.isfile(cfg["flota_vocab"]):
            raise UserError(f"FLOTA vocabulary not found: {cfg['flota_vocab']}")
    if not 0.0 <= float(cfg["flota_noise_p"]) <= 1.0:
        raise UserError("flota_noise_p must be between 0 and 1")
    return cfg


# --- helpers -------------------------------------------------------------------------------------------------

def raw_file(raw_dir: str, split: str, lang: str, required: bool = True) -> str | None:
    for name in (f"{split}.{lang}", f"{split}.{lang}.gz"):
        path = os.path.join(raw_dir, name)
        if os.path.isfile(path):
            return path
    if required:
        raise UserError(f"missing {split}.{lang} (or .gz) in {raw_dir}")
    return None


def count_text_lines(path: str) -> int:
    return sum(1 for _ in read_lines(path))


def _tool(name: str) -> str:
    """A console script of this Python's environment (the venv's bin/ first), else from PATH."""
    here = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.isfile(here):
        return here
    found = shutil.which(name)
    if not found:
        raise UserError(f"{name} not found (is fairseq installed in this environment?)")
    return found


def _run(cmd: list, quiet: bool) -> None:
    cmd = [str(c) for c in cmd]
    env = dict(os.environ)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = repo + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if not quiet:
        print("+ " + " ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, env=env, capture_output=quiet, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or "")[-3000:] if quiet else ""
        raise UserError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{tail}")


def _encode(scheme_args: list, inputs: list, outputs: list, workers: int, quiet: bool) -> None:
    from preprocess import encode

    argv = [*map(str, scheme_args), "--inputs", *map(str, inputs), "--outputs", *map(str, outputs),
            "--workers", str(workers)]
    if quiet:
        argv.append("--quiet")
    encode.main(argv)


def _write_lines_range(src: str, dst: str, start: int, stop: int) -> int:
    with atomic_output(dst) as out:
        n = 0
        for line in itertools.islice(read_lines(src), start, stop):
            out.write(line + "\n")
            n += 1
    return n


def _decode_args_sentencepiece(model: str) -> list:
    return ["--bpe", "sentencepiece", "--sentencepiece-model", model]


# --- step 1: learn -------------------------------------------------------------------------------------------

def _train_spm(cfg: dict, inputs: list, prefix: str, variant: str | None = None, symbols=None) -> str:
    from preprocess import spaces

    return spaces.train(inputs, prefix, model_type=cfg["model_type"], variant=variant or cfg["variant"],
                        vocab_size=int(cfg["vocab_size"]), character_coverage=float(cfg["character_coverage"]),
                        input_sentence_size=int(cfg["input_sentence_size"]), seed=cfg["seed"],
                        extra_symbols=symbols, num_threads=2)


def learn(cfg: dict, raw_dir: str, out_dir: str, src: str, tgt: str, workers: int = 1,
          quiet: bool = True) -> dict:
    """Learn the subword model(s) and dictionaries; returns the per-language encode/decode recipe."""
    models = os.path.join(out_dir, "models")
    os.makedirs(models, exist_ok=True)
    train = {lang: raw_file(raw_dir, "train", lang) for lang in (src, tgt)}
    scheme = cfg["scheme"]
    encode_args, decode_args, dicts = {}, {}, {}
    joined = True

    if scheme in ("sentencepiece", "spaces"):
        model = _train_spm(cfg, [train[src], train[tgt]], os.path.join(models, "spm"))
        for lang in (src, tgt):
            encode_args[lang] = ["--scheme", "spaces", "--model", model, "--spaces", cfg["spaces"]]
            dicts[lang] = os.path.join(models, "spm.dict.txt")
            decode_args[lang] = _decode_args_sentencepiece(model) if scheme == "sentencepiece" else \
                ["--bpe", "spaces", "--spaces-model", model, "--spaces", cfg["spaces"]]

    elif scheme == "bite":
        bite_opts = ["--tagger", cfg["bite_tagger"], "--pretokenizer", cfg["bite_pretokenizer"]]
        if cfg["bite_single_char"]:
            bite_opts.append("--single-char")
        spm_inputs = []
        for lang in (src, tgt):
            if lang in cfg["bite_langs"]:  # the subword model learns from BITE's output on this side
                bite_text = os.path.join(models, f"train.bite.{lang}")
                _encode(["--scheme", "bite", *bite_opts], [train[lang]], [bite_text], workers, quiet)
                spm_inputs.append(bite_text)
            else:
                spm_inputs.append(train[lang])
        model = _train_spm(cfg, spm_inputs, os.path.join(models, "spm"),
                           symbols=_bite_symbols(cfg["bite_single_char"]))
        tokenizer = ["--tokenizer", "bite", "--bite-tagger", cfg["bite_tagger"],
                     "--bite-pretokenizer", cfg["bite_pretokenizer"]]
        if cfg["bite_single_char"]:
            tokenizer.append("--bite-single-char")
        for lang in (src, tgt):
            dicts[lang] = os.path.join(models, "spm.dict.txt")
            if lang in cfg["bite_langs"]:
                encode_args[lang] = ["--scheme", "bite", *bite_opts, "--subword-model", model]
                decode_args[lang] = [*tokenizer, *_decode_args_sentencepiece(model)]
            else:
                encode_args[lang] = ["--scheme", "spaces", "--model", model, "--spaces", "keep"]
                decode_args[lang] = _decode_args_sentencepiece(model)

    elif scheme == "flota":
        from preprocess import flota

        dict_path = os.path.join(models, "flota.dict.txt")
        flota.write_fairseq_dict(flota.load_vocab(cfg["flota_vocab"]), dict_path)
        opts = ["--flota-vocab", cfg["flota_vocab"], "--flota-style", cfg["flota_style"],
                "--flota-k", str(cfg["flota_k"]), "--flota-mode", cfg["flota_mode"]]
        for lang in (src, tgt):
            encode_args[lang] = ["--scheme", "flota", *opts]
            dicts[lang] = dict_path
            decode_args[lang] = ["--bpe", "flota", *opts]

    elif scheme == "wordmap":
        joined = False
        for lang in (src, tgt):
            if lang in cfg["wordmap_langs"]:
                vocab = os.path.join(models, f"wordmap.{lang}.txt")
                prefix = os.path.join(models, f"wordmap-spm.{lang}")
                build = [sys.executable, "-m", "preprocess.wordmap", "build", "--input", train[lang],
                         "--output", vocab, "--spm-prefix", prefix, "--spm-vocab-size", str(cfg["vocab_size"]),
                         "--spm-type", cfg["model_type"]]
                if cfg["wordmap_max_lines"]:
                    build += ["--max-lines", str(cfg["wordmap_max_lines"])]
                if quiet:
                    build.append("--quiet")
                _run(build, quiet)
                encode_args[lang] = ["--scheme", "wordmap", "--wordmap-vocab", vocab,
                                     "--wordmap-spm", prefix + ".model"]
                decode_args[lang] = ["--bpe", "wordmap", "--wordmap-vocab", vocab, "--wordmap-spm", prefix + ".model"]
                # Wordmap pieces are not all in one model's vocabulary: the dictionary comes from the data
                full = os.path.join(out_dir, "tok", f"train.{lang}")
                _encode(encode_args[lang], [train[lang]], [full], workers, quiet)
                dict_dir = os.path.join(models, f"dict-{lang}")
                _run([_tool("fairseq-preprocess"), "--only-source", "--source-lang", lang, "--trainpref",
                      os.path.join(out_dir, "tok", "train"), "--destdir", dict_dir, "--dict-only",
                      "--workers", str(workers)], quiet)
                dicts[lang] = os.path.join(dict_dir, f"dict.{lang}.txt")
            else:
                model = _train_spm(cfg, [train[lang]], os.path.join(models, f"spm.{lang}"))
                encode_args[lang] = ["--scheme", "spaces", "--model", model, "--spaces", "keep"]
                decode_args[lang] = _decode_args_sentencepiece(model)
                dicts[lang] = os.path.join(models, f"spm.{lang}.dict.txt")

    return {"encode_args": encode_args, "decode_args": decode_args, "dicts": dicts, "joined": joined}


def _bite_symbols(single_char: bool) -> list:
    """BITE's inflection symbols plus its escape/spacing marks, kept as single always-known pieces."""
    from preprocess import bite

    if hasattr(bite, "USER_SYMBOLS"):
        return list(bite.USER_SYMBOLS_SINGLE if single_char else bite.USER_SYMBOLS)
    return list(bite.SINGLE_CHAR_SYMBOLS if single_char else bite.INFLECTION_SYMBOLS)


# --- steps 2 and 3: encode and binarise ------------------------------------------------------------------------

def _split_encode_args(cfg: dict, learned: dict, lang: str, split: str) -> list:
    args = list(learned["encode_args"][lang])
    if cfg["scheme"] == "flota" and split == "test" and float(cfg["flota_noise_p"]) > 0:
        args += ["--noise-p", str(cfg["flota_noise_p"]), "--noise-seed", str(cfg["flota_noise_seed"])]
    return args


def encode_and_binarize_shard(cfg: dict, learned: dict, raw_dir: str, out_dir: str, src: str, tgt: str,
                              shard: int, shards: int, workers: int = 1, quiet: bool = True) -> str:
    """Encode and binarise one shard (``shards == 1``: the whole corpus); returns its data-bin folder."""
    tok = os.path.join(out_dir, "tok")
    os.makedirs(tok, exist_ok=True)
    bin_dir = os.path.join(out_dir, "data-bin") if shards == 1 else os.path.join(out_dir, "data-bin", f"shard{shard}")
    splits = ["train"] + ([s for s in ("valid", "test") if raw_file(raw_dir, s, src, False)] if shard == 0 else [])
    prefixes = {}
    for split in splits:
        name = split if shards == 1 else (f"train.shard{shard}" if split == "train" else split)
        for lang in (src, tgt):
            raw = raw_file(raw_dir, split, lang)
            dst = os.path.join(tok, f"{name}.{lang}")
            if split == "train" and shards > 1:
                n = count_text_lines(raw)
                start, stop = shard * n // shards, (shard + 1) * n // shards
                part = os.path.join(tok, f".raw.{name}.{lang}")
                _write_lines_range(raw, part, start, stop)
                _encode(_split_encode_args(cfg, learned, lang, split), [part], [dst], workers, quiet)
                os.unlink(part)
            elif not (split == "train" and os.path.isfile(dst) and cfg["scheme"] == "wordmap"
                      and lang in cfg["wordmap_langs"]):  # already encoded while learning its dictionary
                _encode(_split_encode_args(cfg, learned, lang, split), [raw], [dst], workers, quiet)
        for lang in (src, tgt):  # never binarise misaligned text
            if split != "train" or shards == 1:
                expected = count_text_lines(raw_file(raw_dir, split, src))
                got = count_text_lines(os.path.join(tok, f"{name}.{lang}"))
                if got != expected:
                    raise UserError(f"encoded {name}.{lang} has {got} lines, raw {split}.{src} has {expected}")
        prefixes[split] = os.path.join(tok, name)

    if os.path.isdir(bin_dir):
        shutil.rmtree(bin_dir)
    cmd = [_tool("fairseq-preprocess"), "--source-lang", src, "--target-lang", tgt, "--destdir", bin_dir,
           "--workers", str(workers), "--trainpref", prefixes["train"]]
    for split in ("valid", "test"):
        if split in prefixes:
            cmd += [f"--{split}pref", prefixes[split]]
    if learned["joined"]:
        cmd += ["--joined-dictionary", "--srcdict", learned["dicts"][src]]
    else:
        cmd += ["--srcdict", learned["dicts"][src], "--tgtdict", learned["dicts"][tgt]]
    _run(cmd, quiet)
    return bin_dir


def binarize(scheme_config: dict, raw_dir: str, out_dir: str, src: str = "en", tgt: str = "de",
             shards: int = 1, shard_id: int | None = None, workers: int = 1, learn_only: bool = False,
             quiet: bool = True) -> dict:
    """Learn, encode and binarise; returns (and writes to ``OUT/binarize.json``)::

        {"scheme": ..., "config": {...}, "src": "en", "tgt": "de",
         "data": "OUT/data-bin" or "OUT/data-bin/shard0:OUT/data-bin/shard1:...",   # fairseq-train's DATA
         "data_bin": [shard dirs], "joined_dictionary": bool,
         "train_args": ["--share-all-embeddings"] or ["--share-decoder-input-output-embed"],
         "generate_args": [...],        # --bpe/--tokenizer ... to decode the target language
         "source_args": [...],          # the same for the source language (e.g. fairseq-interactive)
         "encode_args": {lang: [...]},  # preprocess.encode options of each language
         "dicts": {lang: path}, "tok_dir": ..., "models_dir": ..., "lines": {split: n}}

    Learning is skipped when ``OUT/models/learned.json`` exists for the same configuration (so shards can run
    on other machines from a copied ``OUT/models``).
    """
    cfg = make_config(scheme_config)
    raw_dir, out_dir = os.path.abspath(raw_dir), os.path.abspath(out_dir)
    if src == tgt:
        raise UserError("--src and --tgt must differ")
    if shards < 1:
        raise UserError("--shards must be at least 1")
    if shard_id is not None and not 0 <= shard_id < shards:
        raise UserError(f"--shard-id must be in 0..{shards - 1}")
    for split in ("train", "valid"):
        for lang in (src, tgt):
            raw_file(raw_dir, split, lang)
    lines = {}
    for split in SPLITS:
        if raw_file(raw_dir, split, src, False):
            n_src = count_text_lines(raw_file(raw_dir, split, src))
            n_tgt = count_text_lines(raw_file(raw_dir, split, tgt))
            if n_src != n_tgt:
                raise UserError(f"{split}.{src} has {n_src} lines but {split}.{tgt} has {n_tgt}: not aligned")
            lines[split] = n_src
    if lines["train"] < shards:
        raise UserError(f"{lines['train']} training lines cannot make {shards} shards")

    os.makedirs(out_dir, exist_ok=True)
    learned_path = os.path.join(out_dir, "models", "learned.json")
    learned = None
    if os.path.isfile(learned_path):
        with open(learned_path, encoding="utf-8") as fh:
            saved = json.load(fh)
        if saved.get("config") == cfg and saved.get("src") == src and saved.get("tgt") == tgt:
            learned = saved["learned"]
        elif shard_id is not None:
            raise UserError(f"{learned_path} was learned with another configuration; use a fresh --out")
    if learned is None:
        if shard_id is not None and shards > 1 and not os.path.isdir(os.path.join(out_dir, "models")):
            print("note: no learned models in OUT/models; learning them here (run --learn-only once and copy "
                  "OUT/models to share one model between shard machines)", file=sys.stderr)
        learned = learn(cfg, raw_dir, out_dir, src, tgt, workers, quiet)
        with atomic_output(learned_path) as fh:
            json.dump({"config": cfg, "src": src, "tgt": tgt, "learned": learned}, fh, indent=1)

    all_dirs = [os.path.join(out_dir, "data-bin")] if shards == 1 else \
        [os.path.join(out_dir, "data-bin", f"shard{k}") for k in range(shards)]
    if not learn_only:
        for k in ([shard_id] if shard_id is not None else range(shards)):
            encode_and_binarize_shard(cfg, learned, raw_dir, out_dir, src, tgt, k, shards, workers, quiet)

    result = {
        "scheme": cfg["scheme"], "config": cfg, "src": src, "tgt": tgt,
        "data": ":".join(all_dirs), "data_bin": all_dirs,
        "joined_dictionary": learned["joined"],
        "train_args": ["--share-all-embeddings"] if learned["joined"] else ["--share-decoder-input-output-embed"],
        "generate_args": learned["decode_args"][tgt], "source_args": learned["decode_args"][src],
        "encode_args": learned["encode_args"], "dicts": learned["dicts"],
        "tok_dir": os.path.join(out_dir, "tok"), "models_dir": os.path.join(out_dir, "models"),
        "raw_dir": raw_dir, "lines": lines,
    }
    if shard_id is None and not learn_only:
        with atomic_output(os.path.join(out_dir, "binarize.json")) as fh:
            json.dump(result, fh, indent=1)
    return result


# --- monolingual data for RoBERTa pretraining -------------------------------------------------------------------

def binarize_lm(scheme_config: dict, raw_dir: str, out_dir: str, lang: str = "en", workers: int = 1,
                quiet: bool = True) -> dict:
    """Monolingual version for ``masked_lm``: ``RAW/{train,valid}.LANG`` -> ``OUT/data-bin/{dict.txt,train,valid}``.

    Returns the same kind of dict as :func:`binarize` (written to ``OUT/binarize.json``) with ``"lm": True``,
    ``encode_args`` (how fine-tuning data must be encoded for this model) and ``dict`` (the model's dict.txt).
    Schemes: sentencepiece, spaces, bite (BITE applied to LANG when it is in ``bite_langs``), flota.
    """
    cfg = make_config(scheme_config)
    if cfg["scheme"] == "wordmap":
        raise UserError("wordmap is a translation-side scheme for German verbs; pretrain with another scheme")
    raw_dir, out_dir = os.path.abspath(raw_dir), os.path.abspath(out_dir)
    train, valid = raw_file(raw_dir, "train", lang), raw_file(raw_dir, "valid", lang)
    models = os.path.join(out_dir, "models")
    os.makedirs(models, exist_ok=True)
    scheme = cfg["scheme"]
    if scheme == "flota":
        from preprocess import flota

        dict_path = os.path.join(models, "flota.dict.txt")
        flota.write_fairseq_dict(flota.load_vocab(cfg["flota_vocab"]), dict_path)
        encode_args = ["--scheme", "flota", "--flota-vocab", cfg["flota_vocab"], "--flota-style",
                       cfg["flota_style"], "--flota-k", str(cfg["flota_k"]), "--flota-mode", cfg["flota_mode"]]
        model = None
    elif scheme == "bite" and lang in cfg["bite_langs"]:
        bite_opts = ["--tagger", cfg["bite_tagger"], "--pretokenizer", cfg["bite_pretokenizer"]]
        if cfg["bite_single_char"]:
            bite_opts.append("--single-char")
        bite_text = os.path.join(models, f"train.bite.{lang}")
        _encode(["--scheme", "bite", *bite_opts], [train], [bite_text], workers, quiet)
        model = _train_spm(cfg, [bite_text], os.path.join(models, "spm"), symbols=_bite_symbols(cfg["bite_single_char"]))
        encode_args = ["--scheme", "bite", *bite_opts, "--subword-model", model]
        dict_path = os.path.join(models, "spm.dict.txt")
    else:
        model = _train_spm(cfg, [train], os.path.join(models, "spm"))
        encode_args = ["--scheme", "spaces", "--model", model, "--spaces", cfg["spaces"]]
        dict_path = os.path.join(models, "spm.dict.txt")
    tok = os.path.join(out_dir, "tok")
    os.makedirs(tok, exist_ok=True)
    for split, raw in (("train", train), ("valid", valid)):
        _encode(encode_args, [raw], [os.path.join(tok, f"{split}.{lang}")], workers, quiet)
    bin_dir = os.path.join(out_dir, "data-bin")
    if os.path.isdir(bin_dir):
        shutil.rmtree(bin_dir)
    _run([_tool("fairseq-preprocess"), "--only-source", "--trainpref", os.path.join(tok, f"train.{lang}"),
          "--validpref", os.path.join(tok, f"valid.{lang}"), "--destdir", bin_dir, "--srcdict", dict_path,
          "--workers", str(workers)], quiet)
    result = {"scheme": scheme, "config": cfg, "lm": True, "lang": lang, "data": bin_dir, "data_bin": [bin_dir],
              "encode_args": encode_args, "dict": os.path.join(bin_dir, "dict.txt"), "subword_model": model,
              "tok_dir": tok, "models_dir": models, "raw_dir": raw_dir,
              "lines": {"train": count_text_lines(train), "valid": count_text_lines(valid)}}
    with atomic_output(os.path.join(out_dir, "binarize.json")) as fh:
        json.dump(result, fh, indent=1)
    return result


# --- command line ------------------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m train_scripts.binarize", description=__doc__.split("\n\n")[0],
                                epilog="Schemes and sharding are described in the module documentation "
                                       "(README, section Training recipes).",
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--scheme", required=True, choices=SCHEMES, help="tokenisation scheme")
    p.add_argument("--data", required=True, help="folder with {train,valid,test}.{SRC,TGT} raw text")
    p.add_argument("--src", default="en", help="source language suffix")
    p.add_argument("--tgt", default="de", help="target language suffix")
    p.add_argument("--out", required=True, help="output folder (models/, tok/, data-bin/, binarize.json)")
    p.add_argument("--shards", type=int, default=1, help="cut the training data into N data-bin shards")
    p.add_argument("--shard-id", type=int, default=None, help="encode and binarise only this shard")
    p.add_argument("--learn-only", action="store_true", help="only learn the models and dictionaries")
    p.add_argument("--workers", type=int, default=1, help="processes for encoding and fairseq-preprocess")
    p.add_argument("--verbose", action="store_true", help="show progress and the commands run")
    p.add_argument("--lm", action="store_true",
                   help="monolingual data for RoBERTa pretraining: {train,valid}.SRC -> data-bin/dict.txt, train, "
                        "valid (--tgt is ignored)")
    g = p.add_argument_group("subword model (sentencepiece, spaces, bite, wordmap)")
    g.add_argument("--vocab-size", type=int, default=DEFAULTS["vocab_size"])
    g.add_argument("--model-type", choices=["unigram", "bpe"], default=DEFAULTS["model_type"])
    g.add_argument("--variant", choices=["default", "prime"], default=None,
                   help="SentencePiece variant (default: prime for spaces, default otherwise)")
    g.add_argument("--spaces", choices=["keep", "drop"], default="keep",
                   help="spaces: keep the space tokens, or drop them (lossy 'no spaces' variant)")
    g.add_argument("--character-coverage", type=float, default=DEFAULTS["character_coverage"])
    g.add_argument("--input-sentence-size", type=int, default=0,
                   help="train SentencePiece on a sample of this many sentences (0 = all)")
    g.add_argument("--seed", type=int, default=DEFAULTS["seed"], help="SentencePiece seed")
    g = p.add_argument_group("bite")
    g.add_argument("--bite-langs", default="en", help="comma-separated languages BITE is applied to")
    g.add_argument("--bite-tagger", choices=["nltk", "hanta"], default="nltk")
    g.add_argument("--bite-pretokenizer", choices=["moses", "whitespace", "bert"], default="moses")
    g.add_argument("--bite-single-char", action="store_true", help="single-character inflection symbols")
    g = p.add_argument_group("flota")
    g.add_argument("--flota-vocab", help="vocabulary (token list, .model, dict.txt, vocab.txt, encoder.json)")
    g.add_argument("--flota-style", choices=["auto", "wordpiece", "gpt2", "sentencepiece"], default="auto")
    g.add_argument("--flota-k", type=int, default=3)
    g.add_argument("--flota-mode", choices=["flota", "first", "longest"], default="flota")
    g.add_argument("--flota-noise-p", type=float, default=0.0, help="whitespace noise in the test split only")
    g.add_argument("--flota-noise-seed", type=int, default=0)
    g = p.add_argument_group("wordmap")
    g.add_argument("--wordmap-langs", default="de", help="comma-separated languages Wordmap is applied to")
    g.add_argument("--wordmap-max-lines", type=int, default=0, help="extract verbs from the first N lines")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    cfg = {key: getattr(args, key) for key in DEFAULTS}
    if args.lm:
        result = binarize_lm(cfg, args.data, args.out, args.src, workers=args.workers, quiet=not args.verbose)
        print(json.dumps({k: result[k] for k in ("data", "dict", "encode_args")}))
        return 0
    result = binarize(cfg, args.data, args.out, args.src, args.tgt, shards=args.shards, shard_id=args.shard_id,
                      workers=args.workers, learn_only=args.learn_only, quiet=not args.verbose)
    print(json.dumps({k: result[k] for k in ("data", "joined_dictionary", "train_args", "generate_args")}))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
