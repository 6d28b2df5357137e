"""preprocess.tagging.hanta_fast gives exactly HanTa's own ``tag_sent`` tags (German and English models)."""
from __future__ import annotations

import gzip
import itertools
import math
import random
import shutil
import warnings

import pytest

pytest.importorskip("HanTa")

from preprocess.schemes.wordmap.tagging import _TAG_TOKEN_RE
from preprocess.tagging import hanta_fast as hf


def _tagger(model: str, kind: str):
    """``kind`` "compiled": the tagger load() gives (preprocess.tagging._hanta_fast where built); "python": this module's
    FastHanta run as plain Python.  Every exactness test runs on both."""
    loaded = hf.load(model)
    if kind == "python":
        return hf.FastHanta(model, loaded.hanta)
    if hf.fast_class() is hf.FastHanta:
        pytest.skip("preprocess.tagging._hanta_fast is not built here (see test_tagging_is_compiled_where_cython_and_cc_exist)")
    return loaded


@pytest.fixture(scope="module", params=["compiled", "python"])
def german(request):
    return _tagger("morphmodel_ger.pgz", request.param)


@pytest.fixture(scope="module", params=["compiled", "python"])
def english(request):
    return _tagger("morphmodel_en.pgz", request.param)


def _sentences(path, n, start=0):
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = [line.rstrip("\n") for line in itertools.islice(fh, start, start + n)]
    return [[m.group() for m in _TAG_TOKEN_RE.finditer(line)] for line in lines]


def _reference(h, sent, taglevel=0):
    try:
        return h.tag_sent(list(sent), taglevel=taglevel)
    except Exception as e:   # noqa: BLE001 - the comparison includes raising
        return type(e)


def _fast(f, sent, taglevel=0):
    try:
        return f.tag_sent(sent, taglevel=taglevel)
    except Exception as e:   # noqa: BLE001
        return type(e)


def test_load_gives_the_fast_tagger_with_the_installed_hanta():
    for model in ("morphmodel_ger.pgz", "morphmodel_en.pgz"):
        assert isinstance(hf.load(model), hf.fast_class())


def test_tagging_is_compiled_where_cython_and_cc_exist():
    """`make install` compiles preprocess/tagging/hanta_fast.py with Cython; only a machine without either runs it as plain
    Python (then this skips, and says why)."""
    pytest.importorskip("Cython", reason="Cython not installed: HanTa tagging runs as plain Python")
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler: HanTa tagging runs as plain Python")
    assert hf.fast_class() is not hf.FastHanta, "preprocess.tagging._hanta_fast is missing or stale: run `make install`"
    assert type(hf.load("morphmodel_ger.pgz")).__module__ == "preprocess.tagging._hanta_fast"


def test_stale_compiled_tagging_is_not_used(monkeypatch):
    """A compiled module built from an older hanta_fast.py is reported and not used (plain Python instead)."""
    pytest.importorskip("preprocess.tagging._hanta_fast", reason="HanTa tagging is not compiled here")
    monkeypatch.setattr(hf, "_source_digest", lambda: "0" * 64)
    hf.fast_class.cache_clear()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert hf.fast_class() is hf.FastHanta
        assert any("older preprocess/tagging/hanta_fast.py" in str(w.message) for w in caught)
    finally:
        hf.fast_class.cache_clear()


def test_multi30k_german_tags_identical(german, shared_path):
    """2,000 Multi30k German sentences (tokens as Wordmap hands them to HanTa), from three places."""
    path = shared_path("multi30k/train.de.gz")
    sents = _sentences(path, 1000) + _sentences(path, 500, start=20000) + _sentences(
        shared_path("multi30k/val.de.gz"), 500)
    h = german.hanta
    bad = [s for s in sents if german.tag_sent(s) != h.tag_sent(s, taglevel=0)]
    assert not bad, bad[:3]


def test_multi30k_english_tags_identical(english, shared_path):
    sents = [line.split() for line in map(" ".join, _sentences(shared_path("multi30k/train.en.gz"), 1500))]
    h = english.hanta
    bad = [s for s in sents if english.tag_sent(s) != h.tag_sent(s, taglevel=0)]
    assert not bad, bad[:3]


def _random_sentences(h, rng, n):
    known = sorted(h.cache)
    alphabet = "abcdefghijklmnopqrstuvwxyzäöüßABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÜ0123456789.,;:!?'`´\"-()é"
    out = []
    for _ in range(n):
        sent = []
        for _ in range(rng.randint(1, 14)):
            r = rng.random()
            if r < 0.5:
                w = rng.choice(known)
            elif r < 0.7:
                w = rng.choice(known).capitalize()
            elif r < 0.85:
                w = rng.choice(known) + rng.choice(["t", "en", "st", "ung", "x", "te"])
            else:
                w = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
            sent.append(w)
        out.append(sent)
    return out


@pytest.mark.parametrize("kind", ["compiled", "python"])
@pytest.mark.parametrize("model", ["morphmodel_ger.pgz", "morphmodel_en.pgz"])
def test_random_token_sequences_identical(model, kind):
    """Random words from HanTa's table, capitalised, with made-up endings, and random strings (quote marks,
    digits, punctuation): tags identical, and where HanTa raises, so does the fast path."""
    f = _tagger(model, kind)
    rng = random.Random(27)
    for sent in _random_sentences(f.hanta, rng, 400):
        assert _fast(f, sent) == _reference(f.hanta, sent), sent


def test_taglevel_1_tags_and_lemmas_identical(german, shared_path):
    sents = _sentences(shared_path("multi30k/train.de.gz"), 300, start=5000)
    for s in sents:
        assert german.tag_sent(s, taglevel=1) == german.hanta.tag_sent(s, taglevel=1), s


def test_taglevel_0_equals_taglevel_1_tags(german, shared_path):
    """The issue's measurement: the tag level changes no tag (the lemma pass only adds lemmas)."""
    h = german.hanta
    for s in _sentences(shared_path("multi30k/train.de.gz"), 300, start=9000):
        assert h.tag_sent(s, taglevel=0) == [t for _w, _l, t in h.tag_sent(s, taglevel=1)]


def test_check_lemmas_raises_where_hanta_lemma_pass_raises(german):
    """HanTa's taglevel-1 pass fails on words made of a morpheme whose stem is '' (German: herbstauktio);
    check_lemmas reproduces that, and passes everywhere else."""
    h = german.hanta
    for sent in (["Die", "Herbstauktion", "beginnt"], ["Ein", "Mann", "spielt", "Gitarre", "."]):
        tags = german.tag_sent(sent)
        try:
            h.tag_sent(sent, taglevel=1)
            raised = False
        except IndexError:
            raised = True
        if raised:
            with pytest.raises(IndexError):
                german.check_lemmas(sent, tags)
        else:
            german.check_lemmas(sent, tags)
    with pytest.raises(IndexError):
        h.tag_sent(["Die", "Herbstauktion"], taglevel=1)


def test_caches_are_bounded(german):
    f = type(german)("morphmodel_ger.pgz", german.hanta, cache_size=50)
    words = [f"Wort{i}x" for i in range(300)]
    for i in range(0, 300, 10):
        assert f.tag_sent(words[i:i + 10]) == german.hanta.tag_sent(words[i:i + 10], taglevel=0)
    info = f.cache_info()
    assert info["candidates"].currsize <= 50 and info["analyses"].currsize <= 50


def test_probe_mismatch_falls_back_to_hanta_with_a_warning(german, monkeypatch, capsys):
    """Another HanTa whose sentence model differs (simulated: one transition probability changed) fails the
    probe: load() warns and returns HanTa itself."""
    hf.load.cache_clear()
    try:
        from HanTa import HanoverTagger as ht
        real_init = ht.HanoverTagger.__init__

        def altered_init(self, *args, **kwargs):
            real_init(self, *args, **kwargs)
            orig = self.tag_sent_viterbi

            def viterbi(sent, casesensitive=True):   # a HanTa whose tags differ from 1.2.1's
                return list(reversed(orig(sent, casesensitive)))
            self.tag_sent_viterbi = viterbi

        monkeypatch.setattr(ht.HanoverTagger, "__init__", altered_init)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t = hf.load("morphmodel_ger.pgz")
        assert isinstance(t, hf.ReferenceHanta)
        assert any("does not behave like HanTa" in str(w.message) for w in caught)
        assert "warning: HanTa" in capsys.readouterr().err
        sent = ["Ein", "Hund", "rennt", "schnell", "."]
        assert t.tag_sent(sent) == t.hanta.tag_sent(sent, taglevel=0)
    finally:
        monkeypatch.undo()
        hf.load.cache_clear()


def _forward_words(h, sents, rng, n_random):
    """Words outside HanTa's table (analysed by analyze_forward), normalised as HanTa does, and random strings of
    letters, digits and marks (lengths 0 to 30: the empty word, words under 4 characters, which guess every
    segment, and long ones)."""
    words = sorted({h.normalize(w) for s in sents for w in s} - set(h.cache))
    alphabet = "abcdefghijklmnopqrstuvwxyzäöüßé0123456789.-'"
    return words + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(n_random)]


@pytest.mark.parametrize("kind", ["compiled", "python"])
@pytest.mark.parametrize("model", ["morphmodel_ger.pgz", "morphmodel_en.pgz"])
def test_analyze_forward_identical(model, kind, shared_path):
    """The word analysis itself, not only the tags it leads to: the same (tag, log p) list as HanTa's
    analyze_forward, the same floats (compared exactly, including those merged with numpy.logaddexp) in the same
    order, for the Multi30k words HanTa's table lacks and for random strings."""
    f = _tagger(model, kind)
    h = f.hanta
    lang = "de" if model == "morphmodel_ger.pgz" else "en"
    words = _forward_words(h, _sentences(shared_path(f"multi30k/train.{lang}.gz"), 400, start=3000),
                           random.Random(5), 300)
    merged = 0
    for w in words:
        ref = h.analyze_forward(w)
        assert f.analyze_forward(w) == ref, w
        merged += any(type(p).__module__ == "numpy" for _t, p in ref)
    assert merged > 50   # many of the lists hold values HanTa merged with numpy.logaddexp


def test_logaddexp_is_numpys():
    """hanta_fast's logaddexp (numpy's formula with the C library's exp and log1p) gives numpy.logaddexp's float
    bit for bit, ties and infinities included (the compiled twin is checked through analyze_forward above)."""
    np = pytest.importorskip("numpy")
    rng = random.Random(3)
    pairs = [(rng.uniform(-80, 0), rng.uniform(-80, 0)) for _ in range(100000)]
    pairs += [(x, x) for x, _ in pairs[:1000]] + [(x, x + rng.uniform(-1e-12, 1e-12)) for x, _ in pairs[:1000]]
    pairs += [(-math.inf, -3.0), (-3.0, -math.inf), (-math.inf, -math.inf), (0.0, -1e6), (-1e6, -1e6 - 1e-9)]
    for x, y in pairs:
        assert hf._logaddexp(x, y) == np.logaddexp(x, y), (x, y)


@pytest.mark.parametrize("kind", ["compiled", "python"])
def test_long_sentence_and_long_words_identical(kind):
    """A sentence long enough to grow the Viterbi's rows (and to be handed back afterwards), and words long
    enough to grow analyze_forward's work arrays: the same tags and analyses as HanTa, before and after."""
    f = _tagger("morphmodel_ger.pgz", kind)
    rng = random.Random(11)
    known = sorted(f.hanta.cache)
    sent = [rng.choice(known).capitalize() if rng.random() < 0.3 else rng.choice(known) for _ in range(3000)]
    sent += ["Frühstücksxyz" + str(i % 7) for i in range(200)]
    short = ["Ein", "Mann", "spielt", "Gitarre", "."]
    for s in (short, sent, short, sent[:700], short):
        assert f.tag_sent(s) == f.hanta.tag_sent(s, taglevel=0)
    for w in ("spielt", "donaudampfschifffahrtsgesellschaftskapitän" * 7, "spielt", "ab" * 150, "x"):
        assert f.analyze_forward(w) == f.hanta.analyze_forward(w), w
