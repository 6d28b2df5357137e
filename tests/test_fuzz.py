"""Hostile input through every scheme's command line and fairseq adapter.

A seeded generator writes lines of twenty classes (control characters, zero-width and combining marks,
right-to-left, CJK, emoji, 10k-character words, literal ``▁``, strings that look like BITE symbols or ``##``
pieces, random code points, ...).  For every scheme: no exception, one output line per input line, and the
lossless schemes exact (spaces keep: SentencePiece's normalised text wherever no piece is unknown; BITE: the
input wherever every word re-inflects to itself; Wordmap: the input up to whitespace).  Bad files (invalid
UTF-8, corrupt or empty models and vocabularies) give exit status 2 and one line naming the file.  Tagger paths
are checked for linear time on long tokens (a ratio of two timings, not a wall-clock limit).
Interruption and file modes are tested in tests/test_encode.py.
"""
from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest
from test_encode import SCHEMES, encode, one_line_error, scheme_options

from preprocess import registry

SEED = 16
PER_CLASS = 25
ALPHA = "the dogs were barking at two men walking down streets while children played happily"


def _words(rng: random.Random, n: int) -> list[str]:
    base = ALPHA.split()
    return [rng.choice(base) for _ in range(n)]


def _insert(rng: random.Random, chars: str, n: int = 6) -> str:
    words = _words(rng, n)
    out = []
    for w in words:
        if rng.random() < 0.5:
            i = rng.randrange(len(w) + 1)
            w = w[:i] + rng.choice(chars) + w[i:]
        out.append(w)
    return " ".join(out)


def _random_codepoints(rng: random.Random) -> str:
    out = []
    while len(out) < 12:
        cp = rng.randrange(0x110000)
        if 0xD800 <= cp < 0xE000:
            continue
        out.append(chr(cp))
    return "".join(out) + " " + " ".join(_words(rng, 3))


C0 = "".join(chr(c) for c in range(0x20) if chr(c) not in "\n")
CLASSES = {
    "plain": lambda r: " ".join(_words(r, 8)).capitalize() + ".",
    "c0_controls": lambda r: _insert(r, C0),
    "nul_between_words": lambda r: "\x00".join(_words(r, 4)) + " " + " ".join(_words(r, 2)),
    "c1_controls_del": lambda r: _insert(r, "\x7f\x80\x85\x9f\x8d"),
    "zero_width": lambda r: _insert(r, "\u200b\u200c\u200d\u2060\ufeff"),
    "combining": lambda r: _insert(r, "\u0301\u0308\u0327\u20dd\u0489") + " e\u0301\u0301\u0301",
    "right_to_left": lambda r: _insert(r, "\u200f\u200e\u202e\u202c") + " \u05e9\u05dc\u05d5\u05dd "
                               "\u0645\u0631\u062d\u0628\u0627",
    "cjk": lambda r: "\u72d7\u5728\u53eb\u3002 " + " ".join(_words(r, 3)) + " \u3053\u3093\u306b\u3061\u306f",
    "emoji": lambda r: _insert(r, "\U0001f415\U0001f468\u200d\U0001f469\u200d\U0001f467\U0001f1e9\U0001f1ea"
                                  "\U0001f44d\U0001f3fd"),
    "long_word": lambda r: " ".join(_words(r, 2)) + " " + "".join(r.choice("abcdefgh") for _ in range(10_000)),
    "literal_space_mark": lambda r: _insert(r, "\u2581") + " \u2581 \u2581\u2581x",
    "bite_lookalikes": lambda r: _insert(r, "\u266e\u2672\u29f5\u2040\u2423") + " [NNS] dog[VBD] [VBZ]x \u29f5",
    "subword_lookalikes": lambda r: " ".join("##" + w if r.random() < 0.5 else "\u0120" + w for w in _words(r, 5)),
    "random_codepoints": _random_codepoints,
    "odd_whitespace": lambda r: "\t".join(_words(r, 3)) + "\u00a0\u3000" + "\u2028".join(_words(r, 2)) +
                                "\r" + "\x0b\x0c\x1c\u0085".join(_words(r, 3)),
    "punctuation_only": lambda r: "".join(r.choice("!?.,;:'\"()[]{}<>-\u2014\u2026") for _ in range(12)),
    "fairseq_specials": lambda r: "<unk> <s> </s> <pad> " + " ".join(_words(r, 3)) + " <mask> [UNK] [CLS]",
    "many_words": lambda r: " ".join(_words(r, 400)),
    "upper_case": lambda r: " ".join(_words(r, 6)).upper() + " NASA'S DOGS",
    "blank": lambda r: r.choice(["", " ", "\t", "  \u00a0 "]),
    "private_use_noncharacters": lambda r: _insert(r, "\ue000\uf8ff\ufffe\uffff\U0010fffd\ufffd"),
}


def hostile_lines(per_class: int = PER_CLASS, seed: int = SEED) -> list[str]:
    rng = random.Random(seed)
    return [CLASSES[name](rng) for _ in range(per_class) for name in CLASSES]


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_bytes("".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass"))


def read_output(path: Path) -> list[str]:
    data = path.read_bytes().decode("utf-8")
    assert data.endswith("\n")
    return data[:-1].split("\n")


def test_generator_is_seeded_and_has_every_class():
    assert hostile_lines(2) == hostile_lines(2)
    assert len(CLASSES) >= 20 and len(hostile_lines(1)) == len(CLASSES)


# --- every scheme's command line ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hostile_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "hostile.txt"
    lines = hostile_lines()
    write_lines(path, lines)
    return path, lines


def no_line_breaks(line: str) -> bool:
    return len(line.splitlines()) <= 1 and "\r" not in line and "\n" not in line


@pytest.mark.parametrize("scheme", SCHEMES)
def test_cli_keeps_every_line(scheme, hostile_file, shared_path, tmp_path):
    src, lines = hostile_file
    out = tmp_path / "out.txt"
    proc = encode(["--scheme", scheme, *scheme_options(scheme, shared_path, tmp_path), "--inputs", src,
                   "--outputs", out, "--workers", 2, "--segment-bytes", 30_000, "--quiet"])
    assert "Traceback" not in proc.stderr
    got = read_output(out)
    assert len(got) == len(lines)
    assert all(no_line_breaks(line) for line in got)
    assert all(g == "" for g, line in zip(got, lines) if not line.strip())
    if scheme == "spaces":
        check_spaces_exact(lines, got, shared_path)
    elif scheme == "bite":
        check_bite_exact(lines, got)
    elif scheme == "flota":
        vocab = set(Path(shared_path("flota_vocabs/bert-base-uncased.txt")).read_text(encoding="utf-8").split("\n"))
        assert all(p in vocab for line in got for p in line.split())
    elif scheme == "wordmap":
        from preprocess.common import flatten_line
        from preprocess.schemes.wordmap import decode_line
        # lossless up to whitespace; a literal ▁ is read as a space (it is SentencePiece's space)
        assert [" ".join(decode_line(g).split()) for g in got] == \
            [" ".join(flatten_line(line).replace("\u2581", " ").split()) for line in lines]
    else:
        pytest.fail(f"no check of {scheme}'s output on hostile lines: add one here")


def check_spaces_exact(lines, got, shared_path):
    from preprocess.common import flatten_line
    from preprocess.schemes.spaces import SpacesEncoder
    enc = SpacesEncoder(str(shared_path("space_models/unigram_prime.model")))
    sp = enc.sp
    exact = 0
    for line, pieces in zip(lines, got):
        if any(sp.piece_to_id(p) == sp.unk_id() for p in pieces.split()):
            continue   # an unknown character: SentencePiece itself decodes it as ⁇
        # a literal ▁ is SentencePiece's space, and its decoder drops the space that starts a line
        expected = sp.normalize(flatten_line(line)).replace("\u2581", " ")
        assert enc.decode(pieces) == (expected[1:] if expected.startswith(" ") else expected), line
        exact += 1
    assert exact > len(lines) // 4   # (most hostile classes contain characters this model does not know)


def check_bite_exact(lines, got):
    """Lines whose every inflected word re-inflects to itself (out of context) decode to the input, with the
    documented normalisation: line breaks and the C0 characters Moses deletes become spaces, spaces collapse."""
    from preprocess.common import flatten_line
    from preprocess.schemes.bite import MOSES_DELETED, BiteTokenizer
    bite = BiteTokenizer("moses", "nltk")
    table = str.maketrans({c: " " for c in MOSES_DELETED})
    exact = 0
    for line, encoded in zip(lines, got):
        text = " ".join(flatten_line(line).translate(table).split())
        words = bite.pretokenize(text)
        pairs = [bite._encode_word(w, t) for w, t in zip(words, bite.tagger.tag(words))] if words else []
        if any(len(p) == 2 and (p[0].lower() == "be" or bite.detokenize(list(p)) != w)
               for w, p in zip(words, pairs)):
            continue
        assert bite.detokenize(encoded.split()) == text, line
        exact += 1
    assert exact > len(lines) // 4   # (broken words such as "happ\x1bily" are often "inflected": skipped)


def test_moses_never_merges_words_around_control_characters():
    from preprocess.schemes.bite import BiteTokenizer
    bite = BiteTokenizer("moses", "nltk")
    assert bite.tokenize("x\x00y z") == ["x", "y", "z"]
    assert bite.tokenize("The dog\x01barked\x1b.") == ["The", "dog", "bark", "[VBD]", "\u2423."]
    assert bite.detokenize(bite.tokenize("The dog\x01barked\x1b.")) == "The dog barked ."   # (a space each)
    assert bite.tokenize("\x00\x01\x02") == []


# --- every fairseq adapter ----------------------------------------------------------------------------------------

def adapter_arguments(scheme: str, shared_path, tmp_path) -> list:
    """The fairseq command-line options that build ``scheme``'s adapter (every other option at its default)."""
    if scheme == "wordmap":
        opts = scheme_options("wordmap", shared_path, tmp_path)
        return ["--bpe", "wordmap", "--wordmap-vocab", opts[1], "--wordmap-spm", opts[3]]
    return {"spaces": ["--bpe", "spaces", "--spaces-model", shared_path("space_models/unigram_prime.model")],
            "flota": ["--bpe", "flota", "--flota-vocab", shared_path("flota_vocabs/bert-base-uncased.txt")],
            "bite": ["--tokenizer", "bite", "--bite-tagger", "nltk"]}[scheme]


def build_adapters(shared_path, tmp_path):
    """Every registered scheme's fairseq adapter, built as fairseq-interactive builds it: the options parsed by
    fairseq's own parser (the adapter's dataclass gives the defaults), then ``build_bpe`` / ``build_tokenizer``."""
    pytest.importorskip("fairseq")
    from fairseq.data import encoders
    adapters = {}
    for scheme in SCHEMES:
        cfg = _fairseq_config(adapter_arguments(scheme, shared_path, tmp_path))
        names = registry.get(scheme).fairseq_names()
        adapters[scheme] = (encoders.build_tokenizer(cfg.tokenizer) if "tokenizer" in names
                            else encoders.build_bpe(cfg.bpe))
        assert adapters[scheme] is not None, scheme
    return adapters


def test_adapters_encode_and_decode_every_line(shared_path, tmp_path):
    adapters = build_adapters(shared_path, tmp_path)
    lines = hostile_lines(per_class=8, seed=SEED + 1)
    for name, adapter in adapters.items():
        for line in lines:
            encoded = adapter.encode(line)
            assert no_line_breaks(encoded), (name, line)
            assert no_line_breaks(adapter.decode(encoded)), (name, line)


# --- bad files: one line, exit 2, the file named ------------------------------------------------------------------

def test_bad_files_are_one_line_errors(shared_path, tmp_path):
    rng = random.Random(SEED)
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(rng.randrange(256) for _ in range(5000)))
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    header_only = tmp_path / "header.vocab"
    from preprocess.schemes.wordmap import WordmapVocabulary
    header_only.write_text(WordmapVocabulary.HEADER + "\n", encoding="utf-8")
    good = tmp_path / "in.txt"
    good.write_text("A man sleeps.\n", encoding="utf-8")
    bad_utf8 = tmp_path / "bad.txt"
    bad_utf8.write_bytes(b"fine\nstill fine\nnot \xc3\x28 fine\n")
    spaces = scheme_options("spaces", shared_path, tmp_path)
    wordmap = scheme_options("wordmap", shared_path, tmp_path)
    bert = str(shared_path("flota_vocabs/bert-base-uncased.txt"))
    cases = [
        (["--scheme", "spaces", "--model", garbage], garbage),
        (["--scheme", "bite", "--tagger", "hanta", "--subword-model", garbage], garbage),
        (["--scheme", "flota", "--flota-vocab", garbage], garbage),
        (["--scheme", "flota", "--flota-vocab", empty], empty),
        (["--scheme", "wordmap", "--wordmap-vocab", garbage, "--wordmap-spm", wordmap[3]], garbage),
        (["--scheme", "wordmap", "--wordmap-vocab", header_only, "--wordmap-spm", wordmap[3]], header_only),
        (["--scheme", "wordmap", "--wordmap-vocab", wordmap[1], "--wordmap-spm", garbage], garbage),
    ]
    for args, named in cases:
        one_line_error(encode(args + ["--inputs", good, "--outputs", tmp_path / "o"], check=False), named)
    for scheme, opts in (("spaces", spaces), ("bite", ["--tagger", "hanta"]), ("flota", ["--flota-vocab", bert]),
                         ("wordmap", wordmap)):
        for workers in (1, 2):
            proc = encode(["--scheme", scheme, *opts, "--inputs", bad_utf8, "--outputs", tmp_path / "o",
                           "--workers", workers], check=False)
            one_line_error(proc, f"{bad_utf8}:3:")
    assert not (tmp_path / "o").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def _fairseq_config(argv):
    from fairseq import options
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    import fairseq_plugins
    user_dir = os.path.dirname(fairseq_plugins.__file__)
    parser = options.get_generation_parser(interactive=True)
    return convert_namespace_to_omegaconf(options.parse_args_and_arch(parser, ["data", "--user-dir", user_dir,
                                                                               *map(str, argv)]))


def test_adapter_option_errors_are_one_line(shared_path, tmp_path, monkeypatch, capsys):
    """A bad option or a missing model: inside a fairseq tool one line naming the option and exit 2 (not a
    traceback through fairseq's registry, not ``???``); from Python a UserError with the same message."""
    pytest.importorskip("fairseq")
    from fairseq.data import encoders

    from preprocess.common import UserError
    plain = shared_path("space_models/unigram_default.model")
    cases = [
        (["--bpe", "spaces"], "--spaces-model"),
        (["--bpe", "spaces", "--spaces-model", plain, "--spaces", "drop2"], "drop2"),
        (["--bpe", "flota"], "--flota-vocab"),
        (["--bpe", "flota", "--flota-vocab", tmp_path / "none.txt"], "none.txt"),
        (["--bpe", "flota", "--flota-vocab", shared_path("flota_vocabs/bert-base-uncased.txt"), "--flota-k", "0"],
         "k must be"),
        (["--tokenizer", "bite", "--bite-tagger", "xx"], "tagger"),
        (["--tokenizer", "bite", "--bpe", "sentencepiece", "--sentencepiece-model", plain],
         "--user-symbols bite"),
    ]

    def build(cfg):
        encoders.build_tokenizer(cfg.tokenizer)
        encoders.build_bpe(cfg.bpe)

    for args, fragment in cases:
        cfg = _fairseq_config(args)
        with pytest.raises(UserError, match=fragment.replace("-", "\\-")) as err:
            build(cfg)
        assert "???" not in str(err.value)
        monkeypatch.setattr("sys.argv", ["fairseq-interactive"])
        capsys.readouterr()
        with pytest.raises(SystemExit) as exit_info:
            build(cfg)
        monkeypatch.undo()
        assert exit_info.value.code == 2
        errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and fragment in errors[0], errors


def test_bite_tokenizer_accepts_a_model_with_the_symbols(tmp_path):
    from preprocess.common import UserError
    from preprocess.models.spm import named_user_symbols, train
    from preprocess.schemes.bite import check_subword_model
    corpus = tmp_path / "c.txt"
    corpus.write_text("The dog [NNS] bark [VBD] .\nA man walk [VBZ] home .\n" * 200, encoding="utf-8")
    soft = {"hard_vocab_limit": False}
    plain = train([str(corpus)], str(tmp_path / "plain"), vocab_size=40, num_threads=1, extra_options=soft)
    with_symbols = train([str(corpus)], str(tmp_path / "sym"), vocab_size=60, num_threads=1, extra_options=soft,
                         extra_symbols=named_user_symbols("bite"))
    check_subword_model(with_symbols)
    with pytest.raises(UserError, match="--user-symbols bite"):
        check_subword_model(plain)


# --- long tokens: time grows linearly for every tagger path ---------------------------------------------------------

def _best_time(fn, make_input, repeat=3) -> float:
    """The least CPU time of this process over ``repeat`` calls: CPU time, not wall time, so that other work on the
    machine (a loaded CI, the other test workers) does not stretch one timing and not the other."""
    best = float("inf")
    for i in range(repeat):
        x = make_input(i)
        t0 = time.process_time()
        fn(x)
        best = min(best, time.process_time() - t0)
    return best


def _token(n: int, seed: int) -> str:
    rng = random.Random(seed * 1000 + n)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))


@pytest.mark.parametrize("path", ["bite-nltk-moses", "bite-nltk-bert", "bite-nltk-whitespace", "bite-hanta-moses",
                                  "bite-hanta-whitespace", "wordmap-hanta"])
def test_long_token_time_grows_linearly(path, shared_path, tmp_path):
    if path.startswith("bite"):
        from preprocess.schemes.bite import BiteTokenizer
        _, tagger, pretok = path.split("-")
        bite = BiteTokenizer(pretok, tagger)
        bite.tokenize("The dogs were barking .")
        fn = lambda token: bite.tokenize(f"The dogs {token} were barking .")   # noqa: E731
    else:
        from preprocess.schemes.wordmap import WordmapTokenizer
        opts = scheme_options("wordmap", shared_path, tmp_path)
        wm = WordmapTokenizer(opts[1], opts[3])
        wm.encode_line("Die Hunde bellen laut .")
        fn = lambda token: wm.encode_line(f"Die Hunde {token} bellen laut .")   # noqa: E731
    short = _best_time(fn, lambda i: _token(1_000, i))
    long = _best_time(fn, lambda i: _token(10_000, i))
    # linear: about 10x; the quadratic HanTa analysis once gave about 100x (800 -> 3,200 characters: 19x)
    assert long / max(short, 1e-4) < 35, (short, long)


# --- property-based fuzzing through the public encode API ------------------------------------------------------------
# `make test`: a fixed seed (derandomize) and a small budget; `make fuzz` (MORPHTOK_FUZZ_EXAMPLES=N) a long one.

try:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
except ImportError:   # scripts/install.sh installs it; without it only these tests are skipped
    st = None
needs_hypothesis = pytest.mark.skipif(st is None, reason="hypothesis not installed (scripts/install.sh installs it)")

FUZZ_EXAMPLES = int(os.environ.get("MORPHTOK_FUZZ_EXAMPLES", "0") or 0)

if st is not None:
    FUZZ = settings(max_examples=FUZZ_EXAMPLES or 30, derandomize=not FUZZ_EXAMPLES, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    #: pieces of hostile text: words, BITE symbols and their full-width look-alikes, subword marks, controls, line
    #: breaks inside a line, combining marks, zero-width characters, emoji, compatibility characters NFKC folds
    _PIECES = st.sampled_from(ALPHA.split() + [
        "[NNS]", "[VBD]", "[VBZ]", "[", "]", "\uff3b", "\uff3d", "\uff3bNNS\uff3d", "[x", "NNS]", "\u2581", "##",
        "\u0120", "\u29f5", "\u2423", "\u266e", "\u2040", "\x00", "\x1b", "\t", "\r", "\x0b", "\x85", "\u2028",
        "\u0301", "\u200b", "\ufeff", "\U0001f415", "\ufb01", "\u2460", "\uff21", "\u00bd", "caf\u00e9",
        "Ma\u0308nner", "<unk>", "</s>", "'s", "n't", "...", "\u00a0", "\u3000", " ", "  "])
    _TEXT = st.lists(st.one_of(_PIECES, st.text(st.characters(exclude_categories=("Cs",)), max_size=6)),
                     max_size=12).map("".join)
    LINES = st.lists(_TEXT, max_size=6)


@pytest.fixture(scope="module")
def public_encoders(tmp_path_factory):
    """Every scheme's LineEncoder, built as preprocess.encode builds it (``make_encoder`` of the parsed options)."""
    from conftest import SHARED
    from preprocess import registry
    from preprocess.encode import build_parser
    if not (SHARED / "space_models").exists() or not (SHARED / "flota_vocabs").exists():
        pytest.skip("shared models missing")
    tmp = tmp_path_factory.mktemp("fuzz-models")
    encoders = {}
    for scheme in SCHEMES:
        opts = scheme_options(scheme, lambda rel: SHARED / rel, tmp)
        args = build_parser(scheme).parse_args(["--scheme", scheme, *map(str, opts), "--inputs", "x",
                                                "--outputs", "y"])
        encoders[scheme] = registry.get(scheme).make_encoder(args)
    return encoders


def _encode_or_user_error(encoder, lines):
    from preprocess.common import UserError
    try:
        return encoder.encode_lines(list(lines))
    except UserError:   # the project's one-line error is the only exception allowed
        return None


def _bite_lossless(line: str, encoded: str) -> None:
    from preprocess.common import flatten_line
    from preprocess.schemes.bite import MOSES_DELETED, BiteTokenizer
    global _BITE
    try:
        bite = _BITE
    except NameError:
        bite = _BITE = BiteTokenizer("moses", "nltk")
    text = " ".join(flatten_line(line).translate(str.maketrans({c: " " for c in MOSES_DELETED})).split())
    words = bite.pretokenize(text)
    pairs = [bite._encode_word(w, t) for w, t in zip(words, bite.tagger.tag(words))] if words else []
    if any(len(p) == 2 and (p[0].lower() == "be" or bite.detokenize(list(p)) != w) for w, p in zip(words, pairs)):
        return   # a word that does not re-inflect to itself out of context: BITE is lossy there by design
    assert bite.detokenize(encoded.split()) == text, (line, encoded)


def _check_lossless(scheme: str, encoder, line: str, encoded: str) -> None:
    from preprocess.common import flatten_line
    if scheme == "spaces":
        sp = encoder.sp
        if any(sp.piece_to_id(p) == sp.unk_id() for p in encoded.split()):
            return   # an unknown character: SentencePiece itself decodes it as ⁇
        expected = sp.normalize(flatten_line(line)).replace("\u2581", " ")
        assert encoder.decode(encoded) == (expected[1:] if expected.startswith(" ") else expected), line
    elif scheme == "wordmap":
        from preprocess.schemes.wordmap import decode_line
        assert " ".join(decode_line(encoded).split()) == \
            " ".join(flatten_line(line).replace("\u2581", " ").split()), line
    elif scheme == "bite":
        _bite_lossless(line, encoded)


@needs_hypothesis
@pytest.mark.parametrize("scheme", SCHEMES)
def test_hypothesis_every_scheme_keeps_lines_and_round_trips(scheme, public_encoders):
    encoder = public_encoders[scheme]

    @FUZZ
    @given(LINES)
    def check(lines):
        out = _encode_or_user_error(encoder, lines)
        if out is None:
            return
        assert len(out) == len(lines)
        for line, encoded in zip(lines, out):
            assert no_line_breaks(encoded), (line, encoded)
            if not line.strip():
                assert encoded == "", line
            _check_lossless(scheme, encoder, line, encoded)
    check()


@needs_hypothesis
def test_hypothesis_files_keep_their_lines_for_any_worker_count(public_encoders, tmp_path_factory):
    """Random bytes (UTF-8 text, CRLF, NUL, a missing final newline) through FileEncoder: one output line per
    input line, the same bytes for 1 and 3 workers, or a one-line UserError (invalid UTF-8)."""
    from preprocess.common import UserError
    from preprocess.encode import FileEncoder, file_options
    encoder = public_encoders["spaces"]
    tmp = tmp_path_factory.mktemp("fuzz-files")
    chunk = st.one_of(_TEXT.map(lambda s: s.encode("utf-8")), st.sampled_from([b"\n", b"\r\n", b"\x00", b"\xff"]))

    @FUZZ
    @given(st.lists(chunk, max_size=40).map(b"".join))
    def check(data):
        src = tmp / "in.txt"
        src.write_bytes(data)
        outputs = []
        for workers in (1, 3):
            args = file_options(workers=workers, chunk_size=2)
            args.segment_bytes = 8
            dst = tmp / f"out{workers}.txt"
            try:
                with FileEncoder(args, lambda: encoder) as enc:
                    n = enc.encode_file(str(src), str(dst))
            except UserError as exc:
                assert "invalid UTF-8" in str(exc) and b"\xff" in data
                assert not dst.exists()
                outputs.append(None)
                continue
            lines = data.count(b"\n") + (not data.endswith(b"\n") and data != b"")
            assert n == lines
            assert dst.read_bytes().count(b"\n") == lines
            outputs.append(dst.read_bytes())
            dst.unlink()
        assert outputs[0] == outputs[1]
        assert sorted(p.name for p in tmp.iterdir()) == ["in.txt"]
    check()


# --- doubling tests: time linear in line length and in token length, every scheme -----------------------------------

def _words_line(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(ALPHA.split()) + ("s" if rng.random() < 0.3 else "") + _token(rng.randrange(1, 4),
                                                                                           seed * 7 + i)
                    for i in range(n))


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("what", ["line", "token"])
def test_time_grows_linearly_in_line_and_token_length(what, scheme, public_encoders):
    """n vs 4n words on a line, and a token of n vs 4n characters: linear gives about 4x, quadratic 16x.
    A ratio of best-of-three timings inside one test (no wall-clock limit); fresh text for every timing, so
    caches do not hide the work."""
    encoder = public_encoders[scheme]
    if what == "line":
        make = lambda n: (lambda i: [_words_line(n, 1000 * n + i)])   # noqa: E731
        small = 200 if scheme == "wordmap" else 1_000   # (HanTa: about 1 ms a new word)
    else:
        make = lambda n: (lambda i: [f"The dogs {_token(n, i)} were barking ."])   # noqa: E731
        small = 2_000
    encoder.encode_lines(make(50)(99))   # warm up (lazy loading)
    assert _growth(encoder.encode_lines, make, small) < 10


def _growth(fn, make, small: int) -> float:
    """Time of ``fn`` on ``make(4n)`` over its time on ``make(n)`` (best of three each; n grown from ``small``
    until one timing is above the noise of sub-millisecond runs)."""
    short = _best_time(fn, make(small))
    while short < 0.02 and small < 200_000:
        small *= 2
        short = _best_time(fn, make(small))
    return _best_time(fn, make(4 * small)) / short


def test_growth_check_catches_a_quadratic_encoder():
    """The doubling check can fail: a pairwise comparison of characters gives about 16x, a single pass 4x."""
    def quadratic(lines):
        return [str(sum(a == b for a in line for b in line)) for line in lines]   # all pairs: the n^2 term dominates

    def linear(lines):
        return [str(sum(c == "a" for c in line)) for line in lines]

    make = lambda n: (lambda i: [_token(n, i)])   # noqa: E731
    assert _growth(quadratic, make, 200) > 10
    assert _growth(linear, make, 200) < 10
