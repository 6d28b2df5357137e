#!/usr/bin/env bash
# Here (with the package registries): fill .device-carry/ (git-ignored) with what scripts/device_check.sh installs
# on a GPU machine that has Python 3.12 and torch but no network: the dependencies as Python 3.12 wheels,
# fairseq-fixed's sdist (built there), and, for the transfer only, Multi30k and the NLTK tagger data from the
# shared data folder.  About 45 MB; the device tool carries it with `carry: [".device-carry"]`.
#   bash scripts/device_carry.sh [SHARED_DATA]      (default ../shared/data)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
shared=${1:-$here/../shared/data}
carry=$here/.device-carry
py=${PYTHON:-$here/.venv/bin/python}
mkdir -p "$carry"
# binary wheels for CPython 3.12 on x86-64 Linux, each package alone (no torch: the machine has its own)
"$py" -m pip download -q --disable-pip-version-check --only-binary=:all: --no-deps -d "$carry" \
    --python-version 3.12 --implementation cp --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_28_x86_64 --platform any \
    "hydra-core==1.3.2" "omegaconf==2.3.0" PyYAML bitarray sacrebleu portalocker tabulate colorama lxml regex \
    sentencepiece sacremoses click joblib lemminflect nltk HanTa submitit cloudpickle tensorboardX cffi pycparser \
    tqdm scikit-learn scipy threadpoolctl matplotlib contourpy cycler fonttools kiwisolver pillow pyparsing \
    python-dateutil six 2>&1 | { grep -v "is ignored" || true; }
# hydra's antlr runtime and fairseq-fixed exist only as sdists: antlr's is pure Python (built into a wheel here),
# fairseq-fixed's is built on the machine (its C++ extensions need that Python and torch)
"$py" -m pip wheel -q --disable-pip-version-check --no-deps -w "$carry" "antlr4-python3-runtime==4.9.3" 2>&1 \
    | { grep -v "is ignored" || true; }
"$py" -m pip download -q --disable-pip-version-check --no-deps --no-binary=:all: --no-build-isolation -d "$carry" \
    "fairseq-fixed==0.12.3.1" 2>&1 | { grep -v "is ignored" || true; }
rm -rf "$carry/multi30k" "$carry/nltk_data" "$carry/superbizarre" "$carry/flota_arxiv"
cp -r "$shared/multi30k" "$carry/multi30k"
cp -r "$shared/superbizarre" "$carry/superbizarre"     # the pretraining check (device_check.sh UPDATES pretraining)
cp -r "$shared/flota_arxiv" "$carry/flota_arxiv"
cp -r "$shared/nltk_data" "$carry/nltk_data"
du -sh "$carry"
