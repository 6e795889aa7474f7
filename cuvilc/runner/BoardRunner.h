//===- BoardRunner.h - Run a compiled model on a board under QEMU -*- C++ -*-=//
//
// `cuvilc run --target <board>`: the model, compiled as `cuvilc build`
// compiles it (with the C prefix "model"), is linked into the runner
// firmware (runtime-baremetal/runner/runner.c) with the board's runtime
// library and base linker script, and booted with the [qemu] command of
// the target's file under `-icount shift=0`, so that the instruction and
// cycle counts the runner prints are the same on every run. This is what
// tests/e2e/run_e2e.py does for the end-to-end tests, in a work directory:
//
//   model.o model.h model.ld cuvil-models.ld  the model, as `build` writes
//   input_<i>.bin / out_<i>.bin               raw data, through semihosting
//   runtime/                                  the runtime library (a copy
//                                             of the cached one:
//                                             RuntimeCache.h)
//   runner.o image.elf                        the firmware
//   qemu.out qemu.err                         what QEMU printed
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNNER_BOARDRUNNER_H
#define CUVIL_RUNNER_BOARDRUNNER_H

#include <cstdint>
#include <llvm/Support/Error.h>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace cuvil {

struct CompiledModel;

struct BoardRunOptions {
  /// The firmware's C compiler: clang-N (the runtime's archiver is then
  /// llvm-ar-N) or a GNU cross gcc, as runtime.mk accepts them.
  std::string CC = "clang-19";
  /// The work directory, kept afterwards; empty: a temporary one, removed.
  std::string KeepWork;
  unsigned TimeoutSeconds = 600; ///< Of the QEMU run.
};

struct BoardRunResult {
  std::vector<std::string> Outputs; ///< Raw bytes, one per graph output.
  /// For a model whose output shapes depend on a branch (the runner prints
  /// `cuvil: output I shape D,D,...`): each output's shape in this run.
  std::vector<std::vector<int64_t>> OutputShapes;
  uint64_t Instructions = 0, Cycles = 0;
  /// A --profile build's table (profile.bin: profile_runs, then the rows).
  std::optional<std::string> ProfileTable;
};

/// Runs CM (compiled with the name "model" for a target with a [qemu]
/// section) once on Inputs (raw bytes, one per graph input). Errors name
/// the step and show the end of the failing tool's output; a tool that is
/// not installed is named with the package that provides it.
llvm::Expected<BoardRunResult>
runFirmware(const CompiledModel &CM, const std::vector<std::string> &Inputs,
            const BoardRunOptions &O, std::ostream &Log);

} // namespace cuvil

#endif
