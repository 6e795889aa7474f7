//===- KernelLibrary.cpp - Embedded kernel bitcode ------------------------===//
#include "codegen/KernelLibrary.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

// Defined by the generated KernelBitcodeData.S (see cuvilc/CMakeLists.txt).
extern "C" {
extern const char cuvil_kernels_host_start[], cuvil_kernels_host_end[];
extern const char cuvil_kernels_host_avx512_start[], cuvil_kernels_host_avx512_end[];
extern const char cuvil_kernels_a78_start[], cuvil_kernels_a78_end[];
extern const char cuvil_kernels_u74_mc_start[], cuvil_kernels_u74_mc_end[];
}

namespace cuvil {

std::optional<llvm::StringRef> kernelBitcode(llvm::StringRef Target) {
  struct Entry {
    const char *Name, *Start, *End;
  };
  static const Entry Table[] = {
      {"host", cuvil_kernels_host_start, cuvil_kernels_host_end},
      {"host-avx512", cuvil_kernels_host_avx512_start, cuvil_kernels_host_avx512_end},
      {"a78", cuvil_kernels_a78_start, cuvil_kernels_a78_end},
      {"u74-mc", cuvil_kernels_u74_mc_start, cuvil_kernels_u74_mc_end},
  };
  for (const Entry &E : Table)
    if (Target == E.Name)
      return llvm::StringRef(E.Start, E.End - E.Start);
  return std::nullopt;
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
