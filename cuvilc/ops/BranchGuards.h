//===- BranchGuards.h - Only the taken branch of an If runs -----*- C++ -*-===//
//
// An If whose condition is known only at run time keeps both branches'
// nodes in the graph (the importer inlined them before it). Those that
// compute only one branch's results are guarded: their code runs only when
// the condition takes that branch (NodeLowering::RunsWhen), so a model pays
// for the branch it takes, not for both.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_BRANCHGUARDS_H
#define CUVIL_OPS_BRANCHGUARDS_H

#include "ir/Graph.h"
#include "lowering/KernelCall.h"

#include <vector>

namespace cuvil {

/// Per node of G (by index), the conditions it needs to run: those of every
/// arm of a branching node (OpDef::Branches) that alone needs it, that is
/// all its results are read only by that arm (as the branching node's
/// results of the arm, or by other nodes of the arm) and none is a graph
/// output. Nested branches give several conditions, outermost first. The
/// same in any topological order; the schedules order each condition
/// before the nodes it guards.
std::vector<std::vector<RunCondition>> branchConditions(const Graph &G);

/// branchConditions in G's current order, kept for a node only when every
/// one is computed before it (otherwise the node just runs): the
/// conditions its code is guarded by, which the memory plan relies on too.
std::vector<std::vector<RunCondition>> readyConditions(const Graph &G);

/// Sets L[S].RunsWhen to readyConditions for every node S.
void guardBranches(const Graph &G, GraphLowering &L);

} // namespace cuvil

#endif
