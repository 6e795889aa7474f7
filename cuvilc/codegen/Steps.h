//===- Steps.h - The model's step functions and what each reaches -*- C++
//-*-===//
//
// A model's module is mostly its steps: one function per layer (and one
// per split layer of a multicore build), with its kernels inlined and
// specialised. Steps are independent of each other, which is what lets the
// optimiser (SplitOptimize) and code generation (SplitCodegen) take them
// apart.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_STEPS_H
#define CUVIL_CODEGEN_STEPS_H

#include <llvm/IR/Module.h>

#include <set>
#include <string>
#include <vector>

namespace cuvil {

/// A step: one of the model's own functions (named with its prefix,
/// cuvil_<model>_) that the optimiser may work on alone. Layers' step
/// functions and the team functions are noinline and internal. The
/// kernels' own out-of-line helpers are not steps: each step's copy takes
/// them along, so the optimiser still sees all their callers.
struct StepFilter {
  std::string Prefix;
  bool operator()(const llvm::Function &F) const {
    return !F.isDeclaration() && F.hasLocalLinkage() &&
           F.hasFnAttribute(llvm::Attribute::NoInline) &&
           F.getName().starts_with(Prefix);
  }
};

/// What the code of a step reaches: the step, and every internal
/// function and variable it refers to, through others, except other
/// steps.
struct StepClosure {
  std::set<const llvm::GlobalValue *> Values;
  /// The kernels' out-of-line (noinline) helpers among them.
  std::vector<const llvm::Function *> Helpers;
};

/// The closure of Root (a step, or any other definition) in its module.
StepClosure closureOf(const llvm::GlobalValue &Root, const StepFilter &isStep);

} // namespace cuvil

#endif
