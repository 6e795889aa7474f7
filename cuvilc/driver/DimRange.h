//===- DimRange.h - One object for a range of a dimension -------*- C++ -*-===//
//
// `cuvilc build --dim seq=LO..HI` compiles one object that runs any value
// of `seq` in [LO, HI]. The model is compiled at HI: its memory is planned
// for the largest tensors, and its code is the lowering at HI. To make that
// code right at every other value, the front end (import, ONNX shape
// inference, constant folding, the passes) and the lowering run once more
// at each value of the range, and their results are compared with HI's:
//
//   - every node must run the same kernels on the same tensors (by name),
//     under the same conditions, with the same float arguments;
//   - every integer argument (a size, a stride, a byte offset into a
//     tensor, an element of a dimension array) becomes a formula of the
//     value, checked at every value of the range: a polynomial of degree
//     two or less in binomial form, else a table of one value per length
//     (DimFormula);
//   - every tensor must fit the bytes planned for it at HI, and values
//     sharing a buffer (in place) must stay the same size;
//   - every constant must be the same bytes as at HI, or their prefix (a
//     positional table sliced to the length).
//
// Any difference is an error naming the node or tensor and the value where
// the code stops being the same, so the object never runs a length its
// code was not proven for. The shapes and byte sizes of the graph's inputs
// and outputs get formulas too: the entry points report them (DimCode.cpp).
//
// The cost is one front end per value of the range (in parallel over the
// build's jobs), not one code generation.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DRIVER_DIMRANGE_H
#define CUVIL_DRIVER_DIMRANGE_H

#include "codegen/ModelCodegen.h"
#include "driver/Driver.h"
#include "ir/Graph.h"
#include "lowering/KernelCall.h"
#include "planner/MemoryPlan.h"

#include <functional>
#include <memory>

namespace cuvil {

/// The model's graph, optimised and lowered, at one value of the range.
struct RangeSample {
  std::unique_ptr<Graph> G;
  GraphLowering L;
};
using SampleFn = std::function<llvm::Expected<RangeSample>(int64_t)>;

/// Gives L (the lowering of G, the graph at R.Hi planned as Plan) the
/// formulas of its integers that vary over R, after checking every other
/// value's sample (Sample) against it as above; returns the entry points'
/// formulas. Jobs: processes for the samples (0: one per core).
llvm::Expected<DimRangeCode> fitDimRange(const DimRangeOption &R,
                                         const SampleFn &Sample, const Graph &G,
                                         GraphLowering &L,
                                         const MemoryPlan &Plan, unsigned Jobs);

/// The formula of Values (Values[k]: the integer at value Lo + k): the
/// binomial form when it is exact at every k, else the table.
DimFormula fitFormula(const std::vector<int64_t> &Values);

/// F as text in the dimension's name ("seq", "2*seq", "seq-1", "64").
std::string formulaText(const DimFormula &F, const std::string &Name,
                        int64_t Lo);

} // namespace cuvil

#endif
