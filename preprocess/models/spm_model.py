"""Reading a SentencePiece model: the protobuf reader that checks a ``.model`` file is complete
(:func:`check_model_proto`), :func:`load_model` (the project's one way to load a model: a missing, corrupt or
truncated file is a one-line :class:`~preprocess.common.UserError`) and the model's space symbol.

Training is :mod:`preprocess.models.spm`; the fairseq dictionary of a model is :mod:`preprocess.models.fairseq_dict`
(:mod:`preprocess.models.spm` gives every name of the three, its older home).
"""
from __future__ import annotations

from preprocess.common import UserError
from preprocess.files.inputs import require_file

#: U+2581 LOWER ONE EIGHTH BLOCK: SentencePiece's meta symbol for whitespace (a word-start marker).
SPACE_SYMBOL = "\u2581"


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """A protobuf varint at ``pos``: (value, position after it); ValueError when the data ends inside it."""
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


#: ModelProto's fields (sentencepiece_model.proto): 1 pieces (repeated), 2 trainer_spec, 3 normalizer_spec,
#: 4 self_test_data, 5 denormalizer_spec.  TrainerSpec field 4 is vocab_size.
_PIECES, _TRAINER_SPEC, _NORMALIZER_SPEC = 1, 2, 3


def model_proto_fields(data: bytes) -> dict:
    """Walk the top level of a serialized SentencePiece ``ModelProto``: ``{field number: count}``.

    Raises ValueError when the bytes are not a sequence of complete fields (the file ends inside a tag, a length
    or a value, or a wire type is invalid)."""
    counts: dict = {}
    pos, end = 0, len(data)
    pieces = 0
    while pos + 1 < end and data[pos] == 0x0A and data[pos + 1] < 0x80:   # fast path: a piece shorter than 128
        pos += 2 + data[pos + 1]
        pieces += 1
    if pos > end:
        raise ValueError(f"field 1 runs past the end of the file ({pos} > {end} bytes)")
    if pieces:
        counts[_PIECES] = pieces
    while pos < end:
        key, pos = _varint(data, pos)
        field, wire = key >> 3, key & 7
        if field == 0:
            raise ValueError(f"field number 0 at byte {pos}")
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 2:
            size, pos = _varint(data, pos)
            pos += size
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError(f"wire type {wire} at byte {pos}")
        if pos > end:
            raise ValueError(f"field {field} runs past the end of the file ({pos} > {end} bytes)")
        counts[field] = counts.get(field, 0) + 1
    return counts


def check_model_proto(data: bytes) -> int:
    """Check that ``data`` is a *complete* serialized SentencePiece model; returns its number of pieces.

    The rule: every byte belongs to a whole top-level field, and the fields every trained model has are there:
    at least one piece, ``trainer_spec`` and ``normalizer_spec``.  A writer serializes the fields in number
    order (pieces, then the two specs), so a file cut anywhere, inside a field or exactly between two fields,
    either ends inside a field or lacks a spec: the cut is found wherever it is.  The one cut this cannot see is
    between ``normalizer_spec`` and a ``denormalizer_spec``, which only models trained with a denormalization
    rule have (SentencePiece writes none otherwise; the project never asks for one).  Raises ValueError."""
    counts = model_proto_fields(data)
    missing = [name for field, name in ((_PIECES, "pieces"), (_TRAINER_SPEC, "trainer_spec"),
                                        (_NORMALIZER_SPEC, "normalizer_spec")) if field not in counts]
    if missing:
        raise ValueError(f"no {' and no '.join(missing)}: the file is incomplete (truncated?)")
    return counts[_PIECES]


def load_model(path: str):
    """Load a SentencePiece model; a missing, corrupt or incomplete (truncated) file raises a one-line
    :class:`UserError` naming it.

    The file is read once and checked with :func:`check_model_proto` before SentencePiece parses it (a model cut
    at a protobuf field boundary otherwise loads silently, with fewer pieces or default normalisation); after
    loading, the processor must hold every piece the file lists."""
    import sentencepiece as spm

    require_file(path, "SentencePiece model")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise UserError(f"cannot read SentencePiece model {path}: {exc.strerror or exc}") from None
    if not data:
        raise UserError(f"not a valid SentencePiece model: {path} (the file is empty)")
    try:
        n_pieces = check_model_proto(data)
    except ValueError as exc:
        raise UserError(f"not a valid SentencePiece model: {path} ({exc})") from None
    sp = spm.SentencePieceProcessor()
    try:
        sp.LoadFromSerializedProto(data)
    except (OSError, RuntimeError) as exc:
        raise UserError(f"not a valid SentencePiece model: {path} ({str(exc).splitlines()[0]})") from None
    if sp.get_piece_size() != n_pieces:
        raise UserError(f"not a valid SentencePiece model: {path} (the file lists {n_pieces} pieces, "
                        f"SentencePiece loaded {sp.get_piece_size()})")
    return sp


def is_prime_model(sp) -> bool:
    """True when the model keeps spaces as their own token (trained with ``variant="prime"``)."""
    return SPACE_SYMBOL in sp.encode("a b", out_type=str)
