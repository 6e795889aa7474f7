//===- Backend.h - LLVM target machine, optimisation, emission --*- C++ -*-===//
//
// The LLVM side of code generation, apart from what the model adds to the
// module (ModelCodegen): the target machine a target file describes, the
// optimisation pipeline, and writing assembly or an object.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_BACKEND_H
#define CUVIL_CODEGEN_BACKEND_H

#include "codegen/StackUsage.h"
#include "target/TargetInfo.h"

#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>
#include <memory>
#include <string>

namespace cuvil {

/// The machine for target T (its triple, CPU, features, ABI, code model,
/// relocation model), with every LLVM backend registered once.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetInfo &T);

/// Whether T's CPU and features include the LLVM subtarget feature Feature
/// (e.g. "dotprod"); false when T has no machine.
bool targetHasFeature(const TargetInfo &T, llvm::StringRef Feature);

/// O3 with TM's cost model, then MergeFunctions: functions that came out
/// identical (layers of the same shape) share one body. Kernel variants no
/// step runs are not optimised first (DeadVariants.h).
void optimizeModule(llvm::Module &M, llvm::TargetMachine &TM);

/// MPM over M with target-independent analyses (no TargetMachine).
void runPasses(llvm::Module &M, llvm::ModulePassManager &MPM);

/// MergeFunctions alone: functions with identical bodies share one.
void mergeIdenticalFunctions(llvm::Module &M);

/// After optimised parts of M were linked back into it (SplitOptimize):
/// functions the parts made identical share one body, and what no longer
/// has a use (and duplicate constants) goes.
void finishSplitModule(llvm::Module &M);

/// Code for M as assembly or an object file into Out. Code generation may
/// rewrite the IR: emit assembly from a copy when the object follows.
/// With Frames, also the frame size of every function emitted (from the
/// prologue/epilogue inserter's remarks; the code is the same either way).
llvm::Error emitFile(llvm::Module &M, llvm::TargetMachine &TM,
                     llvm::CodeGenFileType FT, const std::string &TargetName,
                     std::string &Out, FrameSizes *Frames = nullptr);

} // namespace cuvil

#endif
