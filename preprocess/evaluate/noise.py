"""Seeded test-set perturbations for the robustness rows, and their intrinsic measure.

Two threat models, one per paper:

* ``infl`` -- **inflection noise** (BITE paper, section 4.1 and 5.2: MORPHEUS, Tan et al. 2020).  MORPHEUS
  re-inflects content words into another form of the same lemma (lemminflect), keeping the sentence otherwise
  intact; its random variant samples the new form instead of searching for the most damaging one.  Here: the
  sentence is Moses-tokenised and POS-tagged (NLTK's perceptron tagger as in BITE, or HanTa), and every
  *inflectable* word -- universal tag NOUN, VERB or ADJ, not a proper noun (NNP/NNPS) or a modal (MD),
  alphabetic, with a lemma in lemminflect's dictionary and at least one other dictionary form of that lemma --
  is, with probability ``fraction``, replaced by a form drawn uniformly from the *other* forms
  (``getAllInflections(lemma, upos)``), keeping its capitalisation (``Dogs`` -> ``Dog``, ``is`` -> ``were``).
  Only the replaced words change; spacing and every other character of the line stay as they were.
* ``ws`` -- **whitespace noise** (FLOTA paper, section 4 "Robustness"): the space between two adjacent words is
  dropped with probability ``fraction`` (the paper uses p = 0.3, unseen noise: test set only).  This is exactly
  :func:`inject_whitespace_noise`, the noise of ``preprocess.encode --scheme flota --noise-p``.

Both draw from :func:`line_rng` (seeded by the seed *and* the line), so a line's noise does not depend on chunking,
worker count or the lines around it; same file, same options -> same output.  ``fraction`` is a per-candidate
probability, so the realised share of changed candidates is close to, not exactly, ``fraction`` (binomial);
:func:`perturb_lines` returns the counts.  The output keeps the line count.

The intrinsic counterpart needs no model: :func:`sequence_similarity` is the Ratcliff/Obershelp similarity
(Python's ``difflib``, as the BITE paper's appendix B.4 says) between the token sequences of a clean sentence and
its perturbed copy, each encoded by a scheme; :func:`mean_similarity` averages it over sentences (BITE paper,
Figure 5: "mean percentage of symbols that are the same in the clean and adversarial encoded sequences").
``autojunk`` is off: difflib's popularity heuristic (sequences of 200+ tokens) is not part of Ratcliff/Obershelp.

    python -m preprocess.evaluate.noise perturb --kind infl --fraction 0.3 --seed 1 --input test.en --output test.infl.en
    python -m preprocess.evaluate.noise similarity --clean test.tok.en --noisy test.infl.tok.en [--clean-raw ...]
"""
from __future__ import annotations

import argparse
import difflib
import functools
import json
import sys
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.files.inputs import UTF8_HINT, read_lines
from preprocess.files.outputs import atomic_output, check_distinct, check_output_path

#: the kinds' names, for the code that asks for one kind (every list of the kinds is :data:`NOISES`)
from preprocess.registry import INFLECTION, WHITESPACE  # noqa: E402,F401  (the kinds' names)

# the whitespace noise and the per-line generator live beside the tokenisers that use them (FLOTA's --noise-p)
from preprocess.whitespace_noise import PAPER_FRACTION, NoiseOptions, check_fraction, inject_whitespace_noise, line_rng  # noqa: F401

_CONTENT = frozenset({"NOUN", "VERB", "ADJ"})
_NOT_INFLECTABLE = frozenset({"NNP", "NNPS", "MD"})


@dataclass(frozen=True)
class NoiseKind:
    """One kind of test-set noise, its one entry in :data:`NOISES`: its name (``--kind``, the ``test.KIND.en`` of
    the demos), what it is (``description``, ``help``), what ``fraction`` applies to (``candidates``) and what a
    change is (``changed``), and ``make(fraction, seed, tagger)``, which gives the object whose
    ``perturb(line)`` returns (noisy line, candidates, changed) (a ``tagger_name`` attribute, where it has one,
    goes into :func:`perturb_lines`' counts)."""

    name: str
    description: str
    help: str
    candidates: str
    changed: str
    make: Callable


def check_kind(kind: str) -> str:
    if kind not in NOISES:
        raise UserError(f"unknown noise kind {kind!r} (choose from {', '.join(NOISES)})")
    return kind


def inflection_scheme():
    """The descriptor of the scheme the inflection noise follows (the one whose ``noise`` declares ``infl``: BITE's):
    its ``tagger`` option gives the default tagger and the choices, its ``infl`` hook the case rule."""
    from preprocess import registry

    return registry.provider("noise", INFLECTION)


# --- inflection noise ------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=200_000)
def other_forms(word: str, upos: str) -> Tuple[str, ...]:
    """The dictionary forms of ``word``'s lemma (lemminflect) other than ``word`` itself, sorted, lower case
    looked up for a capitalised word; empty when the word has no dictionary lemma for ``upos``."""
    from lemminflect import getAllInflections, getAllLemmas

    lookup = word.lower() if word[:1].isupper() and not word.isupper() else word
    lemmas = getAllLemmas(lookup, upos=upos).get(upos)
    if not lemmas:
        return ()
    forms = {f for fs in getAllInflections(lemmas[0], upos=upos).values() for f in fs}
    forms.discard(lookup)
    return tuple(sorted(f for f in forms if f and f.isalpha()))


def _spans(tokens: Sequence[str], line: str) -> List[Optional[Tuple[int, int]]]:
    """Character span of each token in ``line`` (None where the tokeniser changed the characters)."""
    spans, pos = [], 0
    for tok in tokens:
        idx = line.find(tok, pos)
        if idx < 0 or line[pos:idx].strip():
            spans.append(None)
            continue
        spans.append((idx, idx + len(tok)))
        pos = idx + len(tok)
    return spans


class InflectionNoise:
    """MORPHEUS-style random re-inflection (see the module docstring); ``tagger`` is 'nltk' or 'hanta' (None:
    the default tagger of :func:`inflection_scheme`, BITE's)."""

    def __init__(self, fraction: float, seed: int = NoiseOptions.noise_seed, tagger: Optional[str] = None):
        from sacremoses import MosesTokenizer

        from preprocess.tagging import TaggerUnavailable, get_tagger

        self.fraction = check_fraction(fraction)
        self.seed = int(seed)
        scheme = inflection_scheme()
        self.tagger_name = tagger or scheme.default_tagger()
        self._match_case = scheme.noise_hook(INFLECTION)   # BITE's decoder keeps case the same way
        try:
            self.tagger = get_tagger(self.tagger_name)
        except (TaggerUnavailable, ValueError) as exc:
            raise UserError(str(exc)) from None
        self._moses = MosesTokenizer(lang="en")

    def candidates(self, line: str) -> List[Tuple[int, int, Tuple[str, ...]]]:
        """(start, end, other forms) of every inflectable word of ``line``, in order."""
        from preprocess.tagging import universal

        tokens = [t for t in self._moses.tokenize(line, escape=False) if t]
        if not tokens:
            return []
        tags = self.tagger.tag(tokens)
        out = []
        for tok, tag, span in zip(tokens, tags, _spans(tokens, line)):
            upos = universal(tag)
            if span is None or upos not in _CONTENT or tag in _NOT_INFLECTABLE or not tok.isalpha():
                continue
            forms = other_forms(tok, upos)
            if forms:
                out.append((span[0], span[1], forms))
        return out

    def perturb(self, line: str) -> Tuple[str, int, int]:
        """(noisy line, number of candidates, number replaced)."""
        cands = self.candidates(line)
        if not cands or self.fraction == 0.0:
            return line, len(cands), 0
        rng = line_rng(self.seed, line)
        pieces, last, changed = [], 0, 0
        for start, end, forms in cands:
            if rng.random() < self.fraction:
                pieces += [line[last:start], self._match_case(rng.choice(forms), line[start:end])]
                last = end
                changed += 1
        pieces.append(line[last:])
        return "".join(pieces), len(cands), changed


# --- whitespace noise ------------------------------------------------------------------------------------------

class WhitespaceNoise:
    """FLOTA's whitespace noise of a line (:func:`inject_whitespace_noise`, seeded by :func:`line_rng`), with the
    counts :func:`perturb_lines` sums: the spaces between words (candidates) and the ones dropped."""

    def __init__(self, fraction: float, seed: int = NoiseOptions.noise_seed, tagger: Optional[str] = None):
        self.fraction = check_fraction(fraction)
        self.seed = int(seed)

    def perturb(self, line: str) -> Tuple[str, int, int]:
        """(noisy line, number of spaces between words, number dropped)."""
        noisy = inject_whitespace_noise(line, self.fraction, line_rng(self.seed, line)) if self.fraction else line
        words = len(line.split())
        return noisy, max(0, words - 1), words - len(noisy.split())


# --- the kinds -------------------------------------------------------------------------------------------------

#: every noise kind, in the order the demos write and report them: a new noise is one entry here and its class
NOISES: Dict[str, NoiseKind] = {k.name: k for k in (
    NoiseKind(INFLECTION, "inflection noise", "re-inflect inflectable words (BITE/MORPHEUS)", "inflectable words",
              "inflectable words re-inflected", InflectionNoise),
    NoiseKind(WHITESPACE, "whitespace noise", "drop spaces (FLOTA)", "spaces between words",
              "spaces between words removed", WhitespaceNoise),
)}
#: the kinds' names, in :data:`NOISES`' order
KINDS = tuple(NOISES)


def perturb_lines(lines: Sequence[str], kind: str, fraction: float, seed: int = NoiseOptions.noise_seed,
                  tagger: Optional[str] = None) -> Tuple[List[str], dict]:
    """Perturbed copies of ``lines`` (one per line) and counts.

    Counts: ``lines``, ``words`` (whitespace words of the clean text), ``candidates`` (what the kind perturbs:
    inflectable words for ``infl``, spaces between words for ``ws``), ``changed`` (replaced words / dropped
    spaces), ``changed_share`` (changed / candidates, the realised fraction), ``changed_lines``; ``tagger``
    for a kind that tags.
    """
    check_kind(kind)
    fraction = check_fraction(fraction)
    out, n_cand, n_changed = [], 0, 0
    noise = NOISES[kind].make(fraction, seed, tagger)
    for line in lines:
        noisy, cands, changed = noise.perturb(line)
        n_cand += cands
        n_changed += changed
        out.append(noisy)
    stats = {"kind": kind, "fraction": fraction, "seed": int(seed), "lines": len(out),
             "words": sum(len(line.split()) for line in lines), "candidates": n_cand, "changed": n_changed,
             "changed_share": n_changed / n_cand if n_cand else 0.0,
             "changed_lines": sum(a != b for a, b in zip(lines, out))}
    if getattr(noise, "tagger_name", None) is not None:
        stats["tagger"] = noise.tagger_name
    return out, stats


def write_noisy(input_path: str, output_path: str, kind: str, fraction: float,
                seed: int = NoiseOptions.noise_seed, tagger: Optional[str] = None) -> dict:
    """Write a perturbed copy of the raw text file ``input_path`` to ``output_path`` (same line count; written
    through a temporary file, so no partial output); returns :func:`perturb_lines`' counts plus the paths."""
    check_kind(kind)
    check_fraction(fraction)
    check_output_path(output_path)
    check_distinct([(output_path, "output")], [(input_path, "input")])
    lines = list(read_lines(input_path, hint=UTF8_HINT))
    noisy, stats = perturb_lines(lines, kind, fraction, seed, tagger)
    with atomic_output(output_path) as fh:
        for line in noisy:
            fh.write(line + "\n")
    stats.update({"input": input_path, "output": output_path})
    return stats


# --- intrinsic measure -----------------------------------------------------------------------------------------

def sequence_similarity(clean: Sequence[str], noisy: Sequence[str]) -> float:
    """Ratcliff/Obershelp similarity of two token sequences, 2 * matches / (len(clean) + len(noisy)), in [0, 1]
    (two empty sequences: 1.0)."""
    return difflib.SequenceMatcher(None, list(clean), list(noisy), autojunk=False).ratio()


def mean_similarity(clean_encoded: Sequence[str], noisy_encoded: Sequence[str],
                    clean_raw: Optional[Sequence[str]] = None, noisy_raw: Optional[Sequence[str]] = None) -> dict:
    """Mean :func:`sequence_similarity` over sentences of two encoded files (tokens separated by spaces).

    ``mean`` is over all sentences (as the paper's Figure 5); with the raw texts also given, ``mean_changed``
    is over the sentences whose raw text the perturbation changed (the others are trivially 1.0).
    """
    if len(clean_encoded) != len(noisy_encoded):
        raise UserError(f"encoded files differ in length: {len(clean_encoded)} clean vs {len(noisy_encoded)} "
                        "perturbed lines")
    sims = [sequence_similarity(a.split(), b.split()) for a, b in zip(clean_encoded, noisy_encoded)]
    out = {"mean": sum(sims) / len(sims) if sims else None, "n": len(sims)}
    if clean_raw is not None and noisy_raw is not None:
        if not len(clean_raw) == len(noisy_raw) == len(sims):
            raise UserError("raw and encoded files differ in length")
        changed = [s for s, a, b in zip(sims, clean_raw, noisy_raw) if a != b]
        out["mean_changed"] = sum(changed) / len(changed) if changed else None
        out["n_changed"] = len(changed)
    return out


# --- command line ----------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m preprocess.evaluate.noise", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("perturb", help="write a perturbed copy of a raw text file (same line count)")
    p.add_argument("--kind", choices=KINDS, required=True, help="; ".join(f"{k.name}: {k.help}" for k in NOISES.values()))
    p.add_argument("--fraction", type=float, default=PAPER_FRACTION,
                   help=f"probability that a candidate ({' / '.join(k.candidates for k in NOISES.values())}) is perturbed")
    p.add_argument("--seed", type=int, default=NoiseOptions.noise_seed, help="random seed (per line)")
    infl = inflection_scheme()
    p.add_argument("--tagger", choices=infl.taggers(), default=infl.default_tagger(), help=f"POS tagger for --kind {INFLECTION}")
    p.add_argument("--input", required=True, help="raw text, one sentence per line")
    p.add_argument("--output", required=True, help="perturbed copy")
    s = sub.add_parser("similarity", help="mean Ratcliff/Obershelp similarity of two encoded files")
    s.add_argument("--clean", required=True, help="encoded clean text (tokens separated by spaces)")
    s.add_argument("--noisy", required=True, help="the same sentences perturbed, encoded the same way")
    s.add_argument("--clean-raw", help="raw clean text (adds the mean over changed sentences)")
    s.add_argument("--noisy-raw", help="raw perturbed text")
    args = parser.parse_args(argv)
    if args.command == "perturb":
        stats = write_noisy(args.input, args.output, args.kind, args.fraction, args.seed, args.tagger)
    else:
        raw = (list(read_lines(args.clean_raw, hint=UTF8_HINT)), list(read_lines(args.noisy_raw, hint=UTF8_HINT))) \
            if args.clean_raw and args.noisy_raw else (None, None)
        stats = mean_similarity(list(read_lines(args.clean, hint=UTF8_HINT)), list(read_lines(args.noisy, hint=UTF8_HINT)),
                                *raw)
    print(json.dumps(stats, indent=1))
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
