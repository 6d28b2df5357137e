"""Subject-verb agreement, zero-shot: does a pretrained masked LM give the grammatical twin of a CLAMS minimal pair
(Mueller et al. 2020, German) a higher whole-word pseudo-log-likelihood than its ungrammatical twin?

    python -m train_scripts.agreement --lm-data work/lm --checkpoint ckpt/lm/checkpoint_last.pt \\
        --pairs ../shared/data/german/clams_de [--form pretraining|clams] [--random-seeds 2] [--max-pairs 0] \\
        [--output agreement.json]

**Pairs.**  Every ``*.txt`` file of ``--pairs`` is one construction, named by the file without ``.txt`` (e.g.
``simple_agrmt``); each line is ``True`` or ``False``, a tab, a sentence; a ``True`` line followed by its ``False``
twin makes a pair.  Anything else (no such folder, no ``*.txt`` in it, a line without a tab, another label, an
empty sentence, an odd number of lines, a ``True`` not followed by a ``False``) is one error line naming the file
and line, exit status 2, and no output file.  ``--max-pairs N``: N pairs of each construction, spread evenly over
its file (:func:`subsample`: deterministic; not the first N, which in CLAMS's block-ordered files are one
sub-condition's; 0: all).

**Form** (``--form``, the record's ``form`` and, spelled out, ``form_rule``).  ``pretraining`` (the default): the
sentence written as the pretraining text is (Multi30k-style sentences), with CLAMS's lower-cased tokenisation
undone minimally: the first character upper-cased, and a full stop ``.`` written against the last word -- a final
``.`` token is joined to the word before it, and where the sentence ends in no ``.`` one is appended; nothing else
changes (the CLAMS German files have no other punctuation; other lower-cased words stay lower-cased).
``clams``: the sentence exactly as CLAMS writes it.

**Score.**  Each sentence is encoded as the pretraining data was (:class:`train_scripts.pseudo_perplexity.RowEncoder`,
a "no spaces" row's ``▁`` dropped as the checkpoint's task did; cut after its last whole word that fits the model's
positions, :func:`~train_scripts.pseudo_perplexity.fit_line`, which no CLAMS sentence needs) and scored by
whole-word pseudo-log-likelihood, PLL-word-l2r (Kauf and Ivanova 2023;
:func:`train_scripts.pseudo_perplexity.whole_word_token_plls`): the sum over its words of each word's
log-probability, a word's later pieces masked while it is scored.  The model is right on a pair when the
grammatical twin's score is strictly higher; **a tie counts as wrong** (a model that cannot tell the twins apart
is at chance, not above it).  Sentences that occur more than once are scored once; the masked copies of many
sentences go through the model together (``--batch-size`` copies per forward pass, ``torch.no_grad``, eval mode).

**Controls.**  ``--random-seeds N``: the same scoring with N encoders of the checkpoint's architecture and
dictionary from random weights, seeds 1..N (:func:`train_scripts.probe.load_encoder`, as the verb probe's
controls); their accuracies are each construction's ``random`` list.  ``chance`` is 50.

**Paired tests** between two rows on the same pairs: :func:`mcnemar` (exact, two-sided; from
:mod:`preprocess.evaluate.paired`) over two records' ``correct`` lists.

Output (JSON)::

    {"form": "pretraining"|"clams", "form_rule": "...",
     "constructions": {NAME: {"pairs", "accuracy" (0-100), "correct": [0/1 per pair], "random": [accuracy per
                              random seed], "chance": 50.0}},
     "overall": {"pairs", "accuracy", "random": [...]},   # over all pairs of all constructions
     "ties": {NAME: pairs tied (counted wrong)}, "max_pairs", "random_seeds", "scoring": "PLL-word-l2r",
     "sentences_scored", "scheme", "checkpoint", "lm_data", "pairs_dir", "seconds"}

**Speed** (measured 2026-12-02, 2 CPU cores shared with other work, load average about 7, ``--threads 1``, the
default, which was 3 to 5 times faster there than 2; ``--batch-size 128``).  A ``--small`` model (2 layers, 128
dimensions, a 4k Unigram vocabulary, 200 updates on Multi30k German) scored the first 500 pairs of each
construction (1,640 pairs, 3,280 distinct sentences of about 14 pieces) with 2 random encoders, three encoders in
all, in 53 to 86 s over three runs of either form, loading included (124 s in a fourth, with a test suite
running beside it): **11 to 17 s per 1,000 pairs per encoder**.  All 14,220 pairs would take 3 to 4 minutes per encoder, so the demo passes ``--max-pairs`` (N pairs
spread evenly over each file, :func:`subsample`).
"""
from __future__ import annotations

import argparse
import glob
import math
import os
import sys
import time
from typing import Sequence

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.evaluate.paired import mcnemar  # noqa: F401  (the paired test of two records' ``correct`` lists)
from preprocess.files.inputs import UTF8_HINT, read_lines
from preprocess.files.outputs import write_record
from train_scripts import pseudo_perplexity as pp

FORMS = {
    "pretraining": "first character upper-cased; a final '.' token joined to the word before it, else '.' appended "
                   "to the last word; nothing else changed",
    "clams": "CLAMS's own form: lower-cased, tokenised, no final full stop",
}
CHANCE = 50.0
#: masked copies per forward pass (128 measured fastest on 2 shared CPU cores, module doc)
BATCH_SIZE = 128
#: torch CPU threads by default: one was 3 to 5 times faster than two on a 2-core machine shared with other work
THREADS = 1


# --- the pairs ---------------------------------------------------------------------------------------------------

def read_pairs(folder: str, max_pairs: int = 0) -> dict[str, list[tuple[str, str]]]:
    """``{construction: [(grammatical, ungrammatical), ...]}`` of the CLAMS files of ``folder`` (module doc),
    sorted by name; with ``max_pairs`` the first that many of each.  Malformed input: a :class:`UserError` naming
    the file and line."""
    if max_pairs < 0:
        raise UserError(f"--max-pairs must be 0 (all) or more, not {max_pairs}")
    if not os.path.isdir(folder):
        raise UserError(f"--pairs: no such folder: {folder}")
    files = sorted(glob.glob(os.path.join(folder, "*.txt")))
    if not files:
        raise UserError(f"--pairs: no *.txt files in {folder}")
    out = {}
    for path in files:
        lines = list(read_lines(path, hint=UTF8_HINT))
        entries = []
        for number, line in enumerate(lines, 1):
            if "\t" not in line:
                raise UserError(f"{path}:{number}: no tab (a line is True or False, a tab, a sentence)")
            label, sentence = line.split("\t", 1)
            if label not in ("True", "False"):
                raise UserError(f"{path}:{number}: the label is {label!r}, not True or False")
            if not sentence.split():
                raise UserError(f"{path}:{number}: an empty sentence")
            entries.append((label, sentence.strip()))
        if not entries:
            raise UserError(f"{path}: no pairs")
        if len(entries) % 2:
            raise UserError(f"{path}: {len(entries)} lines, an odd number (a grammatical line and its ungrammatical "
                            "twin make a pair)")
        pairs = []
        for k in range(0, len(entries), 2):
            if entries[k][0] != "True" or entries[k + 1][0] != "False":
                raise UserError(f"{path}:{k + 1}: a pair is a True line followed by a False line, not "
                                f"{entries[k][0]} then {entries[k + 1][0]}")
            pairs.append((entries[k][1], entries[k + 1][1]))
        out[os.path.basename(path)[:-len(".txt")]] = subsample(pairs, max_pairs)
    return out


def subsample(pairs: list, n: int) -> list:
    """``n`` of ``pairs`` spread evenly over the file (pair ``k * len // n`` for k = 0 .. n-1, in file order;
    all of them when ``n`` is 0 or not smaller): deterministic, and unlike the first ``n`` it keeps a file's
    sub-conditions in proportion (CLAMS's files run through them in blocks: in the first 500 of ``prep_anim``'s
    12,600 pairs the grammatical verb is ``sind`` 287 times and ``ist`` never, in 500 spread evenly 150 times
    each; ``vp_coord``'s first 500 have 4 and 400, spread 202 and 202)."""
    if not n or n >= len(pairs):
        return list(pairs)
    return [pairs[k * len(pairs) // n] for k in range(n)]


def pretraining_form(sentence: str) -> str:
    """A CLAMS sentence written as the pretraining text is (module doc, ``--form pretraining``)."""
    tokens = sentence.split()
    if len(tokens) > 1 and tokens[-1] == ".":
        tokens = [*tokens[:-2], tokens[-2] + "."]
    elif not tokens[-1].endswith("."):
        tokens[-1] += "."
    text = " ".join(tokens)
    return text[:1].upper() + text[1:]


def in_form(sentence: str, form: str) -> str:
    """``sentence`` in ``form`` (:data:`FORMS`)."""
    return pretraining_form(sentence) if form == "pretraining" else " ".join(sentence.split())


# --- scoring -----------------------------------------------------------------------------------------------------

def encode_sentences(row, dictionary, texts: Sequence[str], limit: int) -> tuple[list, list]:
    """``(id sequences with <s> and </s>, the word of each piece)`` of ``texts`` (each cut to ``limit`` pieces
    after its last whole word that fits)."""
    import torch

    seqs, words = [], []
    for text, (pieces, of_piece) in zip(texts, row.encode_words(texts)):
        if not pieces:
            raise UserError(f"the sentence {text!r} encodes to no pieces")
        _, pieces, of_piece = pp.fit_line_words(row, text, pieces, of_piece, limit)
        seqs.append(torch.tensor([dictionary.bos(), *[dictionary.index(p) for p in pieces], dictionary.eos()]))
        words.append(of_piece)
    return seqs, words


def sentence_scores(model, dictionary, seqs, words, batch_size: int = BATCH_SIZE) -> list[float]:
    """Each sentence's whole-word PLL (natural log): the sum of its pieces' PLL-word-l2r log-probabilities."""
    per_token = pp.whole_word_token_plls(model, seqs, words, dictionary.index("<mask>"), dictionary.pad(),
                                         batch_size)
    return [math.fsum(t) for t in per_token]


def judge(scores: dict, pairs: dict, form: str) -> tuple[dict, dict]:
    """``({construction: [0/1 per pair]}, {construction: ties})`` from the sentences' ``scores`` (a tie is wrong)."""
    correct, ties = {}, {}
    for name, items in pairs.items():
        good = [scores[in_form(g, form)] for g, _ in items]
        bad = [scores[in_form(b, form)] for _, b in items]
        correct[name] = [int(x > y) for x, y in zip(good, bad)]
        ties[name] = sum(x == y for x, y in zip(good, bad))
    return correct, ties


def _accuracy(correct: Sequence[int]) -> float | None:
    return 100.0 * sum(correct) / len(correct) if correct else None


def agreement(lm_data: str, checkpoint: str, pairs_dir: str, form: str = "pretraining", random_seeds: int = 0,
              max_pairs: int = 0, batch_size: int = BATCH_SIZE, threads: int = THREADS) -> dict:
    """The record of the module doc for ``checkpoint`` (pretrained on the ``binarize --lm`` folder ``lm_data``)
    on the CLAMS files of ``pairs_dir``."""
    import torch

    from train_scripts.binarize import read_record
    from train_scripts.verb_probe import row_model

    started = time.perf_counter()
    if form not in FORMS:
        raise UserError(f"--form must be one of {', '.join(FORMS)}, not {form!r}")
    if random_seeds < 0:
        raise UserError(f"--random-seeds must be 0 or more, not {random_seeds}")
    if batch_size < 1:
        raise UserError(f"--batch-size must be at least 1, not {batch_size}")
    if threads < 0:
        raise UserError(f"--threads must be 0 (torch's default) or more, not {threads}")
    pairs = read_pairs(pairs_dir, max_pairs)     # every input checked before any model is loaded
    info = read_record(lm_data, "give the output folder of binarize --lm the model was pretrained on")
    if not info.get("lm") or not info.get("data_bin"):
        raise UserError(f"{lm_data} is not a binarize --lm folder (its record has no lm/data_bin)")
    if not os.path.isfile(checkpoint):
        raise UserError(f"--checkpoint not found: {checkpoint}")
    if threads:
        torch.set_num_threads(threads)
    texts = sorted({in_form(s, form) for items in pairs.values() for pair in items for s in pair})
    with row_model(checkpoint, info, "agreement.") as rm:
        seqs, words = encode_sentences(rm.row, rm.dictionary, texts, rm.limit)

        def run(m) -> tuple[dict, dict]:
            return judge(dict(zip(texts, sentence_scores(m, rm.dictionary, seqs, words, batch_size))), pairs, form)

        correct, ties = run(rm.model)
        random_correct = [run(rm.random_encoder(seed))[0] for seed in range(1, random_seeds + 1)]
    constructions = {name: {"pairs": len(items), "accuracy": _accuracy(correct[name]), "correct": correct[name],
                            "random": [_accuracy(r[name]) for r in random_correct], "chance": CHANCE}
                     for name, items in pairs.items()}
    every = [c for name in pairs for c in correct[name]]
    overall = {"pairs": len(every), "accuracy": _accuracy(every),
               "random": [_accuracy([c for name in pairs for c in r[name]]) for r in random_correct]}
    return {"form": form, "form_rule": FORMS[form], "constructions": constructions, "overall": overall,
            "ties": ties, "max_pairs": max_pairs, "random_seeds": random_seeds, "scoring": "PLL-word-l2r",
            "sentences_scored": len(texts), "scheme": (info.get("config") or {}).get("scheme", info.get("scheme")),
            "checkpoint": os.path.abspath(checkpoint), "lm_data": os.path.abspath(lm_data),
            "pairs_dir": os.path.abspath(pairs_dir), "seconds": round(time.perf_counter() - started, 3)}


# --- command line ------------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m train_scripts.agreement", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--lm-data", required=True, help="the binarize --lm folder the model was pretrained on")
    ap.add_argument("--checkpoint", required=True, help="the pretrained RoBERTa (pretrain_roberta.sh)")
    ap.add_argument("--pairs", required=True, help="folder of CLAMS files (*.txt, one construction each)")
    ap.add_argument("--form", choices=sorted(FORMS), default="pretraining",
                    help="pretraining: capitalised, with a final full stop, as the pretraining text; clams: as is")
    ap.add_argument("--random-seeds", type=int, default=0, help="random-weight control encoders (seeds 1..N)")
    ap.add_argument("--max-pairs", type=int, default=0,
                    help="N pairs of each construction, spread evenly over its file (0: all)")
    ap.add_argument("--batch-size", type=int, default=BATCH_SIZE, help="masked copies per forward pass")
    ap.add_argument("--threads", type=int, default=THREADS,
                    help="torch CPU threads (0: torch's default; 1 is fastest on a small shared machine)")
    ap.add_argument("--output", default=None, help="write the JSON record here (default: stdout only)")
    a = ap.parse_args(argv)
    for path, what in ((a.lm_data, "--lm-data"), (a.checkpoint, "--checkpoint")):
        if not os.path.exists(path):
            raise UserError(f"{what} not found: {path}")
    result = agreement(a.lm_data, a.checkpoint, a.pairs, a.form, a.random_seeds, a.max_pairs, a.batch_size,
                       a.threads)
    write_record(result, a.output)
    return 0


def cli() -> None:
    """Console-script entry point."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
