//===- Inspect.cpp - `cuvilc inspect` and `cuvilc targets` ----------------===//
#include "driver/Driver.h"

#include "frontend/onnx/OnnxImporter.h"
#include "ir/Diagnostic.h"
#include "ir/Escape.h"
#include "ops/OpRegistry.h"
#include "ops/custom/CustomOp.h"
#include "passes/Pass.h"
#include "target/TargetInfo.h"

#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

namespace cuvil {

static std::string typeStr(const Value *V) {
  return fmt::format("{}[{}]", dtypeName(V->dtype()),
                     fmt::join(V->shape(), "x"));
}

llvm::Error runInspect(const std::string &Model, const std::string &Target,
                       const std::map<std::string, int64_t> &Dims,
                       std::ostream &Out, const std::string &CustomOps) {
  auto T = loadTarget(Target);
  if (!T)
    return usageError(llvm::toString(T.takeError()));
  auto Custom = loadCustomOpsOption(CustomOps);
  if (!Custom)
    return Custom.takeError();
  ImportOptions IO;
  IO.DimValues = Dims;
  if (*Custom)
    IO.CustomOps = &(*Custom)->registry();
  auto GOrErr = importOnnx(Model, IO);
  if (!GOrErr)
    return GOrErr.takeError();
  // Shape computations fold away before anything is compiled: show and
  // check what the target would get.
  if (auto E = foldConstants(**GOrErr))
    return E;
  const Graph &G = **GOrErr;

  std::string S;
  auto Line = [&]<typename... Args>(fmt::format_string<Args...> F,
                                    Args &&...A) {
    S += fmt::format(F, std::forward<Args>(A)...);
    S += '\n';
  };
  // Names are any bytes: printed escaped (ir/Escape.h).
  Line("model {} (graph '{}')",
       printable(std::filesystem::path(Model).filename().string()),
       printable(G.name()));
  for (const Value *V : G.inputs())
    Line("  input  {:<24} {}", printable(V->name()), typeStr(V));
  for (const Value *V : G.outputs())
    Line("  output {:<24} {}", printable(V->name()), typeStr(V));

  Line("");
  Line("{:>4}  {:<24} {:<20} {:<28} {:>12}", "#", "node", "op", "outputs",
       "MACs");
  std::map<std::string, int> Counts;
  int64_t TotalMacs = 0;
  std::vector<std::string> Problems;
  for (size_t I = 0; I < G.nodes().size(); ++I) {
    const Node &N = *G.nodes()[I];
    ++Counts[N.opType()];
    std::vector<std::string> Outs;
    for (const Value *V : N.outputs())
      Outs.push_back(typeStr(V));
    // "?": unsupported, "-": no arithmetic (data movement).
    char Mark = '-';
    int64_t M = 0;
    if (llvm::Error E = verifyGraphNode(N)) {
      Problems.push_back(llvm::toString(std::move(E)));
      Mark = '?';
    } else {
      M = N.def()->Macs(N);
      TotalMacs += M;
    }
    std::string Macs = M ? std::to_string(M) : std::string(1, Mark);
    Line("{:>4}  {:<24} {:<20} {:<28} {:>12}", I, printable(N.name()),
         printable(N.opType()), fmt::format("{}", fmt::join(Outs, " ")), Macs);
  }

  int64_t ParamBytes = 0, ParamCount = 0;
  for (const auto &V : G.values())
    if (V->isConstant()) {
      ParamBytes += V->byteSize();
      ++ParamCount;
    }
  Line("");
  std::vector<std::string> CountStrs;
  for (const auto &[Op, C] : Counts)
    CountStrs.push_back(fmt::format("{} {}", Op, C));
  Line("ops: {} nodes: {}", G.nodes().size(), fmt::join(CountStrs, ", "));
  Line("parameters: {} tensors, {} bytes", ParamCount, ParamBytes);
  Line("MACs: {}", TotalMacs);
  if (Problems.empty()) {
    Line("target {}: every node is supported", T->Name);
  } else {
    Line("target {}: {} node(s) cannot be compiled:", T->Name, Problems.size());
    for (const std::string &P : Problems)
      Line("  {}", P);
  }
  Out << S << std::flush;
  // A model the target cannot compile fails (exit 1), so that scripts can
  // use inspect as a check; the listing above says which nodes and why.
  if (!Problems.empty())
    return makeError("{} node(s) cannot be compiled for target {} (listed "
                     "above)",
                     Problems.size(), T->Name);
  return llvm::Error::success();
}

llvm::Error runTargets(std::ostream &Out) {
  // The good targets are listed even when some file is broken; each broken
  // file is then an error (exit code 1).
  auto Scan = scanTargets();
  if (!Scan)
    return Scan.takeError();
  for (const TargetInfo &T : Scan->Targets) {
    Out << fmt::format("{:<8} {}\n", T.Name, T.Description);
    Out << fmt::format("         llvm: {} cpu={}{}{}\n", T.Triple, T.CPU,
                       T.Features.empty() ? "" : " features=" + T.Features,
                       T.ABI.empty() ? "" : " abi=" + T.ABI);
    Out << fmt::format("         dma alignment {} bytes; arena regions {}; "
                       "weights in {}\n",
                       T.DmaAlign, fmt::join(T.ArenaRegions, " > "),
                       T.WeightsRegion);
    if (T.PeakMacsF32 > 0 || T.PeakMacsInt8 > 0)
      Out << fmt::format("         peak per core: {:g} float32 and {:g} int8 "
                         "MACs per cycle (cuvilc report)\n",
                         T.PeakMacsF32, T.PeakMacsInt8);
    for (const MemoryRegion &R : T.Regions)
      Out << fmt::format("         region {:<6} 0x{:08x} .. 0x{:08x} ({} "
                         "KiB, {}, {} bank{})\n",
                         R.Name, R.Origin, R.Origin + R.Length - 1,
                         R.Length / 1024, R.Access, R.Banks,
                         R.Banks == 1 ? "" : "s");
  }
  Out.flush();
  llvm::Error All = llvm::Error::success();
  for (const std::string &P : Scan->Problems)
    All = llvm::joinErrors(std::move(All), makeError("{}", P));
  return All;
}

} // namespace cuvil
