//===- ProfileData.h - A per-layer profile read back ------------*- C++ -*-===//
//
// The JSON a profiled run writes (`cuvilc run --profile`, docs/profiling.md)
// as `cuvilc report --profile-data` reads it: the counters the run read,
// their totals over the whole inference, and their values per step. The
// object may stand at the top level or under a "profile" key (inside a
// `cuvilc run --json` summary).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_EMIT_PROFILEDATA_H
#define CUVIL_EMIT_PROFILEDATA_H

#include <llvm/Support/Error.h>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

/// One profiled step: a node with code, or the copies of the outputs.
struct ProfileStep {
  int64_t Step = 0;
  std::string Node; ///< The IR node's name.
  std::string Op;
  std::map<std::string, double> Counts; ///< Counter name -> value.
};

struct ProfileData {
  std::string Model, Target; ///< Empty when the file does not say.
  int64_t Runs = 1;
  std::vector<std::string> Counters; ///< The first is the heat map's.
  std::map<std::string, double> Total;
  std::vector<ProfileStep> Steps;
};

/// The step a run adds after the model's own, for the copies of the
/// outputs into the caller's buffers: no node of the graph.
inline constexpr std::string_view OutputCopiesStep = "(output copies)";

/// Parses Text. Errors say what is wrong (the caller names the file): not
/// JSON, a missing or mistyped key, a step without the first counter, a
/// negative count.
llvm::Expected<ProfileData> parseProfileData(std::string_view Text);

} // namespace cuvil

#endif
