"""Rows' segmentations of German verbs against gold morphology that no row learned from: Wordmap's HYP2 (Jung 2023)
as two measures of :mod:`preprocess.evaluate.lexeme`, with paired bootstrap intervals between the rows.

    python -m train_scripts.gold_segmentation --lm-data work/lm/unigram --lm-data work/lm/wordmap \\
        --ud-conllu ../shared/data/german/ud_german_gsd/de_gsd-ud-test.conllu \\
        --morphynet ../shared/data/morph_gold/deu.derivational.v1.tsv [--resamples 1000] [--seed 1] \\
        [--min-length 2] [--frame 'Wir wollen {} .'] [--output gold.json]

A row is a ``binarize --lm`` folder; its text is segmented as its pretraining text was, by the scheme of its record
(:class:`train_scripts.pseudo_perplexity.RowEncoder`, a "no spaces" row's standalone ``▁`` dropped).

**(a) Consistency** on the gold VERB/AUX words of a UD file (UD German GSD test: gold lemmas).  Each sentence's text
is segmented whole (Wordmap tags the verbs in context) and a verb's pieces are those of the whitespace word holding
it (:func:`train_scripts.verb_probe.ud_verbs`, :func:`~train_scripts.pseudo_perplexity.piece_words`), less the
pieces wholly outside its form (punctuation written against it); a sentence whose pieces do not give each of its
words a piece leaves its verbs out for that row.  A form (lemma and case-folded spelling) takes its most frequent
segmentation (``forms_segmented_several_ways`` counts the others: a tagger's context, or a capital at the start of
a sentence); the forms every row segmented are scored, in both share modes (``any``, ``longest``: see
:mod:`preprocess.evaluate.lexeme`).

**(b) Boundary F1** on MorphyNet's concatenative verb derivations
(:func:`preprocess.evaluate.wordmap.read_derivational_verbs`: ``be|fallen``, ``zahl|en``), scored by
:func:`preprocess.evaluate.morph.evaluate` (protocol ``all``; every entry has two morphs).  Each verb is segmented
inside ``--frame`` (default ``Wir wollen {} .``), where a tagger takes it for a verb: HanTa tagged 28% of 2,000 of
these infinitives as verbs on their own and 98% in the frame; a segmenter that ignores context gives the same
pieces either way.  ``--frame {}`` segments the word alone.

**(c) Paired bootstrap** (:func:`preprocess.evaluate.lexeme.paired_bootstrap`): for every pair of rows (B after A on
the command line), B minus A over the forms (a) and over the MorphyNet words every row scored (b), ``--resamples``
resamples with ``--seed``, a 95% percentile interval.

Output (JSON)::

    {"rows": {name: {"lm_data", "scheme", "consistency": {mode: {"precision", "recall", "f1", "tp", "fp", "fn",
                     "related_pairs", "unrelated_pairs"}}, "boundary": {preprocess.evaluate.morph.evaluate's keys},
                     "verbs_aligned", "verbs_unaligned", "forms_segmented_several_ways"}},
     "comparisons": {"B - A": {"consistency": {mode: {"precision"|"recall"|"f1": {"difference", "low", "high",
                                                                                 "excludes_zero"}, "items", ...}},
                               "boundary": {"precision"|"recall"|"f1": {...}, "items", ...}}},
     "forms": {"verbs", "verbs_without_word", "forms", "scored", "lemmas", "lemmas_with_several_forms"},
     "morphynet": {"file", "entries", "scored_by_every_row"}, "share": {"modes", "min_length"},
     "bootstrap": {"resamples", "seed", "level"}, "frame", "ud_conllu", "seconds"}

Every input is read and checked before any row is loaded; a missing file or a malformed CoNLL-U line is one line
(``error: ...``, exit 2) and no output file.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Sequence

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.evaluate import lexeme, morph
from preprocess.files.inputs import require_file
from preprocess.files.outputs import write_record
from preprocess.models.spm_model import SPACE_SYMBOL

FRAME = "Wir wollen {} ."


# --- pieces of words in their sentences --------------------------------------------------------------------------

def form_pieces(word: str, form: str, pieces: Sequence[str]) -> list[str]:
    """The pieces of the whitespace ``word`` (which holds ``form``) that overlap the form: punctuation written
    against a verb dropped.  All of them where the pieces do not spell the word (a normalising model) or the form is
    not in it."""
    start = word.find(form)
    spelled = [p.replace(SPACE_SYMBOL, "") for p in pieces]
    if start < 0 or "".join(spelled) != word:
        return list(pieces)
    out, pos, end = [], 0, start + len(form)
    for piece, text in zip(pieces, spelled):
        if text and pos < end and pos + len(text) > start:
            out.append(piece)
        pos += len(text)
    return out


def word_pieces(row, lines: Sequence[str]) -> list:
    """Per line, the pieces of each of its whitespace words (a list of lists), or None where the row's pieces do not
    give every word a piece.  ``row``: anything with ``encode_words(lines) -> [(pieces, word of each piece)]``
    (:class:`train_scripts.pseudo_perplexity.RowEncoder`)."""
    out = []
    for line, (pieces, words) in zip(lines, row.encode_words(list(lines)), strict=True):
        n = len(line.split())
        if not pieces or words[-1] + 1 != n:
            out.append(None)
            continue
        per_word: list[list[str]] = [[] for _ in range(n)]
        for piece, w in zip(pieces, words):
            per_word[w].append(piece)
        out.append(per_word)
    return out


def verb_occurrences(row, texts: Sequence[str], verbs: Sequence) -> tuple[dict, int]:
    """``({verb index: its pieces}, verbs left out)`` for the UD verbs (:func:`train_scripts.verb_probe.ud_verbs`)
    of one row."""
    per_line = word_pieces(row, texts)
    found, missing = {}, 0
    for k, v in enumerate(verbs):
        words = per_line[v.sentence]
        if words is None:
            missing += 1
            continue
        found[k] = form_pieces(texts[v.sentence].split()[v.word], v.form, words[v.word])
    return found, missing


def frame_pieces(row, words: Sequence[str], frame: str = FRAME) -> list:
    """The pieces each word gets inside ``frame`` (its ``{}``), or None where the row's pieces of that line do not
    align with its words."""
    slots = frame.split()
    if slots.count("{}") != 1:
        raise UserError(f"--frame must hold {{}} once, as a word of its own: {frame!r}")
    slot = slots.index("{}")
    lines = [frame.replace("{}", w) for w in words]
    return [None if per_word is None else per_word[slot] for per_word in word_pieces(row, lines)]


# --- the measures ------------------------------------------------------------------------------------------------

def score_rows(rows: dict, sentences: list, gold: list, frame: str = FRAME, min_length: int = lexeme.MIN_LENGTH,
               resamples: int = lexeme.RESAMPLES, seed: int = lexeme.SEED) -> dict:
    """The measures of the module doc for ``rows`` (``{name: encoder}``, see :func:`word_pieces`) on the UD
    ``sentences`` (:func:`train_scripts.prepare_german.read_conllu`) and the MorphyNet ``gold`` entries
    (``[(word, [affix, source])]``); the record without its file names."""
    import numpy as np

    from train_scripts.verb_probe import ud_verbs

    texts, verbs, without = ud_verbs(sentences)
    if not verbs:
        raise UserError("the UD file has no VERB/AUX words to score")
    record: dict = {"rows": {}, "comparisons": {}}
    segmented, boundary_counts = {}, {}
    for name, row in rows.items():
        found, missing = verb_occurrences(row, texts, verbs)
        items = lexeme.form_items((verbs[k].lemma, verbs[k].form, p) for k, p in found.items())
        segmented[name] = {(i.lemma, i.form): i for i in items}
        pieces = frame_pieces(row, [w for w, _ in gold], frame)
        counts, scored = lexeme.boundary_table([p or [] for p in pieces], gold)
        scored &= np.array([p is not None for p in pieces], dtype=bool)
        boundary_counts[name] = (counts, scored)
        by_word = {w: p for (w, _), p in zip(gold, pieces) if p is not None}
        record["rows"][name] = {
            "verbs_aligned": len(found), "verbs_unaligned": missing,
            "forms_segmented_several_ways": sum(i.segmentations > 1 for i in items),
            "boundary": morph.evaluate(lambda w, known=by_word: known.get(w, []), gold, "all"),
            "consistency": {}}
    keys = [k for k in segmented[next(iter(rows))] if all(k in s for s in segmented.values())]
    if not keys:
        raise UserError("no verb form is segmented by every row")
    lemmas = [k[0] for k in keys]
    forms = [k[1] for k in keys]
    tables = {mode: {name: lexeme.PairTable(lemmas, forms, [segmented[name][k].pieces for k in keys], mode,
                                            min_length) for name in rows}
              for mode in lexeme.SHARE_MODES}
    for mode, by_row in tables.items():
        for name, table in by_row.items():
            record["rows"][name]["consistency"][mode] = lexeme.consistency(table)
    common = np.logical_and.reduce([s for _, s in boundary_counts.values()])
    if not common.any():
        raise UserError("no MorphyNet verb is scored by every row (their pieces are not in the words)")
    names = list(rows)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            comparison = {"consistency": {}}
            for mode, by_row in tables.items():
                comparison["consistency"][mode] = lexeme.paired_bootstrap(
                    len(keys), by_row[a].scores, by_row[b].scores, resamples, seed)
            ca, cb = boundary_counts[a][0][common], boundary_counts[b][0][common]
            comparison["boundary"] = lexeme.paired_bootstrap(
                int(common.sum()), lambda w, c=ca: lexeme.boundary_scores(c, w),
                lambda w, c=cb: lexeme.boundary_scores(c, w), resamples, seed)
            record["comparisons"][f"{b} - {a}"] = comparison
    by_lemma: dict = {}
    for lemma, form in keys:
        by_lemma.setdefault(lemma, set()).add(form)
    record.update({
        "forms": {"verbs": len(verbs) + without, "verbs_without_word": without, "forms": len({(v.lemma, v.form.casefold()) for v in verbs}),
                  "scored": len(keys), "lemmas": len(by_lemma),
                  "lemmas_with_several_forms": sum(len(f) > 1 for f in by_lemma.values())},
        "morphynet": {"entries": len(gold), "scored_by_every_row": int(common.sum())},
        "share": {"modes": {m: d.replace("MIN", str(min_length)) for m, d in lexeme.SHARE_MODES.items()},
                  "min_length": min_length},
        "bootstrap": {"resamples": resamples, "seed": seed, "level": lexeme.LEVEL}, "frame": frame})
    return record


def row_names(folders: Sequence[str]) -> list[str]:
    """A name per row: its folder's name, made unique with ``-2``, ``-3`` ... where two folders share one."""
    out: list[str] = []
    for folder in folders:
        base = os.path.basename(os.path.normpath(folder)) or folder
        name, k = base, 2
        while name in out:
            name, k = f"{base}-{k}", k + 1
        out.append(name)
    return out


def gold_segmentation(lm_data: Sequence[str], ud_conllu: str, morphynet: str, frame: str = FRAME,
                      min_length: int = lexeme.MIN_LENGTH, resamples: int = lexeme.RESAMPLES,
                      seed: int = lexeme.SEED) -> dict:
    """The whole measure of the module doc on the rows ``lm_data`` (``binarize --lm`` folders)."""
    from preprocess.evaluate.wordmap import read_derivational_verbs
    from train_scripts.binarize import read_record
    from train_scripts.prepare_german import read_conllu
    from train_scripts.pseudo_perplexity import RowEncoder

    started = time.perf_counter()
    if not lm_data:
        raise UserError("give at least one --lm-data row")
    if min_length < 1:
        raise UserError(f"--min-length must be at least 1, not {min_length}")
    if resamples < 1:
        raise UserError(f"--resamples must be at least 1, not {resamples}")
    if frame.split().count("{}") != 1:
        raise UserError(f"--frame must hold {{}} once, as a word of its own: {frame!r}")
    require_file(ud_conllu, "--ud-conllu")
    require_file(morphynet, "--morphynet")
    sentences = read_conllu(ud_conllu)
    gold = read_derivational_verbs(morphynet)
    if not gold:
        raise UserError(f"{morphynet}: no concatenative verb derivations (derPOS V) in it")
    infos = {}
    for name, folder in zip(row_names(lm_data), lm_data):
        if not os.path.isdir(folder):
            raise UserError(f"--lm-data not found (a binarize --lm folder): {folder}")
        info = read_record(folder, "give the output folder of binarize --lm")
        if not info.get("lm"):
            raise UserError(f"{folder} is not a binarize --lm folder (its record has no lm)")
        infos[name] = (folder, info)
    rows = {name: RowEncoder(info) for name, (_, info) in infos.items()}
    record = score_rows(rows, sentences, gold, frame, min_length, resamples, seed)
    for name, (folder, info) in infos.items():
        record["rows"][name] = {"lm_data": os.path.abspath(folder),
                                "scheme": (info.get("config") or {}).get("scheme", info.get("scheme")),
                                **record["rows"][name]}
    record.update({"ud_conllu": os.path.abspath(ud_conllu), "seconds": round(time.perf_counter() - started, 3)})
    record["morphynet"]["file"] = os.path.abspath(morphynet)
    return record


# --- command line ------------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m train_scripts.gold_segmentation",
                                 description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--lm-data", action="append", required=True,
                    help="a row: a binarize --lm folder (give it once per row; the first is A of 'B - A')")
    ap.add_argument("--ud-conllu", required=True, help="UD file with gold lemmas (UD German GSD test)")
    ap.add_argument("--morphynet", required=True, help="MorphyNet derivational file (deu.derivational.v1.tsv)")
    ap.add_argument("--frame", default=FRAME, help="the sentence each MorphyNet verb is segmented in ({}: the verb)")
    ap.add_argument("--min-length", type=int, default=lexeme.MIN_LENGTH,
                    help="shortest piece (space marker removed) that links two forms")
    ap.add_argument("--resamples", type=int, default=lexeme.RESAMPLES, help="bootstrap resamples")
    ap.add_argument("--seed", type=int, default=lexeme.SEED, help="bootstrap seed")
    ap.add_argument("--output", default=None, help="write the JSON record here (default: stdout only)")
    a = ap.parse_args(argv)
    record = gold_segmentation(a.lm_data, a.ud_conllu, a.morphynet, a.frame, a.min_length, a.resamples, a.seed)
    write_record(record, a.output)
    return 0


def cli() -> None:
    """Console-script entry point."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
