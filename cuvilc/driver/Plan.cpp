//===- Plan.cpp - `cuvilc plan`: the memory plan, in text and pictures ----===//
//
// Runs the stages of `cuvilc build` up to the memory plan, then prints one
// line per arena (size, lower bound, ratio, strategy, bank conflicts), the
// size a plain greedy-by-size planner would need, and a table of the arena
// tensors sorted by arena and offset. With --svg PREFIX, each arena is also
// drawn to PREFIX.<region>.svg.
//
//===----------------------------------------------------------------------===//
#include "driver/Driver.h"

#include "emit/OutputFiles.h"
#include "emit/PlanSvg.h"
#include "emit/Report.h"
#include "ir/Escape.h"
#include "ops/custom/CustomOp.h"
#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

namespace cuvil {

namespace {

/// The ONNX nodes a value comes from (its producer's origin).
std::string onnxNodes(const Value &V) {
  const Node *P = V.producer();
  if (!P)
    return "(graph input)";
  if (P->origin().Names.empty())
    return printable(P->name());
  std::vector<std::string> Names;
  for (const std::string &N : P->origin().Names)
    Names.push_back(printable(N));
  return fmt::format("{}", fmt::join(Names, ", "));
}

std::string arenaLine(const ArenaPlan &A, const std::string &Schedule) {
  std::string S =
      fmt::format("arena {}: {} bytes, lower bound {} bytes, "
                  "ratio {:.3f}, strategy {}",
                  A.Region, A.Size, A.LowerBound, A.ratio(), A.Strategy);
  if (A.SameBankPairs >= 0)
    S += fmt::format(", same-bank pairs {} -> {}", A.SameBankPairsBefore,
                     A.SameBankPairs);
  return S + fmt::format(", schedule {}\n", Schedule);
}

/// The whole text: arenas, baseline, weights, then the tensor table.
std::string formatPlan(const Graph &G, const MemoryPlan &Plan,
                       const TargetInfo &T, const std::string &ModelFile) {
  std::string S = fmt::format(
      "plan of {} (graph '{}') for target {}: {} steps\n", printable(ModelFile),
      printable(G.name()), T.Name, G.nodes().size());
  for (const ArenaPlan &A : Plan.Arenas)
    S += arenaLine(A, Plan.Schedule);
  int64_t Total = Plan.arenaSize();
  if (Plan.Arenas.empty())
    S += "arena: none (every tensor is a weight or in a caller's buffer)\n";
  else if (Plan.Arenas.size() > 1)
    S += fmt::format("arenas: {} bytes in total, lower bound {} bytes, "
                     "ratio {:.3f}\n",
                     Total, Plan.LowerBound, Plan.ratio());
  S += fmt::format("baseline (greedy by size, model order, no in-place "
                   "reuse): {} bytes",
                   Plan.BaselineSize);
  if (Total > 0)
    S += fmt::format(", {:.3f}x the plan",
                     static_cast<double>(Plan.BaselineSize) / Total);
  S += fmt::format("\nweights: {} tensors, {} bytes in {}\n",
                   Plan.Weights.size(), Plan.WeightsSize, T.WeightsRegion);
  if (Plan.Buffers.empty())
    return S;

  // One row per buffer, then a "+" row per value that shares it (in
  // place, a view, or a slice of a Concat): its own offset, bytes and
  // live steps.
  std::vector<const ArenaBuffer *> Order = buffersByAddress(Plan);
  size_t NameWidth = 6, RegionWidth = 6;
  for (const ArenaBuffer *B : Order) {
    RegionWidth = std::max(RegionWidth, Plan.Arenas[B->Arena].Region.size());
    for (const Value *V : B->Values)
      NameWidth = std::max(NameWidth, printable(V->name()).size() + 2);
  }
  NameWidth = std::min<size_t>(NameWidth, 40);
  auto Row = [&](const std::string &Region, const std::string &Offset,
                 const std::string &Size, const std::string &Bytes,
                 const std::string &Live, const std::string &Name,
                 const std::string &Onnx) {
    std::string L = fmt::format(
        "{:<{}}  {:<10}  {:>9}  {:>9}  {:<9}  {:<{}}  {}", Region, RegionWidth,
        Offset, Size, Bytes, Live, Name, NameWidth, Onnx);
    L.erase(L.find_last_not_of(' ') + 1);
    S += L + "\n";
  };
  S += "\n";
  Row("region", "offset", "size", "bytes", "steps", "tensor", "ONNX nodes");
  ValueSteps Live(G);
  bool Branches = false;
  for (const ArenaBuffer *B : Order) {
    const std::string &Region = Plan.Arenas[B->Arena].Region;
    std::string When;
    for (const auto &[Cond, Taken] : B->RunsWhen)
      When += fmt::format("{} {} is {}", When.empty() ? "  [only when" : " and",
                          printable(Cond->name()), Taken ? "true" : "false");
    Branches |= !When.empty();
    Row(Region, fmt::format("0x{:08x}", B->Offset), std::to_string(B->Size),
        std::to_string(B->Bytes), fmt::format("{}..{}", B->First, B->Last),
        printable(B->Root->name()),
        onnxNodes(*B->Root) + When + (When.empty() ? "" : "]"));
    for (const Value *V : B->Values) {
      if (V == B->Root)
        continue;
      auto Loc = Plan.Locations.find(V->id());
      int64_t Off =
          Loc == Plan.Locations.end() ? B->Offset : Loc->second.Offset;
      auto [First, Last] = Live.of(*V);
      Row(Region, fmt::format("0x{:08x}", Off), "",
          std::to_string(V->byteSize()), fmt::format("{}..{}", First, Last),
          "+ " + printable(V->name()), onnxNodes(*V));
    }
  }
  S += "(size: the buffer, aligned; +: a tensor stored in the buffer above)\n";
  if (Branches)
    S += "(only when: written on one branch of an If; buffers of opposite "
         "branches may share bytes, one run writes only one of them)\n";
  return S;
}

} // namespace

llvm::Error runPlan(const PlanCommandOptions &Opts, std::ostream &Out) {
  auto Target = loadTarget(Opts.Target);
  if (!Target)
    return usageError(llvm::toString(Target.takeError()));
  const TargetInfo &T = *Target;
  auto PO = planOptionsFor(T, Opts.ArenaRegions, Opts.BankPolicy);
  if (!PO)
    return PO.takeError();

  auto Custom = loadCustomOpsOption(Opts.CustomOps);
  if (!Custom)
    return Custom.takeError();
  auto GOrErr = loadModel(Opts.Model, Opts.Dims, {}, Out, {},
                          *Custom ? &(*Custom)->registry() : nullptr, false,
                          false, Opts.LoopBounds);
  if (!GOrErr)
    return GOrErr.takeError();
  Graph &G = **GOrErr;
  auto Plan = planMemory(G, *PO);
  if (!Plan)
    return Plan.takeError();

  std::string ModelFile = std::filesystem::path(Opts.Model).filename().string();
  std::string Text = formatPlan(G, *Plan, T, ModelFile);
  std::vector<OutputFile> Files;
  if (!Opts.SvgPrefix.empty()) {
    std::string Model = G.name().empty() ? ModelFile : G.name();
    for (unsigned I = 0; I < Plan->Arenas.size(); ++I) {
      const std::string &Region = Plan->Arenas[I].Region;
      std::string Path = Opts.SvgPrefix + "." + Region + ".svg";
      std::string Title =
          fmt::format("{} on {}: arena {}", Model, T.Name, Region);
      Files.push_back({Path, writePlanSvg(G, *Plan, I, Title)});
      Text += fmt::format("wrote {}\n", Path);
    }
  }
  if (auto E = writeOutputFiles(Files))
    return E;
  Out << Text;
  return llvm::Error::success();
}

} // namespace cuvil
