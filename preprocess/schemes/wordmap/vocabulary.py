"""The Wordmap vocabulary (Jung 2023, section 3.2.1): the functional/lexemic split of Algorithm 1's analyses, the
outlier and interference rules (point 5 of the package docstring, :mod:`preprocess.schemes.wordmap`), and the plain-text
file that holds it."""
from __future__ import annotations

import functools
from collections import Counter
from typing import Iterable

import numpy as np

from preprocess.common import UserError
from preprocess.files.inputs import UTF8_HINT, read_lines, require_file
from preprocess.files.integrity import require_complete_text
from preprocess.files.outputs import atomic_output
from preprocess.schemes.wordmap.maps import DEFAULT_SPLIT, analyse_all
from preprocess.schemes.wordmap.segmentation import best_segmentation, segment


class WordmapVocabulary:
    """The segmenter vocabulary: string -> (kind, count); kind is ``functional``, ``lexemic`` or ``both``."""

    HEADER = "#wordmap-vocabulary\tv1"

    def __init__(self, functional: dict[str, int] | None = None, lexemic: dict[str, int] | None = None,
                 meta: dict[str, str] | None = None):
        self.functional = dict(functional or {})
        self.lexemic = dict(lexemic or {})
        self.meta = dict(meta or {})
        self._refresh()

    def _refresh(self) -> None:
        counts: Counter = Counter()
        for table in (self.functional, self.lexemic):
            for s, c in table.items():
                counts[s] += c
        self.counts = dict(counts)
        self.pieces = frozenset(s for s in counts if len(s) > 1)
        self.max_len = max((len(s) for s in self.pieces), default=0)
        self._segment_cached = functools.lru_cache(maxsize=200_000)(self._segment_lower)

    def __len__(self) -> int:
        return len(self.counts)

    def __contains__(self, s: str) -> bool:
        return s in self.counts

    def kind(self, s: str) -> str | None:
        f, l = s in self.functional, s in self.lexemic
        return "both" if f and l else "functional" if f else "lexemic" if l else None

    def save(self, path: str) -> None:
        with atomic_output(path) as fh:
            fh.write(self.HEADER + "\n")
            for k, v in sorted(self.meta.items()):
                fh.write(f"#{k}\t{v}\n")
            for s in sorted(self.counts, key=lambda x: (-self.counts[x], x)):
                fh.write(f"{s}\t{self.kind(s)}\t{self.functional.get(s, 0)}\t{self.lexemic.get(s, 0)}\n")

    @classmethod
    def load(cls, path: str) -> "WordmapVocabulary":
        require_file(path, "Wordmap vocabulary")
        require_complete_text(path, "Wordmap vocabulary")   # cut inside a line (preprocess.files.integrity)
        functional: dict[str, int] = {}
        lexemic: dict[str, int] = {}
        meta: dict[str, str] = {}
        lines = read_lines(path, hint=UTF8_HINT)   # invalid UTF-8 (e.g. a binary file given by mistake): error naming file and line
        try:
            first = next(lines, "")
        except UserError:
            first = None
        if first != cls.HEADER:
            raise UserError(f"{path}: not a Wordmap vocabulary (first line must be {cls.HEADER!r})")
        for lineno, line in enumerate(lines, 2):
            if not line:
                continue
            if line.startswith("#"):
                k, _, v = line[1:].partition("\t")
                meta[k] = v
                continue
            parts = line.split("\t")
            if len(parts) != 4 or not parts[0]:
                raise UserError(f"{path}:{lineno}: expected 'string<TAB>kind<TAB>nfunc<TAB>nlex'")
            try:
                nf, nl = int(parts[2]), int(parts[3])
            except ValueError:
                raise UserError(f"{path}:{lineno}: counts must be integers") from None
            if nf:
                functional[parts[0]] = nf
            if nl:
                lexemic[parts[0]] = nl
        if not functional and not lexemic:
            raise UserError(f"{path}: the Wordmap vocabulary has no entries (only its header); rebuild it with "
                            "python -m preprocess.schemes.wordmap build")
        return cls(functional, lexemic, meta)

    # -- segmentation -------------------------------------------------------------------------------------
    def segment(self, word: str) -> list[str]:
        return segment(word, self)

    def _segment_lower(self, word: str) -> tuple[str, ...]:
        return best_segmentation(word, self.pieces, self.max_len, self.counts)


def _length_stats(strings: Iterable[str]) -> tuple[float, float, float]:
    lens = np.array([len(s) for s in strings], dtype=np.float64)
    if len(lens) == 0:
        return 0.0, 0.0, 0.0
    mean = float(lens.mean())
    sd = float(lens.std(ddof=1)) if len(lens) > 1 else 0.0
    mad = float(np.abs(lens - mean).mean())
    return mean, sd, mad


def vocabulary_from_analyses(analyses: dict[str, tuple[str, str, str]], n_verbs: int | None = None
                             ) -> WordmapVocabulary:
    """Functional/lexemic vocabularies from per-verb splits, then outlier and interference removal."""
    functional: Counter = Counter()
    lexemic: Counter = Counter()
    for prefix, stem, suffix in analyses.values():
        for affix in (prefix, suffix):
            if affix:
                functional[affix] += 1
        if stem:
            lexemic[stem] += 1
    f_mean, f_sd, _ = _length_stats(functional)
    f_limit = f_mean + 2.5 * f_sd
    functional_clean = {s: c for s, c in functional.items() if len(s) <= f_limit}
    l_mean, _, l_mad = _length_stats(lexemic)
    l_limit = l_mean + 2.0 * l_mad
    lexemic_clean = {s: c for s, c in lexemic.items() if len(s) <= l_limit}
    f_clean_mean, _, _ = _length_stats(functional_clean)
    lexemic_final = {s: c for s, c in lexemic_clean.items() if len(s) >= f_clean_mean}
    meta = {
        "verbs": str(n_verbs if n_verbs is not None else len(analyses)),
        "functional_types": f"{len(functional)} -> {len(functional_clean)} (drop len > {f_limit:.3f})",
        "lexemic_types": f"{len(lexemic)} -> {len(lexemic_clean)} (drop len > {l_limit:.3f})"
                         f" -> {len(lexemic_final)} (interference: drop len < {f_clean_mean:.3f})",
    }
    return WordmapVocabulary(functional_clean, lexemic_final, meta)


def build_vocabulary(verbs: Iterable[str], method: str = "fast", progress: bool = False, mode: str = DEFAULT_SPLIT
                     ) -> WordmapVocabulary:
    """Algorithm 1 over all verb types and the vocabulary rules of section 3.2.1 (see the package docstring)."""
    verbs = list(verbs)
    analyses = analyse_all(verbs, method=method, progress=progress, mode=mode)
    vocab = vocabulary_from_analyses(analyses, n_verbs=len(analyses))
    vocab.meta["split"] = mode
    return vocab
