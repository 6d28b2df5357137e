#!/usr/bin/env bash
# RoBERTa-base masked-LM pretraining (the space-as-token paper's Table 9 setting).
#
#   python -m train_scripts.binarize --lm --scheme spaces --data raw_text/ --src en --out work/lm \
#        --vocab-size 16000 [--spaces drop] [--shards N]                   # raw_text/{train,valid}.en
#   bash train_scripts/pretrain_roberta.sh --data work/lm --save-dir ckpt/lm [--gpus 8] [--tiny] [--cpu] \
#        [--no-fp16] [--cpu-bf16] [--dry-run] [--mask-whole-words] [any fairseq-train option ...]
#   NNODES=2 NODE_RANK=0|1 MASTER_ADDR=node0 bash train_scripts/pretrain_roberta.sh ... --gpus 8   # each node
#
# Table 9 and the authors' released pretraining scripts (edwardgowsmith/improved-tokenisation-methods,
# extrinsic-evaluation/fairseq-pretrain/pretrain_wikipedia_*.sh) agree on every value: roberta_base, fp16, Adam eps
# 1e-6 betas (0.9, 0.98), no gradient clipping, 512 tokens per sample (complete sentences packed), 2,048 sequences
# per update (theirs: 16 per GPU x update-freq 16 on the paper's 8 GPUs), dropout and attention dropout 0.1, weight
# decay 0.01, lr 5e-4 after a linear warm-up of 10,000 updates. The budget: 100,000 updates by default (Table 6's
# models). The released script runs 30 epochs (--max-epoch 30: Table 7's models, 106,485 to 179,909 updates) and
# its 100,000-update models are the checkpoints it saved on the way (--save-interval-updates 2000; the fine-tuning
# scripts restore checkpoint_E_100000.pt). Nothing before update 100,000 depends on where training stops, so the
# default stops there: the same model for 56-94 % of the compute. Table 7's budget: --max-epoch 30 --max-update 0;
# both models from one run as in the release: add --save-interval-updates 100000 (one checkpoint_E_100000.pt rather
# than the release's 53 to 90 checkpoints of model and optimizer state, one every 2,000 updates). The batch is 16
# sequences per GPU x update-freq 128 / (NNODES x --gpus) = 2,048 on any power-of-two GPU count; other counts get
# the nearest batch, printed as a warning; your own --batch-size (a per-GPU cap) or --update-freq is honoured, see
# train_transformer_big.sh.
# Learning rate: linear warm-up from 0 to 5e-4 over 10,000 updates, then "reduce to 1e-4 upon increased training
# loss at epoch" (Table 9). The released script has a fixed lr (--lr-scheduler fixed) and its README says the lr
# was lowered by hand from 5e-4 to 1e-4 after the epoch where the *validation* loss rose (epoch 5 to 16 by model).
# Here that rule is automatic: fairseq's reduce_lr_on_plateau on the validation loss measured at the end of every
# epoch (--lr-shrink 0.2 --lr-patience 0: the first epoch whose loss does not improve on the best so far multiplies
# the lr by 0.2, 5e-4 -> 1e-4) and --lr-floor 1e-4 of this project's reduce_lr_on_plateau_floor scheduler, so it is
# reduced once, never below 1e-4. To follow the paper's wording (the training loss) by hand instead, train with
# --lr-scheduler fixed --warmup-updates 10000 and restart from checkpoint_last.pt with --lr 1e-4
# --reset-lr-scheduler when train_loss rises in SAVE/train.log. Otherwise unlike the released script: the task is
# masked_lm_words (fairseq's masked_lm plus word starts for --mask-whole-words and the "no spaces" variant, below),
# fairseq 0.12 instead of 0.10.2, and a log line every 100 updates instead of 10 (logging only).
# Data: binarize.json gives the data-bin (or its shards, trained round-robin one per epoch), the --bpe/--tokenizer
# options of the scheme (so --mask-whole-words finds word boundaries; without them it refuses to start) and
# whether space tokens are dropped: the "no spaces" variant is binarised with the space tokens kept and the task
# masked_lm_words (fairseq_plugins/masked_lm_words.py) takes the word boundaries, then drops them.
# --global-batch N: sequences per update (default: the paper's 2,048, or the preset's), kept on any GPU count
#   like the paper's: --batch-size caps the sequences per GPU and --update-freq makes up the rest.
# --small: between --tiny and the paper's model, for a CPU or one GPU: a 2-layer, 128-dimensional encoder (FFN
#   512, 2 heads), 128 tokens per sample, 32 sequences per update, 1,500 updates with 150 of warm-up (the model
#   size of make demo's pretraining part; any of it can be overridden with fairseq-train options).
# --tiny: CPU preset, a 1-layer 32-dim encoder, 64 tokens per sample, 10 updates.
# --cpu-bf16: on the CPU, forward passes and losses in bfloat16 (float32 weights and optimizer; float32 with one
#   line where the CPU has no native bfloat16; refused on GPUs, which train with fp16): docs/recipes.md.
# Every other option goes to fairseq-train after the defaults and overrides them.  Writes SAVE/train.log and
# SAVE/valid_log.jsonl like train_transformer_big.sh.
set -euo pipefail
source "$(dirname "$0")/common.sh"

PRESET=paper GLOBAL=""
REST=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --small) PRESET=small; shift ;;
        --global-batch) GLOBAL="$2"; shift 2 ;;
        --) REST+=("$@"); break ;;
        *) REST+=("$1"); shift ;;
    esac
done
parse_train_options ${REST[@]+"${REST[@]}"}
[[ $TINY -eq 0 ]] || PRESET=tiny
[[ -z "$GLOBAL" || "$GLOBAL" =~ ^[1-9][0-9]*$ ]] || die "--global-batch must be a positive number, not '$GLOBAL'"
DATA_PATH="$(resolve_data "$DATA")"
[[ -f "${DATA_PATH%%:*}/dict.txt" ]] || die "no dict.txt in ${DATA_PATH%%:*} (binarize with --lm)"
resolve_devices

# the scheme's --bpe/--tokenizer options and the space-token mode, as binarize --lm recorded them
LM_ARGS=()
if [[ -f "$DATA/binarize.json" ]]; then
    mapfile -t LM_ARGS < <("$PYTHON" - "$DATA/binarize.json" <<'PY'
import shlex, sys
from train_scripts.binarize import read_record
info = read_record(sys.argv[1])
args = info.get("fairseq_args") or []
args = shlex.split(args) if isinstance(args, str) else list(args)
if info.get("spaces") == "drop":
    args.append("--drop-space-tokens")
if args:
    print("\n".join(args))
PY
)
fi

ALL=" ${LM_ARGS[*]-} ${EXTRA[*]-} "
if [[ "$ALL" == *" --mask-whole-words "* && "$ALL" != *" --bpe "* ]]; then
    die "--mask-whole-words needs the scheme's --bpe options: give --data a binarize --lm folder (its binarize.json has them) or pass --bpe ... yourself"
fi

# the paper's schedule (above); an --lr-scheduler of your own replaces it together with its options, which another
# scheduler would refuse (e.g. --lr-scheduler polynomial_decay: linear decay to 0 at --max-update, as fairseq's
# RoBERTa recipe)
SCHEDULE=(--lr-scheduler reduce_lr_on_plateau_floor --warmup-init-lr 0 --lr-shrink 0.2 --lr-patience 0 --lr-floor 0.0001)
[[ "$ALL" == *" --lr-scheduler "* ]] && SCHEDULE=()
ARGS=("$DATA_PATH" --user-dir "$(user_dir)" --task masked_lm_words --criterion masked_lm
      --sample-break-mode complete --optimizer adam --adam-betas "(0.9, 0.98)" --adam-eps 1e-06 --clip-norm 0.0
      ${SCHEDULE[@]+"${SCHEDULE[@]}"} --lr 0.0005 --dropout 0.1 --attention-dropout 0.1 --weight-decay 0.01
      --skip-invalid-size-inputs-valid-test --save-dir "$SAVE" --log-format json --log-file "$SAVE/train.log"
      ${LM_ARGS[@]+"${LM_ARGS[@]}"})
if [[ $PRESET == tiny ]]; then
    plan_batch sequences "${GLOBAL:-$((8 * ${NNODES:-1} * GPUS))}" --batch-size 8 "batch (tiny preset)"
    ARGS+=(--arch roberta_base --encoder-layers 1 --encoder-embed-dim 32 --encoder-ffn-embed-dim 64
           --encoder-attention-heads 2 --tokens-per-sample 64 --max-positions 64 --warmup-updates 2
           --max-update 10 --validate-interval-updates 5 --log-interval 2 --num-workers 0 --seed 1)
elif [[ $PRESET == small ]]; then
    plan_batch sequences "${GLOBAL:-32}" --batch-size 32 "batch (small preset: sequences of 128 tokens)"
    ARGS+=(--arch roberta_base --encoder-layers 2 --encoder-embed-dim 128 --encoder-ffn-embed-dim 512
           --encoder-attention-heads 2 --tokens-per-sample 128 --max-positions 128 --warmup-updates 150
           --max-update 1500 --validate-interval-updates 250 --save-interval-updates 250 --keep-interval-updates 1
           --no-epoch-checkpoints --log-interval 50 --num-workers 0)
else
    if [[ -n "$GLOBAL" ]]; then
        plan_batch sequences "$GLOBAL" --batch-size 16 "batch (--global-batch; the paper's Table 9: 2,048 sequences)"
    else
        plan_batch sequences 2048 --batch-size 16 "batch (paper, Table 9: 2,048 sequences of 512 tokens)"
    fi
    ARGS+=(--arch roberta_base --tokens-per-sample 512 --warmup-updates 10000 --max-update 100000
           --log-interval 100)
fi
status=0
run_training pretraining || status=$?
exit $status
