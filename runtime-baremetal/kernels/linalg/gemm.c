/* Reference Gemm and batched MatMul. */
#include <stddef.h>

#include "cuvil/kernels.h"

#include "../math.h"
#include "matmul_batch.h"

void cuvil_k_gemm_f32(const float *a, const float *b, const float *c, float *y,
                      int64_t m, int64_t n, int64_t k, int64_t trans_a,
                      int64_t trans_b, float alpha, float beta, int64_t c_rs,
                      int64_t c_cs, float act_lo, float act_hi) {
  /* Element (i, p) of op(a) is a[i * a_rs + p * a_cs];
   * element (p, j) of op(b) is b[p * b_rs + j * b_cs]. */
  const int64_t a_rs = trans_a ? 1 : k, a_cs = trans_a ? m : 1;
  const int64_t b_rs = trans_b ? 1 : n, b_cs = trans_b ? k : 1;
  /* As in BLAS, beta == 0 means c is not read (it may hold NaN or inf). */
  const int use_c = c != NULL && beta != 0.0f;

  for (int64_t i = 0; i < m; ++i) {
    float *yr = y + i * n;
    /* Each c(i, j) is read just before y(i, j) is first written, so y
     * may alias a dense c. */
    for (int64_t j = 0; j < n; ++j)
      yr[j] = use_c ? beta * c[i * c_rs + j * c_cs] : 0.0f;
    /* k outside, j inside: row i of the product is accumulated without
     * a float reduction, so the j loop vectorises. */
    for (int64_t p = 0; p < k; ++p) {
      const float av = alpha * a[i * a_rs + p * a_cs];
      for (int64_t j = 0; j < n; ++j)
        yr[j] += av * b[p * b_rs + j * b_cs];
    }
    for (int64_t j = 0; j < n; ++j)
      yr[j] = cuvil_clampf(yr[j], act_lo, act_hi);
  }
}

void cuvil_k_matmul_f32(const float *a, const float *b, float *y, int64_t m,
                        int64_t n, int64_t k, const int64_t *batch_shape,
                        const int64_t *a_bstride, const int64_t *b_bstride) {
  for (int64_t i = 0; i < cuvil_matmul_batches(batch_shape); ++i) {
    int64_t ao, bo;
    cuvil_matmul_batch(i, batch_shape, a_bstride, b_bstride, &ao, &bo);
    cuvil_k_gemm_f32(a + ao, b + bo, NULL, y + i * m * n, m, n, k, 0, 0, 1.0f,
                     0.0f, 0, 0, -__builtin_inff(), __builtin_inff());
  }
}
