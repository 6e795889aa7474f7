/* Reference LpPool over 1 to 3 spatial dimensions (geometry arrays as in
 * pool_nd.c): y = (sum over the window's real elements of |x|^p)^(1/p).
 * Padding contributes 0, as in ONNX. p is an integer >= 1: the power is
 * repeated multiplication, the root sqrt for p = 2, exp(log(s) / p) else. */
#include "cuvil/kernels.h"

#include "../math.h"

static inline __attribute__((always_inline)) float lp_pow(float a, int64_t p) {
  float r = a;
  for (int64_t i = 1; i < p; ++i)
    r *= a;
  return r;
}

static inline __attribute__((always_inline)) float lp_root(float s, int64_t p) {
  if (p == 1)
    return s;
  if (p == 2)
    return __builtin_sqrtf(s);
  return s > 0.0f ? cuvil_expf(cuvil_logf(s) / (float)p) : 0.0f;
}

void cuvil_k_lppool3d_f32(const float *x, float *y, int64_t nc,
                          const int64_t *in, const int64_t *out,
                          const int64_t *k, const int64_t *stride,
                          const int64_t *dil, const int64_t *pad, int64_t p) {
  const int64_t in_vol = in[0] * in[1] * in[2];
  const int64_t out_vol = out[0] * out[1] * out[2];
  for (int64_t c = 0; c < nc; ++c) {
    const float *xp = x + c * in_vol;
    int64_t o = c * out_vol;
    for (int64_t oz = 0; oz < out[0]; ++oz)
      for (int64_t oy = 0; oy < out[1]; ++oy)
        for (int64_t ox = 0; ox < out[2]; ++ox, ++o) {
          float sum = 0.0f;
          for (int64_t kz = 0; kz < k[0]; ++kz) {
            const int64_t iz = oz * stride[0] - pad[0] + kz * dil[0];
            if (iz < 0 || iz >= in[0])
              continue;
            for (int64_t ky = 0; ky < k[1]; ++ky) {
              const int64_t iy = oy * stride[1] - pad[1] + ky * dil[1];
              if (iy < 0 || iy >= in[1])
                continue;
              for (int64_t kx = 0; kx < k[2]; ++kx) {
                const int64_t ix = ox * stride[2] - pad[2] + kx * dil[2];
                if (ix < 0 || ix >= in[2])
                  continue;
                sum += lp_pow(
                    __builtin_fabsf(xp[(iz * in[1] + iy) * in[2] + ix]), p);
              }
            }
          }
          y[o] = lp_root(sum, p);
        }
  }
}
