//===- MemoryPlan.cpp - Liveness, aliasing and offset assignment ----------===//
#include "planner/MemoryPlan.h"

#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

#include <algorithm>
#include <cassert>
#include <unordered_map>

namespace cuvil {

const Location &MemoryPlan::at(const Value *V) const {
  auto It = Locations.find(V->id());
  assert(It != Locations.end() && "value has no location");
  return It->second;
}

double MemoryPlan::efficiency() const {
  return LowerBound ? static_cast<double>(ArenaSize) / LowerBound : 1.0;
}

namespace {

int64_t alignUp(int64_t X, int64_t A) { return (X + A - 1) / A * A; }

/// Offset assignment: places buffers one at a time, in the given order, at
/// the lowest offset that does not overlap a placed buffer with an
/// overlapping live range (best fit among the gaps).
int64_t assignOffsets(std::vector<ArenaBuffer> &Bufs,
                      const std::vector<size_t> &Order) {
  std::vector<size_t> Placed;
  int64_t Total = 0;
  for (size_t I : Order) {
    ArenaBuffer &B = Bufs[I];
    // Intervals already taken during B's lifetime, sorted by offset.
    std::vector<std::pair<int64_t, int64_t>> Taken;
    for (size_t J : Placed) {
      const ArenaBuffer &P = Bufs[J];
      if (P.First <= B.Last && B.First <= P.Last)
        Taken.push_back({P.Offset, P.Offset + P.Size});
    }
    std::sort(Taken.begin(), Taken.end());
    int64_t Best = -1, BestGap = INT64_MAX, Cursor = 0;
    for (auto [Lo, Hi] : Taken) {
      if (Lo - Cursor >= B.Size && Lo - Cursor < BestGap) {
        Best = Cursor;
        BestGap = Lo - Cursor;
      }
      Cursor = std::max(Cursor, Hi);
    }
    B.Offset = Best >= 0 ? Best : Cursor;
    Total = std::max(Total, B.Offset + B.Size);
    Placed.push_back(I);
  }
  return Total;
}

} // namespace

llvm::Expected<MemoryPlan> planMemory(const Graph &G,
                                      const PlanOptions &Opts) {
  MemoryPlan Plan;
  Plan.Alignment = Opts.Alignment;
  const int64_t A = Opts.Alignment;

  // External bases: graph inputs and constants.
  for (unsigned I = 0; I < G.inputs().size(); ++I)
    Plan.Locations[G.inputs()[I]->id()] = {Base::Input, I, 0};
  auto AddWeight = [&](const Value *V) {
    if (!V || !V->isConstant() || Plan.Locations.count(V->id()))
      return;
    Plan.Locations[V->id()] = {Base::Weights, 0, Plan.WeightsSize};
    Plan.Weights.push_back(V);
    Plan.WeightsSize += alignUp(V->byteSize(), A);
  };
  for (const auto &N : G.nodes())
    for (const Value *V : N->inputs())
      AddWeight(V);
  for (const Value *V : G.outputs()) // a constant output is copied out
    AddWeight(V);

  // Alias roots: views share their input's buffer, in-place ops their
  // input 0's buffer when it dies at this node.
  std::unordered_map<const Value *, const Value *> Root;
  auto RootOf = [&](const Value *V) {
    auto It = Root.find(V);
    return It == Root.end() ? V : It->second;
  };
  std::unordered_map<const Value *, unsigned> LastUse;
  for (unsigned S = 0; S < G.nodes().size(); ++S)
    for (const Value *V : G.nodes()[S]->inputs())
      if (V)
        LastUse[V] = S;

  // Which graph output each value is bound to (the first one, if several).
  std::unordered_map<const Value *, unsigned> OutputOf;
  for (unsigned I = 0; I < G.outputs().size(); ++I)
    OutputOf.emplace(G.outputs()[I], I);

  std::unordered_map<const Value *, unsigned> BufferOf; // root -> index
  auto RootIsArena = [&](const Value *R) {
    return R->kind() == ValueKind::Intermediate && !OutputOf.count(R);
  };
  for (unsigned S = 0; S < G.nodes().size(); ++S) {
    const Node &N = *G.nodes()[S];
    assert(N.def() && "planning an unverified graph");
    for (const Value *Out : N.outputs()) {
      const Value *In = N.input(0);
      Placement P = N.def()->Place;
      bool Alias = false;
      if (P == Placement::View && Out == N.output(0)) {
        // A view of something outside the arena that is itself an output
        // must be copied; any other view simply aliases.
        Alias = !OutputOf.count(Out) || RootIsArena(RootOf(In));
      } else if (P == Placement::InPlace && Out == N.output(0) && In &&
                 In->byteSize() == Out->byteSize() &&
                 RootIsArena(RootOf(In)) && LastUse[In] == S &&
                 !G.isGraphOutput(In)) {
        // In place only if no other alias of the root is used later.
        const Value *R = RootOf(In);
        Alias = true;
        for (const auto &[V, Rt] : Root)
          if (Rt == R && LastUse.count(V) && LastUse[V] > S)
            Alias = false;
        if (LastUse.count(R) && LastUse[R] > S)
          Alias = false;
      }
      if (Alias) {
        const Value *R = RootOf(In);
        Root[Out] = R;
        // An output view of an arena buffer moves the whole buffer into the
        // caller's output.
        if (OutputOf.count(Out) && RootIsArena(R))
          OutputOf.emplace(R, OutputOf[Out]);
        continue;
      }
      if (P == Placement::View && Out == N.output(0)) {
        // Output view of an input/constant/other output: copy at the end.
        Plan.OutputCopies.push_back({OutputOf[Out], In});
        Root[Out] = RootOf(In);
        continue;
      }
      Root[Out] = Out;
    }
  }

  // Graph outputs that are not computed into their buffer by a node: graph
  // inputs, constants, or a value bound to an earlier output.
  for (unsigned I = 0; I < G.outputs().size(); ++I) {
    const Value *O = G.outputs()[I];
    const Value *R = RootOf(O);
    bool Direct = R->kind() == ValueKind::Intermediate && OutputOf.count(R) &&
                  OutputOf[R] == I;
    bool Copied = std::any_of(
        Plan.OutputCopies.begin(), Plan.OutputCopies.end(),
        [&](const auto &C) { return C.first == I; });
    if (!Direct && !Copied)
      Plan.OutputCopies.push_back({I, O});
  }

  // Arena buffers and their live ranges.
  for (unsigned S = 0; S < G.nodes().size(); ++S)
    for (const Value *Out : G.nodes()[S]->outputs()) {
      const Value *R = RootOf(Out);
      if (!RootIsArena(R) || OutputOf.count(R))
        continue;
      if (!BufferOf.count(R)) {
        BufferOf[R] = Plan.Buffers.size();
        Plan.Buffers.push_back({R, alignUp(R->byteSize(), A), 0, S, S});
      }
    }
  for (unsigned S = 0; S < G.nodes().size(); ++S)
    for (const Value *V : G.nodes()[S]->inputs())
      if (V) {
        auto It = BufferOf.find(RootOf(V));
        if (It != BufferOf.end())
          Plan.Buffers[It->second].Last =
              std::max(Plan.Buffers[It->second].Last, S);
      }
  // Copies to outputs run after the last node.
  for (const auto &[I, V] : Plan.OutputCopies) {
    auto It = BufferOf.find(RootOf(V));
    if (It != BufferOf.end())
      Plan.Buffers[It->second].Last = G.nodes().size();
  }

  // Lower bound: the largest unaligned live total at any step.
  for (unsigned S = 0; S <= G.nodes().size(); ++S) {
    int64_t Live = 0;
    for (const ArenaBuffer &B : Plan.Buffers)
      if (B.First <= S && S <= B.Last)
        Live += B.Root->byteSize();
    Plan.LowerBound = std::max(Plan.LowerBound, Live);
  }

  // Two strategies; the smaller arena wins (ties: the first).
  struct Strategy {
    const char *Name;
    std::vector<size_t> Order;
  };
  std::vector<size_t> BySize(Plan.Buffers.size()), ByStart(Plan.Buffers.size());
  for (size_t I = 0; I < Plan.Buffers.size(); ++I)
    BySize[I] = ByStart[I] = I;
  std::stable_sort(BySize.begin(), BySize.end(), [&](size_t X, size_t Y) {
    return Plan.Buffers[X].Size > Plan.Buffers[Y].Size;
  });
  std::stable_sort(ByStart.begin(), ByStart.end(), [&](size_t X, size_t Y) {
    return Plan.Buffers[X].First < Plan.Buffers[Y].First;
  });
  std::vector<Strategy> Strategies = {{"greedy-by-size", BySize},
                                      {"greedy-by-start", ByStart}};
  int64_t Best = -1;
  std::vector<ArenaBuffer> BestBufs;
  for (const Strategy &St : Strategies) {
    std::vector<ArenaBuffer> Bufs = Plan.Buffers;
    int64_t Size = assignOffsets(Bufs, St.Order);
    if (Best < 0 || Size < Best) {
      Best = Size;
      BestBufs = std::move(Bufs);
      Plan.Strategy = St.Name;
    }
  }
  Plan.Buffers = std::move(BestBufs);
  Plan.ArenaSize = std::max<int64_t>(Best, 0);

  // Locations of every value produced by a node.
  for (unsigned I = 0; I < G.outputs().size(); ++I) {
    const Value *O = G.outputs()[I];
    if (OutputOf.count(O) && OutputOf[O] == I && !Plan.Locations.count(O->id()))
      Plan.Locations[O->id()] = {Base::Output, I, 0};
  }
  for (const auto &N : G.nodes())
    for (const Value *V : N->outputs()) {
      const Value *R = RootOf(V);
      if (auto It = BufferOf.find(R); It != BufferOf.end())
        Plan.Locations[V->id()] = {Base::Arena, 0,
                                   Plan.Buffers[It->second].Offset};
      else if (auto Ot = OutputOf.find(R); Ot != OutputOf.end())
        Plan.Locations[V->id()] = {Base::Output, Ot->second, 0};
      else
        Plan.Locations[V->id()] = Plan.at(R);
    }
  return Plan;
}

} // namespace cuvil
