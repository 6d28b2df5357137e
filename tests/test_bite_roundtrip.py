"""BITE's exact round trips: ``--bite-exact`` keeps a word as it is wherever decoding would not
give it back, so every sentence survives encode -> decode; the default stays the published algorithm, which
changes 753 of Multi30k's 29,000 English training sentences (``sleeps`` tagged NNS -> ``sleep [NNS]`` -> ``sleep``).
"""
from __future__ import annotations

import gzip
import io
import json

import pytest

from preprocess.evaluate.bite import round_trip_rate, round_trip_reference
from preprocess.schemes import bite
from preprocess.schemes.bite import BiteLineEncoder, BiteOptions, BiteTokenizer

#: Multi30k training sentences the published algorithm changes, and the word it loses in each
KNOWN = [
    ("A small child sleeps while holding a stuffed animal.", "sleeps"),
    ("Two men and two women sitting on steps outdoors.", "outdoors"),
    ("A man asleep in a car that's driving.", "'s"),
    ("A man in a black hat walks down the street.", "walks"),
    ("A woman and a girl ride a sled down a hill standing up.", "sled"),
    ("A little girl is swinging in a baby swing on the playground.", "swing"),
]


def _lines(path, n=None):
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = [line.rstrip("\n") for line in fh]
    return lines[:n] if n else lines


@pytest.fixture(scope="module")
def train_en():
    from tests.conftest import require_shared
    return _lines(require_shared("multi30k/train.en.gz"))


def _changed(b: BiteTokenizer, lines, pretok="moses"):
    encoded = b.encode_lines(lines)
    assert len(encoded) == len(lines)
    return [(line, e) for line, e in zip(lines, encoded)
            if b.detokenize(e.split()) != round_trip_reference(line, pretok)]


def test_the_option_is_declared_once_off_by_default():
    assert BiteOptions().bite_exact is False
    assert BiteTokenizer("whitespace", None).exact is False
    assert BiteLineEncoder("whitespace", None, False, bite_input=True).bite.exact is False


def test_exact_changes_no_multi30k_training_sentence(train_en):
    assert len(train_en) == 29_000
    assert _changed(BiteTokenizer("moses", "nltk", exact=True), train_en) == []
    assert len(_changed(BiteTokenizer("moses", "nltk"), train_en)) == 753   # the published algorithm's loss


@pytest.mark.parametrize("tagger,pretok", [("nltk", "moses"), ("hanta", "moses"), ("nltk", "whitespace"),
                                           ("nltk", "bert")])
def test_exact_changes_none_of_the_first_2000_lines(train_en, tagger, pretok):
    lines = train_en[:2000]
    exact = BiteTokenizer(pretok, tagger, exact=True)
    assert _changed(exact, lines, pretok) == []
    # one sentence at a time (fairseq, Hugging Face) encodes as the batch does
    assert [" ".join(exact.tokenize(line)) for line in lines[:300]] == exact.encode_lines(lines[:300])
    if pretok == "moses":
        assert len(_changed(BiteTokenizer(pretok, tagger), lines, pretok)) > 20


@pytest.mark.parametrize("tagger", ["nltk", "hanta"])
def test_known_losses_default_and_exact(tagger):
    default, exact = BiteTokenizer("moses", tagger), BiteTokenizer("moses", tagger, exact=True)
    for sentence, word in KNOWN:
        assert exact.detokenize(exact.tokenize(sentence)) == sentence
        tokens = exact.tokenize(sentence)
        assert word in tokens or tagger == "hanta", tokens   # kept as it is
    if tagger == "nltk":   # the published algorithm loses each of them
        for sentence, _word in KNOWN:
            assert default.detokenize(default.tokenize(sentence)) != sentence, sentence
        assert default.tokenize("A small child sleeps while")[3:5] == ["sleep", "[NNS]"]


def test_default_is_the_published_algorithm_and_exact_only_keeps_words(train_en):
    """The default is token for token the authors' code (bench/bite.py's reference); exact differs only where it
    keeps a word that the default split."""
    from test_bite import _load_bench
    ref = _load_bench().ReferenceBite()
    lines = train_en[:1000]
    default = BiteTokenizer("whitespace").tokenize_batch(lines)
    assert [ref.tokenize_words(line.split()) for line in lines] == default
    exact = BiteTokenizer("whitespace", exact=True)
    for line, d, e in zip(lines, default, exact.tokenize_batch(lines)):
        if d != e:
            assert len(e) < len(d) and exact.detokenize(e) == line and set(e) - set(d) <= set(line.split())


@pytest.mark.parametrize("sentence,expected", [
    ("I am here and I was there", ["I", "be", "[VBP]", "here", "and", "I", "be", "[VBD]", "there"]),
    ("I are here", None), ("The dogs was there .", None),
])
def test_be_is_checked_in_its_sentence(sentence, expected):
    """*be* is chosen by its subject on decoding: kept as it is where that choice would differ."""
    b = BiteTokenizer("whitespace", exact=True)
    tokens = b.tokenize(sentence)
    assert b.detokenize(tokens) == sentence
    if expected is not None:
        assert tokens == expected


def test_encode_cli_metrics_and_recipe_take_the_option(tmp_path, run_cli, shared_path):
    lines = [s for s, _ in KNOWN] + ["", "Two dogs are running."]
    src = tmp_path / "in.txt"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    exact = BiteTokenizer("moses", "nltk", exact=True).encode_lines(lines)
    for cmd in (["morphtok-encode", "--scheme", "bite"], ["morphtok-bite", "encode"]):
        out = tmp_path / "out.txt"
        run_cli([*cmd, "--bite-exact", "--inputs", src, "--outputs", out])
        assert out.read_text(encoding="utf-8").split("\n")[:-1] == exact
    out = run_cli(["morphtok-metrics-bite", "roundtrip", "--input", src, "--json"]).stdout
    report = json.loads(out)
    assert report["exact"]["rate"] == 1.0 and report["exact"]["unchanged"] == len(lines)
    assert report["default"]["unchanged"] == 2
    # the recipe passes it to every BITE encoder and records it for decoding
    from train_scripts.schemes import make_scheme
    scheme = make_scheme({"scheme": "bite", "bite_exact": True}, ("en", "de"), str(tmp_path))
    assert scheme.encoder("en").args[0].bite_exact is True   # BiteLineEncoder.from_options(BiteOptions, ...)
    assert "--bite-exact" in scheme.decode_args("en")


def test_round_trip_rate_function(train_en):
    assert round_trip_rate([])["rate"] == 1.0
    default = round_trip_rate(train_en[:500])
    assert default["sentences"] == 500 and default["unchanged"] < 500 and default["examples"]
    assert round_trip_rate(train_en[:500], BiteOptions(bite_exact=True))["unchanged"] == 500


def _small_model(tmp_path_factory, byte_fallback: bool) -> str:
    """A small BITE+D model with SentencePiece's default normaliser (nmt_nfkc), trained on generated text and the
    known sentences (every character of them), with or without byte fallback."""
    import random

    from preprocess.models.spm import train
    rng = random.Random(5)
    words = "the a man men woman dog cat child street walk play run red big sleep sled swing at on in".split()
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 10))) + rng.choice([".", "!", ""])
             for _ in range(500)] + [s for s, _ in KNOWN] * 3 + ["A fine dog [NNS] sleeps. " + bite.ESCAPE] * 3
    tmp = tmp_path_factory.mktemp("roundtrip-model")
    (tmp / "t.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return train([str(tmp / "t.txt")], str(tmp / "m"), vocab_size=600, seed=1, num_threads=1,
                 character_coverage=1.0, extra_symbols=list(bite.USER_SYMBOLS),
                 extra_options={"byte_fallback": byte_fallback, "hard_vocab_limit": False})


@pytest.fixture(scope="module")
def nfkc_model(tmp_path_factory):
    """With byte fallback: every character comes back (the hostile-input tests)."""
    return _small_model(tmp_path_factory, True)


@pytest.fixture(scope="module")
def plain_model(tmp_path_factory):
    """Without byte fallback, as fairseq's ``--bpe sentencepiece`` decode and the Hugging Face class read pieces."""
    return _small_model(tmp_path_factory, False)


def test_fairseq_tokenizer_takes_the_option():
    from fairseq_plugins.bite import BiteFairseqTokenizer, BiteTokenizerConfig
    for word_format in (False, True):
        tok = BiteFairseqTokenizer(BiteTokenizerConfig(bite_exact=True, bite_word_format=word_format))
        assert tok.bite.exact
        for sentence, _ in KNOWN:
            assert tok.decode(tok.encode(sentence)) == sentence
    assert not BiteFairseqTokenizer(BiteTokenizerConfig()).bite.exact


def test_hugging_face_class_and_export_take_the_option(plain_model, tmp_path):
    pytest.importorskip("transformers")
    from preprocess import export
    from preprocess.hf_tokenizers import MorphtokBiteTokenizer
    sentences = [s for s, _ in KNOWN] + ["A ﬁne dog sleeps."]
    export.main(["--scheme", "bite", "--subword-model", plain_model, "--bite-exact", "--out", str(tmp_path / "hf")])
    config = json.loads((tmp_path / "hf" / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["exact"] is True
    tok = MorphtokBiteTokenizer.from_pretrained(str(tmp_path / "hf"))
    assert tok.line_encoder.bite.exact
    from preprocess.models.spm import load_model
    sp = load_model(plain_model)
    for sentence in sentences:
        ids = tok(sentence, add_special_tokens=False)["input_ids"]
        assert tok.decode(ids) == round_trip_reference(sentence, "moses", sp)
    export.main(["--scheme", "bite", "--subword-model", plain_model, "--out", str(tmp_path / "hf2")])
    assert not MorphtokBiteTokenizer.from_pretrained(str(tmp_path / "hf2")).line_encoder.bite.exact


# --- hostile input -------------------------------------------------------------------------------------------------

def _decode_input(data: bytes) -> list[str]:
    """The lines of ``data`` as the encoder reads them with invalid UTF-8 replaced (``read_lines(errors="replace")``)."""
    from preprocess.files.inputs import lines_of
    return list(lines_of(io.BytesIO(data), "<test>", errors="replace"))


@pytest.fixture(scope="module")
def exact_encoders(nfkc_model):
    return {(pretok, tagger, model): BiteLineEncoder(pretok, tagger, False, nfkc_model if model else None, exact=True)
            for pretok in ("moses", "whitespace", "bert") for tagger in ("nltk", "hanta") for model in (False, True)}


def _check_exact(enc: BiteLineEncoder, pretok: str, lines: list[str]) -> None:
    from preprocess.models.spm import SPACE_SYMBOL
    encoded = enc.encode_lines(lines)
    assert len(encoded) == len(lines)
    for line, e in zip(lines, encoded):
        assert "\n" not in e and "\r" not in e and len(e.splitlines()) <= 1, (line, e)
        expected = round_trip_reference(line, pretok, enc.sp)
        if not expected:
            assert e == "", (line, e)
            continue
        text = enc.sp.decode_pieces(e.split()) if enc.sp is not None else e
        got = enc.bite.detokenize(text.split())
        if enc.sp is not None:
            import unicodedata
            if any(not c.isspace() and SPACE_SYMBOL in enc.sp.normalize(f"x{c}x")[1:] for c in line):
                # a space the model makes of a character (U+200B, "¨" = NFKC " \u0308") is not always kept (see
                # tests/test_bite_subword.py); every character and every word is
                got, expected = got.replace(" ", ""), expected.replace(" ", "")
            got, expected = unicodedata.normalize("NFC", got), unicodedata.normalize("NFC", expected)
        assert got == expected, (line, e)


LONG = ["dogs " * 2000, "sleeps" * 2000 + " walks", "x" * 10_000, "\x00\x01".join(["walks"] * 500)]


@pytest.mark.parametrize("model", [False, True])
@pytest.mark.parametrize("tagger", ["nltk", "hanta"])
@pytest.mark.parametrize("pretok", ["moses", "whitespace", "bert"])
def test_hostile_lines_round_trip_in_exact_mode(exact_encoders, pretok, tagger, model):
    """The hostile generator of tests/test_fuzz.py (control characters, zero-width and combining marks, symbols
    and their look-alikes, 10k-character words...) and very long lines: one line per line, each given back."""
    from test_fuzz import hostile_lines
    _check_exact(exact_encoders[pretok, tagger, model], pretok, hostile_lines(2) + LONG)


@pytest.mark.parametrize("model", [False, True])
def test_hypothesis_hostile_bytes_round_trip_in_exact_mode(exact_encoders, model):
    """Random text salted with what breaks tokenisers (tests/test_fuzz.py's strategy and settings), written as
    bytes with invalid UTF-8 and empty lines, read as the encoder reads them: every line comes back."""
    pytest.importorskip("hypothesis")
    from hypothesis import given
    from hypothesis import strategies as st
    from test_fuzz import FUZZ, LINES

    pieces = st.one_of(LINES.map(lambda ls: "\n".join(ls).encode("utf-8", "surrogatepass")),
                       st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\n", b"\n\n", b"dogs \xe2\x82 walks"]))
    data_st = st.lists(pieces, max_size=6).map(b"".join)

    @FUZZ
    @given(data_st, st.sampled_from(["moses", "whitespace", "bert"]), st.sampled_from(["nltk", "hanta"]))
    def check(data, pretok, tagger):
        lines = _decode_input(data)
        assert len(lines) == data.count(b"\n") + (not data.endswith(b"\n") and bool(data))
        _check_exact(exact_encoders[pretok, tagger, model], pretok, lines)

    check()
