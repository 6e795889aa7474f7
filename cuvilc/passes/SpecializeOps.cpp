//===- SpecializeOps.cpp - Ops whose folded inputs decide their kernel ----===//
//
// Some ops have a cheaper form that only applies when operands known at
// compile time allow it. Their record's Specialize hook names the record a
// node must become when they do not: an inference Dropout is a view of
// its input, but one whose training_mode (and ratio) only arrive at run
// time must compute its output, so it becomes DropoutTrainingOp, which
// runs cuvil_k_dropout_f32 in place. Runs after fold-constants, so an
// operand that folds to a constant keeps the cheaper form.
//
//===----------------------------------------------------------------------===//
#include "ops/OpRegistry.h"
#include "passes/Pass.h"

namespace cuvil {

llvm::Error specializeOps(Graph &G) {
  std::vector<std::pair<Node *, const OpDef *>> Rebuilds;
  for (const auto &P : G.nodes())
    if (const OpDef *D = P->def(); D && D->Specialize)
      if (const OpDef *To = D->Specialize(*P); To && To != D)
        Rebuilds.emplace_back(P.get(), To);
  for (auto [N, To] : Rebuilds) {
    auto Attrs = N->attrs();
    Node *R = G.replaceNode(N, N->opType(), To, N->inputs());
    for (const auto &[Name, V] : Attrs)
      R->setAttr(Name, V);
  }
  return llvm::Error::success();
}

} // namespace cuvil
