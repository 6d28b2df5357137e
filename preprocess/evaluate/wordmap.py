"""Boundary P/R/F1 and mean pieces per verb: Wordmap vs plain SentencePiece BPE and Unigram, German verbs.

Gold: MorphyNet German derivational entries whose derived word is a verb and is concatenative
(``derived == affix + base`` for prefixes, ``base + affix`` for suffixes; compared in lower case), e.g.
``fallen -> be|fallen``.  Every system segments each gold verb on its own; boundaries are scored with
:func:`preprocess.evaluate.morph.boundary_prf` (Creutz, as in the space-as-token evaluation).

The Wordmap vocabulary is built from the verbs HanTa finds in ``--corpus`` (never from the gold list, unless
``--extra-words`` is given); the SentencePiece models are trained on the same corpus with ``--vocab-size``
pieces (default: the size of the Wordmap vocabulary, so the inventories are comparable).

    python -m preprocess.evaluate.wordmap --corpus ../shared/data/multi30k/train.de.gz \\
        --gold ../shared/data/morph_gold/deu.derivational.v1.tsv [--verbs verbs.txt] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.evaluate.morph import boundary_prf
from preprocess.files.inputs import UTF8_HINT, read_lines, require_file
from preprocess.models import spm
from preprocess.models.spm_model import SPACE_SYMBOL, load_model
from preprocess.schemes import wordmap as wm


def read_derivational_verbs(path: str) -> list[tuple[str, list[str]]]:
    """Concatenative verb derivations of MorphyNet as ``(word, [morph, morph])``, lower case, unique words."""
    require_file(path, "gold file")
    out, seen = [], set()
    for line in read_lines(path, errors="replace"):
        f = line.split("\t")
        if len(f) < 6 or f[3] != "V":
            continue
        base, derived, affix, kind = f[0].lower(), f[1].lower(), f[4].lower(), f[5]
        if not base or not affix or derived in seen:
            continue
        if kind == "prefix" and derived == affix + base:
            morphs = [affix, base]
        elif kind == "suffix" and derived == base + affix:
            morphs = [base, affix]
        else:
            continue
        seen.add(derived)
        out.append((derived, morphs))
    return out


def spm_segment(sp, word: str) -> list[str]:
    pieces = [p.replace(SPACE_SYMBOL, "") for p in sp.encode(word, out_type=str)]
    return [p for p in pieces if p]


def evaluate(corpus_lines: list[str], gold: list[tuple[str, list[str]]], verbs: list[str],
             vocab_size: int | None, mode: str) -> tuple[list[dict], dict]:
    t0 = time.time()
    vocab = wm.build_vocabulary(verbs, mode=mode)
    build_s = time.time() - t0
    size = vocab_size or len(vocab)
    words = [w for w, _ in gold]
    golds = [m for _, m in gold]
    rows = []
    wm_pred = [wm.segment(w, vocab) for w in words]
    res = boundary_prf(wm_pred, golds)
    res.update(system=f"Wordmap ({mode})", vocab=len(vocab),
               segmented=sum(len(p) > 1 for p in wm_pred) / len(words))
    rows.append(res)
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("bpe", "unigram"):
            prefix = os.path.join(tmp, kind)
            sp = load_model(spm.train([], prefix, model_type=kind, vocab_size=size,
                                      num_threads=1, sentences=corpus_lines,
                                      extra_options={"normalization_rule_name": "identity", "hard_vocab_limit": False,
                                                     "shuffle_input_sentence": False}))
            pred = [spm_segment(sp, w) for w in words]
            res = boundary_prf(pred, golds)
            res.update(system=f"SentencePiece {'BPE' if kind == 'bpe' else 'Unigram'}", vocab=sp.get_piece_size(),
                       segmented=sum(len(p) > 1 for p in pred) / len(words))
            rows.append(res)
    info = {"verbs": len(verbs), "gold_words": len(words), "wordmap_build_s": round(build_s, 2),
            "functional": len(vocab.functional), "lexemic": len(vocab.lexemic)}
    return rows, info


def markdown(rows: list[dict]) -> str:
    out = ["| system | vocab | precision | recall | F1 | mean pieces / verb | verbs split |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        out.append(f"| {r['system']} | {r['vocab']} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | "
                   f"{r['mean_pieces']:.2f} | {100 * r['segmented']:.1f}% |")
    return "\n".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m preprocess.evaluate.wordmap", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--corpus", required=True, help="German text, e.g. ../shared/data/multi30k/train.de.gz")
    p.add_argument("--gold", required=True, help="e.g. ../shared/data/morph_gold/deu.derivational.v1.tsv")
    p.add_argument("--max-lines", type=int, default=0, help="first N corpus lines only (0 = all)")
    p.add_argument("--verbs", help="verb list to build Wordmap from (skips HanTa tagging of the corpus)")
    p.add_argument("--extra-words", help="word list added to the verbs (note: the gold verbs would leak)")
    p.add_argument("--vocab-size", type=int, default=0, help="SentencePiece size (0 = Wordmap vocabulary size)")
    p.add_argument("--split", choices=wm.SPLIT_MODES, nargs="+", default=[wm.DEFAULT_SPLIT],
                   help="split modes of the vocabulary to compare")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    lines = []
    for i, line in enumerate(read_lines(require_file(args.corpus, "corpus"), errors="replace")):
        if args.max_lines and i >= args.max_lines:
            break
        if line.strip():
            lines.append(line)
    if not lines:
        raise UserError("empty corpus")
    gold = read_derivational_verbs(args.gold)
    if not gold:
        raise UserError(f"no concatenative verb derivations in {args.gold}")
    if args.verbs:
        verbs = wm.extract_verbs([], extra_words=[w for l in read_lines(args.verbs, hint=UTF8_HINT) for w in l.split()])
    else:
        verbs = wm.extract_verbs(lines)
    if args.extra_words:
        verbs = wm.extract_verbs([], extra_words=verbs + [w for l in read_lines(args.extra_words, hint=UTF8_HINT) for w in l.split()])
    all_rows = []
    for mode in args.split:
        rows, info = evaluate(lines, gold, verbs, args.vocab_size or None, mode)
        all_rows.extend(rows if not all_rows else rows[:1])
        print(f"# {mode}: {info}", file=sys.stderr)
    if args.json:
        print(json.dumps(all_rows, indent=1))
    else:
        print(markdown(all_rows))
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
