"""The scheme options as the command lines see them: sequences parsed as sequences, booleans settable both ways,
defaults printed readably (issue 29)."""
from __future__ import annotations

import dataclasses

import pytest

from train_scripts import binarize
from train_scripts.schemes import SCHEMES, _field_type, make_options, make_scheme

import typing


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
