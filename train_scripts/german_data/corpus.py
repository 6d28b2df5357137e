"""The German pretraining corpus (``prepare_german corpus``): the training sources read in order, the leakage
rules (no line equal to a held-out sentence, compared after :func:`normalise`), duplicates and blank lines
removed, the rest shuffled into ``train.de`` and ``valid.de``, every rule counted."""
from __future__ import annotations

import os
import random
import unicodedata

from preprocess.common import UserError, flatten_line
from train_scripts.german_data.conllu import read_conllu
from train_scripts.german_data.germeval import LBR, read_germeval
from train_scripts.german_data.inputs import SEED, Inputs, check_outputs, read_all_lines, write_outputs

#: the default number of kept lines held out as valid.de
VALID_LINES = 1000
NORMALISATION = ("Unicode NFC, U+FEFF (a byte-order mark) dropped, '|LBR|' and every Unicode whitespace or line "
                 "break as a space, whitespace runs collapsed and trimmed, case-folded (NFC again after it)")


def normalise(text: str) -> str:
    """The form in which held-out text is compared (:data:`NORMALISATION`): equal for two texts that differ only in
    Unicode composition, a byte-order mark, GermEval's ``|LBR|``, the kind and number of spaces and line breaks
    (``str.split``'s whitespace: tabs, no-break spaces, U+2028 ...) around and between words, or case.  Case-folding
    can leave a decomposed sequence (``İ`` -> ``i̇``), so the result is composed again."""
    text = unicodedata.normalize("NFC", text).replace("\ufeff", "").replace(LBR, " ")
    return unicodedata.normalize("NFC", " ".join(text.split()).casefold())


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
    check_outputs(outputs, [p for paths in files.values() for p in paths])
    sources = {"multi30k_train": read_all_lines(files["multi30k_train"][0]),
               "germeval_train": [t.text for t in read_germeval(files["germeval_train"][0])],
               "ud_dev": [s.text for s in read_conllu(files["ud_dev"][0])]}
    heldout = {"germeval_test": [t.text for t in read_germeval(files["germeval_test"][0])],
               "ud_test": [s.text for s in read_conllu(files["ud_test"][0])],
               "multi30k_heldout": [line for p in files["multi30k_heldout"] for line in read_all_lines(p)]}
    train, valid, record = build_corpus(sources, heldout, valid_lines, seed)
    record["inputs"] = files
    write_outputs(outputs, [train, valid, record])
    return record
