#!/usr/bin/env bash
# On the GPU machine (Python 3.12, torch preinstalled, no network): build fairseq-fixed's wheel for that
# Python from the carried sdist, so later runs install it in seconds. Writes the wheel under $OUT.
set -euo pipefail
carry=.device-carry
python3 -m pip install -q --no-index --find-links "$carry" --no-deps "$carry"/*.whl 2>&1 | tail -2
export MAX_JOBS=16
time python3 -m pip wheel -q --no-deps --no-build-isolation -w "$OUT" "$carry"/fairseq_fixed-0.12.3.1.tar.gz 2>&1 | tail -3
ls -la "$OUT"
