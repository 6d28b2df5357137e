"""train_scripts.fairseq_preprocess: fairseq-preprocess with the first chunk binarised beside the workers' chunks
(fairseq 0.12 waits for its pool first), writing the same bytes as fairseq-preprocess."""
import os
import random
import time

import pytest

from train_scripts import fairseq_preprocess


def _text(path, lines: int, seed: int) -> None:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(300)] + ["ü", "€", "日本"]
    path.write_text("".join(" ".join(rng.choices(words, k=rng.randint(0, 30))) + "\n" for _ in range(lines)),
                    encoding="utf-8")


@pytest.mark.parametrize("workers", [2, 3])   # 1: no pool, fairseq's own path
def test_the_same_files_as_fairseq_preprocess(run_cli, tmp_path, workers):
    for split, n in (("train", 2001), ("valid", 7)):
        for lang in ("en", "de"):
            _text(tmp_path / f"{split}.{lang}", n, hash((split, lang)) % 1000)
    outs = {}
    for name, cmd in (("fairseq", ["fairseq-preprocess"]), ("ours", fairseq_preprocess.COMMAND)):
        outs[name] = tmp_path / name
        run_cli([*cmd, "--source-lang", "en", "--target-lang", "de", "--trainpref", tmp_path / "train",
                 "--validpref", tmp_path / "valid", "--destdir", outs[name], "--workers", str(workers),
                 "--joined-dictionary", "--nwordssrc", "200"])
    names = sorted(p.name for p in outs["fairseq"].iterdir() if p.name != "preprocess.log")
    assert names == sorted(p.name for p in outs["ours"].iterdir() if p.name != "preprocess.log")
    assert any(n.endswith(".bin") for n in names) and any(n.endswith(".idx") for n in names)
    for n in names:
        assert (outs["fairseq"] / n).read_bytes() == (outs["ours"] / n).read_bytes(), n


class _SlowBinarizer:
    """Records when (and in which process) each line is binarised; 10 ms per line."""

    def __init__(self, log_dir):
        self.log_dir = str(log_dir)

    def binarize_line(self, line, summary):
        import torch

        with open(os.path.join(self.log_dir, str(os.getpid())), "a") as fh:
            fh.write(f"{time.monotonic()}\n")
        time.sleep(0.01)
        summary.num_seq += 1
        return torch.IntTensor([len(line)])


def test_the_first_chunk_runs_beside_the_workers(tmp_path):
    """In fairseq's own order the first chunk starts after the last worker ends; here they overlap."""
    from fairseq.binarizer import FileBinarizer
    from fairseq.data import indexed_dataset

    text = tmp_path / "in.txt"
    text.write_text("".join(f"line {i}\n" for i in range(200)))
    log = tmp_path / "log"
    log.mkdir()
    prefix = str(tmp_path / "out")
    summary = fairseq_preprocess.multiprocess_dataset(FileBinarizer, str(text), "mmap", _SlowBinarizer(log),
                                                      prefix, num_workers=2)
    assert summary.num_seq == 200   # the workers' summaries merged with the first chunk's
    times = {int(p.name): [float(x) for x in p.read_text().split()] for p in log.iterdir()}
    main = times.pop(os.getpid())
    (worker,) = times.values()
    assert len(main) + len(worker) == 200
    assert min(worker) < max(main) and min(main) < max(worker), "the chunks ran one after the other"
    ds = indexed_dataset.make_dataset(prefix, impl="mmap")
    assert [int(ds[i][0]) for i in range(len(ds))] == [len(f"line {i}\n") for i in range(200)]
    assert sorted(os.listdir(tmp_path)) == ["in.txt", "log", "out.bin", "out.idx"]   # the workers' files merged


_KILLED_MAIN = """
import sys, time
sys.path[:0] = [{repo!r}]
from fairseq.binarizer import FileBinarizer
from tests.test_fairseq_preprocess import _SlowBinarizer
from train_scripts import fairseq_preprocess
fairseq_preprocess.multiprocess_dataset(FileBinarizer, {text!r}, "mmap", _SlowBinarizer({log!r}), {prefix!r},
                                        num_workers=2)
"""


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs Linux (/proc, prctl)")
def test_the_workers_stop_when_the_command_is_killed(tmp_path):
    """A caller stops an interrupted fairseq-preprocess with SIGKILL: fairseq's pool workers would go on with
    their chunk; these get SIGTERM from the kernel as their parent dies."""
    import signal
    import subprocess
    import sys

    from preprocess.common import REPO
    from tests.test_clean_stop import _alive

    text = tmp_path / "in.txt"
    text.write_text("".join(f"line {i}\n" for i in range(6000)))   # 10 ms a line: a minute per chunk
    log = tmp_path / "log"
    log.mkdir()
    script = _KILLED_MAIN.format(repo=str(REPO), text=str(text), log=str(log), prefix=str(tmp_path / "out"))
    main = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
    deadline = time.time() + 60
    while len(list(log.iterdir())) < 2:   # both chunks under way
        assert main.poll() is None and time.time() < deadline, "the chunks did not start"
        time.sleep(0.1)
    (worker,) = [int(p.name) for p in log.iterdir() if int(p.name) != main.pid]
    main.send_signal(signal.SIGKILL)
    main.wait()
    deadline = time.time() + 10
    while _alive([worker]) and time.time() < deadline:
        time.sleep(0.1)
    alive = bool(_alive([worker]))
    if alive:
        os.kill(worker, signal.SIGKILL)
    assert not alive, "the pool worker outlived the killed command"
