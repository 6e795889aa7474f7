//===- LowerGraph.h - Every node of a graph to kernel calls -----*- C++ -*-===//
//
// The lowering stage: between the planner and codegen, the driver asks each
// node's OpDef for its kernel calls and hands the result to codegen.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_LOWERGRAPH_H
#define CUVIL_OPS_LOWERGRAPH_H

#include "ir/Graph.h"
#include "lowering/KernelCall.h"

#include <llvm/Support/Error.h>

namespace cuvil {

/// The kernel calls of every node of G, in node order, and the conditions
/// the nodes of an If's branches run under; the first node that cannot be
/// lowered gives the error. Cores > 1: the nodes whose ops split also get
/// their shares for that many cores (NodeLowering::Shares).
llvm::Expected<GraphLowering> lowerGraph(const Graph &G, int64_t Cores = 1);

} // namespace cuvil

#endif
