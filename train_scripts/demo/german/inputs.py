"""The German part's inputs checked by their contents before the first stage (the pre-flight, ``Part.check_inputs``).

Every input is small (GermEval 2018: 8,541 tweets; UD German GSD dev and test: 1,600 sentences; Multi30k's German
side: 31,014 lines), so each is read whole by the reader its stage uses (``train_scripts/prepare_german.py``):
the same columns, labels, CoNLL-U shape and UTF-8 that the stage would refuse late are refused here, in one line
naming the demo's own option, the file and the line, before anything is created (exit 2).  A file that is a
folder is refused as one.
"""
from __future__ import annotations

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


def check(germeval: Path, ud: Path, multi30k: Path) -> None:
    """Read every German input whole as its stage will; the first problem is one :class:`UserError` naming the
    option (``--de-germeval``, ``--de-ud``, ``--de-multi30k``), the file and the line."""
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

    for option, read in (("--de-germeval", germeval_files), ("--de-ud", ud_files),
                         ("--de-multi30k", multi30k_files)):
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
    message = re.sub(r";?\s*(?:fix the input or )?pass --errors replace[^;]*", "", message)
    return message.rstrip(" ;.")
