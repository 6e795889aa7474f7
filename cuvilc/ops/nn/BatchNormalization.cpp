//===- BatchNormalization.cpp - BatchNormalization ------------------------===//
//
// The FoldBatchNorm pass folds an inference BatchNormalization with constant
// parameters into the Conv or Gemm that produces its input. One it cannot
// fold is rewritten by that pass into a per-channel affine (inputs: X,
// scale', bias'; attribute cuvil.affine = 1). What the pass leaves alone
// (run-time parameters, training mode) lowers to kernels that read the
// parameters, or compute the batch statistics, at run time.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/OpRegistry.h"

namespace cuvil {
namespace {

bool training(const Node &N) { return N.getInt("training_mode", 0) != 0; }

llvm::Error verify(const Node &N) {
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
  const Value *X = N.input(0);
  if (!X || X->rank() < 2)
    return nodeError(N, "input must have rank >= 2");
  size_t Params = N.getInt("cuvil.affine", 0) ? 3 : 5;
  for (size_t I = 1; I < Params; ++I) {
    const Value *P = N.input(I);
    if (!P)
      return nodeError(N, "parameter {} is required", I);
    if (P->numElements() != X->shape()[1])
      return nodeError(N, "parameter '{}' has {} elements for {} channels",
                       P->name(), P->numElements(), X->shape()[1]);
  }
  return llvm::Error::success();
}

llvm::Error lower(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *X = N.input(0);
  int64_t B = X->shape()[0], C = X->shape()[1];
  int64_t Spatial = X->numElements() / (B * C);
  if (N.getInt("cuvil.affine", 0)) {
    Calls.push_back(kabi::ChannelAffineF32{.x = X,
                                           .scale = N.input(1),
                                           .bias = N.input(2),
                                           .y = N.output(0),
                                           .n = B,
                                           .c = C,
                                           .hw = Spatial}
                        .call());
    return llvm::Error::success();
  }
  float Eps = N.getFloat("epsilon", 1e-5f);
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
  Calls.push_back(kabi::BatchNormTrainF32{
      .x = X,
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
      .momentum = N.getFloat("momentum", 0.9f)}
                      .call());
  return llvm::Error::success();
}

} // namespace

extern const OpDef BatchNormalizationOp = {"BatchNormalization", verify, lower,
                                           noMacs, Placement::InPlace};

} // namespace cuvil
