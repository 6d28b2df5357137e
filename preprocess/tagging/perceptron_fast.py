# cython: boundscheck=False, wraparound=False, initializedcheck=False
"""NLTK's averaged-perceptron predictions for a batch of sentences, compiled with Cython (setup.py's ``COMPILED``).

:class:`PerceptronBatch` is the inner loop of :meth:`preprocess.tagging.NltkTagger._tag_flat` (``tag_words``): for
every position the tag dictionary leaves open, the 14 feature rows of ``PerceptronTagger._get_features`` are added
one after the other, class by class, into scores that start at 0.0, exactly as ``AveragedPerceptron.predict`` adds each
feature's weights into its ``defaultdict(float)`` (a class a feature has no weight for gets 0.0 added, which changes
no sum), and the best class is the last one with the highest score (NLTK's ``max`` over ``(score, label)`` with the
labels sorted); the previous two tags are the ones just predicted.  So the tags are NLTK's, on the same floats.

Only the compiled module is used (:func:`batch_kernel`): as plain Python these loops would be far slower than the
numpy path of ``_tag_batch``, which is what runs without a C compiler (the same tags).
"""
from __future__ import annotations

import functools
import hashlib
import os

try:   # the cython.* annotations type the loop's numbers and arrays in C when this file is compiled (setup.py)
    import cython
except ImportError:   # plain Python without Cython installed: only the annotations name it
    cython = None


class PerceptronBatch:
    """The compiled loop (see the module's docstring)."""

    @staticmethod
    def tag(W: cython.double[:, ::1], ids: cython.longlong[::1], RW: cython.longlong[:, ::1],
            NW: cython.longlong[:, ::1], ctx: cython.longlong[::1], starts: cython.longlong[::1],
            bias: cython.longlong, A1: cython.longlong[::1], A2: cython.longlong[::1], A3: cython.longlong[:, ::1],
            TW: cython.longlong[:, ::1], start0: cython.longlong, start1: cython.longlong,
            out: cython.longlong[::1]) -> None:
        """Tag the words of ``len(starts) - 1`` sentences (sentence *s* is words ``starts[s]`` .. ``starts[s + 1] -
        1``) into ``out`` (tag ids).

        ``ids[i]``: word *i*'s row of ``RW`` (columns: rows of 'i suffix' and 'i pref1', the tag dictionary's tag id
        or -1, the normalised word's row of ``NW``); ``NW`` columns: rows of 'i word', 'i-1 word', 'i-1 suffix',
        'i-2 word', 'i+1 word', 'i+1 suffix', 'i+2 word', and the row of ``TW`` (previous tag id -> row of
        'i-1 tag+i word'); ``ctx``: the ``NW`` rows of every sentence's context (START, START2, its words, END,
        END2) one sentence after the other; ``bias``/``A1``/``A2``/``A3``: the rows of 'bias', 'i-1 tag',
        'i-2 tag' and 'i tag+i-2 tag' by tag id; ``start0``/``start1``: the tag ids of START and START2.  At most
        64 classes (``W``'s columns)."""
        n_sent: cython.Py_ssize_t = starts.shape[0] - 1
        n_cls: cython.Py_ssize_t = W.shape[1]
        s: cython.Py_ssize_t
        i: cython.Py_ssize_t
        j: cython.Py_ssize_t
        k: cython.Py_ssize_t
        c: cython.Py_ssize_t
        t: cython.longlong
        prev: cython.longlong
        prev2: cython.longlong
        best: cython.Py_ssize_t
        x: cython.longlong
        rows = cython.declare(cython.longlong[14])   # (C arrays; this loop only runs compiled: batch_kernel)
        acc = cython.declare(cython.double[64])
        row: cython.pointer(cython.double)
        if n_cls > 64:
            raise ValueError("more than 64 classes")
        for s in range(n_sent):
            prev = start0
            prev2 = start1
            for i in range(starts[s], starts[s + 1]):
                x = ids[i]
                t = RW[x, 2]
                if t < 0:
                    j = i + 4 * s + 2   # word i's place in ctx
                    # NLTK's order (PerceptronTagger._get_features)
                    rows[0] = bias
                    rows[1] = RW[x, 0]
                    rows[2] = RW[x, 1]
                    rows[3] = A1[prev]
                    rows[4] = A2[prev2]
                    rows[5] = A3[prev, prev2]
                    rows[6] = NW[ctx[j], 0]
                    rows[7] = TW[NW[ctx[j], 7], prev]
                    rows[8] = NW[ctx[j - 1], 1]
                    rows[9] = NW[ctx[j - 1], 2]
                    rows[10] = NW[ctx[j - 2], 3]
                    rows[11] = NW[ctx[j + 1], 4]
                    rows[12] = NW[ctx[j + 1], 5]
                    rows[13] = NW[ctx[j + 2], 6]
                    for c in range(n_cls):
                        acc[c] = 0.0
                    for k in range(14):
                        row = cython.address(W[rows[k], 0])
                        for c in range(n_cls):
                            acc[c] += row[c]
                    best = 0
                    for c in range(1, n_cls):
                        if acc[c] >= acc[best]:   # the last best class: the largest label among ties
                            best = c
                    t = best
                out[i] = t
                prev2 = prev
                prev = t

    @staticmethod
    def rows(batch: list, raw_id: dict, RW: cython.longlong[:, ::1], ids: cython.longlong[::1],
             ctx: cython.longlong[::1], starts: cython.longlong[::1], s0: cython.longlong, s1: cython.longlong,
             e0: cython.longlong, e1: cython.longlong) -> cython.Py_ssize_t:
        """:meth:`tag`'s inputs for the sentences ``batch`` (lists of words): ``ids`` (each word's row of ``RW``, by
        ``raw_id``), ``ctx`` (START, START2, the words' normalised rows, END, END2, sentence after sentence) and
        ``starts`` (where each sentence's words begin, and their count at the end).  Returns the number of words
        ``raw_id`` lacks (their places are left at row 0: add their rows and call again), or -1 as soon as a word
        holds a space (NLTK's feature strings would be ambiguous: the caller lets NLTK tag the batch)."""
        i: cython.Py_ssize_t = 0
        j: cython.Py_ssize_t = 0
        s: cython.Py_ssize_t
        x: cython.longlong
        missing: cython.Py_ssize_t = 0
        starts[0] = 0
        for s in range(len(batch)):
            ctx[j] = s0
            ctx[j + 1] = s1
            j += 2
            for w in batch[s]:
                if " " in w:
                    return -1
                row = raw_id.get(w)
                if row is None:
                    missing += 1
                    x = 0
                else:
                    x = row
                ids[i] = x
                ctx[j] = RW[x, 3]
                i += 1
                j += 1
            ctx[j] = e0
            ctx[j + 1] = e1
            j += 2
            starts[s + 1] = i
        return missing


def _source_digest() -> str:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "perceptron_fast.py"), "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


@functools.cache
def batch_kernel():
    """The compiled :class:`PerceptronBatch` (its ``rows`` and ``tag``) when ``preprocess.tagging._perceptron_fast`` exists
    and was built from this file's current text (a stale build is reported once and not used), else None."""
    if "SOURCE_SHA256" in globals():   # this is the compiled module itself
        return PerceptronBatch
    from preprocess.common import compiled_class
    cls = compiled_class(PerceptronBatch, "preprocess.tagging._perceptron_fast", "preprocess/tagging/perceptron_fast.py",
                         _source_digest)
    return None if cls is PerceptronBatch else cls
