//===- MemoryPlan.h - Where every tensor lives ------------------*- C++ -*-===//
//
// The planner decides, for every value the generated code touches, a base
// (the activation arena, the weight data block, or one of the caller's
// input/output buffers) and a byte offset from it. Arena buffers are
// placed by lifetime on the execution order, with in-place reuse for
// element-wise ops, views for reshapes, and the smallest of several offset
// assignments.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PLANNER_MEMORYPLAN_H
#define CUVIL_PLANNER_MEMORYPLAN_H

#include "ir/Graph.h"

#include <llvm/Support/Error.h>
#include <map>
#include <string>
#include <vector>

namespace cuvil {

enum class Base : uint8_t { Arena, Weights, Input, Output };

struct Location {
  Base B = Base::Arena;
  unsigned Index = 0; ///< Input/output number for Base::Input/Output.
  int64_t Offset = 0; ///< Bytes from the base.
};

/// One arena buffer (a set of aliased values).
struct ArenaBuffer {
  const Value *Root;     ///< The value that defines it.
  int64_t Size;          ///< Bytes, rounded up to the alignment.
  int64_t Offset;        ///< Bytes from the arena start.
  unsigned First, Last;  ///< Live range: node indices, inclusive.
};

struct MemoryPlan {
  std::map<unsigned, Location> Locations; ///< By value id.
  std::vector<ArenaBuffer> Buffers;
  /// Graph outputs that must be copied from another location at the end of
  /// a run (an output that is a graph input, a constant, or an alias of
  /// another output): (output index, source value).
  std::vector<std::pair<unsigned, const Value *>> OutputCopies;
  /// Weights in blob order, and their total size (aligned).
  std::vector<const Value *> Weights;
  int64_t WeightsSize = 0;

  int64_t Alignment = 64;
  int64_t ArenaSize = 0;
  /// Largest total size of simultaneously live buffers (before alignment).
  int64_t LowerBound = 0;
  /// Name of the offset-assignment strategy that won.
  std::string Strategy;

  const Location &at(const Value *V) const;
  /// arena bytes / lower bound (1.0 for an empty arena).
  double efficiency() const;
};

struct PlanOptions {
  int64_t Alignment = 64;
};

llvm::Expected<MemoryPlan> planMemory(const Graph &G, const PlanOptions &Opts);

} // namespace cuvil

#endif
