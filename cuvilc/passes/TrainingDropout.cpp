//===- TrainingDropout.cpp - Dropout with a run-time training_mode --------===//
//
// An inference Dropout (DropoutOp) is a view of its input: no bytes move.
// One whose training_mode (and ratio) only arrive at run time must compute
// its output, so it is rebuilt here as the same node with DropoutTrainingOp,
// which runs cuvil_k_dropout_f32 in place. Runs after fold-constants, so a
// training_mode that folds to a constant keeps the view.
//
//===----------------------------------------------------------------------===//
#include "ops/OpRegistry.h"
#include "passes/Pass.h"

namespace cuvil {

extern const OpDef DropoutOp;
extern const OpDef DropoutTrainingOp;

llvm::Error selectTrainingDropout(Graph &G) {
  std::vector<Node *> Dropouts;
  for (const auto &P : G.nodes())
    if (P->def() == &DropoutOp && !dropoutIsIdentity(*P))
      Dropouts.push_back(P.get());
  for (Node *N : Dropouts) {
    auto Attrs = N->attrs();
    Node *R = G.replaceNode(N, N->opType(), &DropoutTrainingOp, N->inputs());
    for (const auto &[Name, V] : Attrs)
      R->setAttr(Name, V);
  }
  return llvm::Error::success();
}

} // namespace cuvil
