//===- Unary.cpp - Element-wise activations: Relu, Clip, Sigmoid, Tanh ----===//
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

#include <limits>

namespace cuvil {

/// Clip's bounds: inputs 1 and 2 (opset >= 11, must be constants) or the
/// min/max attributes (older opsets). Shared with the fusion pass.
llvm::Expected<std::pair<float, float>> clipBounds(const Node &N) {
  float Inf = std::numeric_limits<float>::infinity();
  std::pair<float, float> B{-Inf, Inf};
  if (N.opset() < 11) {
    B.first = N.getFloat("min", -Inf);
    B.second = N.getFloat("max", Inf);
    return B;
  }
  for (size_t I = 1; I <= 2; ++I) {
    const Value *V = N.input(I);
    if (!V)
      continue;
    if (!V->isConstant() || V->numElements() != 1 || V->dtype() != DType::F32)
      return nodeError(N, "bound '{}' must be a constant f32 scalar",
                       V->name());
    (I == 1 ? B.first : B.second) = V->f32()[0];
  }
  return B;
}

namespace {

llvm::Error verifyPlain(const Node &N) { return requireF32(N); }

llvm::Error verifyClip(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  return clipBounds(N).takeError();
}

template <const char *Kernel>
llvm::Error lowerPlain(const Node &N, std::vector<KernelCall> &Calls) {
  Calls.push_back({Kernel,
                   {KernelArg::tensor(N.input(0)),
                    KernelArg::tensor(N.output(0)),
                    KernelArg::i(N.output(0)->numElements())}});
  return llvm::Error::success();
}

llvm::Error lowerClip(const Node &N, std::vector<KernelCall> &Calls) {
  auto B = clipBounds(N);
  if (!B)
    return B.takeError();
  Calls.push_back({"cuvil_k_clip_f32",
                   {KernelArg::tensor(N.input(0)),
                    KernelArg::tensor(N.output(0)),
                    KernelArg::i(N.output(0)->numElements()),
                    KernelArg::f(B->first), KernelArg::f(B->second)}});
  return llvm::Error::success();
}

constexpr char ReluK[] = "cuvil_k_relu_f32";
constexpr char SigmoidK[] = "cuvil_k_sigmoid_f32";
constexpr char TanhK[] = "cuvil_k_tanh_f32";

} // namespace

extern const OpDef ReluOp = {"Relu", verifyPlain, lowerPlain<ReluK>, noMacs,
                             Placement::InPlace};
extern const OpDef SigmoidOp = {"Sigmoid", verifyPlain, lowerPlain<SigmoidK>,
                                noMacs, Placement::InPlace};
extern const OpDef TanhOp = {"Tanh", verifyPlain, lowerPlain<TanhK>, noMacs,
                             Placement::InPlace};
extern const OpDef ClipOp = {"Clip", verifyClip, lowerClip, noMacs,
                             Placement::InPlace};

} // namespace cuvil
