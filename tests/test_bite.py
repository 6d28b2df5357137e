"""BITE (Tan et al. 2020): algorithm, faithfulness to the published algorithm, reversibility, bad input, CLI."""
from __future__ import annotations

import gzip
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from preprocess.common import REPO
from preprocess.schemes import bite
from preprocess.schemes.bite import (
    ESCAPE,
    GLUE,
    INFLECTION_SYMBOLS,
    SINGLE_CHAR_SYMBOLS,
    SPACE_BEFORE_MARK,
    BiteTokenizer,
    default_attached,
)
from preprocess.schemes.bite import text as bite_text


def _load_bench():
    spec = importlib.util.spec_from_file_location("bench_bite", REPO / "bench" / "bite.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _lines(path: Path, n: int | None = None):
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = [l.rstrip("\n") for l in fh]
    return lines[:n] if n else lines


@pytest.fixture(scope="module")
def moses():
    return BiteTokenizer("moses")


@pytest.fixture(scope="module")
def ws():
    return BiteTokenizer("whitespace")


def _follows(tokens, base, symbol):
    return any(tokens[i] == base and tokens[i + 1] == symbol for i in range(len(tokens) - 1))


# ---- symbols -------------------------------------------------------------------------------------------------
def test_symbol_inventories():
    assert INFLECTION_SYMBOLS == ("[JJR]", "[JJS]", "[NNS]", "[NNPS]", "[RBR]", "[RBS]", "[VBD]", "[VBG]", "[VBN]",
                                  "[VBP]", "[VBZ]")
    assert [ord(c) for c in SINGLE_CHAR_SYMBOLS] == list(range(0x266E, 0x2679))
    import unicodedata
    for ch in SINGLE_CHAR_SYMBOLS + (ESCAPE, GLUE, SPACE_BEFORE_MARK):   # must survive SentencePiece's NFKC and fairseq's split
        assert unicodedata.normalize("NFKC", ch) == ch and not ch.isspace()


# ---- the paper's examples ------------------------------------------------------------------------------------
def test_paper_took_taking_taken_share_the_base(ws):
    # section 3.1: BASE(took) = BASE(taking) = BASE(taken) = take
    assert _follows(ws.tokenize("He took the book ."), "take", "[VBD]")
    assert _follows(ws.tokenize("He is taking the book ."), "take", "[VBG]")
    assert _follows(ws.tokenize("He has taken the book ."), "take", "[VBN]")


def test_paper_micro_analysis_words(ws):
    # section 5.3: climbs, dreaming, tumbled -> base form + inflection symbol
    assert _follows(ws.tokenize("The boy climbs the tree ."), "climb", "[VBZ]")
    assert _follows(ws.tokenize("She is dreaming of home ."), "dream", "[VBG]")
    assert _follows(ws.tokenize("The rocks tumbled down ."), "tumble", "[VBD]")
    assert _follows(ws.tokenize("The rocks tumbled down ."), "rock", "[NNS]")


def test_base_tags_and_function_words_are_kept(ws):
    toks = ws.tokenize("A man in a blue shirt is standing on a ladder")
    # 'man', 'shirt', 'ladder' (NN), 'blue' (JJ) are base forms: kept unsplit; 'is' -> be [VBZ]
    for w in ("A", "man", "in", "a", "blue", "shirt", "on", "ladder"):
        assert w in toks
    assert _follows(toks, "be", "[VBZ]") and _follows(toks, "stand", "[VBG]")
    assert toks.count("[VBZ]") == 1


def test_adverbs_are_never_split(ws):
    # RBR/RBS are in the symbol inventory, but adverbs are not NOUN/VERB/ADJ, so the algorithm never emits them
    toks = ws.tokenize("He ran faster and worked hardest of all")
    assert "[RBR]" not in toks and "[RBS]" not in toks


def test_single_char_symbols():
    b = BiteTokenizer("whitespace", single_char=True)
    toks = b.tokenize("The dogs barked")
    assert toks == ["The", "dog", SINGLE_CHAR_SYMBOLS[2], "bark", SINGLE_CHAR_SYMBOLS[6]]
    assert b.detokenize(toks) == "The dogs barked"


# ---- faithfulness: whitespace pretokenizer == the published algorithm -----------------------------------------
def test_whitespace_is_token_for_token_the_published_algorithm(shared_path, ws):
    ref = _load_bench().ReferenceBite()
    lines = _lines(shared_path("multi30k/val.en.gz")) + _lines(shared_path("multi30k/test_2016_flickr.en.gz"))
    assert len(lines) == 2014
    ours = ws.tokenize_batch(lines)
    diff = [l for l, o in zip(lines, ours) if o != ref.tokenize_words(l.split())]
    assert diff == []


@pytest.mark.parametrize("loop", ["compiled", "numpy"])
def test_batched_tagger_equals_nltk(shared_path, moses, loop):
    """Both batch paths (preprocess/tagging/perceptron_fast.py compiled; numpy without a C compiler) give NLTK's tags."""
    from preprocess.tagging import NltkTagger
    from preprocess.tagging.perceptron_fast import batch_kernel
    tagger = NltkTagger()
    if loop == "numpy":
        tagger._kernel = None
    elif batch_kernel() is None:
        pytest.skip("preprocess.tagging._perceptron_fast is not built (setup.py compiles it with Cython)")
    assert (tagger._kernel is not None) == (loop == "compiled")
    sents = [moses.pretokenize(l) for l in _lines(shared_path("multi30k/val.de.gz"), 300)]  # German: odd input
    sents += [moses.pretokenize(l) for l in _lines(shared_path("multi30k/val.en.gz"))]
    sents += [[], ["x"], ["2014", "-hyphen", "pre-fix", "123", ""], [], ["\u00e9t\u00e9", "-", "--", "."]]
    assert tagger.tag_sents(sents) == [tagger.reference_tag(s) for s in sents]
    tagger.batch_size = 7   # several batches, one ending in an empty sentence
    assert tagger.tag_sents(sents[-40:]) == [tagger.reference_tag(s) for s in sents[-40:]]
    # tag_words (what BITE's encode_lines reads): the same tags in one list, a word with a space (NLTK tags that
    # batch) and fewer sentences than a batch included
    odd = sents[-40:-20] + [["a b", "c"]] + sents[-20:]
    for part in (odd, odd[:3]):
        assert tagger.tag_words(part) == [t for s in part for t in tagger.reference_tag(s)]


def test_batched_tagger_near_ties_take_nltks_order(shared_path, moses):
    """The batch sums the feature rows in another order than NLTK and keeps its best class only when it leads by
    more than the rounding bound; with the bound infinite every open position goes through NLTK's order."""
    from preprocess.tagging import NltkTagger
    exact = NltkTagger()
    exact._margin = exact._margin32 = float("inf")
    exact._kernel = None   # (the compiled loop adds in NLTK's order: no bound)
    sents = [moses.pretokenize(l) for l in _lines(shared_path("multi30k/val.de.gz"), 100)]
    sents += [moses.pretokenize(l) for l in _lines(shared_path("multi30k/val.en.gz"), 300)]
    assert len(sents) >= exact.SMALL_BATCH
    assert exact.tag_sents(sents) == [exact.reference_tag(s) for s in sents]


def test_one_sentence_tagging_equals_nltk(shared_path, moses):
    """tag() of one sentence takes the memoised one-by-one path, not the batch: both must be NLTK's tags."""
    from preprocess.tagging import NltkTagger
    tagger = NltkTagger()
    sents = [moses.pretokenize(l) for l in _lines(shared_path("multi30k/val.de.gz"), 200)]
    sents += [moses.pretokenize(l) for l in _lines(shared_path("multi30k/val.en.gz"))] * 2   # 2nd: memo hits
    sents += [["x"], ["2014", "-hyphen", "pre-fix", "123", ""], ["a b", "c"]]
    assert len(tagger.tag_sents(sents[:3])) == 3 and tagger.SMALL_BATCH > 3
    assert [tagger.tag(s) for s in sents] == [tagger.reference_tag(s) for s in sents]
    assert tagger._memo   # the one-by-one path ran
    exact = NltkTagger()   # every prediction through NLTK's summation order (the path taken on near ties)
    exact._margin = float("inf")
    assert [exact.tag(s) for s in sents[-300:]] == [tagger.reference_tag(s) for s in sents[-300:]]


MOSES_EDGE_CASES = ["plan A.", "Mr.", "see Mr.", "Dr. Who", "No.", "page No.", "A man, a plan, a canal.",
                    "Stop!", "why?", "Hello, world!", "a,b", "end .", "two  spaces", "x", "I", "St.", "etc.",
                    "Jan.", "e.g.", "U.S.", "it's", "rock-n-roll", "A.", "a.",
                    # apostrophes, hyphens and digits (the fast path's wider words, and what it leaves to Moses)
                    "McDonald's.", "he's!", "he's.", "don't", "don't.", "I'm here, you're there.", "O'Neil's",
                    "rock'n'roll", "rock'n", "'tis", "it 's", "'s", "x'", "a'-b", "1990's", "3D's", "x-ray's.",
                    "5-year-old boys, 3 dogs.", "A 30 somethings man.", "in 2010.", "2.", "30, 40, 50!", "3,000",
                    "3, 000", "No. 5", "page No. 5", "Art.", "art.", "t-shirt.", "-x", "x-", "a--b", "a- b",
                    "U.S.A.", "We're,", "A.'s", "Mr.'s", "x's-y's", "DON'T.", "WE'RE", "it's, 'tis"]


def test_plain_sentence_fast_path_equals_sacremoses(shared_path, moses):
    """Plain sentences skip sacremoses: on every Multi30k English sentence and the edge cases, the words are
    sacremoses' words."""
    from sacremoses import MosesTokenizer

    from preprocess.schemes.bite.text import PLAIN_SENTENCE, is_plain_sentence
    ref = MosesTokenizer(lang="en")
    lines = MOSES_EDGE_CASES + [l for name in ("train", "val", "test_2016_flickr")
                                for l in _lines(shared_path(f"multi30k/{name}.en.gz"))]
    texts = [" ".join(l.split()) for l in lines]
    plain = [t for t in texts if t and PLAIN_SENTENCE.fullmatch(t)]
    assert [t for t in texts if t and is_plain_sentence(t)] == plain   # (the quicker test decides the same)
    assert len(plain) > 0.98 * len(texts)   # the fast path is the common case
    assert [moses.pretokenize(t) for t in texts] == [ref.tokenize(t, escape=False) if t else [] for t in texts]
    # where the fast path says so, their spacing is what the default rule gives (BITE writes no spacing marks)
    default = [w for w, d in map(moses._split, plain) if d]
    assert len(default) > 0.97 * len(texts)
    assert all(bite_text.align_tokens(w, t) == default_attached(w) for t in plain for w, d in [moses._split(t)] if d)
    assert not moses._split("I don't know.")[1]   # ('t: a mark)


def test_lemmas_are_lemminflects(shared_path):
    """bite.get_lemmas is lemminflect's getLemma (the same tables and rules, without its deep copies): on every
    word of Multi30k's English in three capitalisations, words of lemminflect's override table, and odd strings."""
    import lemminflect
    from lemminflect.core.Lemmatizer import Lemmatizer
    if lemminflect.__version__ != bite.LEMMINFLECT_MATCHED:
        pytest.skip(f"lemminflect {lemminflect.__version__}: get_lemmas calls getLemma itself")
    assert bite_text.load_lemminflect() is not None
    words = {w.strip(".,!?\"'();:") for name in ("val", "test_2016_flickr")
             for l in _lines(shared_path(f"multi30k/{name}.en.gz")) for w in l.split()}
    words |= {w.upper() for w in words} | {w.capitalize() for w in words}
    words |= set(list(Lemmatizer()._getOverridesDict())[:500])
    words |= {"", "'s", "ß", "\u0130stanbul", "ﬁles", "Ph.D.s", "x-rays", "1990s", "DOGS", "dOGS", "[VBD]", "oxen"}

    def ref(w, upos):
        try:
            return lemminflect.getLemma(w, upos=upos)
        except (IndexError, KeyError, ValueError) as e:
            return type(e)

    def ours(w, upos):
        try:
            return bite.get_lemmas(w, upos)
        except (IndexError, KeyError, ValueError) as e:
            return type(e)

    pairs = [(w, u) for w in sorted(words) for u in ("NOUN", "VERB", "ADJ")]
    assert len(pairs) > 15000
    assert [ours(w, u) for w, u in pairs] == [ref(w, u) for w, u in pairs]


def test_universal_table_matches_nltk_mapping(moses):
    from nltk.tag.mapping import map_tag

    from preprocess.tagging import universal
    for tag in moses.tagger._classes:
        assert universal(tag) == map_tag("en-ptb", "universal", tag), tag


# ---- reversibility ---------------------------------------------------------------------------------------------
def test_reconstruction_rate_on_multi30k_val(shared_path, moses):
    lines = [" ".join(l.split()) for l in _lines(shared_path("multi30k/val.en.gz"))]
    toks = moses.tokenize_batch(lines)
    ok = sum(moses.detokenize(t) == l for l, t in zip(lines, toks))
    rate = ok / len(lines)
    print(f"reconstruction rate (moses, nltk): {ok}/{len(lines)} = {rate:.4f}")
    assert rate >= 0.95   # measured 0.9734; failures: overabundance / lemmatiser and tagger errors (README, BITE section)


@pytest.mark.parametrize("sentence", [
    "The dogs were barking at the Americans' houses.",
    "Two men are loading cotton onto trucks",
    "I am here; they were there (and we are here).",
    "A little-league player, wearing a white #19 jersey, hits the ball!",
    'She said "hello" to the USA team , didn\'t she ?',
    "NASA'S ENGINEERS WERE TESTING ROCKETS",
])
def test_roundtrip_keeps_words_case_and_spacing(moses, sentence):
    assert moses.detokenize(moses.tokenize(sentence)) == sentence


def test_capitalisation_restored(ws):
    assert ws.detokenize(ws.tokenize("Dogs chased Americans")) == "Dogs chased Americans"
    assert ws.detokenize(["DOG", "[NNS]", "Run", "[VBG]", "NASA", "[NNPS]", "x", "[VBD]"]) == "DOGS Running NASAS xed"


def test_be_overabundance_resolved_by_subject(ws):
    assert ws.detokenize(["I", "be", "[VBP]", "here"]) == "I am here"
    assert ws.detokenize(["They", "be", "[VBP]", "here"]) == "They are here"
    assert ws.detokenize(["The", "dog", "[NNS]", "be", "[VBD]", "here"]) == "The dogs were here"
    assert ws.detokenize(["The", "dog", "be", "[VBD]", "here"]) == "The dog was here"


def test_spacing_marks_only_where_the_default_rule_is_wrong(moses):
    toks = moses.tokenize("a white #19 jersey , ok")
    assert toks == ["a", "white", "#", GLUE + "19", "jersey", SPACE_BEFORE_MARK + ",", "ok"]
    assert default_attached(["He", "said", '"', "hi", '"', "."]) == [False, False, False, True, True, True]
    # unusual spacing with no glued token at all still round-trips (marks say "space here")
    assert moses.tokenize("a , b") == ["a", SPACE_BEFORE_MARK + ",", "b"]
    assert moses.detokenize(moses.tokenize('x ( y ) " q " ok')) == 'x ( y ) " q " ok'


# ---- escaping --------------------------------------------------------------------------------------------------
RAW_SYMBOL_LINES = [
    "[VBD] [NNS] x[VBZ] " + " ".join(SINGLE_CHAR_SYMBOLS),
    f"{ESCAPE} {ESCAPE}{ESCAPE}x {GLUE} {SPACE_BEFORE_MARK}y walked[VBD] \u266e\u2670",
]


@pytest.mark.parametrize("pretok", ["whitespace", "moses", "bert"])
@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize("line", RAW_SYMBOL_LINES)
def test_raw_symbols_are_escaped_and_restored(pretok, single, line):
    b = BiteTokenizer(pretok, single_char=single)
    toks = b.tokenize(line)
    # every bare symbol in the output follows a base produced by BITE: none comes from the raw text
    n_symbols = sum(t in bite.TAG_OF_SYMBOL for t in toks)
    words = b.pretokenize(line)
    tags = b.tagger.tag(words)
    expected = sum(len(b._encode_word(w, t)) == 2 for w, t in zip(words, tags))
    assert n_symbols == expected
    assert b.detokenize(toks) == " ".join(line.split())


@pytest.mark.parametrize("pretok", ["moses", "whitespace"])
def test_decoding_odd_model_output_never_crashes(pretok):
    b = BiteTokenizer(pretok)
    odd = [GLUE + GLUE + "x", SPACE_BEFORE_MARK, GLUE, ESCAPE, "[VBD][NNS]", ESCAPE + ESCAPE, SPACE_BEFORE_MARK + ESCAPE + "[VBD]",
           "[VBD]x", "x[VBD]y", "\u266e\u266e", "<unk>", "", "be", "[VBD]", "I", "be", "[VBP]"]
    out = b.detokenize(odd)
    assert isinstance(out, str) and "[VBD]" in out   # only the escaped literal remains
    assert not any(c in out for c in SINGLE_CHAR_SYMBOLS)


def test_symbols_glued_to_words_on_decode_are_removed(ws):
    # what a model may emit after subword decoding: a symbol with no space before it
    assert ws.detokenize("He walk[VBD] home".split()) == "He walked home"
    assert ws.detokenize(["[VBD]", "dog", "[NNS]", "[NNS]", "\u2674"]) == "dogs"


# ---- bad input -------------------------------------------------------------------------------------------------
BAD_LINES = ["", "   ", "\t", "Die Kinder spielen im Garten .", "12 345 3.14 1,000,000 2014",
             "see https://example.com/a?b=c&d=e#f now", "emoji \U0001F600\U0001F44D\u200d ok", "x\u2028y\u0085z\r",
             "\u0000 \u001f control", "اللغة العربية", "日本語のテキスト", "-- ... ??? !!! ()",
             " ".join(["words"] * 5000), "a" * 10000]


@pytest.mark.parametrize("pretok", ["moses", "whitespace", "bert"])
def test_bad_input_one_line_per_line(pretok):
    b = BiteTokenizer(pretok)
    out = b.encode_lines(BAD_LINES)
    assert len(out) == len(BAD_LINES)
    assert out[0] == out[1] == out[2] == ""
    for line in out:
        assert "\n" not in line and "\r" not in line and "  " not in line and line == line.strip()
    back = b.decode_lines(out)
    assert len(back) == len(BAD_LINES)


def test_hanta_tagger_maps_claws_to_ptb():
    from preprocess.tagging import HantaTagger, c5_to_ptb
    assert c5_to_ptb("NN2") == "NNS" and c5_to_ptb("VVD") == "VBD" and c5_to_ptb("VBB") == "VBP"
    assert c5_to_ptb("AJS") == "JJS" and c5_to_ptb("VHZ") == "VBZ" and c5_to_ptb("AJ0-NN1") == "JJ"
    tags = HantaTagger().tag("The dogs were running to bigger houses".split())
    assert tags[1] == "NNS" and tags[2] == "VBD" and tags[3] == "VBG" and tags[5] == "JJR" and tags[6] == "NNS"
    sents = [["The", "dogs", "ran"], [], ["Bigger", "houses", "."]]
    assert HantaTagger().tag_words(sents) == [t for s in sents for t in HantaTagger().tag(s)]


def test_hanta_failure_is_counted_and_reported():
    """A sentence HanTa fails on keeps its words as they are (tags UNC), and the encoder reports how many, as a
    note counter, instead of swallowing the failure."""
    enc = bite.BiteLineEncoder("whitespace", "hanta", False)

    class Failing:
        def tag_sent(self, words, taglevel=0):
            raise RuntimeError("HanTa failed")

    real = enc.bite.tagger._tagger
    assert enc.encode_lines(["The dogs were running"]) == ["The dog [NNS] be [VBD] run [VBG]"]
    assert set(enc.counters().values()) == {0}
    enc.bite.tagger._tagger = Failing()
    try:
        assert enc.encode_lines(["The cats were sleeping", "Birds sang loudly"]) == \
            ["The cats were sleeping", "Birds sang loudly"]
    finally:
        enc.bite.tagger._tagger = real
    counts = enc.counters()
    assert list(counts.values()) == [2] and "tagger failed" in next(iter(counts)), counts


def test_hanta_needs_no_nltk_data(tmp_path):
    code = ("from preprocess.schemes.bite import BiteTokenizer\n"
            "b = BiteTokenizer('whitespace', tagger='hanta')\n"
            "t = b.tokenize('The dogs were running')\n"
            "print(' '.join(t)); print(b.detokenize(t))\n")
    env = dict(os.environ, NLTK_DATA=str(tmp_path), PYTHONPATH=str(REPO), HOME=str(tmp_path))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["The dog [NNS] be [VBD] run [VBG]", "The dogs were running"]


def test_nltk_tagger_missing_data_is_a_user_error(tmp_path):
    # the package also looks beside the repository (../shared/data/nltk_data) and in the venv: the child process
    # hides those places itself, and the test skips where NLTK's own default folders hold the data
    code = ("import argparse, os\nimport preprocess.tagging as t\nt._package_data_dirs = lambda: []\n"
            "if any(os.path.isdir(os.path.join(d, 'taggers')) for d in t._nltk_data_dirs()):\n"
            "    print('SKIP'); raise SystemExit\n"
            "from preprocess.schemes.bite import make_encoder\nfrom preprocess.common import UserError\n"
            "try:\n    make_encoder(argparse.Namespace(bite_pretokenizer='moses', bite_tagger='nltk', bite_single_char=False,"
            " subword_model=None))\nexcept UserError as e:\n    print('USERERROR', e)\n")
    env = dict(os.environ, NLTK_DATA=str(tmp_path), PYTHONPATH=str(REPO), HOME=str(tmp_path))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    if p.stdout.startswith("SKIP"):
        pytest.skip("NLTK tagger data is in one of NLTK's default folders on this machine")
    assert "USERERROR" in p.stdout, p.stdout + p.stderr



def test_nltk_model_read_without_nltk_is_nltks_model(moses):
    """The tagger reads NLTK's JSON files itself (importing NLTK costs about 2 s): the same weights, tag
    dictionary, classes, boundary symbols and word normalisation as NLTK's PerceptronTagger."""
    from nltk.tag.perceptron import PerceptronTagger

    from preprocess.tagging import NltkTagger, _load_perceptron
    nltk_tagger = PerceptronTagger()
    weights, tagdict, classes = _load_perceptron()
    assert weights == nltk_tagger.model.weights and tagdict == nltk_tagger.tagdict
    assert set(classes) == nltk_tagger.classes
    assert (NltkTagger.START, NltkTagger.END) == (nltk_tagger.START, nltk_tagger.END)
    words = ["", "-", "-x", "x-", "pre-fix", "2014", "20145", "123", "1st", "٣٤", "1234x", "²", "Abc", "ÄÖ", "İ",
             "ß", "MAN", "a b", "3-4"]
    assert [NltkTagger._normalize(w) for w in words] == [nltk_tagger.normalize(w) for w in words]


def test_bite_encoding_does_not_import_nltk(tmp_path, shared_path):
    code = ("import sys\nfrom preprocess.schemes.bite import BiteTokenizer\n"
            "print(' '.join(BiteTokenizer('moses', 'nltk').tokenize('The dogs were running.')))\n"
            "print('nltk' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["The dog [NNS] be [VBD] run [VBG] .", "False"]

# ---- preprocess.encode ----------------------------------------------------------------------------------------
def test_encode_cli_order_and_workers(tmp_path, shared_path, run_cli, moses):
    src = tmp_path / "in.en"
    lines = _lines(shared_path("multi30k/val.en.gz"), 300) + BAD_LINES[:6]
    src.write_text("\n".join(l.replace("\u2028", " ").replace("\u0085", " ").replace("\r", " ") for l in lines)
                   + "\n", encoding="utf-8")
    outs = []
    for w in (1, 2):
        out = tmp_path / f"out{w}"
        run_cli(["python", "-m", "preprocess.encode", "--scheme", "bite", "--inputs", src, "--outputs", out,
                 "--workers", w, "--chunk-size", 50, "--quiet"])
        outs.append(out.read_text(encoding="utf-8"))
    assert outs[0] == outs[1]
    got = outs[0].split("\n")[:-1]
    assert len(got) == len(lines)
    assert got[:300] == moses.encode_lines(lines[:300])


def test_encode_cli_missing_subword_model(tmp_path, run_cli):
    src = tmp_path / "in.en"
    src.write_text("a dog\n", encoding="utf-8")
    p = run_cli(["python", "-m", "preprocess.encode", "--scheme", "bite", "--subword-model", tmp_path / "no.model",
                 "--inputs", src, "--outputs", tmp_path / "o"], check=False)
    assert p.returncode == 2 and p.stderr.startswith("error:")


def test_bite_plus_sentencepiece_one_pass(tmp_path, shared_path):
    import sentencepiece as spm
    lines = _lines(shared_path("multi30k/train.en.gz"), 3000)
    b = BiteTokenizer("moses")
    (tmp_path / "bite.txt").write_text("\n".join(b.encode_lines(lines)) + "\n", encoding="utf-8")
    bite.train_subword_model([str(tmp_path / "bite.txt")], str(tmp_path / "sp"), vocab_size=800, num_threads=1)
    e = bite.BiteLineEncoder("moses", "nltk", False, str(tmp_path / "sp.model"))
    out = e.encode_lines(lines[:50])
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "sp.model"))
    for raw, pieces in zip(lines[:50], out):
        # each inflection symbol is exactly one piece, and decoding gives BITE's subword text, which decodes
        # to what BITE's word form decodes to
        tokens = b.tokenize(raw)
        assert pieces.split().count("[NNS]") == tokens.count("[NNS]")
        assert sp.decode(pieces.split()) == b.subword_text(tokens)
        assert b.detokenize(sp.decode(pieces.split()).split()) == b.detokenize(tokens)


# ---- section 5 metrics ---------------------------------------------------------------------------------------
def test_coverage_by_hand():
    from preprocess.evaluate.bite import coverage, word_coverage
    assert coverage([["a", "a", "b"], ["c"]], [1, 2, 3]) == {1: 0.5, 2: 0.75, 3: 1.0}
    # words: ("a",) ("b","[NNS]") ("a",) ; symbol counts a:2, b:1, [NNS]:1 -> ranks a<b<[NNS] (ties by first seen)
    groups = [[("a",), ("b", "[NNS]")], [("a",)]]
    assert word_coverage(groups, [1, 2, 3]) == {1: 2 / 3, 2: 2 / 3, 3: 1.0}


def test_symbol_complexity_eq1_and_eq2():
    from preprocess.evaluate.bite import symbol_complexity
    ids = [[5, 0, 0], [7], [0]]   # unk id 0
    # eq. 1: sum |S_i| + u_i = (3 + 2) + (1 + 0) + (1 + 1) = 8 ; eq. 2 with lambda = 2 is the same
    assert symbol_complexity(ids, 0, 2.0) == (8.0, 3)
    # lambda = 1: unknown symbols cost like known ones -> total length 5 ; lambda = 0: only known symbols -> 2
    assert symbol_complexity(ids, 0, 1.0) == (5.0, 3)
    assert symbol_complexity(ids, 0, 0.0) == (2.0, 3)


def test_metrics_cli(shared_path, run_cli, tmp_path):
    import json
    val = shared_path("multi30k/val.en.gz")
    r = json.loads(run_cli(["python", "-m", "preprocess.evaluate.bite", "coverage", "--input", val,
                            "--sizes", "100", "1000", "--json"]).stdout)
    # BITE folds inflected forms into their bases: fewer types, higher coverage at small N
    assert r["types_bite"] < r["types_unencoded"]
    assert r["coverage_bite"]["100"] > r["coverage_unencoded"]["100"]
    r = json.loads(run_cli(["python", "-m", "preprocess.evaluate.bite", "similarity", "--input", val, "--lines", "200",
                            "--seed", "1", "--json"]).stdout)
    assert r["sentences_changed"] > 100 and r["similarity_bite"] > r["similarity_unencoded"]
    src = tmp_path / "bad.txt"
    src.write_text("\n".join(BAD_LINES[:12]) + "\n", encoding="utf-8")
    run_cli(["python", "-m", "preprocess.evaluate.bite", "perturb", "--input", src, "--output", tmp_path / "o.txt"])
    assert len((tmp_path / "o.txt").read_text(encoding="utf-8").split("\n")) - 1 == \
        len(src.read_text(encoding="utf-8").split("\n")) - 1
    p = run_cli(["python", "-m", "preprocess.evaluate.bite", "complexity", "--models", tmp_path / "no.model",
                 "--words", src], check=False)
    assert p.returncode == 2 and p.stderr.startswith("error:")


def test_tokenize_pretokenized_and_user_symbols(ws):
    assert ws.tokenize_pretokenized(["The", "dogs", "", "ran fast"]) == ["The", "dog", "[NNS]", "run", "[VBD]", "fast"]
    assert bite.USER_SYMBOLS[:11] == INFLECTION_SYMBOLS and set(bite.USER_SYMBOLS[11:]) == {ESCAPE, GLUE, SPACE_BEFORE_MARK}


def test_escapes_survive_sentencepiece_when_marks_are_user_symbols(tmp_path, shared_path):
    """With the marks as user-defined symbols, raw symbols in the input come back through BITE+SentencePiece."""
    import sentencepiece as spm
    b = BiteTokenizer("whitespace")
    lines = _lines(shared_path("multi30k/train.en.gz"), 2000)
    (tmp_path / "b.txt").write_text("\n".join(b.encode_lines(lines)) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(tmp_path / "b.txt"), model_prefix=str(tmp_path / "m"), vocab_size=600,
                                   user_defined_symbols=list(bite.USER_SYMBOLS), minloglevel=2, num_threads=1)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    raw = f"The dogs [VBD] x[NNS] {ESCAPE}y ran {GLUE}"
    line = b.encode_lines([raw])[0]
    assert sp.unk_id() not in sp.encode(line)
    assert sp.decode(sp.encode(line, out_type=str)) == line          # SentencePiece changes nothing
    back = b.detokenize(line.split())
    assert back == b.detokenize(b.tokenize(raw))
    # the raw symbols come back literally (the tagger may still inflect a lone mark like any unknown word)
    assert back.startswith(f"The dogs [VBD] x[NNS] {ESCAPE}y ran ")


# ---- escaping safe under a subword model's normalisation -------------------------------------------------

#: words whose base + symbol re-inflects to themselves, so a round trip tests the escaping and the spacing only
KNOWN_INFLECTED = {"dogs": "NNS", "cats": "NNS", "barked": "VBD", "walks": "VBZ", "played": "VBD",
                   "bigger": "JJR", "children": "NNS"}


class HostileTagger:
    """The known inflected words get their tag; a word that looks like a symbol is tagged as an inflected verb
    (as NLTK tags ``[VBP]``: the case that lost its bracket); every other word NN (kept as it is)."""

    def tag(self, words):
        return [KNOWN_INFLECTED.get(w) or ("VBP" if bite.needs_escape(w) else "NN") for w in words]

    def tag_sents(self, sentences):
        return [self.tag(s) for s in sentences]


def hostile_bite(pretok: str, single: bool = False) -> BiteTokenizer:
    b = BiteTokenizer(pretok, tagger=None, single_char=single)
    b.tagger = HostileTagger()
    return b


#: fragments for random text: brackets and their compatibility forms, tag names, symbols, BITE's own marks,
#: compatibility characters (NFKC changes them), characters nmt_nfkc deletes or turns into spaces, accents
FRAGMENTS = ["[", "]", "\uff3b", "\uff3d", "\ufe47", "\ufe48", "NNS", "VBD", "VBP", "JJR", "[NNS]", "[VBD]",
             "\uff2e\uff2e\uff33", "\uff2e", "\u24c3", "\u266e", "\u2674", ESCAPE, GLUE, SPACE_BEFORE_MARK,
             "\ufb01", "\u2460", "\u2122", "\u00bd", "\u00a8", "\u00b4", "\u200b", "\ufeff", "\x01", "\x7f", "\u00e9",
             "e\u0301", "\u00c5", "I", "the", "man", "here", "dogs", "barked", "walks", "bigger", "(", ")",
             "\uff08", '"', ".", ",", "'s", " ", " ", " ", " "]


def hostile_text():
    from hypothesis import strategies as st
    return st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=14).map("".join)


def round_trip_input(b: BiteTokenizer, pretok: str, x: str) -> str:
    """``x`` as the round-trip properties take it: with moses, the control characters it deletes become spaces (as
    documented), and text whose moses words cannot be aligned with its whitespace words is not drawn."""
    import hypothesis
    if pretok == "moses":
        x = bite_text.MOSES_DELETED_RE.sub(" ", x)
    hypothesis.assume(pretok != "moses" or bite_text.align_tokens(b.pretokenize(x), " ".join(x.split())) is not None)
    return x


@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize("pretok", ["whitespace", "moses", "bert"])
def test_property_bite_alone_round_trips_hostile_text(pretok, single):
    """decode(encode(x)) == x (up to whitespace) for random text salted with brackets, tag names, symbols and
    compatibility characters (moses: the control characters it deletes become spaces, as documented)."""
    pytest.importorskip("hypothesis")
    from hypothesis import given, settings

    b = hostile_bite(pretok, single)

    @settings(max_examples=300, deadline=None, derandomize=True, database=None)
    @given(hostile_text())
    def check(x):
        x = round_trip_input(b, pretok, x)
        assert b.detokenize(b.tokenize(x)) == " ".join(x.split())
        assert b.detokenize(b.subword_text(b.tokenize(x)).split()) == " ".join(x.split())

    check()


@pytest.mark.parametrize("pretok", ["whitespace", "moses", "bert"])
@pytest.mark.parametrize("line", ["I [VBP] here", "A dog\uff3bNNS\uff3d is here.", "A man\uff3bVBD\uff3d walks.",
                                  "x\ufe47NNS\ufe48 y", "[NN\x01S] x", "a\u00a8[NNS] b"])
def test_literal_symbols_stay_literal_with_the_real_tagger(pretok, line):
    """The cases of the issue, with NLTK's tagger: the literal comes back, and no symbol is written for it (before:
    ``I [VBP] here`` -> ``I [VBP here``; ``［NNS］`` unescaped, read as ``[NNS]`` after NFKC)."""
    b = BiteTokenizer(pretok)
    expected = " ".join((bite_text.MOSES_DELETED_RE.sub(" ", line) if pretok == "moses" else line).split())
    tokens = b.tokenize(line)
    assert b.detokenize(tokens) == expected
    # as a subword model's normaliser sees the text: every symbol it finds is one BITE wrote for a base
    text = b.subword_text(tokens)
    assert bite_text.chunk_structure(bite.model_normalised(text)) == bite_text.chunk_structure(text)
    assert not any(bite_text.CHUNK_SPLIT_RE.search(t) for t in bite.model_normalised(" ".join(tokens)).split()
                   if t[:1] not in (ESCAPE, GLUE, SPACE_BEFORE_MARK) and t not in bite.TAG_OF_SYMBOL)
