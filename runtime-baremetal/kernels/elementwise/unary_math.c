/* Reference element-wise math kernels: one loop per ONNX unary operator over
 * n dense elements. Every float kernel works in place (y == x); the bodies
 * are branch-free, so the loops vectorise. */
#include "cuvil/kernels.h"

#include "../math.h"

/* Defines cuvil_k_<name>_f32 computing y[i] = EXPR with v = x[i]. */
#define CUVIL_UNARY_F32(name, expr)                                            \
  void cuvil_k_##name##_f32(const float *x, float *y, int64_t n) {             \
    for (int64_t i = 0; i < n; ++i) {                                          \
      const float v = x[i];                                                    \
      y[i] = (expr);                                                           \
    }                                                                          \
  }

CUVIL_UNARY_F32(abs, __builtin_fabsf(v))
CUVIL_UNARY_F32(neg, -v)
CUVIL_UNARY_F32(exp, cuvil_expf(v))
CUVIL_UNARY_F32(log, cuvil_logf(v))
CUVIL_UNARY_F32(sqrt, __builtin_sqrtf(v))
CUVIL_UNARY_F32(reciprocal, 1.0f / v)
CUVIL_UNARY_F32(floor, cuvil_floorf(v))
CUVIL_UNARY_F32(ceil, cuvil_ceilf(v))
CUVIL_UNARY_F32(round, cuvil_roundevenf(v))
/* 1, -1, or v itself for +-0 and NaN. */
CUVIL_UNARY_F32(sign, v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v)
CUVIL_UNARY_F32(sin, cuvil_sinf(v))
CUVIL_UNARY_F32(cos, cuvil_cosf(v))
CUVIL_UNARY_F32(tan, cuvil_tanf(v))
CUVIL_UNARY_F32(asin, cuvil_asinf(v))
CUVIL_UNARY_F32(acos, cuvil_acosf(v))
CUVIL_UNARY_F32(atan, cuvil_atanf(v))
CUVIL_UNARY_F32(sinh, cuvil_sinhf(v))
CUVIL_UNARY_F32(cosh, cuvil_coshf(v))
CUVIL_UNARY_F32(asinh, cuvil_asinhf(v))
CUVIL_UNARY_F32(acosh, cuvil_acoshf(v))
CUVIL_UNARY_F32(atanh, cuvil_atanhf(v))
CUVIL_UNARY_F32(erf, cuvil_erff(v))

void cuvil_k_isnan_f32(const float *x, uint8_t *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] != x[i];
}

void cuvil_k_isinf_f32(const float *x, uint8_t *y, int64_t n,
                       int64_t detect_negative, int64_t detect_positive) {
  const float lo = detect_negative ? -__builtin_inff() : __builtin_nanf("");
  const float hi = detect_positive ? __builtin_inff() : __builtin_nanf("");
  for (int64_t i = 0; i < n; ++i)
    y[i] = (x[i] == lo) | (x[i] == hi);
}

void cuvil_k_not_bool(const uint8_t *x, uint8_t *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] == 0;
}
