//===- DepthwiseConv.cpp - cuvil.DepthwiseConv: one filter per channel ----===//
//
// Internal op (domain "cuvil"): the pack-weights pass makes it of a 1-D or
// 2-D Conv (or cuvil.FusedConv) with group = C = M and weights [C, 1, ...],
// for the target's depthwise kernel. Inputs and attributes are the Conv's,
// plus the clamp bounds clamp_lo / clamp_hi (float) when an activation is
// fused.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "ops/nn/Conv.h"
#include "ops/nn/Spatial.h"

namespace cuvil {
namespace {

llvm::Error verifyDepthwiseConvOp(const Node &N) {
  if (auto E = verifyConv(N, 3))
    return E;
  const Value *W = N.input(1);
  int64_t Group = ConvAttrs(N).Group;
  if (W->rank() < 3 || W->rank() > 4 || Group != W->shape()[0] ||
      W->shape()[1] != 1 || Group != N.input(0)->shape()[1])
    return nodeError(N, "internal error: the depthwise kernel needs a 1-D or "
                        "2-D convolution with one filter per channel");
  return llvm::Error::success();
}

llvm::Error lowerDepthwiseConvOp(const Node &N,
                                 std::vector<KernelCall> &Calls) {
  return lowerConv(N, ConvKernel::Depthwise, fusedActivation(N), Calls);
}

} // namespace

extern const OpDef DepthwiseConvOp = {.Name = "cuvil.DepthwiseConv",
                                      .Verify = verifyDepthwiseConvOp,
                                      .Lower = lowerDepthwiseConvOp,
                                      .Macs = convMacs,
                                      .Traits = NoTraits,
                                      .WithClamp = &DepthwiseConvOp,
                                      .Split = splitDepthwiseConv,
                                      .Attrs = ConvAttrs::Specs};

} // namespace cuvil
