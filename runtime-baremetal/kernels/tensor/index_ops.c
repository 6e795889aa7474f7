/* Reference TopK, OneHot, Trilu, EyeLike, ReverseSequence and CumSum
 * kernels. */
#include "cuvil/kernels.h"

typedef uint8_t __attribute__((may_alias)) cuvil_ix8_t;
typedef uint16_t __attribute__((may_alias)) cuvil_ix16_t;
typedef uint32_t __attribute__((may_alias)) cuvil_ix32_t;
typedef uint64_t __attribute__((may_alias)) cuvil_ix64_t;

/* TopK keeps, per lane, the best k elements seen so far in the output itself,
 * best first: a new element goes after every kept one that is at least as
 * good, so equal values stay in index order. O(n * k) per lane, which suits
 * the small k of inference graphs. */
#define CUVIL_TOPK(SFX, T)                                                     \
  void cuvil_k_topk_##SFX(const T *x, T *values, int64_t *indices,             \
                          int64_t outer, int64_t n, int64_t inner, int64_t k,  \
                          int64_t largest) {                                   \
    for (int64_t o = 0; o < outer; ++o)                                        \
      for (int64_t i = 0; i < inner; ++i) {                                    \
        const T *xl = x + o * n * inner + i;                                   \
        T *vl = values + o * k * inner + i;                                    \
        int64_t *il = indices + o * k * inner + i;                             \
        int64_t kept = 0;                                                      \
        for (int64_t j = 0; j < n; ++j) {                                      \
          T v = xl[j * inner];                                                 \
          int64_t p = kept;                                                    \
          while (p > 0 && (largest ? v > vl[(p - 1) * inner]                   \
                                   : v < vl[(p - 1) * inner]))                 \
            --p;                                                               \
          if (p >= k)                                                          \
            continue;                                                          \
          int64_t last = kept < k ? kept : k - 1;                              \
          for (int64_t q = last; q > p; --q) {                                 \
            vl[q * inner] = vl[(q - 1) * inner];                               \
            il[q * inner] = il[(q - 1) * inner];                               \
          }                                                                    \
          vl[p * inner] = v;                                                   \
          il[p * inner] = j;                                                   \
          if (kept < k)                                                        \
            ++kept;                                                            \
        }                                                                      \
      }                                                                        \
  }

CUVIL_TOPK(f32, float)
CUVIL_TOPK(f64, double)
CUVIL_TOPK(i32, int32_t)
CUVIL_TOPK(i64, int64_t)

/* The hot position of a OneHot index, or -1 (all off) when out of range. */
static inline int64_t onehot_int(int64_t v, int64_t depth) {
  if (v < 0)
    v += depth;
  return v >= 0 && v < depth ? v : -1;
}
static inline int64_t onehot_float(double v, int64_t depth) {
  /* Truncated toward zero like a cast to int64; the range test first, so
   * that NaN and huge values never reach the conversion. */
  if (!(v > -(double)depth - 1.0 && v < (double)depth + 1.0))
    return -1;
  return onehot_int((int64_t)v, depth);
}
#define ONEHOT_POS_i32(v, d) onehot_int(v, d)
#define ONEHOT_POS_i64(v, d) onehot_int(v, d)
#define ONEHOT_POS_f32(v, d) onehot_float(v, d)

#define CUVIL_ONEHOT(INAME, ITYPE, BITS)                                       \
  void cuvil_k_onehot_##INAME##_b##BITS(const ITYPE *idx, const void *values,  \
                                        void *y, int64_t outer, int64_t depth, \
                                        int64_t inner) {                       \
    const cuvil_ix##BITS##_t *vs = values;                                     \
    cuvil_ix##BITS##_t off = vs[0], on = vs[1], *yd = y;                       \
    for (int64_t o = 0; o < outer; ++o)                                        \
      for (int64_t i = 0; i < inner; ++i) {                                    \
        int64_t hot = ONEHOT_POS_##INAME(idx[o * inner + i], depth);           \
        cuvil_ix##BITS##_t *yl = yd + o * depth * inner + i;                   \
        for (int64_t d = 0; d < depth; ++d)                                    \
          yl[d * inner] = d == hot ? on : off;                                 \
      }                                                                        \
  }
#define CUVIL_ONEHOT_ALL(INAME, ITYPE)                                         \
  CUVIL_ONEHOT(INAME, ITYPE, 8)                                                \
  CUVIL_ONEHOT(INAME, ITYPE, 16)                                               \
  CUVIL_ONEHOT(INAME, ITYPE, 32)                                               \
  CUVIL_ONEHOT(INAME, ITYPE, 64)
CUVIL_ONEHOT_ALL(i32, int32_t)
CUVIL_ONEHOT_ALL(i64, int64_t)
CUVIL_ONEHOT_ALL(f32, float)

#define CUVIL_MATRIX_FILLS(BITS)                                               \
  void cuvil_k_trilu_b##BITS(const void *x, void *y, const int64_t *k,         \
                             int64_t k_default, int64_t batch, int64_t n,      \
                             int64_t m, int64_t upper) {                       \
    const cuvil_ix##BITS##_t *xs = x;                                          \
    cuvil_ix##BITS##_t *yd = y;                                                \
    int64_t kk = k ? *k : k_default;                                           \
    for (int64_t b = 0; b < batch; ++b)                                        \
      for (int64_t i = 0; i < n; ++i)                                          \
        for (int64_t j = 0; j < m; ++j) {                                      \
          int64_t e = (b * n + i) * m + j;                                     \
          int keep = upper ? j - i >= kk : j - i <= kk;                        \
          yd[e] = keep ? xs[e] : 0;                                            \
        }                                                                      \
  }                                                                            \
  void cuvil_k_eye_b##BITS(void *y, int64_t rows, int64_t cols, int64_t k,     \
                           int64_t one) {                                      \
    cuvil_ix##BITS##_t *yd = y;                                                \
    for (int64_t i = 0; i < rows; ++i)                                         \
      for (int64_t j = 0; j < cols; ++j)                                       \
        yd[i * cols + j] = j - i == k ? (cuvil_ix##BITS##_t)one : 0;           \
  }                                                                            \
  void cuvil_k_reverse_sequence_b##BITS(                                       \
      const void *x, const int64_t *lens, void *y, int64_t batch,              \
      int64_t time, int64_t inner, int64_t batch_str, int64_t time_str) {      \
    const cuvil_ix##BITS##_t *xs = x;                                          \
    cuvil_ix##BITS##_t *yd = y;                                                \
    for (int64_t b = 0; b < batch; ++b) {                                      \
      int64_t len = lens[b];                                                   \
      len = len < 0 ? 0 : len > time ? time : len;                             \
      for (int64_t t = 0; t < time; ++t) {                                     \
        int64_t src = t < len ? len - 1 - t : t;                               \
        const cuvil_ix##BITS##_t *s = xs + b * batch_str + src * time_str;     \
        cuvil_ix##BITS##_t *d = yd + b * batch_str + t * time_str;             \
        for (int64_t e = 0; e < inner; ++e)                                    \
          d[e] = s[e];                                                         \
      }                                                                        \
    }                                                                          \
  }

CUVIL_MATRIX_FILLS(8)
CUVIL_MATRIX_FILLS(16)
CUVIL_MATRIX_FILLS(32)
CUVIL_MATRIX_FILLS(64)

/* CumSum: the axis (possibly read at run time) splits the padded shape into
 * [outer, n, inner]; each lane is summed in the element type, forwards or
 * backwards, with or without the current element. */
#define CUVIL_CUMSUM(SFX, T)                                                   \
  void cuvil_k_cumsum_##SFX(const T *x, T *y, const int64_t *shape,            \
                            int64_t rank, const void *axis,                    \
                            int64_t axis_is_i32, int64_t axis_default,         \
                            int64_t exclusive, int64_t reverse) {              \
    int64_t a = axis ? (axis_is_i32 ? (int64_t)*(const int32_t *)axis          \
                                    : *(const int64_t *)axis)                  \
                     : axis_default;                                           \
    if (a < 0)                                                                 \
      a += rank;                                                               \
    a = a < 0 ? 0 : a >= rank ? rank - 1 : a;                                  \
    a += CUVIL_MAX_RANK - rank;                                                \
    int64_t outer = 1, n = shape[a], inner = 1;                                \
    for (int64_t d = 0; d < a; ++d)                                            \
      outer *= shape[d];                                                       \
    for (int64_t d = a + 1; d < CUVIL_MAX_RANK; ++d)                           \
      inner *= shape[d];                                                       \
    for (int64_t o = 0; o < outer; ++o)                                        \
      for (int64_t i = 0; i < inner; ++i) {                                    \
        const T *xl = x + o * n * inner + i;                                   \
        T *yl = y + o * n * inner + i;                                         \
        T acc = 0;                                                             \
        for (int64_t s = 0; s < n; ++s) {                                      \
          int64_t j = (reverse ? n - 1 - s : s) * inner;                       \
          T v = xl[j];                                                         \
          if (!exclusive)                                                      \
            acc += v;                                                          \
          yl[j] = acc;                                                         \
          if (exclusive)                                                       \
            acc += v;                                                          \
        }                                                                      \
      }                                                                        \
  }

CUVIL_CUMSUM(f32, float)
CUVIL_CUMSUM(f64, double)
CUVIL_CUMSUM(i32, int32_t)
CUVIL_CUMSUM(i64, int64_t)
