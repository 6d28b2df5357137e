"""Checks that a model or vocabulary file is whole before it is used.

SentencePiece models are checked where they are loaded (:func:`preprocess.models.spm.load_model`, with
:func:`preprocess.models.spm.check_model_proto`).  Text models and vocabularies (FLOTA's token lists, fairseq
``dict.txt`` and SentencePiece ``.vocab`` read as vocabularies, the Wordmap vocabulary) are checked here: every
line such a file holds ends with a line break, as every tool that writes them writes it (BERT's ``vocab.txt``,
fairseq, SentencePiece, this project), so a file cut inside a line (a token or a count cut short) ends without
one and is refused.  A cut exactly at a line break leaves a shorter, well-formed file that no format without a
count or checksum can tell from a complete one; JSON vocabularies are checked by their parser (a cut leaves the
document open).
"""
from __future__ import annotations

import os

from preprocess.common import UserError


def require_complete_text(path: str, what: str, data: bytes | None = None) -> bytes | None:
    """Raise a one-line :class:`UserError` naming ``path`` when the non-empty text file ``path`` does not end
    with a line break (truncated inside a line).  ``data``: the file's bytes when the caller has read them
    already (then they are checked and returned); otherwise only the last byte is read.  A ``.gz`` file is left
    to the decompressor, which refuses a cut stream itself."""
    if data is None:
        if str(path).endswith(".gz"):
            return None
        try:
            with open(path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                if fh.tell() == 0:
                    return None
                fh.seek(-1, os.SEEK_END)
                last = fh.read(1)
        except OSError as exc:
            raise UserError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    else:
        last = data[-1:]
    if last and last not in (b"\n", b"\r"):
        raise UserError(f"{what} {path} ends inside a line (no final line break): the file is incomplete "
                        f"(truncated?); if it is whole, add the final line break")
    return data
