//===- KernelAbiSupport.cpp - What the generated kernel ABI uses ----------===//
#include "lowering/KernelAbiSupport.h"

#include "ir/Diagnostic.h"

#include <algorithm>
#include <cstring>
#include <llvm/Support/ErrorHandling.h>

namespace cuvil::kabi {

namespace {
bool isPointerKind(KernelArg::Kind K) {
  return K == KernelArg::Kind::Tensor || K == KernelArg::Kind::Null ||
         K == KernelArg::Kind::IntArray;
}

char kindLetter(KernelArg::Kind K) {
  switch (K) {
  case KernelArg::Kind::Int: return 'i';
  case KernelArg::Kind::Float: return 'f';
  default: return 'p';
  }
}
} // namespace

PtrArg::PtrArg(KernelArg A) : KernelArg(std::move(A)) {
  if (!isPointerKind(K))
    llvm::report_fatal_error("internal error: a scalar kernel argument given "
                             "for a pointer parameter");
}

void abiFatal(const std::string &Kernel, const char *Why) {
  llvm::report_fatal_error(llvm::Twine("internal error: kernel ") + Kernel +
                           " " + Why);
}

bool isMember(llvm::ArrayRef<const char *> Members, std::string_view Kernel) {
  return std::any_of(Members.begin(), Members.end(),
                     [&](const char *M) { return Kernel == M; });
}

const KernelSignature *findKernel(std::string_view Kernel) {
  llvm::ArrayRef<KernelSignature> All = kernelSignatures();
  auto It = std::lower_bound(All.begin(), All.end(), Kernel,
                             [](const KernelSignature &S, std::string_view K) {
                               return std::string_view(S.Name) < K;
                             });
  if (It == All.end() || Kernel != It->Name)
    return nullptr;
  return It;
}

llvm::Error checkKernelCall(const KernelCall &C) {
  const KernelSignature *S = findKernel(C.Kernel);
  if (!S)
    return makeError("internal error: kernel {} is not declared in "
                     "cuvil/kernels.h",
                     C.Kernel);
  size_t Arity = std::strlen(S->Params);
  if (C.Args.size() != Arity)
    return makeError("internal error: kernel {} takes {} arguments, lowering "
                     "passed {}",
                     C.Kernel, Arity, C.Args.size());
  for (size_t I = 0; I < Arity; ++I)
    if (kindLetter(C.Args[I].K) != S->Params[I])
      return makeError("internal error: argument {} of kernel {} has the "
                       "wrong kind ('{}' for '{}')",
                       I, C.Kernel, kindLetter(C.Args[I].K), S->Params[I]);
  return llvm::Error::success();
}

CallReader::CallReader(const KernelCall &C, const char *Kernel) : C(C) {
  if (C.Kernel != Kernel)
    abiFatal(C.Kernel, (std::string("read as ") + Kernel).c_str());
}

CallReader::CallReader(const KernelCall &C, size_t Arity) : C(C) {
  arity(Arity);
}

void CallReader::arity(size_t N) const {
  if (C.Args.size() != N)
    abiFatal(C.Kernel, "called with a wrong number of arguments");
}

const KernelArg &CallReader::at(size_t I) const {
  if (I >= C.Args.size())
    abiFatal(C.Kernel, "called with too few arguments");
  return C.Args[I];
}

PtrArg CallReader::ptr(size_t I) const {
  if (!isPointerKind(at(I).K))
    abiFatal(C.Kernel, "given a scalar for a pointer parameter");
  return PtrArg(at(I));
}

int64_t CallReader::i(size_t I) const {
  if (at(I).K != KernelArg::Kind::Int)
    abiFatal(C.Kernel, "given a non-integer for an int64_t parameter");
  return at(I).I;
}

float CallReader::f(size_t I) const {
  if (at(I).K != KernelArg::Kind::Float)
    abiFatal(C.Kernel, "given a non-float for a float parameter");
  return at(I).F;
}

} // namespace cuvil::kabi
