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
//   2a. replaces a node choosing between inlined branches whose condition
//      is now a constant (an If on a shape test, once --dim fixed the
//      shapes) by the taken branch: the other branch's nodes die, and what
//      they could not fold or shape is never reported;
//   3. resolves the dimensions only a known shape downstream fixes (a Range
//      of a run-time limit feeding the declared output through element-wise
//      ops), see resolveFromDeclaredShapes;
//   4. merges equal small bool and int64 constants (conditions, indices,
//      shapes: what every copy of an unrolled loop body folds to again),
//      so the weights hold each once. Float and quantized tensors are left
//      alone: they are weights, and two that are equal in one training run
//      must stay two for a retrained blob of the same structure.
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

#include <algorithm>
#include <map>
#include <tuple>

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

/// When N's condition is a constant (OpDef::Branches), its outputs become
/// the taken branch's results and N goes into Dead. A result that is a
/// graph output keeps its name and position through an Identity (a view,
/// or a copy when the result is an input or a constant).
bool takeKnownBranch(Graph &G, Node &N, std::vector<Node *> &Dead) {
  if (!N.def() || !N.def()->Branches)
    return false;
  auto C = N.def()->Branches(N);
  if (!C || !C->Cond->isConstant() || C->Cond->data().empty())
    return false;
  bool Cond = C->Cond->data()[0] != 0;
  auto Taken = std::find_if(C->Arms.begin(), C->Arms.end(),
                            [&](const BranchArm &A) { return A.When == Cond; });
  if (Taken == C->Arms.end())
    return false;
  for (size_t I = 0; I < N.outputs().size(); ++I) {
    Value *Old = N.output(I), *New = Taken->Results[I];
    if (!G.isGraphOutput(Old)) {
      G.replaceAllUses(Old, New);
      continue;
    }
    // Node users read New; the graph output stays a value of its own name,
    // produced after every node (only the graph reads it).
    for (Node *U : std::vector<Node *>(Old->users()))
      for (size_t J = 0; J < U->numInputs(); ++J)
        if (U->input(J) == Old)
          U->setInput(J, New);
    Value *Out = G.addValue(Old->name(), New->dtype(), New->shape(),
                            ValueKind::Intermediate);
    Node *Id = G.addNode("Identity", N.name() + "/" + Old->name(),
                         lookupOp("Identity"), {New}, {Out});
    Id->origin() = N.origin();
    Id->setOpset(N.opset());
    G.replaceAllUses(Old, Out);
  }
  Dead.push_back(&N);
  return true;
}

/// Step 4: each bool or int64 constant of at most 64 elements that equals
/// an earlier one (type, shape, bytes) is replaced by it, unless it is a
/// graph output.
void mergeStructuralConstants(Graph &G) {
  std::map<std::tuple<DType, std::vector<int64_t>, std::vector<uint8_t>>,
           Value *>
      First;
  std::vector<std::pair<Value *, Value *>> Merges;
  for (const auto &V : G.values()) {
    if (!V->isConstant() || V->data().empty() || !V->hasStaticShape() ||
        V->numElements() > 64 || G.isGraphOutput(V.get()) ||
        (V->dtype() != DType::Bool && V->dtype() != DType::I64))
      continue;
    auto [It, New] =
        First.try_emplace({V->dtype(), V->shape(), V->data()}, V.get());
    if (!New)
      Merges.push_back({V.get(), It->second});
  }
  for (auto [Dup, Kept] : Merges)
    G.replaceAllUses(Dup, Kept);
  if (!Merges.empty())
    G.eraseDeadValues();
}

} // namespace

llvm::Error foldConstants(Graph &G, bool MergeConstants) {
  std::vector<Node *> Order;
  for (const auto &N : G.nodes())
    Order.push_back(N.get());
  std::vector<Node *> Dead;
  // A node that cannot be evaluated may sit in a branch a known condition
  // leaves out: its error counts only if it is still needed at the end.
  std::map<unsigned, llvm::Error> Failed;
  for (Node *N : Order) {
    if (takeKnownBranch(G, *N, Dead))
      continue;
    auto Folded = tryFold(G, *N, Dead);
    if (!Folded) {
      Failed.emplace(N->id(), Folded.takeError());
      continue;
    }
    if (!*Folded)
      resolveShapes(*N);
  }
  G.eraseNodes(Dead);
  if (MergeConstants)
    mergeStructuralConstants(G);
  // Dimensions only the declared outputs determine, then what follows them.
  resolveFromDeclaredShapes(G);
  for (const auto &N : G.nodes())
    resolveShapes(*N);
  llvm::Error All = eliminateDeadCode(G);
  for (const auto &N : G.nodes())
    if (auto It = Failed.find(N->id()); It != Failed.end())
      All = llvm::joinErrors(std::move(All), std::move(It->second));
  for (auto &[Id, E] : Failed)
    llvm::consumeError(std::move(E));
  return All;
}

} // namespace cuvil
