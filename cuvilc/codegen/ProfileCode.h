//===- ProfileCode.h - Per-step counters of --profile builds ----*- C++ -*-===//
//
// A --profile build reads the target's counters at the start of run_v and
// after every step (a node with code, then the copies into outputs no node
// writes directly), and adds each advance to that step's row of a table in
// the model struct:
//
//   uint64_t profile_runs;             runs since init
//   uint64_t profile[STEPS][2];        per step, summed over the runs
//
// The two counters are cycles and retired instructions on the boards (the
// Arm PMU's PMCCNTR_EL0 and event counter 0, which the firmware programs
// with INST_RETIRED as the cuvil boot code does; RISC-V's cycle and instret
// CSRs), and nanoseconds of CLOCK_MONOTONIC on a hosted target (second
// column 0). One read per step, between steps: the cost of the read itself
// lands in the step that precedes it, and the rows add up to the whole run.
// Without --profile nothing here is emitted.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_PROFILECODE_H
#define CUVIL_CODEGEN_PROFILECODE_H

#include "ir/Graph.h"
#include "lowering/KernelCall.h"
#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

#include <array>
#include <cstddef>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <string>
#include <vector>

namespace cuvil {

/// One row of the profile table.
struct ProfileStep {
  std::string Name; ///< The IR node's name (its first ONNX node's).
  std::string Op;   ///< The IR node's op ("Copy" for the output copies).
  /// The ONNX nodes it runs (the IR node's origins).
  std::vector<std::string> Origins;
  /// Index in the graph's nodes; NoNode for the output copies.
  size_t NodeIndex = 0;
  static constexpr size_t NoNode = static_cast<size_t>(-1);
};

/// The name of the step that copies into outputs no node writes directly.
inline constexpr const char *OutputCopiesStep = "(output copies)";

/// Rows of the table for Steps steps (at least one: C has no empty
/// arrays), and its bytes with profile_runs before it: the layout the
/// struct, the runner's profile.bin and the readers share.
inline size_t profileRows(size_t Steps) { return Steps ? Steps : 1; }
inline size_t profileTableBytes(size_t Steps) {
  return 8 * (1 + 2 * profileRows(Steps));
}

/// The steps a profile of G has, in order: every node with code (the
/// numbering --checked uses too), then the output copies if the plan has
/// any.
std::vector<ProfileStep> profileSteps(const Graph &G, const GraphLowering &L,
                                      const MemoryPlan &Plan);

/// What the two columns of target T's profile count: "cycles" and
/// "instructions", or "nanoseconds" and "" on a hosted target. An error if
/// cuvil cannot read counters on T's architecture.
llvm::Expected<std::array<std::string, 2>> profileCounters(const TargetInfo &T);

/// The counter reads and table updates inside one run_v.
class ProfileCode {
public:
  /// Table: the struct field index of profile_runs in StateTy (the table
  /// is the next field).
  ProfileCode(llvm::Module &M, const TargetInfo &T, llvm::StructType *StateTy,
              unsigned RunsField);
  /// At B, run_v's start: the first read. State: the model struct.
  void start(llvm::IRBuilder<> &B, llvm::Value *State);
  /// At B, after step Step: its row gets the counters' advance since the
  /// previous read.
  void record(llvm::IRBuilder<> &B, size_t Step);
  /// At B, before run_v returns: one more run.
  void finish(llvm::IRBuilder<> &B);

private:
  using Reading = std::array<llvm::Value *, 2>;
  Reading read(llvm::IRBuilder<> &B);

  llvm::Module &M;
  const TargetInfo &T;
  llvm::StructType *StateTy;
  unsigned RunsField;
  llvm::Value *State = nullptr;
  Reading Last{};
  /// Host: the struct timespec clock_gettime fills, in run_v's entry block.
  llvm::Value *Timespec = nullptr;
};

} // namespace cuvil

#endif
