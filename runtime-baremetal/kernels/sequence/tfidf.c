/* Reference TfIdfVectorizer kernels: n-gram counting over integer tokens
 * with the pool of n-grams given as constant arrays. */
#include "cuvil/kernels.h"

#include "../math.h"

/* Counts, per row, every n-gram of the pool (n in min_n..max_n) whose tokens
 * x[i], x[i + gap], ... x[i + (n - 1) gap] match, gap = 1 .. max_skip + 1. */
#define CUVIL_TFIDF_KERNEL(T, name)                                            \
  void cuvil_k_tfidf_##name(const T *x, float *y, int64_t rows, int64_t len,   \
                            int64_t min_n, int64_t max_n, int64_t max_skip,    \
                            int64_t mode, const int64_t *level_start,          \
                            const int64_t *level_first, const int64_t *pool,   \
                            const int64_t *out_index, int64_t n_out,           \
                            const int64_t *weight_bits) {                      \
    for (int64_t r = 0; r < rows; ++r) {                                       \
      const T *xr = x + r * len;                                               \
      float *yr = y + r * n_out;                                               \
      for (int64_t o = 0; o < n_out; ++o)                                      \
        yr[o] = 0.0f;                                                          \
      for (int64_t i = 0; i < len; ++i)                                        \
        for (int64_t n = min_n; n <= max_n; ++n) {                             \
          /* Unigrams have no gaps: count them once, not once per skip. */     \
          const int64_t skips = n == 1 ? 0 : max_skip;                         \
          const int64_t p0 = level_start[n - 1], p1 = level_start[n];          \
          for (int64_t s = 0; s <= skips; ++s) {                               \
            const int64_t gap = s + 1;                                         \
            if (i + (n - 1) * gap >= len)                                      \
              break;                                                           \
            for (int64_t p = p0; p + n <= p1; p += n) {                        \
              int64_t t = 0;                                                   \
              while (t < n && (int64_t)xr[i + t * gap] == pool[p + t])         \
                ++t;                                                           \
              if (t == n) {                                                    \
                yr[out_index[level_first[n - 1] + (p - p0) / n]] += 1.0f;      \
                break;                                                         \
              }                                                                \
            }                                                                  \
          }                                                                    \
        }                                                                      \
      /* mode 0: TF (counts); 1: IDF (weight where present); 2: TFIDF. */      \
      for (int64_t o = 0; o < n_out && mode != 0; ++o) {                       \
        const float w = weight_bits                                            \
                            ? cuvil_f32_from_bits((uint32_t)weight_bits[o])    \
                            : 1.0f;                                            \
        if (mode == 1)                                                         \
          yr[o] = yr[o] > 0.0f ? w : 0.0f;                                     \
        else if (mode == 2)                                                    \
          yr[o] *= w;                                                          \
      }                                                                        \
    }                                                                          \
  }

CUVIL_TFIDF_KERNEL(int32_t, i32)
CUVIL_TFIDF_KERNEL(int64_t, i64)
