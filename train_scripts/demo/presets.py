"""The demo's budget presets, one mechanism for every part: a part declares its presets once (a dict of
``{name: {"note": ..., key: value, ...}}``) and the keys that are options; this module makes one command-line
option per key and fills in the chosen preset's value where the option is not given.

    add_preset_options(parser, PRESETS, KEYS, title="preset values", helps=HELP, flag=lambda k: "--lm-" + ...)
    overrides = apply_preset(args, PRESETS[name], KEYS)         # {key: value given instead of the preset's}

An option's type is its value's in the first preset (a list: ``nargs="+"`` of its items' type).
"""
from __future__ import annotations

import argparse
from typing import Callable, Iterable


def _flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def _dest(flag: str) -> str:
    return flag[2:].replace("-", "_")


def add_preset_options(ap, presets: dict, keys: Iterable[str], title: str, helps: dict | None = None,
                       flag: Callable[[str], str] = _flag, group=None) -> None:
    """One option per preset key, default None (= the chosen preset's value), in a group ``title`` of the parser
    ``ap``, or in ``group`` (a part's own group of the demo's parser)."""
    group = group if group is not None else ap.add_argument_group(title)
    first = next(iter(presets.values()))
    for key in keys:
        value, text = first[key], (helps or {}).get(key, "the preset's value")
        if isinstance(value, list):
            ints = all(isinstance(x, int) for x in value)
            group.add_argument(flag(key), nargs="+", default=None, type=int if ints else str, help=text)
        else:
            group.add_argument(flag(key), type=type(value), default=None, help=text)


def apply_preset(args: argparse.Namespace, preset: dict, keys: Iterable[str], into: argparse.Namespace | None = None,
                 flag: Callable[[str], str] = _flag) -> dict:
    """Set every key on ``into`` (default: ``args``) to the option given, else the preset's value; the keys given
    with a value other than the preset's."""
    into = args if into is None else into
    overrides = {}
    for key in keys:
        given = getattr(args, _dest(flag(key)))
        setattr(into, key, preset[key] if given is None else given)
        if given is not None and given != preset[key]:
            overrides[key] = given
    return overrides
