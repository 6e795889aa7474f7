//===- KernelLibrary.h - Kernel bitcode embedded in cuvilc ------*- C++ -*-===//
//
// runtime-baremetal/kernels (and the runtime helpers generated code needs:
// mem*, blob verification) are compiled to one LLVM bitcode module per
// target when cuvilc is built, and embedded in the binary.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_KERNELLIBRARY_H
#define CUVIL_CODEGEN_KERNELLIBRARY_H

#include "target/TargetInfo.h"

#include <cstdint>
#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cuvil {

/// The kernel bitcode for a target name, if cuvilc was built with it.
std::optional<llvm::StringRef> kernelBitcode(llvm::StringRef Target);
/// The names of the kernel libraries cuvilc embeds (CUVIL_TARGETS).
std::vector<llvm::StringRef> kernelLibraries();

/// T's kernel bitcode, or an error naming the library this cuvilc lacks.
llvm::Expected<llvm::StringRef> targetKernelBitcode(const TargetInfo &T);

/// T's kernel library as a lazily read module (function bodies are read
/// when materialised), laid out for TM, every function specialised for T's
/// CPU and features.
llvm::Expected<std::unique_ptr<llvm::Module>>
loadKernelModule(const TargetInfo &T, const llvm::TargetMachine &TM,
                 llvm::LLVMContext &Ctx);

/// Materialises what the globals named in Roots reach (and what the
/// module must keep: llvm.used and the like); every other function of the
/// lazily read library becomes a declaration, which internalisation and
/// the optimiser then delete.
llvm::Error materializeReachable(llvm::Module &M,
                                 const std::set<std::string> &Roots);

/// Keeps one of each llvm.ident: every kernel module linked in brings its
/// compiler's identification, each a line of the object's .comment.
void dedupeIdents(llvm::Module &M);

/// The value of the integer constant `Symbol` the kernel library of Target
/// defines (a tuning fact the compiler must agree with, such as the packing
/// panel cuvil_k_pack_mr), or nullopt if it has no such constant.
std::optional<int64_t> kernelConstant(llvm::StringRef Target,
                                      llvm::StringRef Symbol);

} // namespace cuvil

#endif
