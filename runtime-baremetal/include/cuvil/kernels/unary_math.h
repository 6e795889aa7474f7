/* cuvil kernels: Unary math and parameterised activations.
 * Part of cuvil/kernels.h, which includes it inside its extern "C" block
 * after the shared definitions; include cuvil/kernels.h, not this file. */
#ifndef CUVIL_KERNELS_UNARY_MATH_H
#define CUVIL_KERNELS_UNARY_MATH_H

#ifndef CUVIL_KERNELS_H
#error "include cuvil/kernels.h instead"
#endif

/* ---- Unary math and parameterised activations (unary_math.c,
 * activations.c) -------------------------------------------------------- */

/* y[i] = op(x[i]) for i < n; in place (y == x allowed). round is half to
 * even; sign gives +-1, or x itself for +-0 and NaN. */
void cuvil_k_abs_f32(const float *x, float *y, int64_t n);
void cuvil_k_neg_f32(const float *x, float *y, int64_t n);
void cuvil_k_exp_f32(const float *x, float *y, int64_t n);
void cuvil_k_log_f32(const float *x, float *y, int64_t n);
void cuvil_k_sqrt_f32(const float *x, float *y, int64_t n);
void cuvil_k_reciprocal_f32(const float *x, float *y, int64_t n);
void cuvil_k_floor_f32(const float *x, float *y, int64_t n);
void cuvil_k_ceil_f32(const float *x, float *y, int64_t n);
void cuvil_k_round_f32(const float *x, float *y, int64_t n);
void cuvil_k_sign_f32(const float *x, float *y, int64_t n);
void cuvil_k_sin_f32(const float *x, float *y, int64_t n);
void cuvil_k_cos_f32(const float *x, float *y, int64_t n);
void cuvil_k_tan_f32(const float *x, float *y, int64_t n);
void cuvil_k_asin_f32(const float *x, float *y, int64_t n);
void cuvil_k_acos_f32(const float *x, float *y, int64_t n);
void cuvil_k_atan_f32(const float *x, float *y, int64_t n);
void cuvil_k_sinh_f32(const float *x, float *y, int64_t n);
void cuvil_k_cosh_f32(const float *x, float *y, int64_t n);
void cuvil_k_asinh_f32(const float *x, float *y, int64_t n);
void cuvil_k_acosh_f32(const float *x, float *y, int64_t n);
void cuvil_k_atanh_f32(const float *x, float *y, int64_t n);
void cuvil_k_erf_f32(const float *x, float *y, int64_t n);
/* Bool results (one byte, 0 or 1); not in place (y is narrower than x). */
void cuvil_k_isnan_f32(const float *x, uint8_t *y, int64_t n);
/* x == -inf counts when detect_negative != 0, +inf when detect_positive. */
void cuvil_k_isinf_f32(const float *x, uint8_t *y, int64_t n,
                       int64_t detect_negative, int64_t detect_positive);
/* Logical not of bools (0 or 1); in place. */
void cuvil_k_not_bool(const uint8_t *x, uint8_t *y, int64_t n);

/* Activations with the ONNX attributes as parameters; in place. */
void cuvil_k_leaky_relu_f32(const float *x, float *y, int64_t n, float alpha);
void cuvil_k_elu_f32(const float *x, float *y, int64_t n, float alpha);
void cuvil_k_selu_f32(const float *x, float *y, int64_t n, float alpha,
                      float gamma);
void cuvil_k_celu_f32(const float *x, float *y, int64_t n, float alpha);
void cuvil_k_hard_sigmoid_f32(const float *x, float *y, int64_t n, float alpha,
                              float beta);
void cuvil_k_hard_swish_f32(const float *x, float *y, int64_t n);
void cuvil_k_softplus_f32(const float *x, float *y, int64_t n);
void cuvil_k_softsign_f32(const float *x, float *y, int64_t n);
void cuvil_k_thresholded_relu_f32(const float *x, float *y, int64_t n,
                                  float alpha);
/* Gelu (erf form, and approximate = "tanh") and Mish; in place. */
void cuvil_k_gelu_f32(const float *x, float *y, int64_t n);
void cuvil_k_gelu_tanh_f32(const float *x, float *y, int64_t n);
void cuvil_k_mish_f32(const float *x, float *y, int64_t n);
/* y = x < 0 ? slope * x : x, slope broadcast to x's shape: the shape and
 * stride arrays are those of the broadcast binary kernels (y may alias x). */
void cuvil_k_prelu_f32(const float *x, const float *slope, float *y,
                       const int64_t *shape, const int64_t *x_str,
                       const int64_t *slope_str);

#endif /* CUVIL_KERNELS_UNARY_MATH_H */
