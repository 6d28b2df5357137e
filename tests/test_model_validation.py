"""Models and vocabularies are checked when they are loaded.

A SentencePiece model cut at any byte, protobuf field boundaries included, fails at load with one line naming
the file, wherever the project loads one (``--model``, ``--subword-model``, ``--wordmap-spm``, ``--flota-vocab``,
``spm dict``); text vocabularies (FLOTA lists, ``dict.txt``, ``.vocab``, the Wordmap vocabulary) cut inside a line
and JSON vocabularies cut anywhere likewise.  Before the change, a model cut between two top-level fields loaded
silently with fewer pieces or default normalisation.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from conftest import REPO, cli_env, require_shared
from preprocess import registry
from preprocess.common import UserError
from preprocess.models.spm import load_model, train
from preprocess.models.spm_model import _varint

WORDS = ("the dog dogs cat cats walk walked walking run runs ran man men woman women child children play played "
         "street streets red blue green small big happy over under near a an two three on in at with").split()


def field_boundaries(data: bytes, start: int = 0, end: int | None = None, depth: int = 2) -> set:
    """Every position where a protobuf field starts or ends, at the top level and ``depth - 1`` levels into
    length-delimited fields that parse as messages (the specs, each piece)."""
    end = len(data) if end is None else end
    out = {start, end}
    pos = start
    try:
        while pos < end:
            key, pos = _varint(data, pos)
            wire = key & 7
            if wire == 0:
                _, pos = _varint(data, pos)
            elif wire == 2:
                size, pos = _varint(data, pos)
                if depth > 1:
                    out |= field_boundaries(data, pos, pos + size, depth - 1)
                pos += size
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
            else:
                return out   # not a message (a string): only its ends count
            out.add(pos)
    except ValueError:   # the data ends inside a varint
        pass
    return {p for p in out if start <= p <= end}


@pytest.fixture(scope="module")
def small_model(tmp_path_factory):
    """A 60-piece unigram model trained here (no shared data needed)."""
    tmp = tmp_path_factory.mktemp("spm")
    rng = random.Random(1)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(400)]
    (tmp / "text.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return train([str(tmp / "text.txt")], str(tmp / "m"), vocab_size=60, seed=1,
                 extra_options={"hard_vocab_limit": False})


def assert_one_line_user_error(path, fn):
    with pytest.raises(UserError) as exc:
        fn(str(path))
    message = str(exc.value)
    assert "\n" not in message and str(path) in message, message
    return message


def cut_points(data: bytes, every_byte_below: int) -> list:
    """Every byte position below ``every_byte_below``, every field boundary, and a spread of others."""
    points = set(range(min(every_byte_below, len(data))))
    points |= field_boundaries(data)
    points |= {p + d for p in field_boundaries(data) for d in (-1, 1)}
    points |= set(range(0, len(data), 997))
    return sorted(p for p in points if 0 <= p < len(data))


def test_complete_models_load(small_model):
    top = field_boundaries(open(small_model, "rb").read(), depth=1)
    assert load_model(small_model).get_piece_size() == len(top) - 3   # (position 0, the two specs)
    shared = SHARED_MODEL()
    if shared is not None:
        assert load_model(str(shared)).get_piece_size() == 16000


def SHARED_MODEL():
    from conftest import SHARED
    path = SHARED / "space_models" / "unigram_default.model"
    return path if path.exists() else None


def test_a_small_model_cut_at_every_byte_fails_in_one_line(small_model, tmp_path):
    data = open(small_model, "rb").read()
    # the pieces and the trainer_spec come first: every byte of them; the normalizer_spec (its character map is
    # large) at its field boundaries and a spread of bytes
    top = sorted(field_boundaries(data, depth=1))
    assert len(top) - 3 >= 50   # pieces
    points = cut_points(data, every_byte_below=top[-2] + 64)
    assert len(points) > 500
    cut = tmp_path / "cut.model"
    for n in points:
        cut.write_bytes(data[:n])
        assert_one_line_user_error(cut, load_model)


def test_the_shared_model_cut_at_field_boundaries_fails(tmp_path):
    """The paper's 16k model: every top-level boundary of the last 40 pieces and the specs, every 400th piece,
    and cuts inside the specs.  (Before the change each boundary cut loaded, 7,999 or 16,000 pieces.)"""
    shared = SHARED_MODEL() or require_shared("space_models/unigram_default.model")
    data = shared.read_bytes()
    top = sorted(field_boundaries(data, depth=1))
    assert len(top) == 16000 + 2 + 1   # 16000 pieces, trainer_spec, normalizer_spec, plus position 0
    points = set(top[:-1:400]) | set(top[-44:-1])
    inner = sorted(field_boundaries(data, top[-3], len(data)))   # inside the two specs, nested boundaries
    points |= set(inner[:-1:max(1, len(inner) // 60)])
    cut = tmp_path / "cut.model"
    for n in sorted(points):
        cut.write_bytes(data[:n])
        assert_one_line_user_error(cut, load_model)


# --- through the command lines -------------------------------------------------------------------------------

def run(module, *args, stdin="the dogs walked\n"):
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], input=stdin, env=cli_env(), cwd=REPO,
                          capture_output=True, text=True)


def one_line(proc, path):
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if " lines" not in line]   # (progress bar)
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(path) in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.fixture(scope="module")
def cut_model(small_model, tmp_path_factory):
    """The small model cut exactly before its normalizer_spec: it loaded before the change (with no
    normalisation at all)."""
    data = open(small_model, "rb").read()
    top = sorted(field_boundaries(data, depth=1))
    path = tmp_path_factory.mktemp("cut") / "cut.model"
    path.write_bytes(data[:top[-2]])
    return path


@pytest.fixture(scope="module")
def wordmap_vocab(tmp_path_factory):
    from preprocess.schemes.wordmap import WordmapVocabulary
    path = tmp_path_factory.mktemp("wm") / "wordmap.vocab"
    WordmapVocabulary({"en": 40, "t": 30, "st": 20}, {"spiel": 12, "mach": 10, "geh": 9}).save(str(path))
    return path


@pytest.mark.parametrize("scheme", registry.names())
def test_encode_refuses_a_cut_model(scheme, cut_model, wordmap_vocab, tmp_path):
    """Every registered scheme, its SentencePiece model (FLOTA: its vocabulary, which may be one) cut short."""
    opts = {"spaces": ["--model", cut_model],
            "bite": ["--subword-model", cut_model, "--pretokenizer", "whitespace", "--tagger", "hanta"],
            "wordmap": ["--wordmap-vocab", wordmap_vocab, "--wordmap-spm", cut_model],
            "flota": ["--flota-vocab", cut_model]}.get(scheme)
    if opts is None:
        pytest.fail(f"no cut-model case for the scheme {scheme}: add its model option here")
    out = tmp_path / "out.txt"
    proc = run("preprocess.encode", "--scheme", scheme, *opts, "--inputs", "-", "--outputs", out)
    one_line(proc, cut_model)
    assert not out.exists()


def test_dict_commands_refuse_a_cut_model(cut_model, tmp_path):
    one_line(run("preprocess.models.spm", "dict", "--model", cut_model, "--output", tmp_path / "a.txt"), cut_model)
    one_line(run("preprocess.schemes.flota", "dict", "--vocab", cut_model, "--output", tmp_path / "b.txt"), cut_model)
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists()


# --- text and JSON vocabularies --------------------------------------------------------------------------------

def _cuts_inside_lines(data: bytes, n: int = 80) -> list:
    """Cut points inside lines (not right after a line break), spread over the file, the end included."""
    inside = [p for p in range(1, len(data)) if data[p - 1:p] != b"\n"]
    step = max(1, len(inside) // n)
    return sorted(set(inside[::step]) | set(inside[-5:]))


@pytest.mark.parametrize("kind", ["list", "fairseq", "spm-vocab", "json", "tokenizer-json"])
def test_flota_vocabularies_cut_inside_fail(kind, tmp_path):
    from preprocess.models.vocabularies import load_vocab
    tokens = ["[PAD]", "[UNK]", "the", "dog", "##s", "walk", "##ed", "café", "12", "##34"] + \
        [f"w{i}" for i in range(40)]
    if kind == "list":
        name, text = "vocab.txt", "".join(t + "\n" for t in tokens)
    elif kind == "fairseq":
        name, text = "dict.txt", "".join(f"{t} {1000 - i}\n" for i, t in enumerate(tokens))
    elif kind == "spm-vocab":
        name, text = "m.vocab", "".join(f"{t}\t-{i}.25\n" for i, t in enumerate(tokens))
    elif kind == "json":
        name, text = "encoder.json", json.dumps({t: i for i, t in enumerate(tokens)}) + "\n"
    else:
        name, text = "tokenizer.json", json.dumps({"model": {"type": "WordPiece", "unk_token": "[UNK]",
                                                             "vocab": {t: i for i, t in enumerate(tokens)}}})
    data = text.encode("utf-8")
    path = tmp_path / name
    path.write_bytes(data)
    assert len(load_vocab(str(path)).tokens) == len(tokens)
    for n in _cuts_inside_lines(data):
        if kind.endswith("json") and data[n:].strip() == b"":
            continue   # only whitespace after the document is cut: nothing lost
        path.write_bytes(data[:n])
        assert_one_line_user_error(path, load_vocab)


def test_wordmap_vocabulary_cut_inside_a_line_fails(wordmap_vocab, tmp_path):
    from preprocess.schemes.wordmap import WordmapVocabulary
    data = wordmap_vocab.read_bytes()
    assert len(WordmapVocabulary.load(str(wordmap_vocab))) == 6
    path = tmp_path / "cut.vocab"
    for n in _cuts_inside_lines(data, n=len(data)):
        path.write_bytes(data[:n])
        assert_one_line_user_error(path, WordmapVocabulary.load)


def test_evaluation_loads_models_through_the_one_loader(cut_model, tmp_path):
    """``preprocess.evaluate.bite complexity`` loaded its models with SentencePiece directly (a cut model was
    scored silently); it now goes through ``preprocess.models.spm.load_model``."""
    words = tmp_path / "words.txt"
    words.write_text("dogs\nwalked\n", encoding="utf-8")
    one_line(run("preprocess.evaluate.bite", "complexity", "--models", cut_model, "--words", words), cut_model)
