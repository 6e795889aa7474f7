//===- KernelLibrary.cpp - Embedded kernel bitcode ------------------------===//
#include "codegen/KernelLibrary.h"

#include "ir/Diagnostic.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>

#include <set>

// Defined by the generated KernelBitcodeData.S, one pair per target of
// CUVIL_TARGETS (see cuvilc/CMakeLists.txt).
extern "C" {
#define CUVIL_KERNEL_TARGET(Name, Sym)                                         \
  extern const char cuvil_kernels_##Sym##_start[], cuvil_kernels_##Sym##_end[];
#include "KernelTargets.def"
}

namespace cuvil {

std::optional<llvm::StringRef> kernelBitcode(llvm::StringRef Target) {
  struct Entry {
    const char *Name, *Start, *End;
  };
  static const Entry Table[] = {
#define CUVIL_KERNEL_TARGET(Name, Sym)                                         \
  {Name, cuvil_kernels_##Sym##_start, cuvil_kernels_##Sym##_end},
#include "KernelTargets.def"
  };
  for (const Entry &E : Table)
    if (Target == E.Name)
      return llvm::StringRef(E.Start, E.End - E.Start);
  return std::nullopt;
}

std::vector<llvm::StringRef> kernelLibraries() {
  return {
#define CUVIL_KERNEL_TARGET(Name, Sym) Name,
#include "KernelTargets.def"
  };
}

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

} // namespace

llvm::Expected<llvm::StringRef> targetKernelBitcode(const TargetInfo &T) {
  if (auto Bitcode = kernelBitcode(T.Kernels))
    return *Bitcode;
  return makeError("target '{}': this cuvilc has no kernel library '{}' "
                   "(llvm.kernels in its TOML file)",
                   T.Name, T.Kernels);
}

llvm::Expected<std::unique_ptr<llvm::Module>>
loadKernelModule(const TargetInfo &T, const llvm::TargetMachine &TM,
                 llvm::LLVMContext &Ctx) {
  auto Bitcode = targetKernelBitcode(T);
  if (!Bitcode)
    return Bitcode.takeError();
  auto ModOrErr = llvm::getOwningLazyBitcodeModule(
      llvm::MemoryBuffer::getMemBuffer(*Bitcode, "kernels-" + T.Name + ".bc",
                                       /*RequiresNullTerminator=*/false),
      Ctx);
  if (!ModOrErr)
    return ModOrErr.takeError();
  std::unique_ptr<llvm::Module> M = std::move(*ModOrErr);
  M->setDataLayout(TM.createDataLayout());
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
  return M;
}

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

std::optional<int64_t> kernelConstant(llvm::StringRef Target,
                                      llvm::StringRef Symbol) {
  auto Bitcode = kernelBitcode(Target);
  if (!Bitcode)
    return std::nullopt;
  // Lazily: global initialisers are read, function bodies are not.
  llvm::LLVMContext Ctx;
  auto M = llvm::getLazyBitcodeModule(
      llvm::MemoryBufferRef(*Bitcode, "kernels-" + Target.str() + ".bc"), Ctx);
  if (!M) {
    llvm::consumeError(M.takeError());
    return std::nullopt;
  }
  const llvm::GlobalVariable *GV = (*M)->getGlobalVariable(Symbol);
  if (!GV || !GV->hasInitializer())
    return std::nullopt;
  if (const auto *CI = llvm::dyn_cast<llvm::ConstantInt>(GV->getInitializer()))
    return CI->getSExtValue();
  return std::nullopt;
}

} // namespace cuvil
