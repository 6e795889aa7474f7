//===- FuseActivations.cpp - Relu/Clip into the Conv/Gemm epilogue --------===//
//
// An activation that is a clamp (OpDef::ActivationClamp: Relu, a Clip with
// constant bounds) and the only user of a result of an op with a clamp
// epilogue (OpDef::WithClamp: Conv, Gemm and their internal forms) becomes
// that epilogue: the producer is rebuilt as its fused form
// (cuvil.FusedConv, ...) with the bounds as attributes, saving a pass over
// the tensor.
//
//===----------------------------------------------------------------------===//
#include "ops/OpRegistry.h"
#include "passes/Pass.h"

#include <algorithm>

namespace cuvil {

bool fuseActivation(Graph &G, Node *A) {
  if (!A->def() || !A->def()->ActivationClamp)
    return false;
  Value *X = A->input(0);
  Node *P = X->producer();
  if (!P || !P->def() || !P->def()->WithClamp || X->users().size() != 1 ||
      G.isGraphOutput(X) || X->dtype() != DType::F32)
    return false;
  std::optional<std::pair<float, float>> B = A->def()->ActivationClamp(*A);
  if (!B)
    return false;
  if (P->def() != P->def()->WithClamp)
    P = rebuildAs(G, *P, *P->def()->WithClamp);
  auto [Lo, Hi] = fusedActivation(*P);
  setFusedActivation(*P, {std::max(Lo, B->first), std::min(Hi, B->second)});
  G.foldNodeInto(A, X);
  return true;
}

llvm::Error fuseActivations(Graph &G) {
  std::vector<Node *> Acts;
  for (const auto &N : G.nodes())
    if (N->def() && N->def()->ActivationClamp)
      Acts.push_back(N.get());
  for (Node *A : Acts)
    fuseActivation(G, A);
  G.eraseDeadValues();
  return llvm::Error::success();
}

llvm::Error eliminateDeadCode(Graph &G) {
  // One pass from the last node back: users come after their producers,
  // so a node is judged only after all its users. Use lists are updated as
  // nodes die; the nodes go in one sweep at the end (linear, not per node).
  // (Repeated until nothing dies, should a pass have left users first.)
  std::vector<Node *> Dead;
  do {
    Dead.clear();
    for (auto It = G.nodes().rbegin(); It != G.nodes().rend(); ++It) {
      Node *N = It->get();
      bool Live = std::any_of(
          N->outputs().begin(), N->outputs().end(), [&](const Value *V) {
            return !V->users().empty() || G.isGraphOutput(V);
          });
      if (Live)
        continue;
      Dead.push_back(N);
      for (size_t I = 0; I < N->numInputs(); ++I)
        N->setInput(I, nullptr); // drops the use
    }
    G.eraseNodes(Dead);
  } while (!Dead.empty());
  G.eraseDeadValues();
  return llvm::Error::success();
}

} // namespace cuvil
