//===- LinkerScript.h - The model's linker-script fragment ------*- C++ -*-===//
#ifndef CUVIL_EMIT_LINKERSCRIPT_H
#define CUVIL_EMIT_LINKERSCRIPT_H

#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

#include <string>

namespace cuvil {

/// A `SECTIONS { ... }` fragment that the board's base script INCLUDEs:
/// places .cuvil.<name>.arena.<region> (NOLOAD) and .cuvil.<name>.weights
/// into the target's memory regions, aligned, with start/size symbols.
std::string writeLinkerScript(const std::string &ModelName,
                              const MemoryPlan &Plan, const TargetInfo &T,
                              const std::string &ArenaRegion,
                              bool EmbeddedWeights);

} // namespace cuvil

#endif
