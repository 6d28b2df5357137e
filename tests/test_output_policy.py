"""The one output policy of every preprocessing command (docs/robustness.md): an output that is an input,
model or vocabulary of the run is refused before any work; symlinks are followed (the link stays a link);
devices, FIFOs and /dev/stdout are written in place; a write error (disk full, file size limit) is one line
naming the path and leaves neither a partial file, nor a temporary file, nor a partial set (a model without its
vocabulary and dictionary); folders are made the same way for any worker count; a killed run's leftovers are
removed by the next run."""
from __future__ import annotations

import errno
import os
import resource
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import REPO, cli_env
from tests.test_encode import one_line_error

SENTENCES = "A man sleeps .\nTwo dogs are barking at the children .\nThe women walked home .\n"


def run(module: str, *args, check: bool = False, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("cwd", REPO)
    proc = subprocess.run([sys.executable, "-m", module, *map(str, args)], env=cli_env(), capture_output=True,
                          text=True, **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"{module} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def spaces_args(shared_path) -> list:
    return ["--scheme", "spaces", "--model", shared_path("space_models/unigram_prime.model"), "--quiet"]


@pytest.fixture
def text(tmp_path) -> Path:
    path = tmp_path / "x.txt"
    path.write_text(SENTENCES * 2000, encoding="utf-8")
    return path


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- outputs never destroy inputs --------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling", ["dot", "absolute", "symlink", "hardlink"])
@pytest.mark.parametrize("workers", [1, 2])
def test_output_that_is_the_input_is_refused(spelling, workers, shared_path, text, tmp_path):
    before = text.read_bytes()
    if spelling == "dot":
        out = "./x.txt"
    elif spelling == "absolute":
        out = str(text)
    else:
        out = str(tmp_path / "alias.txt")
        (os.symlink if spelling == "symlink" else os.link)(text, out)
    proc = run("preprocess.encode", *spaces_args(shared_path), "--inputs", "x.txt", "--outputs", out,
               "--workers", workers, cwd=tmp_path)
    one_line_error(proc, "same file", "x.txt")
    assert text.read_bytes() == before


def test_an_input_read_after_it_is_written_is_refused(shared_path, tmp_path):
    """--inputs a b --outputs b c: b would be overwritten before it is read."""
    (tmp_path / "a").write_text(SENTENCES, encoding="utf-8")
    (tmp_path / "b").write_text(SENTENCES * 2, encoding="utf-8")
    proc = run("preprocess.encode", *spaces_args(shared_path), "--inputs", tmp_path / "a", tmp_path / "b",
               "--outputs", tmp_path / "b", tmp_path / "c")
    one_line_error(proc, "same file")
    assert (tmp_path / "b").read_text(encoding="utf-8") == SENTENCES * 2
    assert listing(tmp_path) == ["a", "b"]


def test_output_that_is_a_model_or_vocabulary_is_refused(shared_path, tmp_path):
    model = tmp_path / "m.model"
    shutil.copy(shared_path("space_models/unigram_prime.model"), model)
    vocab = tmp_path / "v.txt"
    shutil.copy(shared_path("flota_vocabs/bert-base-uncased.txt"), vocab)
    src = tmp_path / "in.txt"
    src.write_text(SENTENCES, encoding="utf-8")
    saved = {p: p.read_bytes() for p in (model, vocab, src)}
    cases = [
        ("preprocess.encode", "--scheme", "spaces", "--model", model, "--inputs", src, "--outputs", model),
        ("preprocess.encode", "--scheme", "flota", "--flota-vocab", vocab, "--inputs", src, "--outputs", vocab),
        ("preprocess.models.spm", "dict", "--model", model, "--output", model),
        ("preprocess.schemes.spaces", "dict", "--model", model, "--output", tmp_path / "." / "m.model"),
        ("preprocess.schemes.flota", "dict", "--vocab", vocab, "--output", vocab),
        ("preprocess.schemes.bite", "decode", "--input", src, "--output", src),
        ("preprocess.evaluate.noise", "perturb", "--kind", "ws", "--input", src, "--output", src),
        ("preprocess.models.spm", "train", "--input", tmp_path / "m.vocab", "--model-prefix", tmp_path / "m"),
    ]
    (tmp_path / "m.vocab").write_text(SENTENCES, encoding="utf-8")
    saved[tmp_path / "m.vocab"] = (tmp_path / "m.vocab").read_bytes()
    for module, *args in cases:
        one_line_error(run(module, *args), "same file")
        assert all(p.read_bytes() == data for p, data in saved.items()), (module, args)


# --- special outputs: written in place, never replaced ------------------------------------------------------------

@pytest.mark.parametrize("workers", [1, 2])
def test_symlink_output_writes_its_target_and_stays_a_link(workers, shared_path, text, tmp_path):
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "target.tok"
    target.write_text("old\n")
    link = tmp_path / "link.tok"
    link.symlink_to(target)
    run("preprocess.encode", *spaces_args(shared_path), "--inputs", text, "--outputs", link, "--workers", workers,
        check=True)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert len(target.read_text(encoding="utf-8").splitlines()) == 6000
    assert listing(tmp_path / "data") == ["target.tok"]


@pytest.mark.parametrize("workers", [1, 2])
def test_fifo_output_streams_to_its_reader(workers, shared_path, text, tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    run("preprocess.encode", *spaces_args(shared_path), "--inputs", text, "--outputs", fifo, "--workers", workers,
        check=True, timeout=120)
    reader.join(60)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got and got[0].count(b"\n") == 6000
    assert listing(tmp_path) == ["out.fifo", "x.txt"]


@pytest.mark.parametrize("workers", [1, 2])
def test_dev_stdout_is_the_process_stdout(workers, shared_path, text, tmp_path):
    proc = run("preprocess.encode", *spaces_args(shared_path), "--inputs", text, "--outputs", "/dev/stdout",
               "--workers", workers, check=True)
    assert proc.stdout.count("\n") == 6000
    assert listing(tmp_path) == ["x.txt"]


def test_character_device_output_stays_a_device(shared_path, text, tmp_path):
    """A private copy of /dev/null (making device nodes needs root; the real /dev/null is never risked)."""
    null = tmp_path / "null"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")
    for workers in (1, 2):
        run("preprocess.encode", *spaces_args(shared_path), "--inputs", text, "--outputs", null,
            "--workers", workers, check=True)
        assert stat.S_ISCHR(os.stat(null).st_mode)
    assert listing(tmp_path) == ["null", "x.txt"]


# --- paths: one line, or the same folder whatever the worker count -----------------------------------------------

@pytest.mark.parametrize("workers", [1, 2])
def test_bad_output_paths_are_one_line(workers, shared_path, text, tmp_path):
    (tmp_path / "adir").mkdir()
    for out, fragment in ((tmp_path / "new", "slash"), (tmp_path / "adir", "directory")):
        dst = str(out) + ("/" if fragment == "slash" else "")
        one_line_error(run("preprocess.encode", *spaces_args(shared_path), "--inputs", text, "--outputs", dst,
                           "--workers", workers), fragment)
    one_line_error(run("preprocess.schemes.flota", "dict", "--vocab", shared_path("flota_vocabs/bert-base-uncased.txt"),
                       "--output", tmp_path / "adir"), "directory")
    one_line_error(run("preprocess.schemes.flota", "dict", "--vocab", shared_path("flota_vocabs/bert-base-uncased.txt"),
                       "--output", f"{tmp_path}/sub/"), "slash")
    assert listing(tmp_path) == ["adir", "x.txt"] and listing(tmp_path / "adir") == []


@pytest.mark.parametrize("workers", [1, 2])
def test_missing_output_folders_are_made_for_any_worker_count(workers, shared_path, text, tmp_path):
    out = tmp_path / "new" / "deeper" / "x.tok"
    run("preprocess.encode", *spaces_args(shared_path), "--inputs", text, "--outputs", out, "--workers", workers,
        "--segment-bytes", 20_000, check=True)
    assert len(out.read_text(encoding="utf-8").splitlines()) == 6000
    assert listing(out.parent) == ["x.tok"]


def test_next_run_removes_what_a_killed_run_left(shared_path, text, tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()   # a process id that no longer exists
    out = tmp_path / "o.tok"
    left = [tmp_path / f".o.tok.{dead.pid}.part{i}.abcd.tmp" for i in range(3)]
    alive = tmp_path / f".o.tok.{os.getppid()}.part0.efgh.tmp"   # a live run's part file is kept
    for p in left + [alive]:
        p.write_text("partial\n")
    run("preprocess.encode", *spaces_args(shared_path), "--inputs", text, "--outputs", out, "--workers", 2, check=True)
    assert listing(tmp_path) == sorted([alive.name, "o.tok", "x.txt"])


# --- write errors: one line, nothing left ------------------------------------------------------------------------

def _file_size_limit(limit: int):
    def preexec():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


@pytest.mark.parametrize("workers", [1, 2])
def test_file_size_limit_while_encoding_is_one_line(workers, shared_path, text, tmp_path):
    """``ulimit -f``: the write fails with EFBIG (before: SIGXFSZ killed the command, leaving its files)."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    old = out_dir / "x.tok"
    old.write_text("previous\n")
    proc = run("preprocess.encode", *spaces_args(shared_path), "--inputs", text, "--outputs", old,
               "--workers", workers, "--segment-bytes", 20_000, preexec_fn=_file_size_limit(50_000))
    one_line_error(proc, f"cannot write {old}", "File too large")
    assert listing(out_dir) == ["x.tok"] and old.read_text() == "previous\n"


def test_file_size_limit_in_flota_dict_is_one_line(shared_path, tmp_path):
    out = tmp_path / "dict.txt"
    proc = run("preprocess.schemes.flota", "dict", "--vocab", shared_path("flota_vocabs/bert-base-uncased.txt"),
               "--output", out, preexec_fn=_file_size_limit(40_000))
    one_line_error(proc, f"cannot write {out}")
    assert listing(tmp_path) == []


def test_disk_full_spm_train_publishes_no_partial_set(shared_path, small_disk, tmp_path):
    """A disk with room for the .model and .vocab but not the .dict.txt: none of the three is published (before:
    a .model and .vocab without their dictionary, and a traceback)."""
    import gzip
    src = tmp_path / "train.txt"
    with gzip.open(shared_path("multi30k/train.en.gz"), "rt", encoding="utf-8") as fh:
        src.write_text("".join(fh.readlines()[:3000]), encoding="utf-8")
    train = ["train", "--input", src, "--vocab-size", 1000, "--num-threads", 1, "--seed", 1]
    run("preprocess.models.spm", *train, "--model-prefix", tmp_path / "ref" / "m", check=True)
    sizes = {ext: (tmp_path / "ref" / f"m{ext}").stat().st_size for ext in (".model", ".vocab", ".dict.txt")}
    page = 4096
    room = -(-sizes[".model"] // page) * page + -(-sizes[".vocab"] // page) * page
    assert sizes[".dict.txt"] > page   # (so that it cannot fit into the rounding)
    disk = small_disk(room)
    proc = run("preprocess.models.spm", *train, "--model-prefix", disk / "m")
    one_line_error(proc, "No space left on device", str(disk / "m"))
    assert listing(disk) == []


def test_disk_full_flota_dict_and_encode(shared_path, small_disk, text):
    disk = small_disk(96 * 1024)
    one_line_error(run("preprocess.schemes.flota", "dict", "--vocab", shared_path("flota_vocabs/bert-base-uncased.txt"),
                       "--output", disk / "dict.txt"), f"cannot write {disk / 'dict.txt'}")
    for workers in (1, 2):
        one_line_error(run("preprocess.encode", *spaces_args(shared_path), "--inputs", text, "--outputs",
                           disk / "x.tok", "--workers", workers, "--segment-bytes", 20_000),
                       f"cannot write {disk / 'x.tok'}", "No space left")
    assert listing(disk) == []


def test_atomic_outputs_publish_all_or_nothing(tmp_path):
    """The third file of a set fails (disk full): none is published, the existing files are unchanged."""
    from preprocess.common import UserError
    from preprocess.files.outputs import atomic_outputs
    paths = [tmp_path / "m.model", tmp_path / "m.vocab", tmp_path / "m.dict.txt"]
    paths[0].write_text("old model\n")
    with pytest.raises(UserError, match="No space left on device"):
        with atomic_outputs(paths) as handles:
            handles[0].write("model\n")
            handles[1].write("vocab\n")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert listing(tmp_path) == ["m.model"] and paths[0].read_text() == "old model\n"
    with atomic_outputs(paths) as handles:
        for h, p in zip(handles, paths):
            h.write(p.name)
    assert [p.read_text() for p in paths] == [p.name for p in paths]
    assert listing(tmp_path) == sorted(p.name for p in paths)


def test_atomic_output_fsyncs_before_the_rename(tmp_path, monkeypatch):
    from preprocess.files import outputs
    events = []
    monkeypatch.setattr(outputs.os, "fsync", lambda fd: events.append("fsync"))
    real_replace = os.replace
    monkeypatch.setattr(outputs.os, "replace", lambda a, b: (events.append("rename"), real_replace(a, b)))
    with outputs.atomic_output(str(tmp_path / "f")) as fh:
        fh.write("x")
    assert events[:2] == ["fsync", "rename"]


def test_signals_after_the_first_are_ignored_until_cleanup_is_done(tmp_path):
    """A second SIGINT/SIGTERM during cleanup must not interrupt it (no traceback, no temporary file)."""
    script = (
        "import os, signal, sys, time\n"
        "from preprocess.cli import run_main\nfrom preprocess.files.outputs import atomic_output\n"
        "def main(argv):\n"
        f"    with atomic_output({str(tmp_path / 'out')!r}) as fh:\n"
        "        fh.write('x')\n"
        "        try:\n"
        "            os.kill(os.getpid(), signal.SIGTERM)\n"
        "            time.sleep(5)\n"
        "        finally:\n"
        "            os.kill(os.getpid(), signal.SIGINT)   # arrives during the cleanup\n"
        "            os.kill(os.getpid(), signal.SIGTERM)\n"
        "            time.sleep(0.2)\n"
        "sys.exit(run_main(main))\n")
    proc = subprocess.run([sys.executable, "-c", script], env=cli_env(), cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 143, proc.stderr
    assert proc.stderr.strip() == "error: terminated (SIGTERM)"
    assert listing(tmp_path) == []


def test_corrupt_gzip_training_input_is_one_line(tmp_path):
    import gzip
    whole = gzip.compress(SENTENCES.encode() * 5000)
    (tmp_path / "cut.gz").write_bytes(whole[:len(whole) // 2])
    proc = run("preprocess.models.spm", "train", "--input", tmp_path / "cut.gz", "--model-prefix", tmp_path / "m",
               "--vocab-size", 100)
    one_line_error(proc, f"{tmp_path / 'cut.gz'}: corrupt or truncated gzip data", "compressed byte")
    assert listing(tmp_path) == ["cut.gz"]


def test_a_commands_json_record_is_written_whole_and_printed(tmp_path, capsys):
    """write_record, the evaluation commands' one way to publish their result: the file holds the whole record
    (non-ASCII kept), it is printed unless echo is off, and a failing serialisation leaves no file behind."""
    import json

    from preprocess.files.outputs import write_record

    out = tmp_path / "r.json"
    write_record({"Wörter": 3, "f1": 0.5}, str(out))
    assert json.loads(out.read_text(encoding="utf-8")) == {"Wörter": 3, "f1": 0.5}
    assert "Wörter" in out.read_text(encoding="utf-8") and json.loads(capsys.readouterr().out) == {"Wörter": 3,
                                                                                                   "f1": 0.5}
    write_record({"a": 1}, str(out), echo=False)
    assert capsys.readouterr().out == "" and json.loads(out.read_text()) == {"a": 1}
    with pytest.raises(TypeError):
        write_record({"a": object()}, str(tmp_path / "bad.json"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
