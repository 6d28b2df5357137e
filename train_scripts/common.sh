# Shared helpers for the shell recipes (sourced, not run).
#   PYTHON     the Python with fairseq and this project (default: python on PATH; the Makefile puts .venv/bin first)
#   NNODES, NODE_RANK, MASTER_ADDR, MASTER_PORT   multi-node torchrun settings (default: one node); --gpus is
#              the number of processes per node, so a run has NNODES x --gpus processes

# A clean stop: SIGTERM, SIGINT or SIGHUP to a recipe stops every process it started.  The recipe runs again as
# the leader of a process group of its own (setsid), and this first shell only waits for it and passes a signal on
# to the whole group (fairseq-train, torchrun and its ranks, data-loader workers, downloads), waits for the group
# to be gone (fairseq finishes a checkpoint it is writing, train_scripts/fairseq_launch.py), SIGKILLs what is left
# after MORPHTOK_STOP_GRACE seconds (default 20) and exits with 128 + the signal's number.  Without setsid (not
# Linux) the recipe runs directly.
if [[ -z "${MORPHTOK_RECIPE_GROUP:-}" ]] && command -v setsid > /dev/null; then
    export MORPHTOK_RECIPE_GROUP=$$
    setsid "$BASH" "$0" "$@" <&0 &
    _recipe_pid=$!
    _recipe_signal=0
    _recipe_stop() {
        _recipe_signal=$1
        kill -TERM -- "-$_recipe_pid" 2> /dev/null || true
    }
    trap '_recipe_stop 129' HUP
    trap '_recipe_stop 130' INT
    trap '_recipe_stop 143' TERM
    _recipe_status=0
    while true; do
        wait "$_recipe_pid" && _recipe_status=0 || _recipe_status=$?
        kill -0 "$_recipe_pid" 2> /dev/null || break   # wait returned for a signal: the recipe still stops
    done
    _recipe_wait=$(( ${MORPHTOK_STOP_GRACE:-20} * 10 ))
    while [[ $_recipe_wait -gt 0 ]] && kill -0 -- "-$_recipe_pid" 2> /dev/null; do
        sleep 0.1; _recipe_wait=$((_recipe_wait - 1))
    done
    kill -KILL -- "-$_recipe_pid" 2> /dev/null || true
    [[ $_recipe_signal -eq 0 ]] || exit "$_recipe_signal"
    exit "$_recipe_status"
fi

RECIPES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$RECIPES_DIR/.." && pwd)"
PYTHON="${PYTHON:-python}"
export PYTHONPATH="$REPO_DIR${PYTHONPATH:+:$PYTHONPATH}"

die() { echo "error: $*" >&2; exit 2; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# the --user-dir of this project's fairseq plugins (`python -m fairseq_plugins` prints the same, but imports fairseq)
user_dir() { echo "$REPO_DIR/fairseq_plugins"; }

gpu_count() {
    "$PYTHON" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0
}

# binarize_field PATH KEY: a field of the binarize.json in PATH, read as train_scripts.binarize.read_record reads
# it (its paths where the folder is now, if it was moved); a list is printed space-separated
binarize_field() {
    "$PYTHON" -c 'import sys; from train_scripts.binarize import read_record
v = read_record(sys.argv[1])[sys.argv[2]]; print(" ".join(v) if isinstance(v, list) else v)' "$1" "$2"
}

# resolve_data PATH: prints the fairseq DATA string. PATH may be a data-bin folder, a shard list a:b:c, or a
# `python -m train_scripts.binarize` output folder (its binarize.json gives the data-bin path or shards).
resolve_data() {
    if [[ -f "$1/binarize.json" ]]; then
        binarize_field "$1" data
    else
        echo "$1"
    fi
}

# share_args PATH: embedding sharing that the dictionaries allow (--share-all-embeddings needs a joined one)
share_args() {
    if [[ -f "$1/binarize.json" ]]; then
        binarize_field "$1" train_args
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

# launch_command NPROC: sets LAUNCH, the command line that runs a fairseq tool on NPROC processes per node (GPUs,
# or CPU processes with --cpu) through torchrun and train_scripts.fairseq_launch; one process on one node runs it
# directly.  NNODES > 1 needs NODE_RANK and MASTER_ADDR (a dry run prints them as placeholders).
launch_command() {
    local nproc="$1" nnodes="${NNODES:-1}"
    if [[ "$nproc" -le 1 && "$nnodes" -le 1 ]]; then
        LAUNCH=("$PYTHON" -m train_scripts.fairseq_launch)
        return 0
    fi
    local rdzv=(--standalone)
    if [[ "$nnodes" -gt 1 ]]; then
        local rank="${NODE_RANK:-}" addr="${MASTER_ADDR:-}"
        if [[ -z "$rank" || -z "$addr" ]]; then
            [[ ${DRY:-0} -eq 1 ]] || die "NNODES=$nnodes needs NODE_RANK (0..$((nnodes - 1)), this node) and MASTER_ADDR (node 0's address) on every node"
            rank="${rank:-<NODE_RANK>}" addr="${addr:-<MASTER_ADDR>}"
        fi
        rdzv=(--nnodes "$nnodes" --node-rank "$rank" --master-addr "$addr" --master-port "${MASTER_PORT:-29500}")
    fi
    LAUNCH=("$PYTHON" -m torch.distributed.run "${rdzv[@]}" --nproc-per-node "$nproc" -m train_scripts.fairseq_launch)
}

# launch NPROC TOOL ARGS...: run (or with DRY=1 print) the fairseq tool on NPROC processes per node, with the
# environment variables of LAUNCH_ENV (NAME=VALUE ..., set by add_device_args) in its environment only
launch() {
    local nproc="$1"; shift
    launch_command "$nproc"
    [[ ${#LAUNCH_ENV[@]} -eq 0 ]] || LAUNCH=(env "${LAUNCH_ENV[@]}" "${LAUNCH[@]}")
    if [[ ${DRY:-0} -eq 1 ]]; then
        printf '%q ' "${LAUNCH[@]}" "$@"; echo
        return 0
    fi
    "${LAUNCH[@]}" "$@"
}

# take_option NAME VAR: remove every `NAME VALUE` / `NAME=VALUE` from EXTRA and set VAR to the last VALUE (fairseq
# also lets the last one win); VAR is empty when NAME is absent.
take_option() {
    local name="$1" var="$2" kept=() i=0 arg
    printf -v "$var" '%s' ""
    while [[ $i -lt ${#EXTRA[@]} ]]; do
        arg="${EXTRA[$i]}"
        if [[ "$arg" == "$name" ]]; then
            [[ $((i + 1)) -lt ${#EXTRA[@]} ]] || die "$name needs a value"
            printf -v "$var" '%s' "${EXTRA[$((i + 1))]}"; i=$((i + 2))
        elif [[ "$arg" == "$name="* ]]; then
            printf -v "$var" '%s' "${arg#*=}"; i=$((i + 1))
        else
            kept+=("$arg"); i=$((i + 1))
        fi
    done
    EXTRA=(${kept[@]+"${kept[@]}"})
}

# plan_batch UNIT GLOBAL CAP_OPTION DEFAULT_CAP NAME: the per-process batch (CAP_OPTION: --max-tokens or
# --batch-size, at most DEFAULT_CAP or the user's value) and --update-freq that give the paper's GLOBAL batch on
# NNODES x GPUS processes (train_scripts.fairseq_launch plan_batch: exact when it divides, else the nearest).
# The user's CAP_OPTION / --update-freq are taken out of EXTRA and honoured; logs the effective batch (stderr)
# and sets BATCH_ARGS and EFFECTIVE_BATCH.
plan_batch() {
    local unit="$1" global="$2" opt="$3" cap="$4" name="$5" user_cap="" user_uf="" alias_cap="" out
    take_option "$opt" user_cap
    if [[ "$opt" == "--batch-size" ]]; then
        take_option --max-sentences alias_cap
        user_cap="${user_cap:-$alias_cap}"
    fi
    take_option --update-freq user_uf
    local args=(--unit "$unit" --global "$global" --per-process "${user_cap:-$cap}"
                --processes "$(( ${NNODES:-1} * GPUS ))" --name "$name")
    [[ -n "$user_uf" ]] && args+=(--update-freq "$user_uf")
    [[ -n "$user_uf" && -n "$user_cap" ]] && args+=(--fixed-per-process)
    out="$("$PYTHON" -m train_scripts.fairseq_launch plan-batch "${args[@]}")" || exit 2
    local per uf
    read -r per uf EFFECTIVE_BATCH <<< "$out"
    BATCH_ARGS=("$opt" "$per" --update-freq "$uf")
}

# validation_log SAVE_DIR: SAVE_DIR/train.log (fairseq json log) -> SAVE_DIR/valid_log.jsonl
validation_log() {
    if [[ -f "$1/train.log" ]]; then
        "$PYTHON" -m train_scripts.train_log "$1/train.log" --output "$1/valid_log.jsonl" &&
            log "validation curve: $1/valid_log.jsonl ($(wc -l < "$1/valid_log.jsonl") validations)"
    fi
}

# parse_shared_options "$@": the options every training recipe has (train_transformer_big.sh, pretrain_roberta.sh,
# finetune_classification.sh: each parses its own first and passes the rest here); sets DATA, SAVE, GPUS, TINY,
# CPU, FP16, CPU_BF16, DRY and EXTRA (every other option, passed on to fairseq-train).  -h/--help prints the
# recipe's header.
# --cpu-bf16: on the CPU, forward passes and losses in bfloat16 (fairseq_plugins/cpu_bf16.py; float32 where the
# CPU has no native bfloat16, with one line saying so); refused for a GPU run, which has --fp16 (the default)
parse_shared_options() {
    DATA="" SAVE="" GPUS="" TINY=0 CPU=0 FP16=1 CPU_BF16=0 DRY=0 EXTRA=() LAUNCH_ENV=()
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --data) DATA="$2"; shift 2 ;;
            --save-dir) SAVE="$2"; shift 2 ;;
            --gpus|--nproc) GPUS="$2"; shift 2 ;;
            --tiny) TINY=1; shift ;;
            --cpu) CPU=1; shift ;;
            --no-fp16) FP16=0; shift ;;
            --cpu-bf16) CPU_BF16=1; shift ;;
            --dry-run) DRY=1; shift ;;
            -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
            --) shift; EXTRA+=("$@"); break ;;
            *) EXTRA+=("$1"); shift ;;
        esac
    done
}

# parse_train_options "$@": parse_shared_options for the recipes that train on a binarised folder
# (train_transformer_big.sh, pretrain_roberta.sh): --data and --save-dir are required.
parse_train_options() {
    parse_shared_options "$@"
    [[ -n "$DATA" ]] || die "--data is required"
    [[ -n "$SAVE" ]] || die "--save-dir is required"
}

# resolve_devices: from TINY, CPU and GPUS (empty = all visible GPUs) decide the process count per node and
# whether to run on the CPU (--tiny, --cpu, or no GPU visible); sets GPUS and CPU.  A dry run with --gpus N plans
# a GPU run on any machine (e.g. a login node without GPUs).
resolve_devices() {
    [[ $TINY -eq 1 ]] && CPU=1
    [[ "${NNODES:-1}" =~ ^[1-9][0-9]*$ ]] || die "NNODES must be a positive number, not '${NNODES}'"
    local visible explicit=0
    [[ -n "$GPUS" ]] && explicit=1
    [[ -z "$GPUS" || "$GPUS" =~ ^[1-9][0-9]*$ ]] || die "--gpus must be a positive number, not '$GPUS'"
    if [[ $DRY -eq 1 && $explicit -eq 1 ]]; then
        return 0
    fi
    visible="$(gpu_count)"
    if [[ -z "$GPUS" ]]; then
        if [[ $CPU -eq 1 || "$visible" -eq 0 ]]; then GPUS=1; else GPUS="$visible"; fi
    fi
    if [[ $explicit -eq 1 && $CPU -eq 0 && "$visible" -eq 0 ]]; then
        die "--gpus $GPUS asks for GPUs but CUDA sees none on this node: add --cpu to run $GPUS CPU process(es) instead"
    fi
    [[ "$visible" -eq 0 ]] && CPU=1
    if [[ $CPU -eq 0 && $DRY -eq 0 && "$GPUS" -gt "$visible" ]]; then
        die "--gpus $GPUS but only $visible GPU(s) visible on this node (--gpus counts the GPUs of one node)"
    fi
    return 0
}

# add_device_args: append the device options to the ARGS array (CPU: gloo for several processes; GPU: fp16) and
# set LAUNCH_ENV: MORPHTOK_CPU_BF16=1 with --cpu-bf16 (a CPU run only), else the recipe's fairseq-train runs
# without it whatever the caller's environment says (the option alone decides)
add_device_args() {
    unset MORPHTOK_CPU_BF16
    LAUNCH_ENV=()
    if [[ $CPU_BF16 -eq 1 ]]; then
        [[ $CPU -eq 1 ]] || die "--cpu-bf16 is for training on the CPU (--cpu, --tiny, or no GPU visible); on GPUs the recipes train with --fp16 (fairseq's --bf16 is a fairseq-train option too)"
        LAUNCH_ENV=(MORPHTOK_CPU_BF16=1)
    fi
    if [[ $CPU -eq 1 ]]; then
        ARGS+=(--cpu)
        # torch DDP refuses device_ids for CPU modules: fairseq's own all-reduce wrapper works on gloo
        [[ "$GPUS" -gt 1 ]] && ARGS+=(--distributed-backend gloo --ddp-backend legacy_ddp)
    elif [[ $FP16 -eq 1 ]]; then
        ARGS+=(--fp16)
    fi
    return 0
}

# run_training WHAT: append the batch, device and user options to ARGS, then launch fairseq-train on $GPUS
# processes per node (or print the command with --dry-run) and write the validation curve; returns its status.
run_training() {
    ARGS+=("${BATCH_ARGS[@]}")
    add_device_args
    ARGS+=(${EXTRA[@]+"${EXTRA[@]}"})
    if [[ $DRY -eq 0 ]]; then
        mkdir -p "$SAVE"
        log "$1 on ${NNODES:-1} node(s) x $GPUS $([[ $CPU -eq 1 ]] && echo CPU process || echo GPU)(es): $DATA_PATH -> $SAVE"
    fi
    local status=0
    launch "$GPUS" fairseq-train "${ARGS[@]}" || status=$?
    [[ $DRY -eq 1 ]] || validation_log "$SAVE" || true
    return $status
}
