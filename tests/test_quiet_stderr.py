"""preprocess.common.quiet_stderr: a thread silences its own stderr, never another thread's (the demo runs its
stages on threads; contextlib.redirect_stderr swapped the stream of the whole process, so one stage's silenced
scorer swallowed the other stages' status lines)."""
from __future__ import annotations

import contextlib
import io
import sys
import threading

import pytest

from preprocess.common import quiet_stderr


def overlap(quiet) -> None:
    """Thread A writes inside ``quiet()`` while thread B writes outside it, at the same time."""
    inside, written = threading.Event(), threading.Event()

    def a():
        with quiet():
            print("hidden-a", file=sys.stderr)
            inside.set()
            written.wait(10)
            print("hidden-a-again", file=sys.stderr)

    def b():
        inside.wait(10)
        print("shown-b", file=sys.stderr)
        written.set()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)


def test_another_threads_lines_survive(capsys):
    before = sys.stderr
    overlap(quiet_stderr)
    err = capsys.readouterr().err
    assert "shown-b" in err and "hidden" not in err
    assert sys.stderr is before


def test_redirect_stderr_would_lose_them(capsys):
    """The check above can fail: with the process-wide swap, thread B's line is lost."""
    overlap(lambda: contextlib.redirect_stderr(io.StringIO()))
    assert "shown-b" not in capsys.readouterr().err


def test_nested_and_overlapping_uses_give_the_stream_back(capsys):
    before = sys.stderr
    with quiet_stderr():
        with quiet_stderr():
            print("hidden-inner", file=sys.stderr)
        print("hidden-outer", file=sys.stderr)
    print("shown-after", file=sys.stderr)
    # two threads whose quiet blocks end in the other order than they began
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def first():
        with quiet_stderr():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second():
        first_in.wait(10)
        with quiet_stderr():
            second_in.set()
            first_out.wait(10)
            print("hidden-second", file=sys.stderr)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    err = capsys.readouterr().err
    assert err == "shown-after\n"
    assert sys.stderr is before


def test_renyi_efficiency_silences_its_scorer_with_it(capsys):
    """tokenization-scorer's progress bars and "Vocabulary size" lines are dropped through quiet_stderr (so, by the
    tests above, for the scoring thread only), and the stream is given back."""
    pytest.importorskip("tokenization_scorer", reason="the hf extra (pip install .[hf]) is not installed")
    from preprocess.evaluate.intrinsic import renyi_efficiency

    before = sys.stderr
    assert renyi_efficiency([["a", "b", "a"], ["c"]]) is not None
    assert capsys.readouterr().err == ""
    assert sys.stderr is before
