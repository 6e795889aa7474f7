//===- LinkerScript.h - The model's linker-script fragment ------*- C++ -*-===//
#ifndef CUVIL_EMIT_LINKERSCRIPT_H
#define CUVIL_EMIT_LINKERSCRIPT_H

#include "planner/MemoryPlan.h"
#include "target/RegionMap.h"
#include "target/TargetInfo.h"

#include <string>

namespace cuvil {

/// A `SECTIONS { ... }` fragment that the board's base script INCLUDEs:
/// places every .cuvil.<name>.arena.<region> (NOLOAD) in its region and
/// .cuvil.<name>.weights in WeightsRegion (unless the weights are external),
/// aligned, with start/end symbols. The `> REGION` placements use the
/// firmware's names of the regions (Map); the section and symbol names
/// keep the target's.
std::string writeLinkerScript(const std::string &ModelName,
                              const MemoryPlan &Plan, const TargetInfo &T,
                              const std::string &WeightsRegion,
                              bool EmbeddedWeights, const RegionMap &Map = {});

/// The pieces of a fragment, shared with the system plan's
/// (emit/SystemPlan.h): the comment line naming the firmware's regions
/// (empty without a map), the comment's last line stating the alignment,
/// and the output sections of model N's weights and of its arena in
/// target region Arena, placed `> Region` (the firmware's name).
std::string regionMapComment(const RegionMap &Map);
std::string alignmentComment(int64_t Alignment);
std::string weightsSection(const std::string &N, int64_t Alignment,
                           const std::string &Region);
std::string arenaSection(const std::string &N, const std::string &Arena,
                         int64_t Alignment, const std::string &Region);

} // namespace cuvil

#endif
