/* Reference element-wise kernels: broadcast binary arithmetic, activations
 * and the per-channel affine of an unfused BatchNormalization. */
#include "cuvil/kernels.h"

#include "../math.h"

enum binary_op {
  BINARY_ADD,
  BINARY_SUB,
  BINARY_MUL,
  BINARY_DIV,
  BINARY_PRELU, /* a < 0 ? b * a : a (b is the slope) */
};

/* y = a op b over the padded output shape s. op is a constant at every call
 * site, so after inlining only one arm of the select remains. */
static inline __attribute__((always_inline)) void
binary(enum binary_op op, const float *a, const float *b, float *y,
       const int64_t *s, const int64_t *as, const int64_t *bs) {
  _Static_assert(CUVIL_MAX_RANK == 6,
                 "the loop nest below spans CUVIL_MAX_RANK dimensions");
  for (int64_t i0 = 0; i0 < s[0]; ++i0)
    for (int64_t i1 = 0; i1 < s[1]; ++i1)
      for (int64_t i2 = 0; i2 < s[2]; ++i2)
        for (int64_t i3 = 0; i3 < s[3]; ++i3)
          for (int64_t i4 = 0; i4 < s[4]; ++i4) {
            const float *ar = a + i0 * as[0] + i1 * as[1] + i2 * as[2] +
                              i3 * as[3] + i4 * as[4];
            const float *br = b + i0 * bs[0] + i1 * bs[1] + i2 * bs[2] +
                              i3 * bs[3] + i4 * bs[4];
            /* y is dense. Indexing it from the loop counters (not a running
             * count) lets LLVM relate its addresses to those of a and b. */
            float *yr =
                y + ((((i0 * s[1] + i1) * s[2] + i2) * s[3] + i3) * s[4] + i4) *
                        s[5];
            for (int64_t i5 = 0; i5 < s[5]; ++i5) {
              const float va = ar[i5 * as[5]];
              const float vb = br[i5 * bs[5]];
              yr[i5] = op == BINARY_ADD   ? va + vb
                       : op == BINARY_SUB ? va - vb
                       : op == BINARY_MUL ? va * vb
                       : op == BINARY_DIV ? va / vb
                                          : (va < 0.0f ? vb * va : va);
            }
          }
}

void cuvil_k_prelu_f32(const float *x, const float *slope, float *y,
                       const int64_t *shape, const int64_t *x_str,
                       const int64_t *slope_str) {
  binary(BINARY_PRELU, x, slope, y, shape, x_str, slope_str);
}

void cuvil_k_add_f32(const float *a, const float *b, float *y,
                     const int64_t *shape, const int64_t *a_str,
                     const int64_t *b_str) {
  binary(BINARY_ADD, a, b, y, shape, a_str, b_str);
}

void cuvil_k_sub_f32(const float *a, const float *b, float *y,
                     const int64_t *shape, const int64_t *a_str,
                     const int64_t *b_str) {
  binary(BINARY_SUB, a, b, y, shape, a_str, b_str);
}

void cuvil_k_mul_f32(const float *a, const float *b, float *y,
                     const int64_t *shape, const int64_t *a_str,
                     const int64_t *b_str) {
  binary(BINARY_MUL, a, b, y, shape, a_str, b_str);
}

void cuvil_k_div_f32(const float *a, const float *b, float *y,
                     const int64_t *shape, const int64_t *a_str,
                     const int64_t *b_str) {
  binary(BINARY_DIV, a, b, y, shape, a_str, b_str);
}

void cuvil_k_relu_f32(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

void cuvil_k_clip_f32(const float *x, float *y, int64_t n, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = cuvil_clampf(x[i], lo, hi);
}

void cuvil_k_sigmoid_f32(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = cuvil_sigmoidf(x[i]);
}

void cuvil_k_tanh_f32(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = cuvil_tanhf(x[i]);
}

void cuvil_k_channel_affine_f32(const float *x, const float *scale,
                                const float *bias, float *y, int64_t n,
                                int64_t c, int64_t hw) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      const float s = scale[ch], t = bias[ch];
      const int64_t base = (b * c + ch) * hw;
      for (int64_t i = 0; i < hw; ++i)
        y[base + i] = x[base + i] * s + t;
    }
}
