//===- Losses.cpp - NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ----===//
//
// Both see their input as [N, C, D]: the classes on axis 1 and every
// trailing dimension (d1..dk) flattened into D, the target as [N, D]. Each
// lowers to one kernel call (losses.c), which reads targets at run time and
// treats a target outside [0, C) that is not ignore_index as ignored rather
// than reading out of bounds (ONNX leaves that case undefined).
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

// ignore_index has no neutral value: whether it is given matters.
#define LOSS_ATTRS(X)                                                          \
  X(Reduction, "reduction", String, "mean")                                    \
  X(IgnoreIndex, "ignore_index", Int, 0)
CUVIL_OP_ATTRS(LossAttrs, LOSS_ATTRS)

struct LossShape {
  int64_t N = 1, C = 1, D = 1;
  int64_t Reduction = CUVIL_LOSS_MEAN;
};

llvm::Expected<LossShape> lossShape(const Node &Nd) {
  const Value *X = Nd.input(0), *T = Nd.input(1), *W = Nd.input(2);
  if (!X || !T)
    return nodeError(Nd, "needs the input and the target");
  if (X->dtype() != DType::F32)
    return nodeError(Nd,
                     "input '{}' has element type {}; only f32 is "
                     "supported",
                     X->name(), dtypeName(X->dtype()));
  if (T->dtype() != DType::I32 && T->dtype() != DType::I64)
    return nodeError(Nd, "target '{}' must be i32 or i64, not {}", T->name(),
                     dtypeName(T->dtype()));
  if (X->rank() < 2)
    return nodeError(Nd, "input '{}' must have rank >= 2 ([N, C, ...])",
                     X->name());
  LossShape S;
  const auto &XS = X->shape();
  S.N = XS[0];
  S.C = XS[1];
  for (size_t I = 2; I < XS.size(); ++I)
    S.D *= XS[I];
  // The target is the input's shape without the class axis.
  std::vector<int64_t> Want = XS;
  Want.erase(Want.begin() + 1);
  if (T->shape() != Want)
    return nodeError(Nd,
                     "target '{}' must have the input's shape without "
                     "axis 1",
                     T->name());
  if (W &&
      (W->dtype() != DType::F32 || W->numElements() != S.C || W->rank() != 1))
    return nodeError(Nd, "weight '{}' must be an f32 tensor of {} elements",
                     W->name(), S.C);
  LossAttrs A(Nd);
  const std::string &R = A.Reduction;
  if (R == "none")
    S.Reduction = CUVIL_LOSS_NONE;
  else if (R == "sum")
    S.Reduction = CUVIL_LOSS_SUM;
  else if (R != "mean")
    return nodeError(Nd, "reduction '{}' is not one of none, sum, mean", R);
  const Value *Y = Nd.output(0);
  int64_t Count = S.Reduction == CUVIL_LOSS_NONE ? S.N * S.D : 1;
  if (Y->dtype() != DType::F32 || Y->numElements() != Count)
    return nodeError(Nd, "output '{}' must be f32 with {} elements", Y->name(),
                     Count);
  return S;
}

template <bool Softmax> llvm::Error verifyLossesOp(const Node &N) {
  if (N.outputs().size() > (Softmax ? 2 : 1))
    return nodeError(N, "has too many outputs");
  if (Softmax && N.outputs().size() == 2) {
    const Value *X = N.input(0), *LP = N.output(1);
    if (X && (LP->dtype() != X->dtype() || LP->shape() != X->shape()))
      return nodeError(N,
                       "log_prob output '{}' must have the input's shape "
                       "and type",
                       LP->name());
  }
  return lossShape(N).takeError();
}

template <bool Softmax>
llvm::Error lowerLossesOp(const Node &N, std::vector<KernelCall> &Calls) {
  auto S = lossShape(N);
  if (!S)
    return S.takeError();
  const Value *T = N.input(1), *W = N.input(2);
  std::string Kernel = fmt::format(
      "cuvil_k_{}_loss_f32_{}", Softmax ? "sce" : "nll", dtypeName(T->dtype()));
  bool HasIgnore = N.hasAttr("ignore_index");
  int64_t Ignore = HasIgnore ? LossAttrs(N).IgnoreIndex : int64_t(0);
  // The parameters the two kernels share.
  auto Common = [&](auto K) {
    K.x = N.input(0);
    K.t = T;
    K.w = W;
    K.y = N.output(0);
    K.n = S->N;
    K.c = S->C;
    K.d = S->D;
    K.reduction = S->Reduction;
    K.ignore_index = Ignore;
    K.has_ignore = HasIgnore;
    return K.call();
  };
  if (Softmax)
    Calls.push_back(Common(kabi::SceLossF32Group{
        .Kernel = Kernel,
        .log_prob = N.outputs().size() == 2 ? N.output(1) : nullptr}));
  else
    Calls.push_back(Common(kabi::NllLossF32Group{.Kernel = Kernel}));
  return llvm::Error::success();
}

} // namespace

extern const OpDef NegativeLogLikelihoodLossOp = {
    .Name = "NegativeLogLikelihoodLoss",
    .Verify = verifyLossesOp<false>,
    .Lower = lowerLossesOp<false>,
    .Macs = noMacs,
    .Traits = NoTraits,
    .Attrs = LossAttrs::Specs};
extern const OpDef SoftmaxCrossEntropyLossOp = {.Name =
                                                    "SoftmaxCrossEntropyLoss",
                                                .Verify = verifyLossesOp<true>,
                                                .Lower = lowerLossesOp<true>,
                                                .Macs = noMacs,
                                                .Traits = NoTraits,
                                                .Attrs = LossAttrs::Specs};

} // namespace cuvil
