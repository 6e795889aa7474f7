//===- BatchNormalization.cpp - BatchNormalization ------------------------===//
//
// The FoldBatchNorm pass folds an inference BatchNormalization with constant
// parameters (see channelAffine) into the Conv or Gemm that produces its
// input. One it cannot fold is rewritten by that pass into the internal op
// cuvil.ChannelAffine (ChannelAffine.cpp). What the pass leaves alone
// (run-time parameters, training mode) lowers to kernels that read the
// parameters, or compute the batch statistics, at run time.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/nn/AffineFold.h"

#include <cmath>

namespace cuvil {
namespace {

#define BATCH_NORM_ATTRS(X)                                                    \
  X(Epsilon, "epsilon", Float, 1e-5f)                                          \
  X(Momentum, "momentum", Float, 0.9f)                                         \
  X(TrainingMode, "training_mode", Int, 0)
CUVIL_OP_ATTRS(BatchNormAttrs, BATCH_NORM_ATTRS)

bool training(const Node &N) { return BatchNormAttrs(N).TrainingMode != 0; }

llvm::Error verifyBatchNormalizationOp(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  size_t Outs = N.outputs().size();
  if (training(N)) {
    // Y, running_mean, running_var; the importer drops an omitted one and
    // shifts the next, so two outputs are ambiguous.
    if (Outs == 2 || Outs > 3)
      return nodeError(N, "training mode with exactly one of the optional "
                          "running_mean/running_var outputs is not supported "
                          "(only none or both)");
  } else if (Outs > 1) {
    return nodeError(N, "the running mean/variance outputs are not supported "
                        "outside training mode");
  }
  return verifyChannelParams(N, 4);
}

llvm::Error lowerBatchNormalizationOp(const Node &N,
                                      std::vector<KernelCall> &Calls) {
  const Value *X = N.input(0);
  int64_t B = X->shape()[0], C = X->shape()[1];
  int64_t Spatial = X->numElements() / (B * C);
  BatchNormAttrs A(N);
  float Eps = A.Epsilon;
  if (!training(N)) {
    Calls.push_back(kabi::BatchNormF32{.x = X,
                                       .scale = N.input(1),
                                       .bias = N.input(2),
                                       .mean = N.input(3),
                                       .var = N.input(4),
                                       .y = N.output(0),
                                       .n = B,
                                       .c = C,
                                       .spatial = Spatial,
                                       .eps = Eps}
                        .call());
    return llvm::Error::success();
  }
  bool Running = N.outputs().size() == 3;
  Calls.push_back(
      kabi::BatchNormTrainF32{.x = X,
                              .scale = N.input(1),
                              .bias = N.input(2),
                              .mean = N.input(3),
                              .var = N.input(4),
                              .y = N.output(0),
                              .running_mean = Running ? N.output(1) : nullptr,
                              .running_var = Running ? N.output(2) : nullptr,
                              .n = B,
                              .c = C,
                              .spatial = Spatial,
                              .eps = Eps,
                              .momentum = A.Momentum}
          .call());
  return llvm::Error::success();
}

bool isF32Constant(const Value *V, int64_t Count) {
  return V && V->isConstant() && V->dtype() == DType::F32 &&
         V->numElements() == Count;
}

/// Inference mode with constant parameters: y = x * S + T per channel,
/// S = scale / sqrt(var + epsilon), T = B - mean * S.
bool channelAffine(const Node &N, std::vector<float> &S,
                   std::vector<float> &T) {
  const Value *X = N.input(0);
  int64_t C = X->shape()[1];
  const Value *Scale = N.input(1), *Bias = N.input(2), *Mean = N.input(3),
              *Var = N.input(4);
  if (training(N))
    return false;
  for (const Value *P : {Scale, Bias, Mean, Var})
    if (!isF32Constant(P, C))
      return false;
  float Eps = BatchNormAttrs(N).Epsilon;
  S.resize(C);
  T.resize(C);
  for (int64_t I = 0; I < C; ++I) {
    S[I] = Scale->f32()[I] / std::sqrt(Var->f32()[I] + Eps);
    T[I] = Bias->f32()[I] - Mean->f32()[I] * S[I];
  }
  return true;
}

} // namespace

extern const OpDef BatchNormalizationOp = {.Name = "BatchNormalization",
                                           .Verify = verifyBatchNormalizationOp,
                                           .Lower = lowerBatchNormalizationOp,
                                           .Macs = noMacs,
                                           .Traits = InPlace,
                                           .ChannelAffine = channelAffine,
                                           .Attrs = BatchNormAttrs::Specs};

} // namespace cuvil
