/* Reference broadcast element-wise kernels beyond the f32 arithmetic of
 * elementwise.c: other element types, Pow, Mod, Max/Min, comparisons,
 * logic, BitShift, Where, and the scaling that finishes Mean.
 *
 * Every binary kernel has the signature of cuvil_k_add_f32 (shape padded to
 * CUVIL_MAX_RANK, per-operand element strides, y dense) and is generated
 * from one loop nest by CUVIL_BINARY_KERNEL; the element expression is in
 * terms of va, vb. */
#include "cuvil/kernels.h"

#include "../math.h"

_Static_assert(CUVIL_MAX_RANK == 6,
               "the loop nests below span CUVIL_MAX_RANK dimensions");

#define CUVIL_BINARY_KERNEL(NAME, TA, TB, TY, EXPR)                            \
  void NAME(const TA *a, const TB *b, TY *y, const int64_t *s,                 \
            const int64_t *as, const int64_t *bs) {                            \
    for (int64_t i0 = 0; i0 < s[0]; ++i0)                                      \
      for (int64_t i1 = 0; i1 < s[1]; ++i1)                                    \
        for (int64_t i2 = 0; i2 < s[2]; ++i2)                                  \
          for (int64_t i3 = 0; i3 < s[3]; ++i3)                                \
            for (int64_t i4 = 0; i4 < s[4]; ++i4) {                            \
              const TA *ar = a + i0 * as[0] + i1 * as[1] + i2 * as[2] +        \
                             i3 * as[3] + i4 * as[4];                          \
              const TB *br = b + i0 * bs[0] + i1 * bs[1] + i2 * bs[2] +        \
                             i3 * bs[3] + i4 * bs[4];                          \
              TY *yr =                                                         \
                  y +                                                          \
                  ((((i0 * s[1] + i1) * s[2] + i2) * s[3] + i3) * s[4] + i4) * \
                      s[5];                                                    \
              for (int64_t i5 = 0; i5 < s[5]; ++i5) {                          \
                const TA va = ar[i5 * as[5]];                                  \
                const TB vb = br[i5 * bs[5]];                                  \
                yr[i5] = (TY)(EXPR);                                           \
              }                                                                \
            }                                                                  \
  }

/* X-macro lists of element types: X(suffix, C type). */
#define CUVIL_INT_TYPES(X)                                                     \
  X(i8, int8_t)                                                                \
  X(u8, uint8_t)                                                               \
  X(i16, int16_t)                                                              \
  X(u16, uint16_t)                                                             \
  X(i32, int32_t)                                                              \
  X(u32, uint32_t)                                                             \
  X(i64, int64_t)                                                              \
  X(u64, uint64_t)
#define CUVIL_UINT_TYPES(X)                                                    \
  X(u8, uint8_t)                                                               \
  X(u16, uint16_t)                                                             \
  X(u32, uint32_t)                                                             \
  X(u64, uint64_t)

/* ---- Arithmetic: Add, Sub, Mul, Div on integers and f64 ---------------- */

#define CUVIL_ARITH(SFX, T)                                                    \
  CUVIL_BINARY_KERNEL(cuvil_k_add_##SFX, T, T, T, va + vb)                     \
  CUVIL_BINARY_KERNEL(cuvil_k_sub_##SFX, T, T, T, va - vb)                     \
  CUVIL_BINARY_KERNEL(cuvil_k_mul_##SFX, T, T, T, va *vb)
#define CUVIL_INT_DIV(SFX, T)                                                  \
  CUVIL_BINARY_KERNEL(cuvil_k_div_##SFX, T, T, T, vb == 0 ? 0 : va / vb)
CUVIL_INT_TYPES(CUVIL_ARITH)
CUVIL_INT_TYPES(CUVIL_INT_DIV)
CUVIL_ARITH(f64, double)
CUVIL_BINARY_KERNEL(cuvil_k_div_f64, double, double, double, va / vb)

/* ---- Max, Min --------------------------------------------------------- */

#define CUVIL_MINMAX(SFX, T)                                                   \
  CUVIL_BINARY_KERNEL(cuvil_k_max_##SFX, T, T, T, va < vb ? vb : va)           \
  CUVIL_BINARY_KERNEL(cuvil_k_min_##SFX, T, T, T, vb < va ? vb : va)
CUVIL_INT_TYPES(CUVIL_MINMAX)
CUVIL_MINMAX(f32, float)
CUVIL_MINMAX(f64, double)

/* ---- Mod -------------------------------------------------------------- */

/* trunc without libm: values at or beyond 2^23 (2^52) are integers. */
CUVIL_MATH_INLINE float trunc_f32(float q) {
  return __builtin_fabsf(q) < 0x1p23f ? (float)(int32_t)q : q;
}
CUVIL_MATH_INLINE double trunc_f64(double q) {
  return __builtin_fabs(q) < 0x1p52 ? (double)(int64_t)q : q;
}

/* mod (fmod = 0): the result takes the divisor's sign, as in Python.
 * fmod (fmod = 1): C's fmod, the result takes the dividend's sign.
 * An integer divisor of 0 gives 0 rather than a trap. */
#define CUVIL_FMOD_INT(SFX, T)                                                 \
  CUVIL_BINARY_KERNEL(cuvil_k_fmod_##SFX, T, T, T, vb == 0 ? 0 : va % vb)
#define CUVIL_MOD_SIGNED(SFX, T)                                               \
  CUVIL_BINARY_KERNEL(cuvil_k_mod_##SFX, T, T, T,                              \
                      vb == 0 ? 0                                              \
                      : (va % vb != 0 && ((va % vb < 0) != (vb < 0)))          \
                          ? va % vb + vb                                       \
                          : va % vb)
#define CUVIL_MOD_UNSIGNED(SFX, T)                                             \
  CUVIL_BINARY_KERNEL(cuvil_k_mod_##SFX, T, T, T, vb == 0 ? 0 : va % vb)
#define CUVIL_SINT_TYPES(X)                                                    \
  X(i8, int8_t)                                                                \
  X(i16, int16_t)                                                              \
  X(i32, int32_t)                                                              \
  X(i64, int64_t)
CUVIL_INT_TYPES(CUVIL_FMOD_INT)
CUVIL_SINT_TYPES(CUVIL_MOD_SIGNED)
CUVIL_UINT_TYPES(CUVIL_MOD_UNSIGNED)
CUVIL_BINARY_KERNEL(cuvil_k_fmod_f32, float, float, float,
                    va - trunc_f32(va / vb) * vb)
CUVIL_BINARY_KERNEL(cuvil_k_fmod_f64, double, double, double,
                    va - trunc_f64(va / vb) * vb)

/* ---- Pow -------------------------------------------------------------- */

/* x^y. Integral exponents (which negative bases need) by repeated
 * squaring; others as exp(y log x), NaN for x < 0. */
CUVIL_MATH_INLINE float pow_f32(float x, float y) {
  if (__builtin_fabsf(y) < 0x1p31f && y == (float)(int32_t)y) {
    const int32_t n = (int32_t)y;
    uint32_t e = n < 0 ? 0u - (uint32_t)n : (uint32_t)n;
    float r = 1.0f, p = x;
    for (; e; e >>= 1, p *= p)
      if (e & 1u)
        r *= p;
    return n < 0 ? 1.0f / r : r;
  }
  return cuvil_expf(y * cuvil_logf(x));
}

/* Integer x^n for n >= 0; a negative n gives the integer part of 1/x^|n|. */
#define CUVIL_IPOW(SFX, T)                                                     \
  CUVIL_MATH_INLINE T ipow_##SFX(T x, T n) {                                   \
    if (n < 0)                                                                 \
      return x == 1 ? 1 : x == -1 ? ((n & 1) ? -1 : 1) : 0;                    \
    T r = 1;                                                                   \
    for (; n; n >>= 1, x *= x)                                                 \
      if (n & 1)                                                               \
        r *= x;                                                                \
    return r;                                                                  \
  }
CUVIL_IPOW(i32, int32_t)
CUVIL_IPOW(i64, int64_t)

CUVIL_BINARY_KERNEL(cuvil_k_pow_f32, float, float, float, pow_f32(va, vb))
CUVIL_BINARY_KERNEL(cuvil_k_pow_f32_i32, float, int32_t, float,
                    pow_f32(va, (float)vb))
CUVIL_BINARY_KERNEL(cuvil_k_pow_f32_i64, float, int64_t, float,
                    pow_f32(va, (float)vb))
CUVIL_BINARY_KERNEL(cuvil_k_pow_f32_u32, float, uint32_t, float,
                    pow_f32(va, (float)vb))
CUVIL_BINARY_KERNEL(cuvil_k_pow_f32_u64, float, uint64_t, float,
                    pow_f32(va, (float)vb))
CUVIL_BINARY_KERNEL(cuvil_k_pow_i32, int32_t, int32_t, int32_t,
                    ipow_i32(va, vb))
CUVIL_BINARY_KERNEL(cuvil_k_pow_i64, int64_t, int64_t, int64_t,
                    ipow_i64(va, vb))
CUVIL_BINARY_KERNEL(cuvil_k_pow_i32_f32, int32_t, float, int32_t,
                    pow_f32((float)va, vb))
CUVIL_BINARY_KERNEL(cuvil_k_pow_i64_f32, int64_t, float, int64_t,
                    pow_f32((float)va, vb))

/* ---- Comparisons (bool output, one byte 0/1) -------------------------- */

#define CUVIL_COMPARE(SFX, T)                                                  \
  CUVIL_BINARY_KERNEL(cuvil_k_equal_##SFX, T, T, uint8_t, va == vb)            \
  CUVIL_BINARY_KERNEL(cuvil_k_greater_##SFX, T, T, uint8_t, va > vb)           \
  CUVIL_BINARY_KERNEL(cuvil_k_less_##SFX, T, T, uint8_t, va < vb)              \
  CUVIL_BINARY_KERNEL(cuvil_k_greater_equal_##SFX, T, T, uint8_t, va >= vb)    \
  CUVIL_BINARY_KERNEL(cuvil_k_less_equal_##SFX, T, T, uint8_t, va <= vb)
CUVIL_INT_TYPES(CUVIL_COMPARE)
CUVIL_COMPARE(f32, float)
CUVIL_COMPARE(f64, double)
CUVIL_BINARY_KERNEL(cuvil_k_equal_bool, uint8_t, uint8_t, uint8_t,
                    (va != 0) == (vb != 0))

/* ---- Logic on bool ---------------------------------------------------- */

CUVIL_BINARY_KERNEL(cuvil_k_and_bool, uint8_t, uint8_t, uint8_t,
                    (va != 0) & (vb != 0))
CUVIL_BINARY_KERNEL(cuvil_k_or_bool, uint8_t, uint8_t, uint8_t,
                    (va != 0) | (vb != 0))
CUVIL_BINARY_KERNEL(cuvil_k_xor_bool, uint8_t, uint8_t, uint8_t,
                    (va != 0) ^ (vb != 0))

/* ---- BitShift on unsigned integers ------------------------------------ */

/* Shifting by the width or more gives 0 (C leaves it undefined). */
#define CUVIL_SHIFT(SFX, T)                                                    \
  CUVIL_BINARY_KERNEL(cuvil_k_shl_##SFX, T, T, T,                              \
                      vb >= 8 * sizeof(T) ? 0 : (uint64_t)va << vb)            \
  CUVIL_BINARY_KERNEL(cuvil_k_shr_##SFX, T, T, T,                              \
                      vb >= 8 * sizeof(T) ? 0 : va >> vb)
CUVIL_UINT_TYPES(CUVIL_SHIFT)

/* ---- Where ------------------------------------------------------------ */

#define CUVIL_WHERE(BITS, T)                                                   \
  void cuvil_k_where_b##BITS(const uint8_t *c, const void *a, const void *b,   \
                             void *y, const int64_t *s, const int64_t *cs,     \
                             const int64_t *as, const int64_t *bs) {           \
    const T *at = (const T *)a, *bt = (const T *)b;                            \
    T *yt = (T *)y;                                                            \
    for (int64_t i0 = 0; i0 < s[0]; ++i0)                                      \
      for (int64_t i1 = 0; i1 < s[1]; ++i1)                                    \
        for (int64_t i2 = 0; i2 < s[2]; ++i2)                                  \
          for (int64_t i3 = 0; i3 < s[3]; ++i3)                                \
            for (int64_t i4 = 0; i4 < s[4]; ++i4) {                            \
              const uint8_t *cr = c + i0 * cs[0] + i1 * cs[1] + i2 * cs[2] +   \
                                  i3 * cs[3] + i4 * cs[4];                     \
              const T *ar = at + i0 * as[0] + i1 * as[1] + i2 * as[2] +        \
                            i3 * as[3] + i4 * as[4];                           \
              const T *br = bt + i0 * bs[0] + i1 * bs[1] + i2 * bs[2] +        \
                            i3 * bs[3] + i4 * bs[4];                           \
              T *yr =                                                          \
                  yt +                                                         \
                  ((((i0 * s[1] + i1) * s[2] + i2) * s[3] + i3) * s[4] + i4) * \
                      s[5];                                                    \
              for (int64_t i5 = 0; i5 < s[5]; ++i5)                            \
                yr[i5] = cr[i5 * cs[5]] ? ar[i5 * as[5]] : br[i5 * bs[5]];     \
            }                                                                  \
  }
CUVIL_WHERE(8, uint8_t)
CUVIL_WHERE(16, uint16_t)
CUVIL_WHERE(32, uint32_t)
CUVIL_WHERE(64, uint64_t)

/* ---- Scaling (Mean = Sum * 1/n) --------------------------------------- */

void cuvil_k_scale_f32(const float *x, float *y, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] * s;
}

void cuvil_k_scale_f64(const double *x, double *y, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] * (double)s;
}

/* ---- float16 (stored as uint16_t): Max, Min, fmod --------------------- */

/* Exact widening of an IEEE binary16 value. */
CUVIL_MATH_INLINE float half_to_float(uint16_t h) {
  const uint32_t s = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) /* infinity, NaN */
    return cuvil_f32_from_bits(s | 0x7f800000u | m << 13);
  if (e == 0) { /* zero, subnormal: m * 2^-24 */
    const float f = (float)m * 0x1p-24f;
    return s ? -f : f;
  }
  return cuvil_f32_from_bits(s | (e + 112u) << 23 | m << 13);
}

/* Narrowing, rounding to nearest even. */
CUVIL_MATH_INLINE uint16_t float_to_half(float f) {
  const uint32_t x = cuvil_f32_bits(f);
  const uint16_t s = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) /* NaN: keep it quiet */
    return s | 0x7e00u;
  if (a >= 0x47800000u) /* >= 65536 (and infinity) */
    return s | 0x7c00u;
  if (a < 0x38800000u) /* below 2^-14: adding 0.5 rounds to 2^-24 units */
    return s | (uint16_t)(cuvil_f32_bits(cuvil_f32_from_bits(a) + 0.5f) -
                          0x3f000000u);
  a += 0xfffu + ((a >> 13) & 1u); /* a carry may reach infinity: right */
  return s | (uint16_t)((a - (112u << 23)) >> 13);
}

CUVIL_BINARY_KERNEL(cuvil_k_max_f16, uint16_t, uint16_t, uint16_t,
                    half_to_float(va) < half_to_float(vb) ? vb : va)
CUVIL_BINARY_KERNEL(cuvil_k_min_f16, uint16_t, uint16_t, uint16_t,
                    half_to_float(vb) < half_to_float(va) ? vb : va)
/* The f32 remainder of two halves is exact, so rounding once is right. */
CUVIL_BINARY_KERNEL(cuvil_k_fmod_f16, uint16_t, uint16_t, uint16_t,
                    float_to_half(half_to_float(va) -
                                  trunc_f32(half_to_float(va) /
                                            half_to_float(vb)) *
                                      half_to_float(vb)))
