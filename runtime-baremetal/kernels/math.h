/*
 * Freestanding float math for the kernels: exp, log, tanh, sigmoid, erf,
 * log1p, expm1, the trigonometric and hyperbolic functions and their
 * inverses, without libm, plus the clamp used for fused activations.
 *
 * Every function is straight-line code (special cases are selects, not
 * branches) and always inlined, so a loop calling one vectorises. Each
 * approximation reduces its argument to a small interval and evaluates a
 * polynomial there; the polynomials are Chebyshev fits rounded to float,
 * whose approximation error is far below float rounding, so the accuracy is
 * set by the float evaluation. Maximum errors measured over every float
 * input, with and without FMA contraction, against double-precision libm:
 *   cuvil_expf      1.08 ulp (normal results)
 *   cuvil_logf      1.05 ulp
 *   cuvil_tanhf     1.50 ulp, absolute 8.9e-8
 *   cuvil_sigmoidf  2.48 ulp (normal results), absolute 8.9e-8
 *   cuvil_erff      1.81 ulp, absolute 1.1e-7
 * and, over every 257th float, with and without FMA contraction:
 *   cuvil_sinf, cuvil_cosf  1.6 ulp (|x| < 4e8)     cuvil_tanf    3.7 ulp
 *   cuvil_asinf     2.3 ulp    cuvil_acosf    1.1 ulp    cuvil_atanf   2.1 ulp
 *   cuvil_sinhf     3.7 ulp    cuvil_coshf    3.0 ulp
 *   cuvil_asinhf    2.7 ulp    cuvil_acoshf   2.7 ulp    cuvil_atanhf  3.0 ulp
 *   cuvil_log1pf    2.4 ulp    cuvil_expm1f   2.4 ulp
 * NaN inputs give NaN; infinities and overflow give the IEEE results.
 *
 * This header is private to the kernel sources; its name shadows <math.h>,
 * so include it by path ("../math.h", "kernels/math.h"), never through -I.
 */
#ifndef CUVIL_KERNELS_MATH_H
#define CUVIL_KERNELS_MATH_H

#include <stdint.h>

#define CUVIL_MATH_INLINE static inline __attribute__((always_inline))

CUVIL_MATH_INLINE uint32_t cuvil_f32_bits(float x) {
  uint32_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  return u;
}

CUVIL_MATH_INLINE float cuvil_f32_from_bits(uint32_t u) {
  float x;
  __builtin_memcpy(&x, &u, sizeof x);
  return x;
}

/* min(max(v, lo), hi): the fused-activation clamp. A NaN v passes through. */
CUVIL_MATH_INLINE float cuvil_clampf(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

/* ln 2 split for Cody-Waite reduction: LN2_HI has 15 significant bits, so
 * n * LN2_HI is exact for |n| < 512 (exp needs |n| <= 151, log |e| <= 149). */
#define CUVIL_LN2_HI 0x1.62e4p-1f
#define CUVIL_LN2_LO 0x1.7f7d1cp-20f

/* 2^n for n in [-126, 127], built from the exponent field. */
CUVIL_MATH_INLINE float cuvil_pow2i(int32_t n) {
  return cuvil_f32_from_bits((uint32_t)(n + 127) << 23);
}

/*
 * exp(x) = 2^n * exp(r), n = round(x / ln 2), r = x - n ln 2, |r| <= ln2 / 2.
 * exp(r) = 1 + r + r^2 q(r), q a degree-4 fit of (e^r - 1 - r) / r^2.
 * cuvil_exp_reduce returns exp(r) and n, for x already clamped to
 * [-104, 89] (|n| <= 151).
 */
CUVIL_MATH_INLINE float cuvil_exp_reduce(float x, int32_t *n) {
  /* Adding 1.5 * 2^23 rounds x / ln 2 to an integer n and leaves n in the
   * low significand bits of t (exact while |n| < 2^22). */
  const float shift = 0x1.8p23f;
  const float t = x * 0x1.715476p+0f + shift;
  const float fn = t - shift;
  /* Unsigned subtraction: no overflow even for the bits of a NaN t (whose
   * result is NaN whatever n is). */
  *n = (int32_t)(cuvil_f32_bits(t) - cuvil_f32_bits(shift));

  /* The first product is exact, so r carries only LN2_LO's rounding. */
  float r = x - fn * CUVIL_LN2_HI;
  r = r - fn * CUVIL_LN2_LO;

  float q = 1.39261759e-3f;
  q = q * r + 8.36317334e-3f;
  q = q * r + 4.16665561e-2f;
  q = q * r + 1.66665778e-1f;
  q = q * r + 0.5f;
  return 1.0f + (r + r * r * q);
}

CUVIL_MATH_INLINE float cuvil_expf(float x) {
  /* Below -104 the result rounds to 0, above 89 it overflows; clamping
   * bounds n to [-151, 128] and the scaling below still produces the 0 or
   * inf. Compares, not fminf/fmaxf, so that NaN passes through. */
  x = x > 89.0f ? 89.0f : x;
  x = x < -104.0f ? -104.0f : x;
  int32_t n;
  const float p = cuvil_exp_reduce(x, &n);
  /* Scale by 2^n as 2^(n/2) * 2^(n - n/2): both factors stay normal for
   * n in [-151, 128], and the last multiply rounds once into the
   * subnormals, or overflows to inf. */
  const int32_t n1 = n / 2;
  return p * cuvil_pow2i(n1) * cuvil_pow2i(n - n1);
}

/* cuvil_expf of an x known to be <= 0 (or NaN), such as x - max(x) in a
 * softmax: the same results with one clamp less and the scaling as
 * 2^(n + 25) * 2^-25, whose first product is exact (n >= -151) and whose
 * second rounds once, as cuvil_expf's pair does. The _clamped form takes
 * an x already in [-104, 0] (or NaN). */
CUVIL_MATH_INLINE float cuvil_expf_nonpos_clamped(float x) {
  int32_t n;
  const float p = cuvil_exp_reduce(x, &n);
  return p * cuvil_pow2i(n + 25) * 0x1p-25f;
}

CUVIL_MATH_INLINE float cuvil_expf_nonpos(float x) {
  return cuvil_expf_nonpos_clamped(x < -104.0f ? -104.0f : x);
}

/* e^x for callers that use it only as 1 + e^x, 2 / (e^x + 1) and the
 * like, where results near the ends of the float range round away: as
 * cuvil_expf for x in [-87.33, 88.37], e^-87.33 (about 2^-126) below,
 * and for larger x e^x or inf (2^128 is the bits of inf). One scaling
 * multiply instead of two, so n must stay in [-126, 128]. */
CUVIL_MATH_INLINE float cuvil_expf_normal(float x) {
  x = x < -87.33f ? -87.33f : x;
  x = x > 89.0f ? 89.0f : x;
  int32_t n;
  const float p = cuvil_exp_reduce(x, &n);
  return p * cuvil_pow2i(n);
}

/* cuvil_expf_normal of an x known to be >= 0 (or NaN): one clamp less. */
CUVIL_MATH_INLINE float cuvil_expf_normal_pos(float x) {
  x = x > 89.0f ? 89.0f : x;
  int32_t n;
  const float p = cuvil_exp_reduce(x, &n);
  return p * cuvil_pow2i(n);
}

/*
 * log(x) = e ln 2 + log(m), x = 2^e m with m in [sqrt(1/2), sqrt(2)).
 * With f = m - 1: log(1 + f) = f - f^2/2 + f^3 R(f), R a degree-7 fit.
 */
CUVIL_MATH_INLINE float cuvil_logf(float x) {
  /* Subnormals: scale into the normal range first. */
  const int tiny = x < 0x1p-126f;
  const float xn = tiny ? x * 0x1p23f : x;

  /* Biasing the bits by 1 - sqrt(1/2) moves the exponent boundary from
   * m = 1 to m = sqrt(1/2): e is then the exponent of the biased bits and
   * m their significand with the bias taken back out. (Negative inputs
   * wrap around; their result is replaced below.) */
  const uint32_t bias = 0x3f800000u - 0x3f3504f3u; /* 1.0f - sqrt(0.5f) */
  const uint32_t ix = cuvil_f32_bits(xn) + bias;
  const int32_t e = (int32_t)(ix >> 23) - 127 - (tiny ? 23 : 0);
  const float f = cuvil_f32_from_bits((ix & 0x7fffffu) + 0x3f3504f3u) - 1.0f;

  float r = -7.90274367e-2f;
  r = r * f + 1.26223192e-1f;
  r = r * f - 1.29981831e-1f;
  r = r * f + 1.42144963e-1f;
  r = r * f - 1.66412815e-1f;
  r = r * f + 2.00010449e-1f;
  r = r * f - 2.50003070e-1f;
  r = r * f + 3.33333313e-1f;
  const float lm = f + f * f * (r * f - 0.5f);

  /* e ln 2 in two parts: the large exact part is added last. */
  const float fe = (float)e;
  const float y = fe * CUVIL_LN2_HI + (lm + fe * CUVIL_LN2_LO);

  /* log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN stays NaN. */
  float res = x == 0.0f ? -__builtin_inff() : y;
  res = x < 0.0f ? __builtin_nanf("") : res;
  return x == __builtin_inff() || x != x ? x : res;
}

/*
 * tanh, odd, computed for a = |x|. For a < 0.55, tanh(a) = a + a^3 P(a^2),
 * P a degree-4 fit; above, tanh(a) = 1 - 2 / (e^(2a) + 1), which has no
 * cancellation there (tanh 0.55 ~ 0.5) and becomes exactly 1 once the
 * exponential overflows. The sign is restored last, so tanh(-0) = -0.
 */
CUVIL_MATH_INLINE float cuvil_tanhf(float x) {
  const float a = __builtin_fabsf(x);
  const float u = a * a;
  float p = -6.61022775e-3f;
  p = p * u + 2.13093888e-2f;
  p = p * u - 5.39094284e-2f;
  p = p * u + 1.33331135e-1f;
  p = p * u - 3.33333313e-1f;
  const float small = a + a * u * p;
  const float large = 1.0f - 2.0f / (cuvil_expf_normal_pos(2.0f * a) + 1.0f);
  return __builtin_copysignf(a < 0.55f ? small : large, x);
}

/* sigmoid(x) = 1 / (1 + e^-x): 1 when e^-x underflows, 0 when it overflows;
 * no cancellation anywhere. */
CUVIL_MATH_INLINE float cuvil_sigmoidf(float x) {
  return 1.0f / (1.0f + cuvil_expf_normal(-x));
}

/*
 * erf, odd, computed for a = |x|. For a < 0.875, erf(a) = a + a S(a^2), S a
 * degree-5 fit (the leading a is exact, S(0) = 2/sqrt(pi) - 1 is small).
 * Above, erf(a) = 1 - e^(-a^2) H(t) with t = 1 / (1 + a/2): erfc(a) e^(a^2)
 * is smooth and slowly varying in t, H is a degree-6 fit of it for a in
 * [0.875, 4]; past a = 3.92 the result rounds to 1.
 */
CUVIL_MATH_INLINE float cuvil_erff_with(float x, int keep_nan) {
  const float a = __builtin_fabsf(x);
  const float u = a * a;

  float s = -6.21458516e-4f;
  s = s * u + 5.03437081e-3f;
  s = s * u - 2.67929472e-2f;
  s = s * u + 1.12824969e-1f;
  s = s * u - 3.76125544e-1f;
  s = s * u + 1.28379151e-1f;
  const float small = a + a * s;

  const float t = 1.0f / (1.0f + 0.5f * a);
  float h = -4.13532518e-2f;
  h = h * t - 9.33621004e-2f;
  h = h * t + 4.47706789e-1f;
  h = h * t + 7.31032640e-2f;
  h = h * t + 3.40893775e-1f;
  h = h * t + 2.71726876e-1f;
  h = h * t + 7.52921333e-4f;
  /* -u clamped by one fmax (maxNum: a NaN becomes -104) unless a NaN must
   * come through: on one-lane targets the compare and select cost a
   * branch and a copy per element. */
  const float e = keep_nan
                      ? cuvil_expf_nonpos(-u)
                      : cuvil_expf_nonpos_clamped(__builtin_fmaxf(-u, -104.0f));
  const float large = 1.0f - e * h;

  return __builtin_copysignf(a < 0.875f ? small : large, x);
}

CUVIL_MATH_INLINE float cuvil_erff(float x) { return cuvil_erff_with(x, 1); }

/* erf(x) for a caller that multiplies the result by a NaN whenever x is
 * NaN (GELU: x erf(x / sqrt 2)), so erf(NaN) may be +-1 here: the same
 * results as cuvil_erff for every other x, with a cheaper clamp. */
CUVIL_MATH_INLINE float cuvil_erff_nan_scaled(float x) {
  return cuvil_erff_with(x, 0);
}

/* ---- Rounding, log1p, expm1 ------------------------------------------------
 */

/* These builtins lower to single instructions (or, on RV64GC, short inline
 * sequences) on every target once -fno-math-errno is given, which the kernel
 * bitcode build does. */
#define cuvil_floorf(x) __builtin_floorf(x)
#define cuvil_ceilf(x) __builtin_ceilf(x)
#define cuvil_roundevenf(x) __builtin_roundevenf(x)

/*
 * log(1 + u) with full relative accuracy near u = 0: w = 1 + u rounds, but
 * w - 1 is exact, and log(w) * u / (w - 1) corrects for the rounding of w
 * (Goldberg's method). u = +inf gives inf, u < -1 NaN, u = -1 -inf.
 */
CUVIL_MATH_INLINE float cuvil_log1pf(float u) {
  const float w = 1.0f + u;
  const float d = w - 1.0f;
  float r = cuvil_logf(w) * (u / d);
  r = d == 0.0f ? u : r;
  return w == __builtin_inff() ? w : r;
}

/*
 * e^x - 1 with full relative accuracy near x = 0: with v = e^x rounded,
 * (v - 1) * x / log(v) cancels the rounding of v (Kahan's method). Exact
 * -1 where e^x underflows below 2^-25; inf where it overflows.
 */
CUVIL_MATH_INLINE float cuvil_expm1f(float x) {
  const float v = cuvil_expf(x);
  const float d = v - 1.0f;
  float r = d * (x / cuvil_logf(v));
  r = d == 0.0f ? x : r;
  r = d == -1.0f ? -1.0f : r;
  return v == __builtin_inff() ? v : r;
}

/* ---- Trigonometric functions -----------------------------------------------
 */

/*
 * sin and cos share a reduction: x = n pi/2 + r, |r| <= pi/4, done in double
 * (pi/2 split in a 25-bit head, so n * head is exact, and a tail), which is
 * accurate to float precision for |x| < 2^28 pi/2 ~ 4.2e8. Larger arguments
 * (where floats are 32 or more apart) are not reduced correctly: sin and cos
 * then return some value in [-1, 1], tan some finite value or inf. Then
 * sin(r) = r + r^3 S(r^2) and
 * cos(r) = 1 - r^2/2 + r^4 C(r^2), S and C degree-3 fits; the quadrant
 * n mod 4 selects and negates. inf and NaN give NaN.
 */
struct cuvil_sincos {
  float s, c; /* sin and cos of the reduced argument */
  uint32_t q; /* quadrant: n mod 4 */
};

CUVIL_MATH_INLINE struct cuvil_sincos cuvil_sincos_reduce(float x) {
  const double xd = (double)x;
  const double shift = 0x1.8p52;
  const double t = xd * 0x1.45f306dc9c883p-1 + shift; /* x * 2/pi */
  const double fn = t - shift;
  uint64_t tb;
  __builtin_memcpy(&tb, &t, sizeof tb);
  const float r = (float)(xd - fn * 0x1.921fb5p+0 - fn * 0x1.110b4611a6263p-26);

  const float z = r * r;
  float ps = 2.718115184e-06f;
  ps = ps * z - 1.983931143e-04f;
  ps = ps * z + 8.333329111e-03f;
  ps = ps * z - 1.666666716e-01f;
  float pc = -2.720544501e-07f;
  pc = pc * z + 2.479945579e-05f;
  pc = pc * z - 1.388888340e-03f;
  pc = pc * z + 4.166666791e-02f;

  struct cuvil_sincos sc;
  /* copysign: r + r z S would turn r = -0 into +0 (S < 0). */
  sc.s = __builtin_copysignf(r + r * z * ps, r);
  sc.c = 1.0f - 0.5f * z + z * z * pc;
  sc.q = (uint32_t)tb & 3u;
  return sc;
}

CUVIL_MATH_INLINE float cuvil_sinf(float x) {
  const struct cuvil_sincos sc = cuvil_sincos_reduce(x);
  const float v = (sc.q & 1u) ? sc.c : sc.s;
  return cuvil_clampf((sc.q & 2u) ? -v : v, -1.0f, 1.0f);
}

CUVIL_MATH_INLINE float cuvil_cosf(float x) {
  const struct cuvil_sincos sc = cuvil_sincos_reduce(x);
  const float v = (sc.q & 1u) ? sc.s : sc.c;
  return cuvil_clampf(((sc.q + 1u) & 2u) ? -v : v, -1.0f, 1.0f);
}

/* tan = sin / cos of the reduced argument, or -cos / sin in odd quadrants. */
CUVIL_MATH_INLINE float cuvil_tanf(float x) {
  const struct cuvil_sincos sc = cuvil_sincos_reduce(x);
  return (sc.q & 1u) ? -sc.c / sc.s : sc.s / sc.c;
}

/* pi/2 and pi/4 as float head + tail. */
#define CUVIL_PIO2_HI 0x1.921fb6p+0f
#define CUVIL_PIO2_LO -0x1.777a5cp-25f
#define CUVIL_PIO4_HI 0x1.921fb6p-1f
#define CUVIL_PIO4_LO -0x1.777a5cp-26f

/*
 * atan, odd, computed for a = |x| reduced to |t| <= tan(pi/8):
 *   a > tan(3pi/8): atan(a) = pi/2 + atan(-1/a),
 *   a > tan(pi/8):  atan(a) = pi/4 + atan((a - 1) / (a + 1)),
 * and atan(t) = t + t^3 P(t^2), P a degree-4 fit. atan(+-inf) = +-pi/2.
 */
CUVIL_MATH_INLINE float cuvil_atanf(float x) {
  const float a = __builtin_fabsf(x);
  const int big = a > 2.414213562f, mid = a > 0.414213562f;
  float t = mid ? (a - 1.0f) / (a + 1.0f) : a;
  t = big ? -1.0f / a : t;
  const float hi = big ? CUVIL_PIO2_HI : mid ? CUVIL_PIO4_HI : 0.0f;
  const float lo = big ? CUVIL_PIO2_LO : mid ? CUVIL_PIO4_LO : 0.0f;
  const float z = t * t;
  float p = -6.083453074e-02f;
  p = p * z + 1.059600115e-01f;
  p = p * z - 1.424384862e-01f;
  p = p * z + 1.999848932e-01f;
  p = p * z - 3.333331645e-01f;
  const float r = hi + (lo + (t + t * z * p));
  return __builtin_copysignf(r, x);
}

/* asin(s) = s + s^3 P(s^2) for |s| <= 1/2, P a degree-5 fit. */
CUVIL_MATH_INLINE float cuvil_asin_poly(float s, float z) {
  float p = 3.756521270e-02f;
  p = p * z + 1.440259814e-02f;
  p = p * z + 3.181761503e-02f;
  p = p * z + 4.451572150e-02f;
  p = p * z + 7.500510663e-02f;
  p = p * z + 1.666665971e-01f;
  return s + s * z * p;
}

/*
 * asin, odd, for a = |x|: the polynomial up to 1/2, above it
 * asin(a) = pi/2 - 2 asin(s), s = sqrt((1 - a) / 2) <= 1/2 (1 - a is exact).
 * |x| > 1 gives NaN (the square root of a negative number).
 */
CUVIL_MATH_INLINE float cuvil_asinf(float x) {
  const float a = __builtin_fabsf(x);
  const float w = 0.5f * (1.0f - a);
  const float s = __builtin_sqrtf(w);
  const int small = a <= 0.5f;
  const float z = small ? a * a : w;
  const float p = cuvil_asin_poly(small ? a : s, z);
  const float large = CUVIL_PIO2_HI + (CUVIL_PIO2_LO - 2.0f * p);
  return __builtin_copysignf(small ? p : large, x);
}

/*
 * acos(x) = pi/2 - asin(x) for |x| <= 1/2; above, with s = sqrt((1 - |x|)/2),
 * acos(x) = 2 asin(s) for x > 0 and pi - 2 asin(s) for x < 0.
 */
CUVIL_MATH_INLINE float cuvil_acosf(float x) {
  const float a = __builtin_fabsf(x);
  const float w = 0.5f * (1.0f - a);
  const float s = __builtin_sqrtf(w);
  const int small = a <= 0.5f;
  const float z = small ? x * x : w;
  const float p = cuvil_asin_poly(small ? x : s, z);
  const float mid = CUVIL_PIO2_HI + (CUVIL_PIO2_LO - p);
  const float neg = 2.0f * CUVIL_PIO2_HI + (2.0f * CUVIL_PIO2_LO - 2.0f * p);
  const float pos = 2.0f * p;
  return small ? mid : x < 0.0f ? neg : pos;
}

/* ---- Hyperbolic functions
 * ---------------------------------------------------- */

/*
 * sinh, odd, for a = |x|: a + a^3 P(a^2) below 1 (P a degree-3 fit), else
 * e^a / 2 - e^-a / 2 from h = e^(a/2), so that results up to the float
 * limit (a ~ 89.4) do not overflow on the way.
 */
CUVIL_MATH_INLINE float cuvil_sinhf(float x) {
  const float a = __builtin_fabsf(x);
  const float z = a * a;
  float p = 2.817439508e-06f;
  p = p * z + 1.983606635e-04f;
  p = p * z + 8.333350532e-03f;
  p = p * z + 1.666666716e-01f;
  const float small = a + a * z * p;
  const float h = cuvil_expf(0.5f * a);
  const float large = (0.5f * h) * h - 0.5f / (h * h);
  return __builtin_copysignf(a < 1.0f ? small : large, x);
}

/* cosh(x) = e^|x| / 2 + e^-|x| / 2, with h = e^(|x|/2) as in sinh. */
CUVIL_MATH_INLINE float cuvil_coshf(float x) {
  const float h = cuvil_expf(0.5f * __builtin_fabsf(x));
  return (0.5f * h) * h + 0.5f / (h * h);
}

/*
 * asinh, odd, for a = |x|: log1p(a + a^2 / (1 + sqrt(1 + a^2))) (no
 * cancellation near 0); from 2^12 on, log(a) + ln 2 (the neglected term is
 * below 2^-26 relative).
 */
CUVIL_MATH_INLINE float cuvil_asinhf(float x) {
  const float a = __builtin_fabsf(x);
  const float z = a * a;
  const float small = cuvil_log1pf(a + z / (1.0f + __builtin_sqrtf(1.0f + z)));
  const float large = cuvil_logf(a) + 0x1.62e430p-1f;
  return __builtin_copysignf(a < 0x1p12f ? small : large, x);
}

/*
 * acosh(x) for x >= 1: with t = x - 1 (exact below 2), log1p(t + sqrt(2t +
 * t^2)); from 2^12 on, log(x) + ln 2. x < 1 gives NaN.
 */
CUVIL_MATH_INLINE float cuvil_acoshf(float x) {
  const float t = x - 1.0f;
  const float small = cuvil_log1pf(t + __builtin_sqrtf(2.0f * t + t * t));
  const float large = cuvil_logf(x) + 0x1.62e430p-1f;
  const float r = x < 0x1p12f ? small : large;
  return x < 1.0f ? __builtin_nanf("") : r;
}

/* atanh, odd: atanh(a) = log1p(2a / (1 - a)) / 2; +-1 gives +-inf, |x| > 1
 * NaN. */
CUVIL_MATH_INLINE float cuvil_atanhf(float x) {
  const float a = __builtin_fabsf(x);
  const float r = 0.5f * cuvil_log1pf((2.0f * a) / (1.0f - a));
  return __builtin_copysignf(a > 1.0f ? __builtin_nanf("") : r, x);
}

#endif /* CUVIL_KERNELS_MATH_H */
