//===- KernelLibrary.cpp - Embedded kernel bitcode ------------------------===//
#include "codegen/KernelLibrary.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

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
