//===- Activations.cpp - LeakyRelu, Elu, Selu, Gelu, Mish, PRelu, ... -----===//
//
// The parameterised activations: one UnarySpec each (attributes become
// float kernel arguments; kernels in runtime-baremetal/kernels/elementwise/
// activations.c), Gelu (opset 20; its approximate attribute selects the
// kernel), plus PRelu, whose slope broadcasts like a binary operand.
//
//===----------------------------------------------------------------------===//
#include "ops/elementwise/Broadcast.h"
#include "ops/elementwise/ElementwiseUnary.h"
#include "ops/ShapeRules.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

using K = UnaryParam::Kind;

llvm::Error checkCeluAlpha(const Node &N) {
  if (N.getFloat("alpha", 1.0f) == 0.0f)
    return nodeError(N, "alpha must not be 0");
  return llvm::Error::success();
}

constexpr UnarySpec CeluS{"cuvil_k_celu_f32", DType::F32, DType::F32,
                          {{{"alpha", K::Float, 1.0f}}}, 1, checkCeluAlpha};
constexpr UnarySpec EluS{"cuvil_k_elu_f32", DType::F32, DType::F32,
                         {{{"alpha", K::Float, 1.0f}}}, 1};
constexpr UnarySpec HardSigmoidS{
    "cuvil_k_hard_sigmoid_f32", DType::F32, DType::F32,
    {{{"alpha", K::Float, 0.2f}, {"beta", K::Float, 0.5f}}}, 2};
constexpr UnarySpec HardSwishS{"cuvil_k_hard_swish_f32"};
constexpr UnarySpec LeakyReluS{"cuvil_k_leaky_relu_f32", DType::F32,
                               DType::F32, {{{"alpha", K::Float, 0.01f}}}, 1};
// ONNX's defaults, to float precision.
constexpr UnarySpec SeluS{"cuvil_k_selu_f32", DType::F32, DType::F32,
                          {{{"alpha", K::Float, 1.67326319217681884765625f},
                            {"gamma", K::Float, 1.05070102214813232421875f}}},
                          2};
constexpr UnarySpec ShrinkS{"cuvil_k_shrink_f32", DType::F32, DType::F32,
                            {{{"bias", K::Float, 0.0f},
                              {"lambd", K::Float, 0.5f}}},
                            2};
constexpr UnarySpec MishS{"cuvil_k_mish_f32"};
constexpr UnarySpec SoftplusS{"cuvil_k_softplus_f32"};
constexpr UnarySpec SoftsignS{"cuvil_k_softsign_f32"};
constexpr UnarySpec ThresholdedReluS{"cuvil_k_thresholded_relu_f32",
                                     DType::F32, DType::F32,
                                     {{{"alpha", K::Float, 1.0f}}}, 1};

// Gelu: approximate "none" (the erf form) or "tanh".
llvm::Error checkGeluApproximate(const Node &N) {
  std::string A = N.getString("approximate", "none");
  if (A != "none" && A != "tanh")
    return nodeError(N, "approximate '{}' is not supported (none or tanh)", A);
  return llvm::Error::success();
}
constexpr UnarySpec GeluS{"cuvil_k_gelu_f32", DType::F32, DType::F32, {}, 0,
                          checkGeluApproximate};
constexpr UnarySpec GeluTanhS{"cuvil_k_gelu_tanh_f32"};

llvm::Error lowerGelu(const Node &N, std::vector<KernelCall> &Calls) {
  if (N.getString("approximate", "none") == "tanh")
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
  Calls.push_back({"cuvil_k_prelu_f32",
                   {KernelArg::tensor(N.input(0)), KernelArg::tensor(N.input(1)),
                    KernelArg::tensor(N.output(0)), KernelArg::array(L->Shape),
                    KernelArg::array(L->Strides[0]),
                    KernelArg::array(L->Strides[1])}});
  return llvm::Error::success();
}

} // namespace

#define CUVIL_ACTIVATION_OP(Name, Spec)                                        \
  extern const OpDef Name##Op = {#Name, verifyUnary<Spec>, lowerUnary<Spec>,   \
                                 noMacs, ElementWise | InPlace};

CUVIL_ACTIVATION_OP(Celu, CeluS)
CUVIL_ACTIVATION_OP(Elu, EluS)
CUVIL_ACTIVATION_OP(HardSigmoid, HardSigmoidS)
CUVIL_ACTIVATION_OP(HardSwish, HardSwishS)
CUVIL_ACTIVATION_OP(Mish, MishS)
CUVIL_ACTIVATION_OP(Selu, SeluS)
CUVIL_ACTIVATION_OP(Shrink, ShrinkS)
CUVIL_ACTIVATION_OP(Softplus, SoftplusS)
CUVIL_ACTIVATION_OP(Softsign, SoftsignS)
CUVIL_ACTIVATION_OP(ThresholdedRelu, ThresholdedReluS)

#undef CUVIL_ACTIVATION_OP

extern const OpDef LeakyReluOp = {.Name = "LeakyRelu",
                                  .Verify = verifyUnary<LeakyReluS>,
                                  .Lower = lowerUnary<LeakyReluS>,
                                  .Macs = noMacs,
                                  .Traits = ElementWise | InPlace,
                                  .Shape = shapeSameAsInput};

extern const OpDef GeluOp = {"Gelu", verifyUnary<GeluS>, lowerGelu, noMacs,
                             ElementWise | InPlace};

// The output has X's shape, so it may reuse X's buffer.
extern const OpDef PReluOp = {"PRelu", verifyPRelu, lowerPRelu, noMacs,
                              ElementWise | InPlace};

} // namespace cuvil
