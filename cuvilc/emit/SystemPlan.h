//===- SystemPlan.h - Several models in one memory map ----------*- C++ -*-===//
//
// `cuvilc link-plan` places the static arenas and embedded weights of
// several models built for one target in the target's memory regions
// together. Models the firmware never runs at the same time (an exclusive
// group) share one arena per region, as large as the largest member's;
// the others get their own. The plan is written as one linker-script
// fragment that replaces the models' own fragments, and a header of its
// totals.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_EMIT_SYSTEMPLAN_H
#define CUVIL_EMIT_SYSTEMPLAN_H

#include "target/RegionMap.h"
#include "target/TargetInfo.h"

#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil {

/// What the plan needs of one model: the facts of its build report.
struct SystemModel {
  std::string Name;   ///< Its C prefix (cuvil_<Name>_...).
  std::string Source; ///< The report it was read from (messages).
  int64_t Alignment = 64;
  struct Arena {
    std::string Region; ///< The target's name.
    int64_t Bytes = 0;
  };
  std::vector<Arena> Arenas;
  bool EmbeddedWeights = true;
  std::string WeightsRegion;
  int64_t WeightsBytes = 0; ///< Of the embedded blob.
};

/// One output section of the fragment: an arena of one model, the arena
/// several exclusive models share, or one model's weights.
struct SystemSlot {
  std::string Region;
  bool Weights = false;
  std::vector<size_t> Members; ///< Indices into the models; one unless shared.
  size_t Owner = 0;  ///< The member whose input section the slot keeps.
  int64_t Bytes = 0; ///< The largest member's, rounded up to the alignment.
  int Group = -1;    ///< Index of the exclusive group; -1: none.
  /// Of its start: the DMA alignment, or for an arena in a region with
  /// interleaved banks a whole bank cycle, so that each buffer keeps the
  /// bank its model's plan gave it.
  int64_t Align = 64;
};

struct SystemPlan {
  std::vector<SystemModel> Models;
  std::vector<std::vector<size_t>> Groups; ///< Exclusive groups.
  std::vector<SystemSlot> Slots;           ///< In placement order.
  int64_t Alignment = 64;
  /// Per region (the target's order): what the plan places there, and
  /// what the models would need without sharing.
  struct RegionUse {
    std::string Region;
    uint64_t Capacity = 0;
    int64_t Bytes = 0, Unshared = 0;
  };
  std::vector<RegionUse> Regions;
};

/// The --exclusive groups of model names as indices into Models.
/// Errors: an unknown name, a name twice, a model in two groups, a group
/// of fewer than two.
llvm::Expected<std::vector<std::vector<size_t>>>
resolveExclusive(const std::vector<SystemModel> &Models,
                 const std::vector<std::vector<std::string>> &Exclusive);

/// Places Models on target T (its region lengths as the firmware has
/// them); Groups from resolveExclusive. Errors: two models of one name, a
/// region T lacks, and a region whose contents exceed it; that one lists
/// every model's share of the region and the ways out.
llvm::Expected<SystemPlan> planSystem(std::vector<SystemModel> Models,
                                      std::vector<std::vector<size_t>> Groups,
                                      const TargetInfo &T);

/// The `SECTIONS { ... }` fragment of the plan, for the firmware's
/// cuvil-models.ld to INCLUDE instead of the models' own fragments. Each
/// shared arena keeps its largest member's input section; the others'
/// arena symbols are set to its start and their sections discarded. An
/// ASSERT per such member stops a link with an object whose arena
/// outgrew the plan (a model rebuilt without rerunning link-plan).
std::string writeSystemScript(const SystemPlan &P, const TargetInfo &T,
                              const RegionMap &Map);

/// A C header with the plan's totals per region and its groups.
std::string writeSystemHeader(const SystemPlan &P, const TargetInfo &T,
                              const std::string &Guard);

} // namespace cuvil

#endif
