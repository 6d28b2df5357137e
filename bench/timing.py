"""The measuring tools every benchmark shares: load and stolen CPU, timing in interleaved rounds, the per-core
comparison of encode commands (``per_core``, ``print_ratios``) and peak memory.

Imported by ``bench/scale.py`` and the schemes' benchmarks (``bench/<scheme>.py``); it imports none of them (the
benchmarks build on it, never on each other).  :class:`ScaleCase` is what a scheme's benchmark gives
``bench/scale.py``."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable, Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run as a script: the checkout

from preprocess.common import REPO  # noqa: E402


@dataclass
class ScaleCase:
    """One scheme in ``bench/scale.py`` (``make bench``), from its benchmark module's ``scale_case(data, tmp)``
    (``data``: the shared data folder, a ``Path``; ``tmp``: a work folder): nothing in ``bench/scale.py`` names a
    scheme.

    ``args``: the ``preprocess.encode`` arguments; ``corpus``: the timing input, ``en`` (``--mb``), ``en-tagged``
    (``--mb-bite``) or ``de`` (``--mb-slow``, German); ``reference``: ``(lines, src, tmp) -> (name, run)`` of the
    published algorithm (``run()`` times it once and returns seconds, or is None where it cannot run), None: the
    scheme has no row in the reference table (its timing input is not English); ``apis``: ``() -> [(name, ours,
    reference, cold)]``, the per-sentence APIs fairseq calls, against the reference (``cold`` empties the caches);
    ``large``: run through the large input too."""

    args: list
    corpus: str = "en"
    reference: Optional[Callable] = None
    apis: Optional[Callable] = None
    large: bool = False


def load() -> str:
    return "load %.1f/%.1f/%.1f on %d cores" % (*os.getloadavg(), os.cpu_count())


def cpu_steal() -> float:
    """CPU seconds the hypervisor gave to other guests so far (all cores; Linux ``/proc/stat``), 0 elsewhere.
    On a shared VM this time is missing from every process: a run that met a lot of it is slow for no reason
    of its own."""
    try:
        with open("/proc/stat") as fh:
            return int(fh.readline().split()[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = f"{REPO}{os.pathsep}{e.get('PYTHONPATH', '')}"
    return e


def run_encode(scheme_args: list, src: str, dst: str, workers: int) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "preprocess.encode", *scheme_args, "--inputs", src, "--outputs", dst,
                    "--workers", str(workers), "--quiet"], check=True, env=env(), cwd=REPO)
    return time.perf_counter() - t0


#: the machine's own ceiling: a pure-Python loop of dict look-ups (as the schemes do), timed inside the process
_CALIBRATION = ("import time\nd = {str(i): i for i in range(200000)}\nks = [str(i * 7 % 300000) for i in range(200000)]\n"
                "t = time.perf_counter()\nfor _ in range(8):\n    s = sum(v for v in map(d.get, ks) if v is not None)\n"
                "    s += sum(len(k) for k in ks if k in d)\nprint(time.perf_counter() - t)")


def calibrate(n: int, rounds: int) -> str:
    """How much faster n copies of the same pure-Python work finish together than one after the other, on this
    machine now (n on an idle machine with n free cores; less where cores share caches, clocks or a hypervisor);
    median and range over rounds."""
    def run(k: int) -> float:
        procs = [subprocess.Popen([sys.executable, "-c", _CALIBRATION], stdout=subprocess.PIPE, text=True)
                 for _ in range(k)]
        return max(float(p.communicate()[0]) for p in procs)
    return spread([n * run(1) / run(n) for _ in range(rounds)])


def spread(ratios: list) -> str:
    """The median of per-round ratios, with their range: ``1.85x (1.62-1.93)``."""
    ratios = sorted(ratios)
    return f"{ratios[len(ratios) // 2]:.2f}x ({ratios[0]:.2f}-{ratios[-1]:.2f})"


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved(ref, ours, cold, items: list, rounds: int, chunk: int = 100) -> tuple:
    """Time two per-item functions over ``items`` in alternating chunks, ``rounds`` passes, ``cold()`` before
    each pass of ours.  On a shared virtual machine whose speed drifts by 20-30 % within seconds, the two
    sides of a chunk pair see the same drift, so the per-pass ratio is steadier than a ratio of separate runs.
    Returns the best pass time of each side and the median of the per-pass ratios ref / ours."""
    passes = []
    for _ in range(rounds):
        cold()
        t_ref = t_ours = 0.0
        for i in range(0, len(items), chunk):
            part = items[i:i + chunk]
            t0 = time.perf_counter()
            for x in part:
                ref(x)
            t1 = time.perf_counter()
            for x in part:
                ours(x)
            t_ours += time.perf_counter() - t1
            t_ref += t1 - t0
        passes.append((t_ref, t_ours))
    ratios = sorted(r / o for r, o in passes)
    return min(r for r, _ in passes), min(o for _, o in passes), ratios[len(ratios) // 2]


def child_cpu(args: list) -> float:
    """Run a command (``python -m ...`` through this interpreter); return the CPU seconds (user + system) that it
    and its children used (``os.wait4``)."""
    proc = subprocess.Popen(args, env=env(), cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"command failed: {' '.join(map(str, args))}")
    return usage.ru_utime + usage.ru_stime


def per_core(pairs: dict, src: str, one_line: str, n_words: int, tmp: str, rounds: int = 3,
             inputs: dict | None = None) -> dict:
    """Words per CPU second, once started, of ``python -m preprocess.encode --workers 1`` for every entry of
    ``pairs`` (name -> scheme arguments) on ``src`` (``n_words`` words), measured in interleaved rounds (every
    round runs every entry back to back, so all see the same machine): CPU time of the whole command minus that
    of the same command on the one-line input ``one_line`` (start-up: imports, models, tagger), per round.
    Returns name -> (words/s from the least CPU time of each command over the rounds,
    [per-round words/s of the encoding phase measured in-process, :func:`encode_cpu`],
    [the same for a second pass over the same lines, every word type seen]).

    A command's CPU time can only be inflated by what else runs (caches, frequency), never deflated, so the least
    over rounds of the whole run and, separately, of the start-up is the estimate least disturbed (``timeit``'s
    reasoning); the per-round figures keep the spread visible (see :func:`best_ratio` and :func:`inproc_ratio`).

    ``inputs`` gives an entry its own ``(src, n_words)`` (the fast spaces scheme a longer text, so that its CPU time
    is well above the timer's noise); every rate is per word of the entry's own input."""
    inputs = inputs or {}
    fulls: dict = {name: [] for name in pairs}
    starts: dict = {name: [] for name in pairs}
    inproc: dict = {name: [] for name in pairs}
    warm: dict = {name: [] for name in pairs}
    for r in range(rounds):
        for name, scheme_args in pairs.items():
            text, words = inputs.get(name, (src, n_words))
            cmd = [sys.executable, "-m", "preprocess.encode", *scheme_args, "--workers", "1", "--quiet"]
            full = child_cpu([*cmd, "--inputs", text, "--outputs", os.path.join(tmp, f"pc.{name}.{r}.out")])
            start = child_cpu([*cmd, "--inputs", one_line, "--outputs", os.path.join(tmp, f"pc.{name}.1.out")])
            fulls[name].append(full)
            starts[name].append(start)
            first, second = encode_cpu(scheme_args, text)
            inproc[name].append(words / max(first, 1e-9))
            warm[name].append(words / max(second, 1e-9))
    return {name: (inputs.get(name, (src, n_words))[1] / max(min(fulls[name]) - min(starts[name]), 1e-9),
                   inproc[name], warm[name]) for name in pairs}


def repeated(src: str, times: int, dst: str) -> int:
    """``src`` written ``times`` times over into ``dst``; the number of words of ``dst``."""
    with open(src, encoding="utf-8") as fh:
        text = fh.read()
    with open(dst, "w", encoding="utf-8") as fh:
        for _ in range(times):
            fh.write(text)
    return len(text.split()) * times


def encode_cpu(scheme_args: list, src: str) -> tuple[float, float]:
    """CPU seconds of the encoding phase alone, measured inside a fresh process (``bench/encode_cpu.py``): the
    first pass over ``src``, and a second pass with the same encoder."""
    out = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "encode_cpu.py"),
                          src, *scheme_args], env=env(), cwd=REPO, check=True, capture_output=True, text=True)
    first, _lines, second = out.stdout.split()
    return float(first), float(second)


def inproc_ratio(result: dict, name: str, base: str, second_pass: bool = False) -> tuple:
    """Median and range over rounds of words/s(name) / words/s(base), encoding phase measured in-process (the
    first pass, or with ``second_pass`` the second, every word type seen)."""
    import statistics
    k = 2 if second_pass else 1
    rs = sorted(a / b for a, b in zip(result[name][k], result[base][k]))
    return statistics.median(rs), rs[0], rs[-1]


def print_ratios(result: dict, base: str, base_label: str, names: list) -> None:
    """The table of :func:`per_core`'s result against ``base``: in-process words/s (best round), the in-process
    ratio of the first pass (median, range) and of the second pass (every word type seen: what the per-word caches
    give once a large corpus's frequent words are in them), and the whole command's least-CPU ratio."""
    print("| scheme | words per CPU second, encoding in-process (best round) | vs spaces, in-process: median "
          "(range) | vs spaces, in-process, second pass (every word seen) | vs spaces, whole command: least CPU |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| {base_label} | {max(result[base][1]):,.0f} | 1 | 1 | 1 |")
    for name in names:
        med, lo, hi = inproc_ratio(result, name, base)
        warm, wlo, whi = inproc_ratio(result, name, base, second_pass=True)
        print(f"| {name} | {max(result[name][1]):,.0f} | {med:.3f} ({lo:.3f}-{hi:.3f}) | {warm:.3f} "
              f"({wlo:.3f}-{whi:.3f}) | {best_ratio(result, name, base):.3f} |")


def best_ratio(result: dict, name: str, base: str) -> float:
    """words/s(name) / words/s(base), each from its least CPU times over the rounds (see :func:`per_core`)."""
    return result[name][0] / result[base][0]


def peak_rss(args: list) -> tuple[float, dict]:
    """Run a command; return its wall time and the peak RSS (MB) of it and of each of its child processes."""
    proc = subprocess.Popen(args, env=env(), cwd=REPO)
    peaks: dict = {}

    def hwm(pid: int):
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    t0 = time.perf_counter()
    while proc.poll() is None:
        pids = [proc.pid]
        try:
            with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as fh:
                pids += [int(p) for p in fh.read().split()]
        except OSError:
            pass
        for pid in pids:
            v = hwm(pid)
            if v is not None:
                peaks[pid] = max(peaks.get(pid, 0), v)
        time.sleep(0.1)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"command failed: {' '.join(map(str, args))}")
    parent = peaks.pop(proc.pid, 0.0)
    return wall, {"parent": parent, "workers": sorted(peaks.values())}


def report_spaces_cpu(result: dict, words: int, base: str, least_s: float = 1.0) -> None:
    """Say how many CPU seconds the baseline's in-process encoding took (its least over the rounds), and warn when
    that is under ``least_s``: then the ratio rests on a time the timer's noise can move."""
    cpu = words / max(result[base][1])
    verdict = "" if cpu >= least_s else f" (under {least_s:g} s: give its text more repeats)"
    print(f"{base}: {cpu:.2f} s of CPU encoding in-process, least over the rounds{verdict}")

