"""FLOTA (Hofmann et al., 2022): paper examples, equivalence with the published method, loaders, bad input."""
from __future__ import annotations

import csv
import json
import random
import re
import shutil
import subprocess
import sys
import warnings

import pytest

from preprocess.common import UserError
from preprocess.models.vocabularies import (
    from_byte_level,
    load_vocab,
    to_byte_level,
    wordpiece_segment,
    write_fairseq_dict,
)
from preprocess.schemes.flota import FlotaEncoder, FlotaTokenizer, PythonSearchFlotaTokenizer, detokenize
from preprocess.schemes.flota import search as flota_search
from preprocess.whitespace_noise import inject_whitespace_noise, line_rng

INVENTORIES = [("bert-base-uncased", "wordpiece"), ("gpt2", "gpt2"), ("xlnet-base-cased", "sentencepiece")]

#: the tokenizer as imported (compiled search where built) and with the plain Python search
SEARCHES = [pytest.param(FlotaTokenizer, id="as-imported"), pytest.param(PythonSearchFlotaTokenizer, id="python")]


# --- an independent, straightforward re-implementation of the paper's pseudocode (Figure 1) and of the -------
# --- released code's details (max length per model, start/continuation preference, whole-word check) --------

def reference_flota(vocab: set, style: str, k: int, strict=False, max_len=None):  # noqa: C901 - in the paper's shape
    marker = {"wordpiece": "##", "gpt2": "\u0120", "sentencepiece": "\u2581"}[style]
    if max_len is None:
        max_len = {"wordpiece": 18, "gpt2": 19, "sentencepiece": 16}[style]

    def candidates(s, i):
        # the forms tried for substring s at position i, in order
        if style == "wordpiece":
            start, cont = s, marker + s
        else:
            start, cont = marker + s, s
        if strict is True:
            return [start] if i == 0 else [cont]
        if strict == "published" and style == "wordpiece":
            return [start] if i == 0 else [cont, start]
        return [start, cont] if i == 0 else [cont, start]

    def max_subword_split(w):
        for j in range(min(len(w), max_len), 0, -1):
            for i in range(0, len(w) - j + 1):
                if w[i] == "-":
                    continue
                s = w[i:i + j]
                for cand in candidates(s, i):
                    if cand in vocab:
                        return cand, w[:i] + "-" * j + w[i + j:], i
        return None, None, None

    def flota_tokenize(w, k):
        s, r, i = max_subword_split(w)
        if s is None:
            return {}
        if k == 1 or r == "-" * len(r):
            return {i: s}
        F = flota_tokenize(r, k - 1)
        F[i] = s
        return F

    def tokenize_word(w):
        whole = [w, marker + w] if style == "wordpiece" else [marker + w, w]
        if strict is True:
            whole = whole[:1]
        for c in whole:
            if c in vocab:
                return [c]
        return [s for _, s in sorted(flota_tokenize(w, k).items())]

    return tokenize_word


def read_inventory(path) -> set:
    with open(path, encoding="utf-8") as fh:
        return {t for t in fh.read().split("\n") if t}


def arxiv_titles(folder) -> list:
    titles = []
    for f in sorted(folder.glob("arxiv_*.csv")):
        with open(f, encoding="utf-8", newline="") as fh:
            titles.extend(row["text"] for row in csv.DictReader(fh))
    return titles


@pytest.fixture
def bert(shared_path):
    return FlotaTokenizer(shared_path("flota_vocabs/bert-base-uncased.txt"), "wordpiece", k=3)


# --- paper examples ------------------------------------------------------------------------------------------

def test_undesirable_figure1_and_section2(shared_path):
    """Section 2: for undesirable and k = 2 FLOTA finds desirable, then un, then stops; the result is
    un, desirable (and the same for k > 2 since the residue is null).  WordPiece gives und, es, ira, ble."""
    path = shared_path("flota_vocabs/bert-base-uncased.txt")
    assert FlotaTokenizer(path, "wordpiece", k=1).tokenize_word("undesirable") == ["desirable"]
    for k in (2, 3, 4):
        assert FlotaTokenizer(path, "wordpiece", k=k).tokenize_word("undesirable") == ["un", "desirable"]
    first = FlotaTokenizer(path, "wordpiece", k=3, mode="first")
    assert first.standard_tokenize_word("undesirable") == ["und", "##es", "##ira", "##ble"]


def test_first_and_longest_section3(shared_path):
    """Section 3: with k = 3, FIRST is und, es, ira and LONGEST is und, ira, ble (in standard-tokenisation order)."""
    path = shared_path("flota_vocabs/bert-base-uncased.txt")
    assert FlotaTokenizer(path, "wordpiece", k=3, mode="first").tokenize_word("undesirable") == \
        ["und", "##es", "##ira"]
    assert FlotaTokenizer(path, "wordpiece", k=3, mode="longest").tokenize_word("undesirable") == \
        ["und", "##ira", "##ble"]
    # whole in-vocabulary words stay whole in every mode
    for mode in ("flota", "first", "longest"):
        assert FlotaTokenizer(path, "wordpiece", k=1, mode=mode).tokenize_word("desirable") == ["desirable"]


def test_pseudocode_on_toy_vocabulary():
    vocab = ["un", "desirable", "des", "able", "##able", "##ira", "a", "##e"]
    tok = FlotaTokenizer(vocab, "wordpiece", k=4)
    # longest first (desirable), then un; the residue is all hyphens so it stops before k
    assert tok.tokenize_word("undesirable") == ["un", "desirable"]
    # the residue keeps the removed span as hyphens: "xaby" -> "ab" removed; "xy" is never formed
    tok2 = FlotaTokenizer(["ab", "xy", "x"], "wordpiece", k=3)
    assert tok2.tokenize_word("xaby") == ["x", "ab"]
    # pieces come back in order of position, not of discovery
    tok3 = FlotaTokenizer(["abcd", "##xy", "##z"], "wordpiece", k=3)
    assert tok3.tokenize_word("zabcdxy") == ["##z", "abcd", "##xy"]  # "##abcd" is not in the vocabulary
    # k caps the number of pieces; the longest come first
    assert FlotaTokenizer(["abcd", "##xy", "##z"], "wordpiece", k=1).tokenize_word("zabcdxy") == ["abcd"]
    assert FlotaTokenizer(["abcd", "##xy", "##z"], "wordpiece", k=2).tokenize_word("zabcdxy") == ["abcd", "##xy"]
    # leftmost wins among equally long candidates
    assert FlotaTokenizer(["ab", "##cd"], "wordpiece", k=1).tokenize_word("abcd") == ["ab"]


def test_start_and_continuation_forms_and_strict():
    # wordpiece: at position 0 the plain form is preferred, elsewhere the ## form
    vocab = ["ab", "##ab", "cd", "##cd"]
    assert FlotaTokenizer(vocab, "wordpiece", k=2).tokenize_word("abcd") == ["ab", "##cd"]
    # fallback to the other form, unless strict
    assert FlotaTokenizer(["##ab", "cd"], "wordpiece", k=2).tokenize_word("abcd") == ["##ab", "cd"]
    assert FlotaTokenizer(["##ab", "cd"], "wordpiece", k=2, strict=True).tokenize_word("abcd") == []
    # the released code's --strict only blocks the fallback at position 0 of WordPiece vocabularies
    assert FlotaTokenizer(["##ab", "cd"], "wordpiece", k=2, strict="published").tokenize_word("abcd") == ["cd"]
    # gpt2 / sentencepiece: the marker is on word starts
    for style, m in (("gpt2", "\u0120"), ("sentencepiece", "\u2581")):
        vocab = [m + "ab", "ab", m + "cd", "cd"]
        assert FlotaTokenizer(vocab, style, k=2).tokenize_word("abcd") == [m + "ab", "cd"]
        assert FlotaTokenizer([m + "cd", "ab"], style, k=2).tokenize_word("abcd") == ["ab", m + "cd"]
        assert FlotaTokenizer([m + "cd", "ab"], style, k=2, strict=True).tokenize_word("abcd") == []


def test_max_len_caps_candidates_but_not_whole_words():
    long = "a" * 20
    vocab = [long, "b" * 20, "a"]
    tok = FlotaTokenizer(vocab, "wordpiece", k=2)  # max_len 18 for wordpiece
    assert tok.tokenize_word(long) == [long]  # whole-word check comes first
    assert tok.tokenize_word("b" * 20 + "c") == []  # the 20-character piece is never a candidate
    assert FlotaTokenizer(vocab, "wordpiece", k=2, max_len=20).tokenize_word("b" * 20 + "c") == ["b" * 20]


def test_uncoverable_word_gives_nothing_or_unk():
    tok = FlotaTokenizer(["ab", "[UNK]"], "wordpiece", k=3)
    assert tok.tokenize_word("xyz") == []
    assert tok.tokenize("ab xyz ab") == ["ab", "ab"]
    tok_unk = FlotaTokenizer(["ab", "[UNK]"], "wordpiece", k=3, unk_token="[UNK]")
    assert tok_unk.tokenize("ab xyz ab") == ["ab", "[UNK]", "ab"]
    with pytest.raises(UserError):
        FlotaTokenizer(["ab"], "wordpiece", unk_token="[UNK]")


def test_pretokenisation_of_the_released_code():
    tok = FlotaTokenizer(["a", "b", "-", ",", "c_d", "9"], "wordpiece", k=3)
    assert tok.tokenize("a-b, c_d 9") == ["a", "-", "b", ",", "c_d", "9"]


# --- the published method on the ArXiv sets ------------------------------------------------------------------

@pytest.mark.parametrize("share", [pytest.param(1, marks=pytest.mark.slow, id="all"), pytest.param(10, id="tenth")])
@pytest.mark.parametrize("name,style", INVENTORIES)
def test_equivalence_with_published_method_on_all_arxiv_titles(shared_path, name, style, share):
    """Every title of the ArXiv-S and ArXiv-L sets, k = 1..4: token for token the published method (``make test``;
    the fast loop checks every tenth word type and title, the same code on a tenth of the work)."""
    vocab_path = shared_path(f"flota_vocabs/{name}.txt")
    titles = arxiv_titles(shared_path("flota_arxiv"))
    assert len(titles) == 66000
    vocab = read_inventory(vocab_path)
    words = sorted({w for t in titles for w in re.findall(r"[\w]+|[^\s\w]", t)})[::share]
    titles = titles[::share]
    for k in (1, 2, 3, 4):
        ref = reference_flota(vocab, style, k)
        tok = FlotaTokenizer(vocab_path, style, k=k)
        expected = {w: ref(w) for w in words}
        mismatches = [(w, expected[w], tok.tokenize_word(w)) for w in words if tok.tokenize_word(w) != expected[w]]
        assert not mismatches, f"k={k}: {len(mismatches)} words differ, e.g. {mismatches[:5]}"
        # whole titles, through the tokenizer's own pretokenisation
        for title in titles[::37]:
            assert tok.tokenize(title) == [p for w in re.findall(r"[\w]+|[^\s\w]", title)
                                           for p in expected.get(w) or ref(w)]


@pytest.mark.parametrize("name,style", INVENTORIES)
def test_benchmark_baseline_is_the_published_method(shared_path, name, style):
    """bench/flota.py times the library against its own straightforward version: both must give the same tokens
    (the benchmark asserts this only for the bert inventory it runs on)."""
    import importlib.util

    from preprocess.common import REPO
    spec = importlib.util.spec_from_file_location("bench_flota", REPO / "bench" / "flota.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    vocab_path = shared_path(f"flota_vocabs/{name}.txt")
    baseline = bench.StraightforwardFlota(read_inventory(vocab_path), style, 3)
    tok = FlotaTokenizer(vocab_path, style, k=3, cache_size=0)
    titles = arxiv_titles(shared_path("flota_arxiv"))[::50]
    assert [tok.tokenize(t) for t in titles] == [baseline.tokenize(t) for t in titles]


def test_published_strictness_on_arxiv_sample(shared_path):
    vocab_path = shared_path("flota_vocabs/bert-base-uncased.txt")
    vocab = read_inventory(vocab_path)
    titles = arxiv_titles(shared_path("flota_arxiv"))[::20]
    words = sorted({w for t in titles for w in re.findall(r"[\w]+|[^\s\w]", t)})
    for strict in ("published", True):
        ref = reference_flota(vocab, "wordpiece", 3, strict=strict)
        tok = FlotaTokenizer(vocab_path, "wordpiece", k=3, strict=strict)
        assert [tok.tokenize_word(w) for w in words] == [ref(w) for w in words]


@pytest.mark.parametrize("tokenizer_class", SEARCHES)
def test_equivalence_on_random_words_with_hyphen_tokens(tokenizer_class):
    """The optimised scan against the reference on random toy vocabularies, including tokens with inner
    hyphens (which can match across an already covered span, as in the published code) and words with '-'."""
    rng = random.Random(7)
    alphabet = "abc-_"
    across = 0  # pieces that span a covered character: the case the optimised scan treats separately
    for _trial in range(300):
        style = rng.choice(["wordpiece", "gpt2", "sentencepiece"])
        marker = {"wordpiece": "##", "gpt2": "\u0120", "sentencepiece": "\u2581"}[style]
        bare = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(3, 25))}
        vocab = set()
        for b in bare:
            r = rng.random()
            if r < 0.4:
                vocab.add(b)
            elif r < 0.8:
                vocab.add(marker + b)
            else:
                vocab.update((b, marker + b))
        k = rng.randint(1, 5)
        strict = rng.choice([False, False, True, "published"])
        max_len = rng.choice([None, 2, 3])
        ref = reference_flota(vocab, style, k, strict=strict, max_len=max_len)
        tok = tokenizer_class(sorted(vocab), style, k=k, strict=strict, max_len=max_len)
        for _ in range(30):
            w = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
            expected = ref(w)
            assert tok.tokenize_word(w) == expected, (style, sorted(vocab), k, strict, max_len, w)
            across += sum("-" in p.lstrip("#\u0120\u2581")[1:] for p in expected[1:])
    assert across > 50


# --- the compiled search ---------------------------------------------------------------------------------------

def test_search_is_compiled_where_cython_and_a_compiler_exist():
    """`make install` compiles preprocess/schemes/flota/search.py with Cython; only a machine without either runs it as
    plain Python (then this skips, and says why)."""
    pytest.importorskip("Cython", reason="Cython not installed: FLOTA's search runs as plain Python")
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler: FLOTA's search runs as plain Python")
    assert flota_search.search_class() is not flota_search.FlotaSearch, \
        "preprocess.schemes.flota._search is missing or stale: run `make install`"
    assert PythonSearchFlotaTokenizer is not FlotaTokenizer
    assert FlotaTokenizer.flota_pieces is not PythonSearchFlotaTokenizer.flota_pieces


@pytest.mark.parametrize("name,style", INVENTORIES)
def test_compiled_search_equals_python_search(shared_path, name, style):
    """Every distinct ArXiv word, k = 3, in all three strict modes: the compiled search and the plain Python one
    find the same pieces (the as-imported tokenizer is checked against the published method above)."""
    if PythonSearchFlotaTokenizer is FlotaTokenizer:
        pytest.skip("the search is not compiled here (see test_search_is_compiled_where_cython_and_a_compiler_exist)")
    vocab_path = shared_path(f"flota_vocabs/{name}.txt")
    words = sorted({w for t in arxiv_titles(shared_path("flota_arxiv")) for w in re.findall(r"[\w]+|[^\s\w]", t)})
    words += ["a-b", "-x-", "x_--y", "-", "--"]   # the word's own hyphens count as covered
    for strict in (False, True, "published"):
        compiled = FlotaTokenizer(vocab_path, style, k=3, strict=strict, cache_size=0)
        python = PythonSearchFlotaTokenizer(vocab_path, style, k=3, strict=strict, cache_size=0)
        differ = [w for w in words if compiled.flota_pieces(w, 3) != python.flota_pieces(w, 3)]
        assert not differ, f"strict={strict}: {len(differ)} words differ, e.g. {differ[:5]}"
    # the compiled search takes exactly str; tokenize_word passes a str subclass (numpy.str_) on as str
    subclass = type("StrSubclass", (str,), {})
    assert compiled.tokenize_word(subclass("unhappinessx")) == python.tokenize_word("unhappinessx")


def test_stale_compiled_search_is_not_used(monkeypatch):
    """A compiled module built from an older flota_search.py is reported and not used; preprocess.schemes.flota then
    runs the search as plain Python (as on a machine without a compiler)."""
    pytest.importorskip("preprocess.schemes.flota._search", reason="the search is not compiled here")
    monkeypatch.setattr(flota_search, "_source_digest", lambda: "0" * 64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert flota_search.search_class() is flota_search.FlotaSearch
    assert any("older preprocess/schemes/flota/search.py" in str(w.message) for w in caught)
    script = """if True:
        import sys, types, warnings
        stale = types.ModuleType("preprocess.schemes.flota._search")   # a build of an older search.py
        stale.SOURCE_SHA256, stale.__file__ = "0" * 64, "_search.so"
        sys.modules[stale.__name__] = stale
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from preprocess.schemes import flota
            from preprocess.schemes.flota import search as flota_search
        assert any("older preprocess/schemes/flota/search.py" in str(w.message) for w in caught)
        assert flota.PythonSearchFlotaTokenizer is flota.FlotaTokenizer
        assert flota.FlotaTokenizer.__bases__ == (flota_search.FlotaSearch,)
        print(flota.FlotaTokenizer(["un", "##happi", "##ness", "##x"], "wordpiece").tokenize("unhappinessx"))
    """
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['un', '##happi', '##ness']"


def test_search_runs_without_cython_or_a_build():
    """A machine with neither Cython nor the compiled module: flota_search.py runs as plain Python (its cython.*
    annotations are never evaluated) and gives the published pieces."""
    script = """if True:
        import sys
        sys.modules["cython"] = None                      # import cython -> ImportError
        sys.modules["preprocess.schemes.flota._search"] = None    # no compiled module
        from preprocess.schemes import flota
        from preprocess.schemes.flota import search as flota_search
        assert flota_search.cython is None and flota.FlotaTokenizer.__bases__ == (flota_search.FlotaSearch,)
        tok = flota.FlotaTokenizer(["un", "##happi", "##ness", "##x", "a", "##b"], "wordpiece", k=3)
        print(tok.tokenize("unhappinessx a-b"))
    """
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # k = 3: happi, ness, un (x left over); '-' is no token and dropped; b only as ##b (the fallback form)
    assert done.stdout.strip() == "['un', '##happi', '##ness', 'a', '##b']"


def test_gpt2_hyphen_tokens_across_residue(shared_path):
    """gpt2 has tokens such as '_-': after 'ab' is removed from 'x_ab', the residue 'x_--' contains '_-'."""
    vocab_path = shared_path("flota_vocabs/gpt2.txt")
    vocab = read_inventory(vocab_path)
    assert "_-" in vocab
    ref = reference_flota(vocab, "gpt2", 3)
    tok = FlotaTokenizer(vocab_path, "gpt2", k=3)
    for w in ["x_ab", "q_zzzzzz", "a_b_c", "__init__x", "foo_barbaz_", "zz_qq_-"]:
        assert tok.tokenize_word(w) == ref(w)


# --- standard segmenters --------------------------------------------------------------------------------------

def test_wordpiece_segment_matches_bert_rules():
    vocab = {"un", "##aff", "##able", "[UNK]", "a", "##a"}
    assert wordpiece_segment("unaffable", vocab) == ["un", "##aff", "##able"]
    assert wordpiece_segment("unaffablex", vocab) == ["[UNK]"]  # one unmatched position -> the whole word
    assert wordpiece_segment("a" * 101, vocab) == ["[UNK]"]  # longer than max_input_chars_per_word
    assert wordpiece_segment("aa", vocab) == ["a", "##a"]


def test_gpt2_inventory_has_no_standard_segmenter(shared_path):
    with pytest.raises(UserError, match="standard segmentation"):
        FlotaTokenizer(shared_path("flota_vocabs/gpt2.txt"), "gpt2", mode="first")
    with pytest.raises(UserError, match="standard segmentation"):
        FlotaTokenizer(shared_path("flota_vocabs/xlnet-base-cased.txt"), "sentencepiece", mode="longest")


def test_sentencepiece_model_first_and_longest(shared_path):
    import sentencepiece as spm
    model = shared_path("space_models/unigram_default.model")
    sp = spm.SentencePieceProcessor(model_file=str(model))
    first = FlotaTokenizer(model, "sentencepiece", k=2, mode="first")
    longest = FlotaTokenizer(model, "sentencepiece", k=2, mode="longest")
    flota = FlotaTokenizer(model, "sentencepiece", k=2)
    vocab = {sp.id_to_piece(i) for i in range(sp.get_piece_size())}
    checked = 0
    for w in ["undesirability", "superbizarre", "americanize", "hyperparameterisation"]:
        full = sp.encode(w, out_type=str)
        if "\u2581" + w in vocab or w in vocab:
            continue
        checked += 1
        assert first.tokenize_word(w) == full[:2]
        top = sorted(range(len(full)), key=lambda i: -len(full[i].lstrip("\u2581")))[:2]
        assert longest.tokenize_word(w) == [full[i] for i in sorted(top)]
        assert all(p in vocab for p in flota.tokenize_word(w))
    assert checked >= 3


# --- vocabulary formats ---------------------------------------------------------------------------------------

def test_vocabulary_formats_agree(tmp_path, shared_path):
    tokens = [t for t in open(shared_path("flota_vocabs/bert-base-uncased.txt"), encoding="utf-8").read()
              .split("\n") if t]
    plain = tmp_path / "vocab.txt"
    plain.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    dict_txt = tmp_path / "dict.txt"
    write_fairseq_dict(tokens, str(dict_txt))
    enc = tmp_path / "encoder.json"
    enc.write_text(json.dumps({t: i for i, t in enumerate(tokens)}), encoding="utf-8")
    hf = tmp_path / "tokenizer.json"
    hf.write_text(json.dumps({"model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                                        "max_input_chars_per_word": 100,
                                        "vocab": {t: i for i, t in enumerate(tokens)}},
                              "added_tokens": [{"id": 0, "content": "[PAD]"}]}), encoding="utf-8")
    assert load_vocab(str(dict_txt)).kind == "fairseq"
    assert load_vocab(str(hf)).kind == "hf"
    text = "undesirable superconductivity in twisted bilayer graphene: a reappraisal"
    outputs = {}
    for src in (tokens, plain, dict_txt, enc, hf):
        outputs[str(src)[-12:]] = FlotaTokenizer(src, "auto", k=3).tokenize(text)
    assert len({tuple(v) for v in outputs.values()}) == 1, outputs
    # the fairseq dict lacks only the four tokens fairseq reserves (none of which BERT has)
    assert len(load_vocab(str(dict_txt)).tokens) == len(tokens)
    # a Unigram tokenizer.json ([piece, score] list)
    uni = tmp_path / "uni.json"
    uni.write_text(json.dumps({"model": {"type": "Unigram", "vocab": [["\u2581un", -1.0], ["desirable", -2.0]]}}),
                   encoding="utf-8")
    assert FlotaTokenizer(uni, "sentencepiece", k=2).tokenize_word("undesirable") == ["\u2581un", "desirable"]


def test_style_is_guessed(shared_path):
    for name, style in INVENTORIES:
        assert FlotaTokenizer(shared_path(f"flota_vocabs/{name}.txt"), "auto").style == style


def test_user_errors(tmp_path):
    with pytest.raises(UserError):
        FlotaTokenizer(str(tmp_path / "missing.txt"), "wordpiece")
    with pytest.raises(UserError):
        FlotaTokenizer(["a"], "bogus")
    with pytest.raises(UserError):
        FlotaTokenizer(["a"], "wordpiece", k=0)
    with pytest.raises(UserError):
        FlotaTokenizer(["a"], "wordpiece", mode="shortest")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(UserError):
        FlotaTokenizer(str(empty), "wordpiece")


# --- bad input ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,style", INVENTORIES)
def test_bad_input_never_crashes(shared_path, name, style):
    path = shared_path(f"flota_vocabs/{name}.txt")
    vocab = read_inventory(path)
    lines = ["", "   ", "\t", "a" * 10_000, "x" + "\u0301" * 50, "naïve café e\u0301", "Ω≈ç√∫ 日本語 العربية",
             "\x00\x7f\ufffd", "mixedΣcript日本word", "tab\tsep\u2028line\rret", "🙂🙃 emoji", "-" * 30,
             "z" * 9_999 + " short"]
    for byte_level in ([False, True] if style == "gpt2" else [False]):
        tok = FlotaTokenizer(path, style, k=3, byte_level=byte_level)
        enc = FlotaEncoder(tok)
        out = enc.encode_lines(lines)  # (how long a 10,000-character word takes is a benchmark, not a test)
        assert len(out) == len(lines)
        assert out[0] == "" and out[1] == "" and out[2] == ""
        for line in out:
            assert "\n" not in line and "\r" not in line
            for piece in line.split():
                assert piece in vocab
        assert tok.tokenize_word("") == []
        assert tok.decode(out[5]) is not None
    # a 10,000-character word is capped at 3 pieces of at most max_len characters
    assert len(FlotaTokenizer(path, style, k=3).tokenize_word("ab" * 5000)) <= 3


def test_byte_level_gpt2(shared_path):
    path = shared_path("flota_vocabs/gpt2.txt")
    vocab = read_inventory(path)
    assert to_byte_level("café") == "cafÃ©" and from_byte_level("cafÃ©") == "café"
    tok = FlotaTokenizer(path, "gpt2", k=3, byte_level=True)
    pieces = tok.tokenize_word("café")
    assert pieces and all(p in vocab for p in pieces)
    assert tok.decode(pieces) == "café"
    # the published method (default) looks the raw string up
    assert FlotaTokenizer(path, "gpt2", k=3).tokenize_word("\x7f") == []
    assert tok.tokenize_word("\x7f") == ["ġ"]


# --- decode ---------------------------------------------------------------------------------------------------

def test_detokenize_is_lossy_but_word_aligned():
    assert detokenize(["un", "desirable", "##ize", "results"], "wordpiece") == "un desirableize results"
    assert detokenize(["##x", "a", "##b"], "wordpiece") == "x ab"
    assert detokenize(["\u0120super", "con", "\u0120graphene"], "gpt2") == "supercon graphene"
    assert detokenize(["\u2581super", "con", "\u2581graphene", "."], "sentencepiece") == "supercon graphene."
    assert detokenize([], "wordpiece") == ""


def test_roundtrip_of_in_vocabulary_text(bert):
    text = "quantum phase transitions in twisted bilayer graphene"
    assert bert.decode(bert.encode(text)) == text


# --- whitespace noise -----------------------------------------------------------------------------------------

def test_whitespace_noise():
    text = "one two three four five six"
    assert inject_whitespace_noise(text, 0.0, random.Random(1)) == text
    assert inject_whitespace_noise(text, 1.0, random.Random(1)) == "onetwothreefourfivesix"
    assert inject_whitespace_noise("", 0.5, random.Random(1)) == ""
    assert inject_whitespace_noise("  a   b ", 0.0, random.Random(1)) == "a b"
    a = inject_whitespace_noise(text, 0.3, line_rng(5, text))
    assert a == inject_whitespace_noise(text, 0.3, line_rng(5, text))
    assert a.replace(" ", "") == text.replace(" ", "")
    # the drop rate is p (20,000 gaps)
    rng = random.Random(0)
    words = " ".join(f"w{i}" for i in range(20_001))
    noisy = inject_whitespace_noise(words, 0.3, rng)
    dropped = 20_000 - noisy.count(" ")
    assert 0.28 < dropped / 20_000 < 0.32


def test_encoder_noise_is_independent_of_chunking(bert):
    lines = [f"the {i} quantum gravity of superconducting bilayer graphene" for i in range(50)]
    enc = FlotaEncoder(bert, noise_p=0.3, noise_seed=11)
    whole = enc.encode_lines(lines)
    parts = enc.encode_lines(lines[:17]) + enc.encode_lines(lines[17:])
    assert whole == parts
    assert whole != FlotaEncoder(bert).encode_lines(lines)
    assert whole != FlotaEncoder(bert, noise_p=0.3, noise_seed=12).encode_lines(lines)


# --- the encode CLI -------------------------------------------------------------------------------------------

def test_encode_cli(tmp_path, shared_path, run_cli):
    vocab = shared_path("flota_vocabs/bert-base-uncased.txt")
    titles = arxiv_titles(shared_path("flota_arxiv"))[:300]
    lines = titles[:150] + ["", "   ", "a" * 3000, "日本語 naïve"] + titles[150:]
    src = tmp_path / "in.txt"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    run_cli(["python", "-m", "preprocess.encode", "--scheme", "flota", "--flota-vocab", vocab,
             "--flota-style", "wordpiece", "--flota-k", "2", "--inputs", src, "--outputs", out,
             "--workers", "2", "--chunk-size", "40", "--quiet"])
    got = out.read_text(encoding="utf-8").split("\n")
    assert got[-1] == "" and len(got) - 1 == len(lines)
    tok = FlotaTokenizer(vocab, "wordpiece", k=2)
    assert got[:-1] == [" ".join(tok.tokenize(line)) for line in lines]
    # noise through the CLI: deterministic, and different from the clean encoding
    noisy = tmp_path / "noisy.txt"
    run_cli(["python", "-m", "preprocess.encode", "--scheme", "flota", "--flota-vocab", vocab,
             "--flota-k", "2", "--noise-p", "0.3", "--noise-seed", "3", "--inputs", src, "--outputs", noisy,
             "--quiet"])
    assert len(noisy.read_text(encoding="utf-8").split("\n")) == len(got)
    assert noisy.read_text(encoding="utf-8") != out.read_text(encoding="utf-8")
    # a user mistake is one line on stderr and exit status 2
    bad = run_cli(["python", "-m", "preprocess.encode", "--scheme", "flota", "--flota-vocab", tmp_path / "nope",
                   "--inputs", src, "--outputs", tmp_path / "x.txt", "--quiet"], check=False)
    assert bad.returncode == 2 and bad.stderr.strip().startswith("error:") and len(bad.stderr.strip().split("\n")) == 1


# --- section 3 metrics and Table 3 ----------------------------------------------------------------------------

def test_coverage_example_of_section3(shared_path):
    """Section 3: for undesirable and k = 3, FIRST and LONGEST cover un (C = 0.5), FLOTA un and desirable (C = 1)."""
    from preprocess.evaluate.flota import coverage, pieces_with_spans
    path = shared_path("flota_vocabs/bert-base-uncased.txt")
    morphs = ["un", "desirable"]
    for mode, expected in (("first", 0.5), ("longest", 0.5), ("flota", 1.0)):
        tok = FlotaTokenizer(path, "wordpiece", k=3, mode=mode)
        spans = pieces_with_spans(tok, "undesirable", 3)
        # the spans describe exactly what the tokenizer returns
        returned = tok.tokenize_word("undesirable")
        assert [p for _, _, p in spans] == [t[2:] if t.startswith("##") else t for t in returned]
        assert coverage([(a, b) for a, b, _ in spans], morphs) == expected


def test_gold_reader_and_stems(tmp_path):
    from preprocess.evaluate.flota import read_two_morph_gold, select_words, stems_of
    gold = tmp_path / "g.tsv"
    gold.write_text("undesirable\tun @@desirable\t010\nkindness\tkind @@ness\t010\nbookshelf\tbook @@shelf\t001\n"
                    "enthrallments\ten @@thrall @@ment @@s\t110\nran\trun @@ed\t100\nbad line\n\n", encoding="utf-8")
    rows = read_two_morph_gold(str(gold))
    assert [w for w, _, _ in rows] == ["undesirable", "kindness", "bookshelf"]  # ran is not concatenative
    assert stems_of(["un", "desirable"], "010") == {"desirable"}
    assert stems_of(["kind", "ness"], "010") == {"kind"}
    assert stems_of(["book", "shelf"], "001") == {"book", "shelf"}
    vocab = frozenset(["un", "desirable", "kind", "##ness", "book", "shelf", "bookshelf"])
    assert [w for w, _, _ in select_words(rows, vocab, "##")] == ["undesirable", "kindness"]


def test_evaluate_cli_reproduces_table3(shared_path, run_cli, tmp_path):
    """Table 3 (ArXiv-L physics): BERT ST 12.9, FLOTA 8.3 10.5 11.4 11.6; GPT-2 8.3 10.7 11.5 11.8;
    XLNet 8.3 10.9 11.9 12.2; and the section 3 claims: FLOTA covers about 99% of the morphs at k = 2."""
    shared_path("morph_gold/eng.word.dev.tsv")
    out = tmp_path / "r.json"
    run_cli(["python", "-m", "preprocess.evaluate.flota", "--data", shared_path("."), "--json", out])
    res = json.loads(out.read_text())
    paper = {"BERT": [8.3, 10.5, 11.4, 11.6], "GPT-2": [8.3, 10.7, 11.5, 11.8], "XLNet": [8.3, 10.9, 11.9, 12.2]}
    assert round(res["lengths"]["BERT"]["ST"], 1) == 12.9
    for model, values in paper.items():
        assert [round(res["lengths"][model][f"k={k}"], 1) for k in (1, 2, 3, 4)] == values
    m = res["morphology"]
    for model in ("BERT", "GPT-2", "XLNet"):
        assert m[f"{model}/flota"]["C2"] > 0.98
    assert m["BERT/flota"]["C2"] > m["BERT/first"]["C2"] and m["BERT/flota"]["C2"] > m["BERT/longest"]["C2"]
    assert m["BERT/flota"]["M"] > m["BERT/first"]["M"] == m["BERT/longest"]["M"]  # M of FIRST = LONGEST (sec. 3)
    assert m["BERT/flota"]["R"] > m["BERT/first"]["R"]
    assert m["BERT/flota"]["tokens_inf"] < m["BERT/first"]["tokens_inf"]


# --- normalisation follows the vocabulary ----------------------------------------------------------------------

def test_uncased_wordpiece_strips_accents_like_bert():
    """BERT's uncased tokenizer lower-cases and strips accents (NFD, nonspacing marks dropped); its vocabulary has
    no accented letter, so FLOTA must do the same or lose the letter (before: café -> caf)."""
    uncased = ["[PAD]", "[UNK]", "cafe", "caf", "na", "##ive", "manner", "m", "##nne", "##r", "resume", "r",
               "##sum", "##e", "sao", "s", "##o"]
    tok = FlotaTokenizer(uncased, "wordpiece", k=3)
    assert tok.lowercase and tok.strip_accents
    assert tok.tokenize("Café") == ["cafe"]
    assert tok.tokenize("cafe\u0301") == ["cafe"]          # decomposed input too
    assert tok.tokenize("Naïve Männer résumé São") == ["na", "##ive", "manner", "resume", "sao"]
    assert tok.tokenize("plain words cafe") == tok.tokenize("plain words café")
    # the user's explicit choice wins: no lower-casing, no accent stripping
    kept = FlotaTokenizer(uncased, "wordpiece", k=3, lowercase=False)
    assert not kept.strip_accents and kept.tokenize("café") == ["caf"]


def test_cased_vocabularies_keep_accents():
    cased = ["[UNK]", "Paris", "café", "caf", "cafe", "##é", "Mä", "##nner", "M", "##a"]
    tok = FlotaTokenizer(cased, "wordpiece", k=3)
    assert not tok.lowercase and not tok.strip_accents
    assert tok.tokenize("café Männer") == ["café", "Mä", "##nner"]
    for style, tokens in (("gpt2", ["Ġcafé", "Ġcafe", "é", "Ġcaf"]), ("sentencepiece", ["▁café", "▁cafe", "▁caf"])):
        assert FlotaTokenizer(tokens, style, k=3).tokenize("café") == [tokens[0]]


def test_bert_uncased_inventory_on_accented_words(shared_path, run_cli, tmp_path):
    path = shared_path("flota_vocabs/bert-base-uncased.txt")
    tok = FlotaTokenizer(path, "wordpiece", k=3)
    assert tok.tokenize("café Männer résumé") == ["cafe", "manner", "resume"]
    # what BERT's uncased tokenizer gives for these words (whole words of its vocabulary)
    src = tmp_path / "in.txt"
    src.write_text("Ein café für Männer\nthe résumé\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    run_cli(["python", "-m", "preprocess.encode", "--scheme", "flota", "--flota-vocab", path, "--inputs", src,
             "--outputs", out, "--quiet"])
    assert out.read_text(encoding="utf-8") == "ein cafe fur manner\nthe resume\n"
    # a cased inventory keeps them
    xlnet = FlotaTokenizer(shared_path("flota_vocabs/xlnet-base-cased.txt"), "sentencepiece", k=3)
    assert not xlnet.strip_accents and xlnet.tokenize("café") != xlnet.tokenize("cafe")
