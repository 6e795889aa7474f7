//===- Liveness.h - Aliasing and lifetimes of arena buffers -----*- C++ -*-===//
//
// On the current node order: which values share storage (views, in-place
// ops, concat slices written in place), and from that the arena buffers of
// the plan with their live ranges. MemoryPlan.cpp places them.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PLANNER_LIVENESS_H
#define CUVIL_PLANNER_LIVENESS_H

#include "planner/MemoryPlan.h"

#include <unordered_map>

namespace cuvil {

/// Where a value's bytes are, relative to the storage of its root.
struct Alias {
  const Value *Root;
  int64_t Offset;
};

/// Decides aliasing (views, in-place, concat slices) on the current order
/// and collects the arena buffers with their live ranges.
class Liveness {
public:
  /// ShareBranches: record each buffer's branch conditions
  /// (ArenaBuffer::RunsWhen), so buffers of opposite branches may overlap.
  Liveness(const Graph &G, MemoryPlan &Plan, bool ConcatSlices = true,
           bool ShareBranches = false)
      : G(G), Plan(Plan), ConcatSlices(ConcatSlices),
        ShareBranches(ShareBranches) {}
  void run();

  std::unordered_map<const Value *, Alias> Aliases;
  std::unordered_map<const Value *, unsigned> OutputOf; // root -> output
  std::unordered_map<const Value *, size_t> BufferOf;   // root -> buffer

  Alias aliasOf(const Value *V) const {
    auto It = Aliases.find(V);
    return It == Aliases.end() ? Alias{V, 0} : It->second;
  }
  bool inArena(const Value *Root) const {
    return Root->kind() == ValueKind::Intermediate && !OutputOf.count(Root);
  }

private:
  bool canRunInPlace(const Node &N, unsigned Step) const;
  /// Records that V's bytes are at A, and the last use of A's root storage.
  void setAlias(const Value *V, Alias A) {
    Aliases[V] = A;
    if (auto It = LastUse.find(V); It != LastUse.end()) {
      auto [R, New] = RootLastUse.try_emplace(A.Root, It->second);
      if (!New)
        R->second = std::max(R->second, It->second);
    }
  }
  void concatInPlace(const Node &N);
  /// Sets each buffer's RunsWhen: the conditions all its writers share.
  void branchGuards();

  const Graph &G;
  MemoryPlan &Plan;
  bool ConcatSlices;
  bool ShareBranches;
  std::unordered_map<const Value *, unsigned> LastUse;
  /// Per root: the last use of any value aliased to it (not the root's own).
  std::unordered_map<const Value *, unsigned> RootLastUse;
};

} // namespace cuvil

#endif
