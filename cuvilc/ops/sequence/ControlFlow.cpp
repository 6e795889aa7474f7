//===- ControlFlow.cpp - ONNX If ------------------------------------------===//
//
// The importer inlines If's branches (subgraphs without formal inputs) into
// the graph before the node and appends their outputs to its inputs; the
// attributes then_branch / else_branch say where ({first input, count}).
// Both branches therefore run, and If copies the chosen results: that needs
// every output's shape to be the same in both branches (static shapes).
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"

namespace cuvil {
namespace {

// Each branch (a graph attribute in ONNX) as the importer inlined it:
// {first input, count}.
#define IF_ATTRS(X)                                                            \
  X(ThenBranch, "then_branch", Ints, {})                                       \
  X(ElseBranch, "else_branch", Ints, {})
CUVIL_OP_ATTRS(IfAttrs, IF_ATTRS)

/// The inputs holding the results of branch Attr (its {first input,
/// count} is Where), one per output of N.
llvm::Expected<std::vector<const Value *>>
branch(const Node &N, const char *Attr, const std::vector<int64_t> &Where) {
  if (Where.size() != 2)
    return nodeError(N,
                     "the {} subgraph was not inlined (a subgraph with "
                     "formal inputs is not supported)",
                     Attr);
  if (Where[1] != static_cast<int64_t>(N.outputs().size()))
    return nodeError(N, "the {} subgraph has {} outputs; the node has {}", Attr,
                     Where[1], N.outputs().size());
  std::vector<const Value *> Vs;
  for (int64_t I = 0; I < Where[1]; ++I) {
    const Value *V = N.input(Where[0] + I);
    const Value *Y = N.output(I);
    if (!V || V->dtype() != Y->dtype() || V->shape() != Y->shape())
      return nodeError(N,
                       "output {} of the {} subgraph does not have the "
                       "node's dtype and shape: branches of different "
                       "shapes are not supported",
                       I, Attr);
    Vs.push_back(V);
  }
  return Vs;
}

llvm::Error verify(const Node &N) {
  const Value *Cond = N.input(0);
  if (!Cond || Cond->dtype() != DType::Bool || Cond->numElements() != 1)
    return nodeError(N, "the condition must be a single bool");
  const IfAttrs A(N);
  if (auto T = branch(N, "then_branch", A.ThenBranch); !T)
    return T.takeError();
  return branch(N, "else_branch", A.ElseBranch).takeError();
}

llvm::Error lower(const Node &N, std::vector<KernelCall> &Calls) {
  const IfAttrs A(N);
  auto Then = branch(N, "then_branch", A.ThenBranch);
  if (!Then)
    return Then.takeError();
  auto Else = branch(N, "else_branch", A.ElseBranch);
  if (!Else)
    return Else.takeError();
  for (size_t I = 0; I < N.outputs().size(); ++I)
    Calls.push_back(kabi::SelectBytes{.cond = N.input(0),
                                      .a = (*Then)[I],
                                      .b = (*Else)[I],
                                      .y = N.output(I),
                                      .n = N.output(I)->byteSize()}
                        .call());
  return llvm::Error::success();
}

} // namespace

extern const OpDef IfOp = {.Name = "If",
                           .Verify = verify,
                           .Lower = lower,
                           .Macs = noMacs,
                           .Traits = NoTraits,
                           .Attrs = IfAttrs::Specs};

} // namespace cuvil
