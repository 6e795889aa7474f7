//===- Activations.cpp - LeakyRelu, Elu, Selu, Gelu, Mish, PRelu, ... -----===//
//
// The parameterised activations: one UnarySpec each (attributes become
// float kernel arguments; kernels in runtime-baremetal/kernels/elementwise/
// activations.c), Gelu (opset 20; its approximate attribute selects the
// kernel), plus PRelu, whose slope broadcasts like a binary operand.
//
//===----------------------------------------------------------------------===//
#include "ops/ShapeRules.h"
#include "ops/elementwise/Broadcast.h"
#include "ops/elementwise/ElementwiseUnary.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

// The parameterised activations' attributes, with ONNX's defaults (Selu's
// to float precision).
#define ALPHA_ONE_ATTRS(X) X(Alpha, "alpha", Float, 1.0f)
CUVIL_OP_ATTRS(AlphaOneAttrs, ALPHA_ONE_ATTRS)
#define LEAKYRELU_ATTRS(X) X(Alpha, "alpha", Float, 0.01f)
CUVIL_OP_ATTRS(LeakyReluAttrs, LEAKYRELU_ATTRS)
#define HARDSIGMOID_ATTRS(X)                                                   \
  X(Alpha, "alpha", Float, 0.2f)                                               \
  X(Beta, "beta", Float, 0.5f)
CUVIL_OP_ATTRS(HardSigmoidAttrs, HARDSIGMOID_ATTRS)
#define SELU_ATTRS(X)                                                          \
  X(Alpha, "alpha", Float, 1.67326319217681884765625f)                         \
  X(Gamma, "gamma", Float, 1.05070102214813232421875f)
CUVIL_OP_ATTRS(SeluAttrs, SELU_ATTRS)
#define SHRINK_ATTRS(X)                                                        \
  X(Bias, "bias", Float, 0.0f)                                                 \
  X(Lambd, "lambd", Float, 0.5f)
CUVIL_OP_ATTRS(ShrinkAttrs, SHRINK_ATTRS)
#define GELU_ATTRS(X) X(Approximate, "approximate", String, "none")
CUVIL_OP_ATTRS(GeluAttrs, GELU_ATTRS)

llvm::Error checkCeluAlpha(const Node &N) {
  if (AlphaOneAttrs(N).Alpha == 0.0f)
    return nodeError(N, "alpha must not be 0");
  return llvm::Error::success();
}

constexpr UnarySpec CeluS{"cuvil_k_celu_f32", DType::F32, DType::F32,
                          checkCeluAlpha};
constexpr UnarySpec EluS{"cuvil_k_elu_f32"};
constexpr UnarySpec HardSigmoidS{"cuvil_k_hard_sigmoid_f32"};
constexpr UnarySpec HardSwishS{"cuvil_k_hard_swish_f32"};
constexpr UnarySpec LeakyReluS{"cuvil_k_leaky_relu_f32"};
constexpr UnarySpec SeluS{"cuvil_k_selu_f32"};
constexpr UnarySpec ShrinkS{"cuvil_k_shrink_f32"};
constexpr UnarySpec MishS{"cuvil_k_mish_f32"};
constexpr UnarySpec SoftplusS{"cuvil_k_softplus_f32"};
constexpr UnarySpec SoftsignS{"cuvil_k_softsign_f32"};
constexpr UnarySpec ThresholdedReluS{"cuvil_k_thresholded_relu_f32"};

// The kernel parameters after (x, y, n), for lowerUnaryWith.
template <const UnarySpec &S, typename Attrs>
kabi::XYNAlphaGroup alphaParams(const Node &N) {
  return {.Kernel = S.Kernel, .alpha = Attrs(N).Alpha};
}
kabi::HardSigmoidF32 hardSigmoidParams(const Node &N) {
  const HardSigmoidAttrs A(N);
  return {.alpha = A.Alpha, .beta = A.Beta};
}
kabi::SeluF32 seluParams(const Node &N) {
  const SeluAttrs A(N);
  return {.alpha = A.Alpha, .gamma = A.Gamma};
}
kabi::ShrinkF32 shrinkParams(const Node &N) {
  const ShrinkAttrs A(N);
  return {.bias = A.Bias, .lambd = A.Lambd};
}

// Gelu: approximate "none" (the erf form) or "tanh".
llvm::Error checkGeluApproximate(const Node &N) {
  const GeluAttrs Attrs(N);
  const std::string &A = Attrs.Approximate;
  if (A != "none" && A != "tanh")
    return nodeError(N, "approximate '{}' is not supported (none or tanh)", A);
  return llvm::Error::success();
}
constexpr UnarySpec GeluS{"cuvil_k_gelu_f32", DType::F32, DType::F32,
                          checkGeluApproximate};
constexpr UnarySpec GeluTanhS{"cuvil_k_gelu_tanh_f32"};

llvm::Error lowerGelu(const Node &N, std::vector<KernelCall> &Calls) {
  if (GeluAttrs(N).Approximate == "tanh")
    return lowerUnary<GeluTanhS>(N, Calls);
  return lowerUnary<GeluS>(N, Calls);
}

// PRelu: y = x < 0 ? slope * x : x, slope broadcast (unidirectionally) to
// x's shape. Before opset 7 a 1-D slope of X's channel count applies per
// channel (along axis 1), as in Caffe2 and the PyTorch exporter of the time.
llvm::Expected<BroadcastLoops> preluLoops(const Node &N) {
  if (!N.input(0) || !N.input(1))
    return nodeError(N, "needs two inputs (X and slope)");
  const Value *X = N.input(0), *Slope = N.input(1);
  if (N.output(0)->shape() != X->shape())
    return nodeError(N, "slope '{}' must broadcast to the shape of X '{}'",
                     Slope->name(), X->name());
  const auto &XS = X->shape();
  if (N.opset() < 7 && Slope->rank() == 1 && XS.size() >= 2 &&
      Slope->shape()[0] == XS[1] && XS[1] > 1) {
    int64_t Outer = XS[0], Inner = 1;
    for (size_t D = 2; D < XS.size(); ++D)
      Inner *= XS[D];
    BroadcastLoops L;
    L.Shape.assign(CUVIL_MAX_RANK - 3, 1);
    L.Shape.insert(L.Shape.end(), {Outer, XS[1], Inner});
    L.Strides.assign(2, std::vector<int64_t>(CUVIL_MAX_RANK - 3, 0));
    L.Strides[0].insert(L.Strides[0].end(), {XS[1] * Inner, Inner, 1});
    L.Strides[1].insert(L.Strides[1].end(), {0, 1, 0});
    return L;
  }
  return broadcastLoops(N, N.output(0)->shape(), {X, Slope}, CUVIL_MAX_RANK);
}

llvm::Error verifyPRelu(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  return preluLoops(N).takeError();
}

llvm::Error lowerPRelu(const Node &N, std::vector<KernelCall> &Calls) {
  auto L = preluLoops(N);
  if (!L)
    return L.takeError();
  Calls.push_back(kabi::PreluF32{.x = N.input(0),
                                 .slope = N.input(1),
                                 .y = N.output(0),
                                 .shape = L->Shape,
                                 .x_str = L->Strides[0],
                                 .slope_str = L->Strides[1]}
                      .call());
  return llvm::Error::success();
}

} // namespace

/// Activation X of spec X##S, lowered by LowerFn, attributes AttrSpecs.
#define CUVIL_ACTIVATION_OP(X, LowerFn, AttrSpecs)                             \
  extern const OpDef X##Op = {.Name = #X,                                      \
                              .Verify = verifyUnary<X##S>,                     \
                              .Lower = (LowerFn),                              \
                              .Macs = noMacs,                                  \
                              .Traits = ElementWise | InPlace,                 \
                              .Attrs = (AttrSpecs)};
// A is a type argument, which parentheses would break.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define CUVIL_ALPHA_OP(X, A)                                                   \
  CUVIL_ACTIVATION_OP(X, (lowerUnaryWith<alphaParams<X##S, A>>), A::Specs)
// NOLINTEND(bugprone-macro-parentheses)
#define CUVIL_PLAIN_OP(X) CUVIL_ACTIVATION_OP(X, lowerUnary<X##S>, nullptr)

CUVIL_ALPHA_OP(Celu, AlphaOneAttrs)
CUVIL_ALPHA_OP(Elu, AlphaOneAttrs)
CUVIL_ACTIVATION_OP(HardSigmoid, lowerUnaryWith<hardSigmoidParams>,
                    HardSigmoidAttrs::Specs)
CUVIL_PLAIN_OP(HardSwish)
CUVIL_PLAIN_OP(Mish)
CUVIL_ACTIVATION_OP(Selu, lowerUnaryWith<seluParams>, SeluAttrs::Specs)
CUVIL_ACTIVATION_OP(Shrink, lowerUnaryWith<shrinkParams>, ShrinkAttrs::Specs)
CUVIL_PLAIN_OP(Softplus)
CUVIL_PLAIN_OP(Softsign)
CUVIL_ALPHA_OP(ThresholdedRelu, AlphaOneAttrs)

#undef CUVIL_PLAIN_OP
#undef CUVIL_ALPHA_OP
#undef CUVIL_ACTIVATION_OP

extern const OpDef LeakyReluOp = {
    .Name = "LeakyRelu",
    .Verify = verifyUnary<LeakyReluS>,
    .Lower = lowerUnaryWith<alphaParams<LeakyReluS, LeakyReluAttrs>>,
    .Macs = noMacs,
    .Traits = ElementWise | InPlace,
    .Shape = shapeSameAsInput,
    .Attrs = LeakyReluAttrs::Specs};

extern const OpDef GeluOp = {.Name = "Gelu",
                             .Verify = verifyUnary<GeluS>,
                             .Lower = lowerGelu,
                             .Macs = noMacs,
                             .Traits = ElementWise | InPlace,
                             .Attrs = GeluAttrs::Specs};

// The output has X's shape, so it may reuse X's buffer.
extern const OpDef PReluOp = {"PRelu", verifyPRelu, lowerPRelu, noMacs,
                              ElementWise | InPlace};

} // namespace cuvil
