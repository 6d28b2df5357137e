"""The demo's pre-flight: everything a run needs, checked once before the first stage of any part, in a few seconds.

* the output folder can be created (or is a folder) and written, checked without leaving anything behind;
* every chosen part's inputs by their contents (``Part.check_inputs``: columns, labels, shapes, UTF-8), each
  bad file one line naming the part's option, the file and the line;
* the device each chosen preset needs: a ``gpu`` preset needs a CUDA device (the demo trains on one GPU);
* with ``--launcher slurm``, the cluster instead (:func:`check_cluster`): SLURM answers (``sinfo``, within
  :data:`SINFO_TIMEOUT_S`), the partition is there, its nodes have the CPUs and GPUs a job asks for, and a
  ``gpu`` preset's jobs ask for a GPU;
* free disk against the plan's estimated size (each part's ``Part.disk_bytes``);
* the compiled extensions (FLOTA's search, the HanTa and perceptron taggers): when one is not built, or built from
  an older source, one note says that the slower pure-Python path will be used (not a refusal).

A refusal is one line naming the option and what to do (``UserError``: exit 2) and creates nothing; the parts'
own checks of their options and inputs (``Part.settings``) ran before.
"""
from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from preprocess.common import UserError

#: the compiled extensions: (what, the module with the plain class and ``_source_digest``, the compiled module)
EXTENSIONS = (("FLOTA's search", "preprocess.schemes.flota.search", "preprocess.schemes.flota._search"),
              ("the HanTa tagger (Wordmap)", "preprocess.tagging.hanta_fast", "preprocess.tagging._hanta_fast"),
              ("the perceptron tagger (BITE)", "preprocess.tagging.perceptron_fast",
               "preprocess.tagging._perceptron_fast"))
#: headroom over the plan's estimated size
DISK_MARGIN = 1.25
#: seconds ``sinfo`` has to answer before SLURM counts as unreachable
SINFO_TIMEOUT_S = 4.0


def cuda_devices() -> int:
    """The CUDA devices this process sees (0 without torch's CUDA build): the seam a test fakes a GPU at.  Without
    an NVIDIA device node there is none, said without importing torch (seconds on a busy machine)."""
    import glob

    if not glob.glob("/dev/nvidia[0-9]*"):
        return 0
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def refuse_overlap(inputs, folder: Path, what: str | None = None) -> None:
    """No input lies in (or is) ``folder``, which a part rewrites (an interrupted or changed stage is removed
    first): the one overlap check of every part.  ``inputs``: ``(option, path)`` pairs (a None path is skipped);
    ``what``: how the message names the folder (default: "the output folder FOLDER")."""
    where = what or f"the output folder {folder}"
    for option, path in inputs:
        if path is None:
            continue
        resolved = Path(path).resolve()
        if resolved == folder or folder in resolved.parents:
            raise UserError(f"{option} {path} overlaps {where}, which the demo rewrites; give --output another "
                            "folder")


def existing_ancestor(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def check_output(output: Path) -> None:
    """``--output`` is a folder or can be made one, and can be written: tried with a temporary folder in the
    nearest existing folder on its path, removed at once."""
    if output.exists() and not output.is_dir():
        raise UserError(f"--output {output} is a file, not a folder")
    base = existing_ancestor(output)
    if not base.is_dir():
        raise UserError(f"--output {output}: {base} is a file, not a folder; give --output a folder")
    try:
        probe = tempfile.mkdtemp(prefix=".morphtok-preflight-", dir=base)
        os.rmdir(probe)
    except OSError as exc:
        raise UserError(f"--output {output} cannot be created or written in {base} ({exc.strerror or exc}); "
                        "give --output a folder you can write") from None


def check_devices(todo: list, settings: dict) -> None:
    """Every chosen part whose preset runs on a GPU: a CUDA device is there."""
    needs = [(part, settings[part.name]) for part in todo if part.device(settings[part.name]) == "gpu"]
    if needs and cuda_devices() < 1:
        part, args = needs[0]
        raise UserError(f"{part.preset_flag} {getattr(args, 'preset', 'gpu')} trains on a GPU but CUDA sees none "
                        f"on this machine; use {part.preset_flag} cpu (or fast), or run on a machine with a GPU")


def _count(text: str) -> int:
    """The number a field of ``sinfo`` starts with (``8``, ``8+``); 0 for none."""
    found = re.match(r"\d+", text.strip())
    return int(found.group()) if found else 0


def gres_gpus(gres: str) -> int:
    """The GPUs of a node by ``sinfo -o %G``: ``gpu:4``, ``gpu:a100:4(S:0-1)``, ``gpu:2,mps:100``; 0 for
    ``(null)``."""
    return sum(int(m.group(1)) for m in re.finditer(r"(?:^|,)gpu(?::[^:,(]+)?:(\d+)", gres.strip()))


def check_cluster(cluster, todo: list, settings: dict) -> str:
    """``--launcher slurm``: SLURM answers, the partition (``--slurm-partition``, else the cluster's default) is
    there and has a node with the CPUs and GPUs each job asks for, and every chosen part whose preset runs on a GPU
    asks for one; the partition's name (a note)."""
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        raise UserError("--launcher slurm needs SLURM's sinfo and sbatch, which are not on PATH here; "
                        "--launcher local runs the same stages on this machine")
    try:
        proc = subprocess.run(["sinfo", "-h", "-o", "%P|%c|%G"], capture_output=True, text=True,
                              timeout=SINFO_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise UserError(f"--launcher slurm: SLURM does not answer (sinfo took over {SINFO_TIMEOUT_S:.0f} s); check "
                        "that its controller runs and that SLURM_CONF names it") from None
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise UserError(f"--launcher slurm: sinfo failed ({why}); check that SLURM's controller runs here")
    nodes: dict = {}
    default = None
    for line in proc.stdout.splitlines():
        fields = line.strip().split("|")
        if len(fields) != 3:
            continue
        name = fields[0].rstrip("*")
        if fields[0].endswith("*"):
            default = name
        nodes.setdefault(name, []).append((_count(fields[1]), gres_gpus(fields[2]), fields[2].strip()))
    partition = cluster.partition or default
    if cluster.partition and cluster.partition not in nodes:
        raise UserError(f"--slurm-partition {cluster.partition}: the cluster has no such partition (sinfo lists "
                        f"{', '.join(nodes) or 'none'})")
    if partition is None:
        raise UserError(f"--slurm-partition: the cluster has no default partition; give one of "
                        f"{', '.join(nodes) or '(sinfo lists none)'}")
    cpus = max(c for c, _, _ in nodes[partition])
    gpus = max(g for _, g, _ in nodes[partition])
    if cluster.cpus > cpus:
        raise UserError(f"--slurm-cpus-per-job {cluster.cpus}: the nodes of partition {partition} have at most "
                        f"{cpus} CPU(s)")
    if cluster.gpus > gpus:
        gres = ", ".join(sorted({g for _, _, g in nodes[partition]}))
        raise UserError(f"--slurm-gpus-per-job {cluster.gpus}: the nodes of partition {partition} have at most "
                        f"{gpus} GPU(s) (sinfo -o %G: {gres})")
    for part in todo:
        args = settings[part.name]
        if part.device(args) == "gpu" and cluster.gpus < 1:
            raise UserError(f"{part.preset_flag} {getattr(args, 'preset', 'gpu')} trains on a GPU but its jobs "
                            f"ask for none: give --slurm-gpus-per-job 1")
    return partition


def check_disk(todo: list, settings: dict, output: Path) -> None:
    """The free disk where ``--output`` lies against every chosen part's estimated size (with a margin)."""
    need = sum(part.disk_bytes(settings[part.name]) for part in todo)
    if not need:
        return
    free = shutil.disk_usage(existing_ancestor(output)).free
    if free < need * DISK_MARGIN:
        raise UserError(f"--output {output}: {free / 1e9:.1f} GB free, and the run writes about {need / 1e9:.1f} GB "
                        f"(plus {100 * (DISK_MARGIN - 1):.0f}% headroom); free some space or give --output "
                        "another disk")


def slow_paths() -> list:
    """The compiled extensions that are not built (or built from an older source): their plain-Python path runs."""
    slow = []
    for what, plain, compiled in EXTENSIONS:
        try:
            digest = importlib.import_module(plain)._source_digest()
            built = importlib.import_module(compiled)
        except ImportError:
            slow.append(what)
            continue
        if getattr(built, "SOURCE_SHA256", None) != digest:
            slow.append(what)
    return slow


def check(todo: list, settings: dict, output: Path, cluster=None) -> list:
    """Every refusal (raised as one ``UserError``) before any work; the notes to show (the slower paths, the
    partition).  ``cluster``: the SLURM launcher's settings (``slurm.Settings``), None for a local run."""
    check_output(output)
    notes = []
    if cluster is None:
        check_devices(todo, settings)
    else:
        notes.append(f"SLURM: jobs go to partition {check_cluster(cluster, todo, settings)}")
    for part in todo:   # the inputs' contents (columns, labels, shapes), by each part's own readers
        part.check_inputs(settings[part.name])
    check_disk(todo, settings, output)
    slow = slow_paths()
    return notes + ([f"note: {', '.join(slow)} {'is' if len(slow) == 1 else 'are'} not compiled here: the slower "
                     "pure-Python path will be used (make install builds them)"] if slow else [])
