//===- ControlFlow.h - If outputs whose shape a run-time branch picks -*- C++
//-*-===//
//
// An If under a condition known only at run time may give a graph output
// different shapes in its two branches. The output is planned for the
// larger, run records which branch wrote it, and the caller asks for its
// shape after the run (cuvil_<name>_output_shape, codegen/EntryBuilder).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_SEQUENCE_CONTROLFLOW_H
#define CUVIL_OPS_SEQUENCE_CONTROLFLOW_H

#include "ir/Graph.h"
#include "lowering/KernelCall.h"

#include <vector>

namespace cuvil {

/// G's graph outputs whose shape the branch of an If with a run-time
/// condition picks, in output order.
std::vector<BranchShapedOutput> branchShapedOutputs(const Graph &G);

} // namespace cuvil

#endif
