//===- Schedule.cpp - Candidate execution orders --------------------------===//
//
// The cost model here is simple on purpose: a value produced by a node
// occupies its bytes from its producer until its last user has run; graph
// inputs, outputs and constants live elsewhere and cost nothing. The
// planner then plans every candidate for real (with in-place reuse and
// alignment) and keeps the best, so the model only has to rank orders.
//
//===----------------------------------------------------------------------===//
#include "planner/Schedule.h"

#include "ops/BranchGuards.h"
#include "ops/OpRegistry.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <functional>
#include <unordered_map>

namespace cuvil {
namespace {

/// Dependencies and costs of the nodes, by index in G.nodes().
struct DepGraph {
  size_t N = 0;
  std::vector<std::vector<size_t>> Preds, Succs;
  std::vector<int64_t> OutBytes; ///< Arena bytes a node's outputs take.
  /// Per node: (bytes, indices of the nodes that use them) per output.
  std::vector<std::vector<std::pair<int64_t, std::vector<size_t>>>> Outs;
};

bool costsArena(const Graph &G, const Value *V) {
  return V->kind() == ValueKind::Intermediate && !G.isGraphOutput(V);
}

DepGraph buildDeps(const Graph &G) {
  DepGraph D;
  D.N = G.nodes().size();
  std::unordered_map<const Node *, size_t> Index;
  for (size_t I = 0; I < D.N; ++I)
    Index[G.nodes()[I].get()] = I;
  D.Preds.resize(D.N);
  D.Succs.resize(D.N);
  D.OutBytes.assign(D.N, 0);
  D.Outs.resize(D.N);
  // A node of one branch of an If runs only when the If's condition says
  // so: the condition is computed first.
  auto When = branchConditions(G);
  for (size_t I = 0; I < D.N; ++I) {
    const Node &Nd = *G.nodes()[I];
    std::vector<const Value *> Reads(Nd.inputs().begin(), Nd.inputs().end());
    for (const RunCondition &C : When[I])
      Reads.push_back(C.Cond);
    for (const Value *V : Reads)
      if (V && V->producer()) {
        size_t P = Index.at(V->producer());
        if (std::find(D.Preds[I].begin(), D.Preds[I].end(), P) ==
            D.Preds[I].end()) {
          D.Preds[I].push_back(P);
          D.Succs[P].push_back(I);
        }
      }
    bool View = Nd.def() && Nd.def()->has(OpTrait::View);
    for (const Value *V : Nd.outputs()) {
      int64_t Bytes = costsArena(G, V) && !View ? V->byteSize() : 0;
      std::vector<size_t> Users;
      for (const Node *U : V->users())
        Users.push_back(Index.at(U));
      D.OutBytes[I] += Bytes;
      D.Outs[I].push_back({Bytes, std::move(Users)});
    }
  }
  return D;
}

std::vector<Node *> toNodes(const Graph &G, const std::vector<size_t> &Order) {
  std::vector<Node *> Out;
  for (size_t I : Order)
    Out.push_back(G.nodes()[I].get());
  return Out;
}

/// Runs the nodes in the order Pick chooses among the ready ones (kept
/// sorted by index). Pick returns NoPick to give up: the result is empty.
constexpr size_t NoPick = SIZE_MAX;
std::vector<size_t>
listSchedule(const DepGraph &D,
             const std::function<size_t(const std::vector<size_t> &Ready,
                                        const std::vector<bool> &Done)> &Pick) {
  std::vector<size_t> Missing(D.N), Order;
  std::vector<bool> Done(D.N, false);
  std::vector<size_t> Ready;
  for (size_t I = 0; I < D.N; ++I)
    if (!(Missing[I] = D.Preds[I].size()))
      Ready.push_back(I);
  while (!Ready.empty()) {
    size_t K = Pick(Ready, Done);
    if (K == NoPick)
      return {};
    size_t I = Ready[K];
    Ready.erase(Ready.begin() + K);
    Done[I] = true;
    Order.push_back(I);
    for (size_t S : D.Succs[I])
      if (--Missing[S] == 0)
        Ready.insert(std::lower_bound(Ready.begin(), Ready.end(), S), S);
  }
  return Order;
}

/// Producers before users (Kahn's algorithm; the graph is acyclic).
std::vector<size_t> topologicalOrder(const DepGraph &D) {
  std::vector<size_t> Missing(D.N), Order;
  Order.reserve(D.N);
  for (size_t I = 0; I < D.N; ++I)
    if (!(Missing[I] = D.Preds[I].size()))
      Order.push_back(I);
  for (size_t K = 0; K < Order.size(); ++K)
    for (size_t S : D.Succs[Order[K]])
      if (--Missing[S] == 0)
        Order.push_back(S);
  assert(Order.size() == D.N && "dependency cycle in a verified graph");
  return Order;
}

/// Bytes freed by running node I after the nodes in Done: its inputs whose
/// other users have all run.
int64_t freedBy(const DepGraph &D, size_t I, const std::vector<bool> &Done) {
  int64_t Freed = 0;
  for (size_t P : D.Preds[I])
    for (const auto &[Bytes, Users] : D.Outs[P]) {
      if (!Bytes || std::find(Users.begin(), Users.end(), I) == Users.end())
        continue;
      bool Last = std::all_of(Users.begin(), Users.end(),
                              [&](size_t U) { return U == I || Done[U]; });
      Freed += Last ? Bytes : 0;
    }
  return Freed;
}

/// Gives up (empty result) once it has weighed MaxCandidates ready nodes
/// in all, which bounds its time on very wide graphs (each step weighs
/// every ready node); chains and ordinary models stay far below.
std::vector<size_t> memoryGreedy(const DepGraph &D) {
  constexpr size_t MaxCandidates = 20000000;
  size_t Weighed = 0;
  return listSchedule(
      D, [&](const std::vector<size_t> &Ready, const std::vector<bool> &Done) {
        if ((Weighed += Ready.size()) > MaxCandidates)
          return NoPick;
        size_t Best = 0;
        int64_t BestGrowth = INT64_MAX;
        for (size_t K = 0; K < Ready.size(); ++K) {
          int64_t Growth = D.OutBytes[Ready[K]] - freedBy(D, Ready[K], Done);
          if (Growth < BestGrowth) {
            BestGrowth = Growth;
            Best = K;
          }
        }
        return Best;
      });
}

/// Post-order from the graph outputs; a node's producers are visited in
/// decreasing order of the peak their subtrees need (Sethi-Ullman style).
/// Iterative (an explicit stack), so a chain of any length fits.
std::vector<size_t> depthFirst(const Graph &G, const DepGraph &D) {
  // The peak each node's subtree needs, producers before users.
  std::vector<int64_t> Need(D.N, 0);
  for (size_t I : topologicalOrder(D)) {
    int64_t M = D.OutBytes[I];
    for (size_t P : D.Preds[I])
      M = std::max(M, Need[P]);
    Need[I] = M;
  }
  std::vector<bool> Seen(D.N, false);
  std::vector<size_t> Order;
  Order.reserve(D.N);
  struct Frame {
    size_t Node;
    std::vector<size_t> Preds; ///< Most demanding first.
    size_t Next = 0;
  };
  std::vector<Frame> Stack;
  auto Push = [&](size_t I) {
    Seen[I] = true;
    Frame F{I, D.Preds[I]};
    std::stable_sort(F.Preds.begin(), F.Preds.end(),
                     [&](size_t A, size_t B) { return Need[A] > Need[B]; });
    Stack.push_back(std::move(F));
  };
  auto Visit = [&](size_t Root) {
    if (Seen[Root])
      return;
    Push(Root);
    while (!Stack.empty()) {
      Frame &F = Stack.back();
      if (F.Next < F.Preds.size()) {
        size_t P = F.Preds[F.Next++];
        if (!Seen[P])
          Push(P); // invalidates F
        continue;
      }
      Order.push_back(F.Node);
      Stack.pop_back();
    }
  };
  std::unordered_map<const Node *, size_t> Index;
  for (size_t I = 0; I < D.N; ++I)
    Index[G.nodes()[I].get()] = I;
  for (const Value *O : G.outputs())
    if (O->producer())
      Visit(Index.at(O->producer()));
  for (size_t I = 0; I < D.N; ++I) // nodes no output depends on
    Visit(I);
  return Order;
}

/// Exact minimum peak by dynamic programming over downward-closed node
/// sets, breadth-first by set size. Gives up (empty result) beyond 64
/// nodes or past a budget of states, which bounds its time on wide graphs.
/// Sets are bit masks, and so is what each step needs to know: a node is
/// ready when its producers' bits are set; an output it reads is freed by
/// it when every other user's bit is set (freedBy, in masks).
std::vector<size_t> exactOrder(const DepGraph &D) {
  constexpr size_t MaxStates = 200000;
  if (D.N > 64 || D.N == 0)
    return {};
  using Set = uint64_t;
  struct State {
    int64_t Peak;
    int64_t Live; ///< Bytes live after running the set.
    Set Prev;
    size_t Last;
  };
  struct Read {
    int64_t Bytes;
    Set OtherUsers; ///< The users of the output but the reader.
  };
  std::vector<Set> PredMask(D.N, 0);
  std::vector<std::vector<Read>> Reads(D.N);
  std::vector<int64_t> Unread(D.N, 0); ///< Outputs nobody reads die at once.
  for (size_t I = 0; I < D.N; ++I) {
    for (size_t P : D.Preds[I]) {
      PredMask[I] |= Set(1) << P;
      for (const auto &[Bytes, Users] : D.Outs[P]) {
        if (!Bytes || std::find(Users.begin(), Users.end(), I) == Users.end())
          continue;
        Set Others = 0;
        for (size_t U : Users)
          Others |= U == I ? 0 : Set(1) << U;
        Reads[I].push_back({Bytes, Others});
      }
    }
    for (const auto &[Bytes, Users] : D.Outs[I])
      if (Users.empty())
        Unread[I] += Bytes;
  }
  // Each layer's sets are visited in increasing order, so that among
  // equal peaks the first set and node found win, whatever the hashing.
  std::vector<std::unordered_map<Set, State>> Layers(D.N + 1);
  Layers[0][0] = {0, 0, 0, 0};
  size_t Visited = 0;
  std::vector<Set> Sets;
  for (size_t K = 0; K < D.N; ++K) {
    Visited += Layers[K].size();
    if (Visited > MaxStates)
      return {};
    Sets.clear();
    for (const auto &Entry : Layers[K])
      Sets.push_back(Entry.first);
    std::sort(Sets.begin(), Sets.end());
    std::unordered_map<Set, State> &Next = Layers[K + 1];
    Next.reserve(Sets.size() * 2);
    for (Set S : Sets) {
      const State St = Layers[K].at(S);
      for (size_t I = 0; I < D.N; ++I) {
        if ((S >> I & 1) || (PredMask[I] & ~S))
          continue;
        int64_t Peak = std::max(St.Peak, St.Live + D.OutBytes[I]);
        int64_t Live = St.Live + D.OutBytes[I] - Unread[I];
        for (const Read &R : Reads[I])
          Live -= (R.OtherUsers & ~S) ? 0 : R.Bytes;
        auto [It, New] =
            Next.try_emplace(S | Set(1) << I, State{Peak, Live, S, I});
        if (!New && Peak < It->second.Peak)
          It->second = {Peak, Live, S, I};
      }
    }
  }
  std::vector<size_t> Order;
  Set S = D.N == 64 ? ~Set(0) : (Set(1) << D.N) - 1;
  for (size_t K = D.N; K > 0; --K) {
    const State &St = Layers[K].at(S);
    Order.push_back(St.Last);
    S = St.Prev;
  }
  std::reverse(Order.begin(), Order.end());
  return Order;
}

} // namespace

std::vector<Schedule> candidateSchedules(const Graph &G) {
  DepGraph D = buildDeps(G);
  // The model's order, but with an If's condition before the nodes it
  // guards when the model computes it later (the lowest-index ready node
  // first: the model's order itself whenever that is possible).
  std::vector<size_t> Model =
      listSchedule(D, [](const std::vector<size_t> &,
                         const std::vector<bool> &) { return size_t(0); });
  std::vector<std::pair<std::string, std::vector<size_t>>> Orders = {
      {"model", Model},
      {"memory-greedy", memoryGreedy(D)},
      {"depth-first", depthFirst(G, D)},
      {"exact", exactOrder(D)},
  };
  std::vector<Schedule> Out;
  std::vector<std::vector<size_t>> Seen;
  for (auto &[Name, Order] : Orders) {
    if (Order.size() != D.N ||
        std::find(Seen.begin(), Seen.end(), Order) != Seen.end())
      continue;
    Seen.push_back(Order);
    Out.push_back({Name, toNodes(G, Order)});
  }
  return Out;
}

} // namespace cuvil
