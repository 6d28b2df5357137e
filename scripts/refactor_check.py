#!/usr/bin/env python3
"""Refactor safety net: the outputs a refactor must leave byte-identical, hashed.

A refactor is not a behaviour change.  This script runs a checkout's command-line tools (``python -m ...``, never
its internals, so a refactored module layout runs the same commands) and compares sha256 hashes of what they write
with ``scripts/refactor_hashes.json``, recorded from the baseline (commit a5265f7, main before the refactor)::

    .venv/bin/python scripts/refactor_check.py --check                  # this checkout against the recorded hashes
    .venv/bin/python scripts/refactor_check.py --check --repo ../other  # another checkout (a worktree)
    .venv/bin/python scripts/refactor_check.py --record --repo DIR      # write the hashes (the baseline only)
    .venv/bin/python scripts/refactor_check.py --check --only encode    # some steps (names below)

``--check`` prints one line per mismatch (``MISMATCH key``, ``MISSING key`` = the baseline wrote it and this
checkout did not, ``EXTRA key`` = written now, not by the baseline) and exits 1 on any, 0 when every hash matches.
``--work DIR``: scratch folder (empty or new; kept), default a temporary folder removed afterwards (``--keep``
keeps it); ``--shared DIR``: the shared data (default ``REPO/../shared/data``); ``--output FILE``: also write the
hashes computed now (to diff them).  Not part of the test suite, no Makefile target: run the command above.  The
commands run one at a time with one worker each (two encode commands with two, to cover the parallel encoder),
with ``PYTHONPATH=REPO``, the working directory ``REPO``, ``NLTK_DATA=SHARED/nltk_data`` and one torch thread.
Run it with the project's Python (``.venv/bin/python``): every command runs under the interpreter that runs this
script (``python -m``, so the checkout's code, not the console scripts, which point at the installed checkout).
Compiled twins (the ``_*.so`` files of setup.py's COMPILED) only change speed; build them in a bare worktree with
``.venv/bin/python setup.py build_ext --inplace``.

Time, on the project's 2-core machine, 1,938 hashes: ``--record`` of the baseline worktree 15 min 9 s and two
repeat ``--check`` runs 16 min 48 s and 11 min 47 s (all 1,938 matched both times), the first two while other
people's test runs kept the load at 5-6 on the 2 cores, the last at load 1-4; the check is serial and uses about 9
CPU minutes (8-9 user, 1 system), so about 10 minutes on an idle machine.  The ``demo`` step is the longest (6-8
minutes: nine rows of the pipeline, each starting fairseq four times), then ``encode``, ``classification``,
``binarize-lm`` and ``learn`` (0.5-3 minutes each).

What is hashed (keys are ``step/...`` relative names; the step names are what ``--only`` takes):

``input``
    The shared data read (Multi30k's eight files, the morph gold, vocabularies, models, CSVs, the LM text slice): a
    changed input explains every other mismatch.
``learn``
    ``train_scripts.binarize --learn-only`` of every row of the demo (``translation_rows.ROWS``: bpe, unigram, bpe_prime,
    bpe_prime_nospace, unigram_prime, unigram_prime_nospace, bite_unigram, wordmap, flota; seed 1, character
    coverage 1.0) on all 29,000 Multi30k training pairs at 8,000 pieces (the gpu preset's learn step): every file
    under ``models/`` (SentencePiece models, fairseq dictionaries, BITE's tagged and encoded training text, the
    Wordmap vocabulary and its models).  These are the models the ``encode`` step uses.
``encode``
    ``python -m preprocess.encode`` of ALL of Multi30k, both sides (train, val, test_2016_flickr,
    test_2017_flickr; .en and .de: 32,014 lines a side) with every encoder configuration the demo's rows and
    presets use: spaces/sentencepiece with the learned BPE and Unigram models (default and prime, ``--spaces keep``
    and ``drop``) and the paper's four published models (the ``published_*`` rows); BITE with the nltk tagger, the
    published algorithm and ``--bite-exact``, with and without the learned BITE+Unigram subword model, and
    single-character symbols; BITE with the hanta tagger (not used by the demo, covered all the same); FLOTA
    with k = 1..4 over the three shared vocabularies (bert-base-uncased, gpt2, xlnet-base-cased) and over the
    learned Unigram model in the modes flota, first and longest (the pretraining part's FLOTA table; the
    translation row is k = 3), and k = 3 with the noisy test set's whitespace noise (0.3, seed 1); Wordmap with the
    learned vocabulary, with and without its dictionary as the inventory.  Two configurations again with
    ``--workers 2``, one of them reading the .gz files (the parallel and the streaming encoder).
``binarize``
    ``python -m train_scripts.binarize`` (translation) of every demo row on a slice: the first 2,000 training
    pairs, 300 of val, 500 of test_2016_flickr, 4,000 pieces (the cpu preset's vocabulary): binarize.json, models/,
    tok/, data-bin/ (.bin, .idx, dict files, preprocess.log).
``binarize-lm``
    ``python -m train_scripts.binarize --lm`` of every row of the pretraining part (``lm_plan.LM_ROW_NAMES`` and the
    six ``published_*`` rows; options as ``lm_plan.Plan.binarize_command``) on the first 5,000 lines of the Brown
    corpus (``english_lm/brown.txt.gz``, blank lines between documents) and the next 500 as validation text, 4,000
    pieces.
``classification``
    ``python -m train_scripts.classification_data prepare`` as the pretraining part runs it, over the Unigram LM
    row's data, on the first 300 rows of each CSV: Superbizarre arxiv (standard encoding) and ArXiv-L physics
    (standard and FLOTA/FIRST/LONGEST for k = 1..4, whitespace noise 0.3 seed 1 on the noisy test copy): raw/,
    tok/, data-bin/, label.dict.txt, classification.json (its tokens per example are the FLOTA table's Table 3).
``demo``
    ``morphtok-demo --part translation`` (``python -m train_scripts.demo.pipeline``) with ``--schemes all`` on a slice
    (2,000 training pairs, 20 validation, 200 test; 4,000 pieces; the default noise 0.3, seed 1; the default gold
    files and example ids), with a token training budget (one update of a 1-layer, 8-dimension model): the model is
    never looked at.  Hashed: the data and noise stages (raw/, test.infl.en, test.ws.en), every row's
    binarized/ (models, tok, data-bin, binarize.json) and noisy/ (the perturbed test sets encoded and binarised),
    every model-free field of each row in results.json (one key per row and field: config, dict_sizes, robustness,
    the length columns, vocab, boundary, tokenizer_scores, extra, examples, label, note, direction) and the noise
    statistics of its meta; and the model-free tables as the report renders them: the results reduced to those
    fields, rendered by ``python -m train_scripts.demo.translation.report``, one key per section of its REPORT.md.
``dry-run``
    The commands ``morphtok-demo --dry-run`` prints for both parts, cpu and gpu presets, every row.
``reports``
    Both parts' report tables, rendered by the checkout's report code from a finished demo's results (``--reports
    DIR``: a ``morphtok-demo --output`` folder holding ``results.json`` and/or ``pretraining/results.json``, copied
    to the scratch folder; without it the step hashes nothing and says so).  One key per table row,
    ``reports/<section>/<row>``, with the timing columns (wall, minutes, seconds, time) left out: the report of a
    real run, every number of every model included, is what a change of the report or analysis code must keep.
    A checkout from before the demo's one report (no ``train_scripts/demo/demo_report.py``) renders with
    ``train_scripts.report`` and ``train_scripts.lm_report``, as it did.

Normalised or left out (and why):

* Absolute paths (the scratch folder, the checkout, the shared data, the interpreter) are replaced by ``<WORK>``,
  ``<REPO>``, ``<SHARED>`` and ``<PYTHON>`` in every text file, JSON value and printed command: binarize.json,
  learned.json, classification.json, fairseq's preprocess.log and the dry runs name their folders.
* SentencePiece ``.model`` files are hashed with their ``trainer_spec.input`` and ``trainer_spec.model_prefix``
  cleared (the training files' paths and a random temporary folder of ``preprocess.models.spm.train``); every other byte
  of the model is hashed.
* classification.json's ``key.lm_dict_mtime`` (a file modification time) is replaced by ``<MTIME>``.
* Everything a trained model gives in the demo run is left out: checkpoints/, eval*/, logs/, valid_curve.json, the
  BLEU/chrF/loss/budget/timing fields of results.json, the pipeline's own REPORT.md, report.html and plots, the
  stage records (.stages/: timings), commands.txt, and results.json's meta apart from the noise statistics (it
  holds versions, core counts and times).  Of the model-free report only REPORT.md is hashed (its plots are PNG
  files, which report.html embeds).
* Nothing else: ``PYTHONHASHSEED`` is not fixed, and two runs of the baseline gave the same hashes.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_REPO = HERE.parent
DEFAULT_HASHES = HERE / "refactor_hashes.json"

#: Multi30k's files (all of them), one sentence per line, aligned
MULTI30K = ("train", "val", "test_2016_flickr", "test_2017_flickr")
LANGS = ("en", "de")
#: the slice of the binarize and demo steps (the cpu preset's valid/test sizes, 2,000 training pairs)
SLICE = {"train": ("train", 2000), "valid": ("val", 300), "test": ("test_2016_flickr", 500)}
SLICE_VOCAB = 4000      # the cpu preset's vocabulary
FULL_VOCAB = 8000       # the gpu preset's vocabulary (all 29,000 pairs)
LM_LINES = (5_000, 500)   # train, valid lines of the LM slice (brown.txt.gz)
#: validation and test pairs of the demo run (training pairs: SLICE's)
DEMO_LINES = {"valid": 20, "test": 200}
CLS_ROWS = 300

#: the demo's rows (train_scripts/demo/pipeline.py ROWS at a5265f7), and what RowRun.config adds to each
ROWS = {
    "bpe": {"scheme": "sentencepiece", "model_type": "bpe"},
    "unigram": {"scheme": "sentencepiece", "model_type": "unigram"},
    "bpe_prime": {"scheme": "spaces", "model_type": "bpe"},
    "bpe_prime_nospace": {"scheme": "spaces", "model_type": "bpe", "spaces": "drop"},
    "unigram_prime": {"scheme": "spaces", "model_type": "unigram"},
    "unigram_prime_nospace": {"scheme": "spaces", "model_type": "unigram", "spaces": "drop"},
    "bite_unigram": {"scheme": "bite", "model_type": "unigram"},
    "wordmap": {"scheme": "wordmap", "model_type": "unigram"},
    "flota": {"scheme": "flota", "model_type": "unigram", "flota_k": 3},
}
ROW_COMMON = {"seed": 1, "character_coverage": 1.0}
#: the pretraining part's rows (train_scripts/demo/pretraining/part.py LM_ROW_NAMES and _published_rows at a5265f7)
LM_ROW_NAMES = ("unigram", "unigram_prime", "unigram_prime_nospace", "bpe", "bpe_prime", "bpe_prime_nospace",
                "bite_unigram")


def published_rows(shared: Path) -> dict:
    models = shared / "space_models"
    out = {}
    for kind in ("unigram", "bpe"):
        out[f"published_{kind}"] = {"scheme": "sentencepiece", "spm_model": str(models / f"{kind}_default.model")}
        out[f"published_{kind}_prime"] = {"scheme": "spaces", "spm_model": str(models / f"{kind}_prime.model")}
        out[f"published_{kind}_prime_nospace"] = {"scheme": "spaces", "spm_model": str(models / f"{kind}_prime.model"),
                                                  "spaces": "drop"}
    return out


#: results.json fields of a demo row that no trained model contributes to
MODEL_FREE_FIELDS = ("name", "label", "note", "direction", "config", "dict_sizes", "robustness", "src_tok_per_sent",
                     "tgt_tok_per_sent", "src_tok_per_word", "tgt_tok_per_word", "vocab", "boundary",
                     "tokenizer_scores", "extra", "examples")
#: the demo run's token training budget (its model is never looked at)
DEMO_TRAINING = ["--max-update", "1", "--valid-every", "1", "--average", "1", "--max-tokens", "1024", "--embed-dim",
                 "8", "--ffn-dim", "8", "--heads", "1", "--layers", "1", "--warmup", "1"]

STEPS = ("input", "learn", "encode", "binarize", "binarize-lm", "classification", "demo", "dry-run", "reports")


class StepError(RuntimeError):
    pass


# --- hashing --------------------------------------------------------------------------------------------------

class Hasher:
    def __init__(self, work: Path, repo: Path, shared: Path, python: str):
        subs = {}
        for path, name in ((work, "<WORK>"), (repo, "<REPO>"), (shared, "<SHARED>"), (Path(python), "<PYTHON>")):
            for variant in {str(path), os.path.abspath(path), os.path.realpath(path)}:
                subs[variant] = name
        # longest first: a folder inside another is replaced by its own name
        self.subs = sorted(subs.items(), key=lambda kv: -len(kv[0]))
        self.hashes: dict[str, str] = {}

    def text(self, s: str) -> str:
        for old, new in self.subs:
            s = s.replace(old, new)
        return s

    def _bytes(self, data: bytes) -> bytes:
        for old, new in self.subs:
            data = data.replace(old.encode(), new.encode())
        return data

    def normalised_file(self, path: Path) -> bytes:
        data = path.read_bytes()
        if path.suffix == ".model":
            return spm_model_bytes(data)
        if path.suffix in (".bin", ".idx"):
            return data
        data = self._bytes(data)
        if path.name == "classification.json":
            data = re.sub(rb'"lm_dict_mtime": [0-9.eE+-]+', b'"lm_dict_mtime": "<MTIME>"', data)
        return data

    def add(self, key: str, data: bytes) -> None:
        if key in self.hashes:
            raise StepError(f"key hashed twice: {key}")
        self.hashes[key] = hashlib.sha256(data).hexdigest()

    def add_file(self, key: str, path: Path) -> None:
        self.add(key, self.normalised_file(path))

    def add_tree(self, prefix: str, root: Path, skip=()) -> int:
        """Every file under ``root`` (sorted), keyed ``prefix/relative path``; ``skip``: relative paths (files or
        folders) left out."""
        if not root.is_dir():
            raise StepError(f"missing output folder {root}")
        n = 0
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root).as_posix()
            if any(rel == s or rel.startswith(s + "/") for s in skip) or not path.is_file():
                continue
            self.add_file(f"{prefix}/{rel}", path)
            n += 1
        return n

    def add_value(self, key: str, value) -> None:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        self.add(key, self.text(text).encode("utf-8"))


def spm_model_bytes(data: bytes) -> bytes:
    """A SentencePiece model without the paths of its training files and its output prefix (see the docstring)."""
    try:
        from sentencepiece import sentencepiece_model_pb2
    except ImportError as exc:
        raise StepError(f"cannot read SentencePiece models here ({exc}): run this script with the project's "
                        ".venv/bin/python") from None
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(data)
    del proto.trainer_spec.input[:]
    proto.trainer_spec.ClearField("model_prefix")
    return proto.SerializeToString(deterministic=True)


# --- running the checkout's commands ----------------------------------------------------------------------------

class Context:
    def __init__(self, repo: Path, work: Path, shared: Path, python: str, reports: Path | None = None):
        self.repo, self.work, self.shared, self.python = repo, work, shared, python
        self.reports = reports   # a finished demo's --output folder (step reports)
        self.h = Hasher(work, repo, shared, python)
        self.env = dict(os.environ)
        self.env.update({"PYTHONPATH": str(repo), "NLTK_DATA": str(shared / "nltk_data"), "OMP_NUM_THREADS": "1",
                         "MKL_NUM_THREADS": "1", "PYTHONIOENCODING": "utf-8", "TQDM_DISABLE": "1"})
        self.logs = work / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.n_commands = 0

    def run(self, args: list, name: str) -> str:
        """Run ``python ARGS`` (a module of the checkout) in the checkout; stdout returned, both streams logged."""
        cmd = [self.python, *map(str, args)]
        self.n_commands += 1
        log = self.logs / f"{self.n_commands:03d}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.log"
        proc = subprocess.run(cmd, cwd=self.repo, env=self.env, capture_output=True, text=True)
        log.write_text(f"$ {' '.join(cmd)}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}", encoding="utf-8")
        if proc.returncode != 0:
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-8:])
            raise StepError(f"{name}: exit {proc.returncode}: {' '.join(map(str, args))}\n{tail}")
        return proc.stdout


def options(config: dict) -> list[str]:
    """A scheme configuration as binarize options (``model_type`` -> ``--model-type``)."""
    out = []
    for key, value in config.items():
        if key != "scheme":
            out += [f"--{key.replace('_', '-')}", str(value)]
    return ["--scheme", config["scheme"], *out]


def shared_file(c: Context, *parts: str) -> Path:
    path = c.shared.joinpath(*parts)
    if not path.exists():
        raise StepError(f"shared data missing: {path}")
    return path


def read_gz_lines(path: Path, n: int | None = None, start: int = 0) -> list[str]:
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i < start:
                continue
            if n is not None and len(out) >= n:
                break
            out.append(line.rstrip("\n"))
    return out


def write_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("".join(line + "\n" for line in lines))


# --- the steps ----------------------------------------------------------------------------------------------------

def prepare_inputs(c: Context) -> None:
    """Scratch copies of the inputs: all of Multi30k (plain text), the full and sliced raw folders, the LM slice."""
    data = shared_file(c, "multi30k")
    full, raw, sliced = c.work / "multi30k", c.work / "full-raw", c.work / "slice-raw"
    for name in MULTI30K:
        for lang in LANGS:
            write_lines(full / f"{name}.{lang}", read_gz_lines(data / f"{name}.{lang}.gz"))
    raw.mkdir(parents=True, exist_ok=True)
    for split, (name, n) in SLICE.items():
        for lang in LANGS:
            shutil.copyfile(full / f"{name}.{lang}", raw / f"{split}.{lang}")   # the whole split (learn step)
            write_lines(sliced / f"{split}.{lang}", read_gz_lines(data / f"{name}.{lang}.gz", n))
    brown = shared_file(c, "english_lm", "brown.txt.gz")
    train, valid = LM_LINES
    write_lines(c.work / "lm-raw" / "train.en", read_gz_lines(brown, train))
    write_lines(c.work / "lm-raw" / "valid.en", read_gz_lines(brown, valid, start=train))


def step_input(c: Context) -> None:
    for name in MULTI30K:
        for lang in LANGS:
            c.h.add_file(f"input/multi30k/{name}.{lang}.gz", shared_file(c, "multi30k", f"{name}.{lang}.gz"))
    for rel in ("morph_gold/eng.word.dev.tsv", "morph_gold/deu.derivational.v1.tsv",
                "flota_vocabs/bert-base-uncased.txt", "flota_vocabs/gpt2.txt", "flota_vocabs/xlnet-base-cased.txt",
                *(f"space_models/{m}.model" for m in ("bpe_default", "bpe_prime", "unigram_default", "unigram_prime")),
                "superbizarre/arxiv_train.csv", "superbizarre/arxiv_dev.csv", "superbizarre/arxiv_test.csv",
                *(f"flota_arxiv/arxiv_physics_1e+03_{s}.csv" for s in ("train", "dev", "test"))):
        path = shared_file(c, *rel.split("/"))
        # raw bytes (not normalised): inputs
        c.h.add(f"input/{rel}", path.read_bytes())
    c.h.add_file("input/lm-raw/train.en", c.work / "lm-raw" / "train.en")
    c.h.add_file("input/lm-raw/valid.en", c.work / "lm-raw" / "valid.en")
    tagger = c.shared / "nltk_data"
    for path in sorted(tagger.rglob("*")):
        if path.is_file():
            c.h.add(f"input/nltk_data/{path.relative_to(tagger).as_posix()}", path.read_bytes())


def learned(c: Context, row: str, name: str) -> str:
    return str(c.work / "learn" / row / "models" / name)


def step_learn(c: Context) -> None:
    for row, config in ROWS.items():
        out = c.work / "learn" / row
        c.run(["-m", "train_scripts.binarize", *options({**config, **ROW_COMMON}), "--vocab-size", FULL_VOCAB,
               "--data", c.work / "full-raw", "--src", "en", "--tgt", "de", "--out", out, "--workers", 1,
               "--learn-only"], f"learn {row}")
        c.h.add_tree(f"learn/{row}", out)


def encode_configs(c: Context) -> dict[str, list]:
    """{name: encode options}: every encoder configuration of the demo's rows and presets (see the docstring)."""
    L = lambda row, name: learned(c, row, name)   # noqa: E731
    cfg: dict[str, list] = {}
    spm_models = {"bpe": L("bpe", "spm.model"), "unigram": L("unigram", "spm.model"),
                  "bpe_prime": L("bpe_prime", "spm.model"), "unigram_prime": L("unigram_prime", "spm.model"),
                  "bite_unigram": L("bite_unigram", "spm.model"), "wordmap_en": L("wordmap", "spm.en.model"),
                  "flota": L("flota", "spm.model")}
    for kind in ("bpe_default", "bpe_prime", "unigram_default", "unigram_prime"):
        spm_models[f"published_{kind}"] = str(shared_file(c, "space_models", f"{kind}.model"))
    for name, model in spm_models.items():
        for spaces in ("keep", "drop") if "prime" in name else ("keep",):
            cfg[f"spaces/{name}.{spaces}"] = ["--scheme", "spaces", "--spaces-model", model, "--spaces", spaces]
    bite_sub = ["--bite-subword-model", L("bite_unigram", "spm.model")]
    hanta = ["--bite-tagger", "hanta"]
    for name, extra in (("nltk", []), ("nltk.exact", ["--bite-exact"]), ("nltk.single-char", ["--bite-single-char"]),
                        ("nltk.subword", bite_sub), ("nltk.subword.exact", [*bite_sub, "--bite-exact"]),
                        ("hanta", hanta), ("hanta.exact", [*hanta, "--bite-exact"]),
                        ("hanta.subword", [*hanta, *bite_sub])):
        cfg[f"bite/{name}"] = ["--scheme", "bite", *extra]
    for vocab in ("bert-base-uncased", "gpt2", "xlnet-base-cased"):
        path = str(shared_file(c, "flota_vocabs", f"{vocab}.txt"))
        for k in (1, 2, 3, 4):
            cfg[f"flota/{vocab}.k{k}"] = ["--scheme", "flota", "--flota-vocab", path, "--flota-k", k]
    model = ["--flota-vocab", L("flota", "spm.model"), "--flota-style", "sentencepiece"]
    for mode in ("flota", "first", "longest"):
        for k in (1, 2, 3, 4):
            cfg[f"flota/learned-unigram.{mode}.k{k}"] = ["--scheme", "flota", *model, "--flota-mode", mode,
                                                         "--flota-k", k]
    noise = ["--noise-p", "0.3", "--noise-seed", "1"]
    cfg["flota/learned-unigram.flota.k3.noise"] = ["--scheme", "flota", *model, "--flota-k", 3, *noise]
    cfg["flota/bert-base-uncased.k3.noise"] = ["--scheme", "flota", "--flota-vocab",
                                               str(shared_file(c, "flota_vocabs", "bert-base-uncased.txt")),
                                               "--flota-k", 3, *noise]
    wordmap = ["--scheme", "wordmap", "--wordmap-vocab", L("wordmap", "wordmap.de.txt"),
               "--wordmap-spm", L("wordmap", "wordmap-spm.de.model")]
    cfg["wordmap/dict"] = [*wordmap, "--wordmap-dict", L("wordmap", "dict.wordmap.de.txt")]
    cfg["wordmap/no-dict"] = wordmap
    return cfg


def step_encode(c: Context) -> None:
    files = [f"{name}.{lang}" for name in MULTI30K for lang in LANGS]
    runs = [(name, opts, [c.work / "multi30k" / f for f in files], 1) for name, opts in encode_configs(c).items()]
    # the parallel encoder (byte ranges of a plain file) and the streaming one (.gz input), two workers each
    runs.append(("spaces/unigram_prime.keep.workers2", encode_configs(c)["spaces/unigram_prime.keep"],
                 [c.work / "multi30k" / f for f in files], 2))
    runs.append(("bite/nltk.gz-input.workers2", ["--scheme", "bite"],
                 [shared_file(c, "multi30k", f + ".gz") for f in files], 2))
    for name, opts, inputs, workers in runs:
        out = c.work / "encode" / name
        outputs = [out / f for f in files]
        out.mkdir(parents=True, exist_ok=True)
        c.run(["-m", "preprocess.encode", *opts, "--inputs", *inputs, "--outputs", *outputs, "--workers", workers,
               "--quiet"], f"encode {name}")
        c.h.add_tree(f"encode/{name}", out)


def step_binarize(c: Context) -> None:
    for row, config in ROWS.items():
        out = c.work / "binarize" / row
        c.run(["-m", "train_scripts.binarize", *options({**config, **ROW_COMMON}), "--vocab-size", SLICE_VOCAB,
               "--data", c.work / "slice-raw", "--src", "en", "--tgt", "de", "--out", out, "--workers", 1],
              f"binarize {row}")
        c.h.add_tree(f"binarize/{row}", out)


def lm_rows(c: Context) -> dict:
    return {**{name: ROWS[name] for name in LM_ROW_NAMES}, **published_rows(c.shared)}


def step_binarize_lm(c: Context) -> None:
    for row, config in lm_rows(c).items():
        out = c.work / "binarize-lm" / row
        # as lm_plan.Plan.binarize_command: {"vocab_size": ..., **row.config}, --workers 1
        c.run(["-m", "train_scripts.binarize", "--lm", "--data", c.work / "lm-raw", "--src", "en", "--out", out,
               "--workers", 1, *options({"scheme": config["scheme"], "vocab_size": SLICE_VOCAB, **config})],
              f"binarize-lm {row}")
        c.h.add_tree(f"binarize-lm/{row}", out)


def step_classification(c: Context) -> None:
    lm = c.work / "binarize-lm" / "unigram"
    if not (lm / "binarize.json").is_file():   # --only classification: the LM row's data first
        c.run(["-m", "train_scripts.binarize", "--lm", "--data", c.work / "lm-raw", "--src", "en", "--out", lm,
               "--workers", 1, *options({"scheme": "sentencepiece", "vocab_size": SLICE_VOCAB, **ROWS["unigram"]})],
              "binarize-lm unigram (for classification)")
    superbizarre = shared_file(c, "superbizarre", "arxiv_train.csv").parent / "arxiv"
    physics = shared_file(c, "flota_arxiv", "arxiv_physics_1e+03_train.csv").parent / "arxiv_physics_1e+03"
    noise = ["--noise-p", "0.3", "--noise-seed", "1"]
    runs = {"superbizarre-arxiv/standard": (superbizarre, []), "arxiv-physics-L/standard": (physics, noise)}
    for mode in ("flota", "first", "longest"):
        for k in (1, 2, 3, 4):
            runs[f"arxiv-physics-L/{mode}_k{k}"] = (physics, ["--encode", "flota", "--flota-mode", mode,
                                                              "--flota-k", k, *noise])
    for name, (prefix, extra) in runs.items():
        out = c.work / "classification" / name
        c.run(["-m", "train_scripts.classification_data", "prepare", "--lm-data", lm, "--csv-prefix", prefix,
               "--out", out, "--max-rows", CLS_ROWS, *extra], f"classification {name}")
        c.h.add_tree(f"classification/{name}", out)


def _heading_key(heading: str) -> str:
    """A report heading as part of a hash's name: other characters as ``_``, at most 80 of them."""
    return re.sub(r"[^A-Za-z0-9 ,.'()+-]+", "_", heading).strip()[:80]


def _section_key(i: int, heading: str) -> str:
    return f"{i:02d} {_heading_key(heading)}"


def step_demo(c: Context) -> None:
    out = c.work / "demo"
    c.run(["-m", "train_scripts.demo.pipeline", "--part", "translation", "--data", shared_file(c, "multi30k"),
           "--output", out, "--preset", "cpu", "--schemes", "all", "--train-lines", SLICE["train"][1],
           "--valid-lines", DEMO_LINES["valid"], "--test-lines", DEMO_LINES["test"], "--vocab-size", SLICE_VOCAB,
           *DEMO_TRAINING, "--jobs", 1, "--threads", 1, "--workers", 1,
           "--gold-en", shared_file(c, "morph_gold", "eng.word.dev.tsv"),
           "--gold-de", shared_file(c, "morph_gold", "deu.derivational.v1.tsv")], "demo")
    c.h.add_tree("demo/raw", out / "raw")
    for kind in ("infl", "ws"):
        c.h.add_file(f"demo/test.{kind}.en", out / f"test.{kind}.en")
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    rows = results.get("schemes") or []
    names = [r.get("name") for r in rows]
    c.h.add_value("demo/results/rows", names)
    for name in names:
        c.h.add_tree(f"demo/schemes/{name}/binarized", out / "schemes" / name / "binarized")
        c.h.add_tree(f"demo/schemes/{name}/noisy", out / "schemes" / name / "noisy")
    modelfree = []
    for row in rows:
        kept = {k: row.get(k) for k in MODEL_FREE_FIELDS}
        for key, value in kept.items():
            c.h.add_value(f"demo/results/{row.get('name')}/{key}", value)
        modelfree.append({k: v for k, v in kept.items() if v is not None})
    meta = results.get("meta") or {}
    c.h.add_value("demo/results/meta/noise", meta.get("noise"))
    c.h.add_value("demo/results/meta/baseline", meta.get("baseline"))
    # the model-free tables, rendered by the checkout's own report writer from those fields only
    report = c.work / "demo-modelfree"
    report.mkdir(parents=True, exist_ok=True)
    reduced = {"meta": {"baseline": meta.get("baseline"), "noise": meta.get("noise")}, "schemes": modelfree}
    (report / "results.json").write_text(c.h.text(json.dumps(reduced, indent=1, ensure_ascii=False)),
                                         encoding="utf-8")
    c.run(["-m", "train_scripts.demo.translation.report", "--results", report / "results.json", "--output", report], "report")
    text = c.h.text((report / "REPORT.md").read_text(encoding="utf-8"))
    sections = re.split(r"(?m)^(?=## )", text)
    for i, section in enumerate(sections):
        heading = section.splitlines()[0][3:] if section.startswith("## ") else "preamble"
        c.h.add(f"demo/report/{_section_key(i, heading)}", section.encode("utf-8"))


def step_dry_run(c: Context) -> None:
    out = c.work / "dry"
    common = ["--output", out, "--jobs", 1, "--threads", 1, "--dry-run"]
    runs = {
        "translation-cpu": ["--part", "translation", "--data", shared_file(c, "multi30k"), "--schemes", "all"],
        "translation-gpu": ["--part", "translation", "--data", shared_file(c, "multi30k"), "--schemes", "all",
                            "--preset", "gpu"],
        "pretraining-cpu": ["--part", "pretraining", "--lm-rows", "all", "published"],
        "pretraining-gpu": ["--part", "pretraining", "--lm-rows", "all", "published", "--lm-preset", "gpu",
                            "--lm-control", "all", "--lm-flota-paper"],
    }
    for name, args in runs.items():
        printed = c.run(["-m", "train_scripts.demo.pipeline", *args, *common], f"dry-run {name}")
        c.h.add(f"dry-run/{name}", c.h.text(printed).encode("utf-8"))


#: a report column that times something (left out of the hashes)
TIMING_COLUMN = re.compile(r"\bwall\b|\(min\)|\bminutes?\b|\bseconds?\b|\btime\b", re.I)


def report_rows(markdown: str) -> dict:
    """``{section/row: cells}`` of every table row of a Markdown report (the column names too), timing columns left
    out.  A row is named by its section heading (the nearest ``##``/``###``) and its position and first cell in
    that section's tables."""
    rows, heading, header, n = {}, "preamble", None, 0
    for line in markdown.splitlines():
        if line.startswith("#"):
            heading, header, n = line.lstrip("#").strip(), None, 0
            continue
        if not line.startswith("|"):
            header = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            keep = [i for i, name in enumerate(cells) if not TIMING_COLUMN.search(name)]
            n += 1
            rows[f"{_heading_key(heading)}/{n:02d} (columns)"] = [cells[i] for i in keep]
            continue
        if all(set(cell) <= set("-: ") for cell in cells):   # the header's rule
            continue
        n += 1
        rows[f"{_heading_key(heading)}/{n:02d} {cells[0][:60]}"] = [cells[i] for i in keep if i < len(cells)]
    return rows


def step_reports(c: Context) -> None:
    if c.reports is None:
        print("  reports: no --reports DIR given (a finished demo's --output folder): nothing hashed",
              file=sys.stderr)
        return
    out = c.work / "reports"
    for rel in ("results.json", "pretraining/results.json"):
        if (c.reports / rel).is_file():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(c.reports / rel, out / rel)
    if not (out / "results.json").is_file() and not (out / "pretraining/results.json").is_file():
        raise StepError(f"--reports {c.reports} holds neither results.json nor pretraining/results.json")
    if (c.repo / "train_scripts" / "demo" / "demo_report.py").is_file():
        c.run(["-m", "train_scripts.demo.demo_report", out], "report")
    else:   # the checkout before the demo's one report
        if (out / "results.json").is_file():
            c.run(["-m", "train_scripts.report", "--results", out / "results.json", "--output", out], "report")
        if (out / "pretraining/results.json").is_file():
            c.run(["-m", "train_scripts.lm_report", out], "lm report")
    report = out / "REPORT.md" if (out / "REPORT.md").is_file() else out / "pretraining" / "REPORT.md"   # (before:
    # a pretraining part alone had only its own report)
    for key, cells in report_rows(report.read_text(encoding="utf-8")).items():
        c.h.add_value(f"reports/{key}", cells)


STEP_FUNCS = {"input": step_input, "learn": step_learn, "encode": step_encode, "binarize": step_binarize,
              "binarize-lm": step_binarize_lm, "classification": step_classification, "demo": step_demo,
              "dry-run": step_dry_run, "reports": step_reports}
#: steps a step needs run first (their outputs, not their hashes)
NEEDS = {"encode": ("learn",)}


# --- checkout and environment ----------------------------------------------------------------------------------

def check_checkout(c: Context) -> dict:
    """The checkout's packages must be the ones imported (not an installed copy); returns facts for the record."""
    code = ("import json, preprocess, train_scripts, fairseq_plugins\n"
            "out = {m.__name__: m.__file__ for m in (preprocess, train_scripts, fairseq_plugins)}\n"
            "try:\n"
            "    from preprocess import flota_search as f, hanta_fast as h, perceptron_fast as p\n"
            "    out['compiled'] = (f.search_class() is not f.FlotaSearch and h.fast_class() is not h.FastHanta\n"
            "                       and p.batch_kernel() is not None)\n"
            "except Exception as exc:\n"
            "    out['compiled'] = repr(exc)\n"
            "print(json.dumps(out))\n")
    facts = json.loads(c.run(["-W", "ignore", "-c", code], "import check").strip().splitlines()[-1])
    root = os.path.realpath(c.repo)
    wrong = {k: v for k, v in facts.items() if k != "compiled" and not os.path.realpath(v).startswith(root + os.sep)}
    if wrong:
        raise StepError(f"the checkout {c.repo} is not what is imported: {wrong}")
    if facts.get("compiled") is not True:
        print(f"note: the compiled twins are not in use ({facts.get('compiled')}): same output, slower; build them "
              f"with `{c.python} setup.py build_ext --inplace` in {c.repo}", file=sys.stderr)
    return facts


def git_state(repo: Path) -> dict:
    def git(*args):
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else None
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(status) if status is not None else None}


def environment() -> dict:
    from importlib import metadata

    out = {"python": sys.version.split()[0]}
    for dist in ("sentencepiece", "fairseq-fixed", "torch", "numpy", "nltk", "HanTa", "sacremoses", "lemminflect",
                 "sacrebleu", "tokenization-scorer", "protobuf", "Cython"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


# --- main -------------------------------------------------------------------------------------------------------

def compute(c: Context, steps: list[str]) -> tuple[dict, list[str]]:
    errors = []
    prepare_inputs(c)
    done = set()
    for step in steps:
        for need in NEEDS.get(step, ()):
            if need not in done and need not in steps:
                try:   # outputs needed, hashes not compared
                    STEP_FUNCS[need](c)
                except StepError as exc:
                    errors.append(f"{need} (needed by {step}): {exc}")
                done.add(need)
        t0 = time.time()
        print(f"[{time.strftime('%H:%M:%S')}] {step} ...", file=sys.stderr, flush=True)
        before = len(c.h.hashes)
        try:
            STEP_FUNCS[step](c)
        except StepError as exc:
            errors.append(f"{step}: {exc}")
            print(f"  FAILED: {exc}", file=sys.stderr)
        done.add(step)
        print(f"  {step}: {len(c.h.hashes) - before} hashes, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    return c.h.hashes, errors


def in_steps(key: str, steps: list[str]) -> bool:
    return key.split("/", 1)[0] in steps


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", action="store_true", help="write the hashes (the baseline checkout)")
    mode.add_argument("--check", action="store_true", help="compare with the recorded hashes; exit 1 on a mismatch")
    ap.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="the checkout to run (default: this script's)")
    ap.add_argument("--work", type=Path, default=None, help="scratch folder, empty or new (default: a temporary "
                                                             "folder, removed afterwards)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary scratch folder")
    ap.add_argument("--shared", type=Path, default=None, help="shared data (default: REPO/../shared/data)")
    ap.add_argument("--hashes", type=Path, default=DEFAULT_HASHES, help="the recorded hashes")
    ap.add_argument("--output", type=Path, default=None, help="also write the hashes computed now here")
    ap.add_argument("--only", nargs="+", choices=STEPS, default=None, help="run these steps only")
    ap.add_argument("--python", default=sys.executable, help="interpreter of the commands (default: this one)")
    ap.add_argument("--reports", type=Path, default=None, help="a finished demo's --output folder: its results "
                                                                "rendered by this checkout (step reports)")
    return ap


def scratch_folder(ap: argparse.ArgumentParser, work: Path | None) -> Path:
    """``--work``, checked empty and created, or a new temporary folder when it is not given."""
    if work is None:
        return Path(tempfile.mkdtemp(prefix="refactor-check-"))
    work = work.resolve()
    if work.exists() and any(work.iterdir()):
        ap.error(f"--work {work} is not empty (stale models would be reused): give an empty or new folder")
    work.mkdir(parents=True, exist_ok=True)
    return work


def record_hashes(args: argparse.Namespace, record: dict, hashes: dict, steps: list[str], errors: list[str],
                  seconds: float) -> int:
    """``--record``: write ``record`` to ``--hashes`` (with ``--only``, replacing those steps' hashes only)."""
    if errors:
        print("not recorded: a step failed", file=sys.stderr)
        return 2
    if args.only and args.hashes.is_file():   # replace the hashes of these steps only
        old = json.loads(args.hashes.read_text(encoding="utf-8"))
        kept = {k: v for k, v in old["hashes"].items() if not in_steps(k, steps)}
        record["hashes"] = dict(sorted({**kept, **hashes}.items()))
    args.hashes.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"recorded {len(record['hashes'])} hashes in {args.hashes} ({seconds:.0f} s)", file=sys.stderr)
    return 0


def compare_hashes(args: argparse.Namespace, hashes: dict, steps: list[str], errors: list[str],
                   seconds: float) -> int:
    """``--check``: one line per hash that differs from ``--hashes``; 1 on any (or a failed step), else 0."""
    expected_record = json.loads(args.hashes.read_text(encoding="utf-8"))
    expected = {k: v for k, v in expected_record["hashes"].items() if in_steps(k, steps)}
    for key, (old, new) in ((k, (expected_record.get("environment", {}).get(k), v))
                            for k, v in environment().items()):
        if old != new:
            print(f"note: {key} {new} here, {old} when recorded (a version change can explain mismatches)",
                  file=sys.stderr)
    bad = 0
    for key in sorted(set(expected) | set(hashes)):
        if key not in hashes:
            print(f"MISSING {key}")
        elif key not in expected:
            print(f"EXTRA {key}")
        elif expected[key] != hashes[key]:
            print(f"MISMATCH {key}")
        else:
            continue
        bad += 1
    print(f"{len(expected) - sum(1 for k in expected if hashes.get(k) != expected[k])} of {len(expected)} hashes "
          f"match, {bad} mismatches, {len(errors)} failed steps ({seconds:.0f} s)", file=sys.stderr)
    return 1 if bad or errors else 0


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)

    repo = args.repo.resolve()
    shared = (args.shared or repo.parent / "shared" / "data").resolve()
    if not (repo / "preprocess").is_dir() or not (repo / "train_scripts").is_dir():
        ap.error(f"--repo {repo} is not a checkout of the project")
    if not shared.is_dir():
        ap.error(f"no shared data at {shared}; give --shared")
    steps = list(args.only or STEPS)
    if args.check and not args.hashes.is_file():
        ap.error(f"no recorded hashes at {args.hashes}")
    temporary = args.work is None
    work = scratch_folder(ap, args.work)
    t0 = time.time()
    print(f"checkout {repo} ({git_state(repo)}), scratch {work}, steps {' '.join(steps)}", file=sys.stderr)
    try:
        c = Context(repo, work, shared, args.python, args.reports.resolve() if args.reports else None)
        facts = check_checkout(c)
        hashes, errors = compute(c, steps)
    except StepError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if temporary and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        elif temporary:
            print(f"scratch kept: {work}", file=sys.stderr)
    seconds = time.time() - t0
    record = {"about": "sha256 of the outputs scripts/refactor_check.py hashes (see its docstring); keys: step/name",
              "checkout": git_state(repo), "compiled_twins": facts.get("compiled"), "environment": environment(),
              "seconds": round(seconds), "hashes": dict(sorted(hashes.items()))}
    if args.output:
        args.output.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    for e in errors:
        print(f"ERROR {e}")
    if args.record:
        return record_hashes(args, record, hashes, steps, errors, seconds)
    return compare_hashes(args, hashes, steps, errors, seconds)


if __name__ == "__main__":
    sys.exit(main())
