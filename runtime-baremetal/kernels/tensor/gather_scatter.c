/* Reference GatherElements, ScatterElements (and the deprecated Scatter),
 * GatherND and ScatterND kernels. Index tensors are read at run time; the
 * bounds rules (wrap negative, clamp on gather, skip on scatter) are stated
 * in cuvil/kernels.h. */
#include "cuvil/kernels.h"

/* may_alias: after inlining, these accesses sit next to typed accesses of
 * the kernels that produce and consume the data (see transform.c). */
typedef uint8_t __attribute__((may_alias)) cuvil_gs8_t;
typedef uint16_t __attribute__((may_alias)) cuvil_gs16_t;
typedef uint32_t __attribute__((may_alias)) cuvil_gs32_t;
typedef uint64_t __attribute__((may_alias)) cuvil_gs64_t;
typedef float __attribute__((may_alias)) cuvil_gsf32_t;
typedef double __attribute__((may_alias)) cuvil_gsf64_t;
typedef int32_t __attribute__((may_alias)) cuvil_gsi32_t;
typedef int64_t __attribute__((may_alias)) cuvil_gsi64_t;

_Static_assert(CUVIL_MAX_RANK == 6,
               "the loop nests below span CUVIL_MAX_RANK dimensions");

/* Index k along an axis of dim elements, negative counting from the end:
 * clamped into [0, dim) (gathers). */
static inline int64_t clamp_index(int64_t k, int64_t dim) {
  if (k < 0)
    k += dim;
  return k < 0 ? 0 : k >= dim ? dim - 1 : k;
}
/* The same, or -1 when out of range (scatters skip the update). */
static inline int64_t checked_index(int64_t k, int64_t dim) {
  if (k < 0)
    k += dim;
  return k < 0 || k >= dim ? -1 : k;
}

/* The loop nest over the index tensor (shape s, dense) with the data offset
 * `base` of the other dimensions; BODY sees base, lin (the linear index into
 * the index tensor) and i5. */
#define CUVIL_INDEX_NEST(s, st, BODY)                                          \
  int64_t lin = 0;                                                             \
  for (int64_t i0 = 0; i0 < s[0]; ++i0)                                        \
    for (int64_t i1 = 0; i1 < s[1]; ++i1)                                      \
      for (int64_t i2 = 0; i2 < s[2]; ++i2)                                    \
        for (int64_t i3 = 0; i3 < s[3]; ++i3)                                  \
          for (int64_t i4 = 0; i4 < s[4]; ++i4) {                              \
            int64_t row = i0 * st[0] + i1 * st[1] + i2 * st[2] + i3 * st[3] +  \
                          i4 * st[4];                                          \
            for (int64_t i5 = 0; i5 < s[5]; ++i5, ++lin) {                     \
              int64_t base = row + i5 * st[5];                                 \
              BODY                                                             \
            }                                                                  \
          }

#define CUVIL_GATHER_ELEMENTS(BITS, INAME, ITYPE)                              \
  void cuvil_k_gather_elements_b##BITS##_##INAME(                              \
      const void *x, const ITYPE *idx, void *y, const int64_t *shape,          \
      const int64_t *x_str, int64_t axis_dim, int64_t axis_str) {              \
    const cuvil_gs##BITS##_t *xs = x;                                          \
    cuvil_gs##BITS##_t *yd = y;                                                \
    CUVIL_INDEX_NEST(shape, x_str, {                                           \
      int64_t k = clamp_index((int64_t)idx[lin], axis_dim);                    \
      yd[lin] = xs[base + k * axis_str];                                       \
    })                                                                         \
  }

CUVIL_GATHER_ELEMENTS(8, i64, int64_t)
CUVIL_GATHER_ELEMENTS(16, i64, int64_t)
CUVIL_GATHER_ELEMENTS(32, i64, int64_t)
CUVIL_GATHER_ELEMENTS(64, i64, int64_t)
CUVIL_GATHER_ELEMENTS(8, i32, int32_t)
CUVIL_GATHER_ELEMENTS(16, i32, int32_t)
CUVIL_GATHER_ELEMENTS(32, i32, int32_t)
CUVIL_GATHER_ELEMENTS(64, i32, int32_t)

/* How an update u combines with the current element v. max and min let a
 * NaN through (as numpy's maximum/minimum do). */
#define GS_NONE(v, u) (u)
#define GS_ADD(v, u) ((v) + (u))
#define GS_MUL(v, u) ((v) * (u))
#define GS_MAX(v, u) ((u) > (v) || (u) != (u) ? (u) : (v))
#define GS_MIN(v, u) ((u) < (v) || (u) != (u) ? (u) : (v))

#define CUVIL_SCATTER_ELEMENTS(NAME, ET, INAME, ITYPE, COMBINE)                \
  void cuvil_k_scatter_elements_##NAME##_##INAME(                              \
      void *y, const ITYPE *idx, const void *upd, const int64_t *shape,        \
      const int64_t *y_str, int64_t axis_dim, int64_t axis_str) {              \
    ET *yd = y;                                                                \
    const ET *us = upd;                                                        \
    CUVIL_INDEX_NEST(shape, y_str, {                                           \
      int64_t k = checked_index((int64_t)idx[lin], axis_dim);                  \
      if (k >= 0) {                                                            \
        ET *t = yd + base + k * axis_str;                                      \
        *t = COMBINE(*t, us[lin]);                                             \
      }                                                                        \
    })                                                                         \
  }

#define CUVIL_SCATTER_ELEMENTS_ALL(INAME, ITYPE)                               \
  CUVIL_SCATTER_ELEMENTS(none_b8, cuvil_gs8_t, INAME, ITYPE, GS_NONE)          \
  CUVIL_SCATTER_ELEMENTS(none_b16, cuvil_gs16_t, INAME, ITYPE, GS_NONE)        \
  CUVIL_SCATTER_ELEMENTS(none_b32, cuvil_gs32_t, INAME, ITYPE, GS_NONE)        \
  CUVIL_SCATTER_ELEMENTS(none_b64, cuvil_gs64_t, INAME, ITYPE, GS_NONE)        \
  CUVIL_SCATTER_ELEMENTS_RED(f32, INAME, ITYPE)                                \
  CUVIL_SCATTER_ELEMENTS_RED(f64, INAME, ITYPE)                                \
  CUVIL_SCATTER_ELEMENTS_RED(i32, INAME, ITYPE)                                \
  CUVIL_SCATTER_ELEMENTS_RED(i64, INAME, ITYPE)
#define CUVIL_SCATTER_ELEMENTS_RED(T, INAME, ITYPE)                            \
  CUVIL_SCATTER_ELEMENTS(add_##T, cuvil_gs##T##_t, INAME, ITYPE, GS_ADD)       \
  CUVIL_SCATTER_ELEMENTS(mul_##T, cuvil_gs##T##_t, INAME, ITYPE, GS_MUL)       \
  CUVIL_SCATTER_ELEMENTS(max_##T, cuvil_gs##T##_t, INAME, ITYPE, GS_MAX)       \
  CUVIL_SCATTER_ELEMENTS(min_##T, cuvil_gs##T##_t, INAME, ITYPE, GS_MIN)

CUVIL_SCATTER_ELEMENTS_ALL(i64, int64_t)
CUVIL_SCATTER_ELEMENTS_ALL(i32, int32_t)

/* GatherND: every index tuple selects a slice of slice_bytes bytes. */
void cuvil_k_gather_nd_i64(const void *x, const int64_t *idx, void *y,
                           int64_t batch, int64_t n_tuples, int64_t k,
                           const int64_t *dims, const int64_t *str_bytes,
                           int64_t slice_bytes, int64_t x_batch_bytes) {
  const unsigned char *xs = x;
  unsigned char *yd = y;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < n_tuples; ++j) {
      const int64_t *t = idx + (b * n_tuples + j) * k;
      int64_t off = b * x_batch_bytes;
      for (int64_t m = 0; m < k; ++m)
        off += clamp_index(t[m], dims[m]) * str_bytes[m];
      unsigned char *dst = yd + (b * n_tuples + j) * slice_bytes;
      for (int64_t e = 0; e < slice_bytes; ++e)
        dst[e] = xs[off + e];
    }
}

#define CUVIL_SCATTER_ND(NAME, ET, COMBINE)                                    \
  void cuvil_k_scatter_nd_##NAME(                                              \
      void *y, const int64_t *idx, const void *upd, int64_t n_tuples,          \
      int64_t k, const int64_t *dims, const int64_t *str, int64_t slice) {     \
    ET *yd = y;                                                                \
    const ET *us = upd;                                                        \
    for (int64_t j = 0; j < n_tuples; ++j) {                                   \
      int64_t off = 0;                                                         \
      int ok = 1;                                                              \
      for (int64_t m = 0; m < k; ++m) {                                        \
        int64_t v = checked_index(idx[j * k + m], dims[m]);                    \
        ok &= v >= 0;                                                          \
        off += v * str[m];                                                     \
      }                                                                        \
      if (!ok)                                                                 \
        continue;                                                              \
      for (int64_t e = 0; e < slice; ++e)                                      \
        yd[off + e] = COMBINE(yd[off + e], us[j * slice + e]);                 \
    }                                                                          \
  }

CUVIL_SCATTER_ND(none_b8, cuvil_gs8_t, GS_NONE)
CUVIL_SCATTER_ND(none_b16, cuvil_gs16_t, GS_NONE)
CUVIL_SCATTER_ND(none_b32, cuvil_gs32_t, GS_NONE)
CUVIL_SCATTER_ND(none_b64, cuvil_gs64_t, GS_NONE)
#define CUVIL_SCATTER_ND_RED(T)                                                \
  CUVIL_SCATTER_ND(add_##T, cuvil_gs##T##_t, GS_ADD)                           \
  CUVIL_SCATTER_ND(mul_##T, cuvil_gs##T##_t, GS_MUL)                           \
  CUVIL_SCATTER_ND(max_##T, cuvil_gs##T##_t, GS_MAX)                           \
  CUVIL_SCATTER_ND(min_##T, cuvil_gs##T##_t, GS_MIN)
CUVIL_SCATTER_ND_RED(f32)
CUVIL_SCATTER_ND_RED(f64)
CUVIL_SCATTER_ND_RED(i32)
CUVIL_SCATTER_ND_RED(i64)
