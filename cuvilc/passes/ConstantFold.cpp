//===- ConstantFold.cpp - Compile-time evaluation and shape resolution ----===//
//
// fold-constants walks the graph in order and
//   1. evaluates on the host every node whose inputs are all constants (and
//      Shape/Size of any value with a static shape), replacing its outputs
//      by constants: the Shape -> Gather -> Unsqueeze -> Concat chains that
//      compute a Reshape's shape, ConstantOfShape, Range, Cast and small
//      integer arithmetic disappear;
//   2. computes the output shapes ONNX shape inference left unknown from
//      the now-constant operands (Reshape's shape, Expand, Tile, ...) and
//      propagates them through the ops after them;
//   3. resolves the dimensions only a known shape downstream fixes (a Range
//      of a run-time limit feeding the declared output through element-wise
//      ops), see resolveFromDeclaredShapes.
// Each op's evaluator is its fold hook (OpDef::Fold) and its shape rule its
// shape hook (OpDef::Shape), both in the op's own file (shapes from
// ops/ShapeRules, shared with the ops' lowering); this pass only drives
// them. Folded constants have no origin; nodes left dead are
// removed. Values whose shape is still unknown are reported by
// verification, naming the node.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "ops/HostTensor.h"
#include "ops/OpRegistry.h"
#include "passes/Pass.h"
#include "passes/ShapeResolution.h"

namespace cuvil {
namespace {

/// Evaluates N if its rule allows and its inputs are known; true if the
/// node was replaced by constants (its uses rewired; N goes into Dead, for
/// one sweep at the end: erasing nodes one by one is quadratic).
llvm::Expected<bool> tryFold(Graph &G, Node &N, std::vector<Node *> &Dead) {
  const OpDef *Def = N.def();
  if (!Def || !Def->Fold || N.numInputs() == 0)
    return false;
  std::vector<HostTensor> Ins(N.numInputs());
  HostInputs In(N.numInputs(), nullptr);
  for (size_t I = 0; I < N.numInputs(); ++I) {
    const Value *V = N.input(I);
    if (!V)
      continue;
    bool ShapeOnly = Def->FoldShapeOnly && I == 0;
    if (!V->hasStaticShape() || (!ShapeOnly && !V->isConstant()))
      return false;
    Ins[I] = {V->dtype(), V->shape(),
              ShapeOnly ? std::vector<uint8_t>() : V->data()};
    In[I] = &Ins[I];
  }
  if (!In[0])
    return false;
  std::vector<HostTensor> Outs(N.outputs().size());
  for (size_t I = 0; I < Outs.size(); ++I)
    Outs[I].Ty = N.output(I)->dtype();
  auto Done = Def->Fold(N, In, Outs);
  if (!Done || !*Done)
    return Done;
  for (size_t I = 0; I < Outs.size(); ++I) {
    Value *Y = N.output(I);
    if (Y->shape() != std::vector<int64_t>{UnknownRank} &&
        Y->rank() != Outs[I].Shape.size())
      return nodeError(N,
                       "output '{}' has rank {}, but evaluating the node "
                       "gives rank {}",
                       Y->name(), Y->rank(), Outs[I].Shape.size());
  }
  std::vector<Value *> Old = N.outputs();
  Dead.push_back(&N);
  for (size_t I = 0; I < Outs.size(); ++I) {
    Value *C = G.addValue(Old[I]->name(), Outs[I].Ty, Outs[I].Shape,
                          ValueKind::Constant);
    C->setData(std::move(Outs[I].Data));
    G.replaceAllUses(Old[I], C);
  }
  return true;
}

} // namespace

llvm::Error foldConstants(Graph &G) {
  std::vector<Node *> Order;
  for (const auto &N : G.nodes())
    Order.push_back(N.get());
  std::vector<Node *> Dead;
  for (Node *N : Order) {
    auto Folded = tryFold(G, *N, Dead);
    if (!Folded) {
      G.eraseNodes(Dead);
      return Folded.takeError();
    }
    if (!*Folded)
      resolveShapes(*N);
  }
  G.eraseNodes(Dead);
  // Dimensions only the declared outputs determine, then what follows them.
  resolveFromDeclaredShapes(G);
  for (const auto &N : G.nodes())
    resolveShapes(*N);
  return eliminateDeadCode(G);
}

} // namespace cuvil
