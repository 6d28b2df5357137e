"""Order-preserving, multi-process file encoder for every tokenisation scheme.

    python -m preprocess.encode --scheme spaces --model P.model --spaces keep \\
        --inputs train.en train.de --outputs train.tok.en train.tok.de --workers 4

Output line *i* always belongs to input line *i* (fairseq-preprocess silently misaligns parallel data
otherwise); an empty or whitespace-only line gives an empty line.  Each output file is written to a temporary
file and renamed on success, so a failure, Ctrl-C or SIGTERM never leaves partial output.  The scheme's own
options are listed by ``python -m preprocess.encode --scheme NAME --help``.

With ``--workers N`` the input is cut into byte ranges at line starts (one counting pass at disk speed); each
worker process reads its own ranges, encodes them ``--chunk-size`` lines at a time and writes its own part file,
and the parent appends finished parts to the output in order.  No line passes through the parent, so encoding
scales with the number of cores, and memory is bounded by ``workers x chunk-size`` lines (plus each scheme's
capped caches), not by the input size.  The output is byte-identical for every worker count.  Input that cannot
be read at an offset (stdin, a FIFO, ``<(...)``, ``.gz``) is read once by the parent, which hands chunks of lines
to the same workers through a bounded queue.  Workers never open the input by name: they read the parent's open
file, and a file replaced, truncated or grown during the run is an error (docs/robustness.md).
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import errno
import functools
import gc
import itertools
import multiprocessing as mp
import os
import queue
import shutil
import signal
import sys
import traceback
from typing import Iterable, Iterator

from preprocess import registry
from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.files.inputs import (
    PositionalReader,
    is_stream_input,
    lines_of,
    read_lines,
    require_input,
    split_lines_file,
)
from preprocess.files.outputs import (
    atomic_output,
    check_distinct,
    check_output_path,
    is_stream_output,
    make_temp_file,
    prepare_output,
    write_error,
)

#: smallest byte range a worker takes at a time (smaller ranges only add per-range overhead)
MIN_SEGMENT_BYTES = 1 << 18
#: byte ranges per worker (more ranges balance the load better; each is one part file)
SEGMENTS_PER_WORKER = 8
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def build_parser(scheme: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m preprocess.encode",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--scheme", required=True, choices=registry.names(), help="tokenisation scheme")
    parser.add_argument("--inputs", nargs="+", required=True,
                        help="input text files (UTF-8, one sentence per line, .gz allowed); - for stdin")
    parser.add_argument("--outputs", nargs="+", required=True,
                        help="output files, one per input, in the same order; - for stdout")
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes, each reading and writing its own part of the file")
    parser.add_argument("--chunk-size", type=int, default=2000,
                        help="lines a worker encodes at a time (memory: workers x chunk-size lines)")
    parser.add_argument("--segment-bytes", type=int, default=None, help=argparse.SUPPRESS)  # tests only
    parser.add_argument("--errors", choices=["strict", "replace"], default="strict",
                        help="invalid UTF-8: stop with an error naming file and line, or replace with U+FFFD")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no summary lines")
    if scheme is not None:
        group = parser.add_argument_group(f"{scheme} options")
        registry.get(scheme).add_encoder_args(group)
    return parser


def parse_args(argv=None) -> argparse.Namespace:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--scheme", help="the scheme (read first, to add its options)")
    known, _ = pre.parse_known_args(argv)
    scheme = known.scheme if known.scheme in registry.names() else None
    args = build_parser(scheme).parse_args(argv)
    if len(args.inputs) != len(args.outputs):
        raise UserError(f"{len(args.inputs)} inputs but {len(args.outputs)} outputs: give one output per input")
    check_options(args)
    outs = [o for o in args.outputs if o != "-"]
    if len(set(outs)) != len(outs):
        raise UserError("the same output file is given twice")
    if sum(o in ("-", "/dev/stdout") for o in args.outputs) > 1 or \
            sum(i in ("-", "/dev/stdin") for i in args.inputs) > 1:
        raise UserError("stdin/stdout (-) can be used for one file only")
    for src in args.inputs:   # every path is checked before any work starts
        require_input(src, "input file")
    for dst in args.outputs:
        check_output_path(dst)
    check_distinct([(o, "output") for o in args.outputs],
                   [(i, "input") for i in args.inputs] + model_files(args))
    return args


def model_files(args: argparse.Namespace) -> list[tuple[str, str]]:
    """``(path, "--option")`` for every option that the scheme's descriptor says names a file (a model, a
    vocabulary, an encoder.json...) and that is given: the files the run reads besides its inputs, which no output
    may overwrite."""
    files = []
    for key in registry.get(args.scheme).files:
        value = getattr(args, key, None)
        if isinstance(value, str) and value and os.path.exists(value):
            files.append((value, "--" + key.replace("_", "-")))
    return files


def check_options(args: argparse.Namespace) -> None:
    if getattr(args, "workers", 1) < 1:
        raise UserError(f"--workers must be at least 1, not {args.workers}")
    if getattr(args, "chunk_size", 1) < 1:
        raise UserError(f"--chunk-size must be at least 1, not {args.chunk_size}")
    if getattr(args, "errors", "strict") not in ("strict", "replace"):
        raise UserError(f"--errors must be strict or replace, not {args.errors!r}")


def _chunks(lines: Iterable[str], size: int) -> Iterator[list[str]]:
    it = iter(lines)
    while True:
        chunk = list(itertools.islice(it, size))
        if not chunk:
            return
        yield chunk


def _encoder_from_args(args: argparse.Namespace):
    # one thread: parallelism comes from the worker processes
    return registry.get(args.scheme).make_encoder(argparse.Namespace(**{**vars(args), "workers": 1}))


def file_options(workers: int = 1, chunk_size: int = 2000, errors: str = "strict", quiet: bool = True,
                 scheme: str = "custom") -> argparse.Namespace:
    """The generic options of :class:`FileEncoder` for Python callers that give their own encoder factory."""
    return argparse.Namespace(scheme=scheme, workers=workers, chunk_size=chunk_size, errors=errors, quiet=quiet)


def encode_chunk(encoder, chunk: list[str]) -> list[str]:
    """``encoder.encode_lines(chunk)``, checked to give one line per line, with Python's cycle collector paused
    meanwhile.  A chunk's words, tags and pieces are hundreds of thousands of small lists and tuples that reference
    counting frees; left on, the collector walks them (and the models' tables) again and again as they are made
    (BITE's encoding took about 9% more CPU with it on: median of 8 paired runs).  No encoder makes reference
    cycles per chunk (``tests/test_encode.py``), and any there were would wait only until the collector's next run
    after the chunk."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        out = encoder.encode_lines(chunk)
    finally:
        if paused:
            gc.enable()
    if len(out) != len(chunk):  # a scheme bug must never shift lines
        raise RuntimeError(f"encoder returned {len(out)} lines for {len(chunk)}")
    return out


def encoder_counters(encoder) -> dict[str, int]:
    """The encoder's fallback counters (see docs/CONTRACTS.md), ``{}`` when it reports none."""
    get = getattr(encoder, "counters", None)
    return dict(get()) if callable(get) else {}


def _counter_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}


def _encode_range(encoder, path: str, out, errors: str, chunk_size: int, start: int = 0, end: int | None = None,
                  first_line: int = 0, progress=None, fd: int | None = None, lines=None) -> int:
    n = 0
    if lines is None:
        lines = read_lines(path, errors=errors, start=start, end=end, first_line=first_line, fd=fd)
    for chunk in _chunks(lines, chunk_size):
        out.write("\n".join(encode_chunk(encoder, chunk)))
        out.write("\n")
        n += len(chunk)
        progress(len(chunk))
    return n


class _Input:
    """An input opened once, by the parent: a regular file is read through this descriptor only (forked workers
    inherit it and read their byte ranges with ``pread``), and :meth:`check_unchanged` tells whether the file was
    replaced, truncated or grown meanwhile.  ``-``, ``/dev/stdin``, FIFOs and process substitution are streams,
    read once in order."""

    def __init__(self, path: str):
        self.path = path
        self.stream = is_stream_input(path)
        self.gz = path.endswith(".gz")
        self.fd = self.stat = None
        if not self.stream:
            require_input(path, "input file")
            try:
                self.fd = os.open(path, os.O_RDONLY)
            except OSError as exc:
                raise UserError(f"cannot read input file {path}: {exc.strerror}") from None
            self.stat = os.fstat(self.fd)

    @property
    def seekable(self) -> bool:
        return self.fd is not None and not self.gz

    @property
    def size(self) -> int | None:
        return self.stat.st_size if self.stat is not None else None

    def binary(self):
        """The whole input as a binary file object, read once (decompressed for ``.gz``)."""
        if self.fd is None:
            return sys.stdin.buffer if self.path in ("-", "/dev/stdin") else open(self.path, "rb")
        raw = PositionalReader(self.fd)
        if self.gz:
            import gzip
            return gzip.GzipFile(filename=self.path, fileobj=raw, mode="rb")
        return raw

    def lines(self, errors: str):
        if self.seekable:
            return read_lines(self.path, errors=errors, fd=self.fd)
        if self.fd is None and self.path in ("-", "/dev/stdin"):
            return read_lines("-", errors=errors)
        return lines_of(self.binary(), self.path, errors)

    def check_unchanged(self) -> None:
        """Raise :class:`UserError` when the input changed while it was read: the output would mix two files."""
        if self.fd is None:
            return
        now = os.fstat(self.fd)
        what = None
        if now.st_size != self.stat.st_size:
            what = "truncated" if now.st_size < self.stat.st_size else "grown"
            what += f" from {self.stat.st_size} to {now.st_size} bytes"
        elif now.st_mtime_ns != self.stat.st_mtime_ns:
            what = "modified"
        else:
            try:
                named = os.stat(self.path)
                if (named.st_dev, named.st_ino) != (self.stat.st_dev, self.stat.st_ino):
                    what = "replaced by another file"
            except OSError:
                what = "removed"
        if what:
            raise UserError(f"input file {self.path} was {what} while it was being encoded: no output written; "
                            "encode a copy that nothing else writes to")

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _forget_inherited_thread_pools() -> None:
    """In a process forked from a ``ThreadPoolExecutor``'s thread (``morphtok-demo`` runs its stages so), forget the
    parent's pools.  The child inherits their exit hook, which joins every pool thread, its own included: Python
    3.11 then raises "cannot join current thread" while the finished worker exits, and the worker's status is 1,
    which the parent reads as a crash."""
    pools = sys.modules.get("concurrent.futures.thread")
    if pools is not None:
        pools._threads_queues.clear()


os.register_at_fork(after_in_child=_forget_inherited_thread_pools)


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this worker when its parent dies (even by SIGKILL); elsewhere the workers notice a
    new parent between chunks."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            PR_SET_PDEATHSIG = 1
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:   # the parent died before prctl took effect
        os._exit(1)


# --- worker side -----------------------------------------------------------------------------------------
def _worker(encoder, factory, args, path, segments, parts, next_segment, done_lines, results, fd=None,
            parent=None) -> None:
    """Take the next byte range, encode it into its part file, report; until no range is left."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C reaches the whole process group: the parent cleans up
    signal.signal(signal.SIGTERM, signal.SIG_DFL)   # die quietly; the parent sees it and cleans up
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
    if parent is not None:
        _die_with_parent(parent)
    try:
        if encoder is None:   # spawn start method: build our own copy
            encoder = factory()

        def progress(k: int) -> None:
            if parent is not None and os.getppid() != parent:
                os._exit(1)
            with done_lines.get_lock():
                done_lines.value += k

        while True:
            with next_segment.get_lock():
                i = next_segment.value
                next_segment.value += 1
            if i >= len(segments):
                break
            start, end, first_line = segments[i]
            before = encoder_counters(encoder)
            with open(parts[i], "w", encoding="utf-8", newline="\n") as out:
                n = _encode_range(encoder, path, out, args.errors, args.chunk_size, start, end, first_line,
                                  progress, fd=fd)
            results.put(("done", i, n, _counter_delta(before, encoder_counters(encoder))))
    except UserError as exc:
        results.put(("error", str(exc)))
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS):
            results.put(("write_error", exc.errno, exc.strerror))
        else:
            results.put(("crash", traceback.format_exc()))
    except Exception:  # noqa: BLE001 - a worker's crash goes to the parent with its traceback, which reports it
        results.put(("crash", traceback.format_exc()))


def _stream_worker(encoder, factory, tasks, results, parent) -> None:
    """Encode the chunks the parent hands out until it sends ``None``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
    _die_with_parent(parent)
    try:
        if encoder is None:
            encoder = factory()
        while True:
            item = tasks.get()
            if item is None:
                break
            i, chunk = item
            before = encoder_counters(encoder)
            data = ("\n".join(encode_chunk(encoder, chunk)) + "\n").encode("utf-8")
            results.put(("done", i, len(chunk), _counter_delta(before, encoder_counters(encoder)), data))
    except UserError as exc:
        results.put(("error", str(exc)))
    except Exception:  # noqa: BLE001 - a worker's crash goes to the parent with its traceback, which reports it
        results.put(("crash", traceback.format_exc()))


#: seconds a terminated worker has to exit before it is killed
STOP_GRACE_S = 5.0


def _stop(procs) -> None:
    """Terminate the worker processes still running (a run that failed or was interrupted) and reap them all; one
    that outlives SIGTERM by :data:`STOP_GRACE_S` is killed, so the shut-down always ends."""
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(STOP_GRACE_S)
        if p.exitcode is None:
            p.kill()
            p.join()


def _abandon_queue(q) -> None:
    """Close a queue this process put items on, without waiting at exit for its feeder thread.

    ``multiprocessing`` joins a queue's feeder thread when the process exits, and that thread may be blocked for
    good writing a chunk into a full pipe that no worker reads any more (the run failed, e.g. on a full disk, and
    the workers were stopped): the command printed its error and then hung.  Called once the workers are gone,
    where whatever the queue still holds is never needed."""
    q.cancel_join_thread()
    q.close()


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


class _NoProgress:
    """The part of a tqdm bar that encoding uses, for --quiet (tqdm is then not even imported)."""
    total, n = None, 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _progress_bar(args, src: str):
    if args.quiet:
        return _NoProgress()
    from tqdm import tqdm
    return tqdm(total=None, unit=" lines", desc=f"{args.scheme} {src}", file=sys.stderr, mininterval=0.5)


class FileEncoder:
    """Encode whole files with one scheme; reusable from Python::

        with FileEncoder(args) as enc:          # args: scheme, workers, chunk_size, errors, quiet + scheme options
            n_lines = enc.encode_file(src, dst)
        enc.counters                            # {description: count} of the scheme's fallbacks, all files

    Workers are started per file and are always gone when ``encode_file`` returns or raises.
    ``factory``: a picklable zero-argument callable that builds the LineEncoder; default: the ``--scheme``
    descriptor's ``make_encoder(args)``.  ``args`` then needs only the generic options (:func:`file_options`).
    The encoder is built once, in this process; forked workers inherit it (spawned ones call ``factory``).
    """

    def __init__(self, args: argparse.Namespace, factory=None):
        check_options(args)
        self.args = args
        self.factory = factory or functools.partial(_encoder_from_args, args)
        self.encoder = self.factory()   # validates options in the parent
        self.counters: collections.Counter = collections.Counter()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def encode_file(self, src: str, dst: str) -> int:
        """Encode ``src`` into ``dst`` (``-``: stdin/stdout); returns the number of lines.

        The input is opened once; the output is written by the output policy of :func:`atomic_output`."""
        require_input(src, "input file")
        check_output_path(dst)
        check_distinct([(dst, "output")], [(src, "input")])
        if not is_stream_output(dst):
            prepare_output(dst)   # the folder, made the same way for any worker count; stale part files removed
        args = self.args
        workers = max(1, args.workers)
        source = _Input(src)
        try:
            with _progress_bar(args, src) as bar:
                if workers == 1 or source.size == 0:
                    if not args.quiet and source.seekable:
                        bar.total = split_lines_file(src, 0, fd=source.fd)[0]
                    before = encoder_counters(self.encoder)
                    with atomic_output(dst) as out:
                        n = _encode_range(self.encoder, src, out, args.errors, args.chunk_size,
                                          progress=bar.update, lines=source.lines(args.errors))
                        source.check_unchanged()   # still inside: a changed input publishes nothing
                    self.counters.update(_counter_delta(before, encoder_counters(self.encoder)))
                    return n
                if not source.seekable:   # stdin, FIFO, <(...), .gz: chunks of lines stream through the workers
                    return self._encode_stream(source, dst, workers, bar)
                return self._encode_parallel(source, dst, workers, bar)
        finally:
            source.close()

    def _encode_parallel(self, source: _Input, dst: str, workers: int, bar) -> int:
        args = self.args
        ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        fork = ctx.get_start_method() == "fork"
        temporary: list[str] = []
        procs: list = []
        scratch = None
        try:
            if is_stream_output(dst):   # parts of a stream output: a private folder, never /dev or the FIFO's
                import tempfile
                scratch = tempfile.mkdtemp(prefix="morphtok-encode-")
                near = os.path.join(scratch, "output")
            else:
                near = dst
            path, fd = source.path, source.fd
            size = os.fstat(fd).st_size
            seg_bytes = getattr(args, "segment_bytes", None) or max(
                MIN_SEGMENT_BYTES, size // (workers * SEGMENTS_PER_WORKER) + 1)
            total, segments = split_lines_file(path, seg_bytes, fd=fd)
            bar.total = total
            parts = []
            for i in range(len(segments)):
                part_fd, part = make_temp_file(near, f"part{i}.")
                os.close(part_fd)
                temporary.append(part)
                parts.append(part)
            next_segment, done_lines = ctx.Value("q", 0), ctx.Value("q", 0)
            results = ctx.Queue()
            inherited = self.encoder if fork else None
            old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)   # until the workers set their handlers
            try:
                for _ in range(min(workers, len(segments))):
                    p = ctx.Process(target=_worker, daemon=True, args=(
                        inherited, self.factory, args, path, segments, parts, next_segment, done_lines, results,
                        fd if fork else None, os.getpid()))
                    p.start()
                    procs.append(p)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
            n = 0
            finished: dict[int, int] = {}
            with atomic_output(dst, "wb") as out:
                stitched = 0
                while stitched < len(segments):
                    msg = self._next_result(results, procs)
                    if msg is not None:
                        if msg[0] == "error":
                            raise UserError(msg[1])
                        if msg[0] == "write_error":   # a part file next to the output: the output's disk
                            raise write_error(dst, OSError(msg[1], msg[2]))
                        if msg[0] == "crash":
                            raise RuntimeError("an encoder worker failed:\n" + msg[1])
                        _, i, lines, counts = msg
                        finished[i] = lines
                        self.counters.update(counts)
                    bar.update(done_lines.value - bar.n)
                    while stitched in finished:   # append finished parts in order, freeing their disk space
                        with open(parts[stitched], "rb") as part:
                            shutil.copyfileobj(part, out, 1 << 20)
                        _unlink(parts[stitched])
                        n += finished.pop(stitched)
                        stitched += 1
                source.check_unchanged()   # before the output is published
            for p in procs:
                p.join()
            return n
        finally:
            _stop(procs)
            for item in temporary:
                if isinstance(item, int):
                    with contextlib.suppress(OSError):
                        os.close(item)
                else:
                    _unlink(item)
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)

    def _encode_stream(self, source: _Input, dst: str, workers: int, bar) -> int:
        """A non-seekable input: the parent reads it once, in order, and hands ``--chunk-size`` line chunks to the
        workers through a bounded queue (memory: about 3 x workers chunks); their results are written in order."""
        args = self.args
        ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        inherited = self.encoder if ctx.get_start_method() == "fork" else None
        tasks, results = ctx.Queue(maxsize=2 * workers), ctx.Queue()
        procs: list = []
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)   # until the workers set their handlers
        try:
            for _ in range(workers):
                p = ctx.Process(target=_stream_worker, daemon=True,
                                args=(inherited, self.factory, tasks, results, os.getpid()))
                p.start()
                procs.append(p)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        try:
            chunks = _chunks(source.lines(args.errors), args.chunk_size)
            sent = written = n = 0
            to_stop = None   # end-of-input markers still to hand out (None: still reading)
            held = None
            finished: dict[int, tuple[int, bytes]] = {}
            with atomic_output(dst, "wb") as out:
                while True:
                    if held is None and to_stop is None:
                        chunk = next(chunks, None)
                        if chunk is None:
                            to_stop = workers
                        else:
                            held, sent = (sent, chunk), sent + 1
                    try:
                        if held is not None:
                            tasks.put(held, timeout=0.05)
                            held = None
                        elif to_stop:
                            tasks.put(None, timeout=0.05)
                            to_stop -= 1
                    except queue.Full:
                        pass
                    while written + len(finished) < sent:   # collect what is ready, write in order
                        feeding = held is None and to_stop != 0   # more to hand out: do not wait here
                        msg = self._next_result(results, procs, timeout=0.0 if feeding else 0.1)
                        if msg is None:
                            break
                        if msg[0] == "error":
                            raise UserError(msg[1])
                        if msg[0] == "crash":
                            raise RuntimeError("an encoder worker failed:\n" + msg[1])
                        _, i, lines, counts, data = msg
                        self.counters.update(counts)
                        finished[i] = (lines, data)
                    while written in finished:
                        lines, data = finished.pop(written)
                        out.write(data)
                        n += lines
                        written += 1
                        bar.update(lines)
                    if to_stop is not None and held is None and written == sent:
                        break
                source.check_unchanged()
            return n
        finally:
            _stop(procs)
            _abandon_queue(tasks)
            results.close()

    @staticmethod
    def _next_result(results, procs, timeout: float = 0.2):
        try:
            return results.get(timeout=timeout) if timeout else results.get_nowait()
        except queue.Empty:
            pass
        for p in procs:
            if p.exitcode not in (None, 0):
                how = (f"was killed by {signal.Signals(-p.exitcode).name}" if p.exitcode < 0
                       else f"exited with status {p.exitcode}")
                raise UserError(f"an encoder worker process {how} (out of memory, or stopped by a signal?)")
        if all(p.exitcode == 0 for p in procs):
            try:
                return results.get(timeout=5)
            except queue.Empty:
                raise RuntimeError("encoder workers stopped without finishing their work") from None
        return None


def print_notes(counters: dict[str, int], file=None) -> None:
    """One ``note:`` line per fallback counter, e.g. ``note: 12 words FLOTA dropped entirely (...)``."""
    for name, count in sorted(counters.items()):
        if count:
            print(f"note: {count} {name}", file=file or sys.stderr)


def main(argv=None) -> int:
    args = parse_args(argv)
    with FileEncoder(args) as enc:
        for src, dst in zip(args.inputs, args.outputs):
            n = enc.encode_file(src, dst)
            if not args.quiet:
                print(f"{src} -> {dst}: {n} lines", file=sys.stderr)
    print_notes(enc.counters)
    return 0


def cli() -> None:
    """Console-script entry point (see setup.py)."""
    import sys

    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
