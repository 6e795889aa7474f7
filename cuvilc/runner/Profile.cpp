//===- Profile.cpp - The per-step table of a --profile run ----------------===//
#include "runner/Profile.h"

#include "ir/Diagnostic.h"
#include "ir/Escape.h"

#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace cuvil {

uint64_t ProfileData::sum(unsigned Column) const {
  uint64_t S = 0;
  for (const auto &Row : Counts)
    S += Row[Column];
  return S;
}

llvm::Error decodeProfileTable(std::string_view Bytes, ProfileData &P) {
  size_t Want = profileTableBytes(P.Steps.size());
  if (Bytes.size() != Want)
    return makeError("the profile table holds {} bytes, the model's {} "
                     "steps need {}",
                     Bytes.size(), P.Steps.size(), Want);
  auto Word = [&](size_t I) {
    uint64_t W = 0;
    for (unsigned B = 0; B < 8; ++B) // little-endian on every target
      W |= uint64_t(static_cast<uint8_t>(Bytes[8 * I + B])) << (8 * B);
    return W;
  };
  P.Runs = Word(0);
  P.Counts.clear();
  for (size_t S = 0; S < P.Steps.size(); ++S)
    P.Counts.push_back({Word(1 + 2 * S), Word(2 + 2 * S)});
  return llvm::Error::success();
}

std::string profileText(const ProfileData &P) {
  std::string S;
  unsigned Cols = P.columns();
  uint64_t Total0 = P.sum(0);
  S += fmt::format("profile: {} steps, {} run(s); counts summed over the "
                   "runs\n",
                   P.Steps.size(), P.Runs);
  S += fmt::format("{:>5} {:>14}", "step", P.Counters[0]);
  if (Cols == 2)
    S += fmt::format(" {:>14}", P.Counters[1]);
  S += fmt::format(" {:>6}  {} ({}) <- ONNX nodes\n", "share", "node", "op");
  for (size_t I = 0; I < P.Steps.size(); ++I) {
    const ProfileStep &St = P.Steps[I];
    S += fmt::format("{:>5} {:>14}", I, P.Counts[I][0]);
    if (Cols == 2)
      S += fmt::format(" {:>14}", P.Counts[I][1]);
    double Share = Total0 ? 100.0 * double(P.Counts[I][0]) / double(Total0) : 0;
    S += fmt::format(" {:>5.1f}%  {} ({})", Share, printable(St.Name),
                     printable(St.Op));
    if (!St.Origins.empty() &&
        !(St.Origins.size() == 1 && St.Origins[0] == St.Name))
      S += fmt::format(
          " <- {}", printable(fmt::format("{}", fmt::join(St.Origins, ", "))));
    S += '\n';
  }
  S += fmt::format("{:>5} {:>14}", "sum", Total0);
  if (Cols == 2)
    S += fmt::format(" {:>14}", P.sum(1));
  S += '\n';
  if (P.Total && P.Runs == 1) {
    // What the steps leave out: run_v's prologue, the first read, return.
    S += fmt::format("{:>5} {:>14}", "run", (*P.Total)[0]);
    if (Cols == 2)
      S += fmt::format(" {:>14}", (*P.Total)[1]);
    double Covered =
        (*P.Total)[0] ? 100.0 * double(Total0) / double((*P.Total)[0]) : 0;
    S += fmt::format("  (the steps cover {:.2f}% of the run)\n", Covered);
  }
  return S;
}

nlohmann::ordered_json profileJson(const ProfileData &P) {
  using nlohmann::ordered_json;
  unsigned Cols = P.columns();
  ordered_json J;
  J["model"] = P.Model;
  J["target"] = P.Target;
  J["runs"] = P.Runs;
  J["counters"] = ordered_json::array();
  for (unsigned C = 0; C < Cols; ++C)
    J["counters"].push_back(P.Counters[C]);
  if (P.Total) {
    ordered_json T;
    for (unsigned C = 0; C < Cols; ++C)
      T[P.Counters[C]] = (*P.Total)[C];
    J["total"] = T;
  } else {
    J["total"] = nullptr;
  }
  ordered_json Steps = ordered_json::array();
  for (size_t I = 0; I < P.Steps.size(); ++I) {
    const ProfileStep &St = P.Steps[I];
    ordered_json E = {
        {"step", I}, {"node", St.Name}, {"op", St.Op}, {"origins", St.Origins}};
    for (unsigned C = 0; C < Cols; ++C)
      E[P.Counters[C]] = P.Counts[I][C];
    Steps.push_back(std::move(E));
  }
  J["steps"] = std::move(Steps);
  return J;
}

} // namespace cuvil
