"""The scheme options as the command lines see them: sequences parsed as sequences, booleans settable both ways,
defaults printed readably."""
from __future__ import annotations

import dataclasses
import typing

import pytest

from preprocess import registry
from preprocess.common import UserError
from preprocess.models.spm import SpmOptions
from preprocess.options import field_kind as _field_type
from train_scripts import binarize
from train_scripts.schemes import make_options, make_scheme

#: recipe name -> recipe class, from the one registry
SCHEMES = registry.recipes()


def _fields(kind):
    """(scheme, field) for every scheme option of this kind ("list" or bool)."""
    out = []
    for name, cls in sorted(SCHEMES.items()):
        hints = typing.get_type_hints(cls.Options)
        out += [(name, f) for f in dataclasses.fields(cls.Options) if _field_type(f, hints) == kind
                or _field_type(f, hints) is kind]
    return out


SEQUENCE_OPTIONS = _fields("list")
BOOL_OPTIONS = _fields(bool)


def _parse(scheme, *extra):
    return binarize.parse_args(["--scheme", scheme, "--data", "d", "--out", "o", *extra])[1]


def test_every_scheme_with_a_language_option_is_covered():
    names = {f.name for _, f in SEQUENCE_OPTIONS}
    assert {"bite_langs", "flota_langs", "wordmap_langs"} <= names


@pytest.mark.parametrize("scheme,f", SEQUENCE_OPTIONS, ids=[f"{s}-{f.name}" for s, f in SEQUENCE_OPTIONS])
def test_sequence_option_parsed_as_a_sequence(scheme, f):
    flag = "--" + f.name.replace("_", "-")
    assert _parse(scheme, flag, "en")[f.name] == ("en",)  # not ('e', 'n')
    assert _parse(scheme, flag, "en,de")[f.name] == ("en", "de")
    assert make_options(SCHEMES[scheme].Options, {f.name: "de"}).__dict__[f.name] == ("de",)
    assert make_options(SCHEMES[scheme].Options, {f.name: ["de"]}).__dict__[f.name] == ("de",)  # binarize.json


@pytest.mark.parametrize("scheme,f", BOOL_OPTIONS, ids=[f"{s}-{f.name}" for s, f in BOOL_OPTIONS])
def test_boolean_option_settable_both_ways(scheme, f):
    flag = f.name.replace("_", "-")
    assert _parse(scheme, f"--{flag}")[f.name] is True
    assert _parse(scheme, f"--no-{flag}")[f.name] is False
    assert _parse(scheme)[f.name] is f.default


@pytest.mark.parametrize("scheme,lang", [("bite", "en"), ("flota", "en"), ("wordmap", "de")])
def test_language_option_applies_the_scheme_to_that_language(scheme, lang, tmp_path):
    config = _parse(scheme, f"--{scheme}-langs", lang)
    s = make_scheme(config, ("en", "de"), str(tmp_path))
    assert s.applies(lang)
    assert not s.applies({"en": "de", "de": "en"}[lang])


def test_help_prints_sequence_defaults_readably(capsys):
    with pytest.raises(SystemExit):
        binarize.parse_args(["--scheme", "bite", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: en)" in out and "('en',)" not in out
    assert "--bite-single-char, --no-bite-single-char" in out


# --- one declaration per option: encode CLI, fairseq adapter, recipes ------------------------------------------

def _adapters() -> dict:
    """scheme -> (fairseq registry, name): the ``--bpe``/``--tokenizer`` each scheme's descriptor says its adapter
    registers (every one of them must be registered)."""
    from fairseq import registry as fairseq_registry

    import fairseq_plugins  # noqa: F401  registers the adapters

    out = {}
    for d in registry.descriptors():
        for kind, name in d.fairseq_names().items():
            assert name in fairseq_registry.REGISTRIES[kind]["dataclass_registry"], (d.name, kind, name)
            out[d.name] = (kind, name)
    return out


ADAPTERS = _adapters()
#: options of the encode CLI only (a recipe computes the files its descriptor names from what it learned)
ENCODE_ONLY = {"noise_p", "noise_seed", "training_text"}
#: schemes whose options are not derived from one dataclass yet: the known disagreement
ADAPTER_GAPS: dict = {}
RECIPE_GAPS: dict = {}
#: adapter options with no encode CLI counterpart (the encode CLI writes BITE's word form unless given a model)
ADAPTER_ONLY = {"bite_word_format"}


def _none(value):
    return None if value in ("", "???") else value


def encode_options(scheme):
    import argparse

    group = argparse.ArgumentParser().add_argument_group("x")
    registry.get(scheme).add_encoder_args(group)
    return {a.dest: _none(a.default) for a in group._group_actions if a.dest not in ENCODE_ONLY}


def adapter_options(scheme):
    from fairseq import registry

    import fairseq_plugins  # noqa: F401  registers the adapters

    kind, name = ADAPTERS[scheme]
    config = registry.REGISTRIES[kind]["dataclass_registry"][name]
    return {f.name: _none(f.default) for f in dataclasses.fields(config) if f.name not in ("_name", *ADAPTER_ONLY)}


def _params(gaps):
    return [pytest.param(s, marks=pytest.mark.xfail(reason=gaps[s], strict=True)) if s in gaps else s
            for s in sorted(ADAPTERS)]


@pytest.mark.parametrize("scheme", _params(ADAPTER_GAPS))
def test_encode_cli_and_fairseq_adapter_share_names_and_defaults(scheme):
    assert adapter_options(scheme).items() <= encode_options(scheme).items()


@pytest.mark.parametrize("scheme", _params(RECIPE_GAPS))
def test_recipes_reach_every_encode_option_with_its_default(scheme):
    recipe = {f.name: f.default if f.default is not dataclasses.MISSING else f.default_factory()
              for f in dataclasses.fields(SCHEMES[scheme].Options)}
    computed = set(registry.get(scheme).files) - set(recipe)
    wanted = {k: v for k, v in encode_options(scheme).items() if k not in computed}
    assert wanted.items() <= recipe.items()


def test_flota_decode_args_carry_every_non_default_option(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n##c\n", encoding="utf-8")
    s = make_scheme({"scheme": "flota", "flota_vocab": str(vocab), "flota_style": "wordpiece", "flota_unk": "[UNK]",
                     "flota_strict": True, "flota_case": "lower"}, ("en", "de"), str(tmp_path))
    assert s.decode_args("en") == ["--bpe", "flota", "--flota-vocab", str(vocab), "--flota-style", "wordpiece",
                                   "--flota-k", "3", "--flota-mode", "flota", "--flota-strict", "--flota-unk",
                                   "[UNK]", "--flota-case", "lower"]
    # the adapter reads them back as the same options
    from fairseq_plugins.flota import FlotaBPEConfig

    cfg = FlotaBPEConfig(flota_vocab=str(vocab), flota_style="wordpiece", flota_strict=True, flota_unk="[UNK]",
                         flota_case="lower")
    from preprocess.options import options_from
    from preprocess.schemes.flota import FlotaOptions

    assert options_from(FlotaOptions, cfg) == s.tokenizer_options()


@pytest.mark.parametrize("scheme", sorted(ADAPTERS))
def test_encode_cli_and_adapter_are_the_scheme_declaration(scheme):
    """The encode options and the adapter's config are exactly the fields of the options dataclass the scheme's
    descriptor names (same names, defaults): nothing added or dropped by hand in either layer, besides an encode
    option naming a file (BITE's --subword-model: the adapter takes it from its --bpe)."""
    from preprocess.options import default_of
    descriptor = registry.get(scheme)
    declared = {f.name: default_of(f) for f in dataclasses.fields(descriptor.options)}
    assert {k: v for k, v in encode_options(scheme).items()
            if k in declared or k not in descriptor.files} == declared
    adapter = adapter_options(scheme)
    assert adapter.keys() == declared.keys()
    assert {k: v for k, v in adapter.items() if v is not None} == {k: v for k, v in declared.items() if v is not None}


def test_wordmap_decode_args_give_the_adapter_the_recipe_encoder(tmp_path):
    """The recipe's decode arguments, parsed by fairseq into the ``--bpe wordmap`` config, are the options the
    recipe encodes valid and test with, its dictionary (the inventory) included."""
    import argparse

    from fairseq_plugins.wordmap import WordmapBPE, WordmapBPEConfig
    from preprocess.options import options_from
    from preprocess.schemes.wordmap import WordmapOptions

    s = make_scheme({"scheme": "wordmap"}, ("en", "de"), str(tmp_path))
    args = s.decode_args("de")
    assert args[:2] == ["--bpe", "wordmap"]
    parser = argparse.ArgumentParser()
    for f in dataclasses.fields(WordmapBPEConfig):
        if not f.name.startswith("_"):
            parser.add_argument("--" + f.name.replace("_", "-"), dest=f.name, default=f.default)
    cfg = WordmapBPEConfig(**vars(parser.parse_args(args[2:])))
    assert options_from(WordmapOptions, cfg) == s.tokenizer_options("de")
    assert s.tokenizer_options("de").wordmap_dict == s.dictionary("de")
    assert s.encoder("de").args == (s.tokenizer_options("de"),)
    assert WordmapBPE(cfg).options == s.tokenizer_options("de")


MINE = """from dataclasses import dataclass

from preprocess.registry import SchemeDescriptor


@dataclass
class MineOptions:
    pass


SCHEME = SchemeDescriptor(name="{name}", options=MineOptions, make_encoder=lambda args: None)
"""


def test_schemes_are_discovered_modules_and_packages(tmp_path, monkeypatch):
    """A module or package under preprocess/schemes/ that declares ``SCHEME = SchemeDescriptor(...)`` is a scheme without an
    edit anywhere else; a module without a descriptor is none; nothing is imported to list the names."""
    import sys

    import preprocess.schemes

    assert registry.names() == ["bite", "flota", "spaces", "wordmap"]
    # (all_names: also a recipe-only scheme a test module registered, tests/test_translate.py's)
    assert {"bite", "flota", "sentencepiece", "spaces", "wordmap"} <= set(registry.all_names())
    (tmp_path / "mine.py").write_text(MINE.format(name="mine"), encoding="utf-8")
    (tmp_path / "pkgmine").mkdir()   # a package whose __init__ imports the descriptor from a submodule
    (tmp_path / "pkgmine" / "__init__.py").write_text("from preprocess.schemes.pkgmine.hooks import SCHEME  # noqa: F401\n",
                                                      encoding="utf-8")
    (tmp_path / "pkgmine" / "hooks.py").write_text(MINE.format(name="pkgmine"), encoding="utf-8")
    (tmp_path / "helper.py").write_text("def make_encoder(args):\n    return None\n", encoding="utf-8")
    monkeypatch.setattr(registry, "SCHEME_DIRS", [*registry.SCHEME_DIRS, str(tmp_path)])   # where it looks
    monkeypatch.setattr(preprocess.schemes, "__path__", [*preprocess.schemes.__path__, str(tmp_path)])   # imports
    registry.reset()
    try:
        assert registry.names() == ["bite", "flota", "mine", "pkgmine", "spaces", "wordmap"]
        assert "preprocess.schemes.mine" not in sys.modules and "preprocess.schemes.pkgmine" not in sys.modules
        assert registry.get("pkgmine").name == "pkgmine" and registry.get("mine").options.__name__ == "MineOptions"
        with pytest.raises(UserError, match="unknown scheme 'helper'"):
            registry.get("helper")
    finally:
        monkeypatch.undo()
        registry.reset()
        for name in ("preprocess.schemes.mine", "preprocess.schemes.pkgmine", "preprocess.schemes.pkgmine.hooks"):
            sys.modules.pop(name, None)
    assert registry.names() == ["bite", "flota", "spaces", "wordmap"]


def _spm_defaults(parser_defaults: dict) -> dict:
    return {f.name: parser_defaults[f.name] for f in dataclasses.fields(SpmOptions) if f.name in parser_defaults}


def test_one_set_of_sentencepiece_defaults():
    """morphtok-spm, every recipe scheme, spm.train itself and the BITE Figure 8 metric train SentencePiece with
    the defaults of preprocess.models.spm.SpmOptions (they were 16000/0.9995/unseeded in one tool and 8000/1.0/1 in the
    recipes)."""
    import inspect

    from preprocess.evaluate import bite as bite_metrics
    from preprocess.models import spm

    declared = {f.name: f.default for f in dataclasses.fields(SpmOptions)}
    assert declared["vocab_size"] == 8000 and declared["character_coverage"] == 1.0 and declared["seed"] == 1

    train_cmd = spm.build_parser()._subparsers._group_actions[0].choices["train"]
    assert _spm_defaults({a.dest: a.default for a in train_cmd._actions}) == declared
    for name in sorted(SCHEMES):
        recipe = _parse(name)
        assert _spm_defaults(recipe) == declared, name
    signature = inspect.signature(spm.train).parameters
    assert {k: signature[k].default for k in declared} == declared
    assert inspect.signature(bite_metrics.figure8).parameters["seed"].default == declared["seed"]



def test_options_from_converts_once_with_the_dataclass_defaults():
    """options_from: an instance as it is, a dict or a namespace with the missing fields at their defaults."""
    import argparse

    from preprocess.options import options_from
    from preprocess.schemes.bite import BiteOptions
    from preprocess.schemes.flota import FlotaOptions
    from preprocess.whitespace_noise import NoiseOptions

    ns = argparse.Namespace(flota_vocab="v.txt", flota_k="2", other=1)
    assert options_from(FlotaOptions, ns) == FlotaOptions(flota_vocab="v.txt", flota_k=2)
    assert options_from(FlotaOptions, {"flota-k": 4}).flota_k == 4
    opts = BiteOptions(bite_tagger="hanta")
    assert options_from(BiteOptions, opts) is opts
    assert options_from(BiteOptions, opts, bite_exact=True) == BiteOptions(bite_tagger="hanta", bite_exact=True)
    assert options_from(NoiseOptions, argparse.Namespace()) == NoiseOptions()


def test_defaults_of_the_classes_are_the_options_defaults():
    """FLOTA's k and BITE's tagger/pretokenizer defaults are the options dataclasses' (declared once)."""
    import inspect

    from preprocess.schemes.bite import BiteLineEncoder, BiteOptions, BiteTokenizer
    from preprocess.schemes.flota import FlotaOptions, FlotaTokenizer

    flota = inspect.signature(FlotaTokenizer.__init__).parameters
    assert (flota["k"].default, flota["style"].default, flota["mode"].default) == \
        (FlotaOptions.flota_k, FlotaOptions.flota_style, FlotaOptions.flota_mode)
    bite = inspect.signature(BiteTokenizer.__init__).parameters
    assert (bite["tagger"].default, bite["pretokenizer"].default) == \
        (BiteOptions.bite_tagger, BiteOptions.bite_pretokenizer)
    enc = BiteLineEncoder.from_options(BiteOptions(bite_pretokenizer="whitespace", bite_tagger="hanta"),
                                       bite_input=True)
    assert enc.bite.pretokenizer == "whitespace" and enc.bite.exact is BiteOptions.bite_exact
