//===- MatMulShape.h - numpy matmul shapes for the MatMul family -*- C++
//-*-===//
//
// MatMul, MatMulInteger and QLinearMatMul share numpy's matmul semantics
// (1-D operands promoted to matrices, batch dimensions broadcast); this is
// the one place that turns two operand shapes into kernel arguments.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_MATMULSHAPE_H
#define CUVIL_OPS_MATMULSHAPE_H

#include "ir/Graph.h"

#include <llvm/Support/Error.h>
#include <vector>

namespace cuvil {

/// The [M, K] x [K, N] product and its batch broadcast, in the form the
/// batched matmul kernels take.
struct MatMulDims {
  int64_t M, N, K;
  std::vector<int64_t> Batch, AStride, BStride; // CUVIL_MATMUL_BATCH_RANK each
};

/// Dimensions of A x B for node Nd; rejects shapes that do not multiply or
/// broadcast, or have more batch dimensions than the kernels take.
llvm::Expected<MatMulDims> matmulDims(const Node &Nd, const Value *A,
                                      const Value *B);

} // namespace cuvil

#endif
