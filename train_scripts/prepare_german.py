"""The German data of Wordmap's question (Jung 2023): a masked LM pretrained on German running text, evaluated by
pseudo-perplexity and verb probes on UD German GSD and by GermEval 2018 offensive-language classification.

    python -m train_scripts.prepare_german corpus --out work/de/pretrain [--valid-lines 1000 --seed 1]
    python -m train_scripts.prepare_german germeval --out work/de/germeval [--dev-fraction 0.1 --seed 1]
    python -m train_scripts.prepare_german ud --out work/de/ud
    python -m train_scripts.prepare_german all --out work/de          # the three above, in OUT/{pretrain,germeval,ud}
    python -m train_scripts.prepare_german floor [--csv-prefix work/de/germeval/germeval]
    python -m train_scripts.prepare_german score --gold work/de/germeval/germeval_test.csv --pred SAVE/test_scores.json

Inputs (read, never written; default ``../shared/data``, ``--data`` another such folder, or each one given):
``--germeval DIR`` with ``germeval2018.{training,test}.txt`` (``text<TAB>coarse<TAB>fine``), ``--ud DIR`` with
``de_gsd-ud-{dev,test}.conllu``, ``--multi30k DIR`` with ``train.de``, ``val.de`` and ``test*.de`` (``.gz`` too).
Every reader is strict: invalid UTF-8, a CoNLL-U line without 10 columns or with a malformed ID or FEATS, a
GermEval line without its three columns or with an unknown label is one line ``FILE:LINE: what``.  Blank lines
of a GermEval file are skipped (counted).  Tweets are kept exactly as written (emoji, @mentions, URLs, ``|LBR|``).

``corpus`` -- German running text for pretraining: the Multi30k German training side, the GermEval 2018 training
tweets (their text only, unlabelled) and the UD German GSD dev sentences (``# text``), each line stripped of
leading and trailing whitespace (nothing else is changed; a character that fairseq would read as a line break
becomes a space, counted).  Rules, applied in this order, each counted per source in ``corpus.json``:
blank lines; a line equal to a GermEval 2018 test tweet; to a UD German GSD test sentence; to a Multi30k
validation or test sentence (``val`` and every ``test*`` file: 2016 and 2017 Flickr); an exact duplicate of an
earlier kept line (the first is kept).  "Equal" is compared after :func:`normalise`: Unicode NFC, GermEval's
``|LBR|`` marker read as a space, whitespace runs collapsed, case-folded.  The kept lines are shuffled
(``random.Random(seed)``) and the first ``--valid-lines`` (default 1,000) are ``valid.de``, the rest ``train.de``,
one sentence per line.

``germeval`` -- the fine-tuning sets in the CSV layout that ``classification_data prepare`` and
``finetune_classification.sh`` read (``--csv-prefix OUT/germeval``): ``germeval_{train,dev,test}.csv`` with the
columns ``text,label,fine`` (the text first; ``label`` the coarse OFFENSE/OTHER).  Dev is a stratified
``--dev-fraction`` (default 10%) of the training tweets: per coarse label, ``round(fraction * n)`` tweets drawn with
``random.Random(seed)`` (seed 1); train is the rest; both keep the file's order, and test is the official test
set.  (``classification_data.read_csv`` collapses whitespace runs in the text as it does for every CSV.)

``ud`` -- the probes' and pseudo-perplexity's data: ``ud_verbs.jsonl``, one record per VERB/AUX word of UD dev
and test (``split, sent_id, sentence, token, word, surface, form, lemma, upos, xpos, feats``; ``feats`` holds those of
VerbForm, Tense, Person, Number, Mood the word has, a missing one absent); ``ud_sentences.jsonl``, one record per
sentence (``split, sentence, sent_id, text, words, surface_tokens, verb_words, verb_surface``); ``ud_dev.de`` and
``ud_test.de``, the sentence texts one per line (``ud_test.de`` is the held-out text of pseudo-perplexity: line i
is the i-th test record); ``ud.json``, the counts.  ``word`` and ``verb_words`` index the whitespace words of
``text`` (``text.split()``, the words ``pseudo_perplexity`` counts), found from the forms and ``SpaceAfter=No``;
``surface`` and ``verb_surface`` index the surface tokens (a multi-word token such as ``im`` = ``in dem`` is one).

``floor`` -- the character 3-6-gram Naive Bayes (``train_scripts/ngram_floor.py``) on GermEval coarse, its alpha
chosen by the official F1 on the last 20% of the training tweets (trained on the first 80%), or on the sets of
``--csv-prefix`` (trained on its train, chosen on its dev); scored on the test set with accuracy, the official F1
(:func:`germeval_macro_f1`) and scikit-learn's macro F1.  ``score`` scores predictions (a ``classification_data
score`` JSON or one label per line) against a GermEval CSV or TSV with the same three measures.

Every output folder's files appear together, through temporary files renamed when complete (nothing partial is
left on an error or Ctrl-C), and an output that is one of the inputs is refused before any work.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import random
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from preprocess.cli import run_main
from preprocess.common import SHARED_DATA, UserError, flatten_line
from preprocess.files.inputs import read_lines, require_file
from preprocess.files.outputs import atomic_outputs, check_distinct, check_output_path

GERMEVAL_COARSE = ("OFFENSE", "OTHER")
#: the fine labels of each coarse label
GERMEVAL_FINE = {"OFFENSE": ("ABUSE", "INSULT", "PROFANITY"), "OTHER": ("OTHER",)}
GERMEVAL_FILES = {"train": "germeval2018.training.txt", "test": "germeval2018.test.txt"}
UD_FILES = {"dev": "de_gsd-ud-dev.conllu", "test": "de_gsd-ud-test.conllu"}
VERB_UPOS = ("VERB", "AUX")
VERB_FEATURES = ("VerbForm", "Tense", "Person", "Number", "Mood")
UPOS = {"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN", "PUNCT",
        "SCONJ", "SYM", "VERB", "X"}
#: GermEval's line-break marker inside a tweet
LBR = "|LBR|"
#: defaults of the splits
SEED = 1
VALID_LINES = 1000
DEV_FRACTION = 0.1
#: the floor's dev as the measured figure (data README) had it: the last 20% of the training tweets
FLOOR_DEV_FRACTION = 0.2
NORMALISATION = "Unicode NFC, '|LBR|' as a space, whitespace runs collapsed, case-folded"


# --- readers -----------------------------------------------------------------------------------------------------

@dataclass
class Tweet:
    text: str
    coarse: str
    fine: str
    line: int


class Tweets(list):
    """:func:`read_germeval`'s tweets, with the file's ``path`` and its skipped ``blank_lines``."""

    def __init__(self, path: str):
        super().__init__()
        self.path, self.blank_lines = path, 0


def read_germeval(path: str) -> Tweets:
    """The tweets of a GermEval 2018 file (``text<TAB>coarse<TAB>fine``), text exactly as written.  Invalid UTF-8,
    a line without exactly three columns, an empty text, a coarse label other than OFFENSE/OTHER or a fine label
    that does not belong to it is one line naming the file and line; blank lines are skipped (counted)."""
    require_file(path, "GermEval file")
    tweets = Tweets(path)
    for number, line in enumerate(read_lines(path), 1):
        if not line.strip():
            tweets.blank_lines += 1
            continue
        cols = line.split("\t")
        if len(cols) != 3:
            what = "a missing label column" if len(cols) < 3 else "a tab in the text?"
            raise UserError(f"{path}:{number}: expected 3 tab-separated columns (text, coarse, fine), "
                            f"got {len(cols)} ({what})")
        text, coarse, fine = cols[0], cols[1].strip(), cols[2].strip()
        if not text.strip():
            raise UserError(f"{path}:{number}: empty tweet text")
        if coarse not in GERMEVAL_FINE:
            raise UserError(f"{path}:{number}: unknown coarse label {coarse!r} (expected OFFENSE or OTHER)")
        if fine not in GERMEVAL_FINE[coarse]:
            raise UserError(f"{path}:{number}: fine label {fine!r} does not go with coarse {coarse} "
                            f"(expected {' or '.join(GERMEVAL_FINE[coarse])})")
        tweets.append(Tweet(text, coarse, fine, number))
    if not tweets:
        raise UserError(f"{path}: no tweets")
    return tweets


@dataclass
class Word:
    """A syntactic word of a CoNLL-U sentence (an integer ID)."""
    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: dict
    head: str
    deprel: str
    deps: str
    misc: dict
    line: int


@dataclass
class MultiwordToken:
    """A surface token over the words ``first``..``last`` (a range ID ``first-last``), e.g. ``im`` = ``in dem``."""
    first: int
    last: int
    form: str
    misc: dict
    line: int


@dataclass
class EmptyNode:
    """An empty node (a decimal ID ``i.j``, enhanced dependencies): kept, but no word of the text."""
    id: str
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: dict
    line: int


@dataclass
class Sentence:
    sent_id: str
    text: str
    words: list = field(default_factory=list)
    multiword: list = field(default_factory=list)
    empty: list = field(default_factory=list)
    comments: list = field(default_factory=list)
    line: int = 0
    #: True when the file has no ``# text`` for it and ``text`` was rebuilt from the forms and SpaceAfter=No
    text_from_forms: bool = False

    def surface_tokens(self) -> list:
        """``[(form, [word indices into self.words], space_after)]``: the tokens of the text, a multi-word token
        once (its own form and MISC), every other word as itself."""
        ranges = {m.first: m for m in self.multiword}
        out, i = [], 0
        while i < len(self.words):
            word = self.words[i]
            m = ranges.get(word.id)
            if m is not None:
                span = [k for k in range(i, len(self.words)) if self.words[k].id <= m.last]
                out.append((m.form, span, m.misc.get("SpaceAfter") != "No"))
                i = span[-1] + 1
            else:
                out.append((word.form, [i], word.misc.get("SpaceAfter") != "No"))
                i += 1
        return out

    def text_from_tokens(self) -> str:
        return "".join(form + (" " if space else "") for form, _, space in self.surface_tokens()).strip()


def _parse_id(value: str, where: str):
    """``int`` for a word, ``(first, last)`` for a range, ``str`` for an empty node; a malformed ID is an error."""
    if re.fullmatch(r"[1-9][0-9]*", value):
        return int(value)
    m = re.fullmatch(r"([1-9][0-9]*)-([1-9][0-9]*)", value)
    if m:
        first, last = int(m.group(1)), int(m.group(2))
        if last <= first:
            raise UserError(f"{where}: multi-word token range {value} does not span two or more words")
        return first, last
    if re.fullmatch(r"(0|[1-9][0-9]*)\.[1-9][0-9]*", value):
        return value
    raise UserError(f"{where}: malformed ID {value!r} (a word number, a range N-M or an empty node N.M)")


def _parse_pairs(value: str, where: str, column: str, sep: str = "|") -> dict:
    """FEATS (``Name=Value|...``) or MISC as a dict; ``_`` is empty.  A FEATS item without ``=`` is an error (MISC
    items without one are kept with the value ``""``)."""
    if value == "_":
        return {}
    out = {}
    for item in value.split(sep):
        name, eq, val = item.partition("=")
        if column == "FEATS" and (not eq or not name or not val):
            raise UserError(f"{where}: malformed FEATS item {item!r} (expected Name=Value, separated by |)")
        out[name] = val
    return out


class _SentenceBuilder:
    """One sentence being read: checks the ID sequence as the CoNLL-U specification states it (words 1, 2, 3 ...,
    a range before the words it spans, an empty node after the word it follows)."""

    def __init__(self, path: str, line: int):
        self.path, self.line = path, line
        self.comments, self.words, self.multiword, self.empty = [], [], [], []
        self.pending_range = None   # a range whose words have not all come yet

    def add(self, line: str, number: int) -> None:
        where = f"{self.path}:{number}"
        cols = line.split("\t")
        if len(cols) != 10:
            raise UserError(f"{where}: expected 10 tab-separated columns (CoNLL-U), got {len(cols)}")
        ident = _parse_id(cols[0], where)
        expected = len(self.words) + 1
        if isinstance(ident, tuple):
            if ident[0] != expected:
                raise UserError(f"{where}: range {cols[0]} should start at word {expected}")
            self.multiword.append(MultiwordToken(ident[0], ident[1], cols[1], _parse_pairs(cols[9], where, "MISC"),
                                                 number))
            self.pending_range = ident
        elif isinstance(ident, str):
            if int(ident.split(".")[0]) != expected - 1:
                raise UserError(f"{where}: empty node {ident} should follow word {expected - 1}")
            self.empty.append(EmptyNode(ident, cols[1], cols[2], cols[3], cols[4],
                                        _parse_pairs(cols[5], where, "FEATS"), number))
        else:
            if ident != expected:
                raise UserError(f"{where}: word ID {ident} out of sequence (expected {expected})")
            if cols[3] not in UPOS and cols[3] != "_":
                raise UserError(f"{where}: unknown UPOS {cols[3]!r} (a column shifted?)")
            if not cols[1]:
                raise UserError(f"{where}: empty FORM")
            self.words.append(Word(ident, cols[1], cols[2], cols[3], cols[4], _parse_pairs(cols[5], where, "FEATS"),
                                   cols[6], cols[7], cols[8], _parse_pairs(cols[9], where, "MISC"), number))
            if self.pending_range and ident >= self.pending_range[1]:
                self.pending_range = None

    def finish(self, index: int, number: int):
        """The :class:`Sentence`, or None for a block of comments alone (file-level comments)."""
        if not self.words:
            if self.multiword or self.empty:
                raise UserError(f"{self.path}:{number}: sentence without words")
            return None
        if self.pending_range:
            first, last = self.pending_range
            raise UserError(f"{self.path}:{number}: range {first}-{last} spans words the sentence does not have")
        meta = {}
        for c in self.comments:
            key, eq, value = c.lstrip("#").partition("=")
            if eq:
                meta.setdefault(key.strip(), value.strip())
        sentence = Sentence(meta.get("sent_id") or f"s{index + 1}", meta.get("text", ""), self.words,
                            self.multiword, self.empty, self.comments, self.line)
        if "text" not in meta:
            sentence.text, sentence.text_from_forms = sentence.text_from_tokens(), True
        return sentence


def read_conllu(path: str) -> list:
    """The sentences of a CoNLL-U file (:class:`Sentence`: ``sent_id``, ``text`` from ``# text``, its words with
    form, lemma, UPOS, XPOS (STTS in the German treebanks), FEATS and MISC as dicts, its multi-word tokens and empty
    nodes).  Per the CoNLL-U specification: a blank line ends a sentence, ``#`` lines before it are its comments,
    word lines have 10 tab-separated columns and IDs 1, 2, ... with ranges ``N-M`` and empty nodes ``N.M``.  A line
    that breaks this (or invalid UTF-8) is one line naming the file and line."""
    require_file(path, "CoNLL-U file")
    sentences, current, number = [], None, 0
    for number, line in enumerate(read_lines(path), 1):
        if number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        if not line.strip():
            if current is not None:
                done = current.finish(len(sentences), number)
                if done is not None:
                    sentences.append(done)
                current = None
            continue
        if current is None:
            current = _SentenceBuilder(path, number)
        if line.startswith("#"):
            if current.words or current.multiword:
                raise UserError(f"{path}:{number}: comment line inside a sentence (a blank line missing before it?)")
            current.comments.append(line)
        else:
            current.add(line, number)
    if current is not None:
        done = current.finish(len(sentences), number)
        if done is not None:
            sentences.append(done)
    if not sentences:
        raise UserError(f"{path}: no sentences")
    return sentences


def word_positions(sentence: Sentence) -> list:
    """For each surface token (:meth:`Sentence.surface_tokens`), the index of the whitespace word of
    ``sentence.text`` (``text.split()``) it lies in, or None when its form is not found in the text in order."""
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", sentence.text)]
    out, pos, w = [], 0, 0
    for form, _, _ in sentence.surface_tokens():
        start = sentence.text.find(form, pos)
        if start < 0 or sentence.text[pos:start].strip():
            out.append(None)
            continue
        while w < len(spans) and spans[w][1] <= start:
            w += 1
        out.append(w if w < len(spans) and spans[w][0] <= start else None)
        pos = start + len(form)
    return out


# --- inputs ------------------------------------------------------------------------------------------------------

def _first_existing(folder: Path, names) -> Path | None:
    for name in names:
        for candidate in (folder / name, folder / f"{name}.gz"):
            if candidate.is_file():
                return candidate
    return None


@dataclass
class Inputs:
    """The input folders (default: under the shared data folder)."""
    germeval: Path
    ud: Path
    multi30k: Path

    @classmethod
    def from_options(cls, data=None, germeval=None, ud=None, multi30k=None) -> "Inputs":
        root = Path(data) if data else SHARED_DATA
        return cls(Path(germeval) if germeval else root / "german" / "germeval2018",
                   Path(ud) if ud else root / "german" / "ud_german_gsd",
                   Path(multi30k) if multi30k else root / "multi30k")

    def germeval_file(self, split: str) -> str:
        return self._need(self.germeval, GERMEVAL_FILES[split], "GermEval 2018", "--germeval")

    def ud_file(self, split: str) -> str:
        return self._need(self.ud, UD_FILES[split], "UD German GSD", "--ud")

    def multi30k_train(self) -> str:
        return self._need(self.multi30k, "train.de", "Multi30k German", "--multi30k")

    def multi30k_heldout(self) -> list:
        """The German validation and test files of Multi30k: ``val.de`` (or ``valid.de``) and every ``test*.de``
        (the ``.gz`` one when both are there), in name order."""
        val = _first_existing(self.multi30k, ["val.de", "valid.de"])
        if val is None:
            raise UserError(f"no Multi30k German validation file (val.de[.gz]) in {self.multi30k} (--multi30k)")
        tests = {}
        for p in sorted(self.multi30k.glob("test*.de*")):
            if p.name.endswith((".de", ".de.gz")):
                tests.setdefault(p.name[:-3] if p.name.endswith(".gz") else p.name, p)
        for stem in list(tests):
            gz = self.multi30k / f"{stem}.gz"
            if gz.is_file():
                tests[stem] = gz
        if not tests:
            raise UserError(f"no Multi30k German test file (test*.de[.gz]) in {self.multi30k} (--multi30k)")
        return [str(val), *map(str, tests.values())]

    @staticmethod
    def _need(folder: Path, name: str, what: str, option: str) -> str:
        found = _first_existing(folder, [name])
        if found is None:
            raise UserError(f"{what} file {name} not found in {folder} (give the folder with {option}, or --data)")
        return str(found)


# --- the pretraining corpus --------------------------------------------------------------------------------------

def normalise(text: str) -> str:
    """The form in which held-out text is compared (:data:`NORMALISATION`)."""
    text = unicodedata.normalize("NFC", text).replace(LBR, " ")
    return " ".join(text.split()).casefold()


#: the leakage rules in the order they are applied: (rule, the held-out set it compares with, what it is)
LEAKAGE_RULES = (("germeval_test", "GermEval 2018 test tweets"), ("ud_test", "UD German GSD test sentences"),
                 ("multi30k_heldout", "Multi30k validation and test sentences"))
#: the training sources in the order they are read (the first of two duplicates is kept)
SOURCES = (("multi30k_train", "Multi30k German training sentences"),
           ("germeval_train", "GermEval 2018 training tweets (text only)"),
           ("ud_dev", "UD German GSD dev sentences"))


def build_corpus(sources: dict, heldout: dict, valid_lines: int = VALID_LINES, seed: int = SEED) -> tuple:
    """``sources``: ``{name: lines}`` (the training sources, in order); ``heldout``: ``{rule: lines}`` (the sets no
    training line may equal, after :func:`normalise`).  Returns ``(train, valid, record)`` where ``record`` has the
    counts of :func:`prepare_corpus`'s ``corpus.json`` (without paths)."""
    keys = {rule: {normalise(t) for t in lines} for rule, lines in heldout.items()}
    removed = {"blank": 0, **{rule: 0 for rule in heldout}, "duplicate": 0}
    per_source, kept, seen, flattened = {}, [], set(), 0
    for name, lines in sources.items():
        counts = {"lines": 0, "removed": {k: 0 for k in removed}, "kept": 0}
        for raw in lines:
            counts["lines"] += 1
            text = raw.strip()
            flat = flatten_line(text)
            if flat != text:
                flattened += 1
                text = flat.strip()
            key = normalise(text)
            rule = "blank" if not text else next((r for r in heldout if key in keys[r]), None)
            if rule is None and text in seen:
                rule = "duplicate"
            if rule is not None:
                counts["removed"][rule] += 1
                removed[rule] += 1
                continue
            seen.add(text)
            kept.append((text, name))
            counts["kept"] += 1
        per_source[name] = counts
    if valid_lines < 0 or valid_lines >= len(kept):
        raise UserError(f"--valid-lines {valid_lines}: must be 0 or more and leave training lines (the sources keep "
                        f"{len(kept)} lines)")
    random.Random(seed).shuffle(kept)
    valid, train = kept[:valid_lines], kept[valid_lines:]
    for split, rows in (("train", train), ("valid", valid)):
        for name, counts in per_source.items():
            counts[split] = sum(1 for _, source in rows if source == name)
    record = {
        "seed": seed, "valid_lines": valid_lines, "normalisation": NORMALISATION,
        "rules": ["blank", *heldout, "duplicate"], "removed": removed, "sources": per_source,
        "heldout": {rule: {"sentences": len(lines), "distinct": len(keys[rule])} for rule, lines in heldout.items()},
        "line_breaks_flattened": flattened,
        "train": {"lines": len(train), "words": sum(len(t.split()) for t, _ in train)},
        "valid": {"lines": len(valid), "words": sum(len(t.split()) for t, _ in valid)},
    }
    record["notes"] = corpus_notes(record)
    return [t for t, _ in train], [t for t, _ in valid], record


def corpus_notes(record: dict) -> list:
    """The record's counts as sentences a report can print."""
    what = dict(LEAKAGE_RULES)
    removed = record["removed"]
    notes = [f"{sum(s['lines'] for s in record['sources'].values()):,} lines read: "
             + ", ".join(f"{s['lines']:,} {dict(SOURCES).get(n, n)}" for n, s in record["sources"].items())]
    notes += [f"removed {removed[rule]:,} lines equal to one of the {record['heldout'][rule]['sentences']:,} "
              f"{what.get(rule, rule)} ({NORMALISATION})" for rule in record["heldout"]]
    notes.append(f"removed {removed['duplicate']:,} exact duplicates and {removed['blank']:,} blank lines")
    notes.append(f"kept {record['train']['lines'] + record['valid']['lines']:,} lines, shuffled with seed "
                 f"{record['seed']}: {record['valid']['lines']:,} held out as valid.de, {record['train']['lines']:,} "
                 f"({record['train']['words']:,} words) in train.de")
    return notes


def _lines(path: str) -> list:
    return list(read_lines(path))


def prepare_corpus(out: str, inputs: Inputs = None, valid_lines: int = VALID_LINES, seed: int = SEED) -> dict:
    """Write ``OUT/train.de``, ``OUT/valid.de`` and ``OUT/corpus.json`` (the module doc's ``corpus``); returns the
    record: ``seed, valid_lines, normalisation, rules, removed {rule: n}, sources {name: {lines, removed {rule: n},
    kept, train, valid}}, heldout {rule: {sentences, distinct}}, line_breaks_flattened, train {lines, words},
    valid {lines, words}, notes`` (sentences for a report), ``inputs`` (the files read)."""
    inputs = inputs or Inputs.from_options()
    files = {"multi30k_train": [inputs.multi30k_train()], "germeval_train": [inputs.germeval_file("train")],
             "ud_dev": [inputs.ud_file("dev")], "germeval_test": [inputs.germeval_file("test")],
             "ud_test": [inputs.ud_file("test")], "multi30k_heldout": inputs.multi30k_heldout()}
    outputs = [os.path.join(out, name) for name in ("train.de", "valid.de", "corpus.json")]
    _check_outputs(outputs, [p for paths in files.values() for p in paths])
    sources = {"multi30k_train": _lines(files["multi30k_train"][0]),
               "germeval_train": [t.text for t in read_germeval(files["germeval_train"][0])],
               "ud_dev": [s.text for s in read_conllu(files["ud_dev"][0])]}
    heldout = {"germeval_test": [t.text for t in read_germeval(files["germeval_test"][0])],
               "ud_test": [s.text for s in read_conllu(files["ud_test"][0])],
               "multi30k_heldout": [line for p in files["multi30k_heldout"] for line in _lines(p)]}
    train, valid, record = build_corpus(sources, heldout, valid_lines, seed)
    record["inputs"] = files
    _write(outputs, [train, valid, record])
    return record


def _check_outputs(outputs: list, inputs: list) -> None:
    for path in outputs:
        check_output_path(path)
    check_distinct([(p, "output") for p in outputs], [(p, "input") for p in inputs])


def _write(paths: list, contents: list) -> None:
    """Write every output together (:func:`atomic_outputs`): a list is lines, a dict JSON, a str as it is."""
    with atomic_outputs(paths) as handles:
        for fh, content in zip(handles, contents):
            if isinstance(content, dict):
                fh.write(json.dumps(content, indent=1, ensure_ascii=False) + "\n")
            elif isinstance(content, str):
                fh.write(content)
            else:
                fh.writelines(line + "\n" for line in content)


# --- GermEval classification -------------------------------------------------------------------------------------

def split_dev(tweets: list, fraction: float = DEV_FRACTION, seed: int = SEED) -> tuple:
    """``(train, dev)``: per coarse label, ``round(fraction * n)`` of its tweets drawn with ``random.Random(seed)``
    (labels in sorted order, one generator) are dev; both keep the input order."""
    if not 0.0 < fraction < 1.0:
        raise UserError(f"--dev-fraction must be between 0 and 1, not {fraction}")
    rng = random.Random(seed)
    dev = set()
    for label in sorted({t.coarse for t in tweets}):
        idx = [i for i, t in enumerate(tweets) if t.coarse == label]
        dev.update(rng.sample(idx, round(fraction * len(idx))))
    return [t for i, t in enumerate(tweets) if i not in dev], [t for i, t in enumerate(tweets) if i in dev]


def csv_text(tweets: list) -> str:
    """The CSV ``classification_data.read_csv`` reads: ``text,label,fine``, the coarse label as ``label``."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["text", "label", "fine"])
    writer.writerows([t.text, t.coarse, t.fine] for t in tweets)
    return buf.getvalue()


def _label_counts(tweets: list) -> dict:
    return {label: sum(t.coarse == label for t in tweets) for label in GERMEVAL_COARSE}


def prepare_germeval(out: str, inputs: Inputs = None, dev_fraction: float = DEV_FRACTION, seed: int = SEED) -> dict:
    """Write ``OUT/germeval_{train,dev,test}.csv`` and ``OUT/germeval.json`` (the module doc's ``germeval``); the
    CSV prefix for ``classification_data``/``finetune_classification.sh --csv-prefix`` is ``OUT/germeval``.
    Returns the record: ``csv_prefix, dev_fraction, seed, rows {split: n}, labels {split: {OFFENSE, OTHER}},
    blank_lines {train, test}, inputs``."""
    inputs = inputs or Inputs.from_options()
    files = {split: inputs.germeval_file(split) for split in GERMEVAL_FILES}
    outputs = [os.path.join(out, f"germeval_{s}.csv") for s in ("train", "dev", "test")] + \
        [os.path.join(out, "germeval.json")]
    _check_outputs(outputs, list(files.values()))
    training, test = read_germeval(files["train"]), read_germeval(files["test"])
    train, dev = split_dev(training, dev_fraction, seed)
    splits = {"train": train, "dev": dev, "test": test}
    record = {"csv_prefix": os.path.join(out, "germeval"), "dev_fraction": dev_fraction, "seed": seed,
              "rows": {s: len(rows) for s, rows in splits.items()},
              "labels": {s: _label_counts(rows) for s, rows in splits.items()},
              "blank_lines": {"train": training.blank_lines, "test": test.blank_lines},
              "inputs": files}
    _write(outputs, [csv_text(rows) for rows in splits.values()] + [record])
    return record


def germeval_scores(gold: list, pred: list) -> dict:
    """Accuracy and F1 as ``evaluationScriptGermeval2018.pl`` computes them for the coarse task, as fractions:
    per label (OFFENSE, OTHER) precision, recall and F1; ``macro_f1``, the official figure, is the harmonic mean of
    the *averaged* precision and the *averaged* recall (the script's ``AVERAGE`` line), not the mean of the two
    F1s, which is given as ``mean_f1`` (scikit-learn's ``f1_score(average="macro")``)."""
    if len(gold) != len(pred):
        raise UserError(f"{len(pred)} predictions for {len(gold)} gold labels")
    if not gold:
        raise UserError("no labels to score")
    per = {}
    for label in GERMEVAL_COARSE:
        tp = sum(g == label and p == label for g, p in zip(gold, pred))
        fp = sum(g != label and p == label for g, p in zip(gold, pred))
        fn = sum(g == label and p != label for g, p in zip(gold, pred))
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        per[label] = {"precision": prec, "recall": rec, "f1": 2 * prec * rec / (prec + rec) if prec + rec else 0.0}
    avg_p = sum(v["precision"] for v in per.values()) / len(per)
    avg_r = sum(v["recall"] for v in per.values()) / len(per)
    return {"accuracy": sum(g == p for g, p in zip(gold, pred)) / len(gold),
            "macro_f1": 2 * avg_p * avg_r / (avg_p + avg_r) if avg_p + avg_r else 0.0,
            "macro_precision": avg_p, "macro_recall": avg_r,
            "mean_f1": sum(v["f1"] for v in per.values()) / len(per), "per_label": per, "examples": len(gold)}


def germeval_macro_f1(gold: list, pred: list) -> float:
    """The official GermEval 2018 F1 (:func:`germeval_scores`' ``macro_f1``)."""
    return germeval_scores(list(gold), list(pred))["macro_f1"]


def floor(inputs: Inputs = None, csv_prefix: str = None) -> dict:
    """The character n-gram floor on GermEval coarse (module doc), as :func:`train_scripts.ngram_floor.
    char_ngram_floor` returns it, with the official F1 as ``germeval_f1`` in every score (alpha chosen by it) and
    ``dev_split`` saying which dev was used."""
    from train_scripts import ngram_floor

    extra = {"germeval_f1": germeval_macro_f1}
    if csv_prefix:
        result = ngram_floor.floor_for_csv(csv_prefix, 0, 0, "germeval_f1", extra_metrics=extra)
        result["dev_split"] = f"{csv_prefix}_dev.csv"
        return result
    inputs = inputs or Inputs.from_options()
    training = [(t.text, t.coarse) for t in read_germeval(inputs.germeval_file("train"))]
    test = [(t.text, t.coarse) for t in read_germeval(inputs.germeval_file("test"))]
    cut = len(training) - round(FLOOR_DEV_FRACTION * len(training))
    result = ngram_floor.char_ngram_floor(training[:cut], training[cut:], {"test": test}, "germeval_f1", extra)
    result["dev_split"] = f"the last {len(training) - cut} of the {len(training)} training tweets"
    return result


def read_predictions(path: str) -> list:
    """Predicted labels: a ``classification_data score`` JSON (its ``predictions``) or one label per line (the
    second column of a GermEval-format line, when it has tabs)."""
    require_file(path, "predictions file")
    lines = list(read_lines(path))
    if lines and lines[0].lstrip().startswith("{"):
        try:
            data = json.loads("\n".join(lines))
        except ValueError as exc:
            raise UserError(f"{path}: not valid JSON ({exc})") from None
        if not isinstance(data, dict) or not isinstance(data.get("predictions"), list):
            raise UserError(f"{path}: a JSON file without a 'predictions' list (classification_data score --output)")
        return [str(p) for p in data["predictions"]]
    return [(line.split("\t")[1] if "\t" in line else line).strip() for line in lines if line.strip()]


def read_gold(path: str) -> list:
    """Gold coarse labels: a GermEval TSV (``read_germeval``) or a CSV with a ``label`` column."""
    if path.endswith(".csv"):
        from train_scripts.classification_data import read_csv

        return [label for _, label in read_csv(path)]
    return [t.coarse for t in read_germeval(path)]


# --- UD German GSD: verbs and held-out text ----------------------------------------------------------------------

def ud_records(sentences: list, split: str) -> tuple:
    """``(sentence records, verb records)`` of one UD split (the module doc's ``ud_sentences.jsonl`` and
    ``ud_verbs.jsonl``)."""
    sent_rows, verb_rows = [], []
    for index, sentence in enumerate(sentences):
        tokens = sentence.surface_tokens()
        positions = word_positions(sentence)
        verb_words, verb_surface = [], []
        for s, (_, word_indices, _) in enumerate(tokens):
            for wi in word_indices:
                w = sentence.words[wi]
                if w.upos not in VERB_UPOS:
                    continue
                verb_surface.append(s)
                if positions[s] is not None:
                    verb_words.append(positions[s])
                verb_rows.append({"split": split, "sent_id": sentence.sent_id, "sentence": index, "token": w.id,
                                  "word": positions[s], "surface": s, "form": w.form, "lemma": w.lemma,
                                  "upos": w.upos, "xpos": w.xpos,
                                  "feats": {f: w.feats[f] for f in VERB_FEATURES if f in w.feats}})
        sent_rows.append({"split": split, "sentence": index, "sent_id": sentence.sent_id, "text": sentence.text,
                          "words": len(sentence.text.split()), "surface_tokens": [form for form, _, _ in tokens],
                          "verb_words": sorted(set(verb_words)), "verb_surface": sorted(set(verb_surface))})
    return sent_rows, verb_rows


def _ud_counts(sentences: list, sent_rows: list, verb_rows: list) -> dict:
    feats = {f: {} for f in VERB_FEATURES}
    for v in verb_rows:
        for f, value in v["feats"].items():
            feats[f][value] = feats[f].get(value, 0) + 1
    return {"sentences": len(sentences), "words": sum(len(s.words) for s in sentences),
            "surface_tokens": sum(len(r["surface_tokens"]) for r in sent_rows),
            "whitespace_words": sum(r["words"] for r in sent_rows),
            "multiword_tokens": sum(len(s.multiword) for s in sentences),
            "empty_nodes": sum(len(s.empty) for s in sentences),
            "verbs": len(verb_rows), "upos": {u: sum(v["upos"] == u for v in verb_rows) for u in VERB_UPOS},
            "verb_words": sum(len(r["verb_words"]) for r in sent_rows),
            "verbs_without_word": sum(v["word"] is None for v in verb_rows),
            "text_from_forms": sum(s.text_from_forms for s in sentences),
            "feats": {f: dict(sorted(v.items())) for f, v in feats.items()}}


def prepare_ud(out: str, inputs: Inputs = None) -> dict:
    """Write ``OUT/ud_verbs.jsonl``, ``OUT/ud_sentences.jsonl``, ``OUT/ud_dev.de``, ``OUT/ud_test.de`` and
    ``OUT/ud.json`` (the module doc's ``ud``); returns the record: ``{split: counts}`` for dev and test (sentences,
    words, surface_tokens, whitespace_words, multiword_tokens, empty_nodes, verbs, upos, verb_words,
    verbs_without_word, text_from_forms, feats {feature: {value: n}}), ``verbs`` (dev + test), ``inputs``."""
    inputs = inputs or Inputs.from_options()
    files = {split: inputs.ud_file(split) for split in UD_FILES}
    names = ("ud_verbs.jsonl", "ud_sentences.jsonl", "ud_dev.de", "ud_test.de", "ud.json")
    outputs = [os.path.join(out, n) for n in names]
    _check_outputs(outputs, list(files.values()))
    record, sents, verbs, texts = {}, [], [], {}
    for split, path in files.items():
        sentences = read_conllu(path)
        sent_rows, verb_rows = ud_records(sentences, split)
        record[split] = _ud_counts(sentences, sent_rows, verb_rows)
        sents += sent_rows
        verbs += verb_rows
        texts[split] = [flatten_line(s.text) for s in sentences]
    record["verbs"] = len(verbs)
    record["features"] = list(VERB_FEATURES)
    record["inputs"] = files

    def jsonl(rows):
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)

    _write(outputs, [jsonl(verbs), jsonl(sents), texts["dev"], texts["test"], record])
    return record


# --- command line ------------------------------------------------------------------------------------------------

def _add_inputs(p) -> None:
    g = p.add_argument_group("inputs (default: under --data)")
    g.add_argument("--data", default=None, help=f"the shared data folder (default {SHARED_DATA})")
    g.add_argument("--germeval", default=None, help="folder of germeval2018.{training,test}.txt")
    g.add_argument("--ud", default=None, help="folder of de_gsd-ud-{dev,test}.conllu")
    g.add_argument("--multi30k", default=None, help="folder of train.de, val.de, test*.de (.gz too)")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m train_scripts.prepare_german", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("corpus", help="German running text for pretraining: OUT/{train,valid}.de, corpus.json")
    g = sub.add_parser("germeval", help="GermEval 2018 fine-tuning CSVs: OUT/germeval_{train,dev,test}.csv")
    u = sub.add_parser("ud", help="UD German GSD verbs and held-out text: OUT/ud_*.jsonl, ud_{dev,test}.de")
    a = sub.add_parser("all", help="corpus, germeval and ud into OUT/pretrain, OUT/germeval, OUT/ud")
    f = sub.add_parser("floor", help="the character n-gram Naive Bayes floor on GermEval coarse")
    s = sub.add_parser("score", help="official GermEval 2018 coarse F1 and accuracy of predictions")
    for p in (c, g, u, a):
        p.add_argument("--out", required=True, help="output folder")
    for p in (c, a):
        p.add_argument("--valid-lines", type=int, default=VALID_LINES, help="lines held out as valid.de")
    for p in (g, a):
        p.add_argument("--dev-fraction", type=float, default=DEV_FRACTION, help="training tweets held out as dev")
    for p in (c, g, a):
        p.add_argument("--seed", type=int, default=SEED, help="seed of the shuffle and of the dev split")
    for p in (c, g, u, a, f):
        _add_inputs(p)
    f.add_argument("--csv-prefix", default=None,
                   help="use PREFIX_{train,dev,test}.csv (germeval's) instead of the last 20%% of the training tweets")
    s.add_argument("--gold", required=True, help="a GermEval .txt file, or a germeval_*.csv")
    s.add_argument("--pred", required=True, help="classification_data score JSON, or one label per line")
    return ap


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "score":
        print(json.dumps(germeval_scores(read_gold(args.gold), read_predictions(args.pred)), indent=1))
        return 0
    inputs = Inputs.from_options(args.data, args.germeval, args.ud, args.multi30k)
    if args.command == "floor":
        print(json.dumps(floor(inputs, args.csv_prefix), indent=1))
        return 0
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file, not a folder")
    if args.command in ("corpus", "all"):
        record = prepare_corpus(str(out / "pretrain" if args.command == "all" else out), inputs, args.valid_lines,
                                args.seed)
        print("\n".join(record["notes"]))
    if args.command in ("germeval", "all"):
        record = prepare_germeval(str(out / "germeval" if args.command == "all" else out), inputs,
                                  args.dev_fraction, args.seed)
        print(f"GermEval 2018: {json.dumps(record['labels'])} -> {record['csv_prefix']}_{{train,dev,test}}.csv")
    if args.command in ("ud", "all"):
        record = prepare_ud(str(out / "ud" if args.command == "all" else out), inputs)
        print(f"UD German GSD: {record['dev']['sentences']} dev + {record['test']['sentences']} test sentences, "
              f"{record['verbs']} VERB/AUX words")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
