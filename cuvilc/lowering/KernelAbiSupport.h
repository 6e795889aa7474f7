//===- KernelAbiSupport.h - What the generated kernel ABI uses --*- C++ -*-===//
//
// The typed kernel builders (namespace cuvil::kabi, generated at build time
// by cmake/gen_kernel_abi.py from the prototypes in cuvil/kernels.h into
// KernelAbi.h) are made of these: PtrArg for pointer parameters, a reader
// for their decoders, and the table of every kernel's signature.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_LOWERING_KERNELABISUPPORT_H
#define CUVIL_LOWERING_KERNELABISUPPORT_H

#include "lowering/KernelCall.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/Error.h>

#include <string>
#include <string_view>

namespace cuvil::kabi {

/// The argument of a pointer parameter: a tensor (+ byte offset), null (an
/// absent optional operand) or a constant int64_t array.
struct PtrArg : KernelArg {
  PtrArg() = default;
  /// The tensor V, or null when V is (an absent optional input).
  PtrArg(const Value *V)
      : KernelArg(V ? KernelArg::tensor(V) : KernelArg::null()) {}
  PtrArg(std::vector<int64_t> A) : KernelArg(KernelArg::array(std::move(A))) {}
  /// A (which must be a tensor, null or array argument).
  PtrArg(KernelArg A);
};

/// A kernel's parameters: one letter per parameter, 'p' pointer, 'i'
/// int64_t, 'f' float.
struct KernelSignature {
  const char *Name;
  const char *Params;
};

/// Every kernel of cuvil/kernels.h, sorted by name.
llvm::ArrayRef<KernelSignature> kernelSignatures();
/// The signature of Kernel, or null when cuvil/kernels.h declares none.
const KernelSignature *findKernel(std::string_view Kernel);
/// Checks that C calls a declared kernel with as many arguments as it has
/// parameters, each of the parameter's kind.
llvm::Error checkKernelCall(const KernelCall &C);

/// Reads a call's arguments by position, for the generated decoders; a
/// call that does not fit the kernel is an internal error (fatal).
class CallReader {
public:
  /// Reads C, which must call Kernel.
  CallReader(const KernelCall &C, const char *Kernel);
  /// Reads C (any kernel of a group), which must pass Arity arguments.
  CallReader(const KernelCall &C, size_t Arity);
  void arity(size_t N) const;
  PtrArg ptr(size_t I) const;
  int64_t i(size_t I) const;
  float f(size_t I) const;

private:
  const KernelArg &at(size_t I) const;
  const KernelCall &C;
};

/// Ends the compiler: Kernel is misused by the compiler itself (Why).
[[noreturn]] void abiFatal(const std::string &Kernel, const char *Why);
/// True when Kernel is one of Members (the names of a group).
bool isMember(llvm::ArrayRef<const char *> Members, std::string_view Kernel);

} // namespace cuvil::kabi

#endif
