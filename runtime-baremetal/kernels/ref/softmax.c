/* Reference Softmax over the middle axis of [outer, n, inner]. */
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
