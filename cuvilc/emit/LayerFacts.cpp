//===- LayerFacts.cpp - What `cuvilc report` says of each node ------------===//
#include "emit/LayerFacts.h"

#include "ir/DType.h"
#include "ops/OpRegistry.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace cuvil {

static bool isByteInteger(const Value *V) {
  return V && (V->dtype() == DType::I8 || V->dtype() == DType::U8);
}

std::vector<LayerFacts> layerFacts(const Graph &G, const GraphLowering &L) {
  std::vector<LayerFacts> Facts;
  for (size_t Step = 0; Step < G.nodes().size(); ++Step) {
    const Node &N = *G.nodes()[Step];
    LayerFacts F;
    F.Step = Step;
    F.Name = N.name();
    F.Op = N.opType();
    F.Origins = N.origin().Names;
    F.Macs = N.def() ? N.def()->Macs(N) : 0;
    for (const Value *V : N.inputs())
      if (V)
        F.BytesMoved += V->byteSize();
    for (const Value *V : N.outputs())
      F.BytesMoved += V->byteSize();
    if (Step < L.size()) {
      F.HasCode = L[Step].HasCode;
      F.OnlyCopies = !L[Step].Calls.empty() &&
                     std::all_of(L[Step].Calls.begin(), L[Step].Calls.end(),
                                 [](const KernelCall &C) { return C.IsCopy; });
      for (const KernelCall &C : L[Step].Calls)
        if (std::find(F.Kernels.begin(), F.Kernels.end(), C.Kernel) ==
            F.Kernels.end())
          F.Kernels.push_back(C.Kernel);
      for (const RunCondition &C : L[Step].RunsWhen)
        F.RunsWhen.push_back({C.Cond->name(), C.When});
    }
    F.Int8 = F.Macs > 0 &&
             std::any_of(N.inputs().begin(), N.inputs().end(), isByteInteger);
    const Value *Out = N.outputs().empty() ? nullptr : N.outputs().front();
    F.Precision = F.Int8 ? "int8"
                  : Out  ? std::string(dtypeName(Out->dtype()))
                         : "-";
    if (Out && Out->rank() >= 3) {
      F.OutputSpatial = 1;
      for (size_t D = 2; D < Out->rank(); ++D)
        F.OutputSpatial *= std::max<int64_t>(Out->shape()[D], 1);
    }
    Facts.push_back(std::move(F));
  }
  return Facts;
}

std::string kernelText(const LayerFacts &F) {
  if (!F.HasCode)
    return "view (no code)";
  std::string Text = F.Kernels.empty()
                         ? "none (a copy the planner made in place)"
                         : fmt::format("{}", fmt::join(F.Kernels, ", "));
  for (size_t I = 0; I < F.RunsWhen.size(); ++I)
    Text += fmt::format("{} {} is {}", I == 0 ? "; only when" : " and",
                        F.RunsWhen[I].first,
                        F.RunsWhen[I].second ? "true" : "false");
  return Text;
}

} // namespace cuvil
