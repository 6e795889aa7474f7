//===- PackedConv.cpp - cuvil.PackedConv: the register-blocked Conv -------===//
//
// Internal op (domain "cuvil"): the pack-weights pass makes it of a 1-D or
// 2-D Conv (or cuvil.FusedConv) with group 1 and constant weights, which it
// stores in panels of `panel` output channels (attribute, int; see
// Packing.h). Inputs are the Conv's, plus an optional input 3 from the
// fuse-residual pass: the other operand of an Add of the result, which the
// kernel adds before the clamp epilogue (attributes clamp_lo / clamp_hi,
// float, when an activation is fused).
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "ops/nn/Conv.h"
#include "ops/nn/Packing.h"
#include "ops/nn/Spatial.h"

namespace cuvil {
namespace {

#define PACKED_CONV_ATTRS(X) CUVIL_CONV_ATTRS(X) CUVIL_PANEL_ATTRS(X)
CUVIL_OP_ATTRS(PackedConvAttrs, PACKED_CONV_ATTRS)

llvm::Error verifyPackedConvOp(const Node &N) {
  if (auto E = verifyConv(N, 4))
    return E;
  const Value *W = N.input(1);
  PackedConvAttrs A(N);
  if (W->rank() < 3 || W->rank() > 4 || A.Group != 1 || A.Panel <= 0)
    return nodeError(N, "internal error: the packed kernel needs a 1-D or "
                        "2-D group-1 convolution with weights in panels");
  if (const Value *R = N.input(3))
    if (R->dtype() != DType::F32 || R->shape() != N.output(0)->shape())
      return nodeError(N,
                       "internal error: the fused residual '{}' must be "
                       "f32 shaped like the output",
                       R->name());
  return llvm::Error::success();
}

llvm::Error lowerPackedConvOp(const Node &N, std::vector<KernelCall> &Calls) {
  return lowerConv(N, ConvKernel::Packed, fusedActivation(N), Calls);
}

void split(const Node &N, const std::vector<KernelCall> &Calls, int64_t Parts,
           std::vector<std::vector<KernelCall>> &Shares) {
  splitPackedConv(N, Calls, PackedConvAttrs(N).Panel, Parts, Shares);
}

} // namespace

extern const OpDef PackedConvOp = {.Name = "cuvil.PackedConv",
                                   .Verify = verifyPackedConvOp,
                                   .Lower = lowerPackedConvOp,
                                   .Macs = convMacs,
                                   .Traits = NoTraits,
                                   .WithClamp = &PackedConvOp,
                                   .TakesResidual = true,
                                   .Split = split,
                                   .Attrs = PackedConvAttrs::Specs};

} // namespace cuvil
