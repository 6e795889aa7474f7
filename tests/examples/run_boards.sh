#!/usr/bin/env bash
# A new board is only a target file: examples/boards/rv64gc.toml (RV64GC
# without Zba/Zbb) and examples/boards/cortex-a72.toml (ARMv8.0, no
# dotprod), given to cuvilc by path. For each board:
#   - `cuvilc run` of the float test CNN and of the INT8 QDQ CNN under the
#     board's own QEMU command (Zba/Zbb off; -cpu cortex-a72), outputs
#     compared with ONNX Runtime's: an instruction the CPU lacks traps;
#   - the objects hold no instruction of the extensions the board lacks
#     (llvm-objdump decoding them), code that never ran included;
#   - on the A72, cuvilc says that the INT8 layers use the reference
#     kernels (the a78 library's packed ones are SDOT code).
#
#   run_boards.sh CUVILC MODELS_DIR WORK_DIR
set -euo pipefail
cuvilc=$1 models=$2 work=$3
repo="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$work" && mkdir -p "$work"
log="$work/log.txt"
: > "$log"

fail() { tail -n 40 "$log"; echo "FAIL boards: $*"; exit 1; }

# board: toml, instructions it must not contain (extended regexp over
# llvm-objdump's mnemonics), the -mattr that makes objdump decode them.
declare -A toml forbidden mattr
toml[rv64gc]="$repo/examples/boards/rv64gc.toml"
forbidden[rv64gc]='^(sh[123]add(\.uw)?|add\.uw|slli\.uw|andn|orn|xnor|clzw?|ctzw?|cpopw?|maxu?|minu?|sext\.[bh]|zext\.h|rolw?|rorw?|roriw?|rev8|orc\.b)$'
mattr[rv64gc]="+zba,+zbb"
toml[cortex-a72]="$repo/examples/boards/cortex-a72.toml"
forbidden[cortex-a72]='^(sdot|udot|usdot|sudot)$'
mattr[cortex-a72]="+dotprod"

for board in rv64gc cortex-a72; do
  for model in cnn qdq_cnn; do
    dir="$work/$board/$model"
    mkdir -p "$dir"
    /usr/bin/python3 "$repo/tests/e2e/model_npy.py" "$models/$model" "$dir" >> "$log" 2>&1 ||
      fail "model_npy.py $model"
    # An INT8 output may differ from ORT's by a rounding step or two
    # (docs/quantization.md; run_e2e.py's LSB_WORST): the manifest gives the
    # output's quantization step.
    tol=()
    lsb=$(/usr/bin/python3 -c 'import json, sys; print(next(iter(json.load(open(sys.argv[1])).get("lsb", {}).values()), ""))' "$models/$model/manifest.json")
    [[ -n $lsb ]] && tol=(--atol "$(/usr/bin/python3 -c "print(2 * $lsb)")" --rtol 0)
    echo "\$ cuvilc run $model --target $board" >> "$log"
    "$cuvilc" run "$models/$model/model.onnx" --target "${toml[$board]}" \
      --input "$dir/input_0.npy" --compare "$dir/ref_0.npy" "${tol[@]}" \
      < /dev/null > "$dir/run.txt" 2>&1 || { cat "$dir/run.txt" >> "$log"; fail "$board/$model: cuvilc run failed"; }
    cat "$dir/run.txt" >> "$log"
    "$cuvilc" build "$models/$model/model.onnx" --target "${toml[$board]}" \
      --out "$dir/model.o" > "$dir/build.txt" 2>&1 || { cat "$dir/build.txt" >> "$log"; fail "$board/$model: cuvilc build failed"; }
    found=$(llvm-objdump-19 -d --no-show-raw-insn --mattr="${mattr[$board]}" "$dir/model.o" |
            awk -F'\t' 'NF >= 2 {print $2}' | grep -E "${forbidden[$board]}" | sort -u | tr '\n' ' ' || true)
    [[ -z "$found" ]] || fail "$board/$model: model.o uses $found, which $board lacks"
    if [[ $board == cortex-a72 && $model == qdq_cnn ]]; then
      grep -q "lacks the dotprod extension" "$dir/build.txt" ||
        fail "$board/$model: cuvilc did not say that the INT8 layers run on the reference kernels"
    fi
    echo "PASS $board/$model: $(grep -E '^(run|compare)' "$dir/run.txt" | tr '\n' ' ')"
  done
done
