//===- Unary.cpp - Element-wise activations: Relu, Clip, Sigmoid, Tanh ----===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"

#include <limits>

namespace cuvil {
namespace {

// Clip's bounds before opset 11 (then inputs 1 and 2).
#define CLIP_ATTRS(X)                                                          \
  X(Min, "min", Float, -std::numeric_limits<float>::infinity())                \
  X(Max, "max", Float, std::numeric_limits<float>::infinity())
CUVIL_OP_ATTRS(ClipAttrs, CLIP_ATTRS)

} // namespace

/// Clip's bounds: inputs 1 and 2 (opset >= 11, must be constants) or the
/// min/max attributes (older opsets). Shared with the fusion pass.
llvm::Expected<std::pair<float, float>> clipBounds(const Node &N) {
  float Inf = std::numeric_limits<float>::infinity();
  std::pair<float, float> B{-Inf, Inf};
  if (N.opset() < 11) {
    const ClipAttrs A(N);
    B.first = A.Min;
    B.second = A.Max;
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

/// True when Clip needs cuvil_k_clip_rt_*: bounds only known at run time
/// (inputs that are not constants), or an element type other than f32.
bool clipAtRunTime(const Node &N) {
  if (N.opset() < 11)
    return false;
  if (N.input(0) && N.input(0)->dtype() != DType::F32)
    return true;
  for (size_t I = 1; I <= 2; ++I)
    if (const Value *V = N.input(I))
      if (!V->isConstant())
        return true;
  return false;
}

llvm::Error verifyClip(const Node &N) {
  if (!clipAtRunTime(N)) {
    if (auto E = requireF32(N))
      return E;
    return clipBounds(N).takeError();
  }
  const Value *X = N.input(0);
  if (!X)
    return nodeError(N, "missing input");
  DType T = X->dtype();
  bool Ok = T == DType::F32 || T == DType::F64 || T == DType::I8 ||
            T == DType::U8 || T == DType::I16 || T == DType::U16 ||
            T == DType::I32 || T == DType::U32 || T == DType::I64 ||
            T == DType::U64;
  if (!Ok)
    return nodeError(N,
                     "input '{}' has element type {}; Clip supports f32, f64 "
                     "and 8- to 64-bit integers",
                     X->name(), dtypeName(T));
  if (N.output(0)->dtype() != T)
    return nodeError(N, "output type {} differs from the input's {}",
                     dtypeName(N.output(0)->dtype()), dtypeName(T));
  for (size_t I = 1; I <= 2; ++I)
    if (const Value *V = N.input(I))
      if (V->dtype() != T || V->numElements() != 1)
        return nodeError(N,
                         "bound '{}' must be a scalar of the input's type "
                         "{}",
                         V->name(), dtypeName(T));
  return llvm::Error::success();
}

template <const char *Kernel>
llvm::Error lowerPlain(const Node &N, std::vector<KernelCall> &Calls) {
  Calls.push_back(kabi::XYNGroup{.Kernel = Kernel,
                                 .x = N.input(0),
                                 .y = N.output(0),
                                 .n = N.output(0)->numElements()}
                      .call());
  return llvm::Error::success();
}

llvm::Error lowerClip(const Node &N, std::vector<KernelCall> &Calls) {
  if (clipAtRunTime(N)) {
    Calls.push_back(
        kabi::ClipRtGroup{.Kernel = fmt::format("cuvil_k_clip_rt_{}",
                                                dtypeName(N.input(0)->dtype())),
                          .x = N.input(0),
                          .lo = N.input(1),
                          .hi = N.input(2),
                          .y = N.output(0),
                          .n = N.output(0)->numElements()}
            .call());
    return llvm::Error::success();
  }
  auto B = clipBounds(N);
  if (!B)
    return B.takeError();
  Calls.push_back(kabi::ClipF32{.x = N.input(0),
                                .y = N.output(0),
                                .n = N.output(0)->numElements(),
                                .lo = B->first,
                                .hi = B->second}
                      .call());
  return llvm::Error::success();
}

/// Relu is the clamp [0, inf).
std::optional<std::pair<float, float>> reluClamp(const Node &) {
  return std::pair<float, float>{0.0f, std::numeric_limits<float>::infinity()};
}

/// Clip with bounds known at compile time.
std::optional<std::pair<float, float>> clipClamp(const Node &N) {
  auto B = clipBounds(N);
  if (!B) {
    llvm::consumeError(B.takeError()); // verification reports it
    return std::nullopt;
  }
  return *B;
}

constexpr char ReluK[] = "cuvil_k_relu_f32";
constexpr char SigmoidK[] = "cuvil_k_sigmoid_f32";
constexpr char TanhK[] = "cuvil_k_tanh_f32";

} // namespace

extern const OpDef ReluOp = {.Name = "Relu",
                             .Verify = verifyPlain,
                             .Lower = lowerPlain<ReluK>,
                             .Macs = noMacs,
                             .Traits = ElementWise | InPlace,
                             .ActivationClamp = reluClamp,
                             .Shape = shapeSameAsInput};
extern const OpDef SigmoidOp = {.Name = "Sigmoid",
                                .Verify = verifyPlain,
                                .Lower = lowerPlain<SigmoidK>,
                                .Macs = noMacs,
                                .Traits = ElementWise | InPlace,
                                .Shape = shapeSameAsInput};
extern const OpDef TanhOp = {.Name = "Tanh",
                             .Verify = verifyPlain,
                             .Lower = lowerPlain<TanhK>,
                             .Macs = noMacs,
                             .Traits = ElementWise | InPlace,
                             .Shape = shapeSameAsInput};
extern const OpDef ClipOp = {.Name = "Clip",
                             .Verify = verifyClip,
                             .Lower = lowerClip,
                             .Macs = noMacs,
                             .Traits = ElementWise | InPlace,
                             .ActivationClamp = clipClamp,
                             .Shape = shapeSameAsInput,
                             .Attrs = ClipAttrs::Specs};

} // namespace cuvil
