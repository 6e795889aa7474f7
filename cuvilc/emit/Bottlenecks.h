//===- Bottlenecks.h - A profile matched to a build, and read ---*- C++ -*-===//
//
// `cuvilc report --profile-data`: each profiled step matched to its node of
// the build, with its share of the run and its MACs per counted unit
// (against the target's peak when the counter is cycles), and the
// "bottlenecks": the layers that take the most time beyond what their MACs
// would cost at the model's median rate, each with the likely reasons the
// facts of the layer suggest. These are heuristics, and the page says so.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_EMIT_BOTTLENECKS_H
#define CUVIL_EMIT_BOTTLENECKS_H

#include "emit/LayerFacts.h"
#include "emit/LayerProfile.h"
#include "target/TargetInfo.h"

#include <llvm/Support/Error.h>
#include <optional>
#include <string>
#include <vector>

namespace cuvil {

/// One profiled step.
struct ProfileRow {
  /// Its node in the build; null for the copies of the outputs.
  const LayerFacts *Layer = nullptr;
  const LayerProfileStep *Step = nullptr;
  double Count = 0; ///< Of the heat map's counter, per run.
  double Share = 0; ///< Of the run's total, 0..1.
  /// MACs per counted unit (per cycle, per nanosecond...); none without
  /// MACs or counts.
  std::optional<double> Rate;
  /// Rate over the target's peak for the layer's precision: only when the
  /// counter is "cycles" and the target states its peak.
  std::optional<double> PeakFraction;
};

struct Bottleneck {
  size_t Row = 0;    ///< Index into ProfileAnalysis::Rows.
  double Excess = 0; ///< Counted units beyond the median rate's cost.
  double ExcessShare = 0;
  std::vector<std::string> Reasons;
};

struct ProfileAnalysis {
  std::string Counter; ///< The heat map's: the profile's first.
  bool Cycles = false; ///< Counter is "cycles": peak fractions apply.
  /// The share's denominator: the run's measured total when the profile
  /// has one (and it is not below the steps' sum), else the steps' sum.
  double Total = 0;
  bool TotalMeasured = false;
  double StepSum = 0;
  double MaxShare = 0;
  /// Median MACs per unit over the profiled layers that have MACs.
  std::optional<double> MedianRate;
  std::vector<ProfileRow> Rows;        ///< In the profile's (execution) order.
  std::vector<Bottleneck> Bottlenecks; ///< Largest excess first.
};

/// The most bottlenecks listed; what makes one: a rate below this fraction
/// of the median (or no MACs), and an excess of at least this share of the
/// total. On a board whose every layer runs near the same rate (u74-mc's
/// scalar FPU), the slowest still differ by 10% or more.
inline constexpr size_t MaxBottlenecks = 8;
inline constexpr double SlowRateFraction = 0.9;
inline constexpr double MinExcessShare = 0.001;
/// Bytes moved per MAC at or above which a layer is called memory-bound.
inline constexpr double MemoryBoundBytesPerMac = 0.5;
/// Output positions per channel at or below which a layer is called small.
inline constexpr int64_t SmallSpatial = 64;

/// Matches P to the build (Layers, in execution order, on target T). A
/// profile of another target, or whose nodes are not the build's (a step
/// naming an unknown node or a view, a node with kernel calls other than
/// copies that has no step, a node profiled twice), is an error saying
/// which.
/// The rows point into Layers and P, which must outlive the result.
llvm::Expected<ProfileAnalysis>
analyzeProfile(const LayerProfile &P, const std::vector<LayerFacts> &Layers,
               const TargetInfo &T);

} // namespace cuvil

#endif
