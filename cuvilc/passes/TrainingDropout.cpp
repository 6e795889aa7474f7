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
  std::vector<Node *> Order;
  bool Changed = false;
  for (const auto &P : G.nodes())
    Order.push_back(P.get());
  for (Node *&N : Order) {
    if (N->def() != &DropoutOp || dropoutIsIdentity(*N))
      continue;
    // Node definitions are fixed at creation: a new node takes over the
    // old one's inputs, outputs (by name), attributes and place.
    std::vector<Value *> Outs, NewOuts;
    for (Value *O : N->outputs()) {
      Outs.push_back(O);
      NewOuts.push_back(G.addValue(O->name() + ".training", O->dtype(),
                                   O->shape(), ValueKind::Intermediate));
    }
    Node *R = G.addNode(N->opType(), N->name(), &DropoutTrainingOp,
                        N->inputs(), NewOuts);
    R->setOpset(N->opset());
    for (const auto &[Name, V] : N->attrs())
      R->setAttr(Name, V);
    R->origin().merge(N->origin());
    for (size_t I = 0; I < Outs.size(); ++I)
      G.replaceAllUses(Outs[I], NewOuts[I]);
    G.eraseNode(N);
    N = R;
    Changed = true;
  }
  if (!Changed)
    return llvm::Error::success();
  G.reorderNodes(Order);
  G.eraseDeadValues();
  // The old outputs are gone: the new ones take their (ONNX) names.
  for (Node *N : Order)
    if (N->def() == &DropoutTrainingOp)
      for (Value *O : N->outputs()) {
        const std::string &Name = O->name();
        if (Name.size() > 9 && Name.ends_with(".training"))
          O->setName(Name.substr(0, Name.size() - 9));
      }
  return llvm::Error::success();
}

} // namespace cuvil
