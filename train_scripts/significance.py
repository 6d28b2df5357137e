"""BLEU and chrF with sacreBLEU's 95% confidence intervals and a paired significance test against a baseline.

Everything statistical is sacreBLEU's own (``sacrebleu.significance.PairedTest``, the code behind
``sacrebleu REF -i BASELINE SYSTEM ... --paired-bs``): the paired bootstrap resampling test (``bs``, Koehn 2004,
1000 resamples, as Moses' ``bootstrap-hypothesis-difference-significance.pl``) or paired approximate
randomisation (``ar``, Riezler & Maxwell 2005, 10000 trials, as multeval), and the 95% confidence interval of each
system's score from bootstrap resampling (half the width of the 2.5-97.5 percentile range, around the bootstrap
mean).  sacreBLEU seeds its generator from ``SACREBLEU_SEED`` (default 12345), so the numbers are reproducible.
For the bootstrap test a system's CI is exactly what ``BLEU().corpus_score(hyps, [refs], n_bootstrap=1000)``
prints as ``μ = mean ± ci``.

The test asks one question per system and metric: is its score different from the baseline's on *this test set*
(two-sided, ``p < alpha``)?  It says nothing about training-seed variance (one model per row) and makes no
correction for testing several systems against one baseline.

A system whose hypotheses are all empty is refused (one line naming it): its scores are 0 and any system would
be "significantly" better, which says nothing but that its run failed.

One guard on top of sacreBLEU: a system whose output is *identical* to the baseline's gets ``p_value`` 1.0 and
``identical_to_baseline`` True.  sacreBLEU counts resamples with a difference strictly greater than the observed
one, so for two identical outputs (observed difference 0, every resampled difference 0) it returns the smallest
possible p-value, 1 / (n + 1), and would mark "no difference at all" as significant.

Results are plain dicts (JSON-serialisable)::

    {"baseline": "unigram", "test": "bs", "n_samples": 1000, "alpha": 0.05, "n_sentences": 500,
     "signatures": {"bleu": "nrefs:1|bs:1000|seed:12345|...", "chrf": "..."},
     "systems": {"unigram": {"bleu": {"score": 30.1, "mean": 30.0, "ci": 1.6, "p_value": None,
                                      "significant": None}, "chrf": {...}},
                 "bite":    {"bleu": {"score": 31.5, "mean": 31.4, "ci": 1.7, "p_value": 0.04,
                                      "significant": True}, "chrf": {...}}}}

    python -m train_scripts.significance --refs test.de --baseline unigram=unigram/hyp.de \\
        --systems bite=bite/hyp.de flota=flota/hyp.de [--test bs|ar] [--n-samples N]
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Mapping, Optional, Sequence

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.files.inputs import UTF8_HINT, read_lines

METRICS = ("bleu", "chrf")
TESTS = {"bs": "paired bootstrap resampling", "ar": "paired approximate randomisation"}
DEFAULT_SAMPLES = {"bs": 1000, "ar": 10000}   # sacreBLEU's defaults


def _metric_objects() -> dict:
    from sacrebleu.metrics import BLEU, CHRF

    return {"bleu": BLEU(), "chrf": CHRF()}


def _num(x) -> Optional[float]:
    return None if x is None else float(x)


def compare(systems: Mapping[str, Sequence[str]], refs: Sequence[str], baseline: Optional[str] = None,
            test: str = "bs", n_samples: int = 0, alpha: float = 0.05) -> dict:
    """Scores with 95% CIs for every system and, where ``baseline`` names one of them, the paired test of every
    other system against it.  ``systems`` maps names to detokenised hypotheses (one per reference line);
    ``n_samples`` 0 = sacreBLEU's default for ``test``.  Without a baseline each system gets its CI alone (the
    p-values are then None)."""
    from sacrebleu.significance import PairedTest

    if test not in TESTS:
        raise UserError(f"unknown significance test {test!r} (choose from {', '.join(TESTS)})")
    if not systems:
        raise UserError("no systems to score")
    if baseline is not None and baseline not in systems:
        raise UserError(f"baseline {baseline!r} is not among the systems ({', '.join(systems)})")
    refs = list(refs)
    for name, hyps in systems.items():
        if len(hyps) != len(refs):
            raise UserError(f"{name}: {len(hyps)} hypotheses for {len(refs)} references")
        if hyps and not any(h.strip() for h in hyps):
            raise UserError(f"{name}: all {len(hyps)} hypotheses are empty (a failed or truncated run?): a "
                            f"significance test against it would only measure that")
    n = n_samples or DEFAULT_SAMPLES[test]
    # sacreBLEU logs every step at INFO; a pipeline's log does not need it
    logging.getLogger("sacrebleu").setLevel(logging.WARNING)

    def run(named: list) -> tuple:
        metrics = _metric_objects()
        # ar: n trials, CI from sacreBLEU's default bootstrap (n_ar_confidence=0 -> 1000 resamples)
        sigs, scores = PairedTest(named, metrics, [refs], test_type=test, n_samples=n,
                                  n_ar_confidence=0 if test == "ar" else -1)()
        keys = [k for k in scores if k != "System"]     # sacreBLEU's metric names, in METRICS order
        by_metric = dict(zip(METRICS, keys))
        out = {}
        for i, sys_name in enumerate(scores["System"]):
            out[sys_name] = {}
            for m, key in by_metric.items():
                r = scores[key][i]
                p = _num(r.p_value)
                out[sys_name][m] = {"score": float(r.score), "mean": _num(r.mean), "ci": _num(r.ci),
                                    "p_value": p, "significant": None if p is None else bool(p < alpha)}
        return {m: str(sigs[key]) for m, key in by_metric.items()}, out

    results: dict = {}
    if baseline is not None:
        named = [(baseline, list(systems[baseline]))] + [(k, list(v)) for k, v in systems.items() if k != baseline]
        signatures, results = run(named)
        for name, hyps in systems.items():
            if name != baseline and list(hyps) == list(systems[baseline]):
                for m in METRICS:
                    results[name][m].update(p_value=1.0, significant=False, identical_to_baseline=True)
    else:
        signatures = {}
        for name, hyps in systems.items():   # one system at a time: only its CI
            signatures, one = run([(name, list(hyps))])
            results.update(one)
    return {"baseline": baseline, "test": test, "test_name": TESTS[test], "n_samples": n, "alpha": alpha,
            "n_sentences": len(refs), "signatures": signatures,
            "systems": {name: results[name] for name in systems}}


def compare_test_sets(hyps: Mapping[str, Mapping[str, Sequence[str]]], refs: Sequence[str],
                      baseline: Optional[str] = None, test: str = "bs", n_samples: int = 0,
                      alpha: float = 0.05) -> dict:
    """:func:`compare` on every test set: ``hyps`` is ``{test set: {system: hypotheses}}`` (e.g. ``clean``,
    ``infl``, ``ws``; the references are the same for all, only the source was perturbed).  A test set without
    the baseline's output gets CIs only.  Returns ``{"systems": {system: {test set: {"bleu": ..., "chrf": ...}}},
    "settings": {test, test_name, n_samples, alpha, n_sentences, baseline, signatures}}``: the first goes into a
    report row's ``tests``, the second into the report's ``meta["significance"]``."""
    systems: dict = {}
    settings: dict = {}
    for test_set, by_system in hyps.items():
        res = compare(by_system, refs, baseline if baseline in by_system else None, test, n_samples, alpha)
        for name, scores in res["systems"].items():
            systems.setdefault(name, {})[test_set] = scores
        if not settings or res["baseline"] is not None:
            settings = {k: res[k] for k in ("baseline", "test", "test_name", "n_samples", "alpha", "n_sentences",
                                            "signatures")}
    return {"systems": systems, "settings": settings}


def _named_file(spec: str) -> tuple:
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise UserError(f"expected NAME=FILE, not {spec!r}")
    return name, list(read_lines(path, hint=UTF8_HINT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m train_scripts.significance", description=__doc__.split("\n\n")[0])
    ap.add_argument("--refs", required=True, help="reference file, one sentence per line")
    ap.add_argument("--baseline", help="NAME=FILE: the baseline system's detokenised output")
    ap.add_argument("--systems", nargs="+", default=[], help="NAME=FILE for every other system")
    ap.add_argument("--test", choices=list(TESTS), default="bs", help="bs: paired bootstrap; ar: approximate "
                                                                       "randomisation")
    ap.add_argument("--n-samples", type=int, default=0, help="resamples / trials (0: sacreBLEU's default)")
    ap.add_argument("--alpha", type=float, default=0.05, help="significance level")
    args = ap.parse_args(argv)
    systems = dict(_named_file(s) for s in ([args.baseline] if args.baseline else []) + args.systems)
    baseline = args.baseline.partition("=")[0] if args.baseline else None
    result = compare(systems, list(read_lines(args.refs, hint=UTF8_HINT)), baseline, args.test, args.n_samples, args.alpha)
    print(json.dumps(result, indent=1, ensure_ascii=False))
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
