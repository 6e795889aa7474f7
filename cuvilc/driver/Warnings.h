//===- Warnings.h - What a build says without failing -----------*- C++ -*-===//
//
// A model that compiles may still run slower or bigger than its user
// expects. `cuvilc build` says so, naming the nodes (and `-Werror` makes
// each warning an error, with nothing written):
//   - an arena buffer that did not fit the target's fastest arena region
//     and spilled to a slower one;
//   - a node that computes in float inside a model whose other compute
//     nodes run in integer (a float island of an INT8 model, e.g. a layer
//     kept float, or one whose QDQ pattern could not be lowered);
//   - a convolution or Gemm with a large share of the model's MACs left on
//     the slow reference kernel, because its form has no optimised one.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DRIVER_WARNINGS_H
#define CUVIL_DRIVER_WARNINGS_H

#include "ir/Graph.h"
#include "planner/MemoryPlan.h"

#include <string>
#include <vector>

namespace cuvil {

struct BuildWarning {
  std::string Node; ///< The (first) node concerned, as the ONNX model names it.
  std::string Op;
  std::string Message;
};

/// The warnings of a graph after the passes and its memory plan, in step
/// order. FastRegion: the first arena region the plan was given.
/// OptimizedKernels: the build uses the optimised kernels (not --kernels
/// portable), so a node left on a reference kernel is worth a warning.
std::vector<BuildWarning> buildWarnings(const Graph &G, const MemoryPlan &Plan,
                                        const std::string &FastRegion,
                                        bool OptimizedKernels);

} // namespace cuvil

#endif
