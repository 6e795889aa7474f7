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

/// numpy's matmul shape of A x B (batch dimensions broadcast, a 1-D
/// operand's dimension dropped again), for node Nd's errors.
llvm::Expected<std::vector<int64_t>> matmulShape(const Node &Nd, const Value *A,
                                                 const Value *B);

/// OpDef::Shape of a MatMul-family op whose B operand is input BIndex
/// (A is input 0): where ONNX shape inference gave up on a product of
/// operands only folding made static (a transformer's Q x K^T whose
/// Reshape targets come from Shape -> Gather -> Concat chains).
template <size_t BIndex>
llvm::Expected<std::vector<std::vector<int64_t>>> matmulShapes(const Node &Nd) {
  auto S = matmulShape(Nd, Nd.input(0), Nd.input(BIndex));
  if (!S)
    return S.takeError();
  return std::vector<std::vector<int64_t>>{*S};
}

} // namespace cuvil

#endif
