//===- IRJson.cpp - The IR as JSON (--dump-ir-format json) ----------------===//
//
// One JSON object per dump, on one line, so that the dumps after several
// passes read as JSON Lines:
//   {"after": PASS, "graph": NAME,
//    "inputs": [VALUE], "outputs": [VALUE],
//    "nodes": [{"id", "name", "op", "domain"?, "inputs": [VALUE | null],
//               "outputs": [VALUE], "attributes": {NAME: VALUE},
//               "origins": [{"name", "index", "source"?}]}]}
// where VALUE is {"name", "dtype", "shape"} (and "constant": true for a
// weight). Constants' data is not written: the text form (with
// --dump-ir-data) is the one cuvil-opt reads back.
//
//===----------------------------------------------------------------------===//
#include "ir/Graph.h"

#include <nlohmann/json.hpp>

namespace cuvil {

namespace {

using Json = nlohmann::ordered_json;

Json valueJson(const Value *V) {
  if (!V)
    return nullptr; // an omitted optional input
  Json J = {{"name", V->name()},
            {"dtype", dtypeName(V->dtype())},
            {"shape", V->shape()}};
  if (V->isConstant())
    J["constant"] = true;
  return J;
}

Json valuesJson(const std::vector<Value *> &Vs) {
  Json L = Json::array();
  for (const Value *V : Vs)
    L.push_back(valueJson(V));
  return L;
}

} // namespace

const std::string &Graph::sourceOf(int OnnxIndex) const {
  static const std::string None;
  auto It = Sources.find(OnnxIndex);
  return It == Sources.end() ? None : It->second;
}

std::string Graph::printJson(std::string_view After) const {
  Json G = {{"after", After}, {"graph", Name}};
  G["inputs"] = valuesJson(Inputs);
  G["outputs"] = valuesJson(Outputs);
  Json Ns = Json::array();
  for (const auto &N : Nodes) {
    Json J = {{"id", N->id()}, {"name", N->name()}, {"op", N->opType()}};
    if (!N->domain().empty())
      J["domain"] = N->domain();
    J["inputs"] = valuesJson(N->inputs());
    J["outputs"] = valuesJson(N->outputs());
    Json A = Json::object();
    for (const auto &[Key, V] : N->attrs())
      std::visit([&](const auto &X) { A[Key] = X; }, V);
    J["attributes"] = A;
    Json O = Json::array();
    const Origin &Or = N->origin();
    for (size_t I = 0; I < Or.Names.size(); ++I) {
      Json E = {{"name", Or.Names[I]}, {"index", Or.Indices[I]}};
      if (const std::string &S = sourceOf(Or.Indices[I]); !S.empty())
        E["source"] = S;
      O.push_back(E);
    }
    J["origins"] = O;
    Ns.push_back(J);
  }
  G["nodes"] = Ns;
  // Names are any bytes: invalid UTF-8 becomes U+FFFD rather than aborting.
  return G.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

} // namespace cuvil
