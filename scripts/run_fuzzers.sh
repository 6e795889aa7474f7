#!/usr/bin/env bash
# `make fuzz`: runs each libFuzzer target of the sanitized build for a set
# time, one after the other, and reports the crashes.
#
#   scripts/run_fuzzers.sh SANITIZE_BUILD_DIR [SECONDS_PER_TARGET] [TARGET...]
#
# Each target starts from its committed seeds (tests/fuzz/corpus/<name>,
# and targets/ for the TOML loader) and keeps what it finds in
# SANITIZE_BUILD_DIR/fuzz-work/<name>/corpus, which later runs reuse.
# Crashing inputs are written to SANITIZE_BUILD_DIR/fuzz-work/<name>/ as
# crash-*, leak-*, timeout-* or oom-*; docs/robustness.md says how to
# reproduce one and how to commit it as a regression input.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:?usage: run_fuzzers.sh SANITIZE_BUILD_DIR [SECONDS] [TARGET...]}" && pwd)"
seconds="${2:-300}"
shift $(( $# >= 2 ? 2 : 1 ))
targets=("$@")
((${#targets[@]})) || targets=(onnx target_toml blob)

failed=()
for name in "${targets[@]}"; do
  bin="$build/tests/fuzz/fuzz_$name"
  if [[ ! -x "$bin" ]]; then
    echo "run_fuzzers: $bin is missing (build the sanitized tree first)" >&2
    exit 2
  fi
  work="$build/fuzz-work/$name"
  mkdir -p "$work/corpus"
  seeds=("$here/tests/fuzz/corpus/$name")
  extra=()
  if [[ $name == onnx && -s $build/tests/fuzz/onnx_node_seeds.list ]]; then
    extra+=("-seed_inputs=@$build/tests/fuzz/onnx_node_seeds.list")
  fi
  if [[ $name == target_toml ]]; then
    seeds+=("$here/targets")
    extra+=("-dict=$here/tests/fuzz/toml.dict")
  fi
  echo "run_fuzzers: fuzz_$name for ${seconds}s (corpus $work/corpus)"
  touch "$work/.start"
  "$bin" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=3072 \
    -print_final_stats=1 -artifact_prefix="$work/" "${extra[@]}" \
    "$work/corpus" "${seeds[@]}" > "$work/log.txt" 2>&1
  status=$?
  tail -n 12 "$work/log.txt" | grep -E '^(stat::|Done|#[0-9]+ +DONE|==[0-9]+==ERROR|SUMMARY)' || true
  found=$(find "$work" -maxdepth 1 -newer "$work/.start" \( -name 'crash-*' \
    -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
  if ((status != 0)) || [[ -n $found ]]; then
    echo "run_fuzzers: fuzz_$name FOUND A PROBLEM (exit $status), log $work/log.txt:"
    [[ -z $found ]] || echo "$found"
    failed+=("$name")
  fi
done

if ((${#failed[@]})); then
  echo "run_fuzzers: problems found by: ${failed[*]}"
  exit 1
fi
echo "run_fuzzers: no crash in ${#targets[@]} target(s), ${seconds}s each"
