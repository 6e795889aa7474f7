//===- FuseResidual.cpp - Residual Add into the Conv epilogue -------------===//
//
// y = Add(Conv(x), r) (an op with the Sum trait), where the Conv's result has
// no other use and r has the result's shape, becomes one Conv with r as an
// extra input (position 3): the packed kernel adds r to each output before its
// activation, so the sum is never a separate pass over memory and the Conv's
// own result is never stored. A Relu or Clip after the Add then fuses as the
// activation. The skip connections of ResNets and of MobileNetV2's
// inverted residuals take this form.
//
// Only ops whose kernel has that epilogue (OpDef::TakesResidual: the
// cuvil.PackedConv that pack-weights made of a group-1 Conv) take it, and
// only those without an activation (it would have to apply before the
// Add). When both operands of the Add are such Convs, the later one in the
// schedule takes the other's result, which is then already computed.
//
//===----------------------------------------------------------------------===//
#include "ops/OpRegistry.h"
#include "passes/Pass.h"

#include <unordered_map>

namespace cuvil {
namespace {

bool canTakeResidual(const Graph &G, const Value *X) {
  const Node *P = X->producer();
  return P && P->def() && P->def()->TakesResidual && P->numInputs() <= 3 &&
         !hasFusedActivation(*P) && X->users().size() == 1 &&
         !G.isGraphOutput(X) && X->dtype() == DType::F32;
}

} // namespace

llvm::Error fuseResidualAdds(Graph &G) {
  std::unordered_map<const Node *, size_t> Order;
  std::vector<Node *> Adds;
  for (const auto &N : G.nodes()) {
    Order[N.get()] = Order.size();
    if (N->def() && N->def()->has(Sum))
      Adds.push_back(N.get());
  }
  for (Node *A : Adds) {
    if (A->numInputs() != 2)
      continue;
    const Value *Y = A->output(0);
    Value *Best = nullptr, *Res = nullptr;
    for (size_t I = 0; I < 2; ++I) {
      Value *X = A->input(I), *R = A->input(1 - I);
      if (!X || !R || X == R || X->shape() != Y->shape() ||
          R->shape() != Y->shape() || R->dtype() != DType::F32 ||
          !canTakeResidual(G, X))
        continue;
      // r must be computed before the Conv runs.
      size_t At = Order.at(X->producer());
      if (R->producer() && Order.at(R->producer()) > At)
        continue;
      if (!Best || At > Order.at(Best->producer())) {
        Best = X;
        Res = R;
      }
    }
    if (!Best)
      continue;
    Node *P = Best->producer();
    while (P->numInputs() < 3)
      G.addNodeInput(P, nullptr);
    G.addNodeInput(P, Res);
    G.foldNodeInto(A, Best);
    // A Relu/Clip of the sum is now one of the Conv's result.
    if (Best->users().size() == 1)
      fuseActivation(G, Best->users()[0]);
  }
  G.eraseDeadValues();
  return llvm::Error::success();
}

} // namespace cuvil
