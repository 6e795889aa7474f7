//===- Report.h - JSON build report ------------------------------*- C++
//-*-===//
#ifndef CUVIL_EMIT_REPORT_H
#define CUVIL_EMIT_REPORT_H

#include "emit/HeaderWriter.h"
#include "ir/Graph.h"
#include "lowering/KernelCall.h"
#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

#include <string>
#include <vector>

namespace cuvil {

/// Plan's buffers by arena, then offset, then first live step (then root
/// value id, so the order is total): the order the report and `cuvilc
/// plan` list them in.
std::vector<const ArenaBuffer *> buffersByAddress(const MemoryPlan &Plan);

/// The build report: the model's C interface (entry-point prefix, size of
/// the instance struct, every input and output with its type, shape and
/// bytes: what a caller without the header, such as the Python package,
/// needs), the memory plan (schedule; per arena its region, size, lower
/// bound, ratio, strategy and same-bank pairs; the greedy baseline; per
/// buffer its arena, offset, size, live steps and the values stored in it
/// with the ONNX nodes that produce them), the weights, and per node in
/// execution order: op, origins, MACs and output locations (and, given the
/// lowering L, whether it has code, its kernels, the bytes it moves and its
/// precision: emit/LayerFacts.h); the stack depth of init and run (bytes
/// and deepest call chain, or why there is no bound), when Info has them
/// (code was generated).
std::string writeReport(const Graph &G, const MemoryPlan &Plan,
                        const TargetInfo &T, const HeaderInfo &Info,
                        const std::string &WeightsRegion, uint64_t BlobSize,
                        const GraphLowering *L = nullptr);

} // namespace cuvil

#endif
