"""Extract machine-readable validation curves from a fairseq ``--log-format json --log-file`` log.

    python -m train_scripts.train_log SAVE/train.log --output SAVE/valid_log.jsonl

writes one JSON object per validation run: ``{"update": N, "epoch": E, "valid_loss": ..., "valid_nll_loss": ...,
"valid_ppl": ..., "subset": "valid"}``; ``--train`` extracts the per-interval training losses instead.

An ``--output`` ending in ``.png``, ``.pdf`` or ``.svg`` is a plot of the same curve (loss against updates, one
line per subset), drawn with matplotlib:

    python -m train_scripts.train_log SAVE/train.log --output curve.png

A log without any record of the kind asked for (not written with ``--log-format json``, or training stopped
before the first validation) is an error: nothing is written, rather than an empty file.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.files.outputs import atomic_output, check_distinct

PLOT_FORMATS = (".png", ".pdf", ".svg")

# fairseq's json logger prints "<time> | INFO | <logger> | {json}" or, in --log-file, the same line
_JSON = re.compile(r"(\{.*\})\s*$")


def log_records(path: str):
    """The JSON records of a fairseq log (``--log-format json``), one dict per record line."""
    try:
        fh = open(path, encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UserError(f"cannot read log {path}: {exc.strerror}") from None
    with fh:
        for line in fh:
            m = _JSON.search(line)
            if not m:
                continue
            try:
                record = json.loads(m.group(1))
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                yield record


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def validation_curve(path: str) -> list[dict]:
    """Every validation record of the log, in order, with the update number and the losses as floats."""
    out = []
    for record in log_records(path):
        subsets = {k.split("_", 1)[0] for k in record if k.endswith("_loss") and "_" in k}
        for subset in sorted(subsets - {"train"}):
            if f"{subset}_num_updates" not in record:
                continue
            entry = {"subset": subset, "update": int(float(record[f"{subset}_num_updates"])),
                     "epoch": int(float(record.get("epoch", 0)))}
            for key, value in record.items():
                if key.startswith(subset + "_") and key != f"{subset}_num_updates":
                    entry[key] = _number(value)
            if not out or out[-1] != entry:  # fairseq may log the final validation twice
                out.append(entry)
    return out


def train_curve(path: str) -> list[dict]:
    out = []
    for record in log_records(path):
        if "train_inner_loss" in record or "loss" in record and "num_updates" in record:
            prefix = "train_inner_" if "train_inner_loss" in record else ""
            out.append({"update": int(float(record.get(prefix + "num_updates", 0))),
                        "epoch": int(float(record.get("epoch", 0))),
                        "loss": _number(record.get(prefix + "loss")), "lr": _number(record.get(prefix + "lr"))})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train_scripts.train_log", description=__doc__.split("\n\n")[0])
    p.add_argument("log", help="fairseq log written with --log-format json --log-file LOG")
    p.add_argument("--output", default="-", help="JSON-lines output (- = stdout), or a plot: FILE.png/.pdf/.svg")
    p.add_argument("--train", action="store_true", help="extract the training losses instead")
    args = p.parse_args(argv)
    check_distinct([(args.output, "--output")], [(args.log, "log")])
    records = train_curve(args.log) if args.train else validation_curve(args.log)
    if not records:
        kind, first = ("training", "log interval") if args.train else ("validation", "validation")
        raise UserError(f"no {kind} records in {args.log}: was it written by fairseq-train with --log-format json "
                        f"--log-file, and did training reach its first {first}? Nothing written")
    if os.path.splitext(args.output)[1].lower() in PLOT_FORMATS:
        plot(records, args.output, "loss" if args.train else None)
        return 0
    with atomic_output(args.output) as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
    return 0


def plot(records: list[dict], path: str, key: str | None = None) -> None:
    """Loss against updates, one line per subset (``key``: the loss field; default ``SUBSET_loss``), written
    through :func:`atomic_output` in the format the file name says."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    subsets = sorted({r.get("subset", "train") for r in records})
    for subset in subsets:
        rows = [r for r in records if r.get("subset", "train") == subset]
        field = key or f"{subset}_loss"
        points = [(r["update"], r[field]) for r in rows if isinstance(r.get(field), float)]
        ax.plot([u for u, _ in points], [v for _, v in points], marker="o" if len(points) < 50 else None,
                label=f"{subset} {field}")
    ax.set_xlabel("update")
    ax.set_ylabel("loss")
    ax.legend()
    fig.tight_layout()
    with atomic_output(path, "wb") as fh:
        fig.savefig(fh, format=os.path.splitext(path)[1][1:].lower())
    plt.close(fig)



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
