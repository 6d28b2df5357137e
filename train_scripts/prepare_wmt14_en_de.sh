#!/usr/bin/env bash
# WMT'14 English-German: the standard training corpora (Europarl v7, Common Crawl, News Commentary v9;
# about 4.5M pairs), newstest2013 as dev, newstest2014 (full, 3,003 sentences) as test, prepared as fairseq's
# prepare-wmt14en2de.sh does (train_scripts/prepare_wmt.py: Moses punctuation normalisation and non-printing
# character removal on every split, clean-corpus-n -ratio 1.5, 1-250 words on train and dev; kept/dropped counts
# printed and written to OUT/prepare.json).
#
#   bash train_scripts/prepare_wmt14_en_de.sh --out data/wmt14_en_de [--downloads DIR] [--from DIR] [--wmt16]
#        [--no-clean]
#
# --wmt16     the BITE paper's training data (appendix B.3, "WMT'16"): News Commentary v11 instead of v9
# --no-clean  only gather the raw corpora (no normalisation, no cleaning)
# Online: the training archives are downloaded from statmt.org. No checksum list ships with this project: the
# first download of each archive is not verified, only recorded in DOWNLOADS/SHA256SUMS (with a warning), and
# every later run verifies the archive against that record (a list at train_scripts/checksums/wmt14_en_de.sha256,
# "SHA256  NAME" lines, would be checked first if you add one); newstest2013/2014 come
# through sacreBLEU (`sacrebleu -t wmt13|wmt14/full`), which verifies its own MD5 sums.
# --from DIR: local copies instead; DIR (searched recursively) must hold the extracted corpora
#   europarl-v7.de-en.{en,de}, commoncrawl.de-en.{en,de}, news-commentary-v9.de-en.{en,de} (or the three
#   .tgz archives), and newstest2013.{en,de} + newstest2014.{en,de} as plain text or the
#   newstest2013-src.en.sgm / newstest2014-deen-{src,ref}.*.sgm files.
# Writes OUT/{train,valid,test}.{en,de}; every corpus is checked to be line-aligned.
set -euo pipefail
source "$(dirname "$0")/common.sh"

OUT="" FROM="" DOWNLOADS="" WMT16=0 CLEAN=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --out) OUT="$2"; shift 2 ;;
        --from) FROM="$2"; shift 2 ;;
        --downloads) DOWNLOADS="$2"; shift 2 ;;
        --wmt16) WMT16=1; shift ;;
        --no-clean) CLEAN=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done
[[ -n "$OUT" ]] || die "--out is required"
mkdir -p "$OUT"
DOWNLOADS="${DOWNLOADS:-$OUT/downloads}"
TMP="$(mktemp -d "$OUT/.prepare.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
CHECKSUMS="$RECIPES_DIR/checksums/wmt14_en_de.sha256"
ARCHIVES=("https://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz"
          "https://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz"
          "https://www.statmt.org/wmt14/training-parallel-nc-v9.tgz")
CORPORA=(europarl-v7.de-en commoncrawl.de-en news-commentary-v9.de-en)
if [[ $WMT16 -eq 1 ]]; then
    ARCHIVES[2]="https://data.statmt.org/wmt16/translation-task/training-parallel-nc-v11.tgz"
    CORPORA[2]=news-commentary-v11.de-en
fi

verify() {  # verify FILE: against the shipped checksum list, else against (or into) DOWNLOADS/SHA256SUMS
    local file="$1" name sum expected
    name="$(basename "$file")"; sum="$(sha256sum "$file" | cut -d' ' -f1)"
    for list in "$CHECKSUMS" "$DOWNLOADS/SHA256SUMS"; do
        expected="$([[ -f "$list" ]] && awk -v n="$name" '$2 == n {print $1}' "$list" || true)"
        if [[ -n "$expected" ]]; then
            [[ "$sum" == "$expected" ]] || die "$name: sha256 $sum does not match $expected ($list); delete it and retry"
            return 0
        fi
    done
    log "warning: no known checksum for $name; recording $sum in $DOWNLOADS/SHA256SUMS"
    echo "$sum  $name" >> "$DOWNLOADS/SHA256SUMS"
}

find_one() { find -L "$1" -name "$2" -type f 2>/dev/null | head -n 1; }

if [[ -z "$FROM" ]]; then
    mkdir -p "$DOWNLOADS"
    for url in "${ARCHIVES[@]}"; do
        file="$DOWNLOADS/$(basename "$url")"
        if [[ ! -f "$file" ]]; then
            log "downloading $url"
            if command -v curl > /dev/null; then curl -fSL "$url" -o "$file.part"; else wget "$url" -O "$file.part"; fi
            mv "$file.part" "$file"
        fi
        verify "$file"
    done
    SEARCH="$DOWNLOADS"
else
    [[ -d "$FROM" ]] || die "--from $FROM is not a directory"
    SEARCH="$FROM"
fi

# training corpora: extracted files, else extract them from the archives
: > "$TMP/train.en"; : > "$TMP/train.de"
for corpus in "${CORPORA[@]}"; do
    en="$(find_one "$SEARCH" "$corpus.en")" de="$(find_one "$SEARCH" "$corpus.de")"
    if [[ -z "$en" || -z "$de" ]]; then
        for archive in $(find -L "$SEARCH" -name '*.tgz' -type f); do
            if tar -tzf "$archive" | grep -q "$corpus.en$"; then
                log "extracting $corpus from $archive"
                tar -xzf "$archive" -C "$TMP" --wildcards "*$corpus.en" "*$corpus.de"
            fi
        done
        en="$(find_one "$TMP" "$corpus.en")" de="$(find_one "$TMP" "$corpus.de")"
    fi
    [[ -n "$en" && -n "$de" ]] || die "$corpus.{en,de} not found in $SEARCH"
    n_en=$(wc -l < "$en") n_de=$(wc -l < "$de")
    [[ "$n_en" -eq "$n_de" ]] || die "$corpus: $n_en English but $n_de German lines"
    cat "$en" >> "$TMP/train.en"; cat "$de" >> "$TMP/train.de"
    log "$corpus: $n_en pairs"
done

sgm_text() { sed -n 's/^.*<seg[^>]*>\(.*\)<\/seg>.*$/\1/p' "$1"; }
testset() {  # testset SPLIT YEAR SACREBLEU_NAME SGM_SRC_GLOB SGM_REF_GLOB
    local split="$1" year="$2" name="$3" src ref
    if [[ -z "$FROM" ]]; then
        "$PYTHON" -m sacrebleu -t "$name" -l en-de --echo src > "$TMP/$split.en"
        "$PYTHON" -m sacrebleu -t "$name" -l en-de --echo ref > "$TMP/$split.de"
        return
    fi
    src="$(find_one "$FROM" "newstest$year.en")" ref="$(find_one "$FROM" "newstest$year.de")"
    if [[ -n "$src" && -n "$ref" ]]; then cp "$src" "$TMP/$split.en"; cp "$ref" "$TMP/$split.de"; return; fi
    src="$(find_one "$FROM" "$4")" ref="$(find_one "$FROM" "$5")"
    [[ -n "$src" && -n "$ref" ]] || die "newstest$year not found in $FROM (plain newstest$year.{en,de} or $4/$5)"
    sgm_text "$src" > "$TMP/$split.en"; sgm_text "$ref" > "$TMP/$split.de"
}
testset valid 2013 wmt13 "newstest2013-src.en.sgm" "newstest2013-src.de.sgm"
testset test 2014 wmt14/full "newstest2014-deen-src.en.sgm" "newstest2014-deen-ref.de.sgm"

for split in train valid test; do
    n_en=$(wc -l < "$TMP/$split.en") n_de=$(wc -l < "$TMP/$split.de")
    [[ "$n_en" -eq "$n_de" && "$n_en" -gt 0 ]] || die "$split: $n_en English but $n_de German lines"
    log "$split: $n_en pairs"
done
if [[ $CLEAN -eq 1 ]]; then
    "$PYTHON" -m train_scripts.prepare_wmt --raw "$TMP" --out "$OUT" --src en --tgt de || exit $?
else
    for split in train valid test; do
        mv "$TMP/$split.en" "$OUT/$split.en"; mv "$TMP/$split.de" "$OUT/$split.de"
    done
fi
