"""A stub of ``python -m train_scripts.pseudo_perplexity --whole-words`` by its contract (issue 59, item 4b): the
real module's code and record, plus ``word_scores`` (a line's PLL in bits spread evenly over its whitespace words),
``bits_per_word`` and ``char_floor_bits_per_word`` (a made-up floor), and with --word-marks the marked figures."""
import importlib.util
import json
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_real = next(os.path.join(p, "train_scripts", "pseudo_perplexity.py") for p in sys.path
             if p != _here and os.path.isfile(os.path.join(p, "train_scripts", "pseudo_perplexity.py")))
_spec = importlib.util.spec_from_file_location("_real_pseudo_perplexity", _real)
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
globals().update({k: v for k, v in vars(_mod).items() if not k.startswith("__")})
_real_main = _mod.main


def paired_bootstrap_bits(a_word_scores, b_word_scores, marks=None, resamples=1000, seed=1):
    a = [x for line in a_word_scores for x in line]
    b = [x for line in b_word_scores for x in line]
    d = sum(y - x for x, y in zip(a, b)) / max(1, len(a))
    return {"difference": d, "low": d - 0.1, "high": d + 0.1}


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    whole = "--whole-words" in argv
    argv = [x for x in argv if x != "--whole-words"]
    out = argv[argv.index("--output") + 1]
    code = _real_main(argv + ["--sentences"])
    if whole:
        rec = json.load(open(out, encoding="utf-8"))
        lines = [x.rstrip("\n") for x in open(argv[argv.index("--input") + 1], encoding="utf-8")]
        scores = []
        for line, pll in zip(lines, rec.get("sentence_pll") or []):
            words = line.split()
            scores.append([(-(pll or 0.0) / 0.6931) / max(1, len(words))] * len(words))
        n = sum(len(s) for s in scores)
        rec["word_scores"] = scores
        rec["bits_per_word"] = sum(map(sum, scores)) / max(1, n)
        rec["char_floor_bits_per_word"] = 1.5 * rec["bits_per_word"]
        rec.setdefault("marked", {})["char_floor_bits_per_word"] = 1.5 * rec["bits_per_word"]
        json.dump(rec, open(out, "w", encoding="utf-8"))
    return code


if __name__ == "__main__":
    sys.exit(main())
