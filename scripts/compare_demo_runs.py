"""Whether two ``morphtok-demo`` output folders hold the same results: every part's ``results.json`` compared value
for value, its ``meta`` (times, load, date, the command line, versions) left out, and every path written
relative to its own output folder.  For a study moved between machines or launchers (local processes against
SLURM jobs, ``--launcher slurm``): the same code, inputs and seeds must give the same numbers.

    python scripts/compare_demo_runs.py demo-local demo-slurm [--tolerance 0]

One line per difference (``PART.key.path: A != B``), then a summary; exit 0 when every part present in either
folder is present in both with the same values (floats within ``--tolerance``, default exact), 1 otherwise.
Timings inside the results (a key ``seconds``, ``..._seconds`` or ``..._per_cpu_second``: how long a command
took, which depends on the machine and its load, not on the code, inputs and seeds) are left out like ``meta``;
the summary counts them.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def load(folder: Path) -> dict:
    """``{part: results without meta}`` of an output folder (every part of the demo's registry whose results are
    there), each path under ``folder`` written as ``OUT/...``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from train_scripts.demo.demo_report import part_results
    from train_scripts.demo.parts import parts

    root = str(folder.resolve())
    out = {}
    for part, _, results in part_results(str(folder), parts()):
        results = json.loads(json.dumps(results, default=str).replace(root, "OUT"))
        results.pop("meta", None)
        out[part.name] = results
    return out


def is_timing(key) -> bool:
    """Whether a results key holds a timing (wall or CPU seconds, a rate per CPU second)."""
    key = str(key)
    return key == "seconds" or key.endswith(("_seconds", "_per_cpu_second"))


def timings(value) -> int:
    """How many timing values ``value`` holds (what the comparison leaves out)."""
    if isinstance(value, dict):
        return sum(1 if is_timing(k) else timings(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(timings(v) for v in value)
    return 0


def differences(a, b, tolerance: float = 0.0, where: str = "") -> list:
    """Every place where ``a`` and ``b`` differ, as ``(key.path, a's value, b's value)``; timings left out."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted((set(a) | set(b)) - {k for k in set(a) | set(b) if is_timing(k)}, key=str):
            here = f"{where}.{key}" if where else str(key)
            if key not in a or key not in b:
                found.append((here, a.get(key, "<absent>"), b.get(key, "<absent>")))
            else:
                found += differences(a[key], b[key], tolerance, here)
        return found
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [(where, f"{len(a)} items", f"{len(b)} items")]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, tolerance, f"{where}[{i}]")]
    if isinstance(a, float) and isinstance(b, float) and not isinstance(a, bool):
        same = (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tolerance
        return [] if same else [(where, a, b)]
    return [] if a == b else [(where, a, b)]


def count(value) -> int:
    """How many numbers ``value`` holds, timings left out (what the comparison covered)."""
    if isinstance(value, dict):
        return sum(count(v) for k, v in value.items() if not is_timing(k))
    if isinstance(value, list):
        return sum(count(v) for v in value)
    return 1 if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("first", type=Path)
    ap.add_argument("second", type=Path)
    ap.add_argument("--tolerance", type=float, default=0.0, help="absolute difference allowed between floats")
    args = ap.parse_args(argv)
    for folder in (args.first, args.second):
        if not folder.is_dir():
            print(f"error: {folder}: no such folder", file=sys.stderr)
            return 2
    a, b = load(args.first), load(args.second)
    if not a and not b:
        print(f"error: neither {args.first} nor {args.second} holds a part's results.json", file=sys.stderr)
        return 2
    found = differences(a, b, args.tolerance)
    for where, x, y in found:
        print(f"{where}: {x!r} != {y!r}")
    numbers = count(a)
    print(f"{len(set(a) | set(b))} part(s), {numbers} numbers compared ({timings(a)} timings left out): "
          + ("the same" if not found else f"{len(found)} difference(s)"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
