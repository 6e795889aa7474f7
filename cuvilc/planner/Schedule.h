//===- Schedule.h - Execution orders that lower peak memory -----*- C++ -*-===//
#ifndef CUVIL_PLANNER_SCHEDULE_H
#define CUVIL_PLANNER_SCHEDULE_H

#include "ir/Graph.h"

#include <string>
#include <vector>

namespace cuvil {

struct Schedule {
  std::string Name;
  std::vector<Node *> Order;
};

/// Candidate topological orders of G's nodes, the model's own first:
///   model          the order of the ONNX file (with an If's condition
///                  moved before the branch nodes it guards, should the
///                  file compute it after them);
///   memory-greedy  list scheduling that runs, among the ready nodes, the
///                  one that grows live memory least;
///   depth-first    each output's inputs computed one subtree at a time,
///                  the most demanding subtree first;
///   exact          the order with the smallest peak of live activation
///                  bytes, by dynamic programming over the sets of nodes
///                  run so far (graphs with few such sets only).
/// Orders equal to an earlier candidate are left out.
std::vector<Schedule> candidateSchedules(const Graph &G);

} // namespace cuvil

#endif
