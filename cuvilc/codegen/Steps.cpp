//===- Steps.cpp - The model's step functions and what each reaches -------===//
#include "codegen/Steps.h"

#include <llvm/IR/Constants.h>

namespace cuvil {

StepClosure closureOf(const llvm::GlobalValue &Root, const StepFilter &isStep) {
  StepClosure C;
  std::vector<const llvm::GlobalValue *> Work{&Root};
  std::set<const llvm::Constant *> SeenConstants;
  auto Visit = [&](const llvm::Value *V, auto &Self) -> void {
    if (const auto *GV = llvm::dyn_cast<llvm::GlobalValue>(V)) {
      const auto *F = llvm::dyn_cast<llvm::Function>(GV);
      if (GV->hasLocalLinkage() && !GV->isDeclaration() && !(F && isStep(*F)))
        if (C.Values.insert(GV).second)
          Work.push_back(GV);
      return;
    }
    if (const auto *K = llvm::dyn_cast<llvm::Constant>(V))
      if (SeenConstants.insert(K).second)
        for (const llvm::Value *Op : K->operands())
          Self(Op, Self);
  };
  C.Values.insert(&Root);
  while (!Work.empty()) {
    const llvm::GlobalValue *GV = Work.back();
    Work.pop_back();
    if (const auto *F = llvm::dyn_cast<llvm::Function>(GV)) {
      if (F != &Root && F->hasFnAttribute(llvm::Attribute::NoInline))
        C.Helpers.push_back(F);
      for (const llvm::BasicBlock &BB : *F)
        for (const llvm::Instruction &I : BB)
          for (const llvm::Value *Op : I.operands())
            Visit(Op, Visit);
    } else if (const auto *G = llvm::dyn_cast<llvm::GlobalVariable>(GV)) {
      if (G->hasInitializer())
        Visit(G->getInitializer(), Visit);
    }
  }
  return C;
}

} // namespace cuvil
