#!/usr/bin/env bash
# Builds one example firmware project the way a user would (its own
# Makefile or CMake project, GNU cross toolchain), boots it in QEMU and
# checks that it classified the image: the program must exit 0 and print
# "cuvil: class N (p=...)".
#
#   run_example.sh u74-mc-make|a78-cmake CUVILC MODELS_DIR WORK_DIR
set -euo pipefail
example=$1 cuvilc=$2 models=$3 work=$4
repo="$(cd "$(dirname "$0")/../.." && pwd)"
model="$models/cnn/model.onnx" input="$models/cnn/input_0.bin"
rm -rf "$work" && mkdir -p "$work"

case "$example" in
u74-mc-make)
  make -C "$repo/examples/u74-mc-make" CUVILC="$cuvilc" MODEL="$model" \
    INPUT="$input" BUILD="$work" run < /dev/null > "$work/log.txt" 2>&1 ;;
a78-cmake)
  { cmake -S "$repo/examples/a78-cmake" -B "$work" \
      -DCMAKE_TOOLCHAIN_FILE="$repo/cmake/toolchains/aarch64-gnu.cmake" \
      -DCUVILC="$cuvilc" -DCUVIL_MODEL="$model" -DCUVIL_INPUT="$input" &&
    cmake --build "$work" --target run; } < /dev/null > "$work/log.txt" 2>&1 ;;
*)
  echo "unknown example '$example'" >&2; exit 2 ;;
esac || { cat "$work/log.txt"; echo "FAIL $example: build or run failed"; exit 1; }

if line=$(grep -E '^cuvil: class [0-9]+ \(p=' "$work/log.txt"); then
  echo "PASS $example: $line"
else
  cat "$work/log.txt"
  echo "FAIL $example: no classification printed"
  exit 1
fi
