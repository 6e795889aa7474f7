//===- ControlFlow.cpp - ONNX If ------------------------------------------===//
//
// The importer inlines If's branches (subgraphs without formal inputs) into
// the graph before the node and appends their outputs to its inputs; the
// attributes then_branch / else_branch say where ({first input, count}).
// The op's Branches hook tells the rest of the compiler which inputs are
// which branch's results:
//   - fold-constants replaces an If whose condition is known at compile time
//     (a shape test once --dim fixes the shapes) by its taken branch; the
//     other branch's nodes die, whatever their shapes;
//   - for a run-time condition, lowering guards the nodes only one branch
//     needs (ops/BranchGuards.cpp), so only the taken branch runs, and If
//     copies its results. Both branches then need the node's output shapes,
//     except for an output that is a graph output and nothing else reads:
//     it is planned for the larger branch, and run records which branch
//     wrote it, whose shape cuvil_<name>_output_shape() then gives
//     (branchShapedOutputs).
//
//===----------------------------------------------------------------------===//
#include "ops/sequence/ControlFlow.h"

#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace cuvil {
extern const OpDef IfOp;
namespace {

// Each branch (a graph attribute in ONNX) as the importer inlined it:
// {first input, count}.
#define IF_ATTRS(X)                                                            \
  X(ThenBranch, "then_branch", Ints, {})                                       \
  X(ElseBranch, "else_branch", Ints, {})
CUVIL_OP_ATTRS(IfAttrs, IF_ATTRS)

/// "[1, 32]"; an unknown dimension is "?", an unknown rank "[...]".
std::string shapeText(const std::vector<int64_t> &S) {
  if (S == std::vector<int64_t>{UnknownRank})
    return "[...]";
  std::vector<std::string> Dims;
  for (int64_t D : S)
    Dims.push_back(D < 0 ? "?" : std::to_string(D));
  return fmt::format("[{}]", fmt::join(Dims, ", "));
}

/// The inputs holding the results of branch Attr (its {first input,
/// count} is Where), one per output of N.
llvm::Expected<std::vector<Value *>> branch(const Node &N, const char *Attr,
                                            const std::vector<int64_t> &Where) {
  if (Where.size() != 2)
    return nodeError(N,
                     "the {} subgraph was not inlined (a subgraph with "
                     "formal inputs is not supported)",
                     Attr);
  if (Where[1] != static_cast<int64_t>(N.outputs().size()) || Where[0] < 1 ||
      Where[0] + Where[1] > static_cast<int64_t>(N.numInputs()))
    return nodeError(N, "the {} subgraph has {} outputs; the node has {}", Attr,
                     Where[1], N.outputs().size());
  std::vector<Value *> Vs;
  for (int64_t I = 0; I < Where[1]; ++I) {
    Value *V = N.input(Where[0] + I);
    if (!V)
      return nodeError(N, "output {} of the {} subgraph is missing", I, Attr);
    Vs.push_back(V);
  }
  return Vs;
}

std::optional<BranchChoice> branches(const Node &N) {
  const IfAttrs A(N);
  auto Then = branch(N, "then_branch", A.ThenBranch);
  auto Else = branch(N, "else_branch", A.ElseBranch);
  if (!Then || !Else || !N.input(0)) {
    llvm::consumeError(Then.takeError());
    llvm::consumeError(Else.takeError());
    return std::nullopt;
  }
  return BranchChoice{.Cond = N.input(0),
                      .Arms = {{.When = true, .Results = std::move(*Then)},
                               {.When = false, .Results = std::move(*Else)}}};
}

/// The shape of the larger of two branch results (by bytes; the first
/// when they tie).
const Value *larger(const Value *T, const Value *E) {
  return E->byteSize() > T->byteSize() ? E : T;
}

/// Each output's shape: both branches' when they agree (ONNX 1.12's
/// inference leaves an If's output unknown when a branch's shape has a
/// symbol in it), else the larger one's (verifyControlFlowOp accepts that
/// only for a graph output nothing else reads).
llvm::Expected<ShapeList> shape(const Node &N) {
  auto C = branches(N);
  if (!C)
    return nodeError(N, "the branches were not inlined");
  ShapeList S;
  for (size_t I = 0; I < N.outputs().size(); ++I)
    S.push_back(larger(C->Arms[0].Results[I], C->Arms[1].Results[I])->shape());
  return S;
}

llvm::Error verifyControlFlowOp(const Node &N) {
  const Value *Cond = N.input(0);
  if (!Cond || Cond->dtype() != DType::Bool || Cond->numElements() != 1)
    return nodeError(N, "the condition must be a single bool");
  const IfAttrs A(N);
  auto Then = branch(N, "then_branch", A.ThenBranch);
  if (!Then)
    return Then.takeError();
  auto Else = branch(N, "else_branch", A.ElseBranch);
  if (!Else)
    return Else.takeError();
  for (size_t I = 0; I < N.outputs().size(); ++I) {
    const Value *T = (*Then)[I], *E = (*Else)[I], *Y = N.output(I);
    for (const auto &[Attr, V] :
         {std::pair{"then_branch", T}, {"else_branch", E}})
      if (V->dtype() != Y->dtype())
        return nodeError(N,
                         "output {} of the {} subgraph is {}, the node's "
                         "output '{}' {}",
                         I, Attr, dtypeName(V->dtype()), Y->name(),
                         dtypeName(Y->dtype()));
    if (T->shape() == Y->shape() && E->shape() == Y->shape())
      continue;
    // Shapes that differ: the output is planned for the larger branch,
    // which only a graph output can be (its caller asks run for the
    // shape); a node reading it would need both shapes.
    if (!Y->users().empty())
      return nodeError(
          N,
          "output {} has shape {} in the then branch and {} in the else "
          "branch, and node '{}' reads it: with a condition known only at "
          "run time, branches of different shapes can only give a graph "
          "output (whose shape run reports); a condition that --dim or "
          "constant inputs decide is resolved at compile time",
          I, shapeText(T->shape()), shapeText(E->shape()),
          Y->users().front()->name());
    if (Y->shape() != larger(T, E)->shape())
      return nodeError(N,
                       "output '{}' has shape {}, not that of the larger "
                       "branch, {}",
                       Y->name(), shapeText(Y->shape()),
                       shapeText(larger(T, E)->shape()));
  }
  return llvm::Error::success();
}

llvm::Error lowerControlFlowOp(const Node &N, std::vector<KernelCall> &Calls) {
  auto C = branches(N);
  if (!C)
    return nodeError(N, "the branches were not inlined");
  for (size_t I = 0; I < N.outputs().size(); ++I)
    Calls.push_back(kabi::SelectBytes{.cond = N.input(0),
                                      .a = C->Arms[0].Results[I],
                                      .b = C->Arms[1].Results[I],
                                      .y = N.output(I),
                                      .na = C->Arms[0].Results[I]->byteSize(),
                                      .nb = C->Arms[1].Results[I]->byteSize()}
                        .call());
  return llvm::Error::success();
}

} // namespace

std::vector<BranchShapedOutput> branchShapedOutputs(const Graph &G) {
  std::vector<BranchShapedOutput> R;
  for (size_t I = 0; I < G.outputs().size(); ++I) {
    const Value *Y = G.outputs()[I];
    const Node *P = Y->producer();
    if (!P || P->def() != &IfOp)
      continue;
    auto C = branches(*P);
    if (!C)
      continue;
    size_t K = 0;
    while (P->output(K) != Y)
      ++K;
    const Value *T = C->Arms[0].Results[K], *E = C->Arms[1].Results[K];
    if (T->shape() != E->shape())
      R.push_back(
          {I, C->Cond, T->shape(), E->shape(), T->byteSize(), E->byteSize()});
  }
  return R;
}

extern const OpDef IfOp = {.Name = "If",
                           .Verify = verifyControlFlowOp,
                           .Lower = lowerControlFlowOp,
                           .Macs = noMacs,
                           .Traits = NoTraits,
                           .Shape = shape,
                           .Attrs = IfAttrs::Specs,
                           .Branches = branches};

} // namespace cuvil
