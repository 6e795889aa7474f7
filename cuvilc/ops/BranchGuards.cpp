//===- BranchGuards.cpp - Only the taken branch of an If runs -------------===//
#include "ops/BranchGuards.h"

#include "ops/OpRegistry.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace cuvil {

std::vector<std::vector<RunCondition>> branchConditions(const Graph &G) {
  const auto &Nodes = G.nodes();
  std::vector<std::vector<RunCondition>> When(Nodes.size());
  std::unordered_map<const Node *, size_t> Index;
  for (size_t S = 0; S < Nodes.size(); ++S)
    Index.emplace(Nodes[S].get(), S);
  // Inner branching nodes come before the outer ones (they are part of a
  // branch the importer inlined first), so each outer condition is put in
  // front of the inner ones already set.
  for (size_t S = 0; S < Nodes.size(); ++S) {
    const Node &N = *Nodes[S];
    if (!N.def() || !N.def()->Branches)
      continue;
    auto Choice = N.def()->Branches(N);
    if (!Choice)
      continue;
    for (const BranchArm &Arm : Choice->Arms) {
      // What N reads only as this arm's results.
      std::unordered_set<const Value *> ArmOnly(Arm.Results.begin(),
                                                Arm.Results.end());
      ArmOnly.erase(Choice->Cond);
      for (const BranchArm &Other : Choice->Arms)
        if (&Other != &Arm)
          for (const Value *V : Other.Results)
            ArmOnly.erase(V);
      // From N back: every user of a node comes after it, so it is judged
      // after them.
      std::vector<bool> InArm(S, false);
      auto OnlyForArm = [&](const Value *V) {
        if (G.isGraphOutput(V))
          return false;
        return std::all_of(
            V->users().begin(), V->users().end(), [&](const Node *U) {
              if (U == &N)
                return ArmOnly.count(V) != 0;
              auto It = Index.find(U);
              return It != Index.end() && It->second < S && InArm[It->second];
            });
      };
      for (size_t P = S; P-- > 0;) {
        const auto &Outs = Nodes[P]->outputs();
        bool Used = std::any_of(Outs.begin(), Outs.end(), [](const Value *V) {
          return V && !V->users().empty();
        });
        InArm[P] =
            Used && std::all_of(Outs.begin(), Outs.end(), [&](const Value *V) {
              return !V || OnlyForArm(V);
            });
        if (InArm[P])
          When[P].insert(When[P].begin(), {Choice->Cond, Arm.When});
      }
    }
  }
  return When;
}

std::vector<std::vector<RunCondition>> readyConditions(const Graph &G) {
  const auto &Nodes = G.nodes();
  std::unordered_map<const Node *, size_t> Index;
  for (size_t S = 0; S < Nodes.size(); ++S)
    Index.emplace(Nodes[S].get(), S);
  auto When = branchConditions(G);
  for (size_t S = 0; S < Nodes.size(); ++S) {
    // A condition computed after the node cannot guard it (the schedules
    // order the conditions first; should one not, the node just runs).
    bool Ready =
        std::all_of(When[S].begin(), When[S].end(), [&](const RunCondition &C) {
          const Node *P = C.Cond->producer();
          return !P || Index.at(P) < S;
        });
    if (!Ready)
      When[S].clear();
  }
  return When;
}

void guardBranches(const Graph &G, GraphLowering &L) {
  auto When = readyConditions(G);
  for (size_t S = 0; S < When.size() && S < L.size(); ++S)
    L[S].RunsWhen = std::move(When[S]);
}

} // namespace cuvil
