"""The field's intrinsic tokeniser scores, per tokeniser on a text: Rényi efficiency, fertility, pieces per word,
and the morphological boundary figures of :mod:`preprocess.evaluate.morph`.

* **Rényi efficiency** (Zouhar et al., ACL 2023, "Tokenization and the noiseless channel"): the Rényi entropy of
  order ``power`` of the unigram distribution of the pieces on the text, divided by ``log2`` of the number of
  piece types seen; computed by the ``tokenization-scorer`` package (``power`` 2.5, the paper's choice; the
  package's own default is 3).  Higher is better (a more even use of the vocabulary).
* **fertility**: pieces per word of the running text (words = whitespace-separated words of the raw text; pieces =
  everything the model reads, standalone ``▁`` pieces and BITE's symbols included, ``</s>`` not).
* **pieces per word**: the same without the standalone ``▁`` pieces (space-as-token's spaces), i.e. the pieces
  that spell or mark words.
* **tokens per sentence**, and with ``--gold`` the boundary precision / recall / F1 and mean pieces per gold word
  (Creutz et al.; ``preprocess.evaluate.morph.evaluate``, each gold word tokenised on its own).

    morphtok-metrics-intrinsic --text test.en --tokenizer bpe=EXPORT_DIR1 --tokenizer bite=EXPORT_DIR2 \\
        [--encoded mine=test.tok.en] [--gold ../shared/data/morph_gold/eng.word.dev.tsv] [--json scores.json]

``--tokenizer NAME=DIR``: a directory written by ``morphtok-export`` (or any Hugging Face tokenizer directory);
``--encoded NAME=FILE``: text already encoded by the project (pieces separated by spaces, line-aligned with
``--text``; no boundary figures).  Prints a Markdown table; ``--json PATH`` also writes the figures as JSON
(``-``: JSON on stdout instead of the table).  Python callers: :func:`text_scores` (one row from encoded lines),
:func:`tokenizer_scores`.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Callable, Iterable, Optional, Sequence

from preprocess.cli import run_main
from preprocess.common import UserError, quiet_stderr
from preprocess.files.inputs import UTF8_HINT, read_lines, require_file
from preprocess.files.outputs import atomic_output, check_distinct
from preprocess.models.spm_model import SPACE_SYMBOL

#: the order of the Rényi entropy (Zouhar et al. 2023 recommend 2.5)
RENYI_POWER = 2.5
FIELDS = (("renyi_efficiency", "Rényi eff.", 3), ("fertility", "fertility", 2), ("pieces_per_word", "pieces/word", 2),
          ("tokens_per_sentence", "tok/sent", 1), ("n_types", "types", 0))
BOUNDARY_FIELDS = (("precision", "boundary P"), ("recall", "boundary R"), ("f1", "boundary F1"),
                   ("mean_pieces", "pieces/gold word"))


def renyi_efficiency(lines: Iterable[Sequence[str]], power: float = RENYI_POWER) -> Optional[float]:
    """Rényi efficiency of the pieces (``tokenization_scorer.score(..., metric="renyi")``); None when fewer than
    two piece types occur (the efficiency divides by log2 of the number of types)."""
    try:
        import tokenization_scorer
    except ImportError as exc:
        raise UserError(f"Rényi efficiency needs tokenization-scorer (pip install .[hf]): {exc}") from None
    text = [" ".join(pieces) for pieces in lines if pieces]
    if len({p for line in text for p in line.split()}) < 2:
        return None
    with quiet_stderr():   # its progress bars and "Vocabulary size" lines
        return float(tokenization_scorer.score(text, metric="renyi", power=power))


def text_scores(encoded: Sequence, raw: Sequence[str], power: float = RENYI_POWER) -> dict:
    """The scores of one tokeniser on one text: ``encoded`` holds, per sentence, its pieces (a list, or a string of
    pieces separated by spaces, as the project's encoded files), ``raw`` the sentences themselves (for the word
    counts).  Returns ``renyi_efficiency``, ``renyi_power``, ``fertility``, ``pieces_per_word``,
    ``tokens_per_sentence`` and the counts ``n_sentences``, ``n_words``, ``n_pieces``, ``n_types``."""
    if len(encoded) != len(raw):
        raise UserError(f"{len(encoded)} encoded lines for {len(raw)} raw lines: they must be aligned")
    lines = [p.split() if isinstance(p, str) else list(p) for p in encoded]
    n_words = sum(len(line.split()) for line in raw)
    n_pieces = sum(len(p) for p in lines)
    n_space = sum(1 for p in lines for t in p if t == SPACE_SYMBOL)
    n = len(lines)
    return {"renyi_efficiency": renyi_efficiency(lines, power), "renyi_power": power,
            "fertility": n_pieces / n_words if n_words else None,
            "pieces_per_word": (n_pieces - n_space) / n_words if n_words else None,
            "tokens_per_sentence": n_pieces / n if n else None,
            "n_sentences": n, "n_words": n_words, "n_pieces": n_pieces,
            "n_types": len({t for p in lines for t in p})}


# --- tokenisers -------------------------------------------------------------------------------------------------

def load_tokenizer(directory: str) -> Callable[[str], list[str]]:
    """text -> pieces for a tokenizer directory: ``tokenizers.Tokenizer.from_file`` for a ``tokenizer.json``
    export (no project code), ``AutoTokenizer.from_pretrained`` for the tokenizer classes (registered by importing
    :mod:`preprocess.hf`)."""
    if not os.path.isdir(directory):
        raise UserError(f"tokenizer directory not found: {directory}")
    config = {}
    config_path = os.path.join(directory, "tokenizer_config.json")
    if os.path.isfile(config_path):
        with open(config_path, encoding="utf-8") as fh:
            config = json.load(fh)
    try:
        if os.path.isfile(os.path.join(directory, "tokenizer.json")) and \
                config.get("tokenizer_class") in (None, "PreTrainedTokenizerFast", "TokenizersBackend"):
            from tokenizers import Tokenizer
            tok = Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
            return lambda text: tok.encode(text, add_special_tokens=False).tokens
        from transformers import AutoTokenizer

        import preprocess.hf  # noqa: F401  (registers the classes with AutoTokenizer)
        hf = AutoTokenizer.from_pretrained(directory)
    except ImportError as exc:
        raise UserError(f"loading exported tokenizers needs the hf extra (pip install .[hf]): {exc}") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot load the tokenizer in {directory}: {str(exc).splitlines()[0]}") from None
    return hf.tokenize


def tokenizer_scores(tokenize: Callable[[str], list[str]], raw: Sequence[str], gold: Optional[list] = None,
                     protocol: str = "paper", power: float = RENYI_POWER) -> dict:
    """:func:`text_scores` of ``tokenize`` (text -> pieces) on ``raw``, plus ``boundary`` (the figures of
    :func:`preprocess.evaluate.morph.evaluate`) when ``gold`` (:func:`preprocess.evaluate.morph.read_gold`) is
    given."""
    out = text_scores([tokenize(line) for line in raw], raw, power)
    if gold:
        from preprocess.evaluate import morph
        b = morph.evaluate(tokenize, gold, protocol)
        out["boundary"] = {k: b[k] for k in ("precision", "recall", "f1", "mean_pieces", "n_words", "skipped",
                                             "protocol")}
    return out


# --- output -----------------------------------------------------------------------------------------------------

def _fmt(value, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}" if digits else str(value)


def markdown_table(rows: dict) -> str:
    """One line per tokeniser: the scores, then the boundary figures (in %) where there are any."""
    boundary = any("boundary" in r for r in rows.values())
    header = ["tokeniser"] + [label for _, label, _ in FIELDS]
    if boundary:
        header += [label for _, label in BOUNDARY_FIELDS]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    for name, r in rows.items():
        cells = [name] + [_fmt(r.get(key), digits) for key, _, digits in FIELDS]
        if boundary:
            b = r.get("boundary") or {}
            cells += [_fmt(100 * b[k] if k in b and k != "mean_pieces" else b.get(k), 1 if k != "mean_pieces" else 2)
                      for k, _ in BOUNDARY_FIELDS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _named(items: list[str], what: str) -> list[tuple[str, str]]:
    out = []
    for item in items or []:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise UserError(f"{what} wants NAME=PATH, got {item!r}")
        out.append((name, path))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="morphtok-metrics-intrinsic", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--text", required=True, help="raw text, one sentence per line (.gz allowed)")
    parser.add_argument("--tokenizer", action="append", default=[], metavar="NAME=DIR",
                        help="an exported tokenizer directory (repeatable)")
    parser.add_argument("--encoded", action="append", default=[], metavar="NAME=FILE",
                        help="the text encoded by the project, line-aligned with --text (repeatable)")
    parser.add_argument("--gold", default=None,
                        help="gold segmentations for the boundary figures (SIGMORPHON 2022 word level, e.g. "
                             "../shared/data/morph_gold/eng.word.dev.tsv)")
    parser.add_argument("--protocol", choices=("paper", "all"), default="paper", help="boundary protocol (see "
                                                                                       "morphtok-metrics-morph)")
    parser.add_argument("--power", type=float, default=RENYI_POWER, help="order of the Rényi entropy")
    parser.add_argument("--max-lines", type=int, default=0, help="use the first N lines of --text (0 = all)")
    parser.add_argument("--json", default=None, help="also write the figures as JSON here (-: stdout, no table)")
    args = parser.parse_args(argv)
    tokenizers = _named(args.tokenizer, "--tokenizer")
    encoded = _named(args.encoded, "--encoded")
    if not tokenizers and not encoded:
        raise UserError("give at least one --tokenizer NAME=DIR or --encoded NAME=FILE")
    names = [n for n, _ in tokenizers + encoded]
    if len(set(names)) != len(names):
        raise UserError("the same NAME is given twice")
    if args.power <= 0 or args.power == 1:
        raise UserError(f"--power must be positive and not 1, not {args.power}")
    require_file(args.text, "--text")
    for _, path in encoded:
        require_file(path, "--encoded file")
    if args.json and args.json != "-":
        check_distinct([args.json], [args.text] + [p for _, p in encoded] + ([args.gold] if args.gold else []))
    raw = list(read_lines(args.text, hint=UTF8_HINT))
    if args.max_lines:
        raw = raw[:args.max_lines]
    gold = None
    if args.gold:
        from preprocess.evaluate import morph
        gold = morph.read_gold(args.gold)
    rows: dict = {}
    for name, directory in tokenizers:
        rows[name] = tokenizer_scores(load_tokenizer(directory), raw, gold, args.protocol, args.power)
    for name, path in encoded:
        lines = list(read_lines(path, hint=UTF8_HINT))[:len(raw)] if args.max_lines else list(read_lines(path, hint=UTF8_HINT))
        rows[name] = text_scores(lines, raw, args.power)
    result = {"text": args.text, "n_sentences": len(raw), "renyi_power": args.power,
              "gold": args.gold, "protocol": args.protocol if args.gold else None, "tokenizers": rows}
    if args.json == "-":
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    if args.json:
        with atomic_output(args.json) as out:
            json.dump(result, out, indent=2, ensure_ascii=False)
            out.write("\n")
    print(f"text: {args.text} ({len(raw)} sentences); Rényi efficiency of order {args.power:g}"
          + (f"; boundaries against {args.gold} (protocol {args.protocol})" if args.gold else "") + "\n")
    print(markdown_table(rows))
    return 0


def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
