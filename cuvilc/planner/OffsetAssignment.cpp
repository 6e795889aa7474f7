//===- OffsetAssignment.cpp - Strategies for packing an arena -------------===//
//
// Every strategy places buffers one at a time, in its own order, at the
// best-fitting gap among the buffers already placed whose live ranges
// overlap (the classic greedy offset assignment). They differ in the order:
//   greedy-by-size      largest first;
//   greedy-by-breadth   buffers live during the most crowded steps first;
//   greedy-by-start     in order of definition;
//   exhaustive          every order (small arenas only): optimal among
//                       greedy placements;
//   two-ended           by start, each buffer at whichever free end (below
//                       the bound) is farther from the buffers live with it,
//                       so neighbours alternate: optimal on chains.
// With banks, each order also runs bank-aware: among the positions that fit
// in the region, it picks the one sharing the fewest banks with the
// buffer's partners; such a packing wins if it leaves fewer same-bank
// pairs, even when it is larger (the region's capacity allows it).
//
//===----------------------------------------------------------------------===//
#include "planner/OffsetAssignment.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>

namespace cuvil {

uint64_t BankModel::banks(int64_t Offset, int64_t Size) const {
  if (!enabled() || Size <= 0)
    return 0;
  int64_t FirstGranule = Offset / Granule;
  int64_t LastGranule = (Offset + Size - 1) / Granule;
  if (LastGranule - FirstGranule + 1 >= Count) // touches every bank
    return Count >= 64 ? ~0ull : (1ull << Count) - 1;
  uint64_t Mask = 0;
  for (int64_t G = FirstGranule; G <= LastGranule; ++G)
    Mask |= 1ull << (G % Count);
  return Mask;
}

int64_t
countSameBankPairs(const std::vector<ArenaBuffer> &Buffers,
                   const std::vector<int64_t> &Offsets,
                   const std::vector<std::pair<size_t, size_t>> &Partners,
                   const BankModel &Banks) {
  if (!Banks.enabled())
    return -1;
  int64_t N = 0;
  for (auto [A, B] : Partners)
    if (Banks.banks(Offsets[A], Buffers[A].Size) &
        Banks.banks(Offsets[B], Buffers[B].Size))
      ++N;
  return N;
}

bool exclusive(const ArenaBuffer &A, const ArenaBuffer &B) {
  for (const auto &[Cond, When] : A.RunsWhen)
    for (const auto &[OtherCond, OtherWhen] : B.RunsWhen)
      if (Cond == OtherCond && When != OtherWhen)
        return true;
  return false;
}

namespace {

/// Differences at the ends of each range of the buffers Counted selects,
/// then a running sum: the live total per step 0..Steps-1.
template <typename Pred>
std::vector<int64_t> totalsOf(const std::vector<ArenaBuffer> &Buffers,
                              bool Padded, unsigned Steps, Pred Counted) {
  std::vector<int64_t> Live(Steps + 1, 0);
  for (const ArenaBuffer &B : Buffers)
    if (Counted(B)) {
      int64_t Bytes = Padded ? B.Size : B.Bytes;
      Live[B.First] += Bytes;
      Live[B.Last + 1] -= Bytes;
    }
  for (size_t S = 1; S < Live.size(); ++S)
    Live[S] += Live[S - 1];
  Live.pop_back();
  return Live;
}

/// Beyond this many distinct branch conditions, the live totals count
/// every branch at once (2^N outcomes would be too many to enumerate).
constexpr size_t MaxOutcomeConditions = 10;

} // namespace

std::vector<int64_t> liveTotals(const std::vector<ArenaBuffer> &Buffers,
                                bool Padded) {
  unsigned Steps = 0;
  std::vector<const Value *> Conds;
  for (const ArenaBuffer &B : Buffers) {
    Steps = std::max(Steps, B.Last + 1);
    for (const auto &C : B.RunsWhen)
      if (std::find(Conds.begin(), Conds.end(), C.first) == Conds.end())
        Conds.push_back(C.first);
  }
  if (Conds.empty() || Conds.size() > MaxOutcomeConditions)
    return totalsOf(Buffers, Padded, Steps,
                    [](const ArenaBuffer &) { return true; });
  // Per step, the largest total over the outcomes of the conditions: a run
  // writes only the buffers whose conditions its outcome meets.
  std::vector<int64_t> Live(Steps, 0);
  for (uint32_t Outcome = 0; Outcome < (1u << Conds.size()); ++Outcome) {
    auto Taken = [&](const ArenaBuffer &B) {
      return std::all_of(B.RunsWhen.begin(), B.RunsWhen.end(), [&](auto C) {
        size_t Bit =
            std::find(Conds.begin(), Conds.end(), C.first) - Conds.begin();
        return ((Outcome >> Bit) & 1u) == (C.second ? 1u : 0u);
      });
    };
    std::vector<int64_t> Run = totalsOf(Buffers, Padded, Steps, Taken);
    for (size_t S = 0; S < Steps; ++S)
      Live[S] = std::max(Live[S], Run[S]);
  }
  return Live;
}

namespace {

/// The buffers placed so far, by live range: finds those whose range
/// meets a given one in time proportional to their number (plus a log),
/// so packing a long chain is not quadratic. A segment tree over steps
/// answers "live at step S" (each range is stored at O(log) nodes); those
/// that start after S within the range come from a list sorted by start.
class PlacedIndex {
public:
  explicit PlacedIndex(unsigned Steps) : Leaves(1) {
    while (Leaves < Steps)
      Leaves *= 2;
    Tree.resize(2 * Leaves);
  }
  void add(size_t I, const ArenaBuffer &B) {
    insert(1, 0, Leaves - 1, B.First, B.Last, I);
    ByStart.emplace(B.First, I);
  }
  /// Calls F(J) once for every added buffer J whose range meets [Lo, Hi].
  template <typename Fn>
  void overlapping(unsigned Lo, unsigned Hi, Fn F) const {
    // Ranges containing Lo: the tree nodes on the path to leaf Lo.
    size_t Node = 1;
    unsigned L = 0, R = Leaves - 1;
    while (true) {
      for (size_t J : Tree[Node])
        F(J);
      if (L == R)
        break;
      unsigned M = L + (R - L) / 2;
      if (Lo <= M) {
        Node = 2 * Node;
        R = M;
      } else {
        Node = 2 * Node + 1;
        L = M + 1;
      }
    }
    // Ranges starting in (Lo, Hi].
    for (auto It = ByStart.upper_bound(Lo);
         It != ByStart.end() && It->first <= Hi; ++It)
      F(It->second);
  }

private:
  void insert(size_t Node, unsigned L, unsigned R, unsigned Lo, unsigned Hi,
              size_t I) {
    if (Hi < L || R < Lo)
      return;
    if (Lo <= L && R <= Hi) {
      Tree[Node].push_back(I);
      return;
    }
    unsigned M = L + (R - L) / 2;
    insert(2 * Node, L, M, Lo, Hi, I); // depth log2(steps)
    insert(2 * Node + 1, M + 1, R, Lo, Hi, I);
  }

  unsigned Leaves;
  std::vector<std::vector<size_t>> Tree;
  std::multimap<unsigned, size_t> ByStart;
};

/// Maximum of Live over a range of steps in O(1) after O(n log n) setup.
class RangeMax {
public:
  explicit RangeMax(const std::vector<int64_t> &Live) {
    Table.push_back(Live);
    for (size_t W = 1; 2 * W <= Live.size(); W *= 2) {
      const std::vector<int64_t> &Prev = Table.back();
      std::vector<int64_t> Next(Live.size() - 2 * W + 1);
      for (size_t I = 0; I < Next.size(); ++I)
        Next[I] = std::max(Prev[I], Prev[I + W]);
      Table.push_back(std::move(Next));
    }
  }
  int64_t max(unsigned Lo, unsigned Hi) const {
    unsigned K = std::bit_width(Hi - Lo + 1u) - 1;
    return std::max(Table[K][Lo], Table[K][Hi + 1 - (1u << K)]);
  }

private:
  std::vector<std::vector<int64_t>> Table;
};

enum class Mode {
  BestFit,   ///< the smallest gap that holds the buffer
  TwoEnded,  ///< below Limit, the free end farthest from the neighbours
  BankAware, ///< below Limit, fewest banks shared with partners
};

/// Greedy placement in Order.
Packing place(const std::vector<ArenaBuffer> &Bufs,
              const std::vector<size_t> &Order,
              const std::vector<std::vector<size_t>> &PartnersOf,
              const BankModel &Banks, Mode How, int64_t Limit) {
  Packing P;
  P.Offsets.assign(Bufs.size(), -1);
  unsigned Steps = 0;
  for (const ArenaBuffer &B : Bufs)
    Steps = std::max(Steps, B.Last + 1);
  PlacedIndex Placed(Steps);
  std::vector<std::pair<int64_t, int64_t>> Taken;
  for (size_t I : Order) {
    const ArenaBuffer &B = Bufs[I];
    Taken.clear();
    Placed.overlapping(B.First, B.Last, [&](size_t J) {
      if (!exclusive(B, Bufs[J]))
        Taken.push_back({P.Offsets[J], P.Offsets[J] + Bufs[J].Size});
    });
    std::sort(Taken.begin(), Taken.end());
    // Candidate positions: the start of every gap and the top of the pile.
    std::vector<std::pair<int64_t, int64_t>> Gaps; // (start, length)
    int64_t Cursor = 0;
    for (auto [Lo, Hi] : Taken) {
      if (Lo > Cursor)
        Gaps.push_back({Cursor, Lo - Cursor});
      Cursor = std::max(Cursor, Hi);
    }
    Gaps.push_back({Cursor, INT64_MAX});
    int64_t Best = -1;
    if (How == Mode::TwoEnded && !Taken.empty()) {
      // The lowest and the highest free position below Limit; take the one
      // farther from the middle of the buffers live at the same time, so
      // neighbours in time alternate between the two ends of the arena.
      int64_t Low = -1, High = -1;
      for (auto [Start, Len] : Gaps) {
        int64_t End = Len == INT64_MAX ? Limit : Start + Len;
        End = std::min(End, Limit);
        if (End - Start < B.Size)
          continue;
        if (Low < 0)
          Low = Start;
        High = End - B.Size; // sizes and Limit are aligned: so is High
      }
      if (Low >= 0) {
        int64_t Sum = 0;
        for (auto [Lo, Hi] : Taken)
          Sum += Lo + Hi;
        double Middle = static_cast<double>(Sum) / (2.0 * Taken.size());
        double Mine = Low + B.Size / 2.0, Theirs = High + B.Size / 2.0;
        Best = std::abs(Theirs - Middle) > std::abs(Mine - Middle) ? High : Low;
      }
    }
    if (How == Mode::BankAware && Banks.enabled()) {
      // Bank-aware: every fitting position (gap start or gap end), fewest
      // shared banks with placed partners, then lowest address.
      int64_t BestShared = INT64_MAX;
      for (auto [Start, Len] : Gaps) {
        if (Len < B.Size)
          continue;
        std::vector<int64_t> Cands = {Start};
        if (Len != INT64_MAX)
          Cands.push_back(Start + Len - B.Size);
        else
          for (int64_t K = 1; K < Banks.Count; ++K)
            Cands.push_back((Start / Banks.Granule + K) * Banks.Granule);
        for (int64_t Pos : Cands) {
          if (Pos + B.Size > Limit || Pos < Start)
            continue;
          uint64_t Mine = Banks.banks(Pos, B.Size);
          int64_t Shared = 0;
          for (size_t Q : PartnersOf[I])
            if (P.Offsets[Q] >= 0 &&
                (Mine & Banks.banks(P.Offsets[Q], Bufs[Q].Size)))
              ++Shared;
          if (Shared < BestShared || (Shared == BestShared && Pos < Best)) {
            BestShared = Shared;
            Best = Pos;
          }
        }
      }
    }
    if (Best < 0) {
      // Best fit: the smallest bounded gap that holds the buffer.
      int64_t BestLen = INT64_MAX;
      for (auto [Start, Len] : Gaps)
        if (Len >= B.Size && Len < BestLen) {
          Best = Start;
          BestLen = Len;
        }
      if (Best < 0)
        Best = Gaps.back().first; // on top of the pile
    }
    P.Offsets[I] = Best;
    P.Size = std::max(P.Size, Best + B.Size);
    Placed.add(I, B);
  }
  return P;
}

} // namespace

Packing packArena(const std::vector<ArenaBuffer> &Bufs,
                  const std::vector<std::pair<size_t, size_t>> &Partners,
                  const BankModel &Banks) {
  size_t N = Bufs.size();
  std::vector<std::vector<size_t>> PartnersOf(N);
  for (auto [A, B] : Partners) {
    PartnersOf[A].push_back(B);
    PartnersOf[B].push_back(A);
  }
  // Live totals per step; the breadth of a buffer is the largest live total
  // during its lifetime, and the largest overall bounds every packing.
  std::vector<int64_t> Live = liveTotals(Bufs, /*Padded=*/true);
  int64_t Bound =
      Live.empty() ? 0 : *std::max_element(Live.begin(), Live.end());
  std::vector<int64_t> Breadth(N, 0);
  RangeMax LiveMax(Live);
  for (size_t I = 0; I < N; ++I)
    Breadth[I] = LiveMax.max(Bufs[I].First, Bufs[I].Last);
  std::vector<size_t> Identity(N);
  std::iota(Identity.begin(), Identity.end(), 0);
  auto Sorted = [&](auto Less) {
    std::vector<size_t> O = Identity;
    std::stable_sort(O.begin(), O.end(), Less);
    return O;
  };
  std::vector<std::pair<std::string, std::vector<size_t>>> Orders = {
      {"greedy-by-size",
       Sorted([&](size_t A, size_t B) { return Bufs[A].Size > Bufs[B].Size; })},
      {"greedy-by-breadth", Sorted([&](size_t A, size_t B) {
         return Breadth[A] != Breadth[B] ? Breadth[A] > Breadth[B]
                                         : Bufs[A].Size > Bufs[B].Size;
       })},
      {"greedy-by-start", Sorted([&](size_t A, size_t B) {
         return Bufs[A].First < Bufs[B].First;
       })},
  };

  Packing Best;
  bool Have = false;
  auto Consider = [&](Packing P, const std::string &Name) {
    P.Strategy = Name;
    P.SameBankPairs = countSameBankPairs(Bufs, P.Offsets, Partners, Banks);
    if (!Have || P.Size < Best.Size ||
        (P.Size == Best.Size && P.SameBankPairs < Best.SameBankPairs)) {
      Best = std::move(P);
      Have = true;
    }
  };
  for (const auto &[Name, Order] : Orders)
    Consider(place(Bufs, Order, PartnersOf, Banks, Mode::BestFit, -1), Name);
  // Aim at the bound: alternate ends (optimal on chains).
  if (Best.Size > Bound)
    Consider(place(Bufs, Orders.back().second, PartnersOf, Banks,
                   Mode::TwoEnded, Bound),
             "two-ended");
  // Exhaustive over placement orders for small arenas (8! = 40320), until
  // one reaches the bound.
  if (N > 1 && N <= 8 && Best.Size > Bound) {
    std::vector<size_t> O = Identity;
    do
      Consider(place(Bufs, O, PartnersOf, Banks, Mode::BestFit, -1),
               "exhaustive");
    while (Best.Size > Bound && std::next_permutation(O.begin(), O.end()));
  }
  // Banks: partners in different banks, using the region's capacity if
  // need be; fewer shared banks win over size.
  if (Banks.enabled() && Best.SameBankPairs > 0) {
    int64_t Limit = std::max(Best.Size, Banks.Capacity);
    for (const auto &[Name, Order] : Orders) {
      Packing P = place(Bufs, Order, PartnersOf, Banks, Mode::BankAware, Limit);
      P.Strategy = Name + "+banks";
      P.SameBankPairs = countSameBankPairs(Bufs, P.Offsets, Partners, Banks);
      if (P.Size <= Limit && std::make_pair(P.SameBankPairs, P.Size) <
                                 std::make_pair(Best.SameBankPairs, Best.Size))
        Best = std::move(P);
    }
  }
  if (!Have)
    Best.Strategy = "empty";
  return Best;
}

} // namespace cuvil
