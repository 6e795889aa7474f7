//===- KernelLibrary.h - Kernel bitcode embedded in cuvilc ------*- C++ -*-===//
//
// runtime-baremetal/kernels (and the runtime helpers generated code needs:
// mem*, blob verification) are compiled to one LLVM bitcode module per
// target when cuvilc is built, and embedded in the binary.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_KERNELLIBRARY_H
#define CUVIL_CODEGEN_KERNELLIBRARY_H

#include <cstdint>
#include <llvm/ADT/StringRef.h>
#include <optional>
#include <vector>

namespace cuvil {

/// The kernel bitcode for a target name, if cuvilc was built with it.
std::optional<llvm::StringRef> kernelBitcode(llvm::StringRef Target);
/// The names of the kernel libraries cuvilc embeds (CUVIL_TARGETS).
std::vector<llvm::StringRef> kernelLibraries();

/// The value of the integer constant `Symbol` the kernel library of Target
/// defines (a tuning fact the compiler must agree with, such as the packing
/// panel cuvil_k_pack_mr), or nullopt if it has no such constant.
std::optional<int64_t> kernelConstant(llvm::StringRef Target,
                                      llvm::StringRef Symbol);

} // namespace cuvil

#endif
