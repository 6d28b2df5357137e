"""The German inputs (GermEval 2018, UD German GSD, Multi30k German: where they are, :class:`Inputs`) and the
writing of an output folder (every file together, none of them an input)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from preprocess.common import SHARED_DATA, UserError
from preprocess.files.inputs import UTF8_HINT, read_lines, without_bom
from preprocess.files.outputs import atomic_outputs, check_distinct, check_output_path

GERMEVAL_FILES = {"train": "germeval2018.training.txt", "test": "germeval2018.test.txt"}
UD_FILES = {"dev": "de_gsd-ud-dev.conllu", "test": "de_gsd-ud-test.conllu"}
#: the seed of the splits (the corpus shuffle, GermEval's dev)
SEED = 1


def _first_existing(folder: Path, names) -> Path | None:
    for name in names:
        for candidate in (folder / name, folder / f"{name}.gz"):
            if candidate.is_file():
                return candidate
    return None


@dataclass
class Inputs:
    """The input folders (default: under the shared data folder)."""
    germeval: Path
    ud: Path
    multi30k: Path

    @classmethod
    def from_options(cls, data=None, germeval=None, ud=None, multi30k=None) -> "Inputs":
        root = Path(data) if data else SHARED_DATA
        return cls(Path(germeval) if germeval else root / "german" / "germeval2018",
                   Path(ud) if ud else root / "german" / "ud_german_gsd",
                   Path(multi30k) if multi30k else root / "multi30k")

    def germeval_file(self, split: str) -> str:
        return self._need(self.germeval, GERMEVAL_FILES[split], "GermEval 2018", "--germeval")

    def ud_file(self, split: str) -> str:
        return self._need(self.ud, UD_FILES[split], "UD German GSD", "--ud")

    def multi30k_train(self) -> str:
        return self._need(self.multi30k, "train.de", "Multi30k German", "--multi30k")

    def multi30k_heldout(self) -> list:
        """The German validation and test files of Multi30k: ``val.de`` (or ``valid.de``) and every ``test*.de``
        (the ``.gz`` one when both are there), in name order."""
        val = _first_existing(self.multi30k, ["val.de", "valid.de"])
        if val is None:
            raise UserError(f"no Multi30k German validation file (val.de[.gz]) in {self.multi30k} (--multi30k)")
        tests = {}
        for p in sorted(self.multi30k.glob("test*.de*")):
            if p.name.endswith((".de", ".de.gz")):
                tests.setdefault(p.name[:-3] if p.name.endswith(".gz") else p.name, p)
        for stem in list(tests):
            gz = self.multi30k / f"{stem}.gz"
            if gz.is_file():
                tests[stem] = gz
        if not tests:
            raise UserError(f"no Multi30k German test file (test*.de[.gz]) in {self.multi30k} (--multi30k)")
        return [str(val), *map(str, tests.values())]

    @staticmethod
    def _need(folder: Path, name: str, what: str, option: str) -> str:
        found = _first_existing(folder, [name])
        if found is None:
            raise UserError(f"{what} file {name} not found in {folder} (give the folder with {option}, or --data)")
        return str(found)


def read_all_lines(path: str) -> list:
    """The lines of a text file (strict UTF-8, :func:`preprocess.files.inputs.read_lines`; a byte-order mark at the
    start dropped), as a list."""
    return list(without_bom(read_lines(path, hint=UTF8_HINT)))


def check_outputs(outputs: list, inputs: list) -> None:
    """Refuse, before any work, an output path that cannot be written or that is one of the inputs."""
    for path in outputs:
        check_output_path(path)
    check_distinct([(p, "output") for p in outputs], [(p, "input") for p in inputs])


def write_outputs(paths: list, contents: list) -> None:
    """Write every output together (:func:`atomic_outputs`): a list is lines, a dict JSON, a str as it is."""
    with atomic_outputs(paths) as handles:
        for fh, content in zip(handles, contents):
            if isinstance(content, dict):
                fh.write(json.dumps(content, indent=1, ensure_ascii=False) + "\n")
            elif isinstance(content, str):
                fh.write(content)
            else:
                fh.writelines(line + "\n" for line in content)
