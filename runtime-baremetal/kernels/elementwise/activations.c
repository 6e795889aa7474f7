/* Reference kernels of the parameterised ONNX activations, over n dense
 * elements, in place (y == x allowed), with branch-free bodies so the loops
 * vectorise. PRelu broadcasts its slope like the binary kernels. */
#include "cuvil/kernels.h"

#include "../math.h"

void cuvil_k_leaky_relu_f32(const float *x, float *y, int64_t n, float alpha) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] < 0.0f ? alpha * x[i] : x[i];
}

void cuvil_k_elu_f32(const float *x, float *y, int64_t n, float alpha) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] < 0.0f ? alpha * cuvil_expm1f(x[i]) : x[i];
}

void cuvil_k_selu_f32(const float *x, float *y, int64_t n, float alpha,
                      float gamma) {
  const float ag = alpha * gamma;
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] <= 0.0f ? ag * cuvil_expm1f(x[i]) : gamma * x[i];
}

/* max(0, x) + min(0, alpha * (e^(x / alpha) - 1)). */
void cuvil_k_celu_f32(const float *x, float *y, int64_t n, float alpha) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] < 0.0f ? alpha * cuvil_expm1f(x[i] / alpha) : x[i];
}

void cuvil_k_hard_sigmoid_f32(const float *x, float *y, int64_t n, float alpha,
                              float beta) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = cuvil_clampf(alpha * x[i] + beta, 0.0f, 1.0f);
}

/* x * HardSigmoid(x) with alpha = 1/6, beta = 1/2. */
void cuvil_k_hard_swish_f32(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] * cuvil_clampf(x[i] * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f);
}

/* log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow, no cancellation. */
void cuvil_k_softplus_f32(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] =
        (v > 0.0f ? v : 0.0f) + cuvil_log1pf(cuvil_expf(-__builtin_fabsf(v)));
  }
}

void cuvil_k_softsign_f32(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] / (1.0f + __builtin_fabsf(x[i]));
}

void cuvil_k_thresholded_relu_f32(const float *x, float *y, int64_t n,
                                  float alpha) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] > alpha ? x[i] : 0.0f;
}

/* Gelu (opset 20), approximate = "none": x * (1 + erf(x / sqrt 2)) / 2 (a
 * NaN x gives NaN through the product, whatever erf returns). */
void cuvil_k_gelu_f32(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = 0.5f * x[i] *
           (1.0f + cuvil_erff_nan_scaled(x[i] * 0.70710678118654752f));
}

/* Gelu, approximate = "tanh": x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715
 * x^3))) / 2. */
void cuvil_k_gelu_tanh_f32(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float u = 0.79788456080286536f * (v + 0.044715f * v * v * v);
    y[i] = 0.5f * v * (1.0f + cuvil_tanhf(u));
  }
}

/* Mish (opset 18): x * tanh(softplus(x)), softplus as in
 * cuvil_k_softplus_f32. */
void cuvil_k_mish_f32(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float sp =
        (v > 0.0f ? v : 0.0f) + cuvil_log1pf(cuvil_expf(-__builtin_fabsf(v)));
    y[i] = v * cuvil_tanhf(sp);
  }
}
