"""Model-independent metrics of the BITE paper (Tan et al. 2020, section 5 and appendix B.4), and a seeded
inflectional-noise generator (MORPHEUS-like) for robustness studies.

    python -m preprocess.evaluate.bite coverage   --input CORPUS [--sizes 1000 5000 10000] [--json]
    python -m preprocess.evaluate.bite complexity --models A.model [B.model ...] --words WORDLIST [--lam 2]
    python -m preprocess.evaluate.bite similarity --input CORPUS [--seed 0] [--fraction 0.3]
                                                  [--model D.model] [--bite-model BITE_D.model]
    python -m preprocess.evaluate.bite perturb    --input CORPUS --output NOISY [--seed 0] [--fraction 0.3]
    python -m preprocess.evaluate.bite agreement  --input CORPUS          (nltk vs hanta inflection decisions)
    python -m preprocess.evaluate.bite roundtrip  --input CORPUS [--subword-model BITE_D.model] [--json]
    python -m preprocess.evaluate.bite lengths    --input CORPUS [--sizes 4000 8000 16000 32000]
                                                  [--model-types unigram bpe] [--eval-input TEXT]
                                                  | --input TEXT --model D.model --bite-model BITE_D.model

* **Vocabulary coverage** (5.1): the vocabulary is the N most frequent types of the encoded corpus (BITE: base forms
  and inflection symbols; baseline: the unencoded, pretokenised words); coverage = share of corpus tokens that are
  in it.  Reported per encoded token (the paper's definition) and per original word (an inflected word counts as
  covered only when its base *and* its symbol are).
* **Symbol complexity** (5.1, eq. 1 and eq. 2): each word of a word list is encoded alone by a subword model;
  ``SymbComp = sum_i (|S_i| - u_i) + lam * u_i`` with ``u_i`` unknown pieces; ``lam = 2`` is eq. 1
  (``|S_i| + u_i``).  Also normalised by the number of words.
* **Ratcliff/Obershelp similarity** (5.2, difflib): mean ``SequenceMatcher(None, enc(clean), enc(noisy)).ratio()``
  over sentences, where the noisy sentence swaps inflections of nouns/verbs/adjectives to other forms of the same
  lemma (seeded).  Compared for the unencoded words, BITE, and optionally D and BITE+D subword models.
* **Round-trip rate**: the share of sentences that decoding gives back unchanged after encoding (as normalised:
  whitespace, and the subword model's normaliser where one is given), for the published algorithm (``default``)
  and with ``--bite-exact`` (``exact``, 100% by construction); see :func:`round_trip_rate`.
* **Sequence lengths** (appendix C, Figure 8): relative increase of the mean encoded length of BITE+D over D
  (same subword algorithm, same vocabulary size), beside the share of inflected words (the dotted baseline:
  the increase if BITE did not help the subword model at all).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.evaluate.noise import InflectionNoise, sequence_similarity
from preprocess.files.inputs import read_lines, require_file
from preprocess.models.spm import SpmOptions
from preprocess.models.spm_model import load_model
from preprocess.options import add_arguments, options_from
from preprocess.schemes.bite import BiteOptions
from preprocess.tagging import HANTA, NLTK
from preprocess.whitespace_noise import PAPER_FRACTION, NoiseOptions


def noise_options(p: argparse.ArgumentParser) -> None:
    """The inflection noise's options, as ``python -m preprocess.evaluate.noise perturb`` has them."""
    p.add_argument("--fraction", "--rate", type=float, default=0.3,
                   help="probability that an inflectable word is re-inflected")
    p.add_argument("--seed", type=int, default=0, help="seed of the noise (with the line's text)")


# ---- coverage ------------------------------------------------------------------------------------------------
def coverage(sentences: Sequence[Sequence[str]], sizes: Sequence[int]) -> Dict[int, float]:
    """Share of tokens of ``sentences`` covered by the N most frequent types, for each N in ``sizes``."""
    counts = Counter(t for s in sentences for t in s)
    total = sum(counts.values())
    ranked = [c for _, c in counts.most_common()]
    out = {}
    for n in sizes:
        out[n] = sum(ranked[:n]) / total if total else 0.0
    return out


def word_coverage(groups: Sequence[Sequence[Tuple[str, ...]]], sizes: Sequence[int]) -> Dict[int, float]:
    """Per original word: a word (tuple of its encoded symbols) is covered when all its symbols are in the top N."""
    counts = Counter(t for s in groups for g in s for t in g)
    n_words = sum(len(s) for s in groups)
    order = [t for t, _ in counts.most_common()]
    rank = {t: i for i, t in enumerate(order)}
    # a word is covered by a top-N vocabulary iff its worst-ranked symbol is < N
    worst = Counter(max(rank[t] for t in g) for s in groups for g in s)
    out = {}
    for n in sizes:
        out[n] = sum(c for r, c in worst.items() if r < n) / n_words if n_words else 0.0
    return out


def _tokenizer(options, **overrides):
    """The :class:`~preprocess.schemes.bite.BiteTokenizer` of BITE's ``options`` (``overrides``: fields replaced)."""
    from preprocess.schemes.bite import BiteTokenizer

    return BiteTokenizer.from_options(options_from(BiteOptions, options, **overrides))


def coverage_report(lines: Sequence[str], sizes: Sequence[int], options=None) -> dict:
    """``options``: BITE's (:class:`~preprocess.schemes.bite.BiteOptions`, a namespace or a dict; its pretokeniser and
    tagger are used), as every function here takes them."""
    b = _tokenizer(options)
    words = [b.pretokenize(l) for l in lines]
    tags = b.tagger.tag_sents(words)
    groups = [[b._encode_word(w, t) for w, t in zip(ws, ts)] for ws, ts in zip(words, tags)]
    bite_tokens = [[x for g in s for x in g] for s in groups]
    base_groups = [[(w,) for w in ws] for ws in words]
    return {
        "sizes": list(sizes),
        "n_words": sum(map(len, words)), "n_bite_symbols": sum(map(len, bite_tokens)),
        "types_unencoded": len({w for s in words for w in s}), "types_bite": len({t for s in bite_tokens for t in s}),
        "coverage_unencoded": coverage(words, sizes), "coverage_bite": coverage(bite_tokens, sizes),
        "word_coverage_unencoded": word_coverage(base_groups, sizes),
        "word_coverage_bite": word_coverage(groups, sizes),
    }


# ---- symbol complexity -------------------------------------------------------------------------------------
def symbol_complexity(encoded: Iterable[Sequence[int]], unk_id: int, lam: float = 2.0) -> Tuple[float, int]:
    """Eq. 2: sum over words of (|S_i| - u_i) + lam * u_i; returns (value, number of words)."""
    total, n = 0.0, 0
    for ids in encoded:
        u = sum(1 for i in ids if i == unk_id)
        total += (len(ids) - u) + lam * u
        n += 1
    return total, n


def model_complexity(model_path: str, words: Sequence[str], lam: float = 2.0) -> dict:
    sp = load_model(model_path)
    ids = sp.encode(list(words))
    value, n = symbol_complexity(ids, sp.unk_id(), lam)
    n_unk = sum(1 for s in ids for i in s if i == sp.unk_id())
    return {"model": model_path, "lambda": lam, "symbol_complexity": value, "n_words": n,
            "per_word": value / n if n else 0.0, "unknown_pieces": n_unk, "vocab_size": sp.get_piece_size()}


# ---- Ratcliff/Obershelp over inflectional noise (one noise, one similarity: preprocess.evaluate.noise) ----------
def similarity_report(lines: Sequence[str], seed: int = NoiseOptions.noise_seed, fraction: float = PAPER_FRACTION,
                      options=None, model: Optional[str] = None, bite_model: Optional[str] = None) -> dict:
    """Mean Ratcliff/Obershelp similarity of clean vs inflection-perturbed encodings (the noise of
    :class:`preprocess.evaluate.noise.InflectionNoise`, the similarity of :func:`~preprocess.evaluate.noise.
    sequence_similarity`), over the sentences the noise changed; the noise tags with BITE's tagger."""
    options = options_from(BiteOptions, options)
    b = _tokenizer(options)
    noise = InflectionNoise(fraction, seed, options.bite_tagger)
    lines = [" ".join(l.split()) for l in lines]
    lines = [l for l in lines if l]
    noisy, n_changed = zip(*[(x, c) for x, _, c in map(noise.perturb, lines)]) if lines else ((), ())
    encoders = {"unencoded": lambda ls: [b.pretokenize(l) for l in ls],
                "bite": lambda ls: b.tokenize_batch(ls)}
    if model:
        sp = load_model(model)
        encoders["D"] = lambda ls: sp.encode([" ".join(b.pretokenize(l)) for l in ls], out_type=str)
    if bite_model:
        spb = load_model(bite_model)
        encoders["BITE+D"] = lambda ls: spb.encode([b.subword_text(t) for t in b.tokenize_batch(ls)], out_type=str)
    res = {"sentences": len(lines), "words_changed": int(sum(n_changed)), "seed": seed, "fraction": fraction}
    # only sentences that the noise actually changed are informative
    idx = [i for i, c in enumerate(n_changed) if c]
    res["sentences_changed"] = len(idx)
    clean_sel = [lines[i] for i in idx]
    noisy_sel = [noisy[i] for i in idx]
    for name, enc in encoders.items():
        a, c = enc(clean_sel), enc(noisy_sel)
        sims = [sequence_similarity(x, y) for x, y in zip(a, c)]
        res[f"similarity_{name}"] = sum(sims) / len(sims) if sims else 1.0
    return res


# ---- tagger agreement ---------------------------------------------------------------------------------------------
def agreement_report(lines: Sequence[str], options=None) -> dict:
    """Agreement of nltk and hanta on BITE's decision per word (which symbol, or none), after the pretokeniser of
    ``options``."""
    bn = _tokenizer(options, bite_tagger=NLTK)
    bh = _tokenizer(options, bite_tagger=HANTA)
    words = [bn.pretokenize(l) for l in lines]
    tn = bn.tagger.tag_sents(words)
    th = bh.tagger.tag_sents(words)
    total = same = infl_n = infl_h = both = 0
    confusion: Counter = Counter()
    for ws, a, h in zip(words, tn, th):
        for w, x, y in zip(ws, a, h):
            dx = bn._encode_word(w, x)
            dy = bh._encode_word(w, y)
            sx = dx[1] if len(dx) == 2 else "-"
            sy = dy[1] if len(dy) == 2 else "-"
            total += 1
            same += sx == sy
            infl_n += sx != "-"
            infl_h += sy != "-"
            both += sx != "-" and sx == sy
            if sx != sy:
                confusion[(sx, sy)] += 1
    return {"words": total, "decision_agreement": same / total if total else 1.0,
            "inflected_nltk": infl_n, "inflected_hanta": infl_h, "inflected_both_same_symbol": both,
            "inflected_f1": 2 * both / (infl_n + infl_h) if infl_n + infl_h else 1.0,
            "top_disagreements": [[a, b, c] for (a, b), c in confusion.most_common(10)]}


# ---- round trips ---------------------------------------------------------------------------------------------------
def round_trip_rate(lines: Sequence[str], options=None, subword_model: Optional[str] = None,
                    examples: int = 5) -> dict:
    """How many of ``lines`` come back unchanged from encode -> decode with the BITE ``options`` (pretokeniser,
    tagger, ``bite_exact``, ``bite_single_char``).

    Encoded as ``morphtok-encode --scheme bite`` encodes (with ``subword_model``: BITE+D in one pass, the model's
    pieces), decoded as ``--tokenizer bite`` decodes (after ``--bpe sentencepiece``'s decode).  A sentence is
    unchanged when the decoded text equals the input as normalised: line breaks inside the line and the control
    characters Moses deletes made spaces, whitespace runs made one space (:func:`round_trip_reference`).
    Returns ``sentences``, ``unchanged``, ``rate`` (1.0 for no sentence) and up to ``examples`` changed
    sentences as ``[input as normalised, decoded]``."""
    from preprocess.schemes.bite import BiteLineEncoder
    options = options_from(BiteOptions, options)
    enc = BiteLineEncoder.from_options(options, subword_model)
    lines = list(lines)
    encoded = enc.encode_lines(lines)
    # (SentencePiece's own decode: as fairseq's --bpe sentencepiece, and byte-fallback pieces as bytes)
    decoded_text = [enc.sp.decode_pieces(e.split()) for e in encoded] if enc.sp is not None else encoded
    unchanged, changed = 0, []
    for line, text in zip(lines, decoded_text):
        expected = round_trip_reference(line, options.bite_pretokenizer, enc.sp)
        decoded = enc.bite.detokenize(text.split())
        if decoded == expected:
            unchanged += 1
        elif len(changed) < examples:
            changed.append([expected, decoded])
    return {"sentences": len(lines), "unchanged": unchanged,
            "rate": unchanged / len(lines) if lines else 1.0, "examples": changed}


def round_trip_reference(line: str, pretokenizer: str = BiteOptions.bite_pretokenizer, sp=None) -> str:
    """What an exact round trip of ``line`` gives back: the line with its line-breaking characters
    (:func:`preprocess.common.flatten_line`) and, with the Moses pretokenizer, the control characters Moses
    deletes (:data:`preprocess.schemes.bite.MOSES_DELETED`) as spaces, whitespace runs as one space; with ``sp`` (a
    SentencePiece processor), as its normaliser gives it."""
    from preprocess.common import flatten_line
    from preprocess.models.spm_model import SPACE_SYMBOL
    from preprocess.schemes.bite.text import MOSES_DELETED_RE
    text = flatten_line(line)
    if pretokenizer == "moses":
        text = MOSES_DELETED_RE.sub(" ", text)
    text = " ".join(text.split())
    if sp is not None and text:
        text = " ".join(sp.normalize(text).replace(SPACE_SYMBOL, " ").split())
    return text


def round_trip_report(lines: Sequence[str], options=None, subword_model: Optional[str] = None,
                      examples: int = 5) -> dict:
    """:func:`round_trip_rate` of both modes (``bite_exact`` off and on): ``{"default": ..., "exact": ...}``."""
    return {mode: round_trip_rate(lines, options_from(BiteOptions, options, bite_exact=mode == "exact"),
                                  subword_model, examples)
            for mode in ("default", "exact")}


# ---- sequence lengths (Figure 8) ---------------------------------------------------------------------------------
def sequence_lengths(lines: Sequence[str], base_model: str, bite_model: str, options=None) -> dict:
    """Figure 8's measure for one pair of SentencePiece models: the mean encoded length of ``lines`` under D
    (``base_model`` on the raw text) and under BITE+D (``bite_model`` on BITE's subword text, as
    ``preprocess.encode --scheme bite --subword-model`` encodes), the relative increase, and the paper's
    dotted baseline, the share of inflected forms among the (pretokenised) words.  Also the increase BITE would
    cause if it did not change the segmentation at all (one more token per symbol: ``symbols / D tokens``) and
    the number of standalone ``▁`` pieces directly before a symbol (0 by construction).  ``options``: BITE's
    pretokeniser, tagger and ``bite_single_char``."""
    from preprocess.models.spm_model import SPACE_SYMBOL
    from preprocess.schemes.bite import TAG_OF_SYMBOL
    b = _tokenizer(options)
    lines = [" ".join(l.split()) for l in lines]
    base, bite_sp = load_model(base_model), load_model(bite_model)
    n_words = sum(len(b.pretokenize(l)) for l in lines)
    tokens = b.tokenize_batch(lines)
    n_symbols = sum(1 for t in tokens for x in t if x in TAG_OF_SYMBOL)
    d = base.encode(lines, out_type=str)
    bd = bite_sp.encode([b.subword_text(t) for t in tokens], out_type=str)
    len_d, len_bd = sum(map(len, d)), sum(map(len, bd))
    lone = sum(1 for p in bd for x, y in zip(p, p[1:]) if x == SPACE_SYMBOL and y in TAG_OF_SYMBOL)
    n = max(len(lines), 1)
    return {"sentences": len(lines), "words": n_words, "inflected_words": n_symbols,
            "inflected_share": n_symbols / n_words if n_words else 0.0,
            "vocab_d": base.get_piece_size(), "vocab_bite_d": bite_sp.get_piece_size(),
            "tokens_d": len_d, "tokens_bite_d": len_bd, "mean_length_d": len_d / n, "mean_length_bite_d": len_bd / n,
            "relative_increase": len_bd / len_d - 1 if len_d else 0.0,
            "no_effect_increase": n_symbols / len_d if len_d else 0.0,
            "lone_spaces_before_symbols": lone}


def figure8(train_lines: Sequence[str], sizes: Sequence[int], model_types: Sequence[str] = ("unigram",),
            eval_lines: Optional[Sequence[str]] = None, options=None,
            seed: int = SpmOptions.seed, **spm_options) -> List[dict]:
    """The BITE paper's Figure 8 on a corpus: for each subword algorithm and vocabulary size, train D on the raw
    ``train_lines`` and BITE+D on their BITE subword text (same options, ``hard_vocab_limit`` off so that a
    size the corpus cannot fill gives the largest model it can), then :func:`sequence_lengths` on
    ``eval_lines`` (default: the training lines), with BITE's pretokeniser and tagger of ``options``.  Models live in
    a temporary directory."""
    import os
    import tempfile

    from preprocess.models.spm import train
    from preprocess.schemes.bite import train_subword_model
    bite = options_from(BiteOptions, options)
    b = _tokenizer(bite)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bite-fig8-") as tmp:
        raw, bite_text = os.path.join(tmp, "raw.txt"), os.path.join(tmp, "bite.txt")
        with open(raw, "w", encoding="utf-8") as out:
            out.writelines(" ".join(l.split()) + "\n" for l in train_lines)
        with open(bite_text, "w", encoding="utf-8") as out:
            out.writelines(l + "\n" for l in b.encode_lines(list(train_lines)))
        spm = dict(spm_options)
        spm.setdefault("extra_options", {"hard_vocab_limit": "false"})
        for model_type in model_types:
            for size in sizes:
                prefix = os.path.join(tmp, f"{model_type}{size}")
                base = train([raw], prefix + ".d", model_type=model_type, vocab_size=size, seed=seed, **spm)
                bite_model = train_subword_model([bite_text], prefix + ".bite", pretokenizer=bite.bite_pretokenizer,
                                                 single_char=bite.bite_single_char, model_type=model_type,
                                                 vocab_size=size, seed=seed, **spm)
                row = sequence_lengths(eval_lines if eval_lines is not None else train_lines, base, bite_model, bite)
                rows.append({"model_type": model_type, "vocab_size": size, **row})
    return rows


# ---- CLI -------------------------------------------------------------------------------------------------------
def _read(path: str, limit: Optional[int]) -> List[str]:
    if path != "-":
        require_file(path, "input file")
    out = []
    for i, line in enumerate(read_lines(path, errors="replace")):
        if limit and i >= limit:
            break
        out.append(line)
    return out


def _fmt(x: float) -> str:
    return f"{100 * x:.2f}%"


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m preprocess.evaluate.bite", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p, corpus=True):
        if corpus:
            p.add_argument("--input", required=True, help="text, one sentence per line (.gz allowed)")
            p.add_argument("--lines", type=int, default=None, help="first N lines only")
        add_arguments(p, BiteOptions, only=("bite_tagger", "bite_pretokenizer"))
        p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("coverage", help="vocabulary coverage of the N most frequent types, BITE vs unencoded")
    common(p)
    p.add_argument("--sizes", type=int, nargs="+", default=[100, 500, 1000, 2000, 5000, 10000],
                   help="numbers N of most frequent types")
    p = sub.add_parser("complexity", help="symbol complexity (eq. 1 / eq. 2) of SentencePiece models")
    p.add_argument("--models", nargs="+", required=True, help="SentencePiece models")
    p.add_argument("--words", required=True, help="word list, one word per line (first column used)")
    p.add_argument("--lam", type=float, default=2.0, help="unknown-symbol weight (2 = eq. 1)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p = sub.add_parser("similarity", help="Ratcliff/Obershelp similarity of clean vs inflection-perturbed encodings")
    common(p)
    noise_options(p)
    p.add_argument("--model", default=None, help="SentencePiece model trained without BITE (D)")
    p.add_argument("--bite-model", default=None,
                   help="SentencePiece model of BITE+D (preprocess.schemes.bite.train_subword_model)")
    p = sub.add_parser("perturb", help="write an inflection-perturbed copy of a corpus (one line per line)")
    common(p)
    p.add_argument("--output", required=True, help="perturbed copy to write")
    noise_options(p)
    p = sub.add_parser("agreement", help="nltk vs hanta agreement on BITE's inflection decisions")
    common(p)
    p = sub.add_parser("roundtrip", help="round-trip rate (sentences unchanged after encode -> decode) of the "
                                         "default and the exact (--bite-exact) mode")
    common(p)
    add_arguments(p, BiteOptions, only=("bite_single_char",))
    p.add_argument("--subword-model", default=None,
                   help="BITE+D: encode with this SentencePiece model too, compare with its normalised input")
    p.add_argument("--examples", type=int, default=5, help="changed sentences shown per mode")
    p = sub.add_parser("lengths", help="Figure 8: relative increase of the mean encoded length, BITE+D over D, "
                                       "beside the share of inflected words")
    common(p)
    p.add_argument("--sizes", type=int, nargs="+", default=[4000, 8000, 16000, 32000],
                   help="vocabulary sizes: trains D and BITE+D on --input for each (not with --model)")
    p.add_argument("--model-types", nargs="+", choices=["unigram", "bpe"], default=["unigram"],
                   help="SentencePiece model types to train")
    p.add_argument("--eval-input", default=None, help="measure on this text instead of --input")
    p.add_argument("--eval-lines", type=int, default=None, help="first N lines of --eval-input only")
    add_arguments(p, SpmOptions, only=("seed", "character_coverage"))
    p.add_argument("--model", default=None, help="an existing D model (with --bite-model: no training; --input is "
                                                 "then the text measured)")
    p.add_argument("--bite-model", default=None, help="an existing BITE+D model (see --model)")
    return ap


def _coverage_cli(args) -> None:
    r = coverage_report(_read(args.input, args.lines), args.sizes, args)
    if args.json:
        print(json.dumps(r))
    else:
        print(f"{r['n_words']} words ({r['types_unencoded']} types) -> {r['n_bite_symbols']} BITE symbols "
              f"({r['types_bite']} types)")
        print("| N | unencoded | BITE | unencoded (per word) | BITE (per word) |\n|---|---|---|---|---|")
        for n in args.sizes:
            print(f"| {n} | {_fmt(r['coverage_unencoded'][n])} | {_fmt(r['coverage_bite'][n])} | "
                  f"{_fmt(r['word_coverage_unencoded'][n])} | {_fmt(r['word_coverage_bite'][n])} |")


def _complexity_cli(args) -> None:
    require_file(args.words, "word list")
    words = [l.split("\t")[0].strip() for l in read_lines(args.words, errors="replace")]
    words = [w for w in words if w]
    rows = [model_complexity(require_file(m, "SentencePiece model"), words, args.lam) for m in args.models]
    if args.json:
        print(json.dumps(rows))
    else:
        print(f"| model | vocab | SymbComp (lambda={args.lam:g}) | per word | unknown pieces |\n|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['model']} | {r['vocab_size']} | {r['symbol_complexity']:.0f} | {r['per_word']:.3f} "
                  f"| {r['unknown_pieces']} |")


def _similarity_cli(args) -> None:
    for m in (args.model, args.bite_model):
        if m:
            require_file(m, "SentencePiece model")
    r = similarity_report(_read(args.input, args.lines), args.seed, args.fraction, args, args.model,
                          args.bite_model)
    if args.json:
        print(json.dumps(r))
    else:
        print(f"{r['sentences_changed']}/{r['sentences']} sentences perturbed, {r['words_changed']} words "
              f"(seed {r['seed']}, fraction {r['fraction']})")
        print("| encoding | mean Ratcliff/Obershelp similarity |\n|---|---|")
        for k, v in r.items():
            if k.startswith("similarity_"):
                print(f"| {k[len('similarity_'):]} | {100 * v:.2f}% |")


def _perturb_cli(args) -> None:
    from preprocess.common import flatten_line
    from preprocess.files.outputs import atomic_output, check_distinct, check_output_path
    check_output_path(args.output)
    check_distinct([(args.output, "--output")], [(args.input, "--input")])
    noise = InflectionNoise(args.fraction, args.seed, args.bite_tagger)
    n = changed = 0
    with atomic_output(args.output) as out:
        for i, line in enumerate(read_lines(args.input, errors="replace")):
            if args.lines and i >= args.lines:
                break
            noisy, _, c = noise.perturb(" ".join(flatten_line(line).split()))
            out.write(noisy + "\n")
            n += 1
            changed += c
    msg = {"lines": n, "words_changed": changed, "output": args.output}
    print(json.dumps(msg) if args.json else f"{n} lines, {changed} words changed -> {args.output}")


def _agreement_cli(args) -> None:
    r = agreement_report(_read(args.input, args.lines), args)
    if args.json:
        print(json.dumps(r))
    else:
        print(f"words: {r['words']}; same BITE decision: {_fmt(r['decision_agreement'])}; inflected by "
              f"nltk {r['inflected_nltk']}, hanta {r['inflected_hanta']}, same symbol {r['inflected_both_same_symbol']}"
              f" (F1 {_fmt(r['inflected_f1'])})")
        print("top disagreements (nltk, hanta, count):", r["top_disagreements"])


def _roundtrip_cli(args) -> None:
    if args.subword_model:
        require_file(args.subword_model, "SentencePiece model (--subword-model)")
    r = round_trip_report(_read(args.input, args.lines), args, args.subword_model, args.examples)
    if args.json:
        print(json.dumps(r))
    else:
        print("| mode | sentences | unchanged after encode -> decode | round-trip rate |\n|---|---|---|---|")
        for mode, row in r.items():
            print(f"| {mode} | {row['sentences']} | {row['unchanged']} | {_fmt(row['rate'])} |")
        for mode, row in r.items():
            for expected, decoded in row["examples"]:
                print(f"{mode}: {expected!r}\n{' ' * len(mode)}  -> {decoded!r}")


#: each subcommand's function (``_lengths_cli`` is below)
def _commands() -> dict:
    return {"coverage": _coverage_cli, "complexity": _complexity_cli, "similarity": _similarity_cli,
            "perturb": _perturb_cli, "agreement": _agreement_cli, "roundtrip": _roundtrip_cli,
            "lengths": _lengths_cli}


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from preprocess.tagging import TaggerUnavailable
    try:
        _commands()[args.cmd](args)
    except TaggerUnavailable as e:
        raise UserError(str(e)) from None
    return 0


def _lengths_cli(args) -> None:
    if bool(args.model) != bool(args.bite_model):
        raise UserError("--model and --bite-model go together")
    if args.model:
        for m in (args.model, args.bite_model):
            require_file(m, "SentencePiece model")
        rows = [{"model_type": "given", "vocab_size": None,
                 **sequence_lengths(_read(args.input, args.lines), args.model, args.bite_model, args)}]
    else:
        if any(n < 20 for n in args.sizes):
            raise UserError("--sizes must be at least 20")
        evals = _read(args.eval_input, args.eval_lines) if args.eval_input else None
        rows = figure8(_read(args.input, args.lines), args.sizes, args.model_types, evals, args, args.seed,
                       character_coverage=args.character_coverage)
    if args.json:
        print(json.dumps(rows))
        return
    r0 = rows[0]
    print(f"{r0['sentences']} sentences, {r0['words']} words, {r0['inflected_words']} inflected "
          f"({_fmt(r0['inflected_share'])}: the paper's dotted baseline)")
    print("| model | vocab (D / BITE+D) | mean length D | mean length BITE+D | increase | increase if BITE changed "
          "no segmentation | lone ▁ before a symbol |\n|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model_type']} {r['vocab_size'] or ''} | {r['vocab_d']} / {r['vocab_bite_d']} | "
              f"{r['mean_length_d']:.2f} | {r['mean_length_bite_d']:.2f} | {_fmt(r['relative_increase'])} | "
              f"{_fmt(r['no_effect_increase'])} | {r['lone_spaces_before_symbols']} |")



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
