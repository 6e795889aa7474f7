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
//
//===----------------------------------------------------------------------===//
#include "codegen/ModelCodegen.h"

#include "codegen/Backend.h"
#include "codegen/EntryBuilder.h"
#include "codegen/KernelLibrary.h"
#include "codegen/SplitCodegen.h"
#include "codegen/SplitOptimize.h"
#include "ir/Diagnostic.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/Internalize.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>
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

namespace {

/// The global values V's definition refers to (through constants too).
void referencedGlobals(const llvm::GlobalValue &V,
                       std::vector<const llvm::GlobalValue *> &Out) {
  std::vector<const llvm::Constant *> Work;
  std::set<const llvm::Constant *> Seen;
  auto Push = [&](const llvm::Value *X) {
    if (const auto *GV = llvm::dyn_cast<llvm::GlobalValue>(X))
      Out.push_back(GV);
    else if (const auto *C = llvm::dyn_cast<llvm::Constant>(X))
      if (Seen.insert(C).second)
        Work.push_back(C);
  };
  if (const auto *F = llvm::dyn_cast<llvm::Function>(&V)) {
    if (F->hasPersonalityFn())
      Push(F->getPersonalityFn());
    for (const llvm::BasicBlock &BB : *F)
      for (const llvm::Instruction &I : BB)
        for (const llvm::Value *Op : I.operands())
          Push(Op);
  } else if (const auto *G = llvm::dyn_cast<llvm::GlobalVariable>(&V)) {
    if (G->hasInitializer())
      Push(G->getInitializer());
  } else if (const auto *A = llvm::dyn_cast<llvm::GlobalAlias>(&V)) {
    Push(A->getAliasee());
  }
  while (!Work.empty()) {
    const llvm::Constant *C = Work.back();
    Work.pop_back();
    for (const llvm::Value *Op : C->operands())
      Push(Op);
  }
}

/// Materialises what the globals named in Roots reach (and what the
/// module must keep: llvm.used and the like); every other function of the
/// lazily read library becomes a declaration, which internalisation and
/// the optimiser then delete.
llvm::Error materializeReachable(llvm::Module &M,
                                 const std::set<std::string> &Roots) {
  std::vector<const llvm::GlobalValue *> Work;
  for (const std::string &N : Roots)
    if (const llvm::GlobalValue *GV = M.getNamedValue(N))
      Work.push_back(GV);
  for (const llvm::GlobalVariable &G : M.globals())
    if (G.getName().starts_with("llvm."))
      Work.push_back(&G);
  std::set<const llvm::GlobalValue *> Seen;
  while (!Work.empty()) {
    const llvm::GlobalValue *GV = Work.back();
    Work.pop_back();
    if (!Seen.insert(GV).second)
      continue;
    if (auto E = const_cast<llvm::GlobalValue *>(GV)->materialize())
      return E;
    referencedGlobals(*GV, Work);
  }
  for (llvm::Function &F : M)
    if (F.isMaterializable())
      F.deleteBody();
  return M.materializeAll();
}

/// Every kernel module linked in brings its compiler's identification
/// (llvm.ident), and each is a line of the object's .comment section: one
/// of each is enough (MobileNetV2 carried 1,222 copies of one, 49 KB).
void dedupeIdents(llvm::Module &M) {
  llvm::NamedMDNode *Ident = M.getNamedMetadata("llvm.ident");
  if (!Ident)
    return;
  std::vector<llvm::MDNode *> Unique;
  std::set<llvm::MDNode *> Seen;
  for (llvm::MDNode *N : Ident->operands())
    if (Seen.insert(N).second)
      Unique.push_back(N);
  Ident->clearOperands();
  for (llvm::MDNode *N : Unique)
    Ident->addOperand(N);
}

} // namespace

llvm::Expected<CodegenResult>
generateObject(const Graph &G, const GraphLowering &L, const MemoryPlan &Plan,
               const TargetInfo &T, const CodegenOptions &Opts) {
  beginStage(Opts.Timer, "entry-points");
  auto Bitcode = kernelBitcode(T.Kernels);
  if (!Bitcode)
    return makeError("target '{}': this cuvilc has no kernel library '{}' "
                     "(llvm.kernels in its TOML file)",
                     T.Name, T.Kernels);
  llvm::LLVMContext Ctx;
  if (Opts.Range) // kernels' sizes are run-time values: see QuietUnrolling
    Ctx.setDiagnosticHandler(std::make_unique<QuietUnrolling>());
  auto ModOrErr = llvm::getOwningLazyBitcodeModule(
      llvm::MemoryBuffer::getMemBuffer(*Bitcode, "kernels-" + T.Name + ".bc",
                                       /*RequiresNullTerminator=*/false),
      Ctx);
  if (!ModOrErr)
    return ModOrErr.takeError();
  std::unique_ptr<llvm::Module> M = std::move(*ModOrErr);
  M->setModuleIdentifier(Opts.ModelName);
  M->setSourceFileName(Opts.ModelName);

  auto TM = createTargetMachine(T);
  if (!TM)
    return TM.takeError();
  M->setDataLayout((*TM)->createDataLayout());
  M->setTargetTriple(T.Triple);
  // Specialise the kernels for this target's CPU (the library may have been
  // built for another CPU of the same ISA).
  for (llvm::Function &F : *M) {
    if (F.isDeclaration())
      continue;
    F.removeFnAttr("tune-cpu");
    F.addFnAttr("target-cpu", T.CPU);
    if (!T.Features.empty())
      F.addFnAttr("target-features", T.Features);
  }

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

  // Keep the entry points and data symbols; the runtime helpers the backend
  // may call (memcpy...) stay as weak definitions so the object has no
  // undefined symbols yet does not clash with the firmware's own.
  beginStage(Opts.Timer, "link-kernels");
  std::set<std::string> Keep = EB.exported();
  for (const char *S : WeakRuntimeSymbols)
    Keep.insert(S);
  if (auto E = materializeReachable(*M, Keep))
    return E;
  for (const char *S : WeakRuntimeSymbols)
    if (llvm::Function *F = M->getFunction(S); F && !F->isDeclaration())
      F->setLinkage(llvm::GlobalValue::WeakAnyLinkage);
    else
      Keep.erase(S);
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
  if (auto E =
          emitObjectSplit(*M, **TM, Jobs, StepPrefix, T.Name, R.Object, Frames))
    return E;
  beginStage(Opts.Timer, "stack-bounds");
  std::vector<std::string> Helpers(std::begin(WeakRuntimeSymbols),
                                   std::end(WeakRuntimeSymbols));
  R.InitStack = entryStackBound(
      *M, T.Triple, "cuvil_" + Opts.ModelName + "_init", Frames, Helpers);
  // run_v's bound too: it is an entry point of its own.
  R.RunStack = entryStackBound(*M, T.Triple, "cuvil_" + Opts.ModelName + "_run",
                               Frames, Helpers);
  StackBound RunV = entryStackBound(
      *M, T.Triple, "cuvil_" + Opts.ModelName + "_run_v", Frames, Helpers);
  if (!RunV.Known || (R.RunStack.Known && RunV.Bytes > R.RunStack.Bytes))
    R.RunStack = RunV;
  return R;
}

} // namespace cuvil
