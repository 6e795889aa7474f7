//===- Det.cpp - ONNX Det -------------------------------------------------===//
//
// Determinants of a batch of square float32 matrices [*, M, M] -> [*], by LU
// decomposition with partial pivoting (cuvil_k_det_f32). The kernel works on
// a stack copy of one matrix, so M is at most CUVIL_DET_MAX_N.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/OpRegistry.h"

namespace cuvil {
namespace {

/// cuvil_k_det_f32's stack matrix (CUVIL_DET_MAX_N in kernels.h).
constexpr int64_t DetMaxN = 16;

llvm::Error verifyDetOp(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  const Value *X = N.input(0);
  size_t R = X->rank();
  if (R < 2 || X->shape()[R - 1] != X->shape()[R - 2])
    return nodeError(N, "the input must be [*, M, M]");
  if (X->shape()[R - 1] > DetMaxN)
    return nodeError(N, "matrices of {} x {} are not supported (at most {})",
                     X->shape()[R - 1], X->shape()[R - 1], DetMaxN);
  std::vector<int64_t> Batch(X->shape().begin(), X->shape().end() - 2);
  if (N.output(0)->shape() != Batch)
    return nodeError(N, "output '{}' must have the input's batch shape",
                     N.output(0)->name());
  return llvm::Error::success();
}

llvm::Error lowerDetOp(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *X = N.input(0);
  int64_t M = X->shape().back();
  Calls.push_back(kabi::DetF32{
      .x = X, .y = N.output(0), .batch = N.output(0)->numElements(), .n = M}
                      .call());
  return llvm::Error::success();
}

int64_t macsDet(const Node &N) {
  int64_t M = N.input(0)->shape().back();
  return N.output(0)->numElements() * M * M * M / 3;
}

} // namespace

extern const OpDef DetOp = {"Det", verifyDetOp, lowerDetOp, macsDet, NoTraits};

} // namespace cuvil
