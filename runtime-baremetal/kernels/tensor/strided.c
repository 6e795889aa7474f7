/* Reference strided copies, fills and gathers: the kernels of Slice, Expand,
 * Tile, Pad, Split and Gather, for elements of 1, 2, 4 or 8 bytes. */
#include "cuvil/kernels.h"

/* may_alias: after inlining, these accesses sit next to typed accesses of
 * the kernels that produce and consume the data (see transform.c). */
typedef uint8_t __attribute__((may_alias)) cuvil_sb8_t;
typedef uint16_t __attribute__((may_alias)) cuvil_sb16_t;
typedef uint32_t __attribute__((may_alias)) cuvil_sb32_t;
typedef uint64_t __attribute__((may_alias)) cuvil_sb64_t;

_Static_assert(CUVIL_MAX_RANK == 6,
               "the loop nests below span CUVIL_MAX_RANK dimensions");

#define CUVIL_STRIDED(BITS)                                                    \
  void cuvil_k_strided_copy_b##BITS(                                           \
      const void *x, void *y, const int64_t *shape, const int64_t *x_str,      \
      const int64_t *y_str) {                                                  \
    const cuvil_sb##BITS##_t *xs = x;                                          \
    cuvil_sb##BITS##_t *yd = y;                                                \
    const int64_t *s = shape, *a = x_str, *b = y_str;                          \
    for (int64_t i0 = 0; i0 < s[0]; ++i0)                                      \
      for (int64_t i1 = 0; i1 < s[1]; ++i1)                                    \
        for (int64_t i2 = 0; i2 < s[2]; ++i2)                                  \
          for (int64_t i3 = 0; i3 < s[3]; ++i3)                                \
            for (int64_t i4 = 0; i4 < s[4]; ++i4) {                            \
              const cuvil_sb##BITS##_t *xr = xs + i0 * a[0] + i1 * a[1] +      \
                                             i2 * a[2] + i3 * a[3] +           \
                                             i4 * a[4];                        \
              cuvil_sb##BITS##_t *yr = yd + i0 * b[0] + i1 * b[1] +            \
                                       i2 * b[2] + i3 * b[3] + i4 * b[4];      \
              for (int64_t i5 = 0; i5 < s[5]; ++i5)                            \
                yr[i5 * b[5]] = xr[i5 * a[5]];                                 \
            }                                                                  \
  }                                                                            \
  void cuvil_k_fill_b##BITS(void *y, int64_t n, int64_t bits) {                \
    cuvil_sb##BITS##_t *yd = y;                                                \
    for (int64_t i = 0; i < n; ++i)                                            \
      yd[i] = (cuvil_sb##BITS##_t)bits;                                        \
  }

CUVIL_STRIDED(8)
CUVIL_STRIDED(16)
CUVIL_STRIDED(32)
CUVIL_STRIDED(64)

/* Indices are wrapped when negative and clamped into [0, axis_dim): a bad
 * run-time index reads a wrong row, never outside x. */
#define CUVIL_GATHER(NAME, ITYPE)                                              \
  void cuvil_k_gather_##NAME(const void *x, void *y, const ITYPE *idx,         \
                             int64_t outer, int64_t n_idx, int64_t axis_dim,   \
                             int64_t inner_bytes) {                            \
    const unsigned char *xs = x;                                               \
    unsigned char *yd = y;                                                     \
    for (int64_t o = 0; o < outer; ++o)                                        \
      for (int64_t j = 0; j < n_idx; ++j) {                                    \
        int64_t k = idx[j];                                                    \
        if (k < 0)                                                             \
          k += axis_dim;                                                       \
        k = k < 0 ? 0 : k >= axis_dim ? axis_dim - 1 : k;                      \
        const unsigned char *src = xs + (o * axis_dim + k) * inner_bytes;      \
        unsigned char *dst = yd + (o * n_idx + j) * inner_bytes;               \
        for (int64_t b = 0; b < inner_bytes; ++b)                              \
          dst[b] = src[b];                                                     \
      }                                                                        \
  }

CUVIL_GATHER(i64, int64_t)
CUVIL_GATHER(i32, int32_t)

/* Range: y[i] = start + i * delta, for n elements. */
#define CUVIL_RANGE(NAME, CTYPE)                                               \
  void cuvil_k_range_##NAME(const void *start, const void *delta, void *y,     \
                            int64_t n) {                                       \
    CTYPE s = *(const CTYPE *)start, d = *(const CTYPE *)delta;                \
    CTYPE *yd = y;                                                             \
    for (int64_t i = 0; i < n; ++i)                                            \
      yd[i] = (CTYPE)(s + (CTYPE)i * d);                                       \
  }

CUVIL_RANGE(f32, float)
CUVIL_RANGE(f64, double)
CUVIL_RANGE(i16, int16_t)
CUVIL_RANGE(i32, int32_t)
CUVIL_RANGE(i64, int64_t)

/* Slice with run-time starts/axes/steps (the output shape is static). */
#define CUVIL_SLICE(BITS, INAME, ITYPE)                                        \
  void cuvil_k_slice_b##BITS##_##INAME(                                        \
      const void *x, void *y, const int64_t *in_shape,                         \
      const int64_t *out_shape, const ITYPE *starts, const ITYPE *axes,        \
      const ITYPE *steps, int64_t count, int64_t rank) {                       \
    int64_t x_str[CUVIL_MAX_RANK], y_str[CUVIL_MAX_RANK], off = 0;             \
    x_str[CUVIL_MAX_RANK - 1] = y_str[CUVIL_MAX_RANK - 1] = 1;                 \
    for (int d = CUVIL_MAX_RANK - 1; d > 0; --d) {                             \
      x_str[d - 1] = x_str[d] * in_shape[d];                                   \
      y_str[d - 1] = y_str[d] * out_shape[d];                                  \
    }                                                                          \
    int64_t step_of[CUVIL_MAX_RANK];                                           \
    for (int d = 0; d < CUVIL_MAX_RANK; ++d)                                   \
      step_of[d] = x_str[d];                                                   \
    for (int64_t k = 0; k < count; ++k) {                                      \
      int64_t a = axes ? (int64_t)axes[k] : k;                                 \
      if (a < 0)                                                               \
        a += rank;                                                             \
      if (a < 0 || a >= rank)                                                  \
        continue;                                                              \
      int64_t d = CUVIL_MAX_RANK - rank + a, dim = in_shape[d];                \
      int64_t step = steps ? (int64_t)steps[k] : 1, s = starts[k];             \
      if (s < 0)                                                               \
        s += dim;                                                              \
      int64_t hi = step > 0 ? dim : dim - 1;                                   \
      s = s < 0 ? 0 : s > hi ? hi : s;                                         \
      if (out_shape[d] > 0)                                                    \
        off += s * x_str[d];                                                   \
      step_of[d] = x_str[d] * step;                                            \
    }                                                                          \
    cuvil_k_strided_copy_b##BITS((const cuvil_sb##BITS##_t *)x + off, y,       \
                                 out_shape, step_of, y_str);                   \
  }

CUVIL_SLICE(8, i64, int64_t)
CUVIL_SLICE(16, i64, int64_t)
CUVIL_SLICE(32, i64, int64_t)
CUVIL_SLICE(64, i64, int64_t)
CUVIL_SLICE(8, i32, int32_t)
CUVIL_SLICE(16, i32, int32_t)
CUVIL_SLICE(32, i32, int32_t)
CUVIL_SLICE(64, i32, int32_t)

/* Pad with run-time pads: the source index along a dimension of n elements
 * for position i (= output index - begin pad), or -1 for the constant. */
static int64_t pad_index(int64_t i, int64_t n, int64_t mode) {
  if (i >= 0 && i < n)
    return i;
  if (n <= 0 || mode == 0)
    return -1;
  if (mode == 1)
    return i < 0 ? 0 : n - 1;
  if (mode == 2) {
    if (n == 1)
      return 0;
    int64_t p = 2 * (n - 1);
    i %= p;
    if (i < 0)
      i += p;
    return i < n ? i : p - i;
  }
  i %= n;
  return i < 0 ? i + n : i;
}

#define CUVIL_PAD(BITS)                                                        \
  void cuvil_k_pad_b##BITS(const void *x, void *y, const int64_t *in_shape,    \
                           const int64_t *out_shape, const int64_t *pads,      \
                           const int64_t *axes, int64_t n_axes, int64_t rank,  \
                           int64_t mode, const void *value) {                  \
    const cuvil_sb##BITS##_t *xs = x;                                          \
    cuvil_sb##BITS##_t *yd = y;                                                \
    cuvil_sb##BITS##_t v = value ? *(const cuvil_sb##BITS##_t *)value : 0;     \
    int64_t b[CUVIL_MAX_RANK] = {0}, st[CUVIL_MAX_RANK];                       \
    for (int64_t k = 0; k < n_axes; ++k) {                                     \
      int64_t a = axes ? axes[k] : k;                                          \
      if (a < 0)                                                               \
        a += rank;                                                             \
      if (a >= 0 && a < rank)                                                  \
        b[CUVIL_MAX_RANK - rank + a] = pads[k];                                \
    }                                                                          \
    st[CUVIL_MAX_RANK - 1] = 1;                                                \
    for (int d = CUVIL_MAX_RANK - 1; d > 0; --d)                               \
      st[d - 1] = st[d] * in_shape[d];                                         \
    const int64_t *s = out_shape, *n = in_shape;                               \
    int64_t lin = 0;                                                           \
    for (int64_t o0 = 0; o0 < s[0]; ++o0) {                                    \
      int64_t j0 = pad_index(o0 - b[0], n[0], mode);                           \
      for (int64_t o1 = 0; o1 < s[1]; ++o1) {                                  \
        int64_t j1 = pad_index(o1 - b[1], n[1], mode);                         \
        for (int64_t o2 = 0; o2 < s[2]; ++o2) {                                \
          int64_t j2 = pad_index(o2 - b[2], n[2], mode);                       \
          for (int64_t o3 = 0; o3 < s[3]; ++o3) {                              \
            int64_t j3 = pad_index(o3 - b[3], n[3], mode);                     \
            for (int64_t o4 = 0; o4 < s[4]; ++o4) {                            \
              int64_t j4 = pad_index(o4 - b[4], n[4], mode);                   \
              int out = j0 < 0 || j1 < 0 || j2 < 0 || j3 < 0 || j4 < 0;        \
              int64_t base = j0 * st[0] + j1 * st[1] + j2 * st[2] +            \
                             j3 * st[3] + j4 * st[4];                          \
              for (int64_t o5 = 0; o5 < s[5]; ++o5) {                          \
                int64_t j5 = pad_index(o5 - b[5], n[5], mode);                 \
                yd[lin++] = out || j5 < 0 ? v : xs[base + j5];                 \
              }                                                                \
            }                                                                  \
          }                                                                    \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  }

CUVIL_PAD(8)
CUVIL_PAD(16)
CUVIL_PAD(32)
CUVIL_PAD(64)
