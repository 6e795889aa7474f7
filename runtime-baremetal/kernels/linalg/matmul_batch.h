/* The batch iteration shared by the batched MatMul kernels (the reference
 * one in gemm.c, the register-blocked one in opt/gemm.c): batch i,
 * row-major over batch_shape's CUVIL_MATMUL_BATCH_RANK dimensions, starts
 * at float offset *ao of A and *bo of B (a stride of 0 broadcasts). */
#ifndef CUVIL_KERNELS_LINALG_MATMUL_BATCH_H
#define CUVIL_KERNELS_LINALG_MATMUL_BATCH_H

#include "cuvil/kernels.h"

static inline __attribute__((always_inline)) int64_t
cuvil_matmul_batches(const int64_t *shape) {
  int64_t count = 1;
  for (int d = 0; d < CUVIL_MATMUL_BATCH_RANK; ++d)
    count *= shape[d];
  return count;
}

static inline __attribute__((always_inline)) void
cuvil_matmul_batch(int64_t i, const int64_t *shape, const int64_t *a_bstride,
                   const int64_t *b_bstride, int64_t *ao, int64_t *bo) {
  int64_t a = 0, b = 0;
  for (int d = CUVIL_MATMUL_BATCH_RANK - 1; d >= 0; --d) {
    const int64_t x = i % shape[d];
    i /= shape[d];
    a += x * a_bstride[d];
    b += x * b_bstride[d];
  }
  *ao = a;
  *bo = b;
}

#endif /* CUVIL_KERNELS_LINALG_MATMUL_BATCH_H */
