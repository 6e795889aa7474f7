//===- Optional.cpp - ONNX OptionalHasElement and OptionalGetElement ------===//
//
// Only optional graph inputs reach these ops (the importer refuses other
// optional values): OptionalHasElement tests the caller's pointer
// (cuvil_k_is_present), OptionalGetElement is a view of the input.
//
//===----------------------------------------------------------------------===//
#include "ops/sequence/Optional.h"

#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"

#include <algorithm>
#include <unordered_map>

namespace cuvil {
namespace {

bool isOp(const Node *N, const char *Name) {
  return N && N->def() && std::string_view(N->def()->Name) == Name;
}

llvm::Error verifyHasElement(const Node &N) {
  const Value *X = N.input(0);
  if (!X || X->kind() != ValueKind::Input)
    return nodeError(N, "only an optional graph input can be tested (cuvil "
                        "has no optional values inside the graph)");
  const Value *Y = N.output(0);
  if (Y->dtype() != DType::Bool || Y->numElements() != 1)
    return nodeError(N, "the output must be a bool scalar");
  return llvm::Error::success();
}

llvm::Error lowerHasElement(const Node &N, std::vector<KernelCall> &Calls) {
  Calls.push_back(kabi::IsPresent{.x = N.input(0), .y = N.output(0)}.call());
  return llvm::Error::success();
}

llvm::Expected<ShapeList> scalarShape(const Node &) { return ShapeList{{}}; }

llvm::Error verifyGetElement(const Node &N) {
  const Value *X = N.input(0), *Y = N.output(0);
  if (!X || X->kind() != ValueKind::Input)
    return nodeError(N, "only an optional graph input can be read (cuvil "
                        "has no optional values inside the graph)");
  if (X->dtype() != Y->dtype() || X->shape() != Y->shape())
    return nodeError(N, "output '{}' must have the type and shape of '{}'",
                     Y->name(), X->name());
  return llvm::Error::success();
}

/// Whether the run condition {Cond, When} holds only when optional input X
/// is present: Cond is OptionalHasElement(X) (through Not, and Casts and
/// Identities of bools) and When asks for it true.
bool impliesPresent(const Value *Cond, bool When, const Value *X) {
  for (const Value *V = Cond; V;) {
    const Node *P = V->producer();
    if (isOp(P, "OptionalHasElement"))
      return When && P->input(0) == X;
    if (isOp(P, "Not")) {
      When = !When;
    } else if (!((isOp(P, "Cast") || isOp(P, "Identity")) && P->input(0) &&
                 P->input(0)->dtype() == DType::Bool)) {
      return false;
    }
    V = P->input(0);
  }
  return false;
}

} // namespace

std::vector<bool> optionalInputs(const Graph &G) {
  std::vector<bool> R;
  for (const Value *In : G.inputs())
    R.push_back(
        std::any_of(In->users().begin(), In->users().end(), [](const Node *U) {
          return isOp(U, "OptionalHasElement");
        }));
  return R;
}

llvm::Error checkOptionalReads(const Graph &G, const GraphLowering &L) {
  auto Optional = optionalInputs(G);
  // Each value whose bytes are an optional input's: the input and its
  // views (nodes come in topological order).
  std::unordered_map<const Value *, const Value *> Source;
  for (size_t I = 0; I < G.inputs().size(); ++I)
    if (Optional[I])
      Source.emplace(G.inputs()[I], G.inputs()[I]);
  if (Source.empty())
    return llvm::Error::success();
  const auto &Nodes = G.nodes();
  for (const auto &N : Nodes)
    if (N->def() && N->def()->has(View) && N->input(0))
      if (auto It = Source.find(N->input(0)); It != Source.end())
        for (const Value *Y : N->outputs())
          Source.emplace(Y, It->second);
  for (const Value *Out : G.outputs())
    if (auto It = Source.find(Out); It != Source.end())
      return makeError("output '{}' is the optional input '{}' itself, which "
                       "the caller may leave out: cuvil cannot return it",
                       Out->name(), It->second->name());
  for (size_t S = 0; S < Nodes.size(); ++S) {
    const Node &N = *Nodes[S];
    if (!L[S].HasCode || isOp(&N, "OptionalHasElement"))
      continue;
    auto Choice = N.def()->Branches ? N.def()->Branches(N) : std::nullopt;
    for (const Value *V : N.inputs()) {
      auto It = V ? Source.find(V) : Source.end();
      if (It == Source.end())
        continue;
      const Value *X = It->second;
      auto Guarded = [&](const RunCondition &C) {
        return impliesPresent(C.Cond, C.When, X);
      };
      if (std::any_of(L[S].RunsWhen.begin(), L[S].RunsWhen.end(), Guarded))
        continue;
      // An If copies an arm's result only when that arm is taken.
      bool ArmOnly = false;
      if (Choice)
        for (const BranchArm &A : Choice->Arms)
          if (std::find(A.Results.begin(), A.Results.end(), V) !=
                  A.Results.end() &&
              impliesPresent(Choice->Cond, A.When, X) &&
              std::none_of(Choice->Arms.begin(), Choice->Arms.end(),
                           [&](const BranchArm &B) {
                             return &B != &A && std::find(B.Results.begin(),
                                                          B.Results.end(),
                                                          V) != B.Results.end();
                           }))
            ArmOnly = true;
      if (ArmOnly)
        continue;
      return nodeError(N,
                       "reads the optional input '{}' even when the caller "
                       "leaves it out: cuvil compiles reads of an optional "
                       "input only in the branch of an If on "
                       "OptionalHasElement('{}') that runs when it is there",
                       X->name(), X->name());
    }
  }
  return llvm::Error::success();
}

extern const OpDef OptionalHasElementOp = {.Name = "OptionalHasElement",
                                           .Verify = verifyHasElement,
                                           .Lower = lowerHasElement,
                                           .Macs = noMacs,
                                           .Traits = NoTraits,
                                           .Shape = scalarShape};
extern const OpDef OptionalGetElementOp = {.Name = "OptionalGetElement",
                                           .Verify = verifyGetElement,
                                           .Lower = nullptr,
                                           .Macs = noMacs,
                                           .Traits = View,
                                           .Shape = shapeSameAsInput};

} // namespace cuvil
