//===- Report.cpp ---------------------------------------------------------===//
#include "emit/Report.h"

#include "ops/OpRegistry.h"

#include <nlohmann/json.hpp>

namespace cuvil {

static const char *baseName(Base B) {
  switch (B) {
  case Base::Arena: return "arena";
  case Base::Weights: return "weights";
  case Base::Input: return "input";
  case Base::Output: return "output";
  }
  return "?";
}

std::string writeReport(const Graph &G, const MemoryPlan &Plan,
                        const TargetInfo &T, const std::string &ArenaRegion,
                        const std::string &ModelName, uint64_t BlobSize) {
  using nlohmann::ordered_json;
  ordered_json R;
  R["model"] = ModelName;
  R["target"] = T.Name;
  R["arena"] = {{"region", ArenaRegion},
                {"bytes", Plan.ArenaSize},
                {"lower_bound_bytes", Plan.LowerBound},
                {"ratio", Plan.efficiency()},
                {"alignment", Plan.Alignment},
                {"strategy", Plan.Strategy}};
  ordered_json Bufs = ordered_json::array();
  for (const ArenaBuffer &B : Plan.Buffers)
    Bufs.push_back({{"value", B.Root->name()},
                    {"offset", B.Offset},
                    {"bytes", B.Size},
                    {"live", {B.First, B.Last}}});
  R["arena"]["buffers"] = Bufs;
  R["weights"] = {{"region", T.WeightsRegion},
                  {"blob_bytes", BlobSize},
                  {"data_bytes", Plan.WeightsSize},
                  {"tensors", Plan.Weights.size()}};
  ordered_json Nodes = ordered_json::array();
  int64_t TotalMacs = 0;
  for (const auto &N : G.nodes()) {
    ordered_json J;
    J["name"] = N->name();
    J["op"] = N->opType();
    J["origin"] = N->origin().Names;
    int64_t Macs = N->def() ? N->def()->Macs(*N) : 0;
    TotalMacs += Macs;
    J["macs"] = Macs;
    ordered_json Outs = ordered_json::array();
    for (const Value *V : N->outputs()) {
      const Location &L = Plan.at(V);
      Outs.push_back({{"value", V->name()},
                      {"bytes", V->byteSize()},
                      {"base", baseName(L.B)},
                      {"index", L.Index},
                      {"offset", L.Offset}});
    }
    J["outputs"] = Outs;
    Nodes.push_back(J);
  }
  R["macs"] = TotalMacs;
  R["nodes"] = Nodes;
  return R.dump(2) + "\n";
}

} // namespace cuvil
