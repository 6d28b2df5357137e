#!/usr/bin/env bash
# RoBERTa-base masked-LM pretraining (the space-as-token paper's Table 9 setting).
#
#   python -m train_scripts.binarize --lm --scheme spaces --data raw_text/ --src en --out work/lm  # train.en, valid.en
#   bash train_scripts/pretrain_roberta.sh --data work/lm --save-dir ckpt/lm [--gpus 8] [--tiny] [--cpu] \
#        [--no-fp16] [--dry-run] [any fairseq-train option ...]
#
# Defaults: roberta_base, 512 tokens per sample (complete sentences packed), Adam eps 1e-6 betas (0.9, 0.98),
# lr 5e-4 with 10,000 linear warm-up updates then polynomial (linear) decay over --total-num-update 100000,
# dropout and attention dropout 0.1, weight decay 0.01, 16 sequences per GPU x update-freq 16, fp16 on GPU.
# (The paper lowered the lr to 1e-4 by hand when the training loss rose; fairseq has no such schedule: restart
# with --restore-file checkpoint_last.pt --lr 1e-4 --reset-lr-scheduler if you need it.)
# --tiny: CPU preset, a 1-layer 32-dim encoder, 64 tokens per sample, 10 updates.
# Every other option goes to fairseq-train after the defaults and overrides them.  Writes SAVE/train.log and
# SAVE/valid_log.jsonl like train_transformer_big.sh.
set -euo pipefail
source "$(dirname "$0")/common.sh"

parse_train_options "$@"
DATA_PATH="$(resolve_data "$DATA")"
[[ -f "${DATA_PATH%%:*}/dict.txt" ]] || die "no dict.txt in ${DATA_PATH%%:*} (binarize with --lm)"
resolve_devices
mkdir -p "$SAVE"

ARGS=("$DATA_PATH" --user-dir "$(user_dir)" --task masked_lm --criterion masked_lm --sample-break-mode complete
      --optimizer adam --adam-betas "(0.9, 0.98)" --adam-eps 1e-06 --clip-norm 0.0
      --lr-scheduler polynomial_decay --lr 0.0005 --dropout 0.1 --attention-dropout 0.1 --weight-decay 0.01
      --skip-invalid-size-inputs-valid-test --save-dir "$SAVE" --log-format json --log-file "$SAVE/train.log")
if [[ $TINY -eq 1 ]]; then
    ARGS+=(--arch roberta_base --encoder-layers 1 --encoder-embed-dim 32 --encoder-ffn-embed-dim 64
           --encoder-attention-heads 2 --tokens-per-sample 64 --max-positions 64 --batch-size 8 --update-freq 1
           --warmup-updates 2 --total-num-update 10 --max-update 10 --validate-interval-updates 5
           --log-interval 2 --num-workers 0 --seed 1)
else
    ARGS+=(--arch roberta_base --tokens-per-sample 512 --batch-size 16 --update-freq 16 --warmup-updates 10000
           --total-num-update 100000 --max-update 100000 --log-interval 100)
fi
add_device_args
ARGS+=("${EXTRA[@]}")

if [[ $DRY -eq 1 ]]; then
    printf '%q ' launch "$GPUS" fairseq-train "${ARGS[@]}"; echo
    exit 0
fi
log "pretraining on $GPUS process(es): $DATA_PATH -> $SAVE"
status=0
launch "$GPUS" fairseq-train "${ARGS[@]}" || status=$?
validation_log "$SAVE" || true
exit $status
