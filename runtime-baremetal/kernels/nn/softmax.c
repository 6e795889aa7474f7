/* Reference Softmax, LogSoftmax and Hardmax over the middle axis of
 * [outer, n, inner]. */
#include "cuvil/kernels.h"

#include "../math.h"
#include "../opt/blocking.h"

/* The largest of scale * xs[i * stride] for i < n. A positive scale keeps
 * the order, and rounding is monotonic, so the largest product is the
 * product of the largest x; otherwise every product is compared. A NaN
 * never wins a compare. */
CUVIL_MATH_INLINE float scaled_max_strided(const float *xs, int64_t n,
                                           int64_t stride, float scale) {
  float mx = -__builtin_inff();
  if (scale > 0.0f) {
    for (int64_t i = 0; i < n; ++i)
      mx = xs[i * stride] > mx ? xs[i * stride] : mx;
    return scale * mx;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float z = scale * xs[i * stride];
    mx = z > mx ? z : mx;
  }
  return mx;
}

/* Rows of n contiguous elements (Softmax over the last axis, as attention's
 * scores are): the max and the sum in CUVIL_VL lanes (opt/blocking.h; one
 * lane on targets without vectors), whose partial results are combined at
 * the end of the row. A single chain of float compares or adds cannot be
 * vectorised without reordering it; the lanes are that reordering. With
 * scale 1 (a constant after inlining) the products fold away. */
CUVIL_MATH_INLINE void softmax_rows(const float *x, float *y, int64_t rows,
                                    int64_t n, float scale) {
  for (int64_t o = 0; o < rows; ++o) {
    const float *xs = x + o * n;
    float *ys = y + o * n;
    float mx;
    if (scale > 0.0f) {
      /* The maximum of x, scaled after (see scaled_max_strided). */
      cuvil_vf vmax = cuvil_vf_splat(-__builtin_inff());
      int64_t i = 0;
      for (; i + CUVIL_VL <= n; i += CUVIL_VL) {
        const cuvil_vf v = cuvil_vf_load(xs + i);
#if CUVIL_VL == 1
        vmax[0] = v[0] > vmax[0] ? v[0] : vmax[0]; /* float compares */
#else
        const cuvil_vi gt = (cuvil_vi)(v > vmax);
        vmax = (cuvil_vf)((gt & (cuvil_vi)v) | (~gt & (cuvil_vi)vmax));
#endif
      }
      mx = -__builtin_inff();
      for (int l = 0; l < CUVIL_VL; ++l)
        mx = vmax[l] > mx ? vmax[l] : mx;
      for (; i < n; ++i)
        mx = xs[i] > mx ? xs[i] : mx;
      mx = scale * mx;
    } else {
      mx = scaled_max_strided(xs, n, 1, scale);
    }
#if CUVIL_VL == 1
    /* One lane: the sum in the same order as below, without reading the
     * exponentials back. */
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      const float z = scale * xs[i]; /* rounded, as a Mul node rounds */
      ys[i] = cuvil_expf_nonpos(z - mx);
      sum += ys[i];
    }
#else
    for (int64_t i = 0; i < n; ++i) {
      const float z = scale * xs[i];
      ys[i] = cuvil_expf_nonpos(z - mx);
    }
    cuvil_vf vsum = cuvil_vf_splat(0.0f);
    int64_t i = 0;
    for (; i + CUVIL_VL <= n; i += CUVIL_VL)
      vsum += cuvil_vf_load(ys + i);
    float sum = 0.0f;
    for (int l = 0; l < CUVIL_VL; ++l)
      sum += vsum[l];
    for (; i < n; ++i)
      sum += ys[i];
#endif
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < n; ++i)
      ys[i] *= inv;
  }
}

CUVIL_MATH_INLINE void softmax(const float *x, float *y, int64_t outer,
                               int64_t n, int64_t inner, float scale) {
  if (inner == 1) {
    softmax_rows(x, y, outer, n, scale);
    return;
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      /* The slice x[o, :, j]; its elements are inner apart. */
      const float *xs = x + o * n * inner + j;
      float *ys = y + o * n * inner + j;

      /* Subtracting the maximum keeps every exponential in (0, 1]
       * and the sum in [1, n]: no overflow, no division by zero. */
      const float mx = scaled_max_strided(xs, n, inner, scale);
      /* Separate loops, so the exponentials vectorise apart from the
       * (sequential) float sum. */
      for (int64_t i = 0; i < n; ++i) {
        const float z = scale * xs[i * inner];
        ys[i * inner] = cuvil_expf_nonpos(z - mx);
      }
      float sum = 0.0f;
      for (int64_t i = 0; i < n; ++i)
        sum += ys[i * inner];
      const float inv = 1.0f / sum;
      for (int64_t i = 0; i < n; ++i)
        ys[i * inner] *= inv;
    }
}

void cuvil_k_softmax_f32(const float *x, float *y, int64_t outer, int64_t n,
                         int64_t inner) {
  softmax(x, y, outer, n, inner, 1.0f);
}

void cuvil_k_softmax_scaled_f32(const float *x, float *y, int64_t outer,
                                int64_t n, int64_t inner, float scale) {
  softmax(x, y, outer, n, inner, scale);
}

/* LogSoftmax: x - max - log(sum(exp(x - max))) over the middle axis. */
void cuvil_k_logsoftmax_f32(const float *x, float *y, int64_t outer, int64_t n,
                            int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      const float *xs = x + o * n * inner + j;
      float *ys = y + o * n * inner + j;
      float mx = -__builtin_inff();
      for (int64_t i = 0; i < n; ++i)
        mx = xs[i * inner] > mx ? xs[i * inner] : mx;
      float sum = 0.0f;
      for (int64_t i = 0; i < n; ++i)
        sum += cuvil_expf_nonpos(xs[i * inner] - mx);
      const float shift = mx + cuvil_logf(sum);
      for (int64_t i = 0; i < n; ++i)
        ys[i * inner] = xs[i * inner] - shift;
    }
}

/* Hardmax: 1 at the first maximum of the middle axis, 0 elsewhere. */
void cuvil_k_hardmax_f32(const float *x, float *y, int64_t outer, int64_t n,
                         int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      const float *xs = x + o * n * inner + j;
      float *ys = y + o * n * inner + j;
      int64_t at = 0;
      for (int64_t i = 1; i < n; ++i)
        at = xs[i * inner] > xs[at * inner] ? i : at;
      for (int64_t i = 0; i < n; ++i)
        ys[i * inner] = i == at ? 1.0f : 0.0f;
    }
}
