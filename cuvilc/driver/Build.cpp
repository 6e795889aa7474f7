//===- Build.cpp - `cuvilc build`: ONNX model -> object, header, script ---===//
#include "codegen/KernelLibrary.h"
#include "codegen/ModelCodegen.h"
#include "driver/Driver.h"
#include "emit/HeaderWriter.h"
#include "emit/LinkerScript.h"
#include "emit/OutputFiles.h"
#include "emit/Report.h"
#include "emit/WeightsBlob.h"
#include "frontend/onnx/OnnxImporter.h"
#include "ir/Diagnostic.h"
#include "ops/custom/CustomOp.h"
#include "ops/LowerGraph.h"
#include "passes/Pass.h"
#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

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

/// The kernels of the declared ops G uses, in the order G first calls
/// them: declarations for codegen, prototypes for the header.
void firmwareKernels(const Graph &G, CodegenOptions &CO, HeaderInfo &HI) {
  std::vector<const CustomOp *> Seen;
  for (const auto &N : G.nodes()) {
    const CustomOp *C = customOpOf(N->def());
    if (!C || std::find(Seen.begin(), Seen.end(), C) != Seen.end())
      continue;
    Seen.push_back(C);
    FirmwareKernel K;
    K.Name = C->Kernel;
    for (const CustomParam &P : C->Params)
      K.Params.push_back(P.K == CustomParam::Kind::FloatAttr
                             ? FirmwareKernel::Param::Float
                         : P.K == CustomParam::Kind::Int
                             ? FirmwareKernel::Param::Int64
                             : FirmwareKernel::Param::Pointer);
    CO.FirmwareKernels.push_back(std::move(K));
    HI.FirmwareKernels.push_back(C->prototype());
  }
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
               const PipelineOptions &PO) {
  ImportOptions IO;
  IO.DimValues = Dims;
  return optimizeModel(importOnnxBytes(Bytes, IO), DumpIR, Log, PO);
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
  // Usage checks first: nothing is read or written when they fail.
  std::string Name = Opts.Name.empty() ? defaultModelName(Opts.Model) : Opts.Name;
  if (Name != cIdentifier(Name))
    return usageError(fmt::format("--name '{}' is not a C identifier", Name));
  for (const std::string &E : Opts.Emit)
    if (E != "llvm" && E != "asm")
      return usageError(fmt::format("--emit: unknown kind '{}' (expected "
                                    "llvm, asm)",
                                    E));
  auto Target = loadTarget(Opts.Target);
  if (!Target)
    return usageError(llvm::toString(Target.takeError()));
  const TargetInfo &T = *Target;
  std::string HeaderPath =
      Opts.Header.empty() ? replaceExtension(Opts.Out, ".h") : Opts.Header;
  std::string ScriptPath = Opts.LinkerScript.empty()
                               ? replaceExtension(Opts.Out, ".ld")
                               : Opts.LinkerScript;
  std::string WeightsRegion =
      Opts.WeightsRegion.empty() ? T.WeightsRegion : Opts.WeightsRegion;
  const MemoryRegion *WR = T.region(WeightsRegion);
  if (!WR)
    return usageError(fmt::format("--weights-region: target '{}' has no "
                                  "memory region '{}'",
                                  T.Name, WeightsRegion));
  auto PO = planOptionsFor(T, Opts.ArenaRegions);
  if (!PO)
    return PO.takeError();
  auto Custom = loadCustomOpsOption(Opts.CustomOps);
  if (!Custom)
    return Custom.takeError();
  if (Opts.Checked) // one alignment unit of canary after every buffer
    PO->GuardBytes = PO->Alignment;

  // The packed kernels' panel width and the integer kernels' packing are
  // facts of the target's kernel library: read them from there so compiler
  // and kernels agree.
  PipelineOptions Passes;
  if (!Opts.PortableKernels) {
    Passes.PackPanel = kernelConstant(T.Kernels, "cuvil_k_pack_mr").value_or(0);
    Passes.QPackMr = kernelConstant(T.Kernels, "cuvil_k_qpack_mr").value_or(0);
    Passes.QPackKr = kernelConstant(T.Kernels, "cuvil_k_qpack_kr").value_or(0);
  }
  auto GOrErr = loadModel(Opts.Model, Opts.Dims, Opts.DumpIR, Log, Passes,
                          *Custom ? &(*Custom)->registry() : nullptr,
                          Opts.DumpIRData);
  if (!GOrErr)
    return GOrErr.takeError();
  Graph &G = **GOrErr;

  // Memory.
  auto Plan = planMemory(G, *PO);
  if (!Plan)
    return Plan.takeError();
  bool Embed = Opts.ExternalWeights.empty();
  uint64_t Hash = graphHash(G, *Plan, T);
  std::vector<uint8_t> Blob = buildWeightsBlob(*Plan, Name, T.Name, Hash);
  if (Embed && Blob.size() > WR->Length)
    return makeError("the weights need {} bytes, more than region {} of "
                     "target '{}' holds ({} bytes)",
                     Blob.size(), WR->Name, T.Name, WR->Length);

  // Code.
  CodegenOptions CO;
  CO.ModelName = Name;
  CO.GraphHash = Hash;
  CO.WeightsDataSize = Plan->WeightsSize;
  CO.Checked = Opts.Checked;
  if (Embed)
    CO.EmbeddedBlob = Blob;
  for (const std::string &E : Opts.Emit) {
    CO.WantLLVMIR |= E == "llvm";
    CO.WantAsm |= E == "asm";
  }
  HeaderInfo HI;
  firmwareKernels(G, CO, HI);
  auto Lowered = lowerGraph(G);
  if (!Lowered)
    return Lowered.takeError();
  auto Code = generateObject(G, *Lowered, *Plan, T, CO);
  if (!Code)
    return Code.takeError();

  HI.ModelName = Name;
  HI.SourceFile = fs::path(Opts.Model).filename().string();
  HI.BlobSize = Blob.size();
  HI.GraphHash = Hash;
  HI.ExternalWeights = !Embed;
  HI.InputsRead = Code->InputsRead;
  HI.Checked = Opts.Checked;
  auto Figure = [](const StackBound &S) {
    return StackFigure{S.Known, S.Bytes, S.Reason, S.Path};
  };
  HI.InitStack = Figure(Code->InitStack);
  HI.RunStack = Figure(Code->RunStack);

  std::vector<OutputFile> Files = {
      {Opts.Out, std::move(Code->Object)},
      {HeaderPath, writeHeader(G, *Plan, T, HI)},
      {ScriptPath, writeLinkerScript(Name, *Plan, T, WeightsRegion, Embed)},
  };
  if (!Embed)
    Files.push_back({Opts.ExternalWeights, std::string(Blob.begin(), Blob.end())});
  if (CO.WantLLVMIR)
    Files.push_back({replaceExtension(Opts.Out, ".ll"), Code->LLVMIR});
  if (CO.WantAsm)
    Files.push_back({replaceExtension(Opts.Out, ".s"), Code->Asm});
  if (!Opts.Report.empty())
    Files.push_back({Opts.Report, writeReport(G, *Plan, T, Name, WeightsRegion,
                                              Blob.size(), &HI.InitStack,
                                              &HI.RunStack)});
  return writeOutputFiles(Files);
}

} // namespace cuvil
