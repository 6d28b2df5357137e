"""Options declared once, as dataclass fields, and derived for every layer that needs them.

A scheme declares its options as a dataclass in its ``preprocess/schemes/`` module, each field made with :func:`option`
(default, help, choices); field names carry the scheme's prefix (``flota_k``), which is the option's one name
everywhere: ``--flota-k`` on ``preprocess.encode`` (:func:`add_arguments`), on ``morphtok-binarize`` and the recipes
(``train_scripts.schemes``), in the fairseq adapter's config (:func:`fairseq_config`) and in the decode arguments a
recipe records for ``fairseq-generate`` (:func:`to_args`).  Sequences are comma-separated on the command line,
booleans settable both ways (``--x`` / ``--no-x``), defaults printed readably.
"""
from __future__ import annotations

import argparse
import dataclasses
import typing
from dataclasses import field

from preprocess.common import UserError


def option(default, help: str, choices=None, aliases: tuple[str, ...] = ()):
    """A dataclass field that becomes a command-line option (``--field-name``) with ``help`` and ``choices``
    (``aliases``: older spellings the command line still accepts, e.g. ``--model``)."""
    meta = {"help": help}
    if choices is not None:
        meta["choices"] = tuple(choices)
    if aliases:
        meta["aliases"] = tuple(aliases)
    if isinstance(default, (list, tuple)):
        return field(default_factory=lambda: tuple(default), metadata=meta)
    return field(default=default, metadata=meta)


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def default_of(f: dataclasses.Field):
    return f.default if f.default is not dataclasses.MISSING else f.default_factory()


def field_kind(f: dataclasses.Field, hints: dict):
    """``"list"`` for a sequence (``tuple``, ``tuple[str, ...]``, ``list``), else the field's type (``Optional[X]``:
    ``X``)."""
    t = hints[f.name]
    if typing.get_origin(t) is typing.Union:  # Optional[X]
        t = next(a for a in typing.get_args(t) if a is not type(None))
    if t in (tuple, list) or typing.get_origin(t) in (tuple, list):  # plain ``tuple`` too: never str -> chars
        return "list"
    return t


def _convert(value, kind, name: str):
    if value is None:
        return None
    if kind == "list":
        items = value.split(",") if isinstance(value, str) else value
        return tuple(str(x) for x in items if str(x))
    if kind is bool:
        if isinstance(value, str):
            if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise UserError(f"option {name} wants true or false, not {value!r}")
            return value.lower() in ("true", "1", "yes")
        return bool(value)
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise UserError(f"option {name} wants a {kind.__name__}, not {value!r}") from None


def make_options(options_cls: type, values: dict | None = None):
    """An ``options_cls`` instance from a dict (``-`` or ``_`` in keys); unknown keys and bad choices are
    :class:`UserError`.  ``None`` values mean "the default"."""
    hints = typing.get_type_hints(options_cls)
    fields = {f.name: f for f in dataclasses.fields(options_cls)}
    kwargs = {}
    for key, value in (values or {}).items():
        key = key.replace("-", "_")
        if key not in fields:
            raise UserError(f"unknown option {key!r} for this scheme; known: {', '.join(sorted(fields))}")
        if value is None:
            continue
        value = _convert(value, field_kind(fields[key], hints), key)
        choices = fields[key].metadata.get("choices")
        if choices and value not in choices:
            raise UserError(f"option {key} must be one of {', '.join(map(str, choices))}, not {value!r}")
        kwargs[key] = value
    return options_cls(**kwargs)


def add_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup, options_cls: type,
                  required: tuple[str, ...] = (), only: tuple[str, ...] | None = None, aliases: bool = True) -> None:
    """One ``--name`` per dataclass field (``only``: these fields), with its help, default and choices
    (``required``: fields that must be given; ``aliases=False``: without the older spellings, for command lines
    that never had them); :func:`options_from` turns the parsed values back into the dataclass."""
    hints = typing.get_type_hints(options_cls)
    for f in dataclasses.fields(options_cls):
        if only is not None and f.name not in only:
            continue
        kind = field_kind(f, hints)
        default = default_of(f)
        helptext = f.metadata.get("help", "")
        older = f.metadata.get("aliases", ()) if aliases else ()
        if kind is bool:
            parser.add_argument(flag(f.name), *older, dest=f.name, default=bool(default),
                                action=argparse.BooleanOptionalAction, help=helptext)
        elif kind == "list":
            parser.add_argument(flag(f.name), dest=f.name, default=",".join(default), metavar="A,B", help=helptext)
        else:
            parser.add_argument(flag(f.name), *older, dest=f.name, default=default, type=kind,
                                choices=f.metadata.get("choices"), required=f.name in required, help=helptext)


def options_from(options_cls: type, source=None, **overrides):
    """The ``options_cls`` instance of ``source``, converted once at a boundary: an instance of ``options_cls``
    (returned as it is, or a copy with ``overrides``), an instance of a subclass (a recipe's options: a new
    ``options_cls`` of its fields), a dict (``-`` or ``_`` in keys), or anything with attributes
    (an argparse namespace, a fairseq config, another options object); fields ``source`` lacks or holds as None take
    the dataclass defaults, other attributes are ignored.  ``overrides``: field values that replace ``source``'s."""
    if type(source) is options_cls:   # a subclass (a recipe's options) is converted: only these fields
        return dataclasses.replace(source, **overrides) if overrides else source
    names = [f.name for f in dataclasses.fields(options_cls)]
    if source is None:
        values = {}
    elif isinstance(source, typing.Mapping):
        values = {k.replace("-", "_"): v for k, v in source.items() if k.replace("-", "_") in names}
    else:
        values = {name: getattr(source, name, None) for name in names}
    return make_options(options_cls, {**values, **overrides})


def to_args(options, always: tuple[str, ...] = ()) -> list[str]:
    """The command-line arguments that give ``options`` (a dataclass instance): the fields named in ``always``, then
    every other field whose value is not its default, in declaration order."""
    out = []
    for f in dataclasses.fields(options):
        value = getattr(options, f.name)
        if f.name not in always and value == default_of(f):
            continue
        if isinstance(value, bool):
            out.append(flag(f.name) if value else "--no-" + f.name.replace("_", "-"))
        elif isinstance(value, (tuple, list)):
            out += [flag(f.name), ",".join(map(str, value))]
        elif value is not None:
            out += [flag(f.name), str(value)]
    return out


def fairseq_config(options_cls: type, name: str, base: type, required: tuple[str, ...] = ()) -> type:
    """A fairseq config dataclass (subclass of ``base``, fairseq's ``FairseqDataclass``) with the fields of
    ``options_cls``: same names, defaults and help (``required``: fields whose default is omegaconf's ``???``, so
    that a missing path is reported by name)."""
    hints = typing.get_type_hints(options_cls)
    fields = []
    for f in dataclasses.fields(options_cls):
        kind = field_kind(f, hints)
        if kind == "list":
            raise TypeError(f"{options_cls.__name__}.{f.name}: a sequence option has no fairseq config form")
        default = "???" if f.name in required else default_of(f)
        annotation = kind if default is not None else typing.Optional[kind]
        help_ = f.metadata.get("help", "")
        if f.metadata.get("choices"):
            help_ += f" ({', '.join(map(str, f.metadata['choices']))})"
        fields.append((f.name, annotation, field(default=default, metadata={"help": help_})))
    return dataclasses.make_dataclass(name, fields, bases=(base,))
