//===- ModelCodegen.cpp - Build, link, optimise and emit the model --------===//
//
// The model module starts as the target's kernel bitcode. Into it we add:
//   - the static arena (zero-initialised, in .cuvil.<name>.arena.<region>),
//   - the embedded weight blob (in .cuvil.<name>.weights), unless external,
//   - cuvil_<name>_init / _run_v / _run; run_v calls one internal function
//     per node (cuvil_<name>_n<step>_<node>), whose body calls the kernels
//     with constant shapes on the tensor pointers run_v passes it.
// The library is read lazily: only the kernels the entry points reach are
// materialised (a model calls a few of several hundred), so neither the
// bitcode reader nor the optimiser spends time on the others.
// Then everything but the entry points is internalised, the O3 pipeline
// specialises the (inlined) kernels on those constants, and nodes whose
// functions came out identical (same op, shapes and attributes) share one.
// The runtime support code the entry points call (the blob reader, the
// weight slots, mem*) is not compiled here: it comes compiled, the same
// for every model of the target, and its object is merged into the
// model's (SupportObject.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/ModelCodegen.h"

#include "codegen/Backend.h"
#include "codegen/EntryBuilder.h"
#include "codegen/KernelLibrary.h"
#include "codegen/ObjectMerge.h"
#include "codegen/SplitCodegen.h"
#include "codegen/SplitOptimize.h"
#include "codegen/SupportObject.h"
#include "ir/Diagnostic.h"

#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/Internalize.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <set>

namespace cuvil {

namespace {
/// A build for a range of a dimension passes the kernels sizes known only
/// at run time, so their loops marked for full unrolling (CUVIL_UNROLL)
/// cannot be unrolled there: LLVM's "loop not unrolled" warnings are then
/// what such a build is, not a defect. Other diagnostics go on as usual.
class QuietUnrolling : public llvm::DiagnosticHandler {
public:
  bool handleDiagnostics(const llvm::DiagnosticInfo &DI) override {
    return DI.getKind() == llvm::DK_OptimizationFailure;
  }
};
} // namespace

llvm::Expected<CodegenResult>
generateObject(const Graph &G, const GraphLowering &L, const MemoryPlan &Plan,
               const TargetInfo &T, const CodegenOptions &Opts) {
  auto TM = createTargetMachine(T);
  if (!TM)
    return TM.takeError();
  auto Support = supportObject(T, **TM, Opts.Timer);
  if (!Support)
    return Support.takeError();
  beginStage(Opts.Timer, "entry-points");
  llvm::LLVMContext Ctx;
  if (Opts.Range) // kernels' sizes are run-time values: see QuietUnrolling
    Ctx.setDiagnosticHandler(std::make_unique<QuietUnrolling>());
  auto ModOrErr = loadKernelModule(T, **TM, Ctx);
  if (!ModOrErr)
    return ModOrErr.takeError();
  std::unique_ptr<llvm::Module> M = std::move(*ModOrErr);
  M->setModuleIdentifier(Opts.ModelName);
  M->setSourceFileName(Opts.ModelName);

  EntryBuilder EB(*M, G, L, Plan, T, Opts);
  if (auto E = EB.build())
    return E;
  CodegenResult R;
  R.InputsRead = EB.inputsRead();
  R.ContextBytes = M->getDataLayout().getTypeAllocSize(EB.stateType());
  if (Opts.Profile) {
    R.ProfileSteps = EB.profileSteps();
    R.ProfileOffset = M->getDataLayout()
                          .getStructLayout(EB.stateType())
                          ->getElementOffset(EB.profileRunsField());
  }

  // The support code comes compiled (SupportObject.h): here its functions
  // are declarations, which the support object merged in below defines.
  beginStage(Opts.Timer, "link-kernels");
  for (const char *S : WeakRuntimeSymbols)
    if (llvm::Function *F = M->getFunction(S))
      F->deleteBody();
  for (const char *S : SupportEntrySymbols)
    if (llvm::Function *F = M->getFunction(S)) {
      F->deleteBody();
      F->setVisibility(llvm::GlobalValue::HiddenVisibility);
      F->setDSOLocal(true);
    }
  // Keep the entry points and data symbols.
  std::set<std::string> Keep = EB.exported();
  if (auto E = materializeReachable(*M, Keep))
    return E;
  llvm::internalizeModule(*M, [&](const llvm::GlobalValue &GV) {
    return Keep.count(GV.getName().str()) != 0;
  });
  dedupeIdents(*M);

  std::string VerifyMsg;
  llvm::raw_string_ostream VOS(VerifyMsg);
  if (llvm::verifyModule(*M, &VOS))
    return makeError("internal error: invalid LLVM module: {}", VerifyMsg);

  beginStage(Opts.Timer, "llvm-optimize");
  const unsigned Jobs = Opts.Jobs ? Opts.Jobs : defaultOptimizeJobs();
  const std::string StepPrefix = "cuvil_" + Opts.ModelName + "_";
  if (auto E = optimizeModuleSplit(*M, **TM, Jobs, StepPrefix, Opts.Timer))
    return E;
  dedupeIdents(*M); // the optimised steps linked back bring theirs
  beginStage(Opts.Timer, "llvm-codegen");

  if (Opts.WantLLVMIR) {
    llvm::raw_string_ostream OS(R.LLVMIR);
    M->print(OS, nullptr);
  }
  // Code generation may rewrite the IR: emit assembly from a copy.
  if (Opts.WantAsm) {
    std::unique_ptr<llvm::Module> Copy = llvm::CloneModule(*M);
    if (auto E = emitFile(*Copy, **TM, llvm::CodeGenFileType::AssemblyFile,
                          T.Name, R.Asm))
      return E;
  }
  FrameSizes Frames;
  std::string ModelObject;
  if (auto E = emitObjectSplit(*M, **TM, Jobs, StepPrefix, T.Name, ModelObject,
                               Frames))
    return E;
  auto Merged = mergeObjects({ModelObject, Support->Object}, Support->Localize);
  if (!Merged)
    return Merged.takeError();
  R.Object = std::move(*Merged);
  if (!EB.weightsPlaceholder().empty())
    if (auto E = fillNobitsSection(R.Object, EB.weightsPlaceholder(),
                                   Opts.EmbeddedBlob))
      return E;
  beginStage(Opts.Timer, "stack-bounds");
  std::vector<std::string> Helpers(std::begin(WeakRuntimeSymbols),
                                   std::end(WeakRuntimeSymbols));
  auto Bound = [&](const std::string &Entry) {
    return entryStackBound(*M, T.Triple, "cuvil_" + Opts.ModelName + Entry,
                           Frames, Helpers, Support->Bounds);
  };
  // init's figure covers the other entries that check a blob: init_ab,
  // init_signed (an HMAC on top) and the switches.
  R.InitStack = Bound("_init");
  for (const char *Entry : {"_init_ab", "_init_signed", "_switch_weights",
                            "_switch_weights_signed"}) {
    StackBound Other = Bound(Entry);
    if (!Other.Known || (R.InitStack.Known && Other.Bytes > R.InitStack.Bytes))
      R.InitStack = Other;
  }
  // run_v's bound too: it is an entry point of its own.
  R.RunStack = Bound("_run");
  StackBound RunV = Bound("_run_v");
  if (!RunV.Known || (R.RunStack.Known && RunV.Bytes > R.RunStack.Bytes))
    R.RunStack = RunV;
  return R;
}

} // namespace cuvil
