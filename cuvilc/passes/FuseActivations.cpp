//===- FuseActivations.cpp - Relu/Clip into the Conv/Gemm epilogue --------===//
//
// A Relu or a Clip with constant bounds that is the only user of a Conv or
// Gemm result becomes a clamp in that kernel's epilogue (attributes
// cuvil.act_lo / cuvil.act_hi), saving a pass over the tensor.
//
//===----------------------------------------------------------------------===//
#include "ops/OpRegistry.h"
#include "passes/Pass.h"

#include <algorithm>

namespace cuvil {

bool fuseActivation(Graph &G, Node *A) {
  if (A->opType() != "Relu" && A->opType() != "Clip")
    return false;
  Value *X = A->input(0);
  Node *P = X->producer();
  if (!P || (P->opType() != "Conv" && P->opType() != "Gemm") ||
      X->users().size() != 1 || G.isGraphOutput(X) ||
      X->dtype() != DType::F32)
    return false;
  std::pair<float, float> B{0.0f, std::numeric_limits<float>::infinity()};
  if (A->opType() == "Clip") {
    auto CB = clipBounds(*A);
    if (!CB) {
      llvm::consumeError(CB.takeError()); // verification reports it
      return false;
    }
    B = *CB;
  }
  auto [Lo, Hi] = fusedActivation(*P);
  P->setAttr("cuvil.act_lo", std::max(Lo, B.first));
  P->setAttr("cuvil.act_hi", std::min(Hi, B.second));
  G.foldNodeInto(A, X);
  return true;
}

llvm::Error fuseActivations(Graph &G) {
  std::vector<Node *> Acts;
  for (const auto &N : G.nodes())
    if (N->opType() == "Relu" || N->opType() == "Clip")
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
