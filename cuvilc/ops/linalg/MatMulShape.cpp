//===- MatMulShape.cpp ----------------------------------------------------===//
#include "ops/linalg/MatMulShape.h"

#include "ir/Diagnostic.h"

#include <cuvil/kernels.h>

namespace cuvil {

llvm::Expected<MatMulDims> matmulDims(const Node &Nd, const Value *A,
                                      const Value *B) {
  if (!A || !B || A->rank() == 0 || B->rank() == 0)
    return nodeError(Nd, "MatMul needs two inputs of rank >= 1");
  // numpy semantics: a 1-D A is a row vector, a 1-D B a column vector.
  std::vector<int64_t> SA = A->shape(), SB = B->shape();
  if (SA.size() == 1)
    SA.insert(SA.begin(), 1);
  if (SB.size() == 1)
    SB.push_back(1);
  MatMulDims D;
  D.M = SA[SA.size() - 2];
  D.K = SA[SA.size() - 1];
  D.N = SB[SB.size() - 1];
  if (SB[SB.size() - 2] != D.K)
    return nodeError(Nd, "inner dimensions differ: {} vs {}", D.K,
                     SB[SB.size() - 2]);
  size_t BR = std::max(SA.size(), SB.size()) - 2;
  if (BR > CUVIL_MATMUL_BATCH_RANK)
    return nodeError(Nd, "{} batch dimensions; at most {} are supported", BR,
                     CUVIL_MATMUL_BATCH_RANK);
  D.Batch.assign(CUVIL_MATMUL_BATCH_RANK, 1);
  D.AStride.assign(CUVIL_MATMUL_BATCH_RANK, 0);
  D.BStride.assign(CUVIL_MATMUL_BATCH_RANK, 0);
  // Walk batch dimensions from the innermost outwards.
  auto Fill = [&](const std::vector<int64_t> &S, std::vector<int64_t> &Str,
                  int64_t Matrix) -> llvm::Error {
    int64_t Stride = Matrix;
    size_t NB = S.size() - 2;
    for (size_t I = 0; I < NB; ++I) {
      int64_t Dim = S[NB - 1 - I];
      size_t Slot = CUVIL_MATMUL_BATCH_RANK - 1 - I;
      if (Dim != 1 && D.Batch[Slot] != 1 && D.Batch[Slot] != Dim)
        return nodeError(Nd, "batch dimensions {} and {} do not broadcast", Dim,
                         D.Batch[Slot]);
      if (Dim != 1) {
        D.Batch[Slot] = Dim;
        Str[Slot] = Stride;
      }
      Stride *= Dim;
    }
    return llvm::Error::success();
  };
  if (auto E = Fill(SA, D.AStride, D.M * D.K))
    return E;
  if (auto E = Fill(SB, D.BStride, D.K * D.N))
    return E;
  return D;
}

llvm::Expected<std::vector<int64_t>> matmulShape(const Node &Nd, const Value *A,
                                                 const Value *B) {
  auto D = matmulDims(Nd, A, B);
  if (!D)
    return D.takeError();
  // Batch dimensions: the broadcast of both operands' leading ones, as
  // many as the longer has (matmulDims has checked they broadcast).
  size_t BR = std::max(A->rank(), B->rank());
  BR = BR >= 2 ? BR - 2 : 0;
  std::vector<int64_t> Y(D->Batch.end() - static_cast<std::ptrdiff_t>(BR),
                         D->Batch.end());
  if (A->rank() > 1)
    Y.push_back(D->M);
  if (B->rank() > 1)
    Y.push_back(D->N);
  return Y;
}

} // namespace cuvil
