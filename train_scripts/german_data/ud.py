"""UD German GSD for the probes and pseudo-perplexity (``prepare_german ud``): one record per VERB/AUX word and per
sentence, the sentence texts one per line, and the counts."""
from __future__ import annotations

import json
import os

from preprocess.common import flatten_line
from train_scripts.german_data.conllu import read_conllu, word_positions
from train_scripts.german_data.inputs import UD_FILES, Inputs, check_outputs, write_outputs

VERB_UPOS = ("VERB", "AUX")
VERB_FEATURES = ("VerbForm", "Tense", "Person", "Number", "Mood")


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
    check_outputs(outputs, list(files.values()))
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

    write_outputs(outputs, [jsonl(verbs), jsonl(sents), texts["dev"], texts["test"], record])
    return record
