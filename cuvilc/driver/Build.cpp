//===- Build.cpp - `cuvilc build`: ONNX model -> object, header, script ---===//
#include "driver/Compile.h"
#include "emit/LinkerScript.h"
#include "emit/OutputFiles.h"
#include "emit/Report.h"
#include "frontend/onnx/OnnxImporter.h"
#include "ir/Diagnostic.h"
#include "ops/custom/CustomOp.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

namespace fs = std::filesystem;

namespace cuvil {

namespace {

class UsageErrorInfo : public llvm::ErrorInfo<UsageErrorInfo> {
public:
  static char ID;
  explicit UsageErrorInfo(std::string Msg) : Msg(std::move(Msg)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Msg; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string Msg;
};
char UsageErrorInfo::ID = 0;

std::string replaceExtension(const std::string &Path, const char *Ext) {
  return fs::path(Path).replace_extension(Ext).string();
}

} // namespace

llvm::Expected<PlanOptions>
planOptionsFor(const TargetInfo &T,
               const std::vector<std::string> &ArenaRegions) {
  PlanOptions PO;
  PO.Alignment = T.DmaAlign;
  PO.AllowSpill = T.AllowSpill;
  PO.AddressBits = T.AddressBits;
  for (const std::string &R :
       ArenaRegions.empty() ? T.ArenaRegions : ArenaRegions) {
    const MemoryRegion *MR = T.region(R);
    if (!MR || !MR->writable())
      return usageError(fmt::format("--arena-regions: '{}' is not a writable "
                                    "memory region of target '{}'",
                                    R, T.Name));
    PO.Regions.push_back(MR);
  }
  return PO;
}

/// The imported graph G through the pass pipeline, verified.
static llvm::Expected<std::unique_ptr<Graph>>
optimizeModel(llvm::Expected<std::unique_ptr<Graph>> G,
              const std::vector<std::string> &DumpIR, std::ostream &Log,
              const PipelineOptions &PO, bool DumpData = false) {
  if (!G)
    return G.takeError();
  // The pipeline verifies the graph once constants are folded and shapes
  // resolved (see Pass::VerifyAfter).
  if (auto E = runPipeline(**G, DumpIR,
                           [&](std::string_view Pass, const Graph &Gr) {
                             IRPrintOptions O;
                             O.FullData = DumpData;
                             Log << "; IR after " << Pass << "\n"
                                 << Gr.print(O);
                           },
                           PO))
    return E;
  // Passes rewrite nodes: check again what codegen will see.
  if (auto E = verifyGraph(**G))
    return E;
  return G;
}

llvm::Expected<std::unique_ptr<Graph>>
loadModel(const std::string &Model, const std::map<std::string, int64_t> &Dims,
          const std::vector<std::string> &DumpIR, std::ostream &Log,
          const PipelineOptions &PO, const RuntimeOps *CustomOps,
          bool DumpData) {
  ImportOptions IO;
  IO.DimValues = Dims;
  IO.CustomOps = CustomOps;
  return optimizeModel(importOnnx(Model, IO), DumpIR, Log, PO, DumpData);
}

llvm::Expected<std::unique_ptr<CustomOpSet>>
loadCustomOpsOption(const std::string &Path) {
  if (Path.empty())
    return nullptr;
  auto Set = loadCustomOps(Path);
  if (!Set)
    return usageError("--custom-ops " + llvm::toString(Set.takeError()));
  return Set;
}

llvm::Expected<std::unique_ptr<Graph>>
loadModelBytes(std::string_view Bytes,
               const std::map<std::string, int64_t> &Dims,
               const std::vector<std::string> &DumpIR, std::ostream &Log,
               const PipelineOptions &PO, bool DumpData) {
  ImportOptions IO;
  IO.DimValues = Dims;
  return optimizeModel(importOnnxBytes(Bytes, IO), DumpIR, Log, PO, DumpData);
}

llvm::Error usageError(const std::string &Msg) {
  return llvm::make_error<UsageErrorInfo>(Msg);
}

bool isUsageError(const llvm::Error &E) { return E.isA<UsageErrorInfo>(); }

std::string defaultModelName(const std::string &Path) {
  std::string Stem = fs::path(Path).stem().string();
  for (char &C : Stem)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  return cIdentifier(Stem);
}

llvm::Error runBuild(const BuildOptions &Opts, std::ostream &Log) {
  auto CM = compileModel(Opts, Log);
  if (!CM)
    return CM.takeError();
  const std::string &Name = CM->Name;
  CodegenResult &Code = CM->Code;
  std::string HeaderPath =
      Opts.Header.empty() ? replaceExtension(Opts.Out, ".h") : Opts.Header;
  std::string ScriptPath = Opts.LinkerScript.empty()
                               ? replaceExtension(Opts.Out, ".ld")
                               : Opts.LinkerScript;
  std::vector<OutputFile> Files = {
      {Opts.Out, std::move(Code.Object)},
      {HeaderPath, writeHeader(*CM->G, CM->Plan, CM->Target, CM->Header)},
      {ScriptPath, writeLinkerScript(Name, CM->Plan, CM->Target,
                                     CM->WeightsRegion, CM->Embed)},
  };
  if (!CM->Embed)
    Files.push_back(
        {Opts.ExternalWeights, std::string(CM->Blob.begin(), CM->Blob.end())});
  auto Wants = [&](const char *Kind) {
    return std::find(Opts.Emit.begin(), Opts.Emit.end(), Kind) !=
           Opts.Emit.end();
  };
  if (Wants("llvm"))
    Files.push_back({replaceExtension(Opts.Out, ".ll"), Code.LLVMIR});
  if (Wants("asm"))
    Files.push_back({replaceExtension(Opts.Out, ".s"), Code.Asm});
  if (!Opts.Report.empty())
    Files.push_back({Opts.Report,
                     writeReport(*CM->G, CM->Plan, CM->Target, Name,
                                 CM->WeightsRegion, CM->Blob.size(),
                                 &CM->Header.InitStack, &CM->Header.RunStack)});
  return writeOutputFiles(Files);
}

} // namespace cuvil
