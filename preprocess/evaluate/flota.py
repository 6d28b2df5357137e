"""FLOTA evaluation (Hofmann et al., 2022): section 3 metrics on gold segmentations and Table 3 lengths.

    python -m preprocess.evaluate.flota [--data ../shared/data] [--json results.json]

Morphology (section 3).  Gold words: the concatenative entries of ``morph_gold/eng.word.dev.tsv`` with exactly
two morphs (SIGMORPHON 2022, word level), kept for an inventory when the word is not in it (in neither form)
while both morphs are (in either form).  For FLOTA, FIRST (the first k pieces of the standard segmentation) and
LONGEST (the k longest, in order), with pieces compared to morphs after removing the marker (``##``/``Ġ``/``▁``):

* C (k = 1..4): morphological coverage, the share of the two gold morphs whose characters are all covered by
  the returned pieces (the paper's example: for undesirable and k = 3, FIRST und es ira and LONGEST und ira ble
  cover un but not desirable, C = 0.5, FLOTA un desirable covers both, C = 1);
* R (k = 1): stem recall, 1 if the single piece is the stem;
* M (k = 2): full match, 1 if the pieces are exactly the two morphs;
* tokens (k = inf): mean number of pieces of the complete tokenisation.

The stem: for an inflected or derived word, the morph that is not an affix, i.e. the second morph when the
first one is one of the English prefixes in :data:`PREFIXES`, else the first; for a compound (category 001)
either morph counts.  FIRST and LONGEST need the standard segmentation, which exists for the WordPiece (BERT)
inventory only (the shared gpt2 and xlnet files are bare token lists), so those rows are BERT only.

Lengths (Table 3): mean tokens per title of ArXiv-L physics (train + dev + test), standard tokenisation
(WordPiece over the same pretokenisation) and FLOTA for k = 1..4.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from statistics import mean

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.schemes.flota import PRETOKENIZE, STYLES, FlotaTokenizer

INVENTORIES = [("BERT", "bert-base-uncased", "wordpiece"), ("GPT-2", "gpt2", "gpt2"),
               ("XLNet", "xlnet-base-cased", "sentencepiece")]
KS = (1, 2, 3, 4)
#: English derivational prefixes (Crystal 1997's productive prefixes and other common ones) used to pick the
#: stem of a two-morph derivative
PREFIXES = frozenset("""a ab ad after ambi an ante anti arch auto be bi by circum co col com con contra counter de
di dia dis down e em en epi ex extra fore hemi hetero homo hyper hypo il im in infra inter intra ir iso kilo mal
maxi mega micro mid midi mini mis mono multi neo non omni out over pan para peri poly post pre pro proto pseudo
quasi re retro self semi sub super supra sur sym syn tele trans tri ultra un under uni up vice""".split())


def read_two_morph_gold(path: str) -> list:
    """(word, [morph1, morph2], category) for concatenative two-morph entries, in file order, deduplicated."""
    out, seen = [], set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 2:
                continue
            word, seg = parts[0], parts[1]
            category = parts[2] if len(parts) > 2 else ""
            morphs = [m[2:] if m.startswith("@@") else m for m in seg.split(" ")]
            morphs = [m for m in morphs if m]
            if len(morphs) != 2 or "".join(morphs) != word or word in seen:
                continue
            seen.add(word)
            out.append((word, morphs, category))
    return out


def stems_of(morphs: list, category: str) -> set:
    if category == "001":
        return set(morphs)
    return {morphs[1]} if morphs[0] in PREFIXES else {morphs[0]}


def _in_vocab(s: str, vocab: frozenset, marker: str) -> bool:
    return s in vocab or marker + s in vocab


def strip_marker(piece: str, marker: str) -> str:
    return piece[len(marker):] if piece.startswith(marker) and len(piece) > len(marker) else piece


def select_words(gold: list, vocab: frozenset, marker: str) -> list:
    return [(w, m, c) for w, m, c in gold
            if not _in_vocab(w, vocab, marker) and all(_in_vocab(x, vocab, marker) for x in m)]


def gold_spans(morphs: list) -> list:
    spans, pos = [], 0
    for m in morphs:
        spans.append((pos, pos + len(m)))
        pos += len(m)
    return spans


def coverage(piece_spans: list, morphs: list) -> float:
    """Share of the gold morphs whose characters are all covered by the returned pieces."""
    covered = set()
    for start, end in piece_spans:
        covered.update(range(start, end))
    return mean(1.0 if all(p in covered for p in range(a, b)) else 0.0 for a, b in gold_spans(morphs))


def pieces_with_spans(tok: FlotaTokenizer, word: str, k: int) -> list:
    """(start, end, piece without marker) of what ``tok`` returns for ``word`` with at most ``k`` pieces."""
    marker = tok.marker
    if tok.mode == "flota":
        found = tok.flota_pieces(word, k)
        out = [(i, i + len(strip_marker(p, marker)), strip_marker(p, marker)) for i, p in found]
    else:
        standard, pos = [], 0
        for p in tok.standard_tokenize_word(word):
            bare = p[len(marker):] if p.startswith(marker) else p
            if p == tok.vocab.unk_token:
                standard = []
                break
            standard.append((pos, pos + len(bare), bare, p))
            pos += len(bare)
        if tok.mode == "first":
            chosen = standard[:k]
        else:
            ranked = sorted(range(len(standard)), key=lambda j: len(standard[j][3].lstrip(marker)), reverse=True)
            chosen = [standard[j] for j in sorted(ranked[:k])]
        out = [(a, b, bare) for a, b, bare, _ in chosen]
    return out


def morph_metrics(vocab_path: str, style: str, mode: str, words: list) -> dict:
    tok = FlotaTokenizer(vocab_path, style, k=1, mode=mode)
    res = {}
    for k in KS:
        res[f"C{k}"] = mean(coverage([(a, b) for a, b, _ in pieces_with_spans(tok, w, k)], m) for w, m, _ in words)
    res["R"] = mean(1.0 if [p for _, _, p in pieces_with_spans(tok, w, 1)][:1] and
                    pieces_with_spans(tok, w, 1)[0][2] in stems_of(m, c) else 0.0 for w, m, c in words)
    res["M"] = mean(1.0 if [p for _, _, p in pieces_with_spans(tok, w, 2)] == m else 0.0 for w, m, _ in words)
    res["tokens_inf"] = mean(len(pieces_with_spans(tok, w, 10_000)) for w, _, _ in words)
    res["n"] = len(words)
    return res


def read_titles(folder: str, pattern: str) -> list:
    out = []
    for split in ("train", "dev", "test"):
        path = os.path.join(folder, pattern.format(split=split))
        if not os.path.isfile(path):
            raise UserError(f"ArXiv file not found: {path}")
        with open(path, encoding="utf-8", newline="") as fh:
            out.extend(row["text"] for row in csv.DictReader(fh))
    return out


def length_table(vocab_dir: str, titles: list) -> dict:
    rows = {}
    for label, name, style in INVENTORIES:
        path = os.path.join(vocab_dir, f"{name}.txt")
        row = {}
        if style == "wordpiece":
            st = FlotaTokenizer(path, style, k=1, mode="first")
            row["ST"] = mean(sum(len(st.standard_tokenize_word(w)) for w in PRETOKENIZE.findall(t)) for t in titles)
        for k in KS:
            tok = FlotaTokenizer(path, style, k=k)
            row[f"k={k}"] = mean(len(tok.tokenize(t)) for t in titles)
        rows[label] = row
    return rows


def markdown_morph(results: dict) -> str:
    lines = ["| Model | Tokenization | n | C k=1 | C k=2 | C k=3 | C k=4 | R (k=1) | M (k=2) | tokens (k=inf) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (label, mode), r in results.items():
        lines.append(f"| {label} | {mode.upper()} | {r['n']} | " + " | ".join(f"{r[f'C{k}']:.3f}" for k in KS)
                     + f" | {r['R']:.3f} | {r['M']:.3f} | {r['tokens_inf']:.2f} |")
    return "\n".join(lines)


def markdown_lengths(rows: dict, n_titles: int) -> str:
    lines = ["| Model | ST | FLOTA k=1 | k=2 | k=3 | k=4 |", "|---|---|---|---|---|---|"]
    for label, row in rows.items():
        st = f"{row['ST']:.1f}" if "ST" in row else "n/a"
        lines.append(f"| {label} | {st} | " + " | ".join(f"{row[f'k={k}']:.1f}" for k in KS) + " |")
    return "\n".join(lines) + f"\n\n({n_titles} titles of ArXiv-L physics, train + dev + test)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m preprocess.evaluate.flota", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--data", required=True, help="the data folder (e.g. ../shared/data)")
    parser.add_argument("--gold", default=None, help="gold file (default DATA/morph_gold/eng.word.dev.tsv)")
    parser.add_argument("--vocab-dir", default=None, help="inventories (default DATA/flota_vocabs)")
    parser.add_argument("--arxiv", default=None, help="ArXiv CSV folder (default DATA/flota_arxiv)")
    parser.add_argument("--json", default=None, help="also write the numbers as JSON here")
    parser.add_argument("--skip-lengths", action="store_true", help="only the morphology table")
    args = parser.parse_args(argv)
    gold_path = args.gold or os.path.join(args.data, "morph_gold", "eng.word.dev.tsv")
    vocab_dir = args.vocab_dir or os.path.join(args.data, "flota_vocabs")
    arxiv = args.arxiv or os.path.join(args.data, "flota_arxiv")
    if not os.path.isfile(gold_path):
        raise UserError(f"gold segmentations not found: {gold_path}")
    if args.json:   # checked before any work: no output over the gold file or an inventory
        from preprocess.files.outputs import check_distinct, check_output_path
        check_output_path(args.json)
        check_distinct([(args.json, "--json")], [(gold_path, "--gold")] + [
            (os.path.join(vocab_dir, f"{name}.txt"), "inventory") for _, name, _ in INVENTORIES])
    gold = read_two_morph_gold(gold_path)
    morph = {}
    for label, name, style in INVENTORIES:
        path = os.path.join(vocab_dir, f"{name}.txt")
        if not os.path.isfile(path):
            raise UserError(f"inventory not found: {path}")
        tok = FlotaTokenizer(path, style)
        words = select_words(gold, tok.token_set, STYLES[style][0])
        modes = ("first", "longest", "flota") if style == "wordpiece" else ("flota",)
        for mode in modes:
            morph[(label, mode)] = morph_metrics(path, style, mode, words)
    print(f"## Morphological quality ({len(gold)} two-morph gold words; n = those usable per inventory)\n")
    print(markdown_morph(morph))
    out = {"morphology": {f"{label}/{mode}": r for (label, mode), r in morph.items()}}
    if not args.skip_lengths:
        titles = read_titles(arxiv, "arxiv_physics_1e+03_{split}.csv")
        rows = length_table(vocab_dir, titles)
        print("\n## Mean tokens per title (Table 3)\n")
        print(markdown_lengths(rows, len(titles)))
        out["lengths"] = rows
        out["n_titles"] = len(titles)
    if args.json:
        from preprocess.files.outputs import atomic_output
        with atomic_output(args.json) as fh:
            json.dump(out, fh, indent=1)
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
