//===- FusedGemm.cpp - cuvil.FusedGemm: Gemm with a clamp epilogue --------===//
//
// Internal op (domain "cuvil"): the fuse-activations pass makes it of a
// Gemm whose result only a Relu or a constant Clip reads. Inputs and
// attributes are the Gemm's, plus the clamp bounds clamp_lo / clamp_hi
// (float); the reference kernel clamps each result. The pack-weights pass
// turns it into cuvil.PackedGemm like a Gemm.
//
//===----------------------------------------------------------------------===//
#include "ops/linalg/Gemm.h"
#include "ops/nn/Packing.h"

namespace cuvil {
namespace {

llvm::Error lowerFusedGemmOp(const Node &N, std::vector<KernelCall> &Calls) {
  return lowerGemm(N, /*Packed=*/false, fusedActivation(N), Calls);
}

} // namespace

extern const OpDef FusedGemmOp = {.Name = "cuvil.FusedGemm",
                                  .Verify = verifyGemm,
                                  .Lower = lowerFusedGemmOp,
                                  .Macs = gemmMacs,
                                  .Traits = NoTraits,
                                  .PackWeights = packGemmWeights,
                                  .WithClamp = &FusedGemmOp,
                                  .Attrs = GemmAttrs::Specs};

} // namespace cuvil
