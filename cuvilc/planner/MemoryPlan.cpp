//===- MemoryPlan.cpp - Aliasing, lifetimes, regions, schedules -----------===//
#include "planner/MemoryPlan.h"

#include "ir/CheckedMath.h"
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"
#include "planner/Liveness.h"
#include "planner/OffsetAssignment.h"
#include "planner/Schedule.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <fmt/format.h>
#include <optional>
#include <set>
#include <unordered_map>

namespace cuvil {

const Location &MemoryPlan::at(const Value *V) const {
  auto It = Locations.find(V->id());
  assert(It != Locations.end() && "value has no location");
  return It->second;
}

int64_t MemoryPlan::arenaSize() const {
  int64_t S = 0;
  for (const ArenaPlan &A : Arenas)
    S += A.Size;
  return S;
}

std::string arenaSymbol(const std::string &Model, const std::string &Region) {
  std::string R = Region;
  for (char &C : R)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  return "cuvil_" + Model + "_arena_" + R;
}

double MemoryPlan::ratio() const {
  return LowerBound ? static_cast<double>(arenaSize()) / LowerBound : 1.0;
}

bool MemoryPlan::sameStorage(const Value *A, int64_t OffA, const Value *B,
                             int64_t OffB) const {
  const Location &LA = at(A), &LB = at(B);
  return LA.B == LB.B && LA.Index == LB.Index &&
         LA.Offset + OffA == LB.Offset + OffB;
}

namespace {

/// Pairs of buffers one kernel streams together: an input and an output of
/// the same node.
std::vector<std::pair<size_t, size_t>>
partnerPairs(const Graph &G, const Liveness &L,
             const std::vector<size_t> &Members) {
  std::unordered_map<size_t, size_t> Local; // buffer -> index in Members
  for (size_t I = 0; I < Members.size(); ++I)
    Local[Members[I]] = I;
  std::vector<std::pair<size_t, size_t>> Pairs;
  std::set<std::pair<size_t, size_t>> Have;
  auto Find = [&](const Value *V) -> long {
    auto It = L.BufferOf.find(L.aliasOf(V).Root);
    if (It == L.BufferOf.end() || !Local.count(It->second))
      return -1;
    return static_cast<long>(Local[It->second]);
  };
  for (const auto &N : G.nodes())
    for (const Value *Out : N->outputs()) {
      long O = Find(Out);
      for (const Value *In : N->inputs()) {
        long I = In ? Find(In) : -1;
        if (O >= 0 && I >= 0 && O != I &&
            Have.insert({size_t(I), size_t(O)}).second)
          Pairs.push_back({size_t(I), size_t(O)});
      }
    }
  return Pairs;
}

/// The banks of region R, if its bank granule keeps buffers aligned (the
/// target loader insists on it; hand-made regions may not).
BankModel bankModel(const MemoryRegion *R, int64_t Alignment) {
  BankModel B;
  if (R && R->Banks > 1) {
    B.Count = std::min<int64_t>(R->Banks, 64);
    B.Granule = R->BankInterleave ? R->BankInterleave
                : R->BankSize     ? R->BankSize
                                  : static_cast<int64_t>(R->Length) / R->Banks;
    B.Capacity = static_cast<int64_t>(R->Length);
    if (B.Granule % Alignment)
      return BankModel();
  }
  return B;
}

/// Packs the buffers assigned to arena A (region R) and records the result;
/// with a Compact bank policy, as if R had no banks.
ArenaPlan packRegion(const Graph &G, MemoryPlan &Plan, const Liveness &L,
                     unsigned A, const MemoryRegion *R,
                     PlanOptions::BankPolicy Policy) {
  std::vector<size_t> Members;
  std::vector<ArenaBuffer> Bufs;
  for (size_t I = 0; I < Plan.Buffers.size(); ++I)
    if (Plan.Buffers[I].Arena == A) {
      Members.push_back(I);
      Bufs.push_back(Plan.Buffers[I]);
    }
  BankModel Banks = bankModel(R, Plan.Alignment);
  auto Pairs = partnerPairs(G, L, Members);
  bool Spread = Policy == PlanOptions::BankPolicy::Spread;
  Packing P = packArena(Bufs, Pairs, Spread ? Banks : BankModel());
  ArenaPlan AP;
  AP.Region = R ? R->Name : "ARENA";
  AP.Size = P.Size;
  AP.Strategy = P.Strategy;
  AP.SameBankPairs = Spread || !Banks.enabled()
                         ? P.SameBankPairs
                         : countSameBankPairs(Bufs, P.Offsets, Pairs, Banks);
  // Before bank-aware placement: the best compact packing's pairs.
  AP.SameBankPairsBefore = P.SameBankPairs;
  if (Banks.enabled() && !Spread) {
    AP.SameBankPairsBefore = AP.SameBankPairs;
  } else if (Banks.enabled()) {
    Packing Compact = packArena(Bufs, Pairs, BankModel());
    AP.SameBankPairsBefore =
        countSameBankPairs(Bufs, Compact.Offsets, Pairs, Banks);
  }
  for (size_t I = 0; I < Members.size(); ++I)
    Plan.Buffers[Members[I]].Offset = P.Offsets[I];
  std::vector<int64_t> Live = liveTotals(Bufs, /*Padded=*/false);
  AP.LowerBound =
      Live.empty() ? 0 : *std::max_element(Live.begin(), Live.end());
  return AP;
}

/// A plain greedy-by-size packing with no reuse of any kind: every value a
/// node writes gets its own buffer, live from definition to last use.
int64_t baselineSize(const Graph &G, int64_t Align) {
  std::vector<ArenaBuffer> Bufs;
  std::unordered_map<const Value *, size_t> Index;
  for (unsigned S = 0; S < G.nodes().size(); ++S)
    for (const Value *V : G.nodes()[S]->outputs())
      if (V->kind() == ValueKind::Intermediate && !G.isGraphOutput(V)) {
        Index[V] = Bufs.size();
        ArenaBuffer B;
        B.Root = V;
        B.Bytes = V->byteSize();
        B.Size = alignUp(B.Bytes, Align);
        B.First = B.Last = S;
        Bufs.push_back(B);
      }
  for (unsigned S = 0; S < G.nodes().size(); ++S)
    for (const Value *V : G.nodes()[S]->inputs())
      if (auto It = Index.find(V); V && It != Index.end())
        Bufs[It->second].Last = S;
  std::vector<size_t> Order(Bufs.size());
  for (size_t I = 0; I < Order.size(); ++I)
    Order[I] = I;
  std::stable_sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
    return Bufs[A].Size > Bufs[B].Size;
  });
  std::vector<std::pair<size_t, size_t>> NoPairs;
  return packArena(Bufs, NoPairs, BankModel()).Size;
}

/// Per buffer: how many times a run writes or reads it whole, i.e. its
/// touches per byte (each value stored in it is written once and read by
/// each of its users).
std::vector<int64_t> touchesPerByte(const MemoryPlan &Plan) {
  std::vector<int64_t> T;
  for (const ArenaBuffer &B : Plan.Buffers) {
    int64_t N = 0;
    for (const Value *V : B.Values)
      N += 1 + static_cast<int64_t>(V->users().size());
    T.push_back(N);
  }
  return T;
}

/// After a spill: each region in turn, the fastest first, takes back the
/// spilled buffers that still fit it, the most touched per byte first (the
/// smallest first among equals), as long as the arenas together stay
/// within Budget bytes (or their size before, if larger). Moving out the
/// coldest until a region fits can leave room that hotter or smaller
/// buffers fill.
template <typename CapacityFn>
void refillFastRegions(const Graph &G, MemoryPlan &Plan, const Liveness &L,
                       const std::vector<const MemoryRegion *> &Regions,
                       CapacityFn Capacity, const std::vector<int64_t> &Touches,
                       PlanOptions::BankPolicy Banks, int64_t Budget) {
  std::vector<int64_t> Size;
  for (unsigned A = 0; A < Plan.Arenas.size(); ++A)
    Size.push_back(packRegion(G, Plan, L, A, Regions[A], Banks).Size);
  int64_t Total = 0;
  for (int64_t S : Size)
    Total += S;
  Budget = std::max(Budget, Total);
  for (unsigned R = 0; R + 1 < Plan.Arenas.size(); ++R) {
    std::vector<size_t> Later;
    for (size_t I = 0; I < Plan.Buffers.size(); ++I)
      if (Plan.Buffers[I].Arena > R)
        Later.push_back(I);
    std::stable_sort(Later.begin(), Later.end(), [&](size_t X, size_t Y) {
      if (Touches[X] != Touches[Y])
        return Touches[X] > Touches[Y];
      return Plan.Buffers[X].Size < Plan.Buffers[Y].Size;
    });
    for (size_t I : Later) {
      unsigned Was = Plan.Buffers[I].Arena;
      Plan.Buffers[I].Arena = R;
      int64_t InR = packRegion(G, Plan, L, R, Regions[R], Banks).Size;
      int64_t InWas = packRegion(G, Plan, L, Was, Regions[Was], Banks).Size;
      int64_t NewTotal = Total - Size[R] - Size[Was] + InR + InWas;
      if (InR > Capacity(R) || NewTotal > Budget) {
        Plan.Buffers[I].Arena = Was;
        continue;
      }
      Size[R] = InR;
      Size[Was] = InWas;
      Total = NewTotal;
    }
  }
}

std::string regionList(const std::vector<const MemoryRegion *> &Regions) {
  std::string S;
  for (const MemoryRegion *R : Regions)
    S += fmt::format("{}{} ({} bytes)", S.empty() ? "" : ", ", R->Name,
                     R->Length);
  return S;
}

} // namespace

llvm::Expected<MemoryPlan> planForOrder(const Graph &G,
                                        const PlanOptions &Opts) {
  MemoryPlan Plan;
  Plan.Alignment = Opts.Alignment;
  Plan.GuardBytes = Opts.GuardBytes;
  const int64_t A = Opts.Alignment;

  // External bases: graph inputs and constants.
  for (unsigned I = 0; I < G.inputs().size(); ++I)
    Plan.Locations[G.inputs()[I]->id()] = {Base::Input, I, 0};
  // Every size below is at most 2^62 (checkTensorSizes); their sums are
  // checked, so that offsets and totals cannot wrap.
  bool WeightsOverflow = false;
  auto AddWeight = [&](const Value *V) {
    if (!V || !V->isConstant() || Plan.Locations.count(V->id()))
      return;
    Plan.Locations[V->id()] = {Base::Weights, 0, Plan.WeightsSize};
    Plan.Weights.push_back(V);
    auto Sum = checkedAdd(Plan.WeightsSize, alignUp(V->byteSize(), A));
    WeightsOverflow |= !Sum;
    Plan.WeightsSize = Sum.value_or(0);
  };
  for (const auto &N : G.nodes())
    for (const Value *V : N->inputs())
      AddWeight(V);
  for (const Value *V : G.outputs()) // a constant output is copied out
    AddWeight(V);
  if (WeightsOverflow)
    return makeError("the weights need more than 2^63 bytes together: more "
                     "than the target's address space");

  Liveness L(G, Plan, Opts.ConcatSlices,
             Opts.ShareBranches && Opts.GuardBytes == 0);
  L.run();
  int64_t Total = 0;
  for (const ArenaBuffer &B : Plan.Buffers)
    if (auto Sum = checkedAdd(Total, B.Size))
      Total = *Sum;
    else
      return makeError("the activations need more than 2^63 bytes together: "
                       "more than the target's address space");

  // Lower bound over all regions.
  std::vector<int64_t> Live = liveTotals(Plan.Buffers, /*Padded=*/false);
  Plan.LowerBound =
      Live.empty() ? 0 : *std::max_element(Live.begin(), Live.end());

  // Regions: everything in the first region that holds it; with spilling,
  // the largest buffers move on to the next region until the rest fits.
  std::vector<const MemoryRegion *> Regions = Opts.Regions;
  if (Regions.empty())
    Regions.push_back(nullptr); // unbounded (tests)
  auto Capacity = [&](size_t R) {
    return Regions[R] ? static_cast<int64_t>(Regions[R]->Length) : INT64_MAX;
  };
  auto PackAll = [&](size_t NumArenas) {
    Plan.Arenas.clear();
    for (unsigned I = 0; I < NumArenas; ++I)
      Plan.Arenas.push_back(packRegion(G, Plan, L, I, Regions[I], Opts.Banks));
  };
  bool Placed = false;
  std::vector<int64_t> Touches = touchesPerByte(Plan);
  if (!Opts.AllowSpill) {
    for (size_t R = 0; R < Regions.size() && !Placed; ++R) {
      for (ArenaBuffer &B : Plan.Buffers)
        B.Arena = 0;
      Plan.Arenas = {packRegion(G, Plan, L, 0, Regions[R], Opts.Banks)};
      Placed = Plan.Arenas[0].Size <= Capacity(R);
    }
  } else {
    for (ArenaBuffer &B : Plan.Buffers)
      B.Arena = 0;
    for (size_t R = 0; R < Regions.size() && !Placed; ++R) {
      PackAll(R + 1);
      if (Plan.Arenas[R].Size <= Capacity(R)) {
        Placed = true;
        break;
      }
      if (R + 1 == Regions.size())
        break;
      // Move the coldest buffers of region R on (fewest touches per byte;
      // the largest first among equals), until R fits.
      std::vector<size_t> InR;
      for (size_t I = 0; I < Plan.Buffers.size(); ++I)
        if (Plan.Buffers[I].Arena == R)
          InR.push_back(I);
      std::stable_sort(InR.begin(), InR.end(), [&](size_t X, size_t Y) {
        if (Touches[X] != Touches[Y])
          return Touches[X] < Touches[Y];
        return Plan.Buffers[X].Size > Plan.Buffers[Y].Size;
      });
      for (size_t I : InR) {
        Plan.Buffers[I].Arena = R + 1;
        if (packRegion(G, Plan, L, R, Regions[R], Opts.Banks).Size <=
            Capacity(R))
          break;
      }
    }
    if (Placed && Plan.Arenas.size() > 1) {
      refillFastRegions(G, Plan, L, Regions, Capacity, Touches, Opts.Banks,
                        Plan.LowerBound + Plan.LowerBound / 20);
      PackAll(Plan.Arenas.size());
    }
  }
  if (!Placed) {
    if (Regions.size() == 1)
      return makeError("the activation arena needs {} bytes (lower bound {}) "
                       "but region {} holds {} bytes",
                       Plan.Arenas[0].Size, Plan.LowerBound, Regions[0]->Name,
                       Regions[0]->Length);
    return makeError("the activation arena needs {} bytes (lower bound {}), "
                     "more than {}: {}",
                     Plan.arenaSize(), Plan.LowerBound,
                     Opts.AllowSpill ? "the arena regions hold together"
                                     : "any arena region holds",
                     regionList(Regions));
  }
  // Drop trailing empty arenas (a spill that was not needed).
  while (Plan.Arenas.size() > 1 && Plan.Arenas.back().Size == 0)
    Plan.Arenas.pop_back();

  // Locations of everything nodes produce.
  for (unsigned I = 0; I < G.outputs().size(); ++I) {
    const Value *O = G.outputs()[I];
    auto It = L.OutputOf.find(O);
    if (It != L.OutputOf.end() && It->second == I &&
        !Plan.Locations.count(O->id()))
      Plan.Locations[O->id()] = {Base::Output, I, 0};
  }
  for (const auto &N : G.nodes())
    for (const Value *V : N->outputs()) {
      Alias Al = L.aliasOf(V);
      if (auto It = L.BufferOf.find(Al.Root); It != L.BufferOf.end()) {
        const ArenaBuffer &B = Plan.Buffers[It->second];
        Plan.Locations[V->id()] = {Base::Arena, B.Arena, B.Offset + Al.Offset};
      } else if (auto Ot = L.OutputOf.find(Al.Root);
                 Ot != L.OutputOf.end() &&
                 Al.Root->kind() == ValueKind::Intermediate) {
        Plan.Locations[V->id()] = {Base::Output, Ot->second, Al.Offset};
      } else {
        Location Loc = Plan.at(Al.Root);
        Loc.Offset += Al.Offset;
        Plan.Locations[V->id()] = Loc;
      }
    }
  Plan.BaselineSize = baselineSize(G, A);
  return Plan;
}

llvm::Expected<MemoryPlan> planMemory(Graph &G, const PlanOptions &Opts) {
  if (auto E = G.checkTensorSizes(Opts.AddressBits))
    return E;
  std::vector<Schedule> Candidates;
  if (Opts.OptimizeSchedule)
    Candidates = candidateSchedules(G);
  if (Candidates.size() <= 1) {
    auto P = planForOrder(G, Opts);
    if (P)
      P->Schedule = "model";
    return P;
  }
  std::optional<MemoryPlan> Best;
  std::vector<Node *> BestOrder;
  llvm::Error FirstError = llvm::Error::success();
  for (const Schedule &S : Candidates) {
    G.reorderNodes(S.Order);
    auto P = planForOrder(G, Opts);
    if (!P) {
      // Keep the model order's error (the one users can relate to).
      if (S.Name == "model")
        FirstError = P.takeError();
      else
        llvm::consumeError(P.takeError());
      continue;
    }
    auto Key = [](const MemoryPlan &M) {
      return std::make_pair(M.arenaSize(), M.LowerBound);
    };
    if (!Best || Key(*P) < Key(*Best)) {
      P->Schedule = S.Name;
      Best = std::move(*P);
      BestOrder = S.Order;
    }
  }
  if (!Best)
    return FirstError;
  llvm::consumeError(std::move(FirstError));
  G.reorderNodes(BestOrder);
  // Locations hold value ids and buffers hold pointers: both survive the
  // reordering, but steps are indices, so plan once more on the final order.
  auto Final = planForOrder(G, Opts);
  if (Final)
    Final->Schedule = Best->Schedule;
  return Final;
}

} // namespace cuvil
