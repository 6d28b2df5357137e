#!/usr/bin/env bash
# Transformer-big translation (Vaswani et al. 2017; the BITE paper's WMT'14 En-De setting, appendix B.3, which
# uses Ott et al. 2018's fairseq hyperparameters).
#
#   bash train_scripts/train_transformer_big.sh --data work/wmt --save-dir ckpt/wmt [--gpus 8] \
#        [--tiny] [--cpu] [--no-fp16] [--cpu-bf16] [--dry-run] [any fairseq-train option ...]
#   NNODES=2 NODE_RANK=0|1 MASTER_ADDR=node0 bash train_scripts/train_transformer_big.sh ... --gpus 8  # each node
#
# --data       a `python -m train_scripts.binarize` output folder (reads binarize.json: data-bin or shards,
#              and whether the dictionary is joined), a data-bin folder, or shards a:b:c
# --save-dir   checkpoints, train.log (fairseq json log) and valid_log.jsonl (validation loss per update)
# --gpus N     processes per node: N GPUs via torchrun (default: all visible GPUs; 1 process without GPUs);
#              with --cpu, N CPU processes on the gloo backend.  NNODES nodes run NNODES x N processes.
# --tiny       CPU preset: a 1-layer 32-dim transformer, 30 updates, validation and an update checkpoint
#              (checkpoint_E_U.pt, all kept) every 10 updates, so that averaging the last N update checkpoints
#              (average_checkpoints --num-update-checkpoints 3) works after it
# --dry-run    print the effective batch and the full launch command instead of running it (no GPU needed)
# --cpu-bf16   on the CPU, forward passes and losses in bfloat16 (float32 weights and optimizer; float32 with
#              one line where the CPU has no native bfloat16; refused on GPUs): docs/recipes.md
#
# The paper's global batch is kept on any number of GPUs: 3,584 tokens x 8 GPUs x update-freq 16 = 458,752
# tokens per update, so --update-freq is 128 / (NNODES x --gpus) (1 GPU: 128; 16 GPUs: 8).  A process count
# that does not divide it gets the nearest batch (a slightly lower --max-tokens), printed as a warning.  Your
# own --max-tokens (e.g. 7168 on 80 GB GPUs) is a per-GPU cap: --update-freq is recomputed to keep 458,752;
# your own --update-freq is honoured and the resulting effective batch printed.
# Paper defaults: lr 0.001, 4,000 warm-up updates (inverse square root), dropout 0.3, label smoothing 0.1,
# 45,000 updates; the validation loss is measured every epoch, training stops early after --patience (default 5)
# epochs without improvement, and the last patience + 10 epoch checkpoints are kept, so that "the selected
# checkpoint with the previous nine" can always be averaged afterwards:
#   python -m train_scripts.average_checkpoints --inputs SAVE --best-and-previous 9 --output SAVE/average.pt
# Every other option goes to fairseq-train after the defaults and so overrides them (e.g. --lr 0.0007,
# --max-update 300000, --arch transformer_wmt_en_de).
set -euo pipefail
source "$(dirname "$0")/common.sh"

parse_train_options "$@"
DATA_PATH="$(resolve_data "$DATA")"
[[ -d "${DATA_PATH%%:*}" ]] || die "no data-bin folder at ${DATA_PATH%%:*} (run python -m train_scripts.binarize first)"

resolve_devices
take_option --patience PATIENCE
PATIENCE="${PATIENCE:-5}"
take_option --keep-last-epochs KEEP
KEEP="${KEEP:-$((PATIENCE + 10))}"
if [[ "$PATIENCE" -gt 0 && "$KEEP" -lt $((PATIENCE + 10)) ]]; then
    log "warning: --keep-last-epochs $KEEP < --patience $PATIENCE + 10: the best epoch and the nine before it may be deleted before averaging"
fi

ARGS=("$DATA_PATH" --user-dir "$(user_dir)" --task translation $(share_args "$DATA")
      --optimizer adam --adam-betas "(0.9, 0.98)" --clip-norm 0.0
      --lr-scheduler inverse_sqrt --warmup-init-lr 1e-07
      --criterion label_smoothed_cross_entropy --label-smoothing 0.1 --weight-decay 0.0
      --save-dir "$SAVE" --log-format json --log-file "$SAVE/train.log"
      --patience "$PATIENCE" --best-checkpoint-metric loss --keep-last-epochs "$KEEP")
if [[ $TINY -eq 1 ]]; then
    plan_batch tokens $((2000 * ${NNODES:-1} * GPUS)) --max-tokens 2000 "batch (tiny preset)"
    ARGS+=(--arch transformer --encoder-layers 1 --decoder-layers 1 --encoder-embed-dim 32 --decoder-embed-dim 32
           --encoder-ffn-embed-dim 64 --decoder-ffn-embed-dim 64 --encoder-attention-heads 2
           --decoder-attention-heads 2 --dropout 0.1 --lr 0.001 --warmup-updates 10 --max-update 30
           --validate-interval-updates 10 --save-interval-updates 10 --log-interval 5 --num-workers 0 --seed 1)
else
    plan_batch tokens 458752 --max-tokens 3584 "batch (paper: 3,584 tokens x 8 GPUs x 16)"
    ARGS+=(--arch transformer_vaswani_wmt_en_de_big --dropout 0.3 --lr 0.001 --warmup-updates 4000
           --max-update 45000 --log-interval 100)
fi
status=0
run_training training || status=$?
exit $status
