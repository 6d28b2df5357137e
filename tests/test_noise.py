"""Test-set perturbations (preprocess.evaluate.noise): seeded, reproducible, the requested fraction, line counts."""
from __future__ import annotations

import gzip
import math
import re

import pytest

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.evaluate import noise


def _test_lines(shared_path, n=500):
    with gzip.open(shared_path("multi30k/test_2016_flickr.en.gz"), "rt", encoding="utf-8") as fh:
        return [next(fh).rstrip("\n") for _ in range(n)]


def _within_binomial(share, p, n, sds=4.0):
    """The realised share of n Bernoulli(p) draws lies within `sds` standard deviations of p."""
    return abs(share - p) <= sds * math.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "x", None])
def test_bad_fraction_is_a_user_error(tmp_path, bad):
    src = tmp_path / "t.en"
    src.write_text("two dogs are running\n", encoding="utf-8")
    out = tmp_path / "noisy.en"
    with pytest.raises(UserError, match="between 0 and 1"):
        noise.write_noisy(str(src), str(out), "ws", bad, 1)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [src]   # no temporary file left either


def test_cli_bad_fraction_one_line_error(tmp_path, capsys):
    src = tmp_path / "t.en"
    src.write_text("two dogs\n", encoding="utf-8")
    rc = run_main(noise.main, ["perturb", "--kind", "infl", "--fraction", "2", "--seed", "1",
                               "--input", str(src), "--output", str(tmp_path / "o.en")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert not (tmp_path / "o.en").exists()


def test_unknown_kind():
    with pytest.raises(UserError, match="unknown noise kind"):
        noise.perturb_lines(["a b"], "typo", 0.3)


def test_whitespace_noise_fraction_seeded_and_only_spaces(shared_path, tmp_path):
    lines = _test_lines(shared_path) + [""]                    # an empty line stays an empty line
    src = tmp_path / "test.en"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out1, out2, out3 = (tmp_path / f"ws{i}.en" for i in (1, 2, 3))
    stats = noise.write_noisy(str(src), str(out1), "ws", 0.3, seed=1)
    noise.write_noisy(str(src), str(out2), "ws", 0.3, seed=1)
    noise.write_noisy(str(src), str(out3), "ws", 0.3, seed=2)
    noisy = out1.read_text(encoding="utf-8").split("\n")[:-1]
    assert len(noisy) == len(lines) and noisy[-1] == ""
    assert out1.read_bytes() == out2.read_bytes()              # same seed, same file
    assert out1.read_bytes() != out3.read_bytes()              # another seed, other noise
    dropped = gaps = 0
    for clean, dirty in zip(lines, noisy):
        assert dirty.replace(" ", "") == clean.replace(" ", "")  # nothing but spaces removed
        gaps += max(0, len(clean.split()) - 1)
        dropped += len(clean.split()) - len(dirty.split())
    assert (gaps, dropped) == (stats["candidates"], stats["changed"])
    assert _within_binomial(dropped / gaps, 0.3, gaps)


def test_whitespace_noise_extremes():
    lines = ["a b c", "one", "", "x  y"]
    assert noise.perturb_lines(lines, "ws", 0.0, 3)[0] == lines
    assert noise.perturb_lines(lines, "ws", 1.0, 3)[0] == ["abc", "one", "", "xy"]


def test_inflection_noise_fraction_seeded_same_lemma(shared_path):
    from lemminflect import getAllLemmas

    lines = _test_lines(shared_path, 400)
    noisy, stats = noise.perturb_lines(lines, "infl", 0.3, seed=7)
    again, _ = noise.perturb_lines(lines, "infl", 0.3, seed=7)
    other, _ = noise.perturb_lines(lines, "infl", 0.3, seed=8)
    assert noisy == again and noisy != other
    assert len(noisy) == len(lines)
    assert stats["candidates"] > 0.3 * stats["words"]          # content words are a large share of the text
    assert _within_binomial(stats["changed_share"], 0.3, stats["candidates"])
    changed = 0
    for clean, dirty in zip(lines, noisy):
        cw, dw = clean.split(), dirty.split()
        assert len(cw) == len(dw)                                # a word is replaced by one word, spacing kept
        for a, b in zip(cw, dw):
            if a == b:
                continue
            changed += 1
            a, b = (re.search(r"[A-Za-z]+", w).group() for w in (a, b))   # the word without 's, punctuation
            assert a[:1].isupper() == b[:1].isupper()            # capitalisation kept
            lemmas_a = {lem.lower() for ls in getAllLemmas(a.lower()).values() for lem in ls}
            lemmas_b = {lem.lower() for ls in getAllLemmas(b.lower()).values() for lem in ls}
            assert lemmas_a & lemmas_b, (a, b)                   # another form of the same lemma
    assert changed == stats["changed"]


def test_inflection_noise_extremes():
    lines = ["The dogs were running in the park.", "Dogs bark.", ""]
    assert noise.perturb_lines(lines, "infl", 0.0, 1)[0] == lines
    noisy, stats = noise.perturb_lines(lines, "infl", 1.0, 1)
    assert stats["changed"] == stats["candidates"] > 0
    assert noisy[2] == ""
    first = noisy[0].split()
    assert (first[0], first[4], first[5]) == ("The", "in", "the")     # function words untouched
    assert first[1] != "dogs" and first[2] != "were" and first[3] != "running" and first[6] != "park."
    assert first[6].endswith(".") and noisy[1].split()[0] != "Dogs"
    assert noisy[1][0].isupper()


def test_similarity_by_hand():
    # Ratcliff/Obershelp: 2 * matches / total length; a b c d vs a x c d: 3 matches of 8 symbols
    assert noise.sequence_similarity("a b c d".split(), "a x c d".split()) == pytest.approx(0.75)
    assert noise.sequence_similarity([], []) == 1.0
    assert noise.sequence_similarity(["a"], ["b"]) == 0.0
    r = noise.mean_similarity(["a b c d", "e f"], ["a x c d", "e f"], ["A B", "E"], ["A X", "E"])
    assert r["mean"] == pytest.approx((0.75 + 1.0) / 2) and r["n"] == 2
    assert r["mean_changed"] == pytest.approx(0.75) and r["n_changed"] == 1
    with pytest.raises(UserError):
        noise.mean_similarity(["a"], ["a", "b"])
