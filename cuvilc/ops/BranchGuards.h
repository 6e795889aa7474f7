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

namespace cuvil {

/// Sets L[S].RunsWhen for every node S that only one arm of a branching
/// node (OpDef::Branches) needs: all its results are read only by that
/// arm (as the branching node's results of the arm, or by other nodes
/// guarded for it), none is a graph output. Nested branches give several
/// conditions, outermost first.
void guardBranches(const Graph &G, GraphLowering &L);

} // namespace cuvil

#endif
