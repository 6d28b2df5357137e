"""Token inventories in the formats tokenizers ship them, read once for every scheme that reuses one.

* GPT-2's byte-level alphabet (:func:`to_byte_level`, :func:`from_byte_level`);
* the vocabulary readers (:func:`load_vocab`: SentencePiece ``.model``/``.vocab``, GPT-2 ``encoder.json``,
  Hugging Face ``tokenizer.json``, fairseq ``dict.txt``, plain token lists such as BERT's ``vocab.txt``) and the
  fairseq ``dict.txt`` of an inventory (:func:`fairseq_dict_tokens`, :func:`write_fairseq_dict`);
* the ``dict.txt`` of GPT-2 ids that official fairseq RoBERTa/BART checkpoints ship (:func:`is_gpt2_id_dict`,
  :func:`gpt2_id_map`);
* WordPiece: BERT's own segmentation (:func:`wordpiece_segment`, the standard segmentation FLOTA's baselines
  truncate) and what its uncased tokenizer does to text (:func:`is_uncased`, :func:`strip_accents`).

FLOTA (:mod:`preprocess.schemes.flota`) tokenises over any of these; the export (:mod:`preprocess.export.tokenizer_json`) and the
FLOTA recipe (``train_scripts/schemes/flota.py``) read and write them through this module.
"""
from __future__ import annotations

import json
import os
import re
import unicodedata
from itertools import compress
from typing import Iterable, Optional, Union

from preprocess.common import UserError
from preprocess.files.integrity import require_complete_text
from preprocess.files.outputs import check_distinct, check_output_path
from preprocess.models.fairseq_dict import FAIRSEQ_SPECIALS, write_dict
from preprocess.models.spm_model import load_model

# --- GPT-2 byte-level alphabet ---------------------------------------------------------------------------------

def _bytes_to_unicode() -> dict:
    """GPT-2's reversible map from the 256 byte values to printable characters."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    table = {}
    extra = 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_TO_CHAR = _bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def to_byte_level(text: str) -> str:
    if text.isascii() and text.isprintable() and " " not in text:
        return text  # printable ASCII other than space maps to itself
    return "".join(BYTE_TO_CHAR[b] for b in text.encode("utf-8", errors="replace"))


def from_byte_level(text: str) -> str:
    data = bytes(CHAR_TO_BYTE[c] if c in CHAR_TO_BYTE else ord("?") for c in text)
    return data.decode("utf-8", errors="replace")


# --- vocabularies ----------------------------------------------------------------------------------------------

class Vocab:
    """A token inventory in id order, plus what was learnt about it from its file."""

    def __init__(self, tokens: list, kind: str, source: Optional[str] = None, sp_model=None,
                 unk_token: Optional[str] = None, max_input_chars_per_word: int = 100, hf_type: str = ""):
        self.tokens = tokens
        self.kind = kind  # list, sentencepiece, fairseq, json, hf
        self.source = source
        self.sp_model = sp_model  # path of a SentencePiece model, for modes first/longest
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word
        self.hf_type = hf_type


_FAIRSEQ_LINE = re.compile(r"^(\S+) (-?\d+)( #fairseq:overwrite)?$")
_SPM_VOCAB_LINE = re.compile(r"^([^\t]+)\t-?\d+(\.\d+)?([eE][-+]?\d+)?$")


def _read_text_lines(path: str) -> list:
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"vocabulary {path} is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    require_complete_text(path, "vocabulary", data)   # cut inside a line: a token or a count cut short
    lines = text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def load_vocab(source: Union[str, os.PathLike, Iterable[str], Vocab]) -> Vocab:
    """Read a token inventory.

    ``source``: a :class:`Vocab`; an iterable of token strings; or a path to a SentencePiece ``.model``, a GPT-2
    ``encoder.json`` / ``vocab.json`` (token -> id), a Hugging Face ``tokenizer.json``, a fairseq ``dict.txt``
    (``token count`` lines), a SentencePiece ``.vocab`` (``piece<TAB>score``), or a plain list with one token per
    line (BERT's ``vocab.txt``, the inventories in ``flota_vocabs/``).  Empty lines of a list are skipped.
    """
    if isinstance(source, Vocab):
        return source
    if not isinstance(source, (str, os.PathLike)):
        tokens = [t for t in source if isinstance(t, str) and t != ""]
        if not tokens:
            raise UserError("the vocabulary is empty")
        return Vocab(tokens, "iterable", unk_token="[UNK]" if "[UNK]" in tokens else None)
    path = os.fspath(source)
    if not os.path.isfile(path):
        raise UserError(f"vocabulary not found: {path}")
    if path.endswith(".model"):
        try:
            sp = load_model(path)
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001 - SentencePiece's load errors vary: reported as one line
            raise UserError(f"cannot load SentencePiece model {path}: {exc}") from None
        tokens = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
        unk = sp.id_to_piece(sp.unk_id()) if sp.unk_id() >= 0 else None
        return Vocab(tokens, "sentencepiece", path, sp_model=path, unk_token=unk)
    if path.endswith(".json"):
        try:
            with open(path, encoding="utf-8") as fh:
                obj = json.load(fh)
        except (ValueError, UnicodeDecodeError) as exc:
            raise UserError(f"cannot read JSON vocabulary {path}: {exc}") from None
        return _vocab_from_json(obj, path)
    lines = [line for line in _read_text_lines(path) if line != ""]
    if not lines:
        raise UserError(f"the vocabulary {path} is empty")
    if all(_FAIRSEQ_LINE.match(line) for line in lines):
        tokens = [_FAIRSEQ_LINE.match(line).group(1) for line in lines]
        return Vocab(tokens, "fairseq", path, unk_token="<unk>")
    if all(_SPM_VOCAB_LINE.match(line) for line in lines):
        tokens = [line.split("\t", 1)[0] for line in lines]
        return Vocab(tokens, "sentencepiece-vocab", path, unk_token="<unk>" if "<unk>" in tokens else None)
    return Vocab(lines, "list", path, unk_token="[UNK]" if "[UNK]" in lines else None)


def _vocab_from_json(obj, path: str) -> Vocab:
    if isinstance(obj, dict) and isinstance(obj.get("model"), dict):  # Hugging Face tokenizer.json
        model = obj["model"]
        vocab = model.get("vocab")
        if isinstance(vocab, dict):
            tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
        elif isinstance(vocab, list):  # Unigram: [[piece, score], ...]
            tokens = [item[0] for item in vocab]
        else:
            raise UserError(f"{path}: tokenizer.json without a vocabulary")
        known = set(tokens)
        for added in obj.get("added_tokens") or []:
            content = added.get("content") if isinstance(added, dict) else None
            if content and content not in known:
                tokens.append(content)
                known.add(content)
        unk = model.get("unk_token")
        if isinstance(unk, int):
            unk = tokens[unk] if 0 <= unk < len(tokens) else None
        return Vocab(tokens, "hf", path, unk_token=unk,
                     max_input_chars_per_word=int(model.get("max_input_chars_per_word") or 100),
                     hf_type=str(model.get("type", "")))
    if isinstance(obj, dict) and obj and all(isinstance(v, int) for v in obj.values()):  # GPT-2 encoder.json
        tokens = [t for t, _ in sorted(obj.items(), key=lambda kv: kv[1])]
        return Vocab(tokens, "json", path, unk_token=None)
    if isinstance(obj, list) and all(isinstance(t, str) for t in obj):
        return Vocab([t for t in obj if t], "json", path)
    raise UserError(f"{path}: not a token -> id map, a token list or a tokenizer.json")


# --- the fairseq dict.txt of an inventory ----------------------------------------------------------------------

def fairseq_dict_tokens(vocab) -> tuple[list[str], list[str]]:
    """(entries, skipped) of a fairseq ``dict.txt`` for the loaded vocabulary ``vocab``: its tokens in order without
    duplicates and without fairseq's own specials; tokens containing whitespace cannot be written and are skipped."""
    tokens, skipped = [], []
    for tok in dict.fromkeys(vocab.tokens):
        if tok in FAIRSEQ_SPECIALS:
            continue
        if tok == "" or any(c.isspace() for c in tok) or re.search(r"\s", tok):
            skipped.append(tok)
            continue
        tokens.append(tok)
    return tokens, skipped


def write_fairseq_dict(vocab, path: str) -> dict:
    """Write a fairseq ``dict.txt`` holding every token of ``vocab`` in vocabulary order, atomically, with the
    project's rank pseudo-counts (:func:`preprocess.models.spm.write_dict`: any frequency threshold keeps the order).

    fairseq's Dictionary reserves ``<s> <pad> </s> <unk>`` itself, so those are not written again (a duplicate
    would make fairseq refuse the file); tokens that contain whitespace cannot be written and are skipped (FLOTA
    never emits one: its words contain no whitespace).  Returns ``{"written": n, "skipped": [...]}``.
    """
    check_output_path(path)
    if isinstance(vocab, (str, os.PathLike)):
        check_distinct([(path, "output")], [(vocab, "vocabulary")])

    tokens, skipped = fairseq_dict_tokens(load_vocab(vocab))
    return {"written": write_dict(tokens, path), "skipped": skipped}


# --- official fairseq checkpoints: a dict.txt of GPT-2 ids --------------------------------------------------------

def is_gpt2_id_dict(vocab) -> bool:
    """Whether ``vocab`` is a fairseq ``dict.txt`` of GPT-2 BPE ids, as official RoBERTa/BART checkpoints ship:
    its tokens are decimal ids (``13 850314647``), apart from a few specials (``madeupword0000``, ``<mask>``)."""
    v = load_vocab(vocab)
    return v.kind == "fairseq" and sum(t.isdigit() for t in v.tokens) >= 0.9 * len(v.tokens)


def gpt2_id_map(dict_path: str, encoder_json: str) -> dict:
    """GPT-2 token -> the id string that ``dict_path`` holds, for every id of the dictionary (in its order).

    The dictionary and ``encoder.json`` must belong together: an id of the dictionary that ``encoder.json`` does
    not have is an error naming the first such token.
    """
    ids = load_vocab(dict_path)
    if ids.kind != "fairseq":
        raise UserError(f"{dict_path} is not a fairseq dict.txt (lines 'TOKEN COUNT')")
    encoder = load_vocab(encoder_json)
    if encoder.kind != "json" or not str(encoder_json).endswith(".json"):
        raise UserError(f"{encoder_json} is not a GPT-2 encoder.json (token -> id)")
    with open(encoder_json, encoding="utf-8") as fh:
        id_to_token = {str(i): tok for tok, i in json.load(fh).items()}
    mapping = {}
    for lineno, tok in enumerate(ids.tokens, 1):
        if not tok.isdigit():
            continue  # fairseq's specials (madeupword0000, <mask>): nothing FLOTA emits
        if tok not in id_to_token:
            raise UserError(f"{encoder_json} does not match {dict_path}: its token {tok} (line {lineno}) is not an "
                            "id of encoder.json")
        mapping[id_to_token[tok]] = tok
    return mapping


# --- WordPiece: BERT's segmentation and its uncased tokenizer's normalisation ----------------------------------

def wordpiece_segment(word: str, vocab: set, unk: Optional[str] = "[UNK]", prefix: str = "##",
                      max_chars: int = 100, max_token_len: Optional[int] = None) -> list:
    """BERT's WordPiece: greedy longest-match-first from the left, continuations marked with ``prefix``.

    A word longer than ``max_chars`` or with a position that no vocabulary piece matches becomes ``[unk]``
    (or ``[]`` when ``unk`` is None), as in BERT's tokenizer.
    """
    bad = [unk] if unk is not None else []
    if len(word) > max_chars:
        return bad
    pieces = []
    start, n = 0, len(word)
    while start < n:
        end = n if max_token_len is None else min(n, start + max_token_len)
        found = None
        while end > start:
            sub = word[start:end]
            if start > 0:
                sub = prefix + sub
            if sub in vocab:
                found = sub
                break
            end -= 1
        if found is None:
            return bad
        pieces.append(found)
        start = end
    return pieces


def strip_accents(text: str) -> str:
    """What BERT's uncased tokenizer does to accents: canonical decomposition (NFD), then every nonspacing mark
    (category Mn) dropped: ``café`` -> ``cafe``, ``Männer`` -> ``Manner``."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def is_uncased(tokens: Iterable[str]) -> bool:
    """True when no token other than a bracketed special (``[CLS]``, ``<s>``) changes under lower-casing."""
    tokens = list(tokens)
    changed = compress(tokens, map(str.__ne__, tokens, map(str.lower, tokens)))
    return not any(t[:1] + t[-1:] not in ("[]", "<>") for t in changed)
