#!/usr/bin/env bash
# Transformer-big translation (Vaswani et al. 2017; the BITE paper's WMT'14 En-De setting, appendix B.3).
#
#   bash train_scripts/train_transformer_big.sh --data work/spaces --save-dir ckpt/spaces [--gpus 8] \
#        [--tiny] [--cpu] [--no-fp16] [--dry-run] [any fairseq-train option ...]
#
# --data       a `python -m train_scripts.binarize` output folder (reads binarize.json: data-bin or shards,
#              and whether the dictionary is joined), a data-bin folder, or shards a:b:c
# --save-dir   checkpoints, train.log (fairseq json log) and valid_log.jsonl (validation loss per update)
# --gpus N     processes: N GPUs via torchrun (default: all visible GPUs; 1 process without GPUs); with --cpu,
#              N CPU processes on the gloo backend
# --tiny       CPU preset: a 1-layer 32-dim transformer, 30 updates, validation every 10 updates
# --dry-run    print the command instead of running it
# Every other option goes to fairseq-train after the defaults and so overrides them (e.g. --lr 0.0007,
# --max-update 300000, --update-freq 8, --arch transformer_wmt_en_de).  Early stopping: --patience
# validations without improvement of the validation loss (default 5).
set -euo pipefail
source "$(dirname "$0")/common.sh"

parse_train_options "$@"
DATA_PATH="$(resolve_data "$DATA")"
[[ -d "${DATA_PATH%%:*}" ]] || die "no data-bin folder at ${DATA_PATH%%:*}"

resolve_devices
mkdir -p "$SAVE"

ARGS=("$DATA_PATH" --user-dir "$(user_dir)" --task translation $(share_args "$DATA")
      --optimizer adam --adam-betas "(0.9, 0.98)" --clip-norm 0.0
      --lr-scheduler inverse_sqrt --warmup-init-lr 1e-07
      --criterion label_smoothed_cross_entropy --label-smoothing 0.1 --weight-decay 0.0
      --save-dir "$SAVE" --log-format json --log-file "$SAVE/train.log"
      --patience 5 --best-checkpoint-metric loss --keep-last-epochs 10)
if [[ $TINY -eq 1 ]]; then
    ARGS+=(--arch transformer --encoder-layers 1 --decoder-layers 1 --encoder-embed-dim 32 --decoder-embed-dim 32
           --encoder-ffn-embed-dim 64 --decoder-ffn-embed-dim 64 --encoder-attention-heads 2
           --decoder-attention-heads 2 --dropout 0.1 --lr 0.001 --warmup-updates 10 --max-tokens 2000
           --update-freq 1 --max-update 30 --validate-interval-updates 10 --log-interval 5 --num-workers 0
           --seed 1)
else
    ARGS+=(--arch transformer_vaswani_wmt_en_de_big --dropout 0.3 --lr 0.001 --warmup-updates 4000
           --max-tokens 3584 --update-freq 16 --log-interval 100)
fi
add_device_args
ARGS+=("${EXTRA[@]}")

if [[ $DRY -eq 1 ]]; then
    printf '%q ' launch "$GPUS" fairseq-train "${ARGS[@]}"; echo
    exit 0
fi
log "training on $GPUS $([[ $CPU -eq 1 ]] && echo CPU process || echo GPU)(es): $DATA_PATH -> $SAVE"
status=0
launch "$GPUS" fairseq-train "${ARGS[@]}" || status=$?
validation_log "$SAVE" || true
exit $status
