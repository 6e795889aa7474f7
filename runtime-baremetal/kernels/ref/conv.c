/* Reference 2-D convolution: NCHW, grouped (depthwise included), strided,
 * dilated, zero padded. */
#include "cuvil/kernels.h"

#include "../math.h"

/* For output index o the input index is o * stride + off. These give the
 * range [first_inside, end_inside) of output indices whose input index lies
 * in [0, size), so the innermost loop needs no bounds checks. */
static int64_t first_inside(int64_t off, int64_t stride) {
  return off >= 0 ? 0 : (stride - 1 - off) / stride;
}

static int64_t end_inside(int64_t off, int64_t stride, int64_t size,
                          int64_t out) {
  const int64_t end = off >= size ? 0 : (size - off + stride - 1) / stride;
  return end < out ? end : out;
}

void cuvil_k_conv2d_f32(const float *x, const float *w, const float *bias,
                        float *y, int64_t n, int64_t c, int64_t h, int64_t wd,
                        int64_t m, int64_t kh, int64_t kw, int64_t oh,
                        int64_t ow, int64_t stride_h, int64_t stride_w,
                        int64_t dil_h, int64_t dil_w, int64_t pad_top,
                        int64_t pad_left, int64_t group, float act_lo,
                        float act_hi) {
  const int64_t cg = c / group; /* input channels per group */
  const int64_t mg = m / group; /* output channels per group */

  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oc = 0; oc < m; ++oc) {
      const int64_t g = oc / mg;
      float *yc = y + (b * m + oc) * oh * ow;
      const float init = bias ? bias[oc] : 0.0f;
      for (int64_t i = 0; i < oh * ow; ++i)
        yc[i] = init;

      /* Accumulate one weight at a time over the whole output plane:
       * the innermost loop runs along an output row. */
      for (int64_t ic = 0; ic < cg; ++ic) {
        const float *xc = x + (b * c + g * cg + ic) * h * wd;
        const float *wc = w + (oc * cg + ic) * kh * kw;
        for (int64_t ky = 0; ky < kh; ++ky) {
          const int64_t iy_off = ky * dil_h - pad_top;
          const int64_t oy_begin = first_inside(iy_off, stride_h);
          const int64_t oy_end = end_inside(iy_off, stride_h, h, oh);
          for (int64_t kx = 0; kx < kw; ++kx) {
            const int64_t ix_off = kx * dil_w - pad_left;
            const int64_t ox_begin = first_inside(ix_off, stride_w);
            const int64_t ox_end = end_inside(ix_off, stride_w, wd, ow);
            const float wv = wc[ky * kw + kx];
            for (int64_t oy = oy_begin; oy < oy_end; ++oy) {
              const float *xr = xc + (oy * stride_h + iy_off) * wd;
              float *yr = yc + oy * ow;
              for (int64_t ox = ox_begin; ox < ox_end; ++ox)
                yr[ox] += wv * xr[ox * stride_w + ix_off];
            }
          }
        }
      }

      for (int64_t i = 0; i < oh * ow; ++i)
        yc[i] = cuvil_clampf(yc[i], act_lo, act_hi);
    }
  }
}
