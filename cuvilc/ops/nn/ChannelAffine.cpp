//===- ChannelAffine.cpp - cuvil.ChannelAffine: y = x * s[c] + t[c] -------===//
//
// Internal op (domain "cuvil"): the fold-batchnorm pass makes it of an
// inference BatchNormalization with constant parameters that it cannot fold
// into the producer of its input. Inputs: X (rank >= 2, channels on axis
// 1), the per-channel scale s and shift t (precomputed constants).
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/OpRegistry.h"
#include "ops/nn/AffineFold.h"

namespace cuvil {
namespace {

llvm::Error verifyChannelAffineOp(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  if (N.numInputs() != 3 || N.outputs().size() != 1)
    return nodeError(N, "takes X, scale and shift and gives one output");
  return verifyChannelParams(N, 2);
}

llvm::Error lowerChannelAffineOp(const Node &N,
                                 std::vector<KernelCall> &Calls) {
  const Value *X = N.input(0);
  int64_t B = X->shape()[0], C = X->shape()[1];
  int64_t Spatial = X->numElements() / (B * C);
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

} // namespace

extern const OpDef ChannelAffineOp = {.Name = "cuvil.ChannelAffine",
                                      .Verify = verifyChannelAffineOp,
                                      .Lower = lowerChannelAffineOp,
                                      .Macs = noMacs,
                                      .Traits = InPlace};

} // namespace cuvil
