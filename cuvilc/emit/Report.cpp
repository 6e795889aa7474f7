//===- Report.cpp ---------------------------------------------------------===//
#include "emit/Report.h"

#include "emit/LayerFacts.h"
#include "ops/OpRegistry.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <tuple>

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

std::vector<const ArenaBuffer *> buffersByAddress(const MemoryPlan &Plan) {
  std::vector<const ArenaBuffer *> Order;
  for (const ArenaBuffer &B : Plan.Buffers)
    Order.push_back(&B);
  std::sort(
      Order.begin(), Order.end(),
      [](const ArenaBuffer *L, const ArenaBuffer *R) {
        return std::make_tuple(L->Arena, L->Offset, L->First, L->Root->id()) <
               std::make_tuple(R->Arena, R->Offset, R->First, R->Root->id());
      });
  return Order;
}

/// Same-bank pair counts are null for regions without banks.
static nlohmann::ordered_json bankPairs(int64_t N) {
  return N < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(N);
}

static nlohmann::ordered_json onnxNodes(const Value &V) {
  const Node *P = V.producer();
  if (!P)
    return nlohmann::ordered_json::array();
  if (P->origin().Names.empty())
    return nlohmann::ordered_json::array({P->name()});
  return P->origin().Names;
}

/// The arenas, and every buffer (by arena, then offset) with the values
/// stored in it and the nodes that produce them.
static void writeMemory(nlohmann::ordered_json &R, const MemoryPlan &Plan) {
  using nlohmann::ordered_json;
  int64_t Total = Plan.arenaSize();
  R["schedule"] = Plan.Schedule;
  R["arena"] = {{"bytes", Total},
                {"lower_bound_bytes", Plan.LowerBound},
                {"ratio", Plan.ratio()},
                {"alignment", Plan.Alignment},
                {"baseline_bytes", Plan.BaselineSize},
                {"baseline_ratio",
                 Total ? static_cast<double>(Plan.BaselineSize) / Total : 1.0}};
  ordered_json Arenas = ordered_json::array();
  for (const ArenaPlan &A : Plan.Arenas)
    Arenas.push_back(
        {{"region", A.Region},
         {"bytes", A.Size},
         {"lower_bound_bytes", A.LowerBound},
         {"ratio", A.ratio()},
         {"strategy", A.Strategy},
         {"same_bank_pairs_before", bankPairs(A.SameBankPairsBefore)},
         {"same_bank_pairs", bankPairs(A.SameBankPairs)}});
  R["arenas"] = Arenas;

  ordered_json Bufs = ordered_json::array();
  for (const ArenaBuffer *B : buffersByAddress(Plan)) {
    ordered_json Values = ordered_json::array();
    for (const Value *V : B->Values) {
      const Node *P = V->producer();
      Values.push_back({{"name", V->name()},
                        {"offset", Plan.at(V).Offset},
                        {"bytes", V->byteSize()},
                        {"node", P ? P->name() : ""},
                        {"op", P ? P->opType() : ""},
                        {"onnx_nodes", onnxNodes(*V)}});
    }
    Bufs.push_back({{"arena", B->Arena},
                    {"region", Plan.Arenas[B->Arena].Region},
                    {"root", B->Root->name()},
                    {"offset", B->Offset},
                    {"size", B->Size},
                    {"bytes", B->Bytes},
                    {"live", {B->First, B->Last}},
                    {"values", Values}});
  }
  R["buffers"] = Bufs;
}

/// The graph's inputs or outputs as the entry points take them.
static nlohmann::ordered_json
tensors(const std::vector<Value *> &Values, const std::vector<bool> *Read,
        const std::vector<bool> *Optional = nullptr) {
  nlohmann::ordered_json List = nlohmann::ordered_json::array();
  for (size_t I = 0; I < Values.size(); ++I) {
    const Value *V = Values[I];
    nlohmann::ordered_json J = {{"name", V->name()},
                                {"dtype", dtypeName(V->dtype())},
                                {"shape", V->shape()},
                                {"bytes", V->byteSize()}};
    if (Read)
      J["read"] = I >= Read->size() || (*Read)[I];
    if (Optional)
      J["optional"] = I < Optional->size() && (*Optional)[I];
    List.push_back(J);
  }
  return List;
}

std::string writeReport(const Graph &G, const MemoryPlan &Plan,
                        const TargetInfo &T, const HeaderInfo &Info,
                        const std::string &WeightsRegion, uint64_t BlobSize,
                        const GraphLowering *L) {
  using nlohmann::ordered_json;
  ordered_json R;
  R["model"] = Info.ModelName;
  R["target"] = T.Name;
  R["interface"] = {
      {"prefix", "cuvil_" + Info.ModelName},
      {"context_bytes",
       Info.ContextBytes ? ordered_json(Info.ContextBytes) : ordered_json()},
      {"checked", Info.Checked},
      {"external_weights", Info.ExternalWeights},
      {"weights_signed", Info.WeightsSigned},
      {"inputs", tensors(G.inputs(), &Info.InputsRead, &Info.InputsOptional)},
      {"outputs", tensors(G.outputs(), nullptr)}};
  // An output whose shape the branch of an If picks: both shapes (the
  // entry's shape and bytes are the larger), and run records which.
  for (const BranchShapedOutput &O : Info.ShapedOutputs)
    R["interface"]["outputs"][O.Output]["branch_shapes"] = {
        {"then", O.ThenShape},
        {"else", O.ElseShape},
        {"condition", O.Cond->name()}};
  // Loops built for at most a number of iterations (--loop-bound).
  if (!Info.LoopBounds.empty()) {
    ordered_json Loops = ordered_json::array();
    for (const auto &[Loop, K] : Info.LoopBounds)
      Loops.push_back({{"loop", Loop}, {"bound", K}});
    R["interface"]["loop_bounds"] = std::move(Loops);
  }
  // The status codes init and run return, by name (cuvil/status.h), for
  // callers without the header (the Python package names a failure).
  ordered_json Status = ordered_json::object();
  for (auto [Name, V] : std::initializer_list<std::pair<const char *, int>>{
#define CUVIL_STATUS(Name, Value) {#Name, Value},
#include "StatusCodes.def"
       })
    Status[std::string("CUVIL_") + Name] = V;
  R["interface"]["status"] = std::move(Status);
  if (const auto &P = Info.Profiled) {
    // Where the table is, for a caller that reads it from the context.
    ordered_json Steps = ordered_json::array();
    for (size_t I = 0; I < P->Steps.size(); ++I)
      Steps.push_back({{"name", P->Steps[I]}, {"origins", P->Origins[I]}});
    R["interface"]["profile"] = {
        {"runs_offset", P->Offset},
        {"table_offset", P->Offset + 8},
        {"counters", P->Counters[1].empty()
                         ? ordered_json::array({P->Counters[0]})
                         : ordered_json(P->Counters)},
        {"steps", Steps}};
  }
  writeMemory(R, Plan);
  R["weights"] = {
      {"region", WeightsRegion},
      {"blob_bytes", BlobSize},
      {"data_bytes", Plan.WeightsSize},
      {"tensors", Plan.Weights.size()},
      {"structure_hash", fmt::format("{:016x}", Info.StructureHash)},
      {"sha256", Info.WeightsSha256}};
  const StackFigure *InitStack = &Info.InitStack, *RunStack = &Info.RunStack;
  if (InitStack->Known || !InitStack->Reason.empty()) {
    auto Stack = [](const StackFigure &F) {
      ordered_json J;
      if (F.Known) {
        J["bytes"] = F.Bytes;
        J["path"] = F.Path;
      } else {
        J["bytes"] = nullptr;
        J["reason"] = F.Reason;
      }
      return J;
    };
    R["stack"] = {{"init", Stack(*InitStack)}, {"run", Stack(*RunStack)}};
  }
  ordered_json Nodes = ordered_json::array();
  std::vector<LayerFacts> Facts;
  if (L)
    Facts = layerFacts(G, *L);
  int64_t TotalMacs = 0;
  for (size_t Step = 0; Step < G.nodes().size(); ++Step) {
    const Node *N = G.nodes()[Step].get();
    ordered_json J;
    J["step"] = Step;
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
    if (Step < Facts.size()) {
      const LayerFacts &F = Facts[Step];
      J["has_code"] = F.HasCode;
      J["kernels"] = F.Kernels;
      J["bytes_moved"] = F.BytesMoved;
      J["precision"] = F.Precision;
      ordered_json When = ordered_json::array();
      for (const auto &[Cond, Value] : F.RunsWhen)
        When.push_back({{"condition", Cond}, {"value", Value}});
      J["runs_when"] = When;
    }
    Nodes.push_back(J);
  }
  R["macs"] = TotalMacs;
  R["nodes"] = Nodes;
  // nlohmann escapes quotes, backslashes and control characters; a name
  // that is not valid UTF-8 gets U+FFFD for its bad bytes (the default
  // handler would abort: there are no exceptions here).
  return R.dump(2, ' ', false,
                nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

} // namespace cuvil
