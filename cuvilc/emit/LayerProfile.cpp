//===- LayerProfile.cpp - A per-layer profile read back
//--------------------===//
//
// Built without exceptions: nlohmann's parse is asked not to throw, and
// every value's type is checked before it is read (a mistyped get<>()
// would abort).
//
//===----------------------------------------------------------------------===//
#include "emit/LayerProfile.h"

#include "ir/Diagnostic.h"
#include "ir/Escape.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace cuvil {

namespace {

using Json = nlohmann::json;

/// A count: a finite, non-negative number.
llvm::Expected<double> count(const Json &V, const std::string &Where) {
  if (!V.is_number())
    return makeError("{} is not a number", Where);
  double D = V.get<double>();
  if (!std::isfinite(D) || D < 0)
    return makeError("{} is {}: counts are finite and not negative", Where,
                     V.dump());
  return D;
}

/// A string member Key of O; absent: Default, or an error when Required.
llvm::Expected<std::string> stringKey(const Json &O, const char *Key,
                                      const std::string &Where, bool Required) {
  auto It = O.find(Key);
  if (It == O.end()) {
    if (Required)
      return makeError("{} has no \"{}\"", Where, Key);
    return std::string();
  }
  if (!It->is_string())
    return makeError("{}: \"{}\" is not a string", Where, Key);
  return It->get<std::string>();
}

llvm::Expected<LayerProfileStep>
readStep(const Json &S, size_t I, const std::vector<std::string> &Counters) {
  std::string Where = "steps[" + std::to_string(I) + "]";
  if (!S.is_object())
    return makeError("{} is not an object", Where);
  LayerProfileStep Step;
  Step.Step = static_cast<int64_t>(I);
  if (auto It = S.find("step"); It != S.end()) {
    if (!It->is_number_integer() || It->get<int64_t>() < 0)
      return makeError("{}: \"step\" is not a step number", Where);
    Step.Step = It->get<int64_t>();
  }
  auto Node = stringKey(S, "node", Where, true);
  if (!Node)
    return Node.takeError();
  Step.Node = std::move(*Node);
  auto Op = stringKey(S, "op", Where, false);
  if (!Op)
    return Op.takeError();
  Step.Op = std::move(*Op);
  for (size_t C = 0; C < Counters.size(); ++C) {
    auto It = S.find(Counters[C]);
    // The heat map needs the first counter of every step; the others are
    // shown where present.
    if (It == S.end()) {
      if (C == 0)
        return makeError("{} (node '{}') has no \"{}\" count", Where,
                         printable(Step.Node), Counters[0]);
      continue;
    }
    auto V = count(*It, Where + "." + Counters[C]);
    if (!V)
      return V.takeError();
    Step.Counts[Counters[C]] = *V;
  }
  return Step;
}

} // namespace

llvm::Expected<LayerProfile> parseLayerProfile(std::string_view Text) {
  Json Doc = Json::parse(Text.begin(), Text.end(), nullptr,
                         /*allow_exceptions=*/false);
  if (Doc.is_discarded())
    return makeError("not valid JSON");
  if (Doc.is_object() && Doc.contains("profile") && !Doc.contains("steps")) {
    Json Inner = *Doc.find("profile");
    Doc = std::move(Inner);
  }
  if (!Doc.is_object())
    return makeError("expected a JSON object with \"counters\" and "
                     "\"steps\" (see docs/profiling.md)");
  LayerProfile P;
  for (const char *Key : {"model", "target"}) {
    auto S = stringKey(Doc, Key, "the profile", false);
    if (!S)
      return S.takeError();
    (Key[0] == 'm' ? P.Model : P.Target) = std::move(*S);
  }
  if (auto It = Doc.find("runs"); It != Doc.end()) {
    if (!It->is_number_integer() || It->get<int64_t>() < 1)
      return makeError("\"runs\" is not a positive integer");
    P.Runs = It->get<int64_t>();
  }
  auto Counters = Doc.find("counters");
  if (Counters == Doc.end() || !Counters->is_array() || Counters->empty())
    return makeError("\"counters\" must be a non-empty array of counter "
                     "names");
  for (const Json &C : *Counters) {
    if (!C.is_string() || C.get<std::string>().empty())
      return makeError("\"counters\" holds something other than a counter "
                       "name");
    P.Counters.push_back(C.get<std::string>());
  }
  if (auto It = Doc.find("total"); It != Doc.end()) {
    if (!It->is_object())
      return makeError("\"total\" is not an object");
    for (const std::string &C : P.Counters) {
      auto V = It->find(C);
      if (V == It->end())
        continue;
      auto D = count(*V, "total." + C);
      if (!D)
        return D.takeError();
      P.Total[C] = *D;
    }
  }
  auto Steps = Doc.find("steps");
  if (Steps == Doc.end() || !Steps->is_array())
    return makeError("\"steps\" must be an array");
  if (Steps->empty())
    return makeError("\"steps\" is empty: nothing was profiled");
  for (size_t I = 0; I < Steps->size(); ++I) {
    auto S = readStep((*Steps)[I], I, P.Counters);
    if (!S)
      return S.takeError();
    P.Steps.push_back(std::move(*S));
  }
  return P;
}

} // namespace cuvil
