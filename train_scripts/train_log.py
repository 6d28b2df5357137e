"""Extract machine-readable validation curves from a fairseq ``--log-format json --log-file`` log.

    python -m train_scripts.train_log SAVE/train.log --output SAVE/valid_log.jsonl

writes one JSON object per validation run: ``{"update": N, "epoch": E, "valid_loss": ..., "valid_nll_loss": ...,
"valid_ppl": ..., "subset": "valid"}``; ``--train`` also extracts the per-interval training losses.
"""
from __future__ import annotations

import argparse
import json
import re
import sys

from preprocess.common import UserError, atomic_output, run_main

# fairseq's json logger prints "<time> | INFO | <logger> | {json}" or, in --log-file, the same line
_JSON = re.compile(r"(\{.*\})\s*$")


def _records(path: str):
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
    for record in _records(path):
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
    for record in _records(path):
        if "train_inner_loss" in record or "loss" in record and "num_updates" in record:
            prefix = "train_inner_" if "train_inner_loss" in record else ""
            out.append({"update": int(float(record.get(prefix + "num_updates", 0))),
                        "epoch": int(float(record.get("epoch", 0))),
                        "loss": _number(record.get(prefix + "loss")), "lr": _number(record.get(prefix + "lr"))})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train_scripts.train_log", description=__doc__.split("\n\n")[0])
    p.add_argument("log", help="fairseq log written with --log-format json --log-file LOG")
    p.add_argument("--output", default="-", help="JSON-lines output (- = stdout)")
    p.add_argument("--train", action="store_true", help="extract the training losses instead")
    args = p.parse_args(argv)
    records = train_curve(args.log) if args.train else validation_curve(args.log)
    with atomic_output(args.output) as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
