//===- KernelLibrary.h - Kernel bitcode embedded in cuvilc ------*- C++ -*-===//
//
// runtime-baremetal/kernels (and the runtime helpers generated code needs:
// mem*, blob verification) are compiled to one LLVM bitcode module per
// target when cuvilc is built, and embedded in the binary.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_KERNELLIBRARY_H
#define CUVIL_CODEGEN_KERNELLIBRARY_H

#include <llvm/ADT/StringRef.h>
#include <optional>

namespace cuvil {

/// The kernel bitcode for a target name, if cuvilc was built with it.
std::optional<llvm::StringRef> kernelBitcode(llvm::StringRef Target);

} // namespace cuvil

#endif
