"""preprocess.encode for every scheme: worker count never changes the output, interruption (Ctrl-C, SIGTERM)
leaves nothing behind, outputs follow the umask, bad paths and options are one-line errors, fallback counters."""
from __future__ import annotations

import argparse
import gzip
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from preprocess import registry
from preprocess.common import UserError
from preprocess.files.inputs import split_lines_file
from preprocess.files.outputs import atomic_output
from preprocess.schemes.spaces import SpacesEncoder
from tests.conftest import REPO, cli_env


def _spaces_options(shared_path, tmp_path: Path) -> list[str]:
    return ["--model", str(shared_path("space_models/unigram_prime.model"))]


def _bite_options(shared_path, tmp_path: Path) -> list[str]:
    shared_path("nltk_data/taggers")
    return ["--tagger", "nltk"]


def _flota_options(shared_path, tmp_path: Path) -> list[str]:
    return ["--flota-vocab", str(shared_path("flota_vocabs/bert-base-uncased.txt"))]


def _wordmap_options(shared_path, tmp_path: Path) -> list[str]:
    from preprocess.schemes.wordmap import WordmapVocabulary
    vocab = tmp_path / "wordmap.vocab"
    WordmapVocabulary({"en": 9, "t": 7, "st": 4, "ge": 5, "an": 3},
                      {"spiel": 3, "schau": 2, "lauf": 2, "steh": 2, "sitz": 2, "fahr": 1}).save(str(vocab))
    return ["--wordmap-vocab", str(vocab), "--wordmap-spm", str(shared_path("space_models/unigram_default.model"))]


#: Each registered scheme's test set-up: its encode options (models from ../shared/data or made here) and the
#: language of the Multi30k side it is tried on.  The tests that run every scheme take the names from the registry
#: (SCHEMES), so a scheme added without an entry here fails test_every_registered_scheme_has_test_options rather
#: than going untested.
SCHEME_SETUP = {
    "spaces": (_spaces_options, "en"),
    "bite": (_bite_options, "en"),
    "flota": (_flota_options, "en"),
    "wordmap": (_wordmap_options, "de"),
}
SCHEMES = tuple(registry.names())


def scheme_options(scheme: str, shared_path, tmp_path: Path) -> list[str]:
    return SCHEME_SETUP[scheme][0](shared_path, tmp_path)


def scheme_language(scheme: str) -> str:
    return SCHEME_SETUP[scheme][1]


def test_every_registered_scheme_has_test_options():
    assert sorted(SCHEME_SETUP) == sorted(SCHEMES)


def corpus_lines(shared_path, scheme: str, n: int) -> list[str]:
    with gzip.open(shared_path(f"multi30k/train.{scheme_language(scheme)}.gz"), "rt", encoding="utf-8") as fh:
        return [line.rstrip("\n") for _, line in zip(range(n), fh)]


def encode(args, check=True, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "preprocess.encode", *map(str, args)], env=cli_env(), cwd=REPO,
                          capture_output=True, text=True, **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"encode failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def one_line_error(proc, *fragments) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if " lines" not in line]   # (progress bar)
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for f in fragments:
        assert str(f) in lines[0], (f, lines[0])
    return lines[0]


# --- byte-identical output for any worker count ----------------------------------------------------------------

def hostile_file(path: Path, lines: list[str]) -> int:
    """Sentences with empty and blank lines among them, a line of more than 1 MB (a few sentences and three
    very long tokens, so that the taggers stay fast), a line count that is no multiple of the chunk size and
    no final newline."""
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if i % 7 == 0:
            out.append("")
        if i % 11 == 0:
            out.append("   \t ")
        if i == len(lines) // 2:
            out.append(" ".join(lines[:20]) + " " + " ".join(["ab" * 300_000, "Xy" * 150_000, "é" * 100_000]))
    path.write_text("\n".join(out), encoding="utf-8")   # no final newline
    return len(out)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_three_workers_write_the_same_bytes_as_one(scheme, shared_path, tmp_path):
    opts = scheme_options(scheme, shared_path, tmp_path)
    made = [p.name for p in tmp_path.iterdir()]   # what the scheme's set-up wrote (a toy model)
    src = tmp_path / "in.txt"
    n = hostile_file(src, corpus_lines(shared_path, scheme, 1200))
    assert os.path.getsize(src) > 1_000_000 and n % 64
    assert len(split_lines_file(str(src), 8_000)[1]) > 6   # the 3-worker run really works on many parts
    one, three = tmp_path / "one.txt", tmp_path / "three.txt"
    encode(["--scheme", scheme, *opts, "--inputs", src, "--outputs", one, "--chunk-size", 64, "--quiet"])
    encode(["--scheme", scheme, *opts, "--inputs", src, "--outputs", three, "--chunk-size", 64, "--quiet",
            "--workers", 3, "--segment-bytes", 8_000])
    assert one.read_bytes() == three.read_bytes()
    assert one.read_bytes().count(b"\n") == n
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["in.txt", "one.txt", "three.txt", *made])


def test_workers_forked_from_a_thread_pool_exit_cleanly(shared_path, tmp_path):
    """morphtok-demo runs its stages on a ThreadPoolExecutor's threads.  A process forked from such a thread
    inherits the pool's exit hook, which joins its own thread and fails (Python 3.11), so a finished encode worker
    exited with status 1 and the parent, polling at that moment, reported a crashed worker (BITE's and Wordmap's
    binarize in the demo).  Shown in a fresh interpreter: without preprocess.encode the fork exits 1, with it 0;
    and a three-worker encode from a pool thread whose workers' exit statuses are all read."""
    code = """if True:
        import multiprocessing as mp, sys
        from concurrent.futures import ThreadPoolExecutor
        def fork():
            p = mp.get_context("fork").Process(target=int)
            p.start(); p.join()
            return p.exitcode
        with ThreadPoolExecutor(1) as pool:
            before = pool.submit(fork).result()
        import preprocess.encode
        with ThreadPoolExecutor(1) as pool:
            print(before, pool.submit(fork).result())
    """
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env())
    assert done.returncode == 0, done.stderr
    before, after = done.stdout.split()
    assert after == "0", f"a worker forked from a pool thread exits {after}"
    if before == "0":
        pytest.skip("this Python's thread pools survive a fork: the hook is not needed here (the check above ran)")

    import multiprocessing.process
    from concurrent.futures import ThreadPoolExecutor

    from preprocess.encode import FileEncoder, parse_args

    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("".join(f"line {i} with some words\n" for i in range(3000)), encoding="utf-8")
    statuses = []
    join = multiprocessing.process.BaseProcess.join

    def recording_join(self, timeout=None):
        join(self, timeout)
        statuses.append(self.exitcode)

    args = parse_args(["--scheme", "spaces", *_spaces_options(shared_path, tmp_path), "--inputs", str(src),
                       "--outputs", str(dst), "--workers", "3", "--segment-bytes", "4000", "--quiet"])
    with pytest.MonkeyPatch.context() as mp_:
        mp_.setattr(multiprocessing.process.BaseProcess, "join", recording_join)
        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(lambda: FileEncoder(args).encode_file(str(src), str(dst))).result() == 3000
    assert statuses and set(statuses) == {0}


def test_split_lines_file_ranges_cover_the_file_at_line_starts(tmp_path):
    src = tmp_path / "f"
    data = b"a\n\nbcd\n" + b"x" * 5000 + b"\nlast"
    src.write_bytes(data)
    for size in (0, 1, 3, 7, 100, 10_000):
        n, segments = split_lines_file(str(src), size)
        assert n == 5
        assert segments[0][0] == 0 and segments[-1][1] == len(data)
        for (s, e, first), (s2, _, _) in zip(segments, segments[1:]):
            assert e == s2 and data[e - 1:e] == b"\n" and data[:s].count(b"\n") == first
    assert split_lines_file(str(src), 1)[1][:3] == [(0, 2, 0), (2, 3, 1), (3, 7, 2)]


def test_gzip_and_stdin_with_workers(shared_path, tmp_path):
    model = shared_path("space_models/unigram_prime.model")
    gz = shared_path("multi30k/val.en.gz")
    one, two = tmp_path / "one", tmp_path / "two"
    encode(["--scheme", "spaces", "--model", model, "--inputs", gz, "--outputs", one, "--quiet"])
    encode(["--scheme", "spaces", "--model", model, "--inputs", gz, "--outputs", two, "--quiet", "--workers", 2,
            "--segment-bytes", 5000])
    assert one.read_bytes() == two.read_bytes()
    text = gzip.open(gz, "rt", encoding="utf-8").read()
    proc = encode(["--scheme", "spaces", "--model", model, "--inputs", "-", "--outputs", "-", "--quiet",
                   "--workers", 2, "--segment-bytes", 5000], input=text)
    assert proc.stdout == one.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one", "two"]


# --- interruption ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def long_inputs(tmp_path_factory):
    """Inputs that take each scheme several seconds: the signal always arrives while it works."""
    import importlib
    conftest = importlib.import_module("conftest")
    root = tmp_path_factory.mktemp("long")
    files = {}
    for lang, repeat in (("en", 12), ("de", 1)):
        path = conftest.SHARED / f"multi30k/train.{lang}.gz"
        if not path.exists():
            continue
        text = gzip.open(path, "rt", encoding="utf-8").read()
        files[lang] = root / f"train.{lang}"
        files[lang].write_text(text * repeat, encoding="utf-8")
    return files


def interrupt(args, out_dir: Path, sig, whole_group: bool = True):
    """Start an encode run, send ``sig`` (a signal, or several in quick succession) once its temporary files
    exist; return its exit status and stderr."""
    # a terminal's Ctrl-C: SIGINT not ignored in the run (a shell starts background jobs, such as a test suite
    # run with `&`, with SIGINT ignored, and the run rightly keeps ignoring it then)
    proc = subprocess.Popen([sys.executable, "-m", "preprocess.encode", *map(str, args)], env=cli_env(), cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        while proc.poll() is None and not any(p.name.endswith(".tmp") for p in out_dir.iterdir()):
            time.sleep(0.01)
        time.sleep(0.3)   # workers are encoding now
        for one in (sig,) if isinstance(sig, int) else sig:
            if whole_group:   # a terminal's Ctrl-C, and SLURM's SIGTERM, reach every process of the job
                os.killpg(proc.pid, one)
            else:
                os.kill(proc.pid, one)
        _, err = proc.communicate(timeout=120)   # a deadlock (once seen: FLOTA --workers 2) fails here
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, err


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_interrupt_leaves_no_file_behind(scheme, sig, workers, shared_path, tmp_path, long_inputs):
    opts = scheme_options(scheme, shared_path, tmp_path / "model")   # (the model dir is not the output dir)
    lang = scheme_language(scheme)
    if lang not in long_inputs:
        pytest.skip("shared Multi30k missing")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    rc, err = interrupt(["--scheme", scheme, *opts, "--inputs", long_inputs[lang], long_inputs[lang],
                         "--outputs", out_dir / "a.tok", out_dir / "b.tok", "--workers", workers], out_dir, sig)
    assert rc == (130 if sig == signal.SIGINT else 143), err
    assert "Traceback" not in err and "Error" not in err, err
    assert err.strip().splitlines()[-1].startswith("error: "), err
    assert list(out_dir.iterdir()) == []


def flota_on_a_long_input(shared_path, tmp_path, long_inputs) -> tuple[list, Path]:
    """``preprocess.encode`` arguments of a FLOTA run on a long input with 2 workers, and its empty output dir."""
    if "en" not in long_inputs:
        pytest.skip("shared Multi30k missing")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    return ["--scheme", "flota", *scheme_options("flota", shared_path, tmp_path), "--inputs", long_inputs["en"],
            "--outputs", out_dir / "o", "--workers", 2], out_dir


def test_sigterm_to_the_parent_only_stops_its_workers(shared_path, tmp_path, long_inputs):
    args, out_dir = flota_on_a_long_input(shared_path, tmp_path, long_inputs)
    rc, err = interrupt(args, out_dir, signal.SIGTERM, whole_group=False)
    assert rc == 143 and "Traceback" not in err, err
    assert list(out_dir.iterdir()) == []
    # forked workers share the CLI's command line: none of them is left
    time.sleep(0.2)
    left = subprocess.run(["pgrep", "-f", str(out_dir / "o")], capture_output=True, text=True).stdout.split()
    assert left == []


# --- file modes, paths, options ----------------------------------------------------------------------------------

@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
@pytest.mark.parametrize("workers", [1, 2])
def test_outputs_follow_the_umask(umask, mode, workers, shared_path, tmp_path):
    model = shared_path("space_models/unigram_prime.model")
    src = tmp_path / "in.txt"
    src.write_text("A man sleeps.\n" * 50_000, encoding="utf-8")
    out = tmp_path / "out.txt"
    proc = subprocess.run([sys.executable, "-m", "preprocess.encode", "--scheme", "spaces", "--model", str(model),
                           "--inputs", str(src), "--outputs", str(out), "--workers", str(workers), "--quiet"],
                          env=cli_env(), cwd=REPO, capture_output=True, text=True,
                          preexec_fn=lambda: os.umask(umask))
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(out.stat().st_mode) == mode


def test_atomic_output_follows_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_output(str(tmp_path / "a.txt")) as fh:
            fh.write("x\n")
        with atomic_output(str(tmp_path / "b.bin"), "wb") as fh:
            fh.write(b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "b.bin").stat().st_mode) == 0o644


def test_reading_the_umask_does_not_change_it(monkeypatch):
    """The demo writes outputs from several threads: reading the umask by setting it and setting it back would give
    another thread's new file the mask 022 for that instant (a private 077 user's file readable by all)."""
    from preprocess.files.outputs import current_umask
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            shown = any(line.startswith("Umask:") for line in fh)
    except OSError:
        shown = False
    if not shown:
        pytest.skip("this system does not show the umask in /proc/self/status: it is read by setting it back")
    old = os.umask(0o077)
    try:
        def refuse(mask):
            raise AssertionError("os.umask called to read the umask")

        monkeypatch.setattr(os, "umask", refuse)
        assert current_umask() == 0o077
    finally:
        monkeypatch.undo()
        os.umask(old)


def test_bad_paths_and_options_are_one_line_errors(shared_path, tmp_path):
    model = shared_path("space_models/unigram_prime.model")
    src = tmp_path / "in.txt"
    src.write_text("A man sleeps.\n", encoding="utf-8")
    base = ["--scheme", "spaces", "--model", model]
    missing = tmp_path / "missing.txt"
    one_line_error(encode(base + ["--inputs", missing, "--outputs", tmp_path / "o"], check=False), missing)
    one_line_error(encode(base + ["--inputs", tmp_path, "--outputs", tmp_path / "o"], check=False),
                   tmp_path, "directory")
    one_line_error(encode(base + ["--inputs", src, "--outputs", src / "o"], check=False), src, "not a directory")
    (tmp_path / "adir").mkdir()
    one_line_error(encode(base + ["--inputs", src, "--outputs", tmp_path / "adir"], check=False),
                   tmp_path / "adir", "directory")
    for opt, value in (("--chunk-size", 0), ("--chunk-size", -1), ("--workers", 0)):
        one_line_error(encode(base + ["--inputs", src, "--outputs", tmp_path / "o", opt, value], check=False),
                       opt)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "in.txt"]


@pytest.mark.parametrize("workers", [1, 3])
def test_invalid_utf8_names_the_line_in_any_part(workers, shared_path, tmp_path):
    model = shared_path("space_models/unigram_prime.model")
    src = tmp_path / "in.txt"
    src.write_bytes(b"A man sleeps.\n" * 3000 + b"bad \xff byte\n" + b"A dog.\n" * 10)
    proc = encode(["--scheme", "spaces", "--model", model, "--inputs", src, "--outputs", tmp_path / "o",
                   "--workers", workers, "--segment-bytes", 4096], check=False)
    one_line_error(proc, f"{src}:3001:", "invalid UTF-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]


def test_worker_killed_is_reported_and_cleaned_up(shared_path, tmp_path, long_inputs):
    """A worker that dies (out-of-memory killer) must not hang the parent or leave part files."""
    args, out_dir = flota_on_a_long_input(shared_path, tmp_path, long_inputs)
    proc = subprocess.Popen([sys.executable, "-m", "preprocess.encode", *map(str, args)], env=cli_env(), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while proc.poll() is None and not any(".part" in p.name for p in out_dir.iterdir()):
            time.sleep(0.01)
        time.sleep(0.3)
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        assert children, "no worker process found"
        os.kill(int(children[0]), signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    one_line_error(subprocess.CompletedProcess([], proc.returncode, "", err), "killed by SIGKILL")
    assert list(out_dir.iterdir()) == []


# --- the Python API and the fallback counters ---------------------------------------------------------------------

def encoder_args(**kw) -> argparse.Namespace:
    from preprocess.encode import build_parser
    argv = []
    for k, v in kw.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    return build_parser(kw["scheme"]).parse_args(argv + ["--inputs", "x", "--outputs", "y", "--quiet"])


@pytest.mark.parametrize("workers", [1, 2])
def test_file_encoder_api_counts_fallbacks_across_workers(workers, shared_path, tmp_path):
    from preprocess.encode import FileEncoder
    vocab = shared_path("flota_vocabs/bert-base-uncased.txt")
    src = tmp_path / "in.txt"
    src.write_text("A Boston Terrier runs. \u2230\u2230\n\nCats \u2230 sleep.\n" * 5000, encoding="utf-8")
    args = encoder_args(scheme="flota", flota_vocab=vocab, workers=workers, segment_bytes=10_000)
    with FileEncoder(args) as enc:
        assert enc.encode_file(str(src), str(tmp_path / "o1")) == 15_000
        assert enc.encode_file(str(src), str(tmp_path / "o2")) == 15_000
    dropped = [v for k, v in enc.counters.items() if "dropped" in k]
    assert dropped == [2 * 3 * 5000]     # three U+2230 per block of three lines, two files
    first = (tmp_path / "o1").read_text(encoding="utf-8").split("\n")[0]
    assert first == "a boston terri ##er runs ."   # the uncased vocabulary's own lower-casing


def test_cli_prints_one_note_per_counter(shared_path, tmp_path):
    vocab = shared_path("flota_vocabs/bert-base-uncased.txt")
    src = tmp_path / "in.txt"
    src.write_text("x \u2230\n" * 10, encoding="utf-8")
    proc = encode(["--scheme", "flota", "--flota-vocab", vocab, "--inputs", src, "--outputs", tmp_path / "o",
                   "--quiet", "--workers", 2, "--segment-bytes", 8])
    assert proc.stderr.splitlines() == [
        "note: 10 words FLOTA dropped entirely (no vocabulary substring in them; --flota-unk TOKEN keeps a "
        "placeholder)"]


def test_file_encoder_rejects_bad_options():
    from preprocess.encode import FileEncoder
    with pytest.raises(UserError, match="chunk-size"):
        FileEncoder(argparse.Namespace(scheme="flota", workers=1, chunk_size=0, errors="strict", quiet=True))


# --- the spaces scheme through the CLI: library equality, line keeping, UTF-8, arguments, stdin/stdout -----

def spaces_cli(run_cli, model, inputs, outputs, *extra, check=True, **kw):
    return run_cli(["python", "-m", "preprocess.encode", "--scheme", "spaces", "--model", model,
                    "--inputs", *inputs, "--outputs", *outputs, "--quiet", *extra], check=check, **kw)


def test_encode_cli_matches_library_for_any_worker_count(run_cli, shared_path, tmp_path):
    model = str(shared_path("space_models/unigram_prime.model"))
    enc = SpacesEncoder(model, "drop")
    src = tmp_path / "train.de"
    src.write_text("".join(f"{line}\n" for line in corpus_lines(shared_path, "spaces", 3000)), encoding="utf-8")
    expected = [enc.encode(line) for line in read(src)]
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}.txt"
        spaces_cli(run_cli, model, [src], [out], "--spaces", "drop", "--workers", workers, "--chunk-size", "97")
        assert read(out) == expected


def test_encode_cli_keeps_every_line(run_cli, shared_path, tmp_path):
    model = str(shared_path("space_models/bpe_prime.model"))
    huge = "lorem ipsum dolor " * 60000  # > 1 MB
    lines = ["A dog runs.", "", "   ", "\t", "Two\u2028lines?\rno: one", huge, "ok", "\x00\x07 control"]
    src = tmp_path / "in.txt"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    spaces_cli(run_cli, model, [src], [out], "--workers", "2")
    got = read(out)
    assert len(got) == len(lines)
    assert got[1] == got[2] == got[3] == ""
    assert got[0] and got[4] and got[6]
    assert len(got[5].split()) > 100000
    # no line separator of any kind may survive inside an output line
    assert all(ch not in line for line in got for ch in "\r\u2028\x0b\x0c")


def test_encode_cli_invalid_utf8(run_cli, shared_path, tmp_path):
    model = str(shared_path("space_models/bpe_prime.model"))
    src = tmp_path / "bad.txt"
    src.write_bytes(b"good line\nbad \xff\xfe line\nlast\n")
    out = tmp_path / "out.txt"
    proc = spaces_cli(run_cli, model, [src], [out], check=False)
    assert proc.returncode == 2
    assert f"{src}:2:" in proc.stderr and "invalid UTF-8" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists() and not list(tmp_path.glob(".out.txt*"))  # nothing partial left behind
    spaces_cli(run_cli, model, [src], [out], "--errors", "replace")
    assert len(read(out)) == 3


def test_encode_cli_missing_model_and_misaligned_arguments(run_cli, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("hello\n")
    proc = spaces_cli(run_cli, str(tmp_path / "nope.model"), [src], [tmp_path / "o"], check=False)
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0
    assert "SentencePiece model not found" in proc.stderr
    proc = spaces_cli(run_cli, str(tmp_path / "nope.model"), [src, src], [tmp_path / "o"], check=False)
    assert proc.returncode == 2 and "one output per input" in proc.stderr


def test_encode_cli_stdin_stdout(run_cli, shared_path):
    model = str(shared_path("space_models/unigram_prime.model"))
    proc = spaces_cli(run_cli, model, ["-"], ["-"], input="A man sleeps.\n\nTwo dogs.\n")
    assert proc.stdout.split("\n") == [SpacesEncoder(model).encode(s) for s in ("A man sleeps.", "", "Two dogs.")] \
        + [""]




def read(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read().split("\n")[:-1]


# --- inputs read once ---------------------------------------------------------------------------------------------

class _ChangesItsInput:
    """A LineEncoder (upper-cases) that, on its first chunk in any process, changes the input file under the run:
    ``replace`` (another file renamed over it), ``truncate`` or ``grow`` (appended in place)."""

    def __init__(self, src: str, action: str, marker: str):
        self.src, self.action, self.marker = src, action, marker

    def encode_lines(self, lines):
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))   # once, whichever process comes first
        except FileExistsError:
            pass
        else:
            if self.action == "replace":
                with open(self.src + ".new", "w", encoding="utf-8") as fh:
                    fh.write("other text\n" * 20_000)
                os.replace(self.src + ".new", self.src)
            elif self.action == "truncate":
                os.truncate(self.src, os.path.getsize(self.src) // 3)
            else:
                with open(self.src, "a", encoding="utf-8") as fh:
                    fh.write("more text\n" * 1000)
        return [line.upper() for line in lines]


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("action", ["replace", "truncate", "grow"])
def test_input_changed_during_the_run_is_an_error_not_a_mixed_output(action, workers, tmp_path):
    from preprocess.encode import FileEncoder, file_options
    src = tmp_path / "in.txt"
    src.write_text("a dog sleeps\n" * 20_000, encoding="utf-8")
    args = file_options(workers=workers, chunk_size=500)
    args.segment_bytes = 16_384
    factory = lambda: _ChangesItsInput(str(src), action, str(tmp_path / "marker"))   # noqa: E731
    with FileEncoder(args, factory) as enc:
        with pytest.raises(UserError, match=f"input file {src} was .* while it was being encoded"):
            enc.encode_file(str(src), str(tmp_path / "out.txt"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "marker"]


def test_workers_read_the_parents_descriptor_not_the_name(tmp_path, monkeypatch):
    """Workers never open the input by name (the parent's open file is shared): renaming it away mid-run still
    gives the whole input, and then the run says it was replaced."""
    from preprocess.encode import FileEncoder, file_options
    from preprocess.files import inputs
    src = tmp_path / "in.txt"
    src.write_text("a dog sleeps\n" * 20_000, encoding="utf-8")
    opened = []
    real_open = inputs.open_binary_input
    monkeypatch.setattr(inputs, "open_binary_input", lambda path: (opened.append(path), real_open(path))[1])
    args = file_options(workers=2, chunk_size=500)
    args.segment_bytes = 16_384
    with FileEncoder(args, lambda: _ChangesItsInput(str(src), "grow", str(tmp_path / "m"))) as enc:
        with pytest.raises(UserError):
            enc.encode_file(str(src), str(tmp_path / "out.txt"))
    assert opened == []   # neither the parent nor a (forked) worker reopened the path


def _stream_into(path: Path, data: bytes) -> threading.Thread:
    def write():
        with open(path, "wb") as fh:
            fh.write(data)
    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("workers", [1, 2])
def test_non_seekable_inputs_go_through_the_same_workers(workers, shared_path, tmp_path):
    """A FIFO, /dev/stdin from a pipe and bash's <(...) give the same output as the file itself."""
    model = shared_path("space_models/unigram_prime.model")
    src = tmp_path / "in.txt"
    src.write_text("A man sleeps.\n\nTwo dogs are barking.\n" * 3000, encoding="utf-8")
    base = ["--scheme", "spaces", "--model", model, "--quiet", "--workers", workers, "--segment-bytes", 20_000]
    encode(base + ["--inputs", src, "--outputs", tmp_path / "ref"])
    expected = (tmp_path / "ref").read_bytes()
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    writer = _stream_into(fifo, src.read_bytes())
    encode(base + ["--inputs", fifo, "--outputs", tmp_path / "from_fifo"], timeout=120)
    writer.join(30)
    assert (tmp_path / "from_fifo").read_bytes() == expected
    proc = encode(base + ["--inputs", "/dev/stdin", "--outputs", "/dev/stdout"], input=src.read_text())
    assert proc.stdout.encode() == expected
    cmd = " ".join([sys.executable, "-m", "preprocess.encode", *map(str, base), "--inputs", f"<(cat {src})",
                    "--outputs", str(tmp_path / "from_subst")])
    proc = subprocess.run(["bash", "-c", cmd], env=cli_env(), cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "from_subst").read_bytes() == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["from_fifo", "from_subst", "in.fifo", "in.txt", "ref"]


@pytest.mark.parametrize("workers", [1, 2])
def test_corrupt_gzip_input_is_one_line_with_file_and_position(workers, shared_path, tmp_path):
    model = shared_path("space_models/unigram_prime.model")
    whole = gzip.compress(("A man sleeps.\n" * 20_000).encode())
    (tmp_path / "cut.gz").write_bytes(whole[:len(whole) // 2])
    (tmp_path / "plain.gz").write_text("A man sleeps.\n" * 100)
    for name in ("cut.gz", "plain.gz"):
        proc = encode(["--scheme", "spaces", "--model", model, "--inputs", tmp_path / name, "--outputs",
                       tmp_path / "o", "--workers", workers, "--quiet"], check=False)
        one_line_error(proc, f"{tmp_path / name}: corrupt or truncated gzip data", "compressed byte")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.gz", "plain.gz"]


# --- workers die with their parent; signals ------------------------------------------------------------------------

def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"   # a zombie has stopped working
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_die_with_a_killed_parent_and_the_next_run_cleans_up(shared_path, tmp_path, long_inputs):
    args, out_dir = flota_on_a_long_input(shared_path, tmp_path, long_inputs)
    proc = subprocess.Popen([sys.executable, "-m", "preprocess.encode", *map(str, args)], env=cli_env(), cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while proc.poll() is None and not any(".part" in p.name for p in out_dir.iterdir()):
            time.sleep(0.01)
        time.sleep(0.3)
        children = [int(p) for p in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                                   text=True).stdout.split()]
        assert children, "no worker process found"
        proc.kill()
        proc.wait()
        for _ in range(100):   # up to 10 s (they go within a second; before, they encoded on for minutes)
            if not any(_alive(pid) for pid in children):
                break
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in children)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert any(p.name.endswith(".tmp") for p in out_dir.iterdir())   # a SIGKILL leaves its part files ...
    small = tmp_path / "small.txt"
    small.write_text("A man sleeps.\n", encoding="utf-8")
    i = args.index("--inputs")
    args[i + 1] = small
    encode(args)
    assert [p.name for p in out_dir.iterdir()] == ["o"]   # ... and the next run into the folder removes them


@pytest.mark.parametrize("workers", [1, 2])
def test_signals_in_quick_succession_are_handled_as_one(workers, shared_path, tmp_path, long_inputs):
    """As `timeout` and shells deliver them: SIGTERM, SIGINT, SIGTERM to the whole group."""
    args, out_dir = flota_on_a_long_input(shared_path, tmp_path, long_inputs)
    args[args.index("--workers") + 1] = workers
    rc, err = interrupt(args, out_dir, (signal.SIGTERM, signal.SIGINT, signal.SIGTERM))
    assert rc in (130, 143), err
    assert "Traceback" not in err, err
    assert [line for line in err.strip().splitlines() if " lines" not in line] == [
        "error: interrupted" if rc == 130 else "error: terminated (SIGTERM)"], err   # (progress bar)
    assert list(out_dir.iterdir()) == []


# --- the cycle collector is paused while a chunk is encoded (encode_chunk) ------------------------------------------

@pytest.mark.parametrize("scheme,extra", [pytest.param(s, [], id=s) for s in SCHEMES]
                         + [pytest.param("bite", ["--tagger", "hanta"], id="bite-hanta")])
def test_encoding_a_chunk_leaves_no_reference_cycles(scheme, extra, shared_path, tmp_path):
    """encode_chunk pauses the collector on the promise that encoders free what they make by reference counting:
    after a chunk of real text (and its hostile lines) with the collector off, a full collection finds nothing."""
    import gc

    from preprocess.encode import build_parser, encode_chunk
    args = build_parser(scheme).parse_args(["--scheme", scheme, *scheme_options(scheme, shared_path, tmp_path),
                                            *extra, "--inputs", "x", "--outputs", "y", "--quiet"])
    encoder = registry.get(scheme).make_encoder(args)
    lines = corpus_lines(shared_path, scheme, 300) + ["", " \t ", "x" * 5000, "a\u0000b [NNS] \u200b ﬁ 漢字 🙂"]
    encode_chunk(encoder, lines[:5])   # (lazy tables loaded and caches started, as in a worker's first chunk)
    gc.collect()
    gc.disable()
    try:
        out = encode_chunk(encoder, lines)
        assert gc.isenabled() is False   # (encode_chunk gives the collector back as it found it)
        found = gc.collect()
    finally:
        gc.enable()
    assert len(out) == len(lines)
    assert found == 0, f"{scheme}: {found} objects in reference cycles after one chunk"


def test_encode_chunk_pauses_the_collector_only_while_it_encodes():
    import gc

    from preprocess.encode import encode_chunk
    seen = []

    class Probe:
        def encode_lines(self, lines):
            seen.append(gc.isenabled())
            return lines

    assert gc.isenabled()
    assert encode_chunk(Probe(), ["a", "b"]) == ["a", "b"]
    assert seen == [False] and gc.isenabled()

    class Broken:
        def encode_lines(self, lines):
            raise ValueError("boom")

    with pytest.raises(ValueError):
        encode_chunk(Broken(), ["a"])
    assert gc.isenabled()
