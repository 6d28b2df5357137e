#!/usr/bin/env bash
# Multi30k task 1 (En-De, raw text) as aligned train/valid/test files for train_scripts.binarize.
#
#   bash train_scripts/prepare_multi30k.sh --out data/multi30k [--from ../shared/data/multi30k]
#        [--test test_2016_flickr|test_2017_flickr] [--max-train N]
#
# --from DIR   local copy of github.com/multi30k/dataset data/task1/raw ({train,val,TEST}.{en,de}[.gz]);
#              without it the files are downloaded from GitHub (curl or wget)
# Writes OUT/{train,valid,test}.{en,de} (plain UTF-8, one sentence per line) and checks that each pair is
# aligned and has the published number of lines (29,000 / 1,014 / 1,000) unless --max-train cuts train.
set -euo pipefail
source "$(dirname "$0")/common.sh"

OUT="" FROM="" TEST="test_2016_flickr" MAX_TRAIN=0
URL="https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --out) OUT="$2"; shift 2 ;;
        --from) FROM="$2"; shift 2 ;;
        --test) TEST="$2"; shift 2 ;;
        --max-train) MAX_TRAIN="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done
[[ -n "$OUT" ]] || die "--out is required"
declare -A EXPECTED=([train]=29000 [val]=1014 [test_2016_flickr]=1000 [test_2017_flickr]=1000
                     [test_2017_mscoco]=461 [test_2018_flickr]=1071)
mkdir -p "$OUT"
TMP="$(mktemp -d "$OUT/.prepare.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

fetch() {  # fetch NAME (e.g. train.en) -> $TMP/NAME
    local name="$1" src
    if [[ -n "$FROM" ]]; then
        for src in "$FROM/$name" "$FROM/$name.gz"; do
            if [[ -f "$src" ]]; then
                if [[ "$src" == *.gz ]]; then gzip -dc "$src" > "$TMP/$name"; else cp "$src" "$TMP/$name"; fi
                return 0
            fi
        done
        die "$name(.gz) not found in $FROM"
    fi
    log "downloading $URL/$name.gz"
    if command -v curl > /dev/null; then curl -fsSL "$URL/$name.gz" -o "$TMP/$name.gz"
    else wget -q "$URL/$name.gz" -O "$TMP/$name.gz"; fi
    gzip -dc "$TMP/$name.gz" > "$TMP/$name"
}

for pair in "train:train" "val:valid" "$TEST:test"; do
    name="${pair%%:*}" split="${pair##*:}"
    for lang in en de; do fetch "$name.$lang"; done
    n_en=$(wc -l < "$TMP/$name.en") n_de=$(wc -l < "$TMP/$name.de")
    [[ "$n_en" -eq "$n_de" ]] || die "$name: $n_en English but $n_de German lines"
    if [[ -n "${EXPECTED[$name]:-}" && "$n_en" -ne "${EXPECTED[$name]}" ]]; then
        die "$name has $n_en lines, the published set has ${EXPECTED[$name]}: incomplete or wrong file"
    fi
    for lang in en de; do
        if [[ "$split" == train && "$MAX_TRAIN" -gt 0 ]]; then head -n "$MAX_TRAIN" "$TMP/$name.$lang" > "$TMP/$split.$lang.out"
        else cp "$TMP/$name.$lang" "$TMP/$split.$lang.out"; fi
    done
    log "$split: $(wc -l < "$TMP/$split.en.out") pairs ($name)"
done
# only a complete, checked set replaces the output files
for split in train valid test; do for lang in en de; do mv "$TMP/$split.$lang.out" "$OUT/$split.$lang"; done; done
