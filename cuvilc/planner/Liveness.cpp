//===- Liveness.cpp -------------------------------------------------------===//
#include "planner/Liveness.h"

#include "ir/CheckedMath.h"
#include "ops/BranchGuards.h"
#include "ops/OpRegistry.h"

#include <algorithm>

namespace cuvil {

bool Liveness::canRunInPlace(const Node &N, unsigned Step) const {
  const Value *In = N.input(0), *Out = N.output(0);
  if (!In || In->byteSize() != Out->byteSize() || G.isGraphOutput(In))
    return false;
  Alias A = aliasOf(In);
  if (A.Offset != 0 || !inArena(A.Root))
    return false;
  // Every value stored in the root's buffer must be dead after this step.
  if (auto It = RootLastUse.find(A.Root);
      It != RootLastUse.end() && It->second > Step)
    return false;
  return !(LastUse.count(A.Root) && LastUse.at(A.Root) > Step);
}

/// A concatenation (trait ConcatOfInputs) whose inputs are laid out one
/// after the other in its output (everything before the axis has extent 1)
/// lets each input's producer write straight into its slice; the copies
/// then vanish. Only when every slice is a multiple of the DMA alignment,
/// so slices stay aligned.
void Liveness::concatInPlace(const Node &N) {
  const Value *Y = N.output(0);
  if (!N.def()->has(OpTrait::ConcatOfInputs) || !inArena(Y) || Y->rank() == 0)
    return;
  int64_t Axis = concatAxis(N);
  if (Axis < 0)
    Axis += Y->rank();
  for (int64_t D = 0; D < Axis; ++D)
    if (Y->shape()[D] != 1)
      return;
  std::vector<const Value *> Seen;
  for (const Value *X : N.inputs()) {
    // Every slice must start and end on the DMA alignment.
    bool Own = X && X->byteSize() % Plan.Alignment == 0 &&
               X->kind() == ValueKind::Intermediate && X->producer() &&
               X->users().size() == 1 && !G.isGraphOutput(X) &&
               aliasOf(X).Root == X &&
               !X->producer()->def()->has(OpTrait::View) &&
               std::find(Seen.begin(), Seen.end(), X) == Seen.end();
    if (!Own)
      return;
    Seen.push_back(X);
  }
  // Y itself may already sit in an outer concat's slice.
  Alias Base = aliasOf(Y);
  int64_t Offset = Base.Offset;
  for (const Value *X : N.inputs()) {
    setAlias(X, {Base.Root, Offset});
    Offset += X->byteSize();
  }
}

void Liveness::run() {
  const auto &Nodes = G.nodes();
  for (unsigned S = 0; S < Nodes.size(); ++S)
    for (const Value *V : Nodes[S]->inputs())
      if (V)
        LastUse[V] = S;
  for (unsigned I = 0; I < G.outputs().size(); ++I)
    OutputOf.emplace(G.outputs()[I], I);

  // Concats first (in reverse, so a concat feeding a concat nests): their
  // inputs' producers must know where to write.
  if (ConcatSlices)
    for (auto It = Nodes.rbegin(); It != Nodes.rend(); ++It)
      concatInPlace(**It);

  for (unsigned S = 0; S < Nodes.size(); ++S) {
    const Node &N = *Nodes[S];
    assert(N.def() && "planning an unverified graph");
    Placement P = N.def()->place();
    const Value *Out = N.outputs().empty() ? nullptr : N.output(0);
    if (!Out || Aliases.count(Out))
      continue;
    const Value *In = N.input(0);
    if (P == Placement::View) {
      Alias A = aliasOf(In);
      if (!OutputOf.count(Out) || inArena(A.Root)) {
        setAlias(Out, A);
        // An output view of an arena buffer moves that buffer into the
        // caller's output.
        if (OutputOf.count(Out) && A.Offset == 0 &&
            A.Root->byteSize() == Out->byteSize())
          OutputOf.emplace(A.Root, OutputOf[Out]);
        else if (OutputOf.count(Out))
          Plan.OutputCopies.push_back({OutputOf[Out], In});
      } else {
        // A view of an input, a constant or another output: copied out.
        Plan.OutputCopies.push_back({OutputOf[Out], In});
        setAlias(Out, A);
      }
    } else if (P == Placement::InPlace && canRunInPlace(N, S)) {
      Alias A = aliasOf(In);
      setAlias(Out, A);
      if (OutputOf.count(Out))
        OutputOf.emplace(A.Root, OutputOf[Out]);
    }
  }

  // Graph outputs no node writes directly (inputs, constants, values bound
  // to an earlier output) are copied at the end.
  for (unsigned I = 0; I < G.outputs().size(); ++I) {
    const Value *O = G.outputs()[I];
    Alias A = aliasOf(O);
    bool Direct = A.Root->kind() == ValueKind::Intermediate &&
                  OutputOf.count(A.Root) && OutputOf.at(A.Root) == I &&
                  A.Offset == 0;
    bool Copied =
        std::any_of(Plan.OutputCopies.begin(), Plan.OutputCopies.end(),
                    [&](const auto &C) { return C.first == I; });
    if (!Direct && !Copied)
      Plan.OutputCopies.push_back({I, O});
  }

  // Buffers: one per arena root, live from the first definition of any of
  // its values to the last use of any of them.
  for (unsigned S = 0; S < Nodes.size(); ++S)
    for (const Value *V : Nodes[S]->outputs()) {
      const Value *R = aliasOf(V).Root;
      if (!inArena(R))
        continue;
      auto [It, New] = BufferOf.try_emplace(R, Plan.Buffers.size());
      if (New) {
        ArenaBuffer B;
        B.Root = R;
        B.Bytes = R->byteSize();
        B.Size = alignUp(B.Bytes, Plan.Alignment) + Plan.GuardBytes;
        B.First = B.Last = S;
        Plan.Buffers.push_back(B);
      }
      ArenaBuffer &B = Plan.Buffers[It->second];
      B.First = std::min(B.First, S);
      B.Last = std::max(B.Last, S);
      B.Values.push_back(V);
    }
  for (ArenaBuffer &B : Plan.Buffers) // the root first
    std::stable_partition(B.Values.begin(), B.Values.end(),
                          [&](const Value *V) { return V == B.Root; });
  auto Extend = [&](const Value *V, unsigned S) {
    auto It = BufferOf.find(aliasOf(V).Root);
    if (It != BufferOf.end())
      Plan.Buffers[It->second].Last =
          std::max(Plan.Buffers[It->second].Last, S);
  };
  for (unsigned S = 0; S < Nodes.size(); ++S)
    for (const Value *V : Nodes[S]->inputs())
      if (V)
        Extend(V, S);
  for (const auto &[I, V] : Plan.OutputCopies) // copies run after the nodes
    Extend(V, Nodes.size());
  if (ShareBranches)
    branchGuards();
}

void Liveness::branchGuards() {
  // The conditions the generated code guards each node by (the lowering
  // takes the same ones), so two buffers of opposite branches are never
  // written in one run.
  auto When = readyConditions(G);
  bool Any = std::any_of(When.begin(), When.end(),
                         [](const auto &W) { return !W.empty(); });
  if (!Any)
    return;
  std::unordered_map<const Node *, size_t> Step;
  for (size_t S = 0; S < G.nodes().size(); ++S)
    Step.emplace(G.nodes()[S].get(), S);
  for (ArenaBuffer &B : Plan.Buffers) {
    // Only what every value stored in the buffer is computed under: one
    // value computed in every run (an in-place write after the If, say)
    // makes the buffer unconditional.
    bool FirstWriter = true;
    for (const Value *V : B.Values) {
      std::vector<std::pair<const Value *, bool>> Mine;
      for (const RunCondition &C : When[Step.at(V->producer())])
        Mine.push_back({C.Cond, C.When});
      if (FirstWriter)
        B.RunsWhen = std::move(Mine);
      else
        std::erase_if(B.RunsWhen, [&](const auto &C) {
          return std::find(Mine.begin(), Mine.end(), C) == Mine.end();
        });
      FirstWriter = false;
    }
  }
}

} // namespace cuvil
