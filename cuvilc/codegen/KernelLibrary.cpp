//===- KernelLibrary.cpp - Embedded kernel bitcode ------------------------===//
#include "codegen/KernelLibrary.h"

// Defined by the generated KernelBitcodeData.S (see cuvilc/CMakeLists.txt).
extern "C" {
extern const char cuvil_kernels_host_start[], cuvil_kernels_host_end[];
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
      {"a78", cuvil_kernels_a78_start, cuvil_kernels_a78_end},
      {"u74-mc", cuvil_kernels_u74_mc_start, cuvil_kernels_u74_mc_end},
  };
  for (const Entry &E : Table)
    if (Target == E.Name)
      return llvm::StringRef(E.Start, E.End - E.Start);
  return std::nullopt;
}

} // namespace cuvil
