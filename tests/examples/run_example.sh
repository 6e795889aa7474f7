#!/usr/bin/env bash
# Builds one example firmware project the way a user would (its own
# Makefile or CMake project, GNU cross toolchain), boots it in QEMU and
# checks that it classified the image: the program must exit 0 and print
# "cuvil: class N (p=...)". Then checks the model's build rules (cuvil.mk,
# cuvil_add_model): building again does not run cuvilc, building after the
# .onnx file changed does.
#
#   run_example.sh u74-mc-make|a78-cmake CUVILC MODELS_DIR WORK_DIR
set -euo pipefail
example=$1 cuvilc=$2 models=$3 work=$4
repo="$(cd "$(dirname "$0")/../.." && pwd)"
input="$models/cnn/input_0.bin"
rm -rf "$work" && mkdir -p "$work/src"
# A copy of the model, which the rebuild check touches.
model="$work/src/model.onnx"
cp "$models/cnn/model.onnx" "$model"

# configure; build TARGET; $compiled: what the build log shows when cuvilc ran.
case "$example" in
u74-mc-make)
  configure() { :; }
  build() {
    make -C "$repo/examples/u74-mc-make" CUVILC="$cuvilc" MODEL="$model" \
      INPUT="$input" BUILD="$work" "$1"
  }
  firmware=all compiled="$cuvilc build" ;;
a78-cmake)
  configure() {
    cmake -S "$repo/examples/a78-cmake" -B "$work" \
      -DCMAKE_TOOLCHAIN_FILE="$repo/cmake/toolchains/aarch64-gnu.cmake" \
      -DCUVILC="$cuvilc" -DCUVIL_MODEL="$model" -DCUVIL_INPUT="$input"
  }
  build() { cmake --build "$work" --target "$1"; }
  firmware=firmware compiled="cuvilc: compiling model cnn" ;;
*)
  echo "unknown example '$example'" >&2; exit 2 ;;
esac

# fail MESSAGE LOG: prints the log and fails the test.
fail() { cat "$2"; echo "FAIL $example: $1"; exit 1; }

{ configure && build run; } < /dev/null > "$work/log.txt" 2>&1 ||
  fail "build or run failed" "$work/log.txt"
line=$(grep -E '^cuvil: class [0-9]+ \(p=' "$work/log.txt") ||
  fail "no classification printed" "$work/log.txt"
grep -qF "$compiled" "$work/log.txt" ||
  fail "the log does not show cuvilc compiling the model" "$work/log.txt"
echo "PASS $example: $line"

# Nothing changed: nothing to compile.
build "$firmware" < /dev/null > "$work/log-again.txt" 2>&1 ||
  fail "second build failed" "$work/log-again.txt"
if grep -qF "$compiled" "$work/log-again.txt"; then
  fail "cuvilc ran again although the model did not change" "$work/log-again.txt"
fi
# A newer model: compiled again (and the firmware relinked).
touch "$model"
build "$firmware" < /dev/null > "$work/log-touched.txt" 2>&1 ||
  fail "build after touching the model failed" "$work/log-touched.txt"
grep -qF "$compiled" "$work/log-touched.txt" ||
  fail "cuvilc did not run after the model changed" "$work/log-touched.txt"
echo "PASS $example: model rebuilt when its .onnx changed, not otherwise"
