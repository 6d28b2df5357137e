# Shared helpers for the shell recipes (sourced, not run).
#   PYTHON     the Python with fairseq and this project (default: python on PATH; the Makefile puts .venv/bin first)
#   NNODES, NODE_RANK, MASTER_ADDR, MASTER_PORT   multi-node torchrun settings (default: one node)

RECIPES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$RECIPES_DIR/.." && pwd)"
PYTHON="${PYTHON:-python}"
export PYTHONPATH="$REPO_DIR${PYTHONPATH:+:$PYTHONPATH}"

die() { echo "error: $*" >&2; exit 2; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

user_dir() { "$PYTHON" -m fairseq_plugins; }

gpu_count() {
    "$PYTHON" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0
}

# resolve_data PATH: prints the fairseq DATA string. PATH may be a data-bin folder, a shard list a:b:c, or a
# `python -m train_scripts.binarize` output folder (its binarize.json gives the data-bin path or shards).
resolve_data() {
    if [[ -f "$1/binarize.json" ]]; then
        "$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"])' "$1/binarize.json"
    else
        echo "$1"
    fi
}

# share_args PATH: embedding sharing that the dictionaries allow (--share-all-embeddings needs a joined one)
share_args() {
    if [[ -f "$1/binarize.json" ]]; then
        "$PYTHON" -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["train_args"]))' "$1/binarize.json"
    else
        local first="${1%%:*}"
        if [[ -f "$first/dict.${SRC_LANG:-x}.txt" && -f "$first/dict.${TGT_LANG:-y}.txt" ]] &&
           ! cmp -s "$first/dict.$SRC_LANG.txt" "$first/dict.$TGT_LANG.txt"; then
            echo "--share-decoder-input-output-embed"
        else
            echo "--share-all-embeddings"
        fi
    fi
}

# launch NPROC TOOL ARGS...: run a fairseq tool on NPROC processes (GPUs, or CPU processes with --cpu) through
# torchrun and train_scripts.fairseq_launch; one process runs it directly.
launch() {
    local nproc="$1"; shift
    if [[ "$nproc" -le 1 && "${NNODES:-1}" -le 1 ]]; then
        "$PYTHON" -m train_scripts.fairseq_launch "$@"
    else
        local rdzv=(--standalone)
        if [[ "${NNODES:-1}" -gt 1 ]]; then
            rdzv=(--nnodes "$NNODES" --node-rank "${NODE_RANK:?set NODE_RANK}" \
                  --master-addr "${MASTER_ADDR:?set MASTER_ADDR}" --master-port "${MASTER_PORT:-29500}")
        fi
        "$PYTHON" -m torch.distributed.run "${rdzv[@]}" --nproc-per-node "$nproc" \
            -m train_scripts.fairseq_launch "$@"
    fi
}

# validation_log SAVE_DIR: SAVE_DIR/train.log (fairseq json log) -> SAVE_DIR/valid_log.jsonl
validation_log() {
    if [[ -f "$1/train.log" ]]; then
        "$PYTHON" -m train_scripts.train_log "$1/train.log" --output "$1/valid_log.jsonl" &&
            log "validation curve: $1/valid_log.jsonl ($(wc -l < "$1/valid_log.jsonl") validations)"
    fi
}

# parse_train_options "$@": the options shared by train_transformer_big.sh and pretrain_roberta.sh; sets DATA,
# SAVE, GPUS, TINY, CPU, FP16, DRY and EXTRA (every other option, passed on to fairseq-train).
parse_train_options() {
    DATA="" SAVE="" GPUS="" TINY=0 CPU=0 FP16=1 DRY=0 EXTRA=()
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --data) DATA="$2"; shift 2 ;;
            --save-dir) SAVE="$2"; shift 2 ;;
            --gpus|--nproc) GPUS="$2"; shift 2 ;;
            --tiny) TINY=1; shift ;;
            --cpu) CPU=1; shift ;;
            --no-fp16) FP16=0; shift ;;
            --dry-run) DRY=1; shift ;;
            -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
            --) shift; EXTRA+=("$@"); break ;;
            *) EXTRA+=("$1"); shift ;;
        esac
    done
    [[ -n "$DATA" ]] || die "--data is required"
    [[ -n "$SAVE" ]] || die "--save-dir is required"
}

# resolve_devices: from TINY, CPU and GPUS (empty = all visible GPUs) decide the process count and whether to
# run on the CPU (--tiny, --cpu, or no GPU visible); sets GPUS and CPU.
resolve_devices() {
    [[ $TINY -eq 1 ]] && CPU=1
    local visible
    visible="$(gpu_count)"
    if [[ -z "$GPUS" ]]; then
        if [[ $CPU -eq 1 || "$visible" -eq 0 ]]; then GPUS=1; else GPUS="$visible"; fi
    fi
    [[ "$visible" -eq 0 ]] && CPU=1
    return 0
}

# add_device_args: append the device options to the ARGS array (CPU: gloo for several processes; GPU: fp16)
add_device_args() {
    if [[ $CPU -eq 1 ]]; then
        ARGS+=(--cpu)
        # torch DDP refuses device_ids for CPU modules: fairseq's own all-reduce wrapper works on gloo
        [[ "$GPUS" -gt 1 ]] && ARGS+=(--distributed-backend gloo --ddp-backend legacy_ddp)
    elif [[ $FP16 -eq 1 ]]; then
        ARGS+=(--fp16)
    fi
    return 0
}
