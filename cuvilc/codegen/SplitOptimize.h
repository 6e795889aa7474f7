//===- SplitOptimize.h - Optimise a model's steps in parallel ----*- C++
//-*-===//
//
// Most of a build is the O3 pipeline over the layers' step functions, each
// with its kernels inlined and specialised on the layer's shapes. The steps
// are independent (noinline, called only from run_v and the team
// functions), so each is optimised on its own: a copy of the step with
// the kernels it reaches, as a module of its own, run through the same
// pipeline. Forked worker processes take steps from a shared counter, the
// costliest first, and send their optimised modules back as bitcode; the
// compiler links them into the model's module in step order, optimises
// what is left (the entry points, the blob reader) and merges steps that
// came out identical.
//
// A step's code depends on the step alone, never on which process or how
// many optimised it, so every machine writes the same object whatever its
// core count. LLVM's optimiser keeps global state (its command-line
// options), which is why the workers are processes rather than threads.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_SPLITOPTIMIZE_H
#define CUVIL_CODEGEN_SPLITOPTIMIZE_H

#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>

#include "codegen/Workers.h"

namespace cuvil {

class StageTimer;

/// optimizeModule's work, step by step in Jobs processes (this one
/// included) when the module is large enough to pay for it; a small
/// module goes through optimizeModule whole. Steps are the internal
/// noinline functions named StepPrefix... (cuvil_<model>_). When the steps
/// are split, what follows their optimisation (the rest of the module,
/// linking them back) is Timer's stage llvm-link-steps.
llvm::Error optimizeModuleSplit(llvm::Module &M, llvm::TargetMachine &TM,
                                unsigned Jobs, llvm::StringRef StepPrefix,
                                StageTimer *Timer = nullptr);

} // namespace cuvil

#endif
