"""The German part's inputs checked by their contents before the first stage (the pre-flight, ``Part.check_inputs``).

Every input is small (GermEval 2018: 8,541 tweets; UD German GSD dev and test: 1,600 sentences; Multi30k's German
side: 31,014 lines; CLAMS German: 14,220 pairs; MorphyNet's German derivations), so each is read whole by the reader its stage uses (``train_scripts/prepare_german.py``):
the same columns, labels, CoNLL-U shape and UTF-8 that the stage would refuse late are refused here, in one line
naming the demo's own option, the file and the line, before anything is created (exit 2).  A file that is a
folder is refused as one.
"""
from __future__ import annotations

import functools
from pathlib import Path

from preprocess.common import UserError
from preprocess.files.inputs import read_lines


def _file(folder: Path, name: str) -> Path:
    """``folder/name`` or its ``.gz``; a folder in a file's place is one line."""
    for candidate in (folder / name, folder / f"{name}.gz"):
        if candidate.is_dir():
            raise UserError(f"{candidate} is a folder, not a file")
        if candidate.exists():
            return candidate
    raise UserError(f"{folder / name} not found")


def _text(path: Path) -> int:
    return sum(1 for _ in read_lines(str(path)))


def clams_pairs(path: Path) -> int:
    """The pairs of a CLAMS file (``True|False<TAB>sentence``, a grammatical line followed by its ungrammatical
    twin); a line of another shape, or an unpaired one, is one error naming the file and the line."""
    labels = []
    for number, line in enumerate(read_lines(str(path)), 1):
        if not line.strip():
            continue
        label, tab, text = line.partition("\t")
        if not tab or label not in ("True", "False") or not text.strip():
            raise UserError(f"{path}:{number}: not a CLAMS line (True or False, a tab, the sentence)")
        if label != ("True" if len(labels) % 2 == 0 else "False"):
            raise UserError(f"{path}:{number}: a {label} line where the pair needs "
                            f"{'a grammatical (True)' if len(labels) % 2 == 0 else 'its ungrammatical (False)'} one")
        labels.append(label)
    if len(labels) % 2:
        raise UserError(f"{path}: its last grammatical line has no ungrammatical twin")
    return len(labels) // 2


def _clams_folder(folder: Path, names: tuple) -> None:
    for name in names:
        clams_pairs(_file(folder, name))


def _plain_file(path: Path) -> None:
    if path.is_dir():
        raise UserError(f"{path} is a folder, not a file")
    _text(path)


def check(germeval: Path, ud: Path, multi30k: Path, agreement: Path | None = None,
          clams_files: tuple = (), morphynet: Path | None = None) -> None:
    """Read every German input whole as its stage will; the first problem is one :class:`UserError` naming the
    option (``--de-germeval``, ``--de-ud``, ``--de-multi30k``, ``--de-agreement``, ``--de-morphynet``), the file
    and the line."""
    from train_scripts import prepare_german as pg

    def germeval_files():
        for name in pg.GERMEVAL_FILES.values():
            pg.read_germeval(str(_file(germeval, name)))

    def ud_files():
        for name in pg.UD_FILES.values():
            pg.read_conllu(str(_file(ud, name)))

    def multi30k_files():
        _text(_file(multi30k, "train.de"))
        for path in pg.Inputs(germeval, ud, multi30k).multi30k_heldout():
            if Path(path).is_dir():
                raise UserError(f"{path} is a folder, not a file")
            _text(Path(path))

    readers = [("--de-germeval", germeval_files), ("--de-ud", ud_files), ("--de-multi30k", multi30k_files)]
    if agreement is not None:
        readers.append(("--de-agreement", functools.partial(_clams_folder, agreement, clams_files)))
    if morphynet is not None:
        readers.append(("--de-morphynet", functools.partial(_plain_file, morphynet)))
    for option, read in readers:
        try:
            read()
        except UserError as exc:
            raise UserError(f"{option}: {_own_options(str(exc))}; fix the file or give {option} another "
                            "copy") from None
        except (IsADirectoryError, PermissionError) as exc:
            raise UserError(f"{option}: {exc.filename}: {exc.strerror}; give {option} another copy") from None


def _own_options(message: str) -> str:
    """A reader's message with the hints that name the stand-alone command's options (``--germeval``, ``--ud``,
    ``--multi30k``, ``--data``, ``--errors``) taken out: the demo names its own."""
    import re

    message = re.sub(r"\s*\((?:give the folder with|or pass)[^)]*\)", "", message)
    message = re.sub(r"\s*\(--(?:germeval|ud|multi30k|data)\)", "", message)
    message = re.sub(r";?\s*(?:fix the input or )?pass --errors replace[^;]*", "", message)
    return message.rstrip(" ;.")
