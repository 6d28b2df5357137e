"""Trained tokenisers in Hugging Face form: ``tokenizer.json`` for SentencePiece-based schemes, tokenizer classes
for the schemes that need a tagger or a search (BITE, FLOTA, Wordmap).

Ids are the fairseq dictionary ids the project writes: fairseq's ``Dictionary`` puts ``<s>`` = 0, ``<pad>`` = 1,
``</s>`` = 2, ``<unk>`` = 3 first and then the entries of ``dict.txt`` in file order, so entry *i* (0-based) of
``dict.txt`` has id ``4 + i``.  A fairseq checkpoint's embedding rows therefore line up with the exported ids.
Encoding with special tokens appends ``</s>``, as fairseq's binarisation does (``add_special_tokens=False``: the
pieces alone).

The dictionary is the scheme's own (see ``train_scripts.schemes``, "Dictionary policy"): a SentencePiece model's
pieces (:func:`preprocess.models.spm.dictionary_pieces`) for space-as-token, plain SentencePiece and BITE's subword model;
the vocabulary's tokens for FLOTA (:func:`preprocess.hf.flota.flota_dictionary`, what the flota scheme writes); for Wordmap the
``dict.wordmap.LANG.txt`` that ``binarize`` wrote (its inventory is open, so it must be given).  ``--dict`` gives
any other fairseq ``dict.txt`` (e.g. the one ``binarize --srcdict`` used).

Writing a ``tokenizer.json`` needs ``tokenizers`` and ``protobuf`` (the ``hf`` extra); loading it needs only
``tokenizers`` (or ``transformers``).  Nothing here imports fairseq.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from typing import Optional, Sequence

from preprocess.common import UserError
from preprocess.files.inputs import require_file
from preprocess.files.outputs import atomic_output
from preprocess.models.fairseq_dict import FAIRSEQ_SPECIALS, SPECIAL_TOKENS, dictionary_pieces, write_dict
from preprocess.models.spm_model import SPACE_SYMBOL

#: fairseq's Dictionary adds these itself, in this order, before the entries of dict.txt
BOS_ID, PAD_ID, EOS_ID, UNK_ID = range(4)
DICT_FILE = "dict.txt"
_OVERWRITE = "#fairseq:overwrite"

# SentencePiece's ModelProto.SentencePiece.Type
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = 1, 2, 3, 4, 5, 6


# --- the fairseq dictionary ------------------------------------------------------------------------------------

def read_fairseq_dict(path: str) -> list[str]:
    """The entries of a fairseq ``dict.txt`` in the order fairseq's ``Dictionary.add_from_file`` gives them ids
    (``4 + i``): ``TOKEN COUNT`` lines; a line flagged ``#fairseq:overwrite`` whose token is already there adds
    nothing (as in fairseq); a duplicate without the flag is an error, as in fairseq."""
    require_file(path, "fairseq dictionary")
    seen = {t: True for t in FAIRSEQ_SPECIALS}
    tokens: list[str] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            overwrite = line.endswith(" " + _OVERWRITE)
            if overwrite:
                line = line[:-len(_OVERWRITE) - 1]
            token, sep, count = line.rpartition(" ")
            if not sep or not token or not count.lstrip("-").isdigit():
                raise UserError(f"{path}:{lineno}: not a fairseq dictionary line ('TOKEN COUNT'): {line!r}")
            if token in seen:
                if overwrite:
                    continue
                raise UserError(f"{path}:{lineno}: duplicate token {token!r} (fairseq refuses this dictionary)")
            seen[token] = True
            tokens.append(token)
    return tokens


def fairseq_ids(tokens: Sequence[str]) -> dict[str, int]:
    """token -> fairseq id for the entries of a ``dict.txt`` (specials included)."""
    ids = {t: i for i, t in enumerate(FAIRSEQ_SPECIALS)}
    for i, t in enumerate(tokens):
        ids.setdefault(t, len(FAIRSEQ_SPECIALS) + i)
    return ids


# --- SentencePiece -> tokenizer.json -----------------------------------------------------------------------------

def _model_proto(path: str):
    try:
        from sentencepiece import sentencepiece_model_pb2
    except ImportError as exc:  # protobuf missing
        raise UserError(f"reading a SentencePiece model for export needs protobuf (pip install .[hf]): {exc}") from None
    from preprocess.models.spm_model import load_model
    load_model(path)   # the project's one check that the file is a valid model
    proto = sentencepiece_model_pb2.ModelProto()
    with open(path, "rb") as fh:
        proto.ParseFromString(fh.read())
    return proto


def _punct_decoder_pattern() -> str:
    """A regex matching the start of every piece that starts a new word in the 'no spaces' decode of
    :func:`preprocess.schemes.spaces.decode_pieces`: all pieces except those made only of punctuation that are not a
    substring of ``([{"'`` (those attach to the previous word)."""
    opening = "([{\"'"
    exceptions = sorted({opening[i:j] for i in range(len(opening)) for j in range(i + 1, len(opening) + 1)},
                        key=len, reverse=True)
    exc = "|".join(re.escape(e) for e in exceptions)
    return rf"^(?:(?!\p{{P}}+$)|(?=(?:{exc})$))"


def _tokenizer_model(model_path: str, trainer, pieces: list, ids: dict, score: dict):
    """The ``tokenizers`` model (Unigram or BPE) that segments as the SentencePiece model does."""
    from tokenizers import models

    by_id = sorted(ids.items(), key=lambda kv: kv[1])
    byte_fallback = bool(trainer.byte_fallback)
    if trainer.model_type == 1:   # UNIGRAM
        return models.Unigram([(t, 0.0 if i < 4 else float(score[t])) for t, i in by_id], UNK_ID, byte_fallback)
    if trainer.model_type == 2:   # BPE: SentencePiece merges the adjacent pair whose concatenation is the
        # highest-scoring piece; merges ranked by that piece's score give the same order to tokenizers' BPE
        vocab = dict(by_id)
        mergeable = {p for p, t, _ in pieces if t in (_NORMAL, _USER_DEFINED)}
        merges = []
        for p, t, _score in sorted(pieces, key=lambda x: -x[2]):
            if t != _NORMAL or len(p) < 2:
                continue
            for k in range(1, len(p)):
                if p[:k] in mergeable and p[k:] in mergeable:
                    merges.append((p[:k], p[k:]))
        return models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=byte_fallback, fuse_unk=True)
    raise UserError(f"{model_path}: only unigram and bpe SentencePiece models can be exported")


def _normalizer(norm, others: list):
    """SentencePiece's normalisation (``norm``: the model's normalizer_spec) as a ``tokenizers`` normalizer;
    ``others``: the user-defined symbols other than ``▁``."""
    from tokenizers import Regex, normalizers

    steps = []
    if norm.precompiled_charsmap:
        steps.append(normalizers.Precompiled(norm.precompiled_charsmap))
    if norm.remove_extra_whitespaces:
        steps += [normalizers.Replace(Regex(" {2,}"), " "), normalizers.Strip(left=True, right=True)]
    if norm.add_dummy_prefix and others:
        # tokenizers normalises the text of an added token with this normalizer too: a plain Prepend would make a
        # user-defined symbol match only as "▁X", where SentencePiece gives "▁" "X"; so the dummy prefix goes
        # before any non-empty text except a user-defined symbol alone (which is then the one difference)
        alone = "|".join(re.escape(u) for u in sorted(others, key=len, reverse=True))
        steps.append(normalizers.Replace(Regex(f"^(?=.)(?!(?:{alone})$)"), SPACE_SYMBOL))
    elif norm.add_dummy_prefix:
        steps.append(normalizers.Prepend(SPACE_SYMBOL))
    steps.append(normalizers.Replace(" ", SPACE_SYMBOL))
    return normalizers.Sequence(steps)


def sentencepiece_tokenizer(model_path: str, spaces: str = "keep", dictionary: Optional[Sequence[str]] = None):
    """A ``tokenizers.Tokenizer`` that segments as the SentencePiece model does (``preprocess.schemes.spaces
    .SpacesEncoder``: ``keep`` or ``drop`` the standalone ``▁`` pieces), with fairseq dictionary ids.

    ``dictionary``: the ``dict.txt`` entries (default: :func:`preprocess.models.spm.dictionary_pieces`, the project's
    policy).  It must hold exactly the model's pieces (any order): a ``tokenizer.json`` model cannot emit a piece
    without an id, nor keep an id that its model never emits out of its search.
    """
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, pre_tokenizers, processors

    from preprocess.models import spm

    if spaces not in ("keep", "drop"):
        raise UserError(f"--spaces must be keep or drop, not {spaces!r}")
    proto = _model_proto(model_path)
    pieces = [(p.piece, p.type, p.score) for p in proto.pieces]
    own = spm.dictionary_pieces(model_path)
    tokens = list(own) if dictionary is None else list(dictionary)
    if set(tokens) != set(own):
        missing = [t for t in own if t not in set(tokens)]
        extra = [t for t in tokens if t not in set(own)]
        raise UserError(f"the dictionary does not list exactly the pieces of {model_path} ({len(missing)} pieces "
                        f"missing, e.g. {missing[:3]}; {len(extra)} entries the model never emits, e.g. {extra[:3]}): "
                        "a tokenizer.json cannot reproduce that; export with the model's own dictionary")
    ids = fairseq_ids(tokens)
    score = {p: s for p, _, s in pieces}
    user_defined = [p for p, t, _ in pieces if t == _USER_DEFINED and p in ids]
    prime = SPACE_SYMBOL in user_defined
    norm = proto.normalizer_spec
    trainer = proto.trainer_spec
    if trainer.treat_whitespace_as_suffix or not norm.escape_whitespaces or not trainer.split_by_whitespace:
        raise UserError(f"{model_path}: export supports SentencePiece's whitespace defaults (escape_whitespaces, "
                        "split_by_whitespace, whitespace as prefix)")
    if spaces == "drop" and not prime:
        raise UserError(f"--spaces drop needs a space-as-token (prime) model; {model_path} has no standalone ▁")
    if any(t == _BYTE for _, t, _ in pieces) and not trainer.byte_fallback:
        raise UserError(f"{model_path}: byte pieces without byte_fallback are not supported")

    tok = Tokenizer(_tokenizer_model(model_path, trainer, pieces, ids, score))
    others = [u for u in user_defined if u != SPACE_SYMBOL]
    tok.normalizer = _normalizer(norm, others)
    if prime:   # ▁ is always a piece of its own: isolate it (keep) or drop it ("no spaces")
        tok.pre_tokenizer = pre_tokenizers.Split(SPACE_SYMBOL, "isolated" if spaces == "keep" else "removed")
    else:
        tok.pre_tokenizer = pre_tokenizers.Split(SPACE_SYMBOL, "merged_with_next")
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in FAIRSEQ_SPECIALS])
    if others:
        tok.add_tokens([AddedToken(u, special=False, normalized=True) for u in others])
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                       special_tokens=[("</s>", EOS_ID)])
    if spaces == "drop":   # preprocess.schemes.spaces.decode_pieces: a word per piece, punctuation attached
        steps = [decoders.Replace(Regex(_punct_decoder_pattern()), " ")]
    else:   # SentencePiece's decode, which renders an unknown piece as " ⁇ "
        steps = [decoders.Replace("<unk>", " \u2047 "), decoders.Replace(SPACE_SYMBOL, " ")]
    if trainer.byte_fallback:
        steps.append(decoders.ByteFallback())
    steps.append(decoders.Fuse())
    if norm.add_dummy_prefix or spaces == "drop":   # the space before the first word
        steps.append(decoders.Strip(" ", 1, 0))
    tok.decoder = decoders.Sequence(steps)
    return tok


def export_sentencepiece(model_path: str, out_dir: str, spaces: str = "keep",
                         dictionary: Optional[Sequence[str]] = None, *, scheme: str) -> list[str]:
    """Write ``tokenizer.json``, ``tokenizer_config.json``, ``special_tokens_map.json`` and ``dict.txt`` into
    ``out_dir``; returns the paths written.  ``scheme``: the name ``tokenizer_config.json`` records (``morphtok``)."""
    tok = sentencepiece_tokenizer(model_path, spaces, dictionary)
    os.makedirs(out_dir, exist_ok=True)
    tokens = list(dictionary) if dictionary is not None else dictionary_pieces(model_path)
    written = []
    path = os.path.join(out_dir, "tokenizer.json")
    with atomic_output(path) as out:
        out.write(tok.to_str(pretty=True))
    written.append(path)
    config = {"tokenizer_class": "PreTrainedTokenizerFast", **SPECIAL_TOKENS, "clean_up_tokenization_spaces": False,
              "morphtok": {"scheme": scheme, "spaces": spaces,
                                                      "source_model": os.path.basename(model_path)}}
    written.append(write_json(os.path.join(out_dir, "tokenizer_config.json"), config))
    written.append(write_json(os.path.join(out_dir, "special_tokens_map.json"), dict(SPECIAL_TOKENS)))
    dict_path = os.path.join(out_dir, DICT_FILE)
    write_dict(tokens, dict_path)
    written.append(dict_path)
    return written


def write_json(path: str, obj) -> str:
    """Write ``obj`` as indented UTF-8 JSON through :func:`atomic_output`; returns ``path``."""
    with atomic_output(path) as out:
        json.dump(obj, out, indent=2, ensure_ascii=False)
        out.write("\n")
    return path


def copy_file(src: str, dst: str) -> str:
    with open(src, "rb") as fh, atomic_output(dst, "wb") as out:
        shutil.copyfileobj(fh, out)
    return dst
