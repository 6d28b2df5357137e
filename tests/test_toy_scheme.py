"""docs/adding-a-scheme.md, proven: a fifth scheme (characters) is three new files in a package of its own (the
preprocess layer with its descriptor, the fairseq adapter, the recipe class), found through ``MORPHTOK_SCHEMES``
without an edit to this project, and every consumer of the registry takes it: the encode CLI, binarize (on a
tiny slice), the Hugging Face export, the fairseq adapters and morphtok-translate's option guard."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest

from preprocess import registry
from preprocess.common import UserError

PACKAGE = "morphtok_toy"

#: the preprocess layer: options, encoder, Hugging Face export and the scheme's one declaration
CHARS = '''
"""``chars``: every character its own token, ``▁`` for a space (a toy fifth scheme)."""
from dataclasses import dataclass

from preprocess.common import UserError
from preprocess.options import option
from preprocess.registry import SchemeDescriptor

SPACE = "\\u2581"


@dataclass
class CharsOptions:
    chars_lowercase: bool = option(False, "lower-case the text first")


class CharsEncoder:
    def __init__(self, lowercase=False):
        self.lowercase = lowercase

    def encode_line(self, line):
        text = " ".join(line.split())
        return " ".join((text.lower() if self.lowercase else text).replace(" ", SPACE))

    def encode_lines(self, lines):
        return [self.encode_line(line) for line in lines]


def make_encoder(args):
    return CharsEncoder(bool(args.chars_lowercase))


def write_tokenizer_json(args, out_dir, dictionary, scheme="chars"):
    import os

    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    from preprocess.hf_export import DICT_FILE, fairseq_ids
    from preprocess.spm import write_dict

    if dictionary is None:
        raise UserError("export --scheme chars needs --dict (the dict.txt binarize wrote)")
    tok = Tokenizer(models.WordLevel(fairseq_ids(dictionary), unk_token="<unk>"))
    steps = [normalizers.Replace(Regex(r"\\s+"), " "), normalizers.Strip()]
    steps += [normalizers.Lowercase()] if args.chars_lowercase else []
    tok.normalizer = normalizers.Sequence(steps + [normalizers.Replace(" ", SPACE)])
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    path = os.path.join(out_dir, "tokenizer.json")
    tok.save(path)
    write_dict(list(dictionary), os.path.join(out_dir, DICT_FILE))
    return [path, os.path.join(out_dir, DICT_FILE)]


SCHEME = SchemeDescriptor(
    name="chars",
    options=CharsOptions,
    make_encoder=make_encoder,
    fairseq_bpe="chars",
    adapter="morphtok_toy.chars_fairseq",
    hf_export="morphtok_toy.chars:write_tokenizer_json",
    recipe="morphtok_toy.chars_recipe:CharsScheme",
)
'''

#: the fairseq adapter: --bpe chars, its config derived from the same options dataclass
CHARS_FAIRSEQ = '''
from fairseq.data.encoders import register_bpe
from fairseq.dataclass import FairseqDataclass

from morphtok_toy.chars import SPACE, CharsOptions, make_encoder
from preprocess.options import fairseq_config

CharsBPEConfig = fairseq_config(CharsOptions, "CharsBPEConfig", FairseqDataclass)


@register_bpe("chars", dataclass=CharsBPEConfig)
class CharsBPE:
    def __init__(self, cfg):
        self.encoder = make_encoder(cfg)

    def encode(self, x):
        return self.encoder.encode_line(x)

    def decode(self, x):
        return x.replace(" ", "").replace(SPACE, " ").strip()

    def is_beginning_of_word(self, x):
        return x == SPACE or x.startswith("<")
'''

#: the recipe: learn a dictionary, encode, decode arguments for fairseq-generate
CHARS_RECIPE = '''
import functools

from morphtok_toy.chars import CharsOptions, make_encoder
from preprocess.inputs import read_lines
from preprocess.options import to_args
from preprocess.spm import write_dict
from train_scripts.schemes import Scheme


class CharsScheme(Scheme):
    Options = CharsOptions

    def learn(self, train, workers=1, quiet=True):
        encoder = make_encoder(self.options)
        chars = dict.fromkeys(c for lang in self.langs for line in read_lines(train[lang])
                              for c in encoder.encode_line(line).split())
        write_dict(list(chars), self.path("chars.dict.txt"))

    def encoder(self, lang, workers=1):
        return functools.partial(make_encoder, self.options)

    def dictionary(self, lang):
        return self.path("chars.dict.txt")

    def decode_args(self, lang):
        return ["--bpe", "chars", *to_args(self.options)]
'''

FILES = {"chars.py": CHARS, "chars_fairseq.py": CHARS_FAIRSEQ, "chars_recipe.py": CHARS_RECIPE}
LINE = "Two  young Dogs  play ."


def _write_package(root):
    """The three files, in a namespace package (no ``__init__.py``) under ``root``."""
    (root / PACKAGE).mkdir(parents=True)
    for name, text in FILES.items():
        (root / PACKAGE / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def _forget_package():
    registry.reset()
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The three files on the path, named by ``MORPHTOK_SCHEMES`` (for this process and the commands it runs)."""
    root = _write_package(tmp_path / "site")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("PYTHONPATH", str(root))
    monkeypatch.setenv(registry.ENV, PACKAGE)
    registry.reset()
    yield root
    monkeypatch.undo()
    _forget_package()


def test_three_files_make_a_scheme(toy):
    assert sorted(p.name for p in (toy / PACKAGE).iterdir()) == sorted(FILES)
    assert "chars" in registry.names() and "chars" in registry.recipe_names()
    descriptor = registry.get("chars")
    assert descriptor.recipe_class().name == "chars"
    assert descriptor.make_encoder(descriptor.options(chars_lowercase=True)).encode_line(LINE) == \
        " ".join("two young dogs play .".replace(" ", "\u2581"))


def test_encode_cli(toy, tmp_path, run_cli):
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text(f"{LINE}\n\n", encoding="utf-8")
    assert "--chars-lowercase" in run_cli(["python", "-m", "preprocess.encode", "--scheme", "chars", "--help"]).stdout
    run_cli(["python", "-m", "preprocess.encode", "--scheme", "chars", "--chars-lowercase", "--inputs", src,
             "--outputs", dst, "--quiet", "--workers", "2"])
    assert dst.read_text(encoding="utf-8") == " ".join("two young dogs play .".replace(" ", "\u2581")) + "\n\n"


@pytest.mark.slow   # fairseq-preprocess and the export each start fairseq / transformers: about 10 s
def test_binarize_and_export(toy, tmp_path, run_cli):
    from tests.conftest import multi30k_slice

    raw = multi30k_slice(tmp_path / "raw", 40, 8, 5)
    out = tmp_path / "work"
    run_cli(["python", "-m", "train_scripts.binarize", "--scheme", "chars", "--data", raw, "--out", out])
    info = json.loads((out / "binarize.json").read_text(encoding="utf-8"))
    assert info["generate_args"] == ["--bpe", "chars"] and info["config"] == {"scheme": "chars",
                                                                              "chars_lowercase": False}
    first = (raw / "test.en").read_text(encoding="utf-8").split("\n")[0]
    pieces = (out / "tok" / "test.en").read_text(encoding="utf-8").split("\n")[0]
    assert pieces == " ".join(" ".join(first.split()).replace(" ", "\u2581"))
    assert (out / "data-bin" / "test.en-de.en.bin").is_file()

    # the Hugging Face export: the scheme's own tokenizer.json writer, the dictionary binarize wrote
    hf = tmp_path / "hf"
    run_cli(["python", "-m", "preprocess.export", "--scheme", "chars", "--dict", out / "models" / "chars.dict.txt",
             "--out", hf])
    from tokenizers import Tokenizer

    from preprocess.hf_export import fairseq_ids, read_fairseq_dict
    encoding = Tokenizer.from_file(str(hf / "tokenizer.json")).encode(first)
    assert encoding.tokens == pieces.split()
    assert encoding.ids == [fairseq_ids(read_fairseq_dict(str(out / "models" / "chars.dict.txt")))[t]
                            for t in pieces.split()]



def test_translate_refuses_the_schemes_options(toy):
    """morphtok-translate's guard: the toy's options come from binarize.json, per side, never by hand."""
    from train_scripts.translate import refuse_encoding_options
    for option in ("--chars-lowercase", "--no-chars-lowercase", "--chars-anything=1"):
        with pytest.raises(UserError, match="binarize.json"):
            refuse_encoding_options([option])


@pytest.mark.slow   # importing fairseq in a fresh process: about 5-10 s
def test_fairseq_adapter_is_registered(toy, run_cli):
    """``--user-dir fairseq_plugins`` imports the adapter the descriptor names: ``--bpe chars`` encodes and
    decodes."""
    code = ("import argparse, fairseq_plugins\n"
            "from fairseq.data import encoders\n"
            "bpe = encoders.build_bpe(argparse.Namespace(bpe='chars', chars_lowercase=False))\n"
            f"x = bpe.encode({LINE!r})\n"
            "print(x)\n"
            "print(bpe.decode(x))\n")
    lines = run_cli(["python", "-c", code]).stdout.splitlines()
    assert lines == [" ".join(" ".join(LINE.split()).replace(" ", "\u2581")), " ".join(LINE.split())]


def test_entry_point_discovery(tmp_path, monkeypatch):
    """An installed distribution's ``morphtok.schemes`` entry point is a scheme too (no environment variable)."""
    root = _write_package(tmp_path / "site")
    dist = root / "morphtok_toy-0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: morphtok-toy\nVersion: 0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(f"[{registry.ENTRY_POINT_GROUP}]\nchars = {PACKAGE}.chars\n",
                                           encoding="utf-8")
    monkeypatch.delenv(registry.ENV, raising=False)
    monkeypatch.syspath_prepend(str(root))
    registry.reset()
    try:
        assert "chars" in registry.names()
        assert registry.get("chars").recipe == f"{PACKAGE}.chars_recipe:CharsScheme"
    finally:
        monkeypatch.undo()
        _forget_package()
    assert "chars" not in registry.names()
