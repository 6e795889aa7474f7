//===- PackedGemm.cpp - cuvil.PackedGemm: the register-blocked Gemm -------===//
//
// Internal op (domain "cuvil"): the pack-weights pass makes it of a Gemm
// (or cuvil.FusedGemm) with a constant float32 B, which it stores in panels
// of `panel` output columns (attribute, int; see ops/nn/Packing.h) with
// alpha folded in. Inputs and attributes are the Gemm's, plus the clamp
// bounds clamp_lo / clamp_hi (float) when an activation is fused.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "ops/linalg/Gemm.h"
#include "ops/nn/Packing.h"

namespace cuvil {
namespace {

#define PACKED_GEMM_ATTRS(X) CUVIL_GEMM_ATTRS(X) CUVIL_PANEL_ATTRS(X)
CUVIL_OP_ATTRS(PackedGemmAttrs, PACKED_GEMM_ATTRS)

llvm::Error verifyPackedGemmOp(const Node &N) {
  if (auto E = verifyGemm(N))
    return E;
  if (PackedGemmAttrs(N).Panel <= 0 || !N.input(1)->isConstant())
    return nodeError(N, "internal error: the packed kernel needs a constant B "
                        "in panels");
  return llvm::Error::success();
}

llvm::Error lowerPackedGemmOp(const Node &N, std::vector<KernelCall> &Calls) {
  return lowerGemm(N, /*Packed=*/true, fusedActivation(N), Calls);
}

void split(const Node &N, const std::vector<KernelCall> &Calls, int64_t Parts,
           std::vector<std::vector<KernelCall>> &Shares) {
  splitPackedGemm(N, Calls, PackedGemmAttrs(N).Panel, Parts, Shares);
}

} // namespace

extern const OpDef PackedGemmOp = {.Name = "cuvil.PackedGemm",
                                   .Verify = verifyPackedGemmOp,
                                   .Lower = lowerPackedGemmOp,
                                   .Macs = gemmMacs,
                                   .Traits = NoTraits,
                                   .WithClamp = &PackedGemmOp,
                                   .Split = split,
                                   .Attrs = PackedGemmAttrs::Specs};

} // namespace cuvil
