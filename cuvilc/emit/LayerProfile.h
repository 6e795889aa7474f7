//===- LayerProfile.h - A per-layer profile read back -----------*- C++ -*-===//
//
// The JSON a profiled run writes (`cuvilc run --profile`: runner/Profile.h,
// docs/profiling.md) as `cuvilc report --profile-data` reads it: the
// counters the run read, their totals over the whole run_v, and their
// values per step (a node with code, or codegen/ProfileCode.h's
// OutputCopiesStep), each summed over "runs" runs. The object may stand at
// the top level or under a "profile" key (a `cuvilc run --json` summary).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_EMIT_LAYERPROFILE_H
#define CUVIL_EMIT_LAYERPROFILE_H

#include <llvm/Support/Error.h>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

/// One profiled step: a node with code, or the copies of the outputs.
struct LayerProfileStep {
  int64_t Step = 0;
  std::string Node; ///< The IR node's name.
  std::string Op;
  std::map<std::string, double> Counts; ///< Counter name -> value.
};

struct LayerProfile {
  std::string Model, Target; ///< Empty when the file does not say.
  int64_t Runs = 1;
  std::vector<std::string> Counters; ///< The first is the heat map's.
  std::map<std::string, double> Total;
  std::vector<LayerProfileStep> Steps;
};

/// Parses Text. Errors say what is wrong (the caller names the file): not
/// JSON, a missing or mistyped key, a step without the first counter, a
/// negative count.
llvm::Expected<LayerProfile> parseLayerProfile(std::string_view Text);

} // namespace cuvil

#endif
