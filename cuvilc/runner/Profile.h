//===- Profile.h - The per-step table of a --profile run --------*- C++ -*-===//
//
// `cuvilc run --profile` reads the table a --profile build keeps in its
// model struct (codegen/ProfileCode.h) after one run: from the struct
// itself on the host, from the runner's profile.bin on a board. This file
// decodes those bytes and presents them: a text table for the terminal, and
// the JSON object `cuvilc report --profile-data` reads:
//
//   {"model", "target", "runs", "counters": ["cycles", "instructions"],
//    "total": {<counter>: N, ...},         the whole run_v, as measured
//    "steps": [{"step", "node", "op", "origins", <counter>: N, ...}]}
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNNER_PROFILE_H
#define CUVIL_RUNNER_PROFILE_H

#include "codegen/ProfileCode.h"

#include <array>
#include <cstdint>
#include <llvm/Support/Error.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

struct ProfileData {
  std::string Model, Target;
  /// What the columns count; the second is "" when unused (host).
  std::array<std::string, 2> Counters;
  uint64_t Runs = 0;
  std::vector<ProfileStep> Steps;
  std::vector<std::array<uint64_t, 2>> Counts; ///< One row per step.
  /// The whole run_v as the runner measured it around the call, when it
  /// did (boards: cycles and instructions).
  std::optional<std::array<uint64_t, 2>> Total;

  unsigned columns() const { return Counters[1].empty() ? 1 : 2; }
  uint64_t sum(unsigned Column) const;
};

/// Decodes Bytes, laid out as in the model struct (profile_runs, then one
/// row of two uint64_t per step, little-endian), into P.Runs and P.Counts.
/// P.Steps must be filled in already: their number sizes the table.
llvm::Error decodeProfileTable(std::string_view Bytes, ProfileData &P);

/// The table for the terminal: a row per step with its counters, share of
/// the first, node, op and ONNX nodes; then the sums, set against Total.
std::string profileText(const ProfileData &P);

nlohmann::ordered_json profileJson(const ProfileData &P);

} // namespace cuvil

#endif
