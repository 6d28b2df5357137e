"""Morphological boundary evaluation (Creutz et al., 2004) as the space-as-token paper applies it.

Each gold word is tokenised on its own; its pieces, with ``▁`` stripped and standalone ``▁`` pieces ignored,
define boundary positions (character offsets between pieces).  Against the gold morph boundaries:
hits H (in both), insertions I (predicted only), deletions D (gold only), summed over all words; then
precision = H / (H + I), recall = H / (H + D), F1 their harmonic mean.  Mean sequence length is the mean
number of pieces per word.  Only concatenative gold entries (morphs joined == word) are used.

    python -m preprocess.evaluate.morph --model P.model [--spaces drop] \\
        --gold ../shared/data/morph_gold/eng.word.dev.tsv [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Callable, Iterable, Sequence

from preprocess.common import UserError, require_file, run_main

from preprocess.spm import SPACE_SYMBOL


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


def evaluate(segment: Callable[[str], list[str]], gold: list[tuple[str, list[str]]]) -> dict:
    """Evaluate a word segmenter; words whose cleaned pieces do not spell the word (normalisation, unknown
    characters) are left out and counted in ``skipped``."""
    preds, refs, skipped = [], [], 0
    for word, morphs in gold:
        pieces = clean_pieces(segment(word))
        if "".join(pieces) != word:
            skipped += 1
            continue
        preds.append(pieces)
        refs.append(morphs)
    result = boundary_prf(preds, refs)
    result["skipped"] = skipped
    return result


def spm_segmenter(model_path: str, spaces: str = "keep") -> Callable[[str], list[str]]:
    from preprocess.spaces import SpacesEncoder

    enc = SpacesEncoder(model_path, spaces)
    return enc.encode_pieces


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m preprocess.evaluate.morph", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", nargs="+", required=True, help="SentencePiece model(s); one table row each")
    parser.add_argument("--spaces", choices=["keep", "drop"], default="keep")
    parser.add_argument("--gold", required=True, help="gold file, e.g. ../shared/data/morph_gold/eng.word.dev.tsv")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a Markdown table")
    args = parser.parse_args(argv)
    gold = read_gold(args.gold)
    rows = {}
    for model in args.model:
        rows[os.path.basename(model)] = evaluate(spm_segmenter(model, args.spaces), gold)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"gold: {args.gold} ({len(gold)} concatenative entries)\n")
        print("| model | words | mean pieces/word | precision | recall | F1 |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, r in rows.items():
            print(f"| {name} | {r['n_words']} | {r['mean_pieces']:.2f} | {100 * r['precision']:.1f} | "
                  f"{100 * r['recall']:.1f} | {100 * r['f1']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
