"""The scheme registry: one :class:`SchemeDescriptor` per tokenisation scheme, found without a list of names.

Each scheme declares itself once, in its module or package under ``preprocess/schemes/``::

    SCHEME = SchemeDescriptor(
        name="mine",                                  # the module's name: --scheme mine everywhere
        options=MineOptions,                          # the encoder's options dataclass (preprocess.options)
        make_encoder=make_encoder,                    # options (or a namespace, a fairseq cfg) -> LineEncoder
        files=("mine_model",),                        # options naming files the encoder reads
        fairseq_bpe="mine", adapter="fairseq_plugins.mine",
        hf_export="preprocess.schemes.mine:write_tokenizer_json",
        recipe="train_scripts.schemes.mine:MineScheme",
    )

and every consumer reads it: ``preprocess.encode`` (``--scheme``, the options, the encoder, the files no output
may overwrite), ``morphtok-export`` (the options, the Hugging Face export, its input files),
:mod:`preprocess.hf` (the classes ``AutoTokenizer`` knows), ``train_scripts.schemes`` (the recipe
classes of ``morphtok-binarize``, the recipes and the demo), ``fairseq_plugins`` (the adapters it imports) and
``morphtok-translate`` (the options it refuses); a shared tool that needs a scheme's tagger, noise, SentencePiece
encoder or pretokeniser finds the scheme that declares it (:func:`provider`), never imports it.  Classes outside
``preprocess`` (the recipe, the fairseq adapter, a tokenizer class) are named by dotted path and imported only when
used, so this package stays free of fairseq, transformers and ``train_scripts``.

**Discovery.**  Where the descriptors are found, without importing anything to list the names:

1. every module or package directly under ``preprocess/schemes/`` whose source (a package: its ``__init__.py``) assigns
   ``SCHEME = SchemeDescriptor(`` at the start of a line (a package may import it instead, on one line:
   ``from .hooks import SCHEME``);
2. the modules and packages named in the environment variable ``MORPHTOK_SCHEMES`` (comma-separated, importable
   from ``sys.path``): a module is one scheme; in a package every submodule that assigns ``SCHEME`` is one;
3. the entry points of group ``morphtok.schemes`` of installed distributions (``chars = mypkg.chars``);
4. :func:`register` at run time (what ``morphtok-binarize --scheme-module FILE.py`` and
   ``train_scripts.schemes.register_scheme`` do).

A discovered scheme's name is its module's last component (an entry point's name); the descriptor must agree.  A
module is imported the first time its descriptor is needed: ``preprocess.encode --scheme spaces`` imports the
spaces module only.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from preprocess.common import UserError
from preprocess.scheme_scripts import DECLARES  # a line that declares the scheme (or imports it)

#: environment variable naming more scheme modules or packages (comma-separated)
ENV = "MORPHTOK_SCHEMES"
#: entry-point group of installed scheme modules (name = module)
ENTRY_POINT_GROUP = "morphtok.schemes"
#: the folder of the schemes inside this project, read (not imported: the schemes import this module)
SCHEME_DIRS = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemes")]


#: the names of the test-set noise kinds (``preprocess.evaluate.noise.NOISES``), declared here, below both the
#: schemes whose ``noise`` entries name them and the evaluation code that implements them
INFLECTION, WHITESPACE = "infl", "ws"


@dataclass(frozen=True)
class SchemeDescriptor:
    """Everything the rest of the project knows about one scheme.

    ``make_encoder``: the encoder of the parsed options (None: a recipe-only scheme, registered at run time, which
    ``preprocess.encode`` does not offer).  ``add_arguments``: adds the encode options to a parser (default: one ``--name`` per field of ``options``,
    those in ``required`` required).  ``files``: the options (argparse ``dest``) that name a file the encoder reads:
    ``morphtok-export`` checks and copies them, and no output of ``preprocess.encode`` may overwrite one.
    ``fairseq_bpe`` / ``fairseq_tokenizer``: the ``--bpe`` / ``--tokenizer`` names its fairseq adapter registers, in
    the module ``adapter`` (``fairseq_plugins`` imports it).  ``hf_export``: ``"module:attr"`` of a
    ``preprocess.hf.MorphtokTokenizer`` subclass (with a ``from_options`` class method) or of a function
    ``(args, out_dir, dictionary, scheme) -> [files]`` writing a ``tokenizer.json``.  ``recipe``: ``"module:Class"``
    of its ``train_scripts.schemes.Scheme`` subclass (or the class).  ``aliases``: further recipe names over the same
    encoder, options and export, each with its own recipe class (``sentencepiece`` is ``spaces`` for a plain
    SentencePiece model).  ``user_symbols``: named symbol sets that ``morphtok-spm train --user-symbols NAME``
    reserves in a SentencePiece model (BITE's ``bite`` and ``bite-single``).

    What shared modules take from whichever scheme offers it (:func:`provider` finds that scheme; None or empty: the
    scheme offers nothing of the kind).  ``tagger``: the option (a field of ``options``) that chooses the scheme's
    POS tagger; its default and choices are the scheme's default tagger and the taggers it takes
    (:meth:`default_tagger`, :meth:`taggers`).  ``noise``: the test-set noise kinds of
    :mod:`preprocess.evaluate.noise` that follow this scheme, each with the ``"module:attr"`` of what that noise takes
    from it (:meth:`noise_hook`; BITE's ``infl``: the case rule of its decoder, and its ``tagger``).
    ``spm_encoder``: ``"module:attr"`` of ``(model, spaces) -> encoder``, the scheme's encoder of a SentencePiece
    model file alone, the standalone ``▁`` pieces kept or dropped (:func:`spm_encoder_of`: the morphology metrics,
    ``morphtok-lm-filter``, ``prepare_wikipedia``'s length filter).  ``pretokenizer``: ``"module:attr"`` of
    ``(config) -> (line -> words)``, the scheme's word splitter of a row's recorded options (``binarize.json``'s
    ``config``; None: the defaults), no tagger loaded (:func:`pretokenizer_of`: the paper's word count of
    ``train_scripts.pseudo_perplexity``).
    """

    name: str
    options: type
    make_encoder: Optional[Callable[[Any], Any]] = None
    add_arguments: Optional[Callable[[Any], None]] = None
    required: tuple = ()
    files: tuple = ()
    fairseq_bpe: Optional[str] = None
    fairseq_tokenizer: Optional[str] = None
    adapter: Optional[str] = None
    hf_export: Optional[str] = None
    recipe: Any = None
    aliases: Mapping[str, Any] = field(default_factory=dict, hash=False)
    user_symbols: Mapping[str, tuple] = field(default_factory=dict, hash=False)
    tagger: Optional[str] = None
    noise: Mapping[str, Optional[str]] = field(default_factory=dict, hash=False)
    spm_encoder: Optional[str] = None
    pretokenizer: Optional[str] = None

    # -- what the consumers call ---------------------------------------------------------------------------------
    def add_encoder_args(self, parser) -> None:
        """The encode options of this scheme (``preprocess.encode --scheme NAME``, ``morphtok-export``)."""
        if self.add_arguments is not None:
            self.add_arguments(parser)
        else:
            from preprocess.options import add_arguments
            add_arguments(parser, self.options, required=tuple(self.required))

    def names(self) -> tuple:
        """The scheme's name and its aliases."""
        return (self.name, *self.aliases)

    def recipe_class(self, name: Optional[str] = None) -> Optional[type]:
        """The recipe class of ``name`` (this scheme or one of its aliases), imported now; None without one."""
        name = name or self.name
        target = self.recipe if name == self.name else self.aliases[name]
        if target is None:
            return None
        cls = load(target)
        if cls.__dict__.get("name") not in (None, name):
            raise TypeError(f"recipe {cls.__name__} is named {cls.__dict__['name']!r}, registered as {name!r}")
        if "name" not in cls.__dict__:
            cls.name = name
        return cls

    def export_target(self):
        """The Hugging Face export (a tokenizer class or a ``tokenizer.json`` writer), imported now; None."""
        return load(self.hf_export) if self.hf_export else None

    def default_tagger(self) -> Optional[str]:
        """The default of the scheme's ``tagger`` option (None: the scheme tags nothing)."""
        from preprocess.options import default_of

        return default_of(self._tagger_field()) if self.tagger else None

    def taggers(self) -> tuple:
        """The choices of the scheme's ``tagger`` option (empty: the scheme tags nothing)."""
        return tuple(self._tagger_field().metadata.get("choices") or ()) if self.tagger else ()

    def _tagger_field(self):
        import dataclasses

        fields = {f.name: f for f in dataclasses.fields(self.options)}
        if self.tagger not in fields:
            raise TypeError(f"scheme {self.name!r}: tagger={self.tagger!r} is no field of {self.options.__name__}")
        return fields[self.tagger]

    def noise_hook(self, kind: str):
        """What noise ``kind`` takes from this scheme (its ``noise`` entry), imported now; None without one."""
        return load(self.noise[kind]) if self.noise.get(kind) else None

    def fairseq_names(self) -> dict:
        """``{"bpe": name, "tokenizer": name}`` of what the adapter registers."""
        return {k: v for k, v in (("bpe", self.fairseq_bpe), ("tokenizer", self.fairseq_tokenizer)) if v}

    def option_flags(self) -> tuple:
        """The command-line flags of every option of the scheme (the dataclass's fields and the extra encode
        options), without the older aliases: what ``morphtok-translate`` refuses."""
        import argparse

        parser = argparse.ArgumentParser(add_help=False)
        self.add_encoder_args(parser)
        return tuple(f for a in parser._actions for f in a.option_strings
                     if f.startswith("--") and f[2:].replace("-", "_") == a.dest
                     or f.startswith("--no-") and f[5:].replace("-", "_") == a.dest)


def load(target):
    """``"package.module:attr"`` imported (anything else is returned as it is)."""
    if not isinstance(target, str):
        return target
    module, _, attr = target.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


# --- discovery ---------------------------------------------------------------------------------------------------

def _declares(path: Optional[str]) -> bool:
    if not path or not os.path.isfile(path):
        return False
    with open(path, encoding="utf-8") as fh:
        return bool(DECLARES.search(fh.read()))


def _source(finder, name: str, ispkg: bool) -> Optional[str]:
    base = getattr(finder, "path", None)
    if base is None:
        return None
    return os.path.join(base, name, "__init__.py") if ispkg else os.path.join(base, f"{name}.py")


def _scan(paths, prefix: str) -> dict:
    """``{name: module}`` of the modules and packages directly in ``paths`` that declare ``SCHEME``."""
    found = {}
    for info in pkgutil.iter_modules(paths):
        if _declares(_source(info.module_finder, info.name, info.ispkg)):
            found.setdefault(info.name, prefix + info.name)
    return found


def _from_env(value: str) -> dict:
    found = {}
    for module in (m.strip() for m in value.split(",")):
        if not module:
            continue
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            raise UserError(f"{ENV}: no module {module!r} on the Python path")
        if spec.submodule_search_locations is not None and not _declares(spec.origin):
            found.update(_scan(list(spec.submodule_search_locations), module + "."))   # a package of schemes
        else:
            found[module.rpartition(".")[2]] = module
    return found


def _from_entry_points() -> dict:
    from importlib.metadata import entry_points

    try:
        eps = entry_points(group=ENTRY_POINT_GROUP)
    except TypeError:   # Python < 3.10
        eps = entry_points().get(ENTRY_POINT_GROUP, ())
    return {ep.name: ep.value for ep in eps}


_state: dict = {}   # "key": what the discovery depended on; "modules": name -> module; "loaded": name -> descriptor
_registered: dict = {}   # name -> descriptor given to register()


def _discovered() -> dict:
    key = os.environ.get(ENV, "")
    if _state.get("key") != key or "modules" not in _state:
        modules = _scan(SCHEME_DIRS, "preprocess.schemes.")
        for name, module in {**_from_entry_points(), **_from_env(key)}.items():
            modules.setdefault(name, module)
        _state.clear()
        _state.update(key=key, modules=modules, loaded={})
    return _state


def reset() -> None:
    """Forget what was discovered (after ``sys.path`` or a package changed); registered descriptors stay."""
    _state.clear()


def register(descriptor: SchemeDescriptor) -> SchemeDescriptor:
    """Make ``descriptor`` a scheme of this process (a scheme defined in a file given on a command line)."""
    if not isinstance(descriptor, SchemeDescriptor):
        raise TypeError(f"not a SchemeDescriptor: {descriptor!r}")
    _registered[descriptor.name] = descriptor
    return descriptor


def _load(name: str, module: str) -> SchemeDescriptor:
    state = _discovered()
    if name not in state["loaded"]:
        try:
            mod = importlib.import_module(module.partition(":")[0])
        except ImportError as exc:
            raise UserError(f"scheme {name!r} is not available: {exc}") from None
        descriptor = load(module) if ":" in module else getattr(mod, "SCHEME", None)
        if not isinstance(descriptor, SchemeDescriptor):
            raise TypeError(f"{module} declares no SCHEME = SchemeDescriptor(...)")
        if descriptor.name != name:
            raise TypeError(f"{module} declares scheme {descriptor.name!r}; its module (or entry point) names "
                            f"it {name!r}")
        state["loaded"][name] = descriptor
    return state["loaded"][name]


def names() -> list:
    """Every scheme's name (no aliases) that has an encoder, sorted; nothing is imported."""
    return sorted({*_discovered()["modules"], *(n for n, d in _registered.items() if d.make_encoder is not None)})


def descriptors() -> list:
    """Every scheme's descriptor, recipe-only ones included, sorted by name (imports every scheme module)."""
    return [get(name) for name in sorted({*_discovered()["modules"], *_registered})]


def all_names() -> list:
    """Every name a scheme can be given by, aliases included, sorted."""
    return sorted(n for d in descriptors() for n in d.names())


def get(name: str, aliases: bool = False) -> SchemeDescriptor:
    """The descriptor of scheme ``name`` (``aliases``: or of the scheme that ``name`` is an alias of); a
    :class:`UserError` listing the names otherwise."""
    if name in _registered:
        return _registered[name]
    modules = _discovered()["modules"]
    if name in modules:
        return _load(name, modules[name])
    if aliases:
        for descriptor in descriptors():
            if name in descriptor.aliases:
                return descriptor
    known = all_names() if aliases else names()
    raise UserError(f"unknown scheme {name!r}; choose from {', '.join(known)}")


def recipes() -> dict:
    """``{name: recipe class}`` of every scheme and alias that has a recipe (imports them)."""
    out = {}
    for descriptor in descriptors():
        for name in descriptor.names():
            cls = descriptor.recipe_class(name)
            if cls is not None:
                out[name] = cls
    return dict(sorted(out.items()))


def recipe_names() -> list:
    """The names ``morphtok-binarize --scheme`` takes (without importing the recipes)."""
    return sorted(n for d in descriptors() for n in d.names()
                  if (d.recipe if n == d.name else d.aliases[n]) is not None)


def user_symbols() -> dict:
    """``{name: symbols}`` of every scheme's named symbol sets (``--user-symbols NAME``; imports the schemes)."""
    out = {}
    for descriptor in descriptors():
        for name, symbols in descriptor.user_symbols.items():
            if name in out:
                raise TypeError(f"symbol set {name!r} is declared by two schemes")
            out[name] = tuple(symbols)
    return out


def provider(field_name: str, key: Optional[str] = None) -> SchemeDescriptor:
    """The one scheme whose descriptor declares ``field_name`` (``key``: a mapping field that has that key): what a
    shared module takes from a scheme, found without naming the scheme (``provider("spm_encoder")``,
    ``provider("noise", "infl")``).  Imports every scheme module; one that cannot be imported is passed over.  A
    :class:`UserError` when no scheme declares it, or two do."""
    found, unavailable = [], []
    for name in sorted({*_discovered()["modules"], *_registered}):
        try:
            descriptor = get(name)
        except UserError as exc:
            unavailable.append(str(exc))
            continue
        value = getattr(descriptor, field_name)
        if (key in value) if key is not None else bool(value):
            found.append(descriptor)
    what = f"{field_name}[{key!r}]" if key is not None else field_name
    if len(found) > 1:
        raise UserError(f"schemes {', '.join(d.name for d in found)} all declare {what}; one scheme may")
    if not found:
        raise UserError(f"no scheme declares {what}" + "".join(f"; {u}" for u in unavailable))
    return found[0]


def spm_encoder_of(model: str, spaces: str = "keep"):
    """The encoder of the SentencePiece model file ``model`` alone, the standalone ``▁`` pieces kept or dropped
    (``spaces``): the ``spm_encoder`` of the scheme that declares one."""
    return load(provider("spm_encoder").spm_encoder)(model, spaces)


def pretokenizer_of(config=None):
    """``line -> words`` of the scheme that declares a ``pretokenizer``, as ``config`` (a row's recorded options,
    ``binarize.json``'s ``config``; None: the defaults) chooses it."""
    return load(provider("pretokenizer").pretokenizer)(config)


def from_module(module) -> Optional[SchemeDescriptor]:
    """Register the ``SCHEME`` that an imported module declares (``--scheme-module``); None when it has none."""
    descriptor = getattr(module, "SCHEME", None)
    if isinstance(descriptor, SchemeDescriptor):
        return register(descriptor)
    return None


__all__ = ["SchemeDescriptor", "ENV", "ENTRY_POINT_GROUP", "load", "register", "reset", "names", "descriptors",
           "all_names", "get", "recipes", "recipe_names", "user_symbols", "provider", "spm_encoder_of",
           "pretokenizer_of", "from_module"]
