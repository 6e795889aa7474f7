#!/usr/bin/env bash
# The weight update demo (examples/weight-update, `make demo-update`) on one
# board: every step of the firmware must pass (its last line is
# "PASS: 0 step(s) failed"), and the digest it reports for the weights it
# switched to must be the one cuvilc stated for v2 (v2/model.h).
#
#   run_weight_update.sh u74-mc|a78 CUVILC MODELS_DIR WORK_DIR NODE
set -euo pipefail
board=$1 cuvilc=$2 models=$3 work=$4 node=$5
repo="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$work" && mkdir -p "$work"

make -C "$repo/examples/weight-update" CUVILC="$cuvilc" TARGET="$board" \
  MODEL_DIR="$models/cnn" NODE="$node" BUILD="$work" run \
  < /dev/null > "$work/log.txt" 2>&1 ||
  { cat "$work/log.txt"; echo "FAIL weight-update-$board: build or run failed"; exit 1; }

fail() { cat "$work/log.txt"; echo "FAIL weight-update-$board: $1"; exit 1; }
grep -q '^PASS: 0 step(s) failed' "$work/log.txt" || fail "a step failed"
v2=$(sed -n 's/^#define CUVIL_MODEL_WEIGHTS_SHA256 "\(.*\)"$/\1/p' "$work/v2/model.h")
[ -n "$v2" ] || fail "v2/model.h states no CUVIL_MODEL_WEIGHTS_SHA256"
# The digest printed after the switch, and after the refused v3s.
# (The console ends its lines with CR LF.)
count=$(tr -d '\r' < "$work/log.txt" | grep -c "active slot 1, weights sha256 $v2\$" || true)
[ "$count" = 2 ] || fail "the firmware did not report v2's digest $v2 twice"
# On u74-mc v1 boots from the QSPI flash (0x20000000, 256 MiB).
if [ "$board" = u74-mc ]; then
  at=$(llvm-readelf-19 -S -W "$work/firmware.elf" |
    sed -n 's/.* \.cuvil\.model\.weights  *PROGBITS  *\([0-9a-f]*\) .*/\1/p')
  [ -n "$at" ] && [ $((16#$at >> 28)) = 2 ] ||
    fail "the built-in weights are not in FLASH (at 0x${at:-none})"
fi
echo "PASS weight-update-$board: $(grep -c '^PASS ' "$work/log.txt") steps"
