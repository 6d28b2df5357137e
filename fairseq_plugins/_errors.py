"""User mistakes in ``--bpe``/``--tokenizer`` options, reported the way the project's own tools report them.

Inside a fairseq command-line tool (``fairseq-interactive --bpe spaces --spaces drop2``) an error in an adapter's
options would end in a ten-frame traceback through fairseq's registry; :func:`user_errors` prints
``error: <message>`` on one line and exits with status 2 instead.  Called from Python (hub ``from_pretrained``,
``encoders.build_bpe``), it raises :class:`preprocess.common.UserError` with the same message, which a caller can
catch.  (A module whose name starts with ``_`` is not imported as an adapter by ``fairseq_plugins/__init__``.)
"""
from __future__ import annotations

import contextlib
import os
import sys

from preprocess.common import UserError
from preprocess.tagging import TaggerUnavailable

#: what fairseq leaves in a string option that was never given (omegaconf's MISSING)
MISSING = "???"


def in_fairseq_cli() -> bool:
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None) or ""
    return name.startswith("fairseq_cli") or os.path.basename(sys.argv[0] or "").startswith("fairseq-")


@contextlib.contextmanager
def user_errors(what: str):
    """Turn a user mistake (bad option value, missing or unusable model) raised while building an adapter into
    one line naming the adapter (``what``, e.g. ``--bpe spaces``)."""
    try:
        yield
    except (UserError, ValueError, OSError, TaggerUnavailable) as exc:
        message = f"{what}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        if in_fairseq_cli():
            print(f"error: {message}", file=sys.stderr)
            raise SystemExit(2) from None
        raise UserError(message) from None


def required_path(cfg, name: str) -> str:
    """The path given for the option ``name`` of ``cfg``, or a one-line error naming the option (instead of
    ``not found: ???`` or omegaconf's ``MissingMandatoryValue`` traceback)."""
    option = "--" + name.replace("_", "-")
    from omegaconf.errors import MissingMandatoryValue

    try:
        value = getattr(cfg, name, None)
    except MissingMandatoryValue:
        value = None
    if value in (None, "", MISSING):
        raise UserError(f"{option} is required (give the path of the file)")
    return str(value)
