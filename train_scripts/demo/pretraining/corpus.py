"""The pretraining part's corpus: in-domain ArXiv titles (the default) and/or running English text, mixed.

``--lm-corpus arxiv`` (the default of the ``cpu`` preset) is the training titles of the FLOTA ArXiv-L sets of all
three areas (cs, maths, physics: 36,000 titles, about 250,000 words), the text whose vocabulary the Superbizarre
Arxiv task is about: its label says whether a derivative's base is a physics word (0) or a computer-science word
(1).  Two leakage rules keep every evaluation set unseen, and their counts go into the report:

1. a training title equal (whitespace normalised) to any ArXiv-S or ArXiv-L dev or test title, of any area, is
   dropped (the FLOTA table fine-tunes and tests on those sets);
2. a training title that contains a Superbizarre dev or test derivative of the part's tasks as a word (a maximal
   run of letters and digits, lower-cased, or a whitespace token) is dropped (the whole dev and test splits, not only
   the rows a preset uses); and, counted apart, one that contains one **by stem**: a word of it, lower-cased, split
   at its hyphens and joined across them ("device-free": "device", "free", "devicefree"), as it is and with one
   final inflectional ending removed (-s, -es, -ed or -ing, at least three letters left; not the -s of -ss), equal
   to a derivative ("semirings" -> "semiring", "device-free" -> "devicefree").  The derivatives are not stemmed
   and the match is of whole forms, not substrings: a Superbizarre derivative minus an ending is often its base
   ("minimales" -> "minimal", "protocoling" -> "protocol"), the word pretraining must see, and many derivatives are
   pieces of ordinary words ("nonlin", "multil"); on the shared data the rule removes 319 titles (115 dev/test
   derivatives), where stemming the derivatives too would remove 2,423 and substring matching 12,598, mostly for
   such words.

Superbizarre *training* derivatives may appear: they are the labelled training words, and a title shows no label.
A path instead of ``arxiv`` is running text (a folder of ``*.txt[.gz]``, a blank line between documents, or one
file), e.g. ``../shared/data/english_lm``; several sources are mixed (``--lm-corpus arxiv ../shared/data/english_lm``).
"""
from __future__ import annotations

import random
import re
from pathlib import Path

from preprocess.common import UserError
from preprocess.files.inputs import UTF8_HINT, read_lines
from preprocess.files.outputs import atomic_output

#: the keyword of ``--lm-corpus`` for the in-domain ArXiv titles
ARXIV = "arxiv"
ARXIV_AREAS = ("cs", "maths", "physics")
#: titles per document of the ArXiv corpus: each title is a document of its own, so a pretraining sample
#: (``--sample-break-mode complete_doc``) is one title, a coherent context, not ten unrelated titles packed together
TITLES_PER_DOCUMENT = 1
_WORD = re.compile(r"[a-z0-9]+")
#: the inflectional endings leakage rule 2 removes from a title's word (one at a time), and the letters it keeps
INFLECTIONS = ("ing", "ed", "es", "s")
STEM_MIN = 3
#: the version of the leakage rules, in the corpus stage's fingerprint (a changed rule makes a new corpus)
LEAKAGE_RULES = "2 by stem"


def read_documents(path: Path):
    """Documents of a corpus file (``.gz`` too): lists of non-empty lines, a blank line between documents.  Invalid
    UTF-8 or a corrupt ``.gz`` is one line naming the file and line (``preprocess.files.inputs.read_lines``)."""
    doc: list[str] = []
    for line in read_lines(str(path), hint=UTF8_HINT):
        line = " ".join(line.split())
        if line:
            doc.append(line)
        elif doc:
            yield doc
            doc = []
    if doc:
        yield doc


def _csv_texts(path: Path) -> list[str]:
    """The text column of a CSV with a header (the ArXiv and Superbizarre sets), read strictly as fine-tuning reads
    it (``classification_data.read_csv``: a bad byte or row is one line naming it)."""
    from train_scripts.classification_data import read_csv

    if not path.is_file():
        raise UserError(f"{path} not found (the FLOTA ArXiv and Superbizarre sets: ../shared/data or your copy)")
    return [text for text, _ in read_csv(str(path))]


def title_words(title: str) -> set:
    """The words a leakage rule matches in a title: lower-cased runs of letters and digits, and whitespace tokens."""
    low = title.lower()
    return set(_WORD.findall(low)) | set(low.split())


def stem_forms(title: str) -> set:
    """The forms of a title's words that leakage rule 2 matches by stem (module docstring): lower-cased, split at
    hyphens (and other punctuation) and joined across hyphens, each as it is and with one final -s, -es, -ed or
    -ing removed."""
    out = set()
    for token in title.lower().split():
        for form in set(_WORD.findall(token)) | set(_WORD.findall(token.replace("-", ""))):
            out.add(form)
            for end in INFLECTIONS:
                if form.endswith(end) and len(form) - len(end) >= STEM_MIN and not (end == "s" and
                                                                                    form.endswith("ss")):
                    out.add(form[:-len(end)])
    return out


def _title_csvs(flota_data: Path) -> list[Path]:
    """The ArXiv-L training titles of every area: the corpus."""
    return [flota_data / f"arxiv_{area}_1e+03_train.csv" for area in ARXIV_AREAS]


def _heldout_csvs(flota_data: Path) -> list[Path]:
    """The ArXiv-S and ArXiv-L dev and test titles of every area (leakage rule 1)."""
    return [flota_data / f"arxiv_{area}_{size}_{split}.csv" for area in ARXIV_AREAS for size in ("1e+02", "1e+03")
            for split in ("dev", "test")]


def _derivative_csvs(superbizarre: Path, tasks) -> list[Path]:
    """The Superbizarre dev and test sets of ``tasks`` (leakage rule 2)."""
    return [superbizarre / f"{task}_{split}.csv" for task in tasks for split in ("dev", "test")]


def arxiv_inputs(flota_data: Path, superbizarre: Path, tasks=("arxiv",)) -> tuple[list, list]:
    """Every CSV the ArXiv corpus reads: ``(FLOTA ArXiv CSVs, Superbizarre CSVs)``, for a check before any work."""
    return [*_title_csvs(flota_data), *_heldout_csvs(flota_data)], _derivative_csvs(superbizarre, tasks)


def arxiv_titles(flota_data: Path, superbizarre: Path, tasks=("arxiv",), seed: int = 1) -> tuple[list, dict]:
    """The ArXiv-L training titles of every area minus the two leakage rules (module docstring), in a seeded order:
    ``(titles, counts)``; counts has ``titles``, ``removed_heldout_title``, ``removed_superbizarre_word``,
    ``removed_superbizarre_stem`` (rule 2 by stem, titles the whole-word match kept), ``kept``."""
    heldout = {t for path in _heldout_csvs(flota_data) for t in _csv_texts(path)}
    derivatives = {w.lower() for path in _derivative_csvs(superbizarre, tasks) for w in _csv_texts(path)}
    counts = {"titles": 0, "removed_heldout_title": 0, "removed_superbizarre_word": 0,
              "removed_superbizarre_stem": 0, "kept": 0, "heldout_titles": len(heldout),
              "superbizarre_words": len(derivatives)}
    kept = []
    for path in _title_csvs(flota_data):
        for title in _csv_texts(path):
            counts["titles"] += 1
            if title in heldout:
                counts["removed_heldout_title"] += 1
            elif title_words(title) & derivatives:
                counts["removed_superbizarre_word"] += 1
            elif stem_forms(title) & derivatives:
                counts["removed_superbizarre_stem"] += 1
            elif title:
                kept.append(title)
    counts["kept"] = len(kept)
    random.Random(seed).shuffle(kept)
    return kept, counts


def corpus_files(path: Path) -> list[Path]:
    """The files of a running-text source: a folder's ``*.txt`` and ``*.txt.gz`` files, or the one file given."""
    if not path.exists():
        raise UserError(f"--lm-corpus {path} does not exist (a folder of *.txt[.gz], one file, or '{ARXIV}')")
    if not path.is_dir():
        return [path]
    files = sorted(p for p in path.iterdir() if p.name.endswith((".txt", ".txt.gz")))
    if not files:
        raise UserError(f"--lm-corpus {path}: no *.txt or *.txt.gz files in the folder (give a folder of them, or "
                        "one file, e.g. morphtok-prepare-wikipedia's OUT/train.en)")
    return files


def corpus_documents(sources: list, flota_data: Path, superbizarre: Path, tasks=("arxiv",)) -> tuple[list, dict]:
    """Every document of the sources (``arxiv`` or a path), and what the ArXiv leakage rules removed."""
    docs, leakage = [], None
    for source in sources:
        if str(source) == ARXIV:
            titles, leakage = arxiv_titles(flota_data, superbizarre, tasks)
            docs += [titles[i:i + TITLES_PER_DOCUMENT] for i in range(0, len(titles), TITLES_PER_DOCUMENT)]
            continue
        docs += [d for f in corpus_files(Path(source)) for d in read_documents(f)]
    return docs, {"leakage": leakage}


def prepare_corpus(corpus, out: Path, max_words: int, valid_every: int = 50, seed: int = 1,
                   flota_data: Path = None, superbizarre: Path = None, tasks=("arxiv",)) -> dict:
    """``corpus`` (a source or a list of sources: ``arxiv``, a folder of ``*.txt[.gz]`` files, one file) ->
    ``out/{train,valid}.en`` as ``binarize --lm`` reads them: every ``valid_every``-th document (in a seeded order
    of all documents) is validation text; training text is the other documents in that order until ``max_words``
    (0: all).  Returns the documents, lines and words per split, and the ArXiv leakage counts (or None)."""
    sources = corpus if isinstance(corpus, (list, tuple)) else [corpus]
    docs, extra = corpus_documents(sources, flota_data, superbizarre, tasks)
    if len(docs) < 2:
        raise UserError(f"{', '.join(map(str, sources))}: fewer than two documents (documents are separated by "
                        "blank lines)")
    random.Random(seed).shuffle(docs)
    out.mkdir(parents=True, exist_ok=True)
    counts = {"train": [0, 0, 0], "valid": [0, 0, 0]}   # documents, lines, words
    with atomic_output(str(out / "train.en")) as train, atomic_output(str(out / "valid.en")) as valid:
        for i, doc in enumerate(docs):
            split = "valid" if i % valid_every == 0 else "train"
            if split == "train" and max_words and counts["train"][2] >= max_words:
                continue
            fh = valid if split == "valid" else train
            fh.write("\n".join(doc) + "\n\n")
            c = counts[split]
            c[0], c[1], c[2] = c[0] + 1, c[1] + len(doc), c[2] + sum(len(line.split()) for line in doc)
    result = {s: dict(zip(("documents", "lines", "words"), c)) for s, c in counts.items()}
    return {**result, **extra} if extra["leakage"] else result
