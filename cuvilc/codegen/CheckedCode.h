//===- CheckedCode.h - Bounds checks of --checked builds --------*- C++ -*-===//
//
// A --checked build plans a guard gap after every arena buffer
// (PlanOptions::GuardBytes). run_v paints a buffer's gap with a canary
// before the step that first writes the buffer, and after every step checks
// the canaries of all buffers live at that step: a kernel that wrote past
// the end of its buffer (or into another's gap) makes run_v stop, record the
// step in the model struct and return CUVIL_ERR_BOUNDS. The pieces here are
// the helpers that code calls; ModelCodegen places the calls.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_CHECKEDCODE_H
#define CUVIL_CODEGEN_CHECKEDCODE_H

#include "planner/MemoryPlan.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <string>
#include <vector>

namespace cuvil {

/// The canary byte of the guard gaps.
constexpr uint8_t GuardCanary = 0xCB;

/// The guard gap of one arena buffer: [Offset, Offset + Bytes) of arena
/// Arena, reserved during steps First..Last (inclusive).
struct Guard {
  unsigned Arena = 0;
  int64_t Offset = 0, Bytes = 0;
  unsigned First = 0, Last = 0;
};

/// Every buffer's gap (the bytes after the tensor up to the end of the
/// buffer: alignment padding and the planned guard), in the plan's order.
std::vector<Guard> guardsOf(const MemoryPlan &Plan);

/// Internal `void Name(ptr P, i64 N)`: fills N bytes at P with GuardCanary.
llvm::Function *buildGuardPaint(llvm::Module &M, const std::string &Name);

/// Internal `i1 Name(ptr P, i64 N)`: true if the N bytes at P all still
/// hold GuardCanary.
llvm::Function *buildGuardCheck(llvm::Module &M, const std::string &Name);

/// The bounds checks of one run_v: its canary helpers (internal functions
/// Prefix + "guard_paint" / "guard_check") and its exit for a failed check,
/// which stores the step into StepField and returns CUVIL_ERR_BOUNDS.
class GuardChecks {
public:
  GuardChecks(llvm::Module &M, llvm::Function *RunV, const std::string &Prefix,
              const MemoryPlan &Plan, std::vector<llvm::Value *> ArenaBases,
              llvm::Value *StepField);
  llvm::Function *paintFunction() const { return Paint; }
  llvm::Function *checkFunction() const { return Check; }
  /// At B: paints the gaps of the buffers that the node at NodeIndex is
  /// the first to write (nothing else uses those bytes until they die).
  void paint(llvm::IRBuilder<> &B, unsigned NodeIndex);
  /// At B, after the node: every buffer live at NodeIndex must still have
  /// its canary, or run_v returns with Step recorded. Leaves B in the block
  /// that continues.
  void check(llvm::IRBuilder<> &B, unsigned NodeIndex, size_t Step);

private:
  std::vector<Guard> Guards;
  std::vector<llvm::Value *> ArenaBases;
  llvm::Function *RunV, *Paint, *Check;
  llvm::BasicBlock *Fail;
  llvm::PHINode *FailedStep;
};

/// --checked, at compile time: the operand V (accessed from Extra bytes
/// into it) of node N must lie inside its base's region (its arena, the
/// weight data, the caller's input or output buffer).
llvm::Error checkOperandRegion(const Graph &G, const MemoryPlan &Plan,
                               const Node &N, const Value *V, int64_t Extra);

/// External `const char *Name(i32 Step)`: Names[Step] (the ONNX node the
/// step runs), or "" for a step out of range.
llvm::Function *buildStepName(llvm::Module &M, const std::string &Name,
                              const std::vector<std::string> &Names);

} // namespace cuvil

#endif
