#!/usr/bin/env bash
# Installs everything cuvil needs to build and test on Debian 12 (bookworm).
# Safe to run any number of times: it only installs what is missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(
  # build
  cmake make ninja-build g++ pkg-config
  # LLVM 19: C++ API for codegen, clang for kernel bitcode, lld and tools
  llvm-19-dev llvm-19-tools clang-19 lld-19 libclang-rt-19-dev
  # compiler dependencies
  libflatbuffers-dev flatbuffers-compiler libcli11-dev libfmt-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libtomlplusplus-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev
  # source formatting and static checks (make format, make tidy, format_check)
  clang-format-19 clang-tidy-19
  # tests: ONNX test data, model generator, emulators, GNU cross compilers
  libonnx-testdata python3 python3-onnx python3-numpy
  # the Python package's tests (pytest; pip install into a venv, offline)
  python3-pytest python3-venv python3-pip python3-setuptools
  qemu-system-misc qemu-system-arm
  gcc-riscv64-unknown-elf gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu
  # reference outputs (onnxruntime-node)
  nodejs
  # the browser test of `cuvilc report` (headless, tests/report/)
  chromium
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi

# npm is not a Debian package on every image (NodeSource's nodejs bundles it).
if ! command -v npm >/dev/null 2>&1; then
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm
fi

# ONNX Runtime for reference outputs. --ignore-scripts: its install script
# tries to download GPU binaries, which we neither need nor can fetch.
refdir="$here/tests/reference"
if [[ ! -d "$refdir/node_modules/onnxruntime-node" ]]; then
  echo "install-deps: installing onnxruntime-node into tests/reference"
  (cd "$refdir" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
echo "install-deps: done"
