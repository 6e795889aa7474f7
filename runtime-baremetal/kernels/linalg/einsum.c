/* Einsum: the general strided contraction of up to CUVIL_EINSUM_MAX_INPUTS
 * operands, and the batched matrix product with transposed operands that
 * matrix-product equations lower to (cuvil_k_gemm_f32 per matrix). */
#include <stddef.h>

#include "cuvil/kernels.h"

/* Advances the odometer idx over labels [lo, hi) (the last fastest) and the
 * operands' element offsets off[] with it; wraps to all zeros after the
 * last position. */
static inline void cuvil_einsum_step(int64_t *idx, int64_t *off,
                                     int64_t n_inputs, int64_t lo, int64_t hi,
                                     const int64_t *extent,
                                     const int64_t *strides) {
  for (int64_t l = hi; l-- > lo;) {
    ++idx[l];
    for (int64_t p = 0; p < n_inputs; ++p)
      off[p] += strides[p * CUVIL_EINSUM_MAX_LABELS + l];
    if (idx[l] < extent[l])
      return;
    for (int64_t p = 0; p < n_inputs; ++p)
      off[p] -= extent[l] * strides[p * CUVIL_EINSUM_MAX_LABELS + l];
    idx[l] = 0;
  }
}

/* The output labels' odometer walks y in order; for each output element the
 * summed labels but the last run as a second odometer, and the last summed
 * label (if any) as the innermost loop. Operands are indexed, never offset
 * as pointers: an absent operand is NULL and never read. */
#define CUVIL_DEFINE_EINSUM(SFX, T)                                            \
  void cuvil_k_einsum_##SFX(const T *x0, const T *x1, const T *x2,             \
                            const T *x3, T *y, int64_t n_inputs,               \
                            int64_t n_out, int64_t n_labels,                   \
                            const int64_t *extent, const int64_t *strides) {   \
    const int64_t inner = n_labels > n_out ? n_labels - 1 : -1;                \
    const int64_t inner_n = inner >= 0 ? extent[inner] : 1;                    \
    int64_t s[CUVIL_EINSUM_MAX_INPUTS] = {0};                                  \
    for (int64_t p = 0; inner >= 0 && p < n_inputs; ++p)                       \
      s[p] = strides[p * CUVIL_EINSUM_MAX_LABELS + inner];                     \
    const int64_t sum_hi = inner >= 0 ? inner : n_out;                         \
    int64_t outs = 1, sums = 1;                                                \
    for (int64_t l = 0; l < n_out; ++l)                                        \
      outs *= extent[l];                                                       \
    for (int64_t l = n_out; l < sum_hi; ++l)                                   \
      sums *= extent[l];                                                       \
    int64_t idx[CUVIL_EINSUM_MAX_LABELS] = {0};                                \
    int64_t off[CUVIL_EINSUM_MAX_INPUTS] = {0};                                \
    for (int64_t o = 0; o < outs; ++o) {                                       \
      int64_t at[CUVIL_EINSUM_MAX_INPUTS];                                     \
      for (int64_t p = 0; p < CUVIL_EINSUM_MAX_INPUTS; ++p)                    \
        at[p] = off[p];                                                        \
      T acc = 0;                                                               \
      for (int64_t r = 0; r < sums; ++r) {                                     \
        for (int64_t i = 0; i < inner_n; ++i) {                                \
          T prod = x0[at[0] + i * s[0]];                                       \
          if (n_inputs > 1)                                                    \
            prod *= x1[at[1] + i * s[1]];                                      \
          if (n_inputs > 2)                                                    \
            prod *= x2[at[2] + i * s[2]];                                      \
          if (n_inputs > 3)                                                    \
            prod *= x3[at[3] + i * s[3]];                                      \
          acc += prod;                                                         \
        }                                                                      \
        cuvil_einsum_step(idx, at, n_inputs, n_out, sum_hi, extent, strides);  \
      }                                                                        \
      y[o] = acc;                                                              \
      cuvil_einsum_step(idx, off, n_inputs, 0, n_out, extent, strides);        \
    }                                                                          \
  }

CUVIL_DEFINE_EINSUM(f32, float)
CUVIL_DEFINE_EINSUM(f64, double)

void cuvil_k_einsum_bmm_f32(const float *a, const float *b, float *y, int64_t m,
                            int64_t n, int64_t k, int64_t trans_a,
                            int64_t trans_b, const int64_t *batch_shape,
                            const int64_t *a_bstride,
                            const int64_t *b_bstride) {
  int64_t count = 1;
  for (int d = 0; d < CUVIL_MATMUL_BATCH_RANK; ++d)
    count *= batch_shape[d];
  for (int64_t t = 0; t < count; ++t) {
    /* t's batch index, the last dimension fastest. */
    int64_t rest = t, ao = 0, bo = 0;
    for (int d = CUVIL_MATMUL_BATCH_RANK; d-- > 0;) {
      const int64_t i = rest % batch_shape[d];
      rest /= batch_shape[d];
      ao += i * a_bstride[d];
      bo += i * b_bstride[d];
    }
    cuvil_k_gemm_f32(a + ao, b + bo, NULL, y + t * m * n, m, n, k, trans_a,
                     trans_b, 1.0f, 0.0f, 0, 0, -__builtin_inff(),
                     __builtin_inff());
  }
}
