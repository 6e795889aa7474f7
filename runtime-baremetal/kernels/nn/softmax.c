/* Reference Softmax, LogSoftmax and Hardmax over the middle axis of
 * [outer, n, inner]. */
#include "cuvil/kernels.h"

#include "../math.h"

void cuvil_k_softmax_f32(const float *x, float *y, int64_t outer, int64_t n,
                         int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      /* The slice x[o, :, j]; its elements are inner apart. */
      const float *xs = x + o * n * inner + j;
      float *ys = y + o * n * inner + j;

      /* Subtracting the maximum keeps every exponential in (0, 1]
       * and the sum in [1, n]: no overflow, no division by zero. */
      float mx = -__builtin_inff();
      for (int64_t i = 0; i < n; ++i)
        mx = xs[i * inner] > mx ? xs[i * inner] : mx;
      /* Separate loops, so the exponentials vectorise apart from the
       * (sequential) float sum. */
      for (int64_t i = 0; i < n; ++i)
        ys[i * inner] = cuvil_expf(xs[i * inner] - mx);
      float sum = 0.0f;
      for (int64_t i = 0; i < n; ++i)
        sum += ys[i * inner];
      const float inv = 1.0f / sum;
      for (int64_t i = 0; i < n; ++i)
        ys[i * inner] *= inv;
    }
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
        sum += cuvil_expf(xs[i * inner] - mx);
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
