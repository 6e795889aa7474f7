//===- Optional.h - Graph inputs the caller may leave out -------*- C++ -*-===//
//
// An input of ONNX optional type (PyTorch exports an Optional[Tensor]
// argument so) is imported as a tensor input the caller may leave out: run
// takes NULL for it. The graph tests it with OptionalHasElement (a kernel
// that tests the pointer) and reads it through OptionalGetElement (a view);
// the readers must run only when the test says it is there, which the
// If branch guards (ops/BranchGuards.h) give.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_SEQUENCE_OPTIONAL_H
#define CUVIL_OPS_SEQUENCE_OPTIONAL_H

#include "ir/Graph.h"
#include "lowering/KernelCall.h"

#include <llvm/Support/Error.h>

#include <vector>

namespace cuvil {

/// Per graph input of G: whether the caller may leave it out (pass NULL),
/// that is whether the graph tests it with OptionalHasElement.
std::vector<bool> optionalInputs(const Graph &G);

/// Checks that every node whose code reads an optional input (or a view of
/// one) runs only when that input is present: guarded (L's RunsWhen) by an
/// OptionalHasElement of it, through Not and bool Casts, or, for an If,
/// reading it only as the result of such an arm. A model that reads one
/// unconditionally gets an error naming the node and the input.
llvm::Error checkOptionalReads(const Graph &G, const GraphLowering &L);

} // namespace cuvil

#endif
