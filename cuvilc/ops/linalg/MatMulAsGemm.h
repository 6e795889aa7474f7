//===- MatMulAsGemm.h - MatMul by a constant matrix as a Gemm --*- C++ -*-===//
#ifndef CUVIL_OPS_LINALG_MATMULASGEMM_H
#define CUVIL_OPS_LINALG_MATMULASGEMM_H

#include "ir/Graph.h"

namespace cuvil {

/// MatMul's Rewrite hook: x [..., M, K] times a constant float matrix
/// [K, N] becomes a Gemm of x's rows between Reshapes (views), taking an
/// Add of a bias along the last axis as its C (see MatMulAsGemm.cpp).
/// Returns the node that computes the result, or null when N keeps its
/// form.
Node *rewriteMatMulAsGemm(Graph &G, Node &N);

} // namespace cuvil

#endif
