//===- ElementwiseUnary.h - Table-driven element-wise unary ops -*- C++ -*-===//
//
// An element-wise unary op is described by a UnarySpec: its kernel, its
// input and output element types and an extra check of its attributes.
// verifyUnary<Spec> and lowerUnary<Spec> then serve as the op's OpDef
// functions, so one op is one constexpr spec and one OpDef line (see
// UnaryMath.cpp, Activations.cpp). An op whose kernel takes scalars after
// (x, y, n) declares them as typed attributes (ops/Attrs.h, OpDef::Attrs)
// and lowers through lowerUnaryWith, which fills the rest of the kernel's
// typed builder.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_ELEMENTWISEUNARY_H
#define CUVIL_OPS_ELEMENTWISEUNARY_H

#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"

namespace cuvil {

inline llvm::Error anyParams(const Node &) { return llvm::Error::success(); }

struct UnarySpec {
  const char *Kernel;
  DType In = DType::F32;
  DType Out = DType::F32;
  /// Extra check of the attribute values.
  llvm::Error (*CheckParams)(const Node &N) = anyParams;
};

namespace unary_detail {
inline llvm::Error checkType(const Node &N, const Value *V, const char *What,
                             DType Want) {
  if (V->dtype() != Want)
    return nodeError(N, "{} '{}' has element type {}; only {} is supported",
                     What, V->name(), dtypeName(V->dtype()), dtypeName(Want));
  return llvm::Error::success();
}

/// "a float", "an integer", ...: how the kind checks name a kind.
inline const char *kindPhrase(AttrKind K) {
  switch (K) {
  case AttrKind::Int: return "an integer";
  case AttrKind::Float: return "a float";
  case AttrKind::String: return "a string";
  default: return attrKindName(K);
  }
}

/// The attributes N's op declares (OpDef::Attrs) must be of their kind:
/// the importer refuses others, this catches graphs made elsewhere.
inline llvm::Error checkAttrKinds(const Node &N) {
  for (const AttrSpec *A = N.def() ? N.def()->Attrs : nullptr; A && A->Name;
       ++A) {
    auto It = N.attrs().find(A->Name);
    if (It != N.attrs().end() && attrKindOf(It->second) != A->Kind)
      return nodeError(N, "attribute '{}' must be {}", A->Name,
                       kindPhrase(A->Kind));
  }
  return llvm::Error::success();
}
} // namespace unary_detail

template <const UnarySpec &S> llvm::Error verifyUnary(const Node &N) {
  if (!N.input(0) || N.numInputs() != 1 || N.outputs().size() != 1)
    return nodeError(N, "needs exactly one input and one output");
  if (auto E = unary_detail::checkType(N, N.input(0), "input", S.In))
    return E;
  if (auto E = unary_detail::checkType(N, N.output(0), "output", S.Out))
    return E;
  if (N.input(0)->numElements() != N.output(0)->numElements())
    return nodeError(N, "output '{}' does not have the shape of input '{}'",
                     N.output(0)->name(), N.input(0)->name());
  if (auto E = unary_detail::checkAttrKinds(N))
    return E;
  return S.CheckParams(N);
}

/// The kernel S.Kernel(x, y, n), without parameters.
template <const UnarySpec &S>
llvm::Error lowerUnary(const Node &N, std::vector<KernelCall> &Calls) {
  Calls.push_back(kabi::XYNGroup{.Kernel = S.Kernel,
                                 .x = N.input(0),
                                 .y = N.output(0),
                                 .n = N.output(0)->numElements()}
                      .call());
  return llvm::Error::success();
}

/// A kernel of (x, y, n, parameters...): Params(N) gives its typed builder
/// with the parameters set from N's attributes; x, y and n are set here.
template <auto Params>
llvm::Error lowerUnaryWith(const Node &N, std::vector<KernelCall> &Calls) {
  auto K = Params(N);
  K.x = N.input(0);
  K.y = N.output(0);
  K.n = N.output(0)->numElements();
  Calls.push_back(K.call());
  return llvm::Error::success();
}

} // namespace cuvil

#endif
