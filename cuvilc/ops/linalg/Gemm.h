//===- Gemm.h - Gemm and its internal forms share one lowering --*- C++ -*-===//
//
// ONNX Gemm and the internal ops the passes make of it (cuvil.FusedGemm,
// cuvil.PackedGemm) have the same inputs and attributes; they differ in the
// kernel they call and its epilogue.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_LINALG_GEMM_H
#define CUVIL_OPS_LINALG_GEMM_H

#include "ops/Attrs.h"
#include "ops/OpRegistry.h"

namespace cuvil {

/// The attributes of Gemm and of its internal forms.
#define CUVIL_GEMM_ATTRS(X)                                                    \
  X(TransA, "transA", Int, 0)                                                  \
  X(TransB, "transB", Int, 0)                                                  \
  X(Alpha, "alpha", Float, 1.0f)                                               \
  X(Beta, "beta", Float, 1.0f)
CUVIL_OP_ATTRS(GemmAttrs, CUVIL_GEMM_ATTRS)

/// Checks the operands' shapes (the ONNX Gemm's rules).
llvm::Error verifyGemm(const Node &N);
/// Appends the call of the reference kernel, or of the packed one (B packed
/// by the pack-weights pass, alpha folded into it), with the clamp epilogue
/// Clamp.
llvm::Error lowerGemm(const Node &N, bool Packed, std::pair<float, float> Clamp,
                      std::vector<KernelCall> &Calls);
int64_t gemmMacs(const Node &N);
/// OpDef::Split of the packed Gemm (GemmShares.cpp): ranges of whole
/// panels (Panel columns each) of the output columns, or of its rows.
void splitPackedGemm(const Node &N, const std::vector<KernelCall> &Calls,
                     int64_t Panel, int64_t Parts,
                     std::vector<std::vector<KernelCall>> &Shares);

} // namespace cuvil

#endif
