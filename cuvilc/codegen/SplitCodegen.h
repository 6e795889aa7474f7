//===- SplitCodegen.h - Generate a model's object in parts ------*- C++ -*-===//
//
// After the optimiser, code generation is the longest stage of a build.
// The module's functions are cut into parts: the steps (the layers'
// functions) spread over the parts by size, the entry points and what
// only they reach in the first part, every other internal function or
// variable in the part of the steps that use it, or in the first part when
// several parts use it. What one part uses from another becomes a hidden
// global there. Each part is generated in a process forked for it (at
// most --jobs at a time) from the whole module with the other parts'
// code deleted, so that every function is generated as in a one-piece
// build; the objects are merged (ObjectMerge), those symbols local again.
//
// The cut depends on the module alone, never on the number of processes,
// so every machine writes the same object.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_SPLITCODEGEN_H
#define CUVIL_CODEGEN_SPLITCODEGEN_H

#include "codegen/StackUsage.h"

#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>

#include <string>

namespace cuvil {

/// M's object for TM in Object, and the frame size of every function in
/// Frames: in parts, in Jobs processes, when M has enough steps (named
/// StepPrefix..., see Steps.h) to pay for it; whole otherwise. Internal
/// values used across parts are made hidden globals in M.
llvm::Error emitObjectSplit(llvm::Module &M, llvm::TargetMachine &TM,
                            unsigned Jobs, llvm::StringRef StepPrefix,
                            const std::string &TargetName, std::string &Object,
                            FrameSizes &Frames);

} // namespace cuvil

#endif
