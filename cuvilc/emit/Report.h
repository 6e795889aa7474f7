//===- Report.h - JSON build report ------------------------------*- C++ -*-===//
#ifndef CUVIL_EMIT_REPORT_H
#define CUVIL_EMIT_REPORT_H

#include "ir/Graph.h"
#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

#include <string>

namespace cuvil {

/// The build report: memory map (arena buffers with offsets and live
/// ranges, weights), arena efficiency, and per node: op, origins, MACs and
/// output locations.
std::string writeReport(const Graph &G, const MemoryPlan &Plan,
                        const TargetInfo &T, const std::string &ArenaRegion,
                        const std::string &ModelName, uint64_t BlobSize);

} // namespace cuvil

#endif
