#!/usr/bin/env bash
# Idempotent set-up of the project virtualenv (.venv by default).
# - torch==2.13.0 (CPU wheel) unless a torch is already importable in the venv's python
# - fairseq-fixed==0.12.3.1 built once, --no-deps --no-build-isolation, without torchaudio
# - the field's packages, and this project in editable mode (FLOTA's search compiled with Cython when cc exists)
# - NLTK tagger data: downloader first, ../shared/data/nltk_data as fallback (reported)
# - SLURM and munge (Debian's slurm-wlm, munge) for the tests against a real scheduler (tests/test_slurm.py,
#   scripts/slurm_cluster.sh), where this runs as root with apt-get; elsewhere those tests skip and say why
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
VENV=${VENV:-$here/.venv}
PY=${PYTHON:-python3}
stamp=$VENV/.installed-v5   # v5: the compiled modules moved with preprocess/schemes, preprocess/tagging

if [ ! -x "$VENV/bin/python" ]; then
  echo "[install] creating virtualenv $VENV"
  # --system-site-packages lets an already installed torch (e.g. a CUDA build) be reused
  $PY -m venv --system-site-packages "$VENV"
fi
# SLURM + munge: only as root with apt-get, only when missing (a quick check when present)
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  if ! command -v sbatch >/dev/null || [ ! -x /usr/sbin/slurmctld ] || [ ! -x /usr/sbin/slurmd ] ||
     [ ! -x /usr/sbin/munged ]; then
    echo "[install] SLURM and munge (apt-get install slurm-wlm munge)"
    apt_slurm() { DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null; }
    if ! apt_slurm && ! { apt-get update -q >/dev/null && apt_slurm; }; then
      echo "[install] SLURM: apt-get install slurm-wlm munge failed;" \
           "the SLURM tests will skip (or fail under MORPHTOK_REQUIRE_SLURM=1)" >&2
    fi
  fi
fi

vpy=$VENV/bin/python
pipi() {
  # the machine's pip config lists extra local indexes that pip warns about for every package: hide that noise
  "$vpy" -m pip install --disable-pip-version-check -q "$@" 2>&1 | { grep -v "is ignored: it is neither" || true; }
  return "${PIPESTATUS[0]}"
}

if [ ! -f "$stamp" ]; then
  if "$vpy" -c "import torch" 2>/dev/null; then
    echo "[install] torch already importable: $("$vpy" -c 'import torch; print(torch.__version__)')"
  else
    echo "[install] torch==2.13.0"
    pipi torch==2.13.0
  fi
  echo "[install] fairseq dependencies and field packages"
  pipi cffi cython "hydra-core==1.3.2" "omegaconf==2.3.0" numpy regex sacrebleu tqdm bitarray \
       scikit-learn scipy packaging sentencepiece sacremoses lemminflect nltk HanTa matplotlib pytest ruff \
       submitit tensorboardX hypothesis pytest-xdist mkdocs mwparserfromhell blingfire \
       setuptools wheel
  if ! "$vpy" -c "import fairseq" 2>/dev/null; then
    echo "[install] building fairseq-fixed==0.12.3.1 (about 3 minutes, once)"
    pipi --no-deps --no-build-isolation "fairseq-fixed==0.12.3.1"
  fi
  # builds of the compiled loops at their places before preprocess/ was split (now under schemes/ and tagging/)
  rm -f "$here"/preprocess/_flota_search*.so "$here"/preprocess/_hanta_fast*.so "$here"/preprocess/_perceptron_fast*.so
  pipi --no-deps --no-build-isolation -e "$here"
  touch "$stamp"
else
  echo "[install] $VENV is set up (remove $stamp to reinstall)"
fi
# property-based tests (tests/test_fuzz.py); also into venvs set up before it was needed
"$vpy" -c "import hypothesis" 2>/dev/null || { echo "[install] hypothesis (tests)"; pipi hypothesis; }
# the fast loop's two processes (make test-fast, make check: pytest -n 2); also into venvs set up before it was needed
"$vpy" -c "import xdist" 2>/dev/null || { echo "[install] pytest-xdist (make test-fast)"; pipi pytest-xdist; }
# morphtok-prepare-wikipedia (wikitext -> text, sentence splitting); also into venvs set up before it was needed
"$vpy" -c "import mwparserfromhell, blingfire" 2>/dev/null ||
  { echo "[install] mwparserfromhell blingfire (morphtok-prepare-wikipedia)"; pipi mwparserfromhell blingfire; }

# FLOTA's search, the exact HanTa tagging and NLTK's perceptron loop compiled with Cython (setup.py's COMPILED:
# preprocess/_flota_search, _hanta_fast, _perceptron_fast): rebuilt when one of their sources changed since the
# last build; without a C compiler they stay plain Python (same output, slower)
search_state() {
  (cd "$here" && "$vpy" -W ignore -c 'from preprocess import flota_search as f, hanta_fast as h, perceptron_fast as p
print("compiled" if f.search_class() is not f.FlotaSearch and h.fast_class() is not h.FastHanta
      and p.batch_kernel() is not None else "python")')
}
state=$(search_state)
if [ "$state" = python ] && command -v cc >/dev/null; then
  echo "[install] compiling FLOTA's search, HanTa tagging and NLTK's perceptron loop (setup.py COMPILED; Cython)"
  pipi --no-deps --no-build-isolation -e "$here"
  state=$(search_state)
fi
echo "[install] FLOTA search, HanTa tagging, perceptron loop: $state"

# extra "hf" (setup.py): morphtok-export and morphtok-metrics-intrinsic; none of these packages needs torch
if ! "$vpy" -c "import tokenizers, transformers, tokenization_scorer, google.protobuf" 2>/dev/null; then
  echo "[install] hf extra: tokenizers transformers protobuf tokenization-scorer"
  pipi tokenizers transformers protobuf tokenization-scorer
fi

# NLTK data (averaged perceptron tagger + universal tagset)
nltk_dir=$VENV/nltk_data
if "$vpy" - "$nltk_dir" <<'PYEOF' 2>/dev/null
import sys, nltk
nltk.data.path[:] = [sys.argv[1]]  # only the venv's own copy counts here, not NLTK_DATA
nltk.data.find("taggers/averaged_perceptron_tagger_eng/")
nltk.data.find("taggers/universal_tagset/")
PYEOF
then
  echo "[install] NLTK data: present in $nltk_dir"
elif "$vpy" -m nltk.downloader -q -d "$nltk_dir" averaged_perceptron_tagger_eng universal_tagset >/dev/null 2>&1 \
     && [ -d "$nltk_dir/taggers/averaged_perceptron_tagger_eng" ]; then
  echo "[install] NLTK data: downloaded with nltk.downloader into $nltk_dir"
elif [ -d "$here/../shared/data/nltk_data/taggers/averaged_perceptron_tagger_eng" ]; then
  echo "[install] NLTK data: downloader unavailable; using ../shared/data/nltk_data (set via NLTK_DATA by the Makefile)"
else
  echo "[install] NLTK data: NOT available (downloader failed and ../shared/data/nltk_data missing); BITE's nltk tagger will fail, use tagger=hanta" >&2
fi
