"""English Wikipedia as the space-as-token paper's pretraining corpus: a MediaWiki dump -> ``OUT/{train,valid}.en``
in the layout ``train_scripts.binarize --lm`` reads (one sentence per line, a blank line between articles).

    morphtok-prepare-wikipedia --dump enwiki-latest-pages-articles.xml.bz2 --out raw/wiki \\
        [--valid-fraction 0.01 --seed 1] [--max-articles N] [--workers 4] \\
        [--filter-model ../shared/data/space_models/unigram_prime.model \\
         --filter-model ../shared/data/space_models/bpe_prime.model --max-tokens 510]

The dump is downloaded by hand (this command never goes online), from Wikimedia's official dumps:
``https://dumps.wikimedia.org/enwiki/latest/enwiki-latest-pages-articles.xml.bz2`` (about 20 GiB; the numbered
parts ``enwiki-latest-pages-articles1.xml-p1p41242.bz2`` ... hold the same pages).  ``--dump`` takes that file,
a plain or gzip-compressed ``.xml``, or a folder: every ``*-pages-articles*.xml*.bz2`` in it, in name order (keep
either the whole file or the numbered parts there, not both).

What the paper did (appendix A.1): "A Wikipedia dump was processed with the Python package WikiExtractor, and
then split into sentences using BlingFire", then sentences longer than 510 pieces under the space-keeping models
were removed.  Here, step by step:

1. **Pages**: the XML is streamed with the standard library (``xml.etree.ElementTree.iterparse`` over ``bz2``),
   one page at a time, each element cleared once read, so memory does not grow with the dump.  Only articles are
   kept: namespace 0 (``<ns>0</ns>``) and not redirects (``<redirect/>`` or text starting ``#REDIRECT``).
2. **Wikitext -> text** with mwparserfromhell, the maintained MediaWiki parser (WikiExtractor, the paper's tool, is
   a command-line program with global options and AGPL-licensed; its rules are followed where they matter):
   templates, references, tables, galleries, math and other non-prose tags, headings, list items, comments, and
   links to files, categories, other namespaces and other languages are removed; other links keep their text;
   bold/italics and HTML entities become plain text; empty brackets left behind are tidied.
3. **Sentences** with BlingFire (``blingfire.text_to_sentences``), the paper's own splitter: deterministic,
   rule-based finite-state models shipped inside the package (nothing to download, unlike NLTK's punkt data,
   which is not on this machine), handles abbreviations (``Dr.``, ``U.S.``, ``e.g.``) and is fast (tens of
   thousands of sentences per second and core, where pysbd manages about 1,500: English Wikipedia has over 100
   million sentences).  Paragraphs are split one by one; a sentence never spans two paragraphs.
4. **Fairness filter** (optional, ``--filter-model``, repeatable): ``morphtok-lm-filter``'s rule applied while
   writing: a sentence is kept only when it has at most ``--max-tokens`` pieces under every given space-keeping
   SentencePiece model.  The paper's own published Unigram'/BPE' models are in ``../shared/data/space_models``;
   or run ``morphtok-lm-filter`` on ``train.en``/``valid.en`` later with models learned on this corpus.
5. **Validation split** by article: an article goes to ``valid.en`` when a hash of ``--seed`` and its title falls
   below ``--valid-fraction``, so the split is the same whatever ``--max-articles`` and ``--workers`` are.

``--workers N`` cleans and splits batches of articles in N processes (output order is the dump's).  The outputs
and ``OUT/prepare.json`` (counts) appear together and only when complete: Ctrl-C or SIGTERM leaves no partial file.
A dump that cannot be read (corrupt, truncated, empty, not MediaWiki XML) is a one-line error.
"""
from __future__ import annotations

import argparse
import bz2
import glob
import gzip
import hashlib
import json
import os
import re
import signal
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from preprocess.cli import run_main
from preprocess.common import UserError, flatten_line
from preprocess.files.outputs import atomic_outputs, check_distinct, check_output_path

#: the official English dump (documented; this command never downloads)
DUMP_URL = "https://dumps.wikimedia.org/enwiki/latest/enwiki-latest-pages-articles.xml.bz2"
DUMP_PATTERN = "*-pages-articles*.xml*.bz2"

#: tags whose content is not running text (WikiExtractor drops these too)
DROP_TAGS = {"ref", "references", "table", "gallery", "timeline", "imagemap", "syntaxhighlight", "source", "pre",
             "graph", "mapframe", "maplink", "templatedata", "templatestyles", "inputbox", "noinclude", "includeonly",
             "poem"}
#: inline tags that are not words (formulas, code): the sentence around them is dropped, not left with a hole
HOLE_TAGS = {"math", "chem", "ce", "code", "score", "hiero"}
#: list markup (``*``, ``#``, ``;``, ``:``): these lines are dropped, as WikiExtractor does by default
LIST_TAGS = {"li", "dt", "dd"}
#: link prefixes that are not articles, beyond the namespace names the dump's <siteinfo> lists (aliases, sister
#: projects, interwiki)
LINK_PREFIXES = {"file", "image", "media", "category", "wp", "wikipedia", "project", "template", "help", "portal",
                 "draft", "special", "user", "talk", "module", "mediawiki", "wiktionary", "wikt", "commons",
                 "wikisource", "wikiquote", "wikinews", "wikibooks", "wikiversity", "wikivoyage", "wikidata",
                 "wikispecies", "species", "meta", "mw", "b", "c", "d", "m", "n", "q", "s", "v", "voy", "w",
                 "iarchive", "doi", "google", "oclc", "rfc"}
LANGUAGE_PREFIX = re.compile(r"^[a-z]{2,3}(-[a-z0-9]+)*$")   # interlanguage links: de:, simple:, zh-yue:, ...
LIST_MARK, HOLE = "\ue000", "\ue001"   # private-use characters: marks that survive strip_code

_MAGIC = re.compile(r"__[A-Z]+__")
_EMPTY_BRACKETS = re.compile(r"\(\s*(?:[,;:.\-–]\s*)*\)|\[\s*\]")
_OPEN_PUNCT = re.compile(r"\(\s*[,;:]\s*")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?)])")
_SPACES = re.compile(r"\s+")
_LETTER = re.compile(r"[^\W\d_]")


# --- 1. pages ---------------------------------------------------------------------------------------------------

@dataclass
class Page:
    title: str
    ns: int
    redirect: bool
    text: str


def _local(tag: str) -> str:
    """``{http://www.mediawiki.org/xml/export-0.11/}page`` -> ``page`` (any export schema version)."""
    return tag.rsplit("}", 1)[-1]


def open_dump(path: str):
    """(stream, raw file) of the XML: bz2 (multistream too) or gzip by their magic bytes, else plain; read once,
    so that a pipe works too."""
    try:
        raw = open(path, "rb")
        magic = raw.peek(3)[:3]
    except OSError as exc:
        raise UserError(f"cannot read the dump {path}: {exc.strerror or exc}") from None
    if magic == b"BZh":
        return bz2.BZ2File(raw, "rb"), raw
    if magic[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw, mode="rb"), raw
    return raw, raw


class DumpReader:
    """Pages of one MediaWiki XML export, streamed; ``namespaces``: the lower-cased namespace names of <siteinfo>."""

    def __init__(self, path: str):
        self.path = path
        self.namespaces: set[str] = set()

    def __iter__(self):
        stream, raw = open_dump(self.path)
        try:
            yield from self._pages(stream)
        except (ET.ParseError, OSError, EOFError, ValueError) as exc:
            raise UserError(f"{self.path}: not a readable MediaWiki XML dump ({_reason(exc)})") from None
        finally:
            stream.close()
            raw.close()

    def _pages(self, stream):
        root = None
        seen_root = False
        for event, elem in ET.iterparse(stream, events=("start", "end")):
            if event == "start":
                if root is None:
                    root = elem
                    if _local(elem.tag) != "mediawiki":
                        raise UserError(f"{self.path}: not a MediaWiki XML export (the root element is "
                                        f"<{_local(elem.tag)}>, not <mediawiki>)")
                    seen_root = True
                continue
            name = _local(elem.tag)
            if name == "namespaces":
                self.namespaces |= {(ns.text or "").strip().lower() for ns in elem if (ns.text or "").strip()}
            elif name == "page":
                yield self._page(elem)
                root.clear()   # the page and everything before it: memory stays bounded
        if not seen_root:
            raise UserError(f"{self.path}: empty dump")

    @staticmethod
    def _page(elem) -> Page:
        title, ns, redirect, text = "", 0, False, ""
        for child in elem:
            name = _local(child.tag)
            if name == "title":
                title = child.text or ""
            elif name == "ns":
                ns = int((child.text or "0").strip() or 0)
            elif name == "redirect":
                redirect = True
            elif name == "revision":
                for part in child:
                    if _local(part.tag) == "text":
                        text = part.text or ""
        if text[:9].upper() == "#REDIRECT":
            redirect = True
        return Page(title, ns, redirect, text)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def dump_files(path: str) -> list[str]:
    """The dump file(s) that ``--dump`` names: a file, or the ``*-pages-articles*.xml*.bz2`` of a folder."""
    if os.path.isdir(path):
        files = sorted(glob.glob(os.path.join(path, DUMP_PATTERN)))
        if not files:
            raise UserError(f"no {DUMP_PATTERN} in {path}: download one from {DUMP_URL}")
        return files
    if not os.path.exists(path):
        raise UserError(f"dump not found: {path} (download it from {DUMP_URL})")
    return [path]


# --- 2. wikitext -> paragraphs ----------------------------------------------------------------------------------

def _remove(code, node) -> None:
    try:
        code.remove(node)
    except ValueError:   # inside something removed already
        pass


def _replace(code, node, value: str) -> None:
    try:
        code.replace(node, value)
    except ValueError:
        pass


def is_foreign_link(title: str, namespaces=frozenset()) -> bool:
    """A wikilink to a file, category, other namespace, sister project or language (not running text)."""
    title = title.strip()
    if title.startswith(":"):
        return True
    if ":" not in title:
        return False
    prefix = title.split(":", 1)[0].strip().lower()
    return prefix in LINK_PREFIXES or prefix in namespaces or bool(LANGUAGE_PREFIX.match(prefix))


def wikitext_to_paragraphs(text: str, namespaces=frozenset()) -> list[str]:
    """The running text of an article's wikitext, one string per paragraph (see the module doc, step 2)."""
    import mwparserfromhell

    code = mwparserfromhell.parse(text)
    for template in code.filter_templates(recursive=False):
        _remove(code, template)
    for tag in code.filter_tags():
        name = str(tag.tag).strip().lower()
        if name in DROP_TAGS:
            _remove(code, tag)
        elif name in LIST_TAGS:
            _replace(code, tag, LIST_MARK)
        elif name in HOLE_TAGS:
            _replace(code, tag, HOLE)
        elif name in ("br", "hr"):
            _replace(code, tag, " " if name == "br" else "\n")
    for link in code.filter_wikilinks():
        if is_foreign_link(str(link.title), namespaces):
            _remove(code, link)
    for heading in code.filter_headings():
        _replace(code, heading, "\n")
    plain = code.strip_code(normalize=True, collapse=True, keep_template_params=False)
    paragraphs = []
    for line in plain.split("\n"):
        line = line.strip()
        if not line or line.startswith(LIST_MARK) or line[0] in "|!{}" or not _LETTER.search(line):
            continue
        line = _MAGIC.sub("", line)
        for _ in range(3):   # nested leftovers: "( ; )", "(, born )" ...
            line = _EMPTY_BRACKETS.sub("", line)
        line = _OPEN_PUNCT.sub("(", line)
        line = _SPACES.sub(" ", line)
        line = _SPACE_BEFORE_PUNCT.sub(r"\1", line).strip()
        if _LETTER.search(line):
            paragraphs.append(line)
    return paragraphs


# --- 3. sentences, 4. the filter --------------------------------------------------------------------------------

def split_sentences(paragraph: str) -> list[str]:
    """BlingFire's sentences of one paragraph (see the module doc, step 3)."""
    try:
        import blingfire
    except (ImportError, OSError) as exc:   # the package ships its library for x86-64 Linux, macOS, Windows
        raise UserError(f"BlingFire (pip install blingfire) cannot be loaded here: {_reason(exc)}") from None
    out = []
    for sentence in blingfire.text_to_sentences(paragraph).split("\n"):
        sentence = flatten_line(sentence).strip()
        if sentence and HOLE not in sentence and _LETTER.search(sentence):
            out.append(sentence)
    return out


class LengthFilter:
    """``morphtok-lm-filter``'s rule for one article: at most ``max_tokens`` pieces under every model."""

    def __init__(self, models: list[str], max_tokens: int):
        from preprocess import registry

        if max_tokens < 1:
            raise UserError("--max-tokens must be at least 1")
        for m in models:
            if not os.path.isfile(m):
                raise UserError(f"--filter-model not found: {m}")
        self.encoders = [registry.spm_encoder_of(m, "keep") for m in models]
        self.max_tokens = max_tokens

    def keep(self, sentences: list[str]) -> list[bool]:
        kept = [True] * len(sentences)
        for enc in self.encoders:
            for k, pieces in enumerate(enc.encode_lines(sentences)):
                if len(pieces.split()) > self.max_tokens:
                    kept[k] = False
        return kept


@dataclass
class Article:
    title: str
    sentences: list[str]
    removed: int = 0    # sentences the length filter removed


_WORKER: dict = {}


def _init_worker(namespaces, models, max_tokens) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C reaches the whole group: the parent cleans up
    signal.signal(signal.SIGTERM, signal.SIG_DFL)   # die quietly when the parent terminates the pool
    _setup(namespaces, models, max_tokens)


def _setup(namespaces, models, max_tokens) -> None:
    _WORKER["namespaces"] = frozenset(namespaces)
    _WORKER["filter"] = LengthFilter(models, max_tokens) if models else None


def process_page(page: Page) -> Article:
    """One article's sentences, paragraph by paragraph, filtered when a filter is set up."""
    sentences = []
    for paragraph in wikitext_to_paragraphs(page.text, _WORKER.get("namespaces", frozenset())):
        sentences.extend(split_sentences(paragraph))
    article = Article(page.title, sentences)
    filt = _WORKER.get("filter")
    if filt is not None and sentences:
        kept = filt.keep(sentences)
        article.sentences = [s for s, k in zip(sentences, kept) if k]
        article.removed = len(sentences) - len(article.sentences)
    return article


# --- 5. the split, the command ----------------------------------------------------------------------------------

def in_valid(title: str, seed: int, fraction: float) -> bool:
    """Whether the article ``title`` is in the validation split (a seeded hash: independent of order and count)."""
    digest = hashlib.blake2b(f"{seed}\t{title}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0 ** 64 < fraction


@dataclass
class Counts:
    pages: int = 0
    articles: int = 0
    redirects: int = 0
    other_namespaces: int = 0
    empty_articles: int = 0
    filtered_sentences: int = 0
    documents: dict = field(default_factory=lambda: {"train": 0, "valid": 0})
    sentences: dict = field(default_factory=lambda: {"train": 0, "valid": 0})
    words: dict = field(default_factory=lambda: {"train": 0, "valid": 0})


def _articles(files: list[str], counts: Counts, max_articles: int | None, state: dict):
    """The dump's article pages (namespace 0, no redirects), counting what is skipped; at most ``max_articles``."""
    for path in files:
        reader = DumpReader(path)
        for page in reader:
            state["namespaces"] = reader.namespaces
            counts.pages += 1
            if page.ns != 0:
                counts.other_namespaces += 1
                continue
            if page.redirect:
                counts.redirects += 1
                continue
            if max_articles is not None and counts.articles >= max_articles:
                return
            counts.articles += 1
            yield page


def _batched(iterable, size: int):
    batch = []
    for item in iterable:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def prepare(dump: str, out: str, lang: str = "en", valid_fraction: float = 0.01, seed: int = 1,
            max_articles: int | None = None, workers: int = 1, filter_models: tuple[str, ...] = (),
            max_tokens: int = 510, batch_size: int = 64, quiet: bool = False) -> dict:
    """Write ``OUT/{train,valid}.LANG`` and ``OUT/prepare.json``; returns the counts (see the module doc)."""
    _check_options(valid_fraction, workers, max_articles)
    if not lang or lang != os.path.basename(lang) or lang in (".", ".."):
        raise UserError(f"--lang must be a plain file-name suffix such as en, not {lang!r}")
    files = dump_files(dump)
    if filter_models:
        LengthFilter(list(filter_models), max_tokens)   # fail early on a missing model or a bad --max-tokens
    counts, state = Counts(), {"namespaces": set()}
    paths = {split: os.path.join(out, f"{split}.{lang}") for split in ("train", "valid")}
    _check_outputs(out, [paths["train"], paths["valid"], os.path.join(out, "prepare.json")], files,
                   filter_models)
    pool = None
    try:
        with atomic_outputs([paths["train"], paths["valid"], os.path.join(out, "prepare.json")]) as handles:
            files_out = {"train": handles[0], "valid": handles[1]}
            pages = _articles(files, counts, max_articles, state)
            for batch in _batched(pages, batch_size if workers > 1 else 1):
                if workers > 1:
                    if pool is None:
                        import multiprocessing

                        pool = multiprocessing.Pool(workers, _init_worker,
                                                    (state["namespaces"], list(filter_models), max_tokens))
                    articles = pool.map(process_page, batch)
                else:
                    if "namespaces" not in _WORKER:
                        _setup(state["namespaces"], list(filter_models), max_tokens)
                    articles = [process_page(page) for page in batch]
                for article in articles:
                    _write(article, files_out, counts, seed, valid_fraction)
                if not quiet and counts.articles and counts.articles % 10000 < len(batch):
                    print(f"{counts.articles:,} articles, {sum(counts.sentences.values()):,} sentences",
                          file=sys.stderr)
            _check_counts(dump, counts)
            result = {"dump": [os.path.abspath(f) for f in files], "valid_fraction": valid_fraction, "seed": seed,
                      "max_articles": max_articles, "filter_models": [os.path.abspath(m) for m in filter_models],
                      "max_tokens": max_tokens if filter_models else None, **counts.__dict__}
            handles[2].write(json.dumps(result, indent=2) + "\n")
    finally:
        _WORKER.clear()
        if pool is not None:
            pool.terminate()
            pool.join()
    if not quiet:
        print(_summary(dump, counts, filter_models, max_tokens), file=sys.stderr)
    return result


def _check_options(valid_fraction: float, workers: int, max_articles: int | None) -> None:
    """The options :func:`prepare` refuses before it reads the dump."""
    if not 0.0 < valid_fraction < 1.0:
        raise UserError("--valid-fraction must be between 0 and 1 (exclusive)")
    if workers < 1:
        raise UserError("--workers must be at least 1")
    if max_articles is not None and max_articles < 1:
        raise UserError("--max-articles must be at least 1")


def _check_outputs(out: str, outputs: list[str], files: list[str], filter_models) -> None:
    """Before the dump is read: ``--out`` is a folder (or can be made), every output can be written and none of
    them is the dump or a filter model (the same path, a symlink or a hard link to it)."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise UserError(f"--out {out} is a file, not a folder")
    for path in outputs:
        check_output_path(path)
    check_distinct(outputs, [*((f, "--dump") for f in files), *((m, "--filter-model") for m in filter_models)])


def _check_counts(dump: str, counts: Counts) -> None:
    """A dump without pages, or a split without an article, is an error (no output is published)."""
    if counts.pages == 0:
        raise UserError(f"{dump}: no <page> in the dump")
    for split in ("train", "valid"):
        if counts.documents[split] == 0:
            raise UserError(f"no article with text in the {split} split ({counts.articles} articles read): "
                            f"give more articles or change --valid-fraction")


def _summary(dump: str, counts: Counts, filter_models: tuple[str, ...], max_tokens: int) -> str:
    """The line on stderr after the run: what was read, skipped, written and filtered."""
    return (f"{dump}: {counts.pages:,} pages, {counts.articles:,} articles ({counts.redirects:,} redirects, "
            f"{counts.other_namespaces:,} other namespaces skipped, {counts.empty_articles:,} without text); "
            f"train {counts.documents['train']:,} articles / {counts.sentences['train']:,} sentences / "
            f"{counts.words['train']:,} words, valid {counts.documents['valid']:,} / "
            f"{counts.sentences['valid']:,} / {counts.words['valid']:,}"
            + (f"; {counts.filtered_sentences:,} sentences over {max_tokens} tokens removed" if filter_models
               else ""))


def _write(article: Article, files_out: dict, counts: Counts, seed: int, fraction: float) -> None:
    counts.filtered_sentences += article.removed
    if not article.sentences:
        counts.empty_articles += 1
        return
    split = "valid" if in_valid(article.title, seed, fraction) else "train"
    fh = files_out[split]
    if counts.documents[split]:
        fh.write("\n")   # a blank line between documents
    fh.write("\n".join(article.sentences) + "\n")
    counts.documents[split] += 1
    counts.sentences[split] += len(article.sentences)
    counts.words[split] += sum(len(s.split()) for s in article.sentences)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="morphtok-prepare-wikipedia", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                                epilog=f"Download the dump by hand: {DUMP_URL}")
    p.add_argument("--dump", required=True,
                   help=f"a *-pages-articles*.xml.bz2 dump (or .xml, .xml.gz), or a folder of {DUMP_PATTERN}")
    p.add_argument("--out", required=True, help="output folder: train.LANG, valid.LANG, prepare.json")
    p.add_argument("--lang", default="en", help="language suffix of the output files")
    p.add_argument("--valid-fraction", type=float, default=0.01, help="share of articles in valid.LANG")
    p.add_argument("--seed", type=int, default=1, help="seed of the article-level validation split")
    p.add_argument("--max-articles", type=int, help="stop after this many articles (default: the whole dump)")
    p.add_argument("--workers", type=int, default=1, help="processes that clean and split articles")
    p.add_argument("--filter-model", action="append", default=[],
                   help="space-keeping SentencePiece model for the length filter (repeatable; see morphtok-lm-filter)")
    p.add_argument("--max-tokens", type=int, default=510, help="with --filter-model: most pieces per sentence")
    p.add_argument("--quiet", action="store_true", help="no progress or summary on stderr")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    prepare(args.dump, args.out, args.lang, args.valid_fraction, args.seed, args.max_articles, args.workers,
            tuple(args.filter_model), args.max_tokens, quiet=args.quiet)
    return 0


def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
