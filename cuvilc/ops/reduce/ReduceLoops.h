//===- ReduceLoops.h - Kept/reduced loop nests of a reduction ---*- C++ -*-===//
//
// Shared by the Reduce* ops and the normalizations that reduce over a set of
// axes (MeanVarianceNormalization): both hand the kernel two padded loop
// nests with element strides instead of a list of axes.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_REDUCELOOPS_H
#define CUVIL_OPS_REDUCELOOPS_H

#include "ir/Graph.h"

#include <llvm/Support/Error.h>
#include <vector>

namespace cuvil {

/// Kept and reduced loop nests of a reduction.
struct ReduceLoops {
  bool Identity = false; ///< empty axes with noop_with_empty_axes: a copy
  /// A non-constant axes input: the kernel reads the axes at run time.
  const Value *RuntimeAxes = nullptr;
  std::vector<int64_t> OutShape, OutStr, RedShape, RedStr;
};

/// Splits Shape (dense, row-major) into kept and reduced loops. Reduced[d]
/// marks the reduced dimensions. Unit dimensions are dropped, contiguous
/// neighbours merged, and both nests padded on the left to PadToRank.
llvm::Expected<ReduceLoops> reduceLoops(const Node &N,
                                        const std::vector<int64_t> &Shape,
                                        const std::vector<bool> &Reduced,
                                        size_t PadToRank);
/// reduceLoops over the listed Axes (possibly negative, each at most once);
/// no axes at all reduces every dimension.
llvm::Expected<ReduceLoops> axesLoops(const Node &N,
                                      const std::vector<int64_t> &Shape,
                                      const std::vector<int64_t> &Axes,
                                      size_t PadToRank);

} // namespace cuvil

#endif
