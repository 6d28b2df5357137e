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

    from preprocess.export.tokenizer_json import DICT_FILE, fairseq_ids
    from preprocess.models.spm import write_dict

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
from preprocess.files.inputs import read_lines
from preprocess.options import to_args
from preprocess.models.spm import write_dict
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

    from preprocess.export.tokenizer_json import fairseq_ids, read_fairseq_dict
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


# --- inside this project: a scheme lives in its own files -----------------------------------------------------------
#
# The other half of docs/adding-a-scheme.md: a scheme inside this repository is its own files, one per layer, named
# after it (``preprocess/schemes/<name>.py`` or the package ``preprocess/schemes/<name>/``, its
# Hugging Face class ``preprocess/hf/<name>.py``, its metrics ``preprocess/evaluate/<name>.py``, its adapter
# ``fairseq_plugins/<name>.py``, its recipe ``train_scripts/schemes/<name>.py`` and its benchmark
# ``bench/<name>.py``), and no other module names it: a module that tests ``scheme == "flota"`` or keys a dict by
# scheme names would have to be edited for a fifth scheme.

from pathlib import Path  # noqa: E402

from tests.conftest import REPO  # noqa: E402

#: the project's code (tests and docs may name any scheme)
CODE = ("setup.py", "preprocess", "fairseq_plugins", "train_scripts", "bench", "scripts")
#: the folders a scheme has a file of its own in, named after it
LAYERS = ("preprocess/schemes", "preprocess/hf", "preprocess/evaluate", "fairseq_plugins", "train_scripts/schemes", "bench")
#: (file, name) -> why that file may hold that string; "*": any scheme's name.  Each is a name that is no test
#: of a scheme (a distribution, a record's key) or a list of configurations that a row or a run is
ALLOWED = {
    ("setup.py", "sentencepiece"): "the SentencePiece distribution in install_requires",
    ("train_scripts/demo/stages.py", "sentencepiece"): "the distribution whose version the demo records",
    ("train_scripts/demo/translation/report.py", "sentencepiece"): "the distribution whose version the report prints",
    ("bench/scale_corpus.py", "sentencepiece"): "the distribution whose version the benchmark records",
    ("preprocess/models/vocabularies.py", "sentencepiece"): "a vocabulary file's kind (a SentencePiece model)",
    ("preprocess/export/tokenizer_json.py", "spaces"): "the `spaces` option (keep/drop) a tokenizer.json export records",
    ("train_scripts/demo/lm/pipeline.py", "spaces"): "binarize.json's `spaces` record (the spaces option, keep/drop)",
    ("train_scripts/demo/lm/plan.py", "flota"): "a fine-tuning task's segmentation: `--encode flota` of "
                                                "morphtok-classification-data",
    ("train_scripts/pseudo_perplexity.py", "spaces"): "binarize.json's `spaces` record (the spaces option)",
    ("train_scripts/demo/rows.py", "*"): "ROWS, the demo's rows: each row names the scheme it runs",
    ("train_scripts/demo/translation/rows.py", "*"): "the translation part's rows (the scheme each runs)",
    ("train_scripts/demo/german/plan.py", "*"): "the German part's two rows (the scheme each runs)",
    ("train_scripts/demo/german/report.py", "wordmap"): "the German part's question: the Wordmap row against its "
                                                       "baseline, by the row's name",
    ("train_scripts/verb_probe.py", "spaces"): "binarize.json's `spaces` record (the spaces option, keep/drop)",
    ("train_scripts/demo/pretraining/plan.py", "*"): "the pretraining part's rows (the scheme each runs) and its FLOTA part "
                                       "(`--encode flota` of morphtok-classification-data)",
    ("train_scripts/demo/pretraining/report.py", "flota"): "the pretraining results' FLOTA part (a part of the demo, by name)",
    ("train_scripts/demo/pretraining/analysis.py", "flota"): "the pretraining results' FLOTA part (a part of the demo, by "
                                                             "name), analysed apart from the report's rendering",
    ("train_scripts/demo/pretraining/plots.py", "flota"): "the pretraining results' FLOTA part (a part of the demo, by "
                                                          "name), plotted apart from the report's rendering",
    ("train_scripts/demo/pretraining/scheduler.py", "flota"): "the FLOTA part's runs, whose matched floors it computes "
                                                              "(a part of the demo, by name)",
    ("scripts/refactor_check.py", "*"): "the fixed configurations it compares before and after a refactor",
}


def _project_descriptors() -> list:
    """The descriptors of the schemes inside this project: found under ``preprocess/schemes/`` (not registered at run time
    by another test, nor named by ``MORPHTOK_SCHEMES``)."""
    import importlib.util

    out = []
    for name in registry.names():
        spec = importlib.util.find_spec(f"preprocess.schemes.{name}")
        if spec is not None and Path(spec.origin).is_relative_to(REPO / "preprocess"):
            out.append(registry.get(name))
    return out


def _scheme_names() -> dict:
    """``{name or alias: scheme}`` of every scheme inside this project."""
    return {n: d.name for d in _project_descriptors() for n in d.names()}


def _own_scheme(path: Path, names) -> str | None:
    """The name (or alias) whose own file ``path`` is (relative to the repository), or None."""
    parts = path.parts
    if len(parts) > 3 and parts[:2] == ("preprocess", "schemes") and parts[2] in names:   # a scheme's package
        return parts[2]
    if path.parent.as_posix() in LAYERS:
        for name in names:
            if path.stem == name or path.stem.startswith(name + "_"):
                return name
    return None


def _code_files():
    for entry in CODE:
        base = REPO / entry
        yield from [base] if base.is_file() else sorted(base.rglob("*.py"))


def _named(path: Path, names) -> list:
    """``(line, string)`` of every string constant in ``path`` that is a scheme's name."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names]


def test_no_module_names_a_scheme_outside_its_own_files(monkeypatch):
    monkeypatch.delenv(registry.ENV, raising=False)
    registry.reset()
    names = _scheme_names()
    assert {"spaces", "sentencepiece", "bite", "flota", "wordmap"} <= set(names)
    hits = []
    for path in _code_files():
        rel = path.relative_to(REPO)
        if _own_scheme(rel, names) is not None:
            continue
        hits += [f"{rel}:{line}: {value!r}" for line, value in _named(path, names)
                 if (rel.as_posix(), value) not in ALLOWED and (rel.as_posix(), "*") not in ALLOWED]
    assert not hits, ("a scheme's name outside its own files (move what the module knows about the scheme into its "
                      "descriptor or recipe class, or say in ALLOWED why the string is no test of a scheme):\n"
                      + "\n".join(hits))


def test_the_allow_list_is_needed():
    """Every ALLOWED entry still matches a string (a stale one would hide nothing, but would mislead)."""
    names = _scheme_names()
    found = {(path.relative_to(REPO).as_posix(), value) for path in _code_files() for _, value in _named(path, names)}
    stale = [key for key in ALLOWED if (key[1] == "*" and not any(f == key[0] for f, _ in found))
             or (key[1] != "*" and key not in found)]
    assert not stale, stale


def _origin(module: str) -> Path:
    import importlib.util

    return Path(importlib.util.find_spec(module).origin).relative_to(REPO)


def test_a_schemes_modules_are_its_own_files():
    """What each descriptor names (its encoder's module, adapter, Hugging Face export, recipes and the hooks shared
    tools take: its SentencePiece encoder, pretokeniser, noise) and every scheme's console script is a file of that
    scheme's own."""
    import runpy

    names = _scheme_names()
    for descriptor in _project_descriptors():
        targets = [descriptor.make_encoder.__module__, descriptor.adapter, descriptor.hf_export, descriptor.recipe,
                   *descriptor.aliases.values(), descriptor.spm_encoder, descriptor.pretokenizer,
                   *descriptor.noise.values()]
        for target in filter(None, targets):
            module = (target if isinstance(target, str) else target.__module__).partition(":")[0]
            assert _own_scheme(_origin(module), names) in descriptor.names(), \
                f"{descriptor.name}: {module} ({_origin(module)}) is not a file of its own"
    scripts = runpy.run_path(str(REPO / "preprocess" / "scheme_scripts.py"))["scheme_console_scripts"](str(REPO))
    assert {"morphtok-bite", "morphtok-metrics-flota", "morphtok-wordmap", "morphtok-spaces"} <= set(scripts)
    for script, module in scripts.items():
        assert _own_scheme(_origin(module), names) is not None, f"{script}: {module} is no scheme's own file"


def test_setup_installs_a_schemes_console_scripts(tmp_path):
    """A scheme module's CONSOLE_SCRIPTS is what setup.py installs for it (preprocess/scheme_scripts.py reads the
    literal, nothing imported): a fifth scheme adds its tools in its own file."""
    import runpy

    scripts = runpy.run_path(str(REPO / "preprocess" / "scheme_scripts.py"))
    schemes = tmp_path / "preprocess" / "schemes"
    (schemes / "mine").mkdir(parents=True)
    (tmp_path / "setup.py").write_text('CONSOLE_SCRIPTS = {"morphtok-encode": "preprocess.encode"}\n')
    (schemes / "other.py").write_text('CONSOLE_SCRIPTS = {"morphtok-other": "preprocess.schemes.other"}\n')
    (schemes / "mine" / "__init__.py").write_text(
        "from preprocess.schemes.mine.hooks import SCHEME\n"
        'CONSOLE_SCRIPTS = {"morphtok-mine": "preprocess.schemes.mine", '
        '"morphtok-metrics-mine": "preprocess.evaluate.mine"}\n')
    assert scripts["console_scripts"](str(tmp_path)) == {
        "morphtok-encode": "preprocess.encode", "morphtok-mine": "preprocess.schemes.mine",
        "morphtok-metrics-mine": "preprocess.evaluate.mine"}   # other.py declares no scheme: not read


def test_hugging_face_classes_keep_their_older_path():
    """The ``tokenization_morphtok.py`` that exports wrote before each class had a module of its own imports the
    classes from ``preprocess.hf_tokenizers``: that import still gives each scheme's class."""
    pytest.importorskip("transformers")
    import preprocess.hf
    import preprocess.hf_tokenizers as old

    classes = preprocess.hf.tokenizer_classes()
    assert classes and all(getattr(old, cls.__name__) is cls for cls in classes.values())
    old_shim = ("from preprocess.hf_tokenizers import (MorphtokBiteTokenizer, MorphtokFlotaTokenizer,  # noqa\n"
                "                                      MorphtokWordmapTokenizer)\n")
    namespace: dict = {}
    exec(old_shim, namespace)
    assert {namespace[cls.__name__] for cls in classes.values()} == set(classes.values())
    assert old.MorphtokTokenizer is preprocess.hf.MorphtokTokenizer
    with pytest.raises(AttributeError):
        old.NoSuchName  # noqa: B018
    for cls in classes.values():   # a new shim imports the class from its own module
        assert f"from {cls.__module__} import {cls.__name__}" in preprocess.hf.shim_text(cls)


# --- a shared module imports no scheme's module -------------------------------------------------------------------------
#
# What a shared module needs of a scheme (its encoder of a SentencePiece model, its tagger, the noise it defines, its
# pretokeniser) it takes through the registry (``registry.provider`` and the descriptor's fields), so that a fifth
# scheme, or one scheme less, is no edit of it.  The check reads every import statement, those inside functions too.

#: the packages whose modules the import check reads
IMPORT_CODE = ("preprocess", "train_scripts", "fairseq_plugins")
#: the packages in which a scheme has modules of its own: ``<package>.<name>`` (a module or a package) and
#: ``<package>.<name>_...``
SCHEME_PACKAGES = ("preprocess.schemes", "train_scripts.schemes")
#: shared file -> why it may import a scheme's module (a shared package's ``__init__`` listing the schemes, a module
#: another change is moving).  Empty: no shared module needs one; the demo's (train_scripts/demo/) import only the
#: shared ``train_scripts.schemes`` package
ALLOWED_IMPORTS: dict = {}


def _module_name(rel: Path) -> str:
    parts = rel.with_suffix("").parts
    return ".".join(parts[:-1] if rel.name == "__init__.py" else parts)


def _imported(path: Path, rel: Path) -> list:
    """``(line, module)`` of every module an ``import`` or ``from ... import`` anywhere in the file may import
    (``from P import x``: ``P`` and ``P.x``; a relative import resolved against the file's package)."""
    import ast

    package = _module_name(rel).split(".")[:None if rel.name == "__init__.py" else -1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]) if node.level \
                else node.module
            base = base.strip(".")
            out += [(node.lineno, base)] + [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return out


def _scheme_of_module(module: str, names) -> str | None:
    """The scheme whose own module ``module`` is (or is inside; an older path of :data:`preprocess.MOVED` as the
    module it gives), or None."""
    from preprocess import MOVED

    for old, new in MOVED.items():
        if module == old or module.startswith(old + "."):
            module = new + module[len(old):]
            break
    for package in SCHEME_PACKAGES:
        if module.startswith(package + "."):
            first = module[len(package) + 1:].split(".")[0]
            for name in names:
                if first == name or first.startswith(name + "_"):
                    return name
    return None


def scheme_imports(root: Path, names, allowed=ALLOWED_IMPORTS) -> list:
    """``"file:line: module"`` of every import of a scheme's module (``preprocess.schemes.<name>``,
    ``train_scripts.schemes.<name>``) in a shared module under ``root`` (a file of :data:`IMPORT_CODE` that is no
    scheme's own file, ``_own_scheme``, nor in ``allowed``)."""
    hits = []
    for package in IMPORT_CODE:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root)
            if _own_scheme(rel, names) is not None or rel.as_posix() in allowed:
                continue
            seen = set()
            for line, module in _imported(path, rel):
                scheme = _scheme_of_module(module, names)
                if scheme is not None and line not in seen:
                    seen.add(line)
                    hits.append(f"{rel.as_posix()}:{line}: {module} (scheme {scheme})")
    return hits


def test_no_shared_module_imports_a_scheme(monkeypatch):
    monkeypatch.delenv(registry.ENV, raising=False)
    registry.reset()
    hits = scheme_imports(REPO, _scheme_names())
    assert not hits, ("a shared module imports a scheme's module (take what it needs through the registry: a field "
                      "of the scheme's descriptor, registry.provider; or say in ALLOWED_IMPORTS why it may):\n"
                      + "\n".join(hits))


def test_allowed_imports_are_needed(monkeypatch):
    """Every ALLOWED_IMPORTS entry is a shared file that does import a scheme's module."""
    monkeypatch.delenv(registry.ENV, raising=False)
    registry.reset()
    names = _scheme_names()
    needed = {hit.partition(":")[0] for hit in scheme_imports(REPO, names, allowed={})}
    assert not set(ALLOWED_IMPORTS) - needed, sorted(set(ALLOWED_IMPORTS) - needed)


#: a shared module that imports schemes in every way the check must see
FAKE_SHARED = '''
import preprocess.schemes.spaces as sp
from preprocess.schemes import flota
from preprocess.bite import match_case
from train_scripts.schemes import make_scheme, sentencepiece
from ..schemes.wordmap import hooks


def segment(line):
    from preprocess.schemes.bite.text import TAGGERS
    return sp, flota, match_case, make_scheme, sentencepiece, hooks, TAGGERS
'''


def test_the_import_check_fails_on_a_shared_module_importing_a_scheme(tmp_path, monkeypatch):
    """The check on a tree of its own: a shared module importing schemes (at module level, inside a function, by an
    older path, relatively) is reported line by line; a scheme's own files and ``train_scripts.schemes``' shared
    names are not."""
    monkeypatch.delenv(registry.ENV, raising=False)
    registry.reset()
    names = _scheme_names()
    files = {"preprocess/evaluate/fake.py": FAKE_SHARED,
             "preprocess/schemes/bite/extra.py": "from preprocess.schemes.spaces import SpacesEncoder\n",
             "preprocess/hf/flota.py": "from preprocess.schemes import flota\n",
             "train_scripts/schemes/wordmap_extra.py": "from preprocess.schemes.wordmap import hooks\n",
             "fairseq_plugins/shared.py": "from train_scripts.schemes import get_scheme\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text.lstrip(), encoding="utf-8")
    fake = "preprocess/evaluate/fake.py"
    assert scheme_imports(tmp_path, names) == [
        f"{fake}:1: preprocess.schemes.spaces (scheme spaces)",
        f"{fake}:2: preprocess.schemes.flota (scheme flota)",
        f"{fake}:3: preprocess.bite (scheme bite)",
        f"{fake}:4: train_scripts.schemes.sentencepiece (scheme sentencepiece)",
        f"{fake}:5: preprocess.schemes.wordmap (scheme wordmap)",
        f"{fake}:9: preprocess.schemes.bite.text (scheme bite)"]
    assert scheme_imports(tmp_path, names, allowed={fake: "a reason"}) == []


def test_a_scheme_without_tagger_noise_or_pretokenizer_says_so(toy):
    """The toy declares none of what shared tools take from a scheme: its descriptor's defaults say so, and the
    shared tools still find the one scheme that offers each."""
    chars = registry.get("chars")
    assert (chars.tagger, dict(chars.noise), chars.spm_encoder, chars.pretokenizer) == (None, {}, None, None)
    assert chars.default_tagger() is None and chars.taggers() == () and chars.noise_hook("infl") is None
    assert registry.provider("noise", "infl").name == "bite"
    assert registry.provider("spm_encoder").name == "spaces"
    assert registry.provider("pretokenizer").name == "bite"
    with pytest.raises(UserError, match="no scheme declares noise\\['nothing'\\]"):
        registry.provider("noise", "nothing")


def test_what_a_scheme_offers_comes_from_its_descriptor(toy, monkeypatch):
    """A tagger is an option of the scheme's own (its default and choices); a second scheme offering what one
    scheme may is refused by name."""
    from dataclasses import dataclass

    from preprocess.options import option

    @dataclass
    class TaggedOptions:
        tagged_tagger: str = option("hanta", "POS tagger", ("hanta", "nltk"))

    tagged = registry.SchemeDescriptor(name="tagged", options=TaggedOptions, tagger="tagged_tagger",
                                       noise={"infl": "morphtok_toy.chars:SPACE"},
                                       spm_encoder="morphtok_toy.chars:CharsEncoder")
    assert tagged.default_tagger() == "hanta" and tagged.taggers() == ("hanta", "nltk")
    assert tagged.noise_hook("infl") == "\u2581" and tagged.noise_hook("ws") is None
    monkeypatch.setitem(registry._registered, "tagged", tagged)
    for args in (("noise", "infl"), ("spm_encoder",)):
        with pytest.raises(UserError, match="schemes .*tagged.* declare"):
            registry.provider(*args)
    with pytest.raises(TypeError, match="no field"):
        registry.SchemeDescriptor(name="odd", options=TaggedOptions, tagger="no_such_option").taggers()
