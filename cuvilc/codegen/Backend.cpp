//===- Backend.cpp - LLVM target machine, optimisation, emission ----------===//
#include "codegen/Backend.h"
#include "codegen/DeadVariants.h"

#include "ir/Diagnostic.h"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/StandardInstrumentations.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/Transforms/IPO/ConstantMerge.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/IPO/MergeFunctions.h>

namespace cuvil {

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetInfo &T) {
  static bool Initialized = [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers(); // for the arena's module assembly
    return true;
  }();
  (void)Initialized;
  std::string Err;
  const llvm::Target *LT = llvm::TargetRegistry::lookupTarget(T.Triple, Err);
  if (!LT)
    return makeError("target '{}': LLVM has no backend for triple {}: {}",
                     T.Name, T.Triple, Err);
  llvm::TargetOptions TO;
  TO.MCOptions.ABIName = T.ABI;
  TO.FunctionSections = false;
  std::optional<llvm::CodeModel::Model> CM;
  if (T.CodeModel == "medium")
    CM = llvm::CodeModel::Medium;
  else if (T.CodeModel == "small")
    CM = llvm::CodeModel::Small;
  auto RM = T.PIC ? llvm::Reloc::PIC_ : llvm::Reloc::Static;
  std::unique_ptr<llvm::TargetMachine> TM(
      LT->createTargetMachine(T.Triple, T.CPU, T.Features, TO, RM, CM,
                              llvm::CodeGenOptLevel::Aggressive));
  if (!TM)
    return makeError("target '{}': cannot create an LLVM target machine for "
                     "{} / {}",
                     T.Name, T.Triple, T.CPU);
  return TM;
}

bool targetHasFeature(const TargetInfo &T, llvm::StringRef Feature) {
  auto TM = createTargetMachine(T);
  if (!TM) {
    llvm::consumeError(TM.takeError());
    return false;
  }
  const llvm::MCSubtargetInfo *STI = (*TM)->getMCSubtargetInfo();
  return STI && STI->checkFeatures(("+" + Feature).str());
}

namespace {

/// Functions with more blocks than this run GVN without memory dependence
/// analysis. Kernels specialised on constant shapes unroll into functions
/// of thousands of blocks (a stride-2 depthwise layer: about 6,000 when GVN
/// runs), and MemoryDependence's backward scan for every load through them
/// made GVN half of a whole build (MobileNetV2 for a78: 2.9 of 6.1 s in the
/// O3 pipeline). In functions of this size the loads it would remove are
/// few (the kernels hold their operands in registers themselves); in
/// smaller ones, the scalar tiles of the RISC-V targets, they matter (u74-mc
/// ResNet-8 4.6% more instructions with memdep off everywhere).
constexpr unsigned GvnMemDepMaxBlocks = 1000;

/// Switches LLVM's own -enable-gvn-memdep for each GVN run, by the size of
/// its function: GVN reads the option each time it runs, and the default
/// pipeline offers no other way to set it. The option returns to its
/// default afterwards.
class GvnMemDepGate {
public:
  explicit GvnMemDepGate(llvm::PassInstrumentationCallbacks &PIC) {
    llvm::StringMap<llvm::cl::Option *> &Opts =
        llvm::cl::getRegisteredOptions();
    auto It = Opts.find("enable-gvn-memdep");
    if (It == Opts.end())
      return;
    Option = static_cast<llvm::cl::opt<bool> *>(It->second);
    Default = Option->getValue();
    PIC.registerBeforeNonSkippedPassCallback([this](llvm::StringRef Pass,
                                                    llvm::Any IR) {
      if (Pass != "GVNPass")
        return;
      if (const auto *const *F = llvm::any_cast<const llvm::Function *>(&IR))
        Option->setValue(Default && (*F)->size() <= GvnMemDepMaxBlocks);
    });
  }
  ~GvnMemDepGate() {
    if (Option)
      Option->setValue(Default);
  }
  GvnMemDepGate(const GvnMemDepGate &) = delete;
  GvnMemDepGate &operator=(const GvnMemDepGate &) = delete;

private:
  llvm::cl::opt<bool> *Option = nullptr;
  bool Default = true;
};

/// O3 and MergeFunctions (optimizeModule), skipping optnone functions.
void runPipeline(llvm::Module &M, llvm::TargetMachine &TM) {
  llvm::PassInstrumentationCallbacks PIC;
  GvnMemDepGate Gate(PIC);
  // optnone is honoured through this instrumentation (skipDeadVariants).
  llvm::OptNoneInstrumentation OptNone(/*DebugLogging=*/false);
  OptNone.registerCallbacks(PIC);
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;
  llvm::PassBuilder PB(&TM, llvm::PipelineTuningOptions(), std::nullopt, &PIC);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  // Layers of the same shape (MobileNet's repeated blocks) share code.
  // Their steps are merged twice: before the pipeline, where steps that
  // call the same kernels with the same constants are already identical
  // (each is then optimised once, and the object stays byte-identical),
  // and after it, for those that only the optimiser makes identical.
  PB.registerPipelineStartEPCallback(
      [](llvm::ModulePassManager &MPM, llvm::OptimizationLevel) {
        MPM.addPass(llvm::MergeFunctionsPass());
      });
  PB.registerOptimizerLastEPCallback(
      [](llvm::ModulePassManager &MPM, llvm::OptimizationLevel) {
        MPM.addPass(llvm::MergeFunctionsPass());
      });
  llvm::ModulePassManager MPM =
      PB.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  MPM.run(M, MAM);
}

} // namespace

void optimizeModule(llvm::Module &M, llvm::TargetMachine &TM) {
  const std::vector<std::string> Skipped = skipDeadVariants(M);
  runPipeline(M, TM);
  // A variant judged dead that O3 kept after all (its step's branch did
  // not fold) must not stay unoptimised: the module goes through again.
  bool Kept = false;
  for (const std::string &Name : Skipped)
    if (llvm::Function *F = M.getFunction(Name)) {
      F->removeFnAttr(llvm::Attribute::OptimizeNone);
      Kept = true;
    }
  if (Kept)
    runPipeline(M, TM);
}

void mergeIdenticalFunctions(llvm::Module &M) {
  llvm::ModuleAnalysisManager MAM;
  llvm::MergeFunctionsPass().run(M, MAM);
}

void runPasses(llvm::Module &M, llvm::ModulePassManager &MPM) {
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;
  llvm::PassBuilder PB;
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  MPM.run(M, MAM);
}

void finishSplitModule(llvm::Module &M) {
  llvm::ModulePassManager MPM;
  MPM.addPass(llvm::MergeFunctionsPass());
  MPM.addPass(llvm::GlobalDCEPass());
  MPM.addPass(llvm::ConstantMergePass());
  runPasses(M, MPM);
}

llvm::Error emitFile(llvm::Module &M, llvm::TargetMachine &TM,
                     llvm::CodeGenFileType FT, const std::string &TargetName,
                     std::string &Out, FrameSizes *Frames) {
  llvm::SmallVector<char, 0> Buf;
  llvm::raw_svector_ostream OS(Buf);
  llvm::legacy::PassManager PM;
  if (TM.addPassesToEmitFile(PM, OS, nullptr, FT))
    return makeError("target '{}': LLVM cannot emit this file type",
                     TargetName);
  if (Frames) {
    // Only the frame-size remarks are enabled: no other pass sees a
    // difference, and every other diagnostic is handled as before.
    llvm::LLVMContext &Ctx = M.getContext();
    std::unique_ptr<llvm::DiagnosticHandler> Old = Ctx.getDiagnosticHandler();
    Ctx.setDiagnosticHandler(std::make_unique<FrameSizeCollector>(*Frames));
    PM.run(M);
    Ctx.setDiagnosticHandler(std::move(Old));
  } else {
    PM.run(M);
  }
  Out.assign(Buf.begin(), Buf.end());
  return llvm::Error::success();
}

} // namespace cuvil
