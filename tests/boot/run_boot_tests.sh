#!/usr/bin/env bash
# Boot smoke tests of runtime-baremetal. For u74-mc and a78, each with
# clang-19 and with the GNU cross compiler:
#   build     tests/boot through runtime.mk (programs without models, and
#             models.c with a stand-in model fragment)
#   noheap    no linked image defines or references malloc & co.
#   memcalls  mem.c's functions do not call memcpy/memmove/memset/memcmp
#   hello     exit code 0, UART output equal to hello.expected, and the
#             file written through semihosting (a78: also entered at EL2,
#             EL3, and EL3 with EL2)
#   trap      an undefined instruction prints the trap dump and exits with
#             128 + cause
#   team      every core of the board joins the team (cuvil/team.h) and
#             runs shares of 200 layers; measurement mode counts equal
#             shares equal (under -icount); exit 0 and "team: ok"
#   nohost    without semihosting: calls fail with -1, exit parks the core
#   models    model sections land in their regions via cuvil-models.ld
#   cmake     hello built through cuvil-runtime.cmake and a toolchain file
#
# Usage: tests/boot/run_boot_tests.sh [BUILD_DIR]
#   (default: build/boot-tests in the repository)
# Prints "PASS name" or "FAIL name" (details indented below) per case, then
# "N passed, M failed"; exits 1 if any case failed.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tests=$root/tests/boot
build=$(realpath -m "${1:-$root/build/boot-tests}")
jobs=$(nproc)

# target, compiler, label, CMake toolchain file
configs=(
  "u74-mc clang-19 clang riscv64-clang"
  "u74-mc riscv64-unknown-elf-gcc gnu riscv64-gnu"
  "a78 clang-19 clang aarch64-clang"
  "a78 aarch64-linux-gnu-gcc gnu aarch64-gnu"
)

passed=0
failed=0

pass() {
  echo "PASS $1"
  passed=$((passed + 1))
}

# fail NAME DETAIL...: details go below the FAIL line, indented.
fail() {
  echo "FAIL $1"
  shift
  printf '%s\n' "$@" | sed 's/^/    /'
  failed=$((failed + 1))
}

# The QEMU command line of a target, from targets/<target>.toml.
qemu_command() {
  sed -n 's/^command *= *"\(.*\)"$/\1/p' "$root/targets/$1.toml"
}

# run_qemu DIR SECONDS ELF COMMAND: run ELF in the fresh directory DIR
# (semihosting files land there); UART text without CRs in DIR/uart.txt.
# Returns QEMU's exit code (124 on timeout).
run_qemu() {
  local dir=$1 seconds=$2 elf=$3 command=$4 rc
  rm -rf "$dir" && mkdir -p "$dir"
  # shellcheck disable=SC2086 # the command is a word list
  (cd "$dir" && timeout "$seconds" $command -kernel "$elf" \
    </dev/null >uart.raw 2>qemu.log)
  rc=$?
  tr -d '\r' <"$dir/uart.raw" >"$dir/uart.txt"
  return $rc
}

# check_hello NAME DIR ELF COMMAND
check_hello() {
  local name=$1 dir=$2 elf=$3 command=$4 rc
  run_qemu "$dir" 60 "$elf" "$command"
  rc=$?
  if ((rc != 0)); then
    fail "$name" "exit code $rc, expected 0" "$(tail -n 5 "$dir/uart.txt" "$dir/qemu.log")"
  elif ! diff -u "$tests/hello.expected" "$dir/uart.txt" >"$dir/diff.txt"; then
    fail "$name" "UART output differs from hello.expected:" "$(cat "$dir/diff.txt")"
  elif [[ $(cat "$dir/boot-test.txt" 2>/dev/null) != "cuvil semihosting round trip" ]]; then
    fail "$name" "semihosting file boot-test.txt missing or wrong"
  else
    pass "$name"
  fi
}

# check_trap NAME DIR ELF COMMAND EXIT_CODE CAUSE_TEXT LAST_REGISTER
check_trap() {
  local name=$1 dir=$2 elf=$3 command=$4 want=$5 cause=$6 last=$7 rc
  run_qemu "$dir" 60 "$elf" "$command"
  rc=$?
  local uart=$dir/uart.txt
  if ((rc != want)); then
    fail "$name" "exit code $rc, expected $want" "$(tail -n 12 "$uart")"
  elif ! grep -q '^\*\*\* cuvil: ' "$uart" || ! grep -qF "$cause" "$uart" ||
    ! grep -qF "$last" "$uart"; then
    fail "$name" "no complete trap dump ('$cause', '$last'):" "$(cat "$uart")"
  elif grep -q 'still running' "$uart"; then
    fail "$name" "execution continued after the trap"
  else
    pass "$name"
  fi
}

# check_nohost NAME DIR ELF COMMAND: QEMU without semihosting keeps running
# (the core parks), so the timeout ends it.
check_nohost() {
  local name=$1 dir=$2 elf=$3 command rc
  # shellcheck disable=SC2001 # sed reads clearer than an extglob pattern
  command=$(sed 's/ -semihosting-config [^ ]*//' <<<"$4")
  run_qemu "$dir" 3 "$elf" "$command"
  rc=$?
  local uart=$dir/uart.txt
  if ((rc != 124)); then
    fail "$name" "exit code $rc, expected the timeout (124)" "$(cat "$uart")"
  elif ! grep -qx 'no host: read_file returned -1' "$uart" ||
    ! grep -qx 'no host: exiting' "$uart" || grep -q '^\*\*\* cuvil' "$uart"; then
    fail "$name" "unexpected output:" "$(cat "$uart")"
  else
    pass "$name"
  fi
}

for config in "${configs[@]}"; do
  read -r target cc label toolchain <<<"$config"
  id=$target-$label
  out=$build/$id
  command=$(qemu_command "$target")

  # build
  mkdir -p "$out"
  if make -j"$jobs" -f "$tests/Makefile" CUVIL_TARGET="$target" CC="$cc" \
    O="$out" >"$out/build.log" 2>&1 &&
    make -j"$jobs" -f "$tests/Makefile" CUVIL_TARGET="$target" CC="$cc" \
      MODELS=1 O="$out-models" >>"$out/build.log" 2>&1; then
    if grep -qi 'warning' "$out/build.log"; then
      fail "build-$id" "$(grep -i -A3 'warning' "$out/build.log")"
    else
      pass "build-$id"
    fi
  else
    fail "build-$id" "$(tail -n 20 "$out/build.log")"
    continue
  fi
  images=("$out/hello.elf" "$out/trap.elf" "$out/nohost.elf" "$out/team.elf"
    "$out-models/models.elf")

  # noheap
  heap=$(for elf in "${images[@]}"; do
    llvm-nm-19 "$elf" | awk -v f="${elf#"$build"/}" \
      '$NF ~ /^(malloc|calloc|realloc|free|sbrk|_sbrk)$/ { print f ": " $0 }'
  done)
  if [[ -z $heap ]]; then pass "noheap-$id"; else fail "noheap-$id" "$heap"; fi

  # memcalls: relocations in mem.c's code that target one of the four.
  calls=$(llvm-objdump-19 -dr "$out/rt/obj/lib/mem.c.o" |
    grep -E 'R_[A-Z0-9_]+[[:space:]]+(memcpy|memmove|memset|memcmp)([^[:alnum:]_]|$)')
  if [[ -z $calls ]]; then pass "memcalls-$id"; else fail "memcalls-$id" "$calls"; fi

  check_hello "hello-$id" "$out/run-hello" "$out/hello.elf" "$command"
  if [[ $target == a78 ]]; then
    for variant in "el2 virtualization=on" "el3 secure=on" \
      "el3-el2 secure=on,virtualization=on"; do
      read -r suffix options <<<"$variant"
      check_hello "hello-$id-$suffix" "$out/run-hello-$suffix" \
        "$out/hello.elf" "${command/-M virt /-M virt,$options }"
    done
  fi

  if [[ $target == u74-mc ]]; then
    check_trap "trap-$id" "$out/run-trap" "$out/trap.elf" "$command" 130 \
      "mcause=0x0000000000000002" "t6=0x"
  else
    check_trap "trap-$id" "$out/run-trap" "$out/trap.elf" "$command" 128 \
      "EC 0x00" "sp =0x"
  fi

  run_qemu "$out/run-team" 60 "$out/team.elf" "$command -icount shift=0"
  rc=$?
  if ((rc == 0)) && grep -qx 'team: ok' "$out/run-team/uart.txt"; then
    pass "team-$id"
  else
    fail "team-$id" "exit code $rc" "$(cat "$out/run-team/uart.txt")"
  fi

  check_nohost "nohost-$id" "$out/run-nohost" "$out/nohost.elf" "$command"

  run_qemu "$out-models/run" 60 "$out-models/models.elf" "$command"
  rc=$?
  if ((rc == 0)) && grep -q '^models: .*: ok$' "$out-models/run/uart.txt"; then
    pass "models-$id"
  else
    fail "models-$id" "exit code $rc" "$(cat "$out-models/run/uart.txt")"
  fi

  # cmake
  cmake_out=$out-cmake
  if cmake -S "$tests" -B "$cmake_out" -DCUVIL_TARGET="$target" \
    -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/$toolchain.cmake" \
    >"$out/cmake.log" 2>&1 &&
    cmake --build "$cmake_out" -j"$jobs" >>"$out/cmake.log" 2>&1; then
    check_hello "cmake-$id" "$cmake_out/run-hello" "$cmake_out/hello.elf" "$command"
  else
    fail "cmake-$id" "$(tail -n 20 "$out/cmake.log")"
  fi
done

echo "$passed passed, $failed failed"
((failed == 0))
