"""train_scripts.significance: the numbers are sacreBLEU's own, returned as plain JSON-serialisable dicts."""
from __future__ import annotations

import gzip
import json

import pytest

from preprocess.common import UserError
from train_scripts import significance


@pytest.fixture(scope="module")
def systems(request):
    """German references and three systems that differ from them by simple edits."""
    from tests.conftest import require_shared

    with gzip.open(require_shared("multi30k/test_2016_flickr.de.gz"), "rt", encoding="utf-8") as fh:
        refs = [next(fh).rstrip("\n") for _ in range(150)]
    def drop(r):
        return " ".join(r.split()[1:])

    base = [drop(r) if i % 3 == 0 else r for i, r in enumerate(refs)]
    swap = [" ".join(r.split()[::-1]) if i % 2 == 0 else r for i, r in enumerate(refs)]
    # as many sentences repaired as newly damaged, in the same way: the same quality by other sentences
    mixed = [refs[i] if i % 6 == 0 else drop(r) if i % 6 == 1 else r for i, r in enumerate(base)]
    return refs, {"base": base, "swap": swap, "mixed": mixed}


def test_scores_cis_and_p_values_are_sacrebleus(systems):
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    refs, hyps = systems
    res = significance.compare(hyps, refs, baseline="base", test="bs")
    json.dumps(res)                                         # plain types only
    _, direct = PairedTest([(k, v) for k, v in hyps.items()], {"BLEU": BLEU(), "chrF": CHRF()}, [refs],
                           test_type="bs", n_samples=1000)()
    assert direct["System"] == ["base", "swap", "mixed"]
    for i, name in enumerate(direct["System"]):
        for metric, key in (("bleu", "BLEU"), ("chrf", "chrF2")):
            ours, theirs = res["systems"][name][metric], direct[key][i]
            assert ours["score"] == pytest.approx(theirs.score)
            assert ours["mean"] == pytest.approx(theirs.mean) and ours["ci"] == pytest.approx(theirs.ci)
            if name == "base":
                assert ours["p_value"] is None and ours["significant"] is None
            else:
                assert ours["p_value"] == pytest.approx(theirs.p_value)
                assert ours["significant"] == (theirs.p_value < 0.05)
    # the bootstrap CI is the one sacreBLEU prints for a single system (corpus_score with n_bootstrap)
    for name, h in hyps.items():
        for metric, obj in (("bleu", BLEU()), ("chrf", CHRF())):
            s = obj.corpus_score(h, [refs], n_bootstrap=1000)
            assert res["systems"][name][metric]["ci"] == pytest.approx(s._ci, abs=1e-4)
            assert res["systems"][name][metric]["mean"] == pytest.approx(s._mean, abs=1e-4)
    # reversing half of the sentences is a real difference; trading damaged sentences for others is not
    assert res["systems"]["swap"]["bleu"]["significant"] is True
    assert res["systems"]["mixed"]["bleu"]["significant"] is False
    assert res["signatures"]["bleu"].startswith("nrefs:1|bs:1000|seed:12345")


def test_approximate_randomisation_is_sacrebleus(systems):
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    refs, hyps = systems
    res = significance.compare(hyps, refs, baseline="base", test="ar", n_samples=500)
    _, direct = PairedTest(list(hyps.items()), {"BLEU": BLEU(), "chrF": CHRF()}, [refs], test_type="ar",
                           n_samples=500, n_ar_confidence=0)()
    for i, name in enumerate(direct["System"][1:], 1):
        assert res["systems"][name]["bleu"]["p_value"] == pytest.approx(direct["BLEU"][i].p_value)
        assert res["systems"][name]["chrf"]["p_value"] == pytest.approx(direct["chrF2"][i].p_value)
        assert res["systems"][name]["bleu"]["ci"] == pytest.approx(direct["BLEU"][i].ci)


def test_identical_output_is_not_significant(systems):
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    refs, hyps = systems
    both = {"base": hyps["base"], "copy": list(hyps["base"])}
    # sacreBLEU alone gives the smallest possible p-value to a copy of the baseline (strict '>' count) ...
    _, direct = PairedTest(list(both.items()), {"BLEU": BLEU()}, [refs], test_type="bs", n_samples=1000)()
    assert direct["BLEU"][1].p_value == pytest.approx(1 / 1001)
    # ... which the guard turns into "no difference"
    res = significance.compare(both, refs, baseline="base")
    assert res["systems"]["copy"]["bleu"]["p_value"] == 1.0
    assert res["systems"]["copy"]["bleu"]["significant"] is False
    assert res["systems"]["copy"]["bleu"]["identical_to_baseline"] is True


def test_without_baseline_every_system_gets_its_ci(systems):
    from sacrebleu.metrics import BLEU

    refs, hyps = systems
    res = significance.compare(hyps, refs)
    for name, h in hyps.items():
        s = BLEU().corpus_score(h, [refs], n_bootstrap=1000)
        assert res["systems"][name]["bleu"]["ci"] == pytest.approx(s._ci, abs=1e-4)
        assert res["systems"][name]["bleu"]["p_value"] is None


def test_every_test_set_is_compared_with_its_own_baseline_output(systems):
    refs, hyps = systems
    sets = {"clean": hyps, "infl": {"base": hyps["swap"], "mixed": hyps["mixed"]}, "ws": {"mixed": hyps["base"]}}
    res = significance.compare_test_sets(sets, refs, baseline="base")
    assert set(res["systems"]) == {"base", "swap", "mixed"}
    assert set(res["systems"]["mixed"]) == {"clean", "infl", "ws"} and set(res["systems"]["swap"]) == {"clean"}
    assert res["systems"]["mixed"]["infl"] == significance.compare(sets["infl"], refs, "base")["systems"]["mixed"]
    assert res["systems"]["mixed"]["ws"]["bleu"]["p_value"] is None        # no baseline output on this set
    assert res["settings"]["baseline"] == "base" and res["settings"]["n_sentences"] == len(refs)
    json.dumps(res)


def test_bad_input(systems):
    refs, hyps = systems
    with pytest.raises(UserError, match="baseline"):
        significance.compare(hyps, refs, baseline="missing")
    with pytest.raises(UserError, match="hypotheses"):
        significance.compare({"a": refs[:-1]}, refs)
    with pytest.raises(UserError, match="unknown significance test"):
        significance.compare(hyps, refs, test="t-test")


def test_all_empty_system_is_refused(systems, tmp_path):
    """An all-empty output (a failed run) is refused, as baseline or as system, in one line; one empty line among
    others is just a bad translation."""
    refs, hyps = systems
    empty = [""] * len(refs)
    with pytest.raises(UserError, match="broken: all 150 hypotheses are empty"):
        significance.compare({"base": hyps["base"], "broken": empty}, refs, baseline="base", n_samples=10)
    with pytest.raises(UserError, match="broken: all 150 hypotheses are empty"):
        significance.compare({"broken": empty, "base": hyps["base"]}, refs, baseline="broken", n_samples=10)
    one_empty = [""] + hyps["base"][1:]
    assert significance.compare({"base": hyps["base"], "x": one_empty}, refs, "base", n_samples=10)["systems"]["x"]
    # through the command line: one line, exit 2
    from tests.conftest import run_command

    (tmp_path / "refs.de").write_text("".join(r + "\n" for r in refs), encoding="utf-8")
    (tmp_path / "base.de").write_text("".join(h + "\n" for h in hyps["base"]), encoding="utf-8")
    (tmp_path / "empty.de").write_text("\n" * len(refs))
    bad = run_command(["python", "-m", "train_scripts.significance", "--refs", tmp_path / "refs.de", "--baseline",
                       f"base={tmp_path / 'base.de'}", "--systems", f"broken={tmp_path / 'empty.de'}",
                       "--n-samples", "10"], check=False)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "all 150 hypotheses are empty" in bad.stderr
