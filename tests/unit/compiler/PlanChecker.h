//===- PlanChecker.h - Checking memory plans in tests ----------*- C++ -*-===//
//
// Shared by the planner's property and quality tests: small graph helpers,
// deterministic random numbers, and planAndCheck(), which plans a graph and
// checks the plan against the rules generated code relies on (listed in
// PlannerPropertyTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TESTS_UNIT_PLANCHECKER_H
#define CUVIL_TESTS_UNIT_PLANCHECKER_H

#include "PlanReplay.h"
#include "TestGraphs.h"
#include "ir/CheckedMath.h"
#include "planner/MemoryPlan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <random>

namespace cuvil::plantest {

using test::addOp;
using test::tensor;

/// Deterministic random numbers: the same cases on every platform (no
/// std::uniform_int_distribution, whose results the standard leaves open).
class Random {
public:
  explicit Random(uint64_t Seed) : Engine(Seed) {}
  /// Uniform in [0, N).
  uint64_t below(uint64_t N) { return Engine() % N; }
  /// Uniform in [Lo, Hi].
  int64_t between(int64_t Lo, int64_t Hi) { return Lo + below(Hi - Lo + 1); }
  bool chance(unsigned Percent) { return below(100) < Percent; }
  template <typename T> T pick(const std::vector<T> &V) {
    return V[below(V.size())];
  }

private:
  std::mt19937_64 Engine;
};

/// A float constant of the given shape, zero-filled: the planner only
/// places it.
inline Value *constant(Graph &G, const std::string &Name,
                       std::vector<int64_t> Shape) {
  Value *V =
      G.addValue(Name, DType::F32, std::move(Shape), ValueKind::Constant);
  V->setData(std::vector<uint8_t>(V->byteSize()));
  return V;
}

/// Reshape's shape operand.
inline Value *shapeConstant(Graph &G, const std::string &Name,
                            const std::vector<int64_t> &Dims) {
  Value *V = G.addValue(Name, DType::I64, {static_cast<int64_t>(Dims.size())},
                        ValueKind::Constant);
  std::vector<uint8_t> Bytes(Dims.size() * sizeof(int64_t));
  std::memcpy(Bytes.data(), Dims.data(), Bytes.size());
  V->setData(std::move(Bytes));
  return V;
}

inline MemoryRegion region(std::string Name, uint64_t Length) {
  MemoryRegion R;
  R.Name = std::move(Name);
  R.Length = Length;
  R.Access = "rw";
  return R;
}

//===----------------------------------------------------------------------===//
// Checking a plan
//===----------------------------------------------------------------------===//

/// Disjoint-set forest over value ids.
class AliasSets {
public:
  unsigned find(unsigned V) {
    auto It = Parent.try_emplace(V, V).first;
    if (It->second != V)
      It->second = find(It->second);
    return It->second;
  }
  void join(const Value *A, const Value *B) {
    Parent[find(A->id())] = find(B->id());
  }
  bool same(const Value *A, const Value *B) {
    return find(A->id()) == find(B->id());
  }

private:
  std::map<unsigned, unsigned> Parent;
};

/// Checks one plan; problems() lists what is wrong, empty if nothing is.
class PlanChecker {
public:
  PlanChecker(const Graph &G, const MemoryPlan &P, const PlanOptions &Opts,
              const std::vector<unsigned> &NodeIdsBefore)
      : G(G), P(P), Opts(Opts), NodeIdsBefore(NodeIdsBefore),
        N(G.nodes().size()) {}

  std::vector<std::string> problems() {
    checkSchedule();
    checkLocationsExist();
    if (!Problems.empty())
      return Problems;
    computeLifetimes();
    checkBuffers();
    checkAlignment();
    checkRegionsAndBounds();
    checkOverlaps();
    checkBufferCoverage();
    checkLiveValuesDisjoint();
    checkDataflow();
    return Problems;
  }

private:
  template <typename... Args>
  void problem(fmt::format_string<Args...> Fmt, Args &&...A) {
    Problems.push_back(fmt::format(Fmt, std::forward<Args>(A)...));
  }

  const Location &loc(const Value *V) const { return P.at(V); }
  bool inBase(const Value *V, Base B) const { return loc(V).B == B; }
  bool overlap(const Value *A, const Value *B) const {
    const Location &LA = loc(A), &LB = loc(B);
    return LA.B == LB.B && LA.Index == LB.Index &&
           LA.Offset < LB.Offset + B->byteSize() &&
           LB.Offset < LA.Offset + A->byteSize();
  }
  bool sameLocation(const Value *A, const Value *B) const {
    const Location &LA = loc(A), &LB = loc(B);
    return LA.B == LB.B && LA.Index == LB.Index && LA.Offset == LB.Offset;
  }
  static bool isCopySource(const MemoryPlan &P, const Value *V) {
    return std::any_of(P.OutputCopies.begin(), P.OutputCopies.end(),
                       [&](const auto &C) { return C.second == V; });
  }

  /// (a) Every node once, each after the producers of its inputs; without
  /// schedule optimisation, in the model's order.
  void checkSchedule() {
    std::vector<unsigned> Ids;
    for (unsigned S = 0; S < N; ++S) {
      const Node &Nd = *G.nodes()[S];
      Ids.push_back(Nd.id());
      Step[&Nd] = S;
      for (const Value *V : Nd.inputs())
        if (V && V->producer() && !Step.count(V->producer()))
          problem("(a) node '{}' runs at step {}, before '{}', which "
                  "produces its input '{}'",
                  Nd.name(), S, V->producer()->name(), V->name());
    }
    std::vector<unsigned> Before = NodeIdsBefore, After = Ids;
    std::sort(Before.begin(), Before.end());
    std::sort(After.begin(), After.end());
    if (Before != After)
      problem("(a) the schedule is not a permutation of the graph's nodes");
    if (!Opts.OptimizeSchedule && Ids != NodeIdsBefore)
      problem("(a) the nodes were reordered with OptimizeSchedule off");
  }

  void checkLocationsExist() {
    auto Need = [&](const Value *V) {
      if (V && !P.Locations.count(V->id()))
        problem("(f) value '{}' has no location", V->name());
    };
    for (const auto &Nd : G.nodes()) {
      for (const Value *V : Nd->inputs())
        Need(V);
      for (const Value *V : Nd->outputs())
        Need(V);
    }
    for (const Value *V : G.outputs())
      Need(V);
  }

  /// Steps at which values are live: from the step that defines them (-1
  /// for graph inputs and constants) to their last use; graph outputs and
  /// values copied into them at the end, to step N.
  void computeLifetimes() {
    for (const auto &V : G.values()) {
      int Def = V->producer() ? static_cast<int>(Step[V->producer()]) : -1;
      int End = Def;
      for (const Node *U : V->users())
        End = std::max(End, static_cast<int>(Step[U]));
      if (G.isGraphOutput(V.get()) || isCopySource(P, V.get()))
        End = static_cast<int>(N);
      Life[V.get()] = {Def, End};
    }
  }
  bool liveTogether(const Value *A, const Value *B) {
    return Life[A].first <= Life[B].second && Life[B].first <= Life[A].second;
  }

  /// (b) Buffers lie in their arena; those live at a common step are
  /// disjoint.
  void checkBuffers() {
    for (size_t I = 0; I < P.Buffers.size(); ++I) {
      const ArenaBuffer &A = P.Buffers[I];
      if (A.Arena >= P.Arenas.size()) {
        problem("(b) buffer '{}' is in arena {}, of {}", A.Root->name(),
                A.Arena, P.Arenas.size());
        continue;
      }
      if (A.Offset < 0 || A.Offset + A.Size > P.Arenas[A.Arena].Size)
        problem("(b) buffer '{}' [{}, {}) exceeds arena {} ({} bytes)",
                A.Root->name(), A.Offset, A.Offset + A.Size, A.Arena,
                P.Arenas[A.Arena].Size);
      if (A.Values.empty() || A.Values[0] != A.Root)
        problem("(b) buffer '{}' does not list its root first", A.Root->name());
      if (A.Bytes != A.Root->byteSize() || A.Size < A.Bytes || A.First > A.Last)
        problem("(b) buffer '{}': {} bytes, size {}, steps [{}, {}] for a "
                "root of {} bytes",
                A.Root->name(), A.Bytes, A.Size, A.First, A.Last,
                A.Root->byteSize());
      for (size_t J = I + 1; J < P.Buffers.size(); ++J) {
        const ArenaBuffer &B = P.Buffers[J];
        if (A.Arena == B.Arena && A.First <= B.Last && B.First <= A.Last &&
            A.Offset < B.Offset + B.Size && B.Offset < A.Offset + A.Size)
          problem("(b) buffers '{}' (steps [{}, {}], bytes [{}, {})) and "
                  "'{}' (steps [{}, {}], bytes [{}, {})) overlap",
                  A.Root->name(), A.First, A.Last, A.Offset, A.Offset + A.Size,
                  B.Root->name(), B.First, B.Last, B.Offset, B.Offset + B.Size);
      }
    }
  }

  /// (c) Alignment of buffers, arenas and weights.
  void checkAlignment() {
    const int64_t A = Opts.Alignment;
    if (P.Alignment != A)
      problem("(c) the plan's alignment is {}, not {}", P.Alignment, A);
    for (const ArenaBuffer &B : P.Buffers)
      if (B.Offset % A || B.Size % A)
        problem("(c) buffer '{}' at {} of size {} breaks the {}-byte "
                "alignment",
                B.Root->name(), B.Offset, B.Size, A);
    for (const ArenaPlan &Ar : P.Arenas)
      if (Ar.Size % A)
        problem("(c) arena {} has {} bytes, not a multiple of {}", Ar.Region,
                Ar.Size, A);
    for (const Value *W : P.Weights)
      if (loc(W).B != Base::Weights || loc(W).Offset % A)
        problem("(c) weight '{}' is at {}", W->name(), str(loc(W)));
    if (P.WeightsSize % A)
      problem("(c) the weights take {} bytes, not a multiple of {}",
              P.WeightsSize, A);
  }

  /// (d) Capacities and lower bounds.
  void checkRegionsAndBounds() {
    if (!Opts.AllowSpill && P.Arenas.size() > 1)
      problem("(d) {} arenas without spilling", P.Arenas.size());
    std::vector<int64_t> Live, Total;
    unsigned Steps = 0;
    for (const ArenaBuffer &B : P.Buffers)
      Steps = std::max(Steps, B.Last + 1);
    Total.assign(Steps, 0);
    for (unsigned A = 0; A < P.Arenas.size(); ++A) {
      Live.assign(Steps, 0);
      for (const ArenaBuffer &B : P.Buffers)
        if (B.Arena == A)
          for (unsigned S = B.First; S <= B.Last; ++S) {
            Live[S] += B.Bytes;
            Total[S] += B.Bytes;
          }
      int64_t Bound =
          Live.empty() ? 0 : *std::max_element(Live.begin(), Live.end());
      const ArenaPlan &Ar = P.Arenas[A];
      if (Ar.LowerBound != Bound)
        problem("(d) arena {}'s lower bound is {}, its buffers give {}",
                Ar.Region, Ar.LowerBound, Bound);
      if (Ar.Size < Bound)
        problem("(d) arena {} has {} bytes, below its lower bound {}",
                Ar.Region, Ar.Size, Bound);
      auto Reg = std::find_if(
          Opts.Regions.begin(), Opts.Regions.end(),
          [&](const MemoryRegion *R) { return R->Name == Ar.Region; });
      if (Reg == Opts.Regions.end())
        problem("(d) arena {} is not in a region of the options", Ar.Region);
      else if (static_cast<uint64_t>(Ar.Size) > (*Reg)->Length)
        problem("(d) arena {} has {} bytes, its region holds {}", Ar.Region,
                Ar.Size, (*Reg)->Length);
      for (unsigned B = 0; B < A; ++B)
        if (P.Arenas[B].Region == Ar.Region)
          problem("(d) two arenas in region {}", Ar.Region);
    }
    int64_t Bound =
        Total.empty() ? 0 : *std::max_element(Total.begin(), Total.end());
    if (P.LowerBound != Bound)
      problem("(d) the plan's lower bound is {}, its buffers give {}",
              P.LowerBound, Bound);
  }

  /// (e) Where a node's output shares bytes with one of its inputs.
  void checkOverlaps() {
    for (unsigned S = 0; S < N; ++S) {
      const Node &Nd = *G.nodes()[S];
      const Value *Y = Nd.output(0);
      Placement Place = Nd.def()->place();
      if (Place == Placement::View) {
        Aliases.join(Y, Nd.input(0));
        continue;
      }
      if (!inBase(Y, Base::Arena) && !inBase(Y, Base::Output))
        problem("(e) node '{}' writes '{}' at {}, outside the arenas and "
                "output buffers",
                Nd.name(), Y->name(), str(loc(Y)));
      bool InPlace = false;
      for (size_t I = 0; I < Nd.numInputs(); ++I) {
        const Value *X = Nd.input(I);
        if (!X || !overlap(X, Y))
          continue;
        Aliases.join(X, Y);
        if (Place == Placement::InPlace)
          InPlace |= checkInPlaceOperand(Nd, X);
        else if (Nd.opType() == "Concat")
          checkConcatSlice(Nd, X);
        else
          problem("(e) node '{}' ({}) writes '{}' at {} over its input '{}' "
                  "at {}",
                  Nd.name(), Nd.opType(), Y->name(), str(loc(Y)), X->name(),
                  str(loc(X)));
      }
      if (InPlace)
        checkInputDies(Nd, S);
    }
  }

  /// An element-wise op may write over an operand stored exactly like its
  /// output, and only if input 0 is stored so too.
  bool checkInPlaceOperand(const Node &Nd, const Value *X) {
    const Value *X0 = Nd.input(0), *Y = Nd.output(0);
    if (sameLocation(X, Y) && sameLocation(X0, Y) &&
        X->byteSize() == Y->byteSize() && X0->byteSize() == Y->byteSize())
      return true;
    problem("(e) node '{}' ({}) writes '{}' at {} over input '{}' at {} "
            "(input 0 '{}' is at {})",
            Nd.name(), Nd.opType(), Y->name(), str(loc(Y)), X->name(),
            str(loc(X)), X0->name(), str(loc(X0)));
    return false;
  }

  /// The bytes an in-place op at step S overwrites, input 0's, must hold
  /// nothing needed after S: no value stored there and defined by then is
  /// read later or is a graph output.
  void checkInputDies(const Node &Nd, unsigned S) {
    const Value *X0 = Nd.input(0), *Y = Nd.output(0);
    for (const auto &V : G.values()) {
      if (V.get() == Y || !P.Locations.count(V->id()) || !overlap(V.get(), X0))
        continue;
      auto [Def, End] = Life[V.get()];
      if (Def <= static_cast<int>(S) && End > static_cast<int>(S))
        problem("(e) node '{}' ({}) at step {} computes '{}' in place over "
                "'{}', but '{}', stored there, is {}",
                Nd.name(), Nd.opType(), S, Y->name(), X0->name(), V->name(),
                End == static_cast<int>(N)
                    ? std::string("needed at the end")
                    : fmt::format("read at step {}", End));
    }
  }

  /// A Concat input that shares bytes with the output must be exactly in
  /// the slice of an operand stored like it (itself, or an alias).
  void checkConcatSlice(const Node &Nd, const Value *X) {
    const Value *Y = Nd.output(0);
    int64_t Slice = 0;
    for (const Value *In : Nd.inputs()) {
      Location Want = loc(Y);
      Want.Offset += Slice;
      const Location &Got = loc(X);
      if (sameLocation(In, X) && In->byteSize() == X->byteSize() &&
          Got.B == Want.B && Got.Index == Want.Index &&
          Got.Offset == Want.Offset)
        return;
      Slice += In->byteSize();
    }
    problem("(e) Concat '{}' writes '{}' at {} over its input '{}' at {}, "
            "which is not that input's slice",
            Nd.name(), Y->name(), str(loc(Y)), X->name(), str(loc(X)));
  }

  /// (f) Arena values lie inside a buffer that lists them, live whenever
  /// a node reads or writes them (or an output copy reads them).
  void checkBufferCoverage() {
    std::map<const Value *, const ArenaBuffer *> BufferOf;
    for (const ArenaBuffer &B : P.Buffers)
      for (const Value *V : B.Values) {
        if (!BufferOf.emplace(V, &B).second) {
          problem("(f) '{}' is listed in two buffers", V->name());
          continue;
        }
        const Location &L = loc(V);
        if (L.B != Base::Arena || L.Index != B.Arena || L.Offset < B.Offset ||
            L.Offset + V->byteSize() > B.Offset + B.Size)
          problem("(f) '{}' is at {}, outside its buffer '{}' (arena {} "
                  "[{}, {}))",
                  V->name(), str(L), B.Root->name(), B.Arena, B.Offset,
                  B.Offset + B.Size);
      }
    auto Covered = [&](const Value *V, unsigned S, const char *What) {
      if (!V || !inBase(V, Base::Arena))
        return;
      auto It = BufferOf.find(V);
      if (It == BufferOf.end())
        problem("(f) '{}' is in the arena but in no buffer", V->name());
      else if (S < It->second->First || S > It->second->Last)
        problem("(f) '{}' is {} at step {}, but its buffer '{}' lives in "
                "steps [{}, {}]",
                V->name(), What, S, It->second->Root->name(), It->second->First,
                It->second->Last);
    };
    for (unsigned S = 0; S < N; ++S) {
      for (const Value *V : G.nodes()[S]->inputs())
        Covered(V, S, "read");
      for (const Value *V : G.nodes()[S]->outputs())
        Covered(V, S, "written");
    }
    if (N > 0)
      for (const auto &[Index, V] : P.OutputCopies)
        Covered(V, N - 1, "copied out after the last");
  }

  /// (g) Values in the arenas or output buffers that are live together and
  /// share bytes must be aliases (views, in place, Concat slices).
  void checkLiveValuesDisjoint() {
    std::vector<const Value *> Stored;
    for (const auto &V : G.values())
      if (P.Locations.count(V->id()) &&
          (inBase(V.get(), Base::Arena) || inBase(V.get(), Base::Output)))
        Stored.push_back(V.get());
    for (size_t I = 0; I < Stored.size(); ++I)
      for (size_t J = I + 1; J < Stored.size(); ++J) {
        const Value *A = Stored[I], *B = Stored[J];
        if (overlap(A, B) && liveTogether(A, B) && !Aliases.same(A, B))
          problem("(g) '{}' (steps [{}, {}], at {}) and '{}' (steps [{}, "
                  "{}], at {}) share bytes",
                  A->name(), Life[A].first, Life[A].second, str(loc(A)),
                  B->name(), Life[B].first, Life[B].second, str(loc(B)));
      }
  }

  /// (h) Every read finds the bytes it expects (see PlanReplay.h).
  void checkDataflow() { DataflowReplay(G, P, Problems).run(); }

  const Graph &G;
  const MemoryPlan &P;
  const PlanOptions &Opts;
  const std::vector<unsigned> &NodeIdsBefore;
  const unsigned N; ///< Number of steps.
  std::map<const Node *, unsigned> Step;
  std::map<const Value *, std::pair<int, int>> Life;
  AliasSets Aliases;
  std::vector<std::string> Problems;
};

inline std::string describePlan(const MemoryPlan &P) {
  std::string S = fmt::format("schedule {}, lower bound {}, alignment {}\n",
                              P.Schedule, P.LowerBound, P.Alignment);
  for (const ArenaPlan &A : P.Arenas)
    S += fmt::format("arena {}: {} bytes, lower bound {}, {}\n", A.Region,
                     A.Size, A.LowerBound, A.Strategy);
  for (const ArenaBuffer &B : P.Buffers) {
    S += fmt::format("buffer arena {} [{}, {}) steps [{}, {}]:", B.Arena,
                     B.Offset, B.Offset + B.Size, B.First, B.Last);
    for (const Value *V : B.Values)
      S += fmt::format(" {}@{}", V->name(), str(P.at(V)));
    S += "\n";
  }
  for (const auto &[I, V] : P.OutputCopies)
    S += fmt::format("output {} copied from '{}' at {}\n", I, V->name(),
                     str(P.at(V)));
  return S;
}

inline std::vector<unsigned> nodeIds(const Graph &G) {
  std::vector<unsigned> Ids;
  for (const auto &Nd : G.nodes())
    Ids.push_back(Nd->id());
  return Ids;
}

/// Plans G, checks the plan, and returns it; failures name the graph.
inline std::optional<MemoryPlan> planAndCheck(Graph &G,
                                              const PlanOptions &Opts) {
  std::vector<unsigned> Before = nodeIds(G);
  std::string Dump = G.print();
  auto P = planMemory(G, Opts);
  if (!P) {
    ADD_FAILURE() << "planMemory failed: " << llvm::toString(P.takeError())
                  << "\n"
                  << Dump;
    return std::nullopt;
  }
  std::vector<std::string> Problems =
      PlanChecker(G, *P, Opts, Before).problems();
  if (!Problems.empty()) {
    std::string Msg;
    for (const std::string &Pr : Problems)
      Msg += Pr + "\n";
    ADD_FAILURE() << Problems.size() << " problem(s) in the plan of "
                  << G.name() << ":\n"
                  << Msg << "graph:\n"
                  << Dump << "order after planning:\n"
                  << G.print() << "plan:\n"
                  << describePlan(*P);
    return std::nullopt;
  }
  return std::move(*P);
}

} // namespace cuvil::plantest

#endif
