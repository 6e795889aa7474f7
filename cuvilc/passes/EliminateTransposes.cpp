//===- EliminateTransposes.cpp - Transposes that need no copy -------------===//
//
// A Transpose is a copy through strided loads, a pass over its whole
// tensor. Two kinds need no copy:
//
//  - A Transpose of a Transpose: the outer one reads the inner one's input
//    with the composed permutation (perm'[i] = inner[outer[i]]); a pair
//    that undoes itself composes to the identity. The inner one goes when
//    nothing else reads it.
//  - A Transpose that keeps the order of the axes of size greater than 1,
//    moving only axes of size 1 (the identity, or NHWC <-> NCHW of a 1x1
//    map after global pooling): its output has the input's bytes in the
//    input's order, so it becomes a Reshape, a view of its input. Not in
//    a build for a range of a dimension, where a size of 1 may be one
//    value of many.
//
// Models exported through NHWC frameworks carry both kinds around their
// convolutions. Constant Transposes are already folded (fold-constants).
//
//===----------------------------------------------------------------------===//
#include "ops/OpRegistry.h"
#include "passes/Pass.h"

namespace cuvil {

// The op it rebuilds a Transpose of unit axes as; the Transposes are the
// ops with the Permutes trait.
extern const OpDef ReshapeOp;

namespace {

/// Whether the permutation P of X's axes keeps the order of every axis of
/// size greater than 1 (then the transpose moves no element).
bool movesOnlyUnitAxes(const Value &X, const std::vector<int64_t> &P) {
  int64_t Last = -1;
  for (int64_t A : P) {
    if (X.shape()[A] == 1)
      continue;
    if (A < Last)
      return false;
    Last = A;
  }
  return true;
}

bool permutes(const Node &N) { return N.def() && N.def()->has(Permutes); }

} // namespace

llvm::Error eliminateTransposes(Graph &G, bool SizesVary) {
  std::vector<Node *> Transposes;
  for (const auto &N : G.nodes())
    if (permutes(*N))
      Transposes.push_back(N.get());
  // In node order: an inner Transpose has already composed with its own
  // producer when the outer one reaches it.
  for (Node *N : Transposes) {
    Value *X = N->input(0);
    if (!X || !X->hasStaticShape())
      continue;
    std::vector<int64_t> P = transposePerm(*N);
    if (Node *In = X->producer(); In && permutes(*In)) {
      std::vector<int64_t> Q = transposePerm(*In), R(P.size());
      for (size_t I = 0; I < P.size(); ++I)
        R[I] = Q[P[I]];
      // The composed node does the inner one's work when nothing else
      // reads its result: it takes over its origin for --dump-ir.
      if (X->users().size() == 1 && !G.isGraphOutput(X))
        N->origin().merge(In->origin());
      N->setInput(0, In->input(0));
      N->setAttr("perm", R);
      P = std::move(R);
      X = N->input(0);
    }
    if (!SizesVary && movesOnlyUnitAxes(*X, P))
      G.replaceNode(N, "Reshape", &ReshapeOp, {X});
  }
  // Inner Transposes nothing reads any more.
  std::vector<Node *> Dead;
  for (const auto &N : G.nodes())
    if (permutes(*N) && N->output(0)->users().empty() &&
        !G.isGraphOutput(N->output(0)))
      Dead.push_back(N.get());
  for (Node *N : Dead)
    G.eraseNode(N);
  G.eraseDeadValues();
  return llvm::Error::success();
}

} // namespace cuvil
