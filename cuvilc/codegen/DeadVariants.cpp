//===- DeadVariants.cpp - Skip optimising kernel variants never run -------===//
#include "codegen/DeadVariants.h"
#include "codegen/Backend.h"

#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/Cloning.h>

namespace cuvil {

namespace {

/// A function O3 optimises on its own, before its callers, and may delete
/// afterwards: an internal definition that is never inlined (optnone
/// requires noinline) and that only internal functions call. What the
/// entry points call (the steps) stays whatever the steps do.
bool isCandidate(const llvm::Function &F) {
  if (F.isDeclaration() || !F.hasLocalLinkage() ||
      !F.hasFnAttribute(llvm::Attribute::NoInline) ||
      F.hasFnAttribute(llvm::Attribute::OptimizeNone))
    return false;
  for (const llvm::User *U : F.users())
    if (const auto *I = llvm::dyn_cast<llvm::Instruction>(U))
      if (!I->getFunction()->hasLocalLinkage())
        return false;
  return true;
}

/// The copy's simplification: always-inlined kernels into their callers,
/// then what folds the dispatch on the steps' constant shapes. The shape
/// structs are stored field by field and read back through the kernels'
/// pointers, so EarlyCSE runs with MemorySSA, and once more after
/// InstCombine has merged the blocks between the stores and the reads.
void simplify(llvm::Module &Copy) {
  llvm::ModulePassManager MPM;
  MPM.addPass(llvm::AlwaysInlinerPass(/*InsertLifetime=*/false));
  llvm::FunctionPassManager FPM;
  FPM.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  FPM.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
  FPM.addPass(llvm::SimplifyCFGPass());
  FPM.addPass(llvm::InstCombinePass());
  FPM.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
  FPM.addPass(llvm::SimplifyCFGPass());
  MPM.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(FPM)));
  MPM.addPass(llvm::GlobalDCEPass());
  runPasses(Copy, MPM);
}

} // namespace

std::vector<std::string> skipDeadVariants(llvm::Module &M) {
  std::vector<llvm::Function *> Candidates;
  for (llvm::Function &F : M)
    if (isCandidate(F))
      Candidates.push_back(&F);
  if (Candidates.empty())
    return {};
  std::unique_ptr<llvm::Module> Copy = llvm::CloneModule(M);
  simplify(*Copy);
  std::vector<std::string> Marked;
  for (llvm::Function *F : Candidates) {
    const llvm::Function *Kept = Copy->getFunction(F->getName());
    if (Kept && !Kept->isDeclaration())
      continue;
    F->addFnAttr(llvm::Attribute::OptimizeNone);
    Marked.push_back(F->getName().str());
  }
  return Marked;
}

} // namespace cuvil
