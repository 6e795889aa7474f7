//===- ElementwiseUnary.h - Table-driven element-wise unary ops -*- C++ -*-===//
//
// An element-wise unary op is described by a UnarySpec: its kernel, its
// input and output element types, and the attributes passed to the kernel
// after (x, y, n), each with its kind and default. verifyUnary<Spec> and
// lowerUnary<Spec> then serve as the op's OpDef functions, so one op is one
// constexpr spec and one OpDef line (see UnaryMath.cpp, Activations.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_ELEMENTWISEUNARY_H
#define CUVIL_OPS_ELEMENTWISEUNARY_H

#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

#include <array>
#include <variant>

namespace cuvil {

/// One attribute that becomes a scalar kernel argument.
struct UnaryParam {
  enum class Kind : uint8_t { Float, Int };
  const char *Attr;
  Kind K;
  float Default; ///< For Int attributes, an integral value.
};

inline llvm::Error anyParams(const Node &) { return llvm::Error::success(); }

struct UnarySpec {
  const char *Kernel;
  DType In = DType::F32;
  DType Out = DType::F32;
  std::array<UnaryParam, 2> Params = {};
  size_t NumParams = 0;
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
  for (size_t I = 0; I < S.NumParams; ++I) {
    const UnaryParam &P = S.Params[I];
    auto It = N.attrs().find(P.Attr);
    if (It == N.attrs().end())
      continue;
    bool Ok = P.K == UnaryParam::Kind::Float
                  ? std::holds_alternative<float>(It->second)
                  : std::holds_alternative<int64_t>(It->second);
    if (!Ok)
      return nodeError(N, "attribute '{}' must be {}", P.Attr,
                       P.K == UnaryParam::Kind::Float ? "a float"
                                                      : "an integer");
  }
  return S.CheckParams(N);
}

template <const UnarySpec &S>
llvm::Error lowerUnary(const Node &N, std::vector<KernelCall> &Calls) {
  KernelCall C{S.Kernel,
               {KernelArg::tensor(N.input(0)), KernelArg::tensor(N.output(0)),
                KernelArg::i(N.output(0)->numElements())}};
  for (size_t I = 0; I < S.NumParams; ++I) {
    const UnaryParam &P = S.Params[I];
    C.Args.push_back(
        P.K == UnaryParam::Kind::Float
            ? KernelArg::f(N.getFloat(P.Attr, P.Default))
            : KernelArg::i(N.getInt(P.Attr, static_cast<int64_t>(P.Default))));
  }
  Calls.push_back(std::move(C));
  return llvm::Error::success();
}

} // namespace cuvil

#endif
