/*
 * Freestanding float math for the kernels: exp, log, tanh, sigmoid and erf
 * without libm, plus the clamp used for fused activations.
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
 */
CUVIL_MATH_INLINE float cuvil_expf(float x) {
  /* Below -104 the result rounds to 0, above 89 it overflows; clamping
   * bounds n to [-151, 128] and the scaling below still produces the 0 or
   * inf. Compares, not fminf/fmaxf, so that NaN passes through. */
  x = x > 89.0f ? 89.0f : x;
  x = x < -104.0f ? -104.0f : x;

  /* Adding 1.5 * 2^23 rounds x / ln 2 to an integer n and leaves n in the
   * low significand bits of t (exact while |n| < 2^22). */
  const float shift = 0x1.8p23f;
  const float t = x * 0x1.715476p+0f + shift;
  const float fn = t - shift;
  /* Unsigned subtraction: no overflow even for the bits of a NaN t (whose
   * result is NaN whatever n is). */
  const int32_t n = (int32_t)(cuvil_f32_bits(t) - cuvil_f32_bits(shift));

  /* The first product is exact, so r carries only LN2_LO's rounding. */
  float r = x - fn * CUVIL_LN2_HI;
  r = r - fn * CUVIL_LN2_LO;

  float q = 1.39261759e-3f;
  q = q * r + 8.36317334e-3f;
  q = q * r + 4.16665561e-2f;
  q = q * r + 1.66665778e-1f;
  q = q * r + 0.5f;
  const float p = 1.0f + (r + r * r * q);

  /* Scale by 2^n as 2^(n/2) * 2^(n - n/2): both factors stay normal for
   * n in [-151, 128], and the last multiply rounds once into the
   * subnormals, or overflows to inf. */
  const int32_t n1 = n / 2;
  return p * cuvil_pow2i(n1) * cuvil_pow2i(n - n1);
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
  const float large = 1.0f - 2.0f / (cuvil_expf(2.0f * a) + 1.0f);
  return __builtin_copysignf(a < 0.55f ? small : large, x);
}

/* sigmoid(x) = 1 / (1 + e^-x): 1 when e^-x underflows, 0 when it overflows;
 * no cancellation anywhere. */
CUVIL_MATH_INLINE float cuvil_sigmoidf(float x) {
  return 1.0f / (1.0f + cuvil_expf(-x));
}

/*
 * erf, odd, computed for a = |x|. For a < 0.875, erf(a) = a + a S(a^2), S a
 * degree-5 fit (the leading a is exact, S(0) = 2/sqrt(pi) - 1 is small).
 * Above, erf(a) = 1 - e^(-a^2) H(t) with t = 1 / (1 + a/2): erfc(a) e^(a^2)
 * is smooth and slowly varying in t, H is a degree-6 fit of it for a in
 * [0.875, 4]; past a = 3.92 the result rounds to 1.
 */
CUVIL_MATH_INLINE float cuvil_erff(float x) {
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
  const float large = 1.0f - cuvil_expf(-u) * h;

  return __builtin_copysignf(a < 0.875f ? small : large, x);
}

#endif /* CUVIL_KERNELS_MATH_H */
