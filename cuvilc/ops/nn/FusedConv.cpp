//===- FusedConv.cpp - cuvil.FusedConv: Conv with a clamp epilogue --------===//
//
// Internal op (domain "cuvil"): the fuse-activations pass makes it of a
// Conv whose result only a Relu or a constant Clip reads. Inputs and
// attributes are the Conv's, plus the clamp bounds clamp_lo / clamp_hi
// (float); it runs the reference convolution kernels, which clamp each
// result. The pack-weights pass turns it into cuvil.PackedConv or
// cuvil.DepthwiseConv like a Conv.
//
//===----------------------------------------------------------------------===//
#include "ops/nn/Conv.h"
#include "ops/nn/Packing.h"
#include "ops/nn/Spatial.h"

namespace cuvil {
namespace {

llvm::Error verifyFusedConvOp(const Node &N) { return verifyConv(N, 3); }

llvm::Error lowerFusedConvOp(const Node &N, std::vector<KernelCall> &Calls) {
  return lowerConv(N, ConvKernel::Reference, fusedActivation(N), Calls);
}

} // namespace

extern const OpDef FusedConvOp = {.Name = "cuvil.FusedConv",
                                  .Verify = verifyFusedConvOp,
                                  .Lower = lowerFusedConvOp,
                                  .Macs = convMacs,
                                  .Traits = NoTraits,
                                  .PackWeights = packConvWeights,
                                  .WithClamp = &FusedConvOp,
                                  .Attrs = ConvAttrs::Specs};

} // namespace cuvil
