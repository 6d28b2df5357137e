"""Morphological boundary evaluation (Creutz et al., 2004) as the space-as-token paper applies it.

Protocols (``protocol=``, ``--protocol``):

* ``paper`` (default): the space-as-token paper's section 4.  Its gold sets (LADEC compounds, MorphoLex,
  MorphyNet and DagoBERT derivations) contain only complex words, so only gold words with **at least two
  morphs** are scored; boundaries micro-averaged over those words, precision reported beside F1 ("we report
  precision along with F1 ... since this allows undersegmentation whilst penalising oversegmentation").
* ``all``: every concatenative gold word, single-morph words included (a single-morph word adds no gold
  boundary, so every boundary a tokeniser puts into it is an insertion: precision drops, recall is unchanged).

Each gold word is tokenised on its own; its pieces, with ``▁`` stripped and standalone ``▁`` pieces ignored,
define boundary positions (character offsets between pieces).  Against the gold morph boundaries:
hits H (in both), insertions I (predicted only), deletions D (gold only), summed over all words; then
precision = H / (H + I), recall = H / (H + D), F1 their harmonic mean.  Mean sequence length is the mean
number of pieces per word.  Only concatenative gold entries (morphs joined == word) are used.

Schemes that do not spell every word (FLOTA keeps at most k pieces and drops the rest of the word by design) are
scored on the same gold words as the others: the pieces are placed in the word left to right (each piece at its
first occurrence after the previous one), and a boundary is predicted at every edge of a placed piece inside the
word, so an uncovered stretch counts as delimited on both sides and the gold boundaries inside it count as
deletions.  For a word whose pieces spell it this is the plain definition above.  ``coverage`` (covered
characters / characters of the scored words) and ``spelled`` (words whose pieces spell them exactly) say how much
of the words the pieces kept.  Only a word whose pieces cannot be placed at all (a piece that is not in the word:
normalisation, an unknown-token symbol) is skipped; ``skipped`` counts them beside ``n_words``.

    python -m preprocess.evaluate.morph --model P.model [--spaces drop] [--protocol paper|all] \\
        --gold ../shared/data/morph_gold/eng.word.dev.tsv [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Callable, Iterable, Sequence

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.files.inputs import require_file
from preprocess.models.spm_model import SPACE_SYMBOL

PROTOCOLS = {"paper": "words with at least two gold morphs (space-as-token paper, section 4)",
             "all": "all concatenative gold words"}


def boundaries(pieces: Sequence[str]) -> set[int]:
    """Character offsets of the boundaries between consecutive non-empty pieces."""
    out, pos = set(), 0
    lengths = [len(p) for p in pieces if p]
    for n in lengths[:-1]:
        pos += n
        out.add(pos)
    return out


def clean_pieces(pieces: Iterable[str]) -> list[str]:
    """Strip ``▁`` from pieces and drop the pieces that were only ``▁``."""
    out = []
    for p in pieces:
        p = p.replace(SPACE_SYMBOL, "")
        if p:
            out.append(p)
    return out


def boundary_prf(predicted: Iterable[Sequence[str]], gold: Iterable[Sequence[str]]) -> dict:
    """Micro-averaged boundary precision/recall/F1 over words.

    Both arguments are iterables of piece lists, one per word, in the same order; pieces of a word must
    concatenate to the same string on both sides (a mismatch raises ValueError: compare like with like).
    Also returns ``mean_pieces`` (of the predictions), ``n_words`` and the raw counts.
    """
    hits = ins = dels = n = total_pieces = 0
    for pred, ref in zip(predicted, gold, strict=True):
        pred = [p for p in pred if p]
        if "".join(pred) != "".join(ref):
            raise ValueError(f"pieces {pred} do not spell the gold word {''.join(ref)!r}")
        bp, br = boundaries(pred), boundaries(ref)
        hits += len(bp & br)
        ins += len(bp - br)
        dels += len(br - bp)
        n += 1
        total_pieces += len(pred)
    precision = hits / (hits + ins) if hits + ins else 0.0
    recall = hits / (hits + dels) if hits + dels else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "mean_pieces": total_pieces / n if n else 0.0,
            "n_words": n, "hits": hits, "insertions": ins, "deletions": dels}


def read_gold(path: str) -> list[tuple[str, list[str]]]:
    """SIGMORPHON 2022 word-level file: ``word<TAB>morph @@morph ...<TAB>category``; concatenative entries only."""
    require_file(path, "gold segmentation file")
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 2 or not parts[0]:
                continue
            word = parts[0]
            morphs = [m for m in parts[1].replace("@@", "").split(" ") if m]
            if "".join(morphs) == word:
                out.append((word, morphs))
    if not out:
        raise UserError(f"no concatenative entries in {path}")
    return out


def select_gold(gold: list[tuple[str, list[str]]], protocol: str = "paper") -> list[tuple[str, list[str]]]:
    """The gold entries a protocol scores (see the module docstring)."""
    if protocol not in PROTOCOLS:
        raise UserError(f"unknown boundary protocol {protocol!r} (choose from {', '.join(PROTOCOLS)})")
    if protocol == "all":
        return list(gold)
    return [(w, m) for w, m in gold if len(m) >= 2]


def place(pieces: Sequence[str], word: str) -> list[tuple[int, int]] | None:
    """(start, end) of each piece in ``word``, left to right, each at its first occurrence after the previous piece
    (see the module docstring); None when a piece cannot be placed."""
    spans, pos = [], 0
    for p in pieces:
        start = word.find(p, pos)
        if start < 0:
            return None
        spans.append((start, start + len(p)))
        pos = start + len(p)
    return spans


def span_boundaries(spans: Sequence[tuple[int, int]], length: int) -> set[int]:
    """Predicted boundaries of placed pieces: every piece edge strictly inside the word."""
    return {x for a, b in spans for x in (a, b) if 0 < x < length}


def evaluate(segment: Callable[[str], list[str]], gold: list[tuple[str, list[str]]],
             protocol: str = "paper") -> dict:
    """Evaluate a word segmenter on the gold entries ``protocol`` selects (see the module docstring): every word
    whose pieces can be placed in it is scored, whether or not they spell it.  The result carries ``protocol``,
    ``n_gold`` (words the protocol selects), ``n_words`` (scored), ``skipped`` (pieces not placeable),
    ``spelled`` (scored words spelled exactly), ``coverage`` (share of the scored words' characters inside a
    piece) and ``mean_pieces`` (pieces per scored word)."""
    selected = select_gold(gold, protocol)
    if not selected:
        raise UserError(f"no gold words left under the {protocol!r} protocol")
    hits = ins = dels = n = total_pieces = skipped = spelled = covered = chars = 0
    for word, morphs in selected:
        pieces = clean_pieces(segment(word))
        spans = place(pieces, word)
        if spans is None or not pieces:
            skipped += 1
            continue
        bp, br = span_boundaries(spans, len(word)), boundaries(morphs)
        hits += len(bp & br)
        ins += len(bp - br)
        dels += len(br - bp)
        n += 1
        total_pieces += len(pieces)
        spelled += "".join(pieces) == word
        covered += sum(b - a for a, b in spans)
        chars += len(word)
    precision = hits / (hits + ins) if hits + ins else 0.0
    recall = hits / (hits + dels) if hits + dels else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "mean_pieces": total_pieces / n if n else 0.0,
            "n_words": n, "hits": hits, "insertions": ins, "deletions": dels, "skipped": skipped,
            "n_gold": len(selected), "spelled": spelled, "coverage": covered / chars if chars else 0.0,
            "protocol": protocol}


def spm_segmenter(model_path: str, spaces: str = "keep") -> Callable[[str], list[str]]:
    from preprocess import registry

    enc = registry.spm_encoder_of(model_path, spaces)   # the encoder of the scheme that declares spm_encoder
    return enc.encode_pieces


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m preprocess.evaluate.morph", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", nargs="+", required=True, help="SentencePiece model(s); one table row each")
    parser.add_argument("--spaces", choices=["keep", "drop"], default="keep",
                        help="keep or drop the standalone ▁ pieces")
    parser.add_argument("--gold", required=True, help="gold file, e.g. ../shared/data/morph_gold/eng.word.dev.tsv")
    parser.add_argument("--protocol", choices=list(PROTOCOLS), default="paper",
                        help="paper: " + PROTOCOLS["paper"] + "; all: " + PROTOCOLS["all"])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a Markdown table")
    args = parser.parse_args(argv)
    gold = read_gold(args.gold)
    rows = {}
    for model in args.model:
        rows[os.path.basename(model)] = evaluate(spm_segmenter(model, args.spaces), gold, args.protocol)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"gold: {args.gold} ({len(gold)} concatenative entries; protocol {args.protocol}: "
              f"{PROTOCOLS[args.protocol]})\n")
        print("| model | words scored | skipped | coverage | mean pieces/word | precision | recall | F1 |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, r in rows.items():
            print(f"| {name} | {r['n_words']} | {r['skipped']} | {100 * r['coverage']:.1f}% | "
                  f"{r['mean_pieces']:.2f} | {100 * r['precision']:.1f} | {100 * r['recall']:.1f} | "
                  f"{100 * r['f1']:.1f} |")
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
