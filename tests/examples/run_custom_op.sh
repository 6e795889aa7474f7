#!/usr/bin/env bash
# Builds examples/custom-op for one board with its Makefile, boots it in
# QEMU and checks what a firmware team relies on:
#   - the model object's only undefined symbols are the two kernels the
#     firmware provides (llvm-nm -u);
#   - the header declares them in its "Kernels the firmware provides"
#     section (vendor_kernels.c includes it, so -Werror checks the match);
#   - the output equals the numpy reference (the firmware compares and
#     prints "custom-op: PASS").
#
#   run_custom_op.sh a78|u74-mc CUVILC WORK_DIR
set -euo pipefail
board=$1 cuvilc=$2 work=$3
repo="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$work" && mkdir -p "$work"
log="$work/log.txt"

fail() { cat "$log"; echo "FAIL custom-op/$board: $*"; exit 1; }

make -C "$repo/examples/custom-op" CUVILC="$cuvilc" TARGET="$board" \
  BUILD="$work" run < /dev/null > "$log" 2>&1 || fail "build or run failed"

undefined=$(llvm-nm-19 -u "$work/model.o" | awk '{print $NF}' | sort | tr '\n' ' ')
want="vendor_scale_shift_f32 vision_normalize_u8_f32 "
[[ "$undefined" == "$want" ]] ||
  fail "model.o's undefined symbols are '$undefined', expected '$want'"

grep -q "Kernels the firmware provides" "$work/model.h" ||
  fail "model.h has no section of firmware kernels"
grep -qF "void vision_normalize_u8_f32(const uint8_t *image, float *y, float scale, int64_t zero_point, int64_t pixels, int64_t channels);" "$work/model.h" ||
  fail "model.h lacks the prototype of vision_normalize_u8_f32"
grep -qF "void vendor_scale_shift_f32(const float *x, float *y, float alpha, float beta, int64_t count);" "$work/model.h" ||
  fail "model.h lacks the prototype of vendor_scale_shift_f32"

line=$(grep -E '^custom-op: [0-9]+ outputs' "$log") || fail "no result printed"
grep -q '^custom-op: PASS' "$log" || fail "$line"
echo "PASS custom-op/$board: $line"
