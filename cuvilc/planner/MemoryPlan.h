//===- MemoryPlan.h - Where every tensor lives ------------------*- C++ -*-===//
//
// The planner decides, for every value the generated code touches, a base
// (one of the activation arenas, the weight data block, or one of the
// caller's input/output buffers) and a byte offset from it.
//
// Steps (planMemory):
//   1. schedule: among several topological orders (the model's own, a
//      memory-greedy list schedule, a depth-first one, and an exact search
//      for small graphs) keep the one whose plan is smallest, and reorder
//      the graph's nodes to it;
//   2. aliasing: views (reshape...) share their input's buffer, element-wise
//      ops run in place when their input dies, a Concat's inputs are
//      computed straight into their slices of its output;
//   3. lifetimes and the lower bound (largest total size of buffers live at
//      one step in one run, before alignment); a buffer written only on one
//      branch of an If decided at run time records that branch, and
//      buffers of opposite branches never conflict (only one is written);
//   4. regions: buffers go to the target's arena regions by preference,
//      spilling to the next region only when the target allows it;
//   5. offsets: several assignment strategies per region, the smallest
//      result wins (ties: fewer same-bank operand pairs).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PLANNER_MEMORYPLAN_H
#define CUVIL_PLANNER_MEMORYPLAN_H

#include "ir/Graph.h"
#include "target/TargetInfo.h"

#include <llvm/Support/Error.h>
#include <map>
#include <string>
#include <vector>

namespace cuvil {

enum class Base : uint8_t { Arena, Weights, Input, Output };

struct Location {
  Base B = Base::Arena;
  /// Arena number (Base::Arena), input/output number (Base::Input/Output).
  unsigned Index = 0;
  int64_t Offset = 0; ///< Bytes from the base.
};

/// One arena buffer: a set of aliased values sharing storage.
struct ArenaBuffer {
  const Value *Root = nullptr;       ///< The value that owns the storage.
  std::vector<const Value *> Values; ///< Every value stored in it (Root first).
  int64_t Bytes = 0;                 ///< Unaligned size of the root.
  int64_t Size = 0;   ///< Bytes rounded up to the alignment, plus the
                      ///< plan's GuardBytes.
  int64_t Offset = 0; ///< Bytes from the start of its arena.
  unsigned First = 0,
           Last = 0;  ///< Live range: steps (node indices), inclusive.
  unsigned Arena = 0; ///< Index into MemoryPlan::Arenas.
  /// Conditions every value of the buffer is computed under (each: a
  /// condition value and the outcome): its nodes run only on that branch
  /// of an If (ops/BranchGuards.h). Empty: computed in every run.
  std::vector<std::pair<const Value *, bool>> RunsWhen;
};

/// True if A and B are never both written in one run: they belong to
/// opposite branches of one condition, so they may share bytes even while
/// both are live.
bool exclusive(const ArenaBuffer &A, const ArenaBuffer &B);

/// Symbol of a model's static arena in a region (the object defines it,
/// a system plan's fragment may set it): cuvil_<model>_arena_<region>, the
/// region in lower case.
std::string arenaSymbol(const std::string &Model, const std::string &Region);

/// The arena of one memory region.
struct ArenaPlan {
  std::string Region;     ///< Target region name.
  int64_t Size = 0;       ///< Bytes (a multiple of the alignment).
  int64_t LowerBound = 0; ///< Largest live total of its buffers at a step.
  std::string Strategy;   ///< Offset-assignment strategy that won.
  /// Pairs of buffers one kernel streams together (an input and an output
  /// of the same node) that share a memory bank; -1 if the region has no
  /// banks. Before: with the compact assignment; after: as placed.
  int64_t SameBankPairsBefore = -1, SameBankPairs = -1;
  double ratio() const {
    return LowerBound ? static_cast<double>(Size) / LowerBound : 1.0;
  }
};

struct MemoryPlan {
  std::map<unsigned, Location> Locations; ///< By value id.
  std::vector<ArenaBuffer> Buffers;
  std::vector<ArenaPlan> Arenas; ///< One per region used (maybe empty).
  /// Graph outputs that must be copied from another location at the end of
  /// a run (an output that is a graph input, a constant, or an alias of
  /// another output): (output index, source value).
  std::vector<std::pair<unsigned, const Value *>> OutputCopies;
  /// Weights in blob order, and their total size (aligned).
  std::vector<const Value *> Weights;
  int64_t WeightsSize = 0;

  int64_t Alignment = 64;
  /// Bytes reserved after each arena buffer's aligned size (--checked:
  /// the generated code keeps a canary in [Offset + Bytes, Offset + Size)).
  int64_t GuardBytes = 0;
  /// Largest total size of simultaneously live buffers over all regions
  /// (after in-place decisions, before alignment padding).
  int64_t LowerBound = 0;
  /// The schedule that won, and the arena a plain greedy-by-size
  /// assignment without reordering, in-place reuse or views would need.
  std::string Schedule;
  int64_t BaselineSize = 0;

  const Location &at(const Value *V) const;
  /// Total arena bytes over all regions.
  int64_t arenaSize() const;
  /// Total arena bytes / lower bound (1.0 for an empty arena).
  double ratio() const;
  /// True if an input and an output of a kernel call resolve to the same
  /// bytes (the planner put the input in place): the copy is a no-op.
  bool sameStorage(const Value *A, int64_t OffA, const Value *B,
                   int64_t OffB) const;
};

struct PlanOptions {
  PlanOptions(int64_t Alignment = 64) : Alignment(Alignment) {}
  int64_t Alignment;
  /// Arena regions in order of preference (the target's by default), with
  /// their capacities; the first one that holds everything is used. When
  /// AllowSpill, buffers that do not fit go to the next region.
  std::vector<const MemoryRegion *> Regions;
  bool AllowSpill = false;
  /// Try other execution orders (and reorder the graph to the best).
  bool OptimizeSchedule = true;
  /// A Concat's inputs may be computed straight into their slices of its
  /// output. Off for a build for a range of a dimension: a slice's offset
  /// would vary with the dimension, the plan is made once for its largest
  /// value.
  bool ConcatSlices = true;
  /// Buffers of opposite branches of an If with a run-time condition share
  /// bytes (only one branch runs), so the arena holds the larger branch,
  /// not both. Off with GuardBytes: a --checked run paints and checks
  /// every buffer's canary whichever branch it takes.
  bool ShareBranches = true;
  /// A gap after every arena buffer (0, or a multiple of Alignment).
  int64_t GuardBytes = 0;
  /// The target's pointer width: no tensor may be larger than its
  /// address space.
  unsigned AddressBits = 64;
  /// In a region with banks: Spread puts the operands of a kernel in
  /// different banks, growing the arena within the region if need be;
  /// Compact keeps the smallest arena (its same-bank pairs are reported).
  enum class BankPolicy { Spread, Compact };
  BankPolicy Banks = BankPolicy::Spread;
};

/// Plans G's memory; may reorder G's nodes (a valid topological order).
/// Errors name the region, the bytes needed and the bytes available.
llvm::Expected<MemoryPlan> planMemory(Graph &G, const PlanOptions &Opts);

/// Plans G's memory for its current node order (no reordering); used by
/// planMemory for every candidate order, and by tests.
llvm::Expected<MemoryPlan> planForOrder(const Graph &G,
                                        const PlanOptions &Opts);

} // namespace cuvil

#endif
