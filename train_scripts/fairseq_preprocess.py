"""``fairseq-preprocess`` with its ``--workers`` in parallel: the same options, the same files.

    python -m train_scripts.fairseq_preprocess [fairseq-preprocess options]

fairseq 0.12 splits each file into ``--workers`` chunks, gives all but the first to a pool of worker processes,
*waits for the pool*, and only then binarises the first chunk itself (``FileBinarizer.multiprocess_dataset``):
the first chunk never overlaps the others, so ``--workers 2`` runs its two halves one after the other (measured
here: one core busy throughout), and ``--workers N`` takes about 2/N of the one-process time instead of 1/N.
This module binarises the first chunk while the pool works, then merges the chunks in the same order as fairseq,
so the ``.bin``, ``.idx`` and ``dict`` files are byte for byte those of ``fairseq-preprocess``; and its workers
stop when it is killed (fairseq's go on binarising their chunk for nothing).  The project's
binarisation (``morphtok-binarize``, ``morphtok-classification-data``) runs this; ``COMMAND`` is the command line.
"""
from __future__ import annotations

import os
import sys
from multiprocessing import Pool

#: the command line that runs this module (``run_tool`` runs it like any fairseq tool)
COMMAND = [sys.executable, "-m", "train_scripts.fairseq_preprocess"]

PR_SET_PDEATHSIG = 1   # prctl(2), Linux


def _die_with_parent(parent: int) -> None:
    """A pool worker's initializer: SIGTERM when the process that started it dies (Linux).  fairseq's workers
    outlive a killed fairseq-preprocess (the interrupted command's caller kills it with SIGKILL) and go on
    writing their chunk for nothing; these stop with it."""
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):   # not Linux: the worker ends with its chunk, as fairseq's do
        return
    if os.getppid() != parent:          # the parent died before the request took effect
        os._exit(1)


def multiprocess_dataset(cls, input_file, dataset_impl, binarizer, output_prefix, vocab_size=None, num_workers=1):
    """``FileBinarizer.multiprocess_dataset`` with the first chunk binarised while the workers run."""
    from fairseq.binarizer import BinarizeSummary, _worker_prefix
    from fairseq.data import indexed_dataset
    from fairseq.file_chunker_utils import find_offsets

    offsets = find_offsets(input_file, num_workers)
    first, *more = zip(offsets, offsets[1:])
    kwargs = {"vocab_size": vocab_size} if vocab_size is not None else {}
    pool = Pool(processes=num_workers - 1, initializer=_die_with_parent, initargs=(os.getpid(),)) if more else None
    try:
        pending = [pool.apply_async(cls._binarize_chunk_and_finalize,
                                    (binarizer, input_file, start, end, _worker_prefix(output_prefix, worker),
                                     dataset_impl), kwargs)
                   for worker, (start, end) in enumerate(more, start=1)]
        if pool is not None:
            pool.close()
        final_ds, first_summary = cls._binarize_file_chunk(binarizer, input_file, offset_start=first[0],
                                                           offset_end=first[1], output_prefix=output_prefix,
                                                           dataset_impl=dataset_impl, vocab_size=vocab_size)
        summary = BinarizeSummary()
        for result in pending:          # .get() re-raises a worker's error (a full disk, a bad line)
            summary.merge(result.get())
        summary.merge(first_summary)
        if pool is not None:
            pool.join()
    except BaseException:
        if pool is not None:
            pool.terminate()
        raise
    for worker in range(1, len(more) + 1):   # the chunks in file order, as fairseq merges them
        prefix = _worker_prefix(output_prefix, worker)
        final_ds.merge_file_(prefix)
        for path in (indexed_dataset.data_file_path(prefix), indexed_dataset.index_file_path(prefix)):
            os.remove(path)
    final_ds.finalize(indexed_dataset.index_file_path(output_prefix))
    return summary


def install() -> None:
    """Use :func:`multiprocess_dataset` for every fairseq binarisation of this process."""
    from fairseq.binarizer import FileBinarizer

    FileBinarizer.multiprocess_dataset = classmethod(multiprocess_dataset)


def main() -> None:
    from fairseq_cli import preprocess

    install()
    sys.argv[0] = "fairseq-preprocess"
    preprocess.cli_main()


if __name__ == "__main__":
    main()
