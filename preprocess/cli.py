"""A command's entry point: :func:`run_main` turns user errors, Ctrl-C, SIGTERM and a full disk into one line and an
exit status, after the same cleanup."""
from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
import threading

from preprocess.common import UserError
from preprocess.files.outputs import write_error


class Terminated(BaseException):
    """Raised in the main process on SIGTERM (SLURM's time limit and preemption signal), so that ``finally``
    blocks and :func:`atomic_output` clean up exactly as they do for Ctrl-C."""


def _ignore_signal(signum, frame):
    pass


def _first_signal_only(signum, frame):
    """SIGINT/SIGTERM handler of :func:`run_main`: the first signal stops the command; later ones (``timeout``
    and shells often deliver two in quick succession, or the user presses Ctrl-C again) are ignored, so that the
    cleanup they would interrupt (temporary and part files, worker processes) always completes."""
    for s in (signal.SIGINT, signal.SIGTERM):   # a Python no-op, not SIG_IGN: a signal already pending would
        signal.signal(s, _ignore_signal)        # otherwise raise "ignored due to race condition"
    if signum == signal.SIGINT:
        raise KeyboardInterrupt()
    raise Terminated()


def handle_signals() -> None:
    """In the main process: SIGINT and SIGTERM handled as one (see :func:`_first_signal_only`); SIGXFSZ (file
    size limit, ``ulimit -f``) ignored, so exceeding it is a write error (EFBIG) with one line, not a crash."""
    if threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGINT, _first_signal_only)
    signal.signal(signal.SIGTERM, _first_signal_only)
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def run_main(main, argv=None) -> int:
    """Run a CLI ``main(argv)`` turning :class:`UserError` into a one-line message and exit status 2.

    Ctrl-C exits with 130 and SIGTERM with 143, after the same cleanup (temporary files removed), with one line
    instead of a traceback.  Signals after the first are ignored until the cleanup is done."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    handle_signals()
    try:
        return main(argv) or 0
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("error: terminated (SIGTERM)", file=sys.stderr)
        return 143
    except BrokenPipeError:  # stdout closed early (`... | head`): not an error; silence the flush at exit
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS):
            raise
        print(f"error: {write_error(exc.filename or 'output', exc)}", file=sys.stderr)
        return 2
    finally:
        if signal.getsignal(signal.SIGINT) is _first_signal_only:   # no signal came: as before (in-process use)
            for s, handler in saved.items():
                if handler is not None and threading.current_thread() is threading.main_thread():
                    signal.signal(s, handler)
