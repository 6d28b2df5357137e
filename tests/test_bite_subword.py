"""BITE + a SentencePiece model: one piece per inflection symbol and no lone ``▁`` for it (BITE paper, BITE+BPE and
Figure 8), decoding unchanged."""
from __future__ import annotations

import gzip
import json
import unicodedata

import pytest

from preprocess.models.spm import SPACE_SYMBOL
from preprocess.schemes import bite
from preprocess.schemes.bite import (
    ESCAPE,
    GLUE,
    SINGLE_CHAR_SYMBOLS,
    SPACE_BEFORE_MARK,
    TAG_OF_SYMBOL,
    BiteLineEncoder,
    BiteTokenizer,
    train_subword_model,
    training_text,
)

SENTENCES = [
    "The dogs were barking at the Americans' houses.",
    "Two young, White males are outside near many bushes.",
    "Several men in hard hats are operating a giant pulley system.",
    "Two (small) dogs played; the bigger one won!",
    "A child's toys were lying on the floor.",
    'She said "hello" to the USA team , didn\'t she ?',
    "Women, wearing traditional clothing, are reenacting native life.",
]


def _lines(path, n=None):
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = [" ".join(l.split()) for l in fh]
    return lines[:n] if n else lines


def _fairseq_sentencepiece_decode(pieces):
    """What fairseq's ``--bpe sentencepiece`` decode gives (``SentencepieceBPE.decode``)."""
    return "".join(pieces).replace(SPACE_SYMBOL, " ").strip()


@pytest.fixture(scope="module")
def moses():
    return BiteTokenizer("moses")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """BITE+D models (unigram and BPE, 1,000 pieces) and D models on the first 3,000 Multi30k train lines."""
    from preprocess.models.spm import train
    from tests.conftest import require_shared
    tmp = tmp_path_factory.mktemp("bite_subword")
    lines = _lines(require_shared("multi30k/train.en.gz"), 3000)
    (tmp / "raw.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp / "bite.txt").write_text("\n".join(BiteTokenizer("moses").encode_lines(lines)) + "\n", encoding="utf-8")
    out = {}
    for kind in ("unigram", "bpe"):
        out[kind] = train_subword_model([str(tmp / "bite.txt")], str(tmp / f"bite_{kind}"), model_type=kind,
                                        vocab_size=1000, seed=1, num_threads=1)
        out["d_" + kind] = train([str(tmp / "raw.txt")], str(tmp / f"d_{kind}"), model_type=kind, vocab_size=1000,
                                 seed=1, num_threads=1)
    return out


# ---- the subword text -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("pretok,sentence,text", [
    ("moses", "The dogs were barking at the Americans' houses.",
     "The dog[NNS] be[VBD] bark[VBG] at the American[NNPS]' house[NNS]."),
    # a base glued to punctuation before it gets a word-start mark, so decoding inflects 'dog', not '(dog'
    ("moses", "Two (dogs) are running.", f"Two ({GLUE}dog[NNS]) be[VBP] run[VBG]."),
    # spacing the default rule gets wrong: '#19' needs no mark here (it is glued), ' ,' keeps its mark
    ("moses", "a white #19 jersey", "a white #19 jersey"),
    ("moses", "the team , didn't she ?", f"the team {SPACE_BEFORE_MARK}, didn't she {SPACE_BEFORE_MARK}?"),
    ("whitespace", "The dogs barked .", "The dog[NNS] bark[VBD] ."),
    ("bert", "Two dogs, running.", "Two dog[NNS], run[VBG]."),
])
def test_subword_text(pretok, sentence, text):
    b = BiteTokenizer(pretok)
    tokens = b.tokenize(sentence)
    assert b.subword_text(tokens) == text
    assert b.detokenize(text.split()) == b.detokenize(tokens) == sentence
    assert training_text(text) == " ".join(bite.SYMBOL_RE.sub("", text).split())


def test_single_char_symbols_are_glued_too():
    b = BiteTokenizer("moses", single_char=True)
    toks = b.tokenize("The dogs barked.")
    assert b.subword_text(toks) == f"The dog{SINGLE_CHAR_SYMBOLS[2]} bark{SINGLE_CHAR_SYMBOLS[6]}."
    assert b.detokenize(b.subword_text(toks).split()) == "The dogs barked."


@pytest.mark.parametrize("pretok", ["moses", "whitespace", "bert"])
def test_subword_text_decodes_like_the_word_form_on_multi30k_val(shared_path, pretok):
    """Reconstruction does not drop: the subword text decodes to exactly what the word form decodes to."""
    b = BiteTokenizer(pretok)
    lines = _lines(shared_path("multi30k/val.en.gz"))
    toks = b.tokenize_batch(lines)
    texts = [b.subword_text(t) for t in toks]
    assert [b.detokenize(x.split()) for x in texts] == [b.detokenize(t) for t in toks]
    # the subword text needs fewer marks than the word form (e.g. '#19' is glued, not '# ⁀19')
    n_marks = sum(x.count(GLUE) + x.count(SPACE_BEFORE_MARK) for x in texts)
    n_marks_words = sum(tok[:1] in (GLUE, SPACE_BEFORE_MARK) for t in toks for tok in t)
    assert n_marks <= n_marks_words
    if pretok == "moses":
        assert sum(b.detokenize(x.split()) == l for x, l in zip(texts, lines)) >= 0.95 * len(lines)


RAW_LINES = [
    "[VBD] [NNS] x[VBZ] " + " ".join(SINGLE_CHAR_SYMBOLS),
    f"{ESCAPE} {ESCAPE}{ESCAPE}x {GLUE} {SPACE_BEFORE_MARK}y walked[VBD] \u266e\u2670",
    f"dogs{GLUE}cats barked{SPACE_BEFORE_MARK}loudly ({ESCAPE}dogs) ran.",
    "(Dogs) \"barked\" at #19 , and [NNS]dogs ran!",
]


@pytest.mark.parametrize("pretok", ["whitespace", "moses", "bert"])
@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize("line", RAW_LINES)
def test_raw_symbols_and_marks_survive_the_subword_text(pretok, single, line):
    b = BiteTokenizer(pretok, single_char=single)
    toks = b.tokenize(line)
    text = b.subword_text(toks)
    assert b.detokenize(text.split()) == b.detokenize(toks)
    if "[NNS]dogs" not in line:   # (an escaped raw word is still lemmatised when tagged as inflected)
        assert b.detokenize(toks) == " ".join(line.split())


def test_decoding_reads_both_forms(moses):
    # word form, subword text, and a model's output with a symbol in odd places: all decode, none crash
    assert moses.detokenize("The dog [NNS] bark [VBD] .".split()) == "The dogs barked."
    assert moses.detokenize("The dog[NNS] bark[VBD].".split()) == "The dogs barked."
    assert moses.detokenize(["[VBD]the", "dog[NNS][NNS]", "x\u2040", "\u2423"]) == "the dogs x"


# ---- through SentencePiece ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_one_piece_per_symbol_and_no_lone_space(models, moses, kind):
    """Tokens = the same model's tokens on the base forms (the baseline modulo the lemma's segmentation) plus one
    per inflection symbol; no standalone ▁ before a symbol, and no ▁ on punctuation the sentence glues."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=models[kind])
    enc = BiteLineEncoder("moses", "nltk", False, models[kind])
    for sentence, line in zip(SENTENCES, enc.encode_lines(SENTENCES)):
        pieces = line.split()
        tokens = moses.tokenize(sentence)
        n_symbols = sum(t in TAG_OF_SYMBOL for t in tokens)
        assert n_symbols and sum(p in TAG_OF_SYMBOL for p in pieces) == n_symbols
        bases = sp.encode(training_text(moses.subword_text(tokens)), out_type=str)
        assert len(pieces) == len(bases) + n_symbols
        assert [p for p in pieces if p not in TAG_OF_SYMBOL] == bases
        assert not any(a == SPACE_SYMBOL and b in TAG_OF_SYMBOL for a, b in zip(pieces, pieces[1:]))
        if " ," not in sentence:
            assert SPACE_SYMBOL + "," not in pieces and SPACE_SYMBOL + "." not in pieces
        assert moses.detokenize(_fairseq_sentencepiece_decode(pieces).split()) == moses.detokenize(tokens)


def test_round_trip_through_sentencepiece_on_val(models, moses, shared_path):
    lines = _lines(shared_path("multi30k/val.en.gz"))
    enc = BiteLineEncoder("moses", "nltk", False, models["unigram"])
    decoded = [moses.detokenize(_fairseq_sentencepiece_decode(l.split()).split()) for l in enc.encode_lines(lines)]
    assert decoded == [moses.detokenize(t) for t in moses.tokenize_batch(lines)]


def test_fewer_tokens_than_the_word_form(models, moses, shared_path, tmp_path):
    """The issue's measurement in small: SentencePiece on the word form spends a lone ▁ on each symbol."""
    import sentencepiece as spm

    from preprocess.models.spm import train
    lines = _lines(shared_path("multi30k/val.en.gz"), 300)
    src = _lines(shared_path("multi30k/train.en.gz"), 3000)
    (tmp_path / "w.txt").write_text("\n".join(moses.encode_lines(src)) + "\n", encoding="utf-8")
    words = spm.SentencePieceProcessor(model_file=train([str(tmp_path / "w.txt")], str(tmp_path / "w"),
                                                        vocab_size=1000, seed=1, num_threads=1,
                                                        extra_symbols=list(bite.USER_SYMBOLS)))
    old = words.encode(moses.encode_lines(lines), out_type=str)
    new = [l.split() for l in BiteLineEncoder("moses", "nltk", False, models["unigram"]).encode_lines(lines)]
    lone = lambda enc: sum(a == SPACE_SYMBOL and b in TAG_OF_SYMBOL for p in enc for a, b in zip(p, p[1:]))
    assert lone(old) > 0.5 * sum(p in TAG_OF_SYMBOL for s in old for p in s) and lone(new) == 0
    assert sum(map(len, new)) < sum(map(len, old))


def test_training_text_cli_and_one_pass_encoding(models, moses, run_cli, tmp_path):
    src = tmp_path / "in.en"
    src.write_text("\n".join(SENTENCES + ["", "x"]) + "\n", encoding="utf-8")
    run_cli(["python", "-m", "preprocess.encode", "--scheme", "bite", "--training-text", "--quiet",
             "--inputs", src, "--outputs", tmp_path / "t.txt"])
    got = (tmp_path / "t.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert got == [training_text(moses.subword_text(moses.tokenize(s))) for s in SENTENCES + ["", "x"]]
    assert got[0] == "The dog be bark at the American' house."
    run_cli(["python", "-m", "preprocess.encode", "--scheme", "bite", "--subword-model", models["unigram"],
             "--quiet", "--inputs", src, "--outputs", tmp_path / "p.txt"])
    got = (tmp_path / "p.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert got == BiteLineEncoder("moses", "nltk", False, models["unigram"]).encode_lines(SENTENCES + ["", "x"])
    assert got[-2] == ""


def test_train_subword_model_bad_input(tmp_path):
    from preprocess.common import UserError
    with pytest.raises(UserError):
        train_subword_model([str(tmp_path / "missing.txt")], str(tmp_path / "m"), vocab_size=100)
    assert list(tmp_path.iterdir()) == []


# ---- Figure 8 ---------------------------------------------------------------------------------------------------
def test_sequence_lengths(models, moses, shared_path):
    import sentencepiece as spm

    from preprocess.evaluate.bite import sequence_lengths
    lines = _lines(shared_path("multi30k/val.en.gz"))
    r = sequence_lengths(lines, models["d_unigram"], models["unigram"])
    d = spm.SentencePieceProcessor(model_file=models["d_unigram"])
    bd = BiteLineEncoder("moses", "nltk", False, models["unigram"]).encode_lines(lines)
    assert r["tokens_d"] == sum(len(p) for p in d.encode(lines))
    assert r["tokens_bite_d"] == sum(len(l.split()) for l in bd)
    assert r["relative_increase"] == pytest.approx(r["tokens_bite_d"] / r["tokens_d"] - 1)
    symbols = sum(t in TAG_OF_SYMBOL for s in moses.tokenize_batch(lines) for t in s)
    assert r["inflected_words"] == symbols and r["words"] == sum(len(moses.pretokenize(l)) for l in lines)
    assert r["lone_spaces_before_symbols"] == 0
    # Figure 8's claim: BITE lets the subword model spend fewer tokens on the base forms than on the inflected
    # words, so the increase stays below one token per symbol and below the share of inflected words
    assert 0 < r["relative_increase"] < r["no_effect_increase"]
    assert r["relative_increase"] < r["inflected_share"]


def test_lengths_cli(models, run_cli, shared_path):
    val = shared_path("multi30k/val.en.gz")
    rows = json.loads(run_cli(["python", "-m", "preprocess.evaluate.bite", "lengths", "--input", val, "--lines", "50",
                               "--model", models["d_bpe"], "--bite-model", models["bpe"], "--json"]).stdout)
    assert len(rows) == 1 and rows[0]["sentences"] == 50 and rows[0]["vocab_bite_d"] == 1000
    p = run_cli(["python", "-m", "preprocess.evaluate.bite", "lengths", "--input", val, "--model", models["d_bpe"]],
                check=False)
    assert p.returncode == 2 and p.stderr.startswith("error:")


def test_acceptance_on_the_demo_setting(tmp_path, moses, shared_path):
    """The issue's acceptance, in the demo's setting: joint Unigram 4,000 on the first 10,000 train lines (BITE
    English + German), English side of the first 500 lines of test 2016."""
    from preprocess.evaluate.bite import sequence_lengths
    from preprocess.models.spm import train
    en = _lines(shared_path("multi30k/train.en.gz"), 10000)
    de = _lines(shared_path("multi30k/train.de.gz"), 10000)
    test = _lines(shared_path("multi30k/test_2016_flickr.en.gz"), 500)
    for name, lines in (("en", en), ("de", de), ("bite.en", moses.encode_lines(en))):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    opts = dict(model_type="unigram", vocab_size=4000, seed=1, character_coverage=1.0, num_threads=1)
    base = train([str(tmp_path / "en"), str(tmp_path / "de")], str(tmp_path / "base"), **opts)
    bite_model = train_subword_model([str(tmp_path / "bite.en")], str(tmp_path / "bite"),
                                     other_inputs=[str(tmp_path / "de")], **opts)
    r = sequence_lengths(test, base, bite_model)
    print(json.dumps(r))
    assert r["lone_spaces_before_symbols"] == 0
    assert r["tokens_bite_d"] - r["tokens_d"] < r["inflected_words"]


def test_bite_input_applies_only_the_subword_step(models, moses):
    """Lines BITE-encoded once (word form) give the same pieces and training text as raw lines, with no tagger."""
    word_form = moses.encode_lines(SENTENCES + [""])
    on_bite = BiteLineEncoder("moses", "nltk", False, models["unigram"], bite_input=True)
    assert on_bite.bite.tagger is None
    assert on_bite.encode_lines(word_form) == BiteLineEncoder("moses", "nltk", False,
                                                              models["unigram"]).encode_lines(SENTENCES + [""])
    text = BiteLineEncoder("moses", "nltk", False, None, bite_input=True, training_text=True)
    assert text.encode_lines(word_form) == BiteLineEncoder("moses", "nltk", False, None,
                                                           training_text=True).encode_lines(SENTENCES + [""])
    assert BiteLineEncoder("moses", "nltk", False, None, bite_input=True).encode_lines(word_form) == word_form


# ---- escaping safe under the model's normalisation -------------------------------------------------------

@pytest.fixture(scope="module")
def nfkc_model(tmp_path_factory):
    """A small BITE+D unigram model with SentencePiece's default normaliser (nmt_nfkc) and byte fallback (every
    character comes back), trained here on generated text (no shared data needed)."""
    import random

    from preprocess.models.spm import train
    rng = random.Random(3)
    words = "the a man woman dog cat child street walk play run red big small at on in with near".split()
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 10))) + rng.choice([".", "!", ""])
             for _ in range(500)]
    tmp = tmp_path_factory.mktemp("nfkc")
    (tmp / "t.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return train([str(tmp / "t.txt")], str(tmp / "m"), vocab_size=400, seed=1, num_threads=1,
                 extra_symbols=list(bite.USER_SYMBOLS), extra_options={"byte_fallback": True, "hard_vocab_limit": False})


@pytest.mark.parametrize("pretok", ["whitespace", "moses", "bert"])
def test_property_bite_plus_sentencepiece_round_trips_hostile_text(nfkc_model, pretok):
    """decode(encode(x)) == x as the model normalises it, through BITE + an nmt_nfkc SentencePiece model: no
    normalisation turns literal text into a symbol (before: ``A dog［NNS］ sleeps.`` -> ``A dogs sleep.``)."""
    pytest.importorskip("hypothesis")
    from hypothesis import given, settings
    from test_bite import hostile_bite, hostile_text, round_trip_input

    from preprocess.models.spm import load_model

    sp = load_model(nfkc_model)
    b = hostile_bite(pretok)

    @settings(max_examples=200, deadline=None, derandomize=True, database=None)
    @given(hostile_text())
    def check(x):
        x = round_trip_input(b, pretok, x)
        expected = " ".join(sp.normalize(x).replace(SPACE_SYMBOL, " ").split())
        tokens = b.tokenize(x)
        for text in (b.subword_text(tokens), " ".join(tokens)):   # one pass (BITE+D), and the word form
            pieces = sp.encode(text, out_type=str)
            got = b.detokenize(sp.decode_pieces(pieces).split())
            if any(not c.isspace() and SPACE_SYMBOL in sp.normalize(f"x{c}x")[1:] for c in x):
                # a space the model makes of a character (U+200B, the spacing accent "¨" = NFKC " \u0308") is
                # not always kept: between a word and a literal symbol cut apart ("[\u200b[NNS]" -> "[[NNS]"),
                # after an opening bracket ("[¨" -> "[\u0308"); every character, and every literal, stays
                got, expected = got.replace(" ", ""), expected.replace(" ", "")
            # canonically equivalent (moses splits "e\u0301" into "e" and a glued mark, which the model then
            # normalises apart from the "e", so NFKC cannot compose them)
            assert unicodedata.normalize("NFC", got) == unicodedata.normalize("NFC", expected), (text, pieces)

    check()
