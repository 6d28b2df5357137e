"""HanTa tagging for Wordmap: the tagger, the tokens handed to it, the tags of a line, and the verbs (HanTa tags
``VV*``, ``VA*``, ``VM*``) of German text, collected in one process or on ``preprocess.encode``'s workers."""
from __future__ import annotations

import os
import re
import sys
from typing import Callable, Iterable, Iterator, Sequence

from preprocess.common import UserError, flatten_line
from preprocess.files.inputs import UTF8_HINT, read_lines, require_file
from preprocess.schemes.wordmap.maps import normalise_verb

VERB_TAG_PREFIXES = ("VV", "VA", "VM")
MAX_TAG_WORD_LEN = 40
#: tokens handed to HanTa: runs of letters, runs of digits, or one other non-space character
_TAG_TOKEN_RE = re.compile(r"[^\W\d_]+|\d+|[^\s]", re.UNICODE)


def load_tagger():
    """The process's German HanTa tagger: :class:`preprocess.tagging.hanta_fast.FastHanta` (HanTa's exact tags with
    per-word caches), or HanTa itself where the installed HanTa behaves differently (with a warning)."""
    try:
        import HanTa  # noqa: F401
    except ImportError as exc:  # pragma: no cover - HanTa is a dependency
        raise UserError(f"HanTa is not installed: {exc}") from None
    from preprocess.tagging import hanta_fast
    return hanta_fast.load("morphmodel_ger.pgz")


def is_verb_tag(tag: str) -> bool:
    return tag.startswith(VERB_TAG_PREFIXES)


def tag_token_list(words: list[str]) -> list[str]:
    """``_TAG_TOKEN_RE.findall(line)`` for ``words = line.split()`` (see :func:`tag_tokens_by_word`)."""
    return tag_tokens_by_word(words)[0]


def tag_tokens_by_word(words: list[str]) -> tuple[list[str], list[int]]:
    """``_TAG_TOKEN_RE.findall(line)`` for ``words = line.split()``, and the index of each word's first token
    (one more entry at the end: the number of tokens).  No token crosses white space (the same for ``str.split``
    and the regex), so the tokens of one word spell it; a word of letters only (``str.isalpha``: every such
    character is in ``[^\\W\\d_]``) is one token."""
    tokens: list[str] = []
    starts: list[int] = []
    for w in words:
        starts.append(len(tokens))
        if w.isalpha():
            tokens.append(w)
        else:
            tokens += _TAG_TOKEN_RE.findall(w)
    starts.append(len(tokens))
    return tokens, starts


class VerbTags(dict):
    """tag -> :func:`is_verb_tag` (tag), remembered for the first 4,096 tags (a tagger has a few dozen)."""

    def __missing__(self, tag: str) -> bool:
        verb = is_verb_tag(tag)
        if len(self) < 4096:
            self[tag] = verb
        return verb


def tag_tokens(tokens: Sequence[str], tagger=None, window: int = 200,
               on_untagged: Callable[[int], None] | None = None) -> list[str]:
    """HanTa POS tags for ``tokens`` (one per token).  Never raises: untaggable tokens get ``"?"``.

    The tags are those of HanTa's ``tag_sent(window, taglevel=1)`` over windows of ``window`` tokens, and a
    window for which that call raises is all ``"?"`` (``on_untagged`` is then called with its number of tokens,
    so that a caller can report it).  ``tagger``: a :mod:`preprocess.tagging.hanta_fast` tagger (which computes the same
    without the lemma pass), or a ``HanoverTagger``."""
    tagger = tagger or load_tagger()
    fast = hasattr(tagger, "check_lemmas")
    if fast and 0 < len(tokens) <= window and max(map(len, tokens)) <= MAX_TAG_WORD_LEN and "" not in tokens:
        # the common case, one window of taggable tokens: the window's tags without the copies below
        return _tag_window(tagger, fast, tokens, on_untagged)
    tags: list[str] = []
    for start in range(0, len(tokens), window):
        chunk = list(tokens[start:start + window])
        safe = [t if (t and len(t) <= MAX_TAG_WORD_LEN) else "X" for t in chunk]
        ctags = _tag_window(tagger, fast, safe, on_untagged)
        tags.extend("?" if s != t else g for s, t, g in zip(safe, chunk, ctags))
    return tags


def _tag_window(tagger, fast: bool, words: Sequence[str], on_untagged: Callable[[int], None] | None) -> list[str]:
    """The tags of one window of taggable ``words`` (:func:`tag_tokens`): HanTa's ``tag_sent(words, taglevel=1)``
    tags, or all ``"?"`` where that call raises (``on_untagged`` then called with the window's length).  ``fast``:
    ``tagger`` is a :mod:`preprocess.tagging.hanta_fast` tagger, whose lemma check fails where HanTa's lemma pass
    does."""
    try:
        if fast:
            ctags = tagger.tag_sent(words)
            tagger.check_lemmas(words, ctags)   # where HanTa's lemma pass fails, so does this (same "?")
        else:
            res = tagger.tag_sent(words, taglevel=1)
            ctags = [r[2] if len(r) > 2 else r[1] for r in res]
        if len(ctags) != len(words):
            raise ValueError("tag count mismatch")
        return ctags
    except Exception:  # noqa: BLE001 - HanTa's own failures (its lemma pass): "?" as HanTa, counted
        if on_untagged is not None:
            on_untagged(len(words))
        return ["?"] * len(words)


def tag_line(line: str, tagger=None, on_untagged: Callable[[int], None] | None = None
             ) -> list[tuple[int, int, str, str]]:
    """``(start, end, token, tag)`` for the HanTa tokens of one line (letters, digits, single symbols)."""
    spans = [(m.start(), m.end(), m.group()) for m in _TAG_TOKEN_RE.finditer(line)]
    if not spans:
        return []
    tags = tag_tokens([s[2] for s in spans], tagger, on_untagged=on_untagged)
    return [(a, b, tok, tag) for (a, b, tok), tag in zip(spans, tags)]


def extract_verbs(lines: Iterable[str], tagger=None, extra_words: Iterable[str] | None = None,
                  progress: bool = False) -> list[str]:
    """Verb forms (HanTa tags VV*, VA*, VM*) of German sentences, lower-cased, unique, in order of first occurrence.

    ``lines``: German sentences (e.g. Multi30k's train.de); ``extra_words`` (a user word list) is appended.  Forms that are not plain letter strings of length >= 2 are skipped.
    """
    tagger = tagger or load_tagger()
    seen: dict[str, None] = {}
    it = lines
    if progress:
        from tqdm import tqdm
        it = tqdm(lines, desc="HanTa", unit=" lines", file=sys.stderr, mininterval=1.0)
    for line in it:
        for _a, _b, tok, tag in tag_line(flatten_line(line), tagger):
            if is_verb_tag(tag):
                w = normalise_verb(tok)
                if w:
                    seen.setdefault(w, None)
    for word in extra_words or ():
        w = normalise_verb(word)
        if w:
            seen.setdefault(w, None)
    return list(seen)


def open_text(path: str) -> Iterator[str]:
    require_file(path, "corpus")
    yield from read_lines(path, errors="replace")


class VerbLister:
    """A line encoder for :class:`preprocess.encode.FileEncoder`: every line becomes the verbs that
    :func:`extract_verbs` collects from it (normalised, space-separated), so the training text is tagged by the
    workers, ``--chunk-size`` lines at a time."""

    def __init__(self, tagger=None):
        self.tagger = tagger or load_tagger()

    def verbs(self, line: str) -> list[str]:
        out = []
        for _a, _b, tok, tag in tag_line(flatten_line(line), self.tagger):
            if is_verb_tag(tag):
                w = normalise_verb(tok)
                if w:
                    out.append(w)
        return out

    def encode_lines(self, lines: list[str]) -> list[str]:
        return [" ".join(self.verbs(line)) for line in lines]


def extract_verbs_file(path: str, workers: int = 1, chunk_size: int = 2000, max_lines: int = 0,
                       quiet: bool = True, extra_words: Iterable[str] | None = None, tmp_dir: str | None = None
                       ) -> list[str]:
    """:func:`extract_verbs` of the first ``max_lines`` lines (0: all) of a text file, tagged by ``workers``
    processes as ``preprocess.encode`` encodes (memory bounded by ``workers x chunk_size`` lines and the verb
    types, whatever the file size); the verbs of every line go through a temporary file in ``tmp_dir`` (default:
    the system's temporary folder).  The same verbs in the same order as :func:`extract_verbs`."""
    import tempfile

    from preprocess.encode import FileEncoder, file_options
    require_file(path, "corpus")
    with tempfile.TemporaryDirectory(prefix="wordmap-verbs-", dir=tmp_dir) as tmp:
        src = path
        if max_lines:
            src = os.path.join(tmp, "head.txt")
            with open(src, "w", encoding="utf-8", newline="\n") as fh:
                for i, line in enumerate(read_lines(path, errors="replace")):
                    if i >= max_lines:
                        break
                    fh.write(line + "\n")
        dst = os.path.join(tmp, "verbs.txt")
        options = file_options(workers=workers, chunk_size=chunk_size, errors="replace", quiet=quiet,
                               scheme="wordmap-verbs")
        FileEncoder(options, factory=VerbLister).encode_file(src, dst)
        seen: dict[str, None] = {}
        for line in read_lines(dst, hint=UTF8_HINT):
            for w in line.split():
                seen.setdefault(w, None)
    return extract_verbs([], extra_words=list(seen) + list(extra_words or ()))
