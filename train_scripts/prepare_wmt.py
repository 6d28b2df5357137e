"""The Moses steps of fairseq's ``examples/translation/prepare-wmt14en2de.sh``, in Python with sacremoses.

    python -m train_scripts.prepare_wmt --raw RAW --out OUT [--src en --tgt de] [--ratio 1.5 --min-len 1
        --max-len 250] [--clean-splits train valid]

``RAW/{train,valid,test}.{SRC,TGT}`` (the corpora as ``prepare_wmt14_en_de.sh`` gathers them: training corpora
concatenated, newstest2013 as valid, newstest2014 as test) -> ``OUT/{train,valid,test}.{SRC,TGT}``:

1. ``normalize-punctuation.perl -l LANG``: sacremoses' ``MosesPunctNormalizer(lang)``, every split;
2. ``remove-non-printing-char.perl``: every character of Unicode category C (control, format, unassigned,
   private use, surrogate) becomes a space, every split (line-breaking characters too, so lines stay aligned);
3. ``clean-corpus-n.perl -ratio 1.5 CORPUS SRC TGT OUT 1 250`` on ``--clean-splits`` (fairseq cleans train and
   valid; the test set is never cleaned: newstest2014 keeps its 3,003 sentences): whitespace is collapsed, ``|``
   is removed (unless the first pair contains one: Moses' factored input), and a pair is dropped when a side has
   fewer than ``--min-len`` or more than ``--max-len`` words, when one side has more than ``--ratio`` times the
   words of the other, or when a word is longer than 1,000 characters.

Differences from fairseq's script, on purpose: no Moses tokenisation (the schemes here segment raw text
themselves; BITE needs raw or whitespace-tokenised text), so lengths are counted in whitespace words before
subword segmentation rather than in BPE tokens after it; the validation set is newstest2013 (as in the BITE paper,
appendix B.3) rather than every 100th training pair.  Kept/dropped counts are printed and written to
``OUT/prepare.json``.  Files appear only when complete.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from preprocess.cli import run_main
from preprocess.common import UserError, flatten_line
from preprocess.files.inputs import UTF8_HINT, read_lines
from preprocess.files.outputs import atomic_output

MAX_WORD_LENGTH = 1000  # clean-corpus-n.perl's default --max-word-length


class MosesCleaner:
    """normalize-punctuation + remove-non-printing-char for one language."""

    def __init__(self, lang: str):
        import regex
        from sacremoses import MosesPunctNormalizer

        self.normalizer = MosesPunctNormalizer(lang=lang)
        self.non_printing = regex.compile(r"\p{C}")

    def __call__(self, line: str) -> str:
        return flatten_line(self.non_printing.sub(" ", self.normalizer.normalize(line)))


def keep_pair(src: str, tgt: str, ratio: float = 1.5, min_len: int = 1, max_len: int = 250,
              strip_pipes: bool = True) -> tuple[str, str] | None:
    """clean-corpus-n.perl's test for one pair: the cleaned pair, or None when it is dropped."""
    if strip_pipes:
        src, tgt = src.replace("|", ""), tgt.replace("|", "")
    src, tgt = " ".join(src.split()), " ".join(tgt.split())
    if not src or not tgt:
        return None
    ns, nt = len(src.split(" ")), len(tgt.split(" "))
    if not (min_len <= ns <= max_len and min_len <= nt <= max_len) or ns / nt > ratio or nt / ns > ratio:
        return None
    if max(map(len, src.split(" "))) > MAX_WORD_LENGTH or max(map(len, tgt.split(" "))) > MAX_WORD_LENGTH:
        return None
    return src, tgt


def prepare(raw_dir: str, out_dir: str, src: str = "en", tgt: str = "de", ratio: float = 1.5, min_len: int = 1,
            max_len: int = 250, clean_splits=("train", "valid"), quiet: bool = False) -> dict:
    """Normalise every split, clean ``clean_splits``; returns ``{split: {"input": n, "kept": k, "dropped": d}}``."""
    if min_len < 1 or max_len < min_len or ratio <= 0:
        raise UserError("need 1 <= --min-len <= --max-len and --ratio > 0")
    cleaners = {src: MosesCleaner(src), tgt: MosesCleaner(tgt)}
    counts = {}
    for split in ("train", "valid", "test"):
        paths = {lang: os.path.join(raw_dir, f"{split}.{lang}") for lang in (src, tgt)}
        for path in paths.values():
            if not os.path.isfile(path):
                raise UserError(f"{path} not found (run prepare_wmt14_en_de.sh, or give {split}.{src} and "
                                f"{split}.{tgt})")
        n = kept = 0
        strip_pipes = None
        with atomic_output(os.path.join(out_dir, f"{split}.{src}")) as out_s, \
                atomic_output(os.path.join(out_dir, f"{split}.{tgt}")) as out_t:
            sources, targets = read_lines(paths[src], hint=UTF8_HINT), read_lines(paths[tgt], hint=UTF8_HINT)
            for line_s in sources:
                line_t = next(targets, None)
                if line_t is None:
                    raise UserError(f"{paths[tgt]} has fewer lines than {paths[src]}")
                n += 1
                s, t = cleaners[src](line_s), cleaners[tgt](line_t)
                if split in clean_splits:
                    if strip_pipes is None:  # clean-corpus-n keeps | in factored corpora (seen on line 1)
                        strip_pipes = "|" not in s and "|" not in t
                    pair = keep_pair(s, t, ratio, min_len, max_len, strip_pipes)
                    if pair is None:
                        continue
                    s, t = pair
                out_s.write(s + "\n")
                out_t.write(t + "\n")
                kept += 1
            if next(targets, None) is not None:
                raise UserError(f"{paths[tgt]} has more lines than {paths[src]}")
        counts[split] = {"input": n, "kept": kept, "dropped": n - kept}
        if not quiet:
            cleaned = f"clean-corpus-n ratio {ratio}, length {min_len}-{max_len}" if split in clean_splits \
                else "not cleaned"
            print(f"{split}: {n:,} pairs, kept {kept:,}, dropped {n - kept:,} ({cleaned})", file=sys.stderr)
    report = {"counts": counts, "ratio": ratio, "min_len": min_len, "max_len": max_len,
              "clean_splits": list(clean_splits), "src": src, "tgt": tgt}
    with atomic_output(os.path.join(out_dir, "prepare.json")) as fh:
        json.dump(report, fh, indent=1)
    return counts


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m train_scripts.prepare_wmt", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--raw", required=True, help="folder with raw {train,valid,test}.{SRC,TGT}")
    p.add_argument("--out", required=True, help="output folder (may be --raw: files are replaced when complete)")
    p.add_argument("--src", default="en", help="source language")
    p.add_argument("--tgt", default="de", help="target language")
    p.add_argument("--ratio", type=float, default=1.5, help="clean-corpus-n -ratio")
    p.add_argument("--min-len", type=int, default=1, help="fewest words per side")
    p.add_argument("--max-len", type=int, default=250, help="most words per side")
    p.add_argument("--clean-splits", nargs="*", default=["train", "valid"], choices=["train", "valid", "test"],
                   help="splits that clean-corpus-n filters (all splits are normalised)")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    prepare(args.raw, args.out, args.src, args.tgt, args.ratio, args.min_len, args.max_len,
            tuple(args.clean_splits))
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
