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
    y[i] = (v > 0.0f ? v : 0.0f) +
           cuvil_log1pf(cuvil_expf(-__builtin_fabsf(v)));
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

