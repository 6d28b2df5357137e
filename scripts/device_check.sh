#!/usr/bin/env bash
# A real GPU run of the recipes, on a GPU machine when one is available (not part of the tests): installs from
# carried wheels (.device-carry, filled by scripts/device_carry.sh: Python 3.12 wheels, fairseq-fixed's sdist,
# Multi30k and NLTK data copied there for the transfer only), then binarize -> train_transformer_big.sh on 1 GPU
# (fp16) -> average -> evaluate on the full Multi30k En-De, and a RoBERTa pretraining smoke run with --mask-whole-words.
# Usage on the device: bash scripts/device_check.sh UPDATES [demo]   (logs and scores under $OUT); with "demo",
# instead: the comparison pipeline's --preset gpu on two rows (Unigram, BITE+Unigram), shortened to UPDATES; with
# "pretraining", instead: the pretraining part's --lm-preset gpu reduced to a first measurement that fits 10 minutes
# on one GPU (the Unigram row pretrained for UPDATES updates on the in-domain ArXiv titles, the probe, 3 fine-tuning
# seeds at 1,000 and 8,000 labelled words for 3 epochs, pretrained and from random weights, the pseudo-perplexity,
# no FLOTA table) and the hub's fill_mask on the pretrained model.
set -euo pipefail
trap 'echo "device_check failed at line $LINENO" >&2' ERR
updates=${1:-1500}
every=$(( updates / 4 ))   # four update checkpoints, the last three averaged
carry=.device-carry
t0=$(date +%s)
python3 -m pip install -q --no-index --find-links "$carry" --no-deps "$carry"/*.whl >/dev/null 2>&1
python3 -c "import fairseq" 2>/dev/null || env -u CUDA_HOME MAX_JOBS=16 python3 -m pip install -q --no-deps \
    --no-build-isolation "$carry"/fairseq_fixed-0.12.3.1.tar.gz > "$OUT/fairseq-build.log" 2>&1
# the project itself runs from the checkout (PYTHONPATH), as the Makefile does
echo "install: $(( $(date +%s) - t0 )) s"; python3 -c "import torch, fairseq; print(torch.__version__, fairseq.__version__, torch.cuda.get_device_name(0))"
export NLTK_DATA=$PWD/$carry/nltk_data PYTHON=python3 PYTHONPATH=$PWD
if [[ "${2:-}" == demo ]]; then
  python3 -m train_scripts.demo.main --part translation --preset gpu --data "$carry/multi30k" --output work-gpu/demo \
      --schemes unigram bite_unigram --max-update "$updates" --valid-every 500 --warmup 1000 --workers 8 \
      --threads 8 > "$OUT/demo.log" 2>&1 || { tail -30 "$OUT/demo.log"; exit 1; }
  cp work-gpu/demo/REPORT.md work-gpu/demo/results.json "$OUT/"
  grep -E "^\| (Unigram|BITE)" work-gpu/demo/REPORT.md | head -8
  echo "total: $(( $(date +%s) - t0 )) s"
  exit 0
fi
if [[ "${2:-}" == pretraining ]]; then
  python3 -m train_scripts.demo.main --part pretraining --lm-preset gpu --output work-gpu/lm --lm-rows unigram --lm-corpus arxiv \
      --lm-max-update "$updates" --lm-ft-sizes 1000 8000 --lm-ft-rows 8000 --lm-ft-epochs 3 --lm-seeds 3 \
      --lm-pppl-lines 600 --lm-flota-set none --lm-superbizarre "$carry/superbizarre" \
      --lm-flota-data "$carry/flota_arxiv" > "$OUT/pretraining.log" 2>&1 || { tail -30 "$OUT/pretraining.log"; exit 1; }
  cp work-gpu/lm/pretraining/REPORT.md work-gpu/lm/pretraining/results.json "$OUT/"
  python3 -c 'import sys; from train_scripts.hub import load_roberta
m = load_roberta(sys.argv[1], sys.argv[2]).eval()
print(m.fill_mask("quantum <mask> theory", topk=5))' work-gpu/lm/pretraining/rows/unigram/lm \
      work-gpu/lm/pretraining/rows/unigram/checkpoints/checkpoint_last.pt | tee "$OUT/fill_mask.txt"
  echo "total: $(( $(date +%s) - t0 )) s"
  exit 0
fi
raw=$PWD/work-gpu/raw; mkdir -p "$raw"
for l in en de; do
  zcat "$carry/multi30k/train.$l.gz" > "$raw/train.$l"; zcat "$carry/multi30k/val.$l.gz" > "$raw/valid.$l"
  zcat "$carry/multi30k/test_2016_flickr.$l.gz" > "$raw/test.$l"
done
t=$(date +%s)
python3 -m train_scripts.binarize --scheme spaces --data "$raw" --out work-gpu/spaces --vocab-size 8000 --workers 8
echo "binarize: $(( $(date +%s) - t )) s"; t=$(date +%s)
bash train_scripts/train_transformer_big.sh --data work-gpu/spaces --save-dir work-gpu/ckpt --gpus 1 --dry-run \
    > "$OUT/transformer-big-dry-run.txt"
bash train_scripts/train_transformer_big.sh --data work-gpu/spaces --save-dir work-gpu/ckpt --gpus 1 \
    --arch transformer --encoder-layers 3 --decoder-layers 3 --dropout 0.3 --max-tokens 8192 --update-freq 1 \
    --max-update "$updates" --lr 0.001 --warmup-updates $(( updates / 3 )) --validate-interval-updates $every \
    --save-interval-updates $every --keep-interval-updates 3 --no-epoch-checkpoints --patience -1 \
    --log-interval 100 --num-workers 2 > "$OUT/train.log" 2>&1 || { tail -30 "$OUT/train.log"; exit 1; }
echo "train ($updates updates): $(( $(date +%s) - t )) s"; grep -o '"train_wps": "[0-9.]*"' "$OUT/train.log" | tail -1
cp work-gpu/ckpt/valid_log.jsonl "$OUT/" || true
python3 -m train_scripts.average_checkpoints --inputs work-gpu/ckpt --num-update-checkpoints 3 --output work-gpu/avg.pt
python3 -m train_scripts.evaluate --data work-gpu/spaces --checkpoint work-gpu/avg.pt --fp16 --out "$OUT/eval" \
    | tee "$OUT/scores.txt"
echo "total: $(( $(date +%s) - t0 )) s"
