//===- Compile.cpp - ONNX model -> in-memory object and its facts ---------===//
#include "driver/Compile.h"

#include "codegen/Backend.h"
#include "codegen/KernelLibrary.h"
#include "driver/DimRange.h"
#include "emit/WeightsBlob.h"
#include "frontend/onnx/OnnxImporter.h"
#include "ir/Diagnostic.h"
#include "ops/LowerGraph.h"
#include "ops/sequence/ControlFlow.h"
#include "ops/sequence/LoopBound.h"
#include "ops/sequence/Optional.h"
#include "passes/Pass.h"

#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <sstream>

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
      K.Params.push_back(
          P.K == CustomParam::Kind::FloatAttr ? FirmwareKernel::Param::Float
          : P.K == CustomParam::Kind::Int     ? FirmwareKernel::Param::Int64
                                              : FirmwareKernel::Param::Pointer);
    CO.FirmwareKernels.push_back(std::move(K));
    HI.FirmwareKernels.push_back(C->prototype());
  }
}

} // namespace

llvm::Expected<PlanOptions>
planOptionsFor(const TargetInfo &T,
               const std::vector<std::string> &ArenaRegions,
               const std::string &BankPolicy) {
  PlanOptions PO;
  if (BankPolicy == "compact")
    PO.Banks = PlanOptions::BankPolicy::Compact;
  else if (!BankPolicy.empty() && BankPolicy != "spread")
    return usageError(fmt::format("--bank-policy: '{}' is not 'spread' or "
                                  "'compact'",
                                  BankPolicy));
  PO.Alignment = T.DmaAlign;
  PO.AllowSpill = T.AllowSpill;
  PO.AddressBits = T.AddressBits;
  for (const std::string &R :
       ArenaRegions.empty() ? T.ArenaRegions : ArenaRegions) {
    const MemoryRegion *MR = T.region(R);
    if (!MR || !MR->writable())
      return usageError(fmt::format("--arena-regions: '{}' is not a writable "
                                    "memory region of target '{}' (its "
                                    "regions: {})",
                                    R, T.Name,
                                    fmt::join(T.regionNames(), ", ")));
    PO.Regions.push_back(MR);
  }
  return PO;
}

/// The firmware's region names (CM.Regions), the weights region
/// (CM.WeightsRegion) and the arena regions of the build, checked: the
/// region options take the target's names or the firmware's.
static llvm::Expected<PlanOptions> placeRegions(const BuildOptions &Opts,
                                                CompiledModel &CM) {
  TargetInfo &T = CM.Target;
  if (!Opts.RegionMapPairs.empty() && !Opts.RegionsFrom.empty())
    return usageError("--region-map and --regions-from both name the "
                      "firmware's regions: give one of them");
  bool FromScript = !Opts.RegionsFrom.empty();
  if (!Opts.RegionMapPairs.empty()) {
    auto M = parseRegionMap(Opts.RegionMapPairs, T);
    if (!M)
      return usageError(llvm::toString(M.takeError()));
    CM.Regions = std::move(*M);
  } else if (FromScript) {
    // The script's own errors name it (and its line): not the model's.
    auto M = regionMapFromScript(Opts.RegionsFrom, T);
    if (!M)
      return usageError(llvm::toString(M.takeError()));
    CM.Regions = std::move(*M);
  }
  const RegionMap &Map = CM.Regions;
  auto Mapped = [&](const std::string &R) {
    return !FromScript || Map.ToFirmware.count(R) != 0;
  };
  // A name the user gave: the target's, or the firmware's through the map.
  auto Resolve = [&](const char *Option,
                     const std::string &Name) -> llvm::Expected<std::string> {
    std::string R = Map.targetName(T, Name);
    if (R.empty())
      return usageError(fmt::format(
          "{}: target '{}' has no memory region '{}' (its regions: {}{})",
          Option, T.Name, Name, fmt::join(T.regionNames(), ", "),
          Map.empty() ? "; a firmware's own names are given with "
                        "--region-map TARGET=FIRMWARE or --regions-from"
                      : "; firmware names: " + Map.describe()));
    if (!Mapped(R))
      return usageError(unmappedMessage(Map, T, R));
    return R;
  };

  CM.WeightsRegion = T.WeightsRegion;
  if (!Opts.WeightsRegion.empty()) {
    auto R = Resolve("--weights-region", Opts.WeightsRegion);
    if (!R)
      return R.takeError();
    CM.WeightsRegion = *R;
  } else if (Opts.ExternalWeights.empty() && !Mapped(T.WeightsRegion)) {
    return usageError(unmappedMessage(Map, T, T.WeightsRegion) +
                      " (the weights' region: see --weights-region)");
  }

  std::vector<std::string> Arenas;
  for (const std::string &Name : Opts.ArenaRegions) {
    auto R = Resolve("--arena-regions", Name);
    if (!R)
      return R.takeError();
    Arenas.push_back(*R);
  }
  if (Opts.ArenaRegions.empty()) {
    // The target's arena regions the firmware has.
    for (const std::string &R : T.ArenaRegions)
      if (Mapped(R))
        Arenas.push_back(R);
    if (Arenas.empty())
      return usageError(unmappedMessage(Map, T, T.ArenaRegions.front()) +
                        " (the arenas' regions, --arena-regions)");
  }
  return planOptionsFor(T, Arenas, Opts.BankPolicy);
}

/// The imported graph G through the pass pipeline, verified.
static llvm::Expected<std::unique_ptr<Graph>>
optimizeModel(llvm::Expected<std::unique_ptr<Graph>> G,
              const std::vector<std::string> &DumpIR, std::ostream &Log,
              const PipelineOptions &PO, bool DumpData, bool DumpJson) {
  if (!G)
    return G.takeError();
  // The pipeline verifies the graph once constants are folded and shapes
  // resolved (see Pass::VerifyAfter).
  if (auto E = runPipeline(
          **G, DumpIR,
          [&](std::string_view Pass, const Graph &Gr) {
            if (DumpJson) {
              Log << Gr.printJson(Pass);
              return;
            }
            IRPrintOptions O;
            O.FullData = DumpData;
            Log << "// IR after " << Pass << "\n" << Gr.print(O);
          },
          PO))
    return E;
  // Passes rewrite nodes: check again what codegen will see.
  if (auto E = verifyGraph(**G))
    return E;
  return G;
}

/// Import(IO), and for a model with a Scan or Loop the ONNX importer could
/// not unroll (a node it declined, with its reason), once more with the
/// int64 and bool scalars that constant folding of the first import finds
/// (a `for` loop's trip count computed from the input shapes `--dim`
/// fixed): the importer unrolls the Loops those give.
static llvm::Expected<std::unique_ptr<Graph>>
importUnrollingLoops(const std::function<llvm::Expected<std::unique_ptr<Graph>>(
                         const ImportOptions &)> &Import,
                     ImportOptions IO) {
  auto G = Import(IO);
  if (!G)
    return G;
  const auto &Nodes = (*G)->nodes();
  if (std::none_of(Nodes.begin(), Nodes.end(), [](const auto &N) {
        return !N->def() && !N->unsupportedReason().empty();
      }))
    return G;
  // Errors are the second import's to report; the constants keep their
  // names (no merging), which KnownScalars goes by.
  llvm::consumeError(foldConstants(**G, /*MergeConstants=*/false));
  for (const auto &V : (*G)->values()) {
    if (!V->isConstant() || !V->hasStaticShape() || V->numElements() != 1)
      continue;
    const std::vector<uint8_t> &D = V->data();
    if (V->dtype() == DType::I64 && D.size() == 8) {
      int64_t X;
      std::memcpy(&X, D.data(), 8);
      IO.KnownScalars[V->name()] = X;
    } else if (V->dtype() == DType::Bool && D.size() == 1) {
      IO.KnownScalars[V->name()] = D[0] != 0;
    }
  }
  if (IO.KnownScalars.empty())
    return G;
  return Import(IO);
}

llvm::Expected<std::unique_ptr<Graph>>
loadModel(const std::string &Model, const std::map<std::string, int64_t> &Dims,
          const std::vector<std::string> &DumpIR, std::ostream &Log,
          const PipelineOptions &PO, const RuntimeOps *CustomOps, bool DumpData,
          bool DumpJson, const std::map<std::string, int64_t> &LoopBounds) {
  ImportOptions IO;
  IO.DimValues = Dims;
  IO.LoopBounds = LoopBounds;
  IO.CustomOps = CustomOps;
  beginStage(PO.Timer, "import");
  return optimizeModel(
      importUnrollingLoops(
          [&](const ImportOptions &O) { return importOnnx(Model, O); }, IO),
      DumpIR, Log, PO, DumpData, DumpJson);
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
               const PipelineOptions &PO, bool DumpData, bool DumpJson,
               const std::map<std::string, int64_t> &LoopBounds) {
  ImportOptions IO;
  IO.DimValues = Dims;
  IO.LoopBounds = LoopBounds;
  beginStage(PO.Timer, "import");
  return optimizeModel(
      importUnrollingLoops(
          [&](const ImportOptions &O) { return importOnnxBytes(Bytes, O); },
          IO),
      DumpIR, Log, PO, DumpData, DumpJson);
}

llvm::Error usageError(const std::string &Msg) {
  return llvm::make_error<UsageErrorInfo>(Msg);
}

bool isUsageError(const llvm::Error &E) { return E.isA<UsageErrorInfo>(); }

std::vector<std::string> dumpStageNames() {
  std::vector<std::string> Names{"import"};
  for (const Pass &P : defaultPipeline())
    Names.emplace_back(P.Name);
  return Names;
}

/// The stages compileModel times after the passes (plan, lower, weights,
/// and generateObject's five) and runBuild's own: emit, and quantize.
static constexpr size_t StagesAfterPasses = 8;

size_t buildStageCount(bool Quantize) {
  return dumpStageNames().size() + StagesAfterPasses + 1 + (Quantize ? 1 : 0);
}

std::string defaultModelName(const std::string &Path) {
  std::string Stem = fs::path(Path).stem().string();
  for (char &C : Stem)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  return cIdentifier(Stem);
}

llvm::Expected<CompiledModel>
compileModel(const BuildOptions &Opts, std::ostream &Log,
             std::optional<std::string_view> OnnxBytes, StageTimer *Timer) {
  // Usage checks first: nothing is read when they fail.
  CompiledModel CM;
  CM.Name = Opts.Name.empty() ? defaultModelName(Opts.Model) : Opts.Name;
  if (CM.Name != cIdentifier(CM.Name))
    return usageError(
        fmt::format("--name '{}' is not a C identifier", CM.Name));
  for (const std::string &E : Opts.Emit)
    if (E != "llvm" && E != "asm")
      return usageError(fmt::format("--emit: unknown kind '{}' (expected "
                                    "llvm, asm)",
                                    E));
  auto Target = loadTarget(Opts.Target);
  if (!Target)
    return usageError(llvm::toString(Target.takeError()));
  CM.Target = std::move(*Target);
  const TargetInfo &T = CM.Target;
  // The boot code that starts the other cores (runtime-baremetal/boot/
  // <boot>/cores.c).
  if (Opts.Cores > 1 && T.Boot != "u74-mc" && T.Boot != "a78")
    return usageError(fmt::format(
        "--cores {}: target '{}' uses boot code '{}', which cannot start "
        "other cores; multicore builds need the u74-mc or a78 boot code "
        "(runtime.boot of the target file)",
        Opts.Cores, T.Name, T.Boot));
  auto PO = placeRegions(Opts, CM);
  if (!PO)
    return PO.takeError();
  if (OnnxBytes && !Opts.CustomOps.empty())
    return usageError("--custom-ops needs the model as a file");
  auto Custom = loadCustomOpsOption(Opts.CustomOps);
  if (!Custom)
    return Custom.takeError();
  CM.CustomOps = std::move(*Custom);
  // --sign-key: the key's bytes, read before anything is compiled.
  std::vector<uint8_t> SignKey;
  if (!Opts.SignKey.empty()) {
    auto Key = llvm::MemoryBuffer::getFile(Opts.SignKey, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
    if (!Key)
      return usageError(fmt::format("--sign-key {}: cannot read the file: {}",
                                    Opts.SignKey, Key.getError().message()));
    if ((*Key)->getBufferSize() < 16)
      return usageError(fmt::format(
          "--sign-key {}: the key has {} bytes; an HMAC-SHA-256 key needs 16 "
          "at least (32 random bytes are usual)",
          Opts.SignKey, (*Key)->getBufferSize()));
    SignKey.assign((*Key)->getBufferStart(), (*Key)->getBufferEnd());
  }
  if (Opts.Checked) // one alignment unit of canary after every buffer
    PO->GuardBytes = PO->Alignment;

  // The packed kernels' panel width and the integer kernels' packing are
  // facts of the target's kernel library: read them from there so compiler
  // and kernels agree.
  PipelineOptions Passes;
  Passes.Timer = Timer;
  Passes.Cores = Opts.Cores;
  std::string QPackNote;
  if (!Opts.PortableKernels) {
    Passes.PackPanel = kernelConstant(T.Kernels, "cuvil_k_pack_mr").value_or(0);
    Passes.QPackMr = kernelConstant(T.Kernels, "cuvil_k_qpack_mr").value_or(0);
    Passes.QPackKr = kernelConstant(T.Kernels, "cuvil_k_qpack_kr").value_or(0);
    Passes.QPackDirect =
        kernelConstant(T.Kernels, "cuvil_k_qpack_direct").value_or(0) != 0;
    Passes.QPackXUnsigned =
        kernelConstant(T.Kernels, "cuvil_k_qpack_x_unsigned").value_or(0) != 0;
    Passes.QLanes = true;
    // A board of the a78's ISA without ARMv8.2 dotprod (a Cortex-A72,
    // llvm.kernels = "a78"): the library's packed integer kernels are
    // SDOT code, which its CPU cannot run; the reference ones can.
    if (kernelConstant(T.Kernels, "cuvil_k_qpack_dotprod").value_or(0) &&
        !targetHasFeature(T, "dotprod")) {
      Passes.QPackMr = Passes.QPackKr = 0;
      QPackNote = fmt::format(
          "note: target '{}' lacks the dotprod extension (SDOT/UDOT) that "
          "the packed integer kernels of library '{}' use: integer "
          "convolutions and matrix products run on the reference kernels",
          T.Name, T.Kernels);
    }
  }
  // A range of a dimension: compiled at its largest value (see
  // driver/DimRange.h).
  if (Opts.Range && Opts.Cores > 1)
    return usageError(fmt::format(
        "--dim {}={}..{} and --cores {}: a build for a range of a dimension "
        "runs on one core; give one value, or --cores 1",
        Opts.Range->Name, Opts.Range->Lo, Opts.Range->Hi, Opts.Cores));
  std::map<std::string, int64_t> Dims = Opts.Dims;
  if (Opts.Range) {
    Dims[Opts.Range->Name] = Opts.Range->Hi;
    PO->ConcatSlices = false;
    Passes.SizesVary = true;
  }
  auto Load = [&](const std::map<std::string, int64_t> &D,
                  const std::vector<std::string> &DumpIR, std::ostream &L,
                  const PipelineOptions &P) {
    return OnnxBytes
               ? loadModelBytes(*OnnxBytes, D, DumpIR, L, P, Opts.DumpIRData,
                                Opts.DumpIRJson, Opts.LoopBounds)
               : loadModel(Opts.Model, D, DumpIR, L, P,
                           CM.CustomOps ? &CM.CustomOps->registry() : nullptr,
                           Opts.DumpIRData, Opts.DumpIRJson, Opts.LoopBounds);
  };
  auto GOrErr = Load(Dims, Opts.DumpIR, Log, Passes);
  if (!GOrErr)
    return GOrErr.takeError();
  CM.G = std::move(*GOrErr);
  Graph &G = *CM.G;
  if (!QPackNote.empty() && !Opts.Quiet &&
      std::any_of(G.nodes().begin(), G.nodes().end(), [](const auto &N) {
        return !N->outputs().empty() &&
               (N->outputs().front()->dtype() == DType::I8 ||
                N->outputs().front()->dtype() == DType::U8);
      }))
    Log << QPackNote << "\n";

  // Memory.
  beginStage(Timer, "plan");
  auto Plan = planMemory(G, *PO);
  if (!Plan)
    return Plan.takeError();
  CM.Plan = std::move(*Plan);
  CM.Warnings = buildWarnings(
      G, CM.Plan, PO->Regions.empty() ? "" : PO->Regions.front()->Name,
      !Opts.PortableKernels && Passes.PackPanel > 0);
  CM.Embed = Opts.ExternalWeights.empty();
  // Lowered before the weights: the structure hash covers the constants no
  // kernel reads at run time, which the lowering tells.
  beginStage(Timer, "lower");
  auto Lowered = lowerGraph(G, Opts.Cores);
  if (!Lowered)
    return Lowered.takeError();
  // Code.
  CodegenOptions CO;
  if (Opts.Range) {
    // The model once more at every other value of the range.
    PipelineOptions Quiet = Passes;
    Quiet.Timer = nullptr;
    SampleFn Sample = [&](int64_t At) -> llvm::Expected<RangeSample> {
      std::map<std::string, int64_t> D = Opts.Dims;
      D[Opts.Range->Name] = At;
      std::ostringstream Discard;
      auto S = Load(D, {}, Discard, Quiet);
      if (!S)
        return S.takeError();
      auto SL = lowerGraph(**S, Opts.Cores);
      if (!SL)
        return SL.takeError();
      return RangeSample{std::move(*S), std::move(*SL)};
    };
    auto Code =
        fitDimRange(*Opts.Range, Sample, G, *Lowered, CM.Plan, Opts.Jobs);
    if (!Code)
      return Code.takeError();
    CO.Range = std::move(*Code);
  }
  beginStage(Timer, "weights");
  uint64_t Hash = structureHash(G, *Lowered, CM.Plan, T);
  if (Opts.Range) { // the code differs from that of one value
    std::string Text = fmt::format("range {} {} {}", Opts.Range->Name,
                                   Opts.Range->Lo, Opts.Range->Hi);
    Hash = fnv1a64(Text.data(), Text.size(), Hash);
  }
  CM.Blob = buildWeightsBlob(CM.Plan, CM.Name, T.Name, Hash,
                             SignKey.empty() ? nullptr : &SignKey);
  const MemoryRegion *WR = T.region(CM.WeightsRegion);
  if (CM.Embed && CM.Blob.size() > WR->Length)
    return makeError("the weights need {} bytes, more than region {} of "
                     "target '{}' holds ({} bytes)",
                     CM.Blob.size(), WR->Name, T.Name, WR->Length);

  CO.ShapedOutputs = branchShapedOutputs(G);
  if (!CO.ShapedOutputs.empty() && Opts.Range)
    return makeError(
        "output '{}' takes its shape from the branch of an If at run time, "
        "which a build for a range of a dimension (--dim {}={}..{}) does not "
        "support: give the dimension one value",
        G.outputs()[CO.ShapedOutputs[0].Output]->name(), Opts.Range->Name,
        Opts.Range->Lo, Opts.Range->Hi);
  CO.ModelName = CM.Name;
  CO.StructureHash = Hash;
  CO.WeightsDataSize = CM.Plan.WeightsSize;
  CO.Checked = Opts.Checked;
  CO.Profile = Opts.Profile;
  CO.Jobs = Opts.Jobs;
  CO.ArenaSizeSymbols = !Opts.InProcess;
  CO.Timer = Timer;
  if (CM.Embed)
    CO.EmbeddedBlob = CM.Blob;
  for (const std::string &E : Opts.Emit) {
    CO.WantLLVMIR |= E == "llvm";
    CO.WantAsm |= E == "asm";
  }
  HeaderInfo &HI = CM.Header;
  firmwareKernels(G, CO, HI);
  auto Code = generateObject(G, *Lowered, CM.Plan, T, CO);
  if (!Code)
    return Code.takeError();
  CM.Code = std::move(*Code);
  CM.Lowering = std::move(*Lowered);

  HI.ModelName = CM.Name;
  HI.SourceFile = fs::path(Opts.Model).filename().string();
  HI.BlobSize = CM.Blob.size();
  HI.StructureHash = Hash;
  HI.WeightsSha256 = blobSha256Hex(CM.Blob);
  HI.ExternalWeights = !CM.Embed;
  HI.InputsRead = CM.Code.InputsRead;
  HI.InputsOptional = optionalInputs(G);
  HI.WeightsSigned = !Opts.SignKey.empty();
  HI.LoopBounds = checkedLoopBounds(G);
  HI.ShapedOutputs = CO.ShapedOutputs;
  HI.Checked = Opts.Checked;
  HI.Workers = Opts.Cores;
  HI.ContextBytes = CM.Code.ContextBytes;
  if (CO.Range) {
    const DimRangeCode &R = *CO.Range;
    HeaderInfo::DimRange HR{R.Name, R.Lo, R.Hi, {}, {}};
    for (auto [Shapes, Texts] : {std::pair{&R.InputShapes, &HR.InputDims},
                                 std::pair{&R.OutputShapes, &HR.OutputDims}})
      for (const auto &Shape : *Shapes) {
        Texts->emplace_back();
        for (const DimFormula &F : Shape)
          Texts->back().push_back(formulaText(F, R.Name, R.Lo));
      }
    HI.Range = std::move(HR);
  }
  if (Opts.Profile) {
    auto Counters = profileCounters(CM.Target);
    if (!Counters) // generateObject refused the target already
      return Counters.takeError();
    HeaderInfo::Profile Prof{{}, {}, *Counters, CM.Code.ProfileOffset};
    for (const ProfileStep &P : CM.Code.ProfileSteps) {
      Prof.Steps.push_back(P.Name);
      Prof.Origins.push_back(P.Origins);
    }
    HI.Profiled = std::move(Prof);
  }
  auto Figure = [](const StackBound &S) {
    return StackFigure{S.Known, S.Bytes, S.Reason, S.Path};
  };
  HI.InitStack = Figure(CM.Code.InitStack);
  HI.RunStack = Figure(CM.Code.RunStack);
  return CM;
}

} // namespace cuvil
