/* Reference convolutions: 2-D and 3-D Conv (grouped, depthwise included,
 * strided, dilated, zero padded) and ConvTranspose (1-D to 3-D). */
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

/* Adds one input plane xc [h, wd] convolved with one weight plane wc
 * [kh, kw] to the output plane yc [oh, ow]: one weight at a time over the
 * whole output plane, the innermost loop running along an output row.
 * Inlined into the 2-D and 3-D kernels (constant geometry folds away). */
static inline void conv_plane_acc(const float *xc, const float *wc, float *yc,
                                  int64_t h, int64_t wd, int64_t kh, int64_t kw,
                                  int64_t oh, int64_t ow, int64_t stride_h,
                                  int64_t stride_w, int64_t dil_h,
                                  int64_t dil_w, int64_t pad_top,
                                  int64_t pad_left) {
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

static void fill_f32(float *y, int64_t n, float v) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = v;
}

static void clamp_f32(float *y, int64_t n, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = cuvil_clampf(y[i], lo, hi);
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
      fill_f32(yc, oh * ow, bias ? bias[oc] : 0.0f);
      for (int64_t ic = 0; ic < cg; ++ic)
        conv_plane_acc(x + (b * c + g * cg + ic) * h * wd,
                       w + (oc * cg + ic) * kh * kw, yc, h, wd, kh, kw, oh, ow,
                       stride_h, stride_w, dil_h, dil_w, pad_top, pad_left);
      clamp_f32(yc, oh * ow, act_lo, act_hi);
    }
  }
}

void cuvil_k_conv3d_f32(const float *x, const float *w, const float *bias,
                        float *y, int64_t n, int64_t c, int64_t m,
                        const int64_t *in, const int64_t *k, const int64_t *out,
                        const int64_t *stride, const int64_t *dil,
                        const int64_t *pad, int64_t group, float act_lo,
                        float act_hi) {
  const int64_t cg = c / group, mg = m / group;
  const int64_t in_plane = in[1] * in[2], k_plane = k[1] * k[2];
  const int64_t out_plane = out[1] * out[2];
  const int64_t in_vol = in[0] * in_plane, k_vol = k[0] * k_plane;
  const int64_t out_vol = out[0] * out_plane;

  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oc = 0; oc < m; ++oc) {
      const int64_t g = oc / mg;
      float *yc = y + (b * m + oc) * out_vol;
      fill_f32(yc, out_vol, bias ? bias[oc] : 0.0f);
      for (int64_t ic = 0; ic < cg; ++ic) {
        const float *xc = x + (b * c + g * cg + ic) * in_vol;
        const float *wc = w + (oc * cg + ic) * k_vol;
        /* A 3-D window is a sum of 2-D windows, one per depth tap. */
        for (int64_t kz = 0; kz < k[0]; ++kz) {
          const int64_t iz_off = kz * dil[0] - pad[0];
          const int64_t oz_end = end_inside(iz_off, stride[0], in[0], out[0]);
          for (int64_t oz = first_inside(iz_off, stride[0]); oz < oz_end; ++oz)
            conv_plane_acc(xc + (oz * stride[0] + iz_off) * in_plane,
                           wc + kz * k_plane, yc + oz * out_plane, in[1], in[2],
                           k[1], k[2], out[1], out[2], stride[1], stride[2],
                           dil[1], dil[2], pad[1], pad[2]);
        }
      }
      clamp_f32(yc, out_vol, act_lo, act_hi);
    }
  }
}

void cuvil_k_convtranspose3d_f32(const float *x, const float *w,
                                 const float *bias, float *y, int64_t n,
                                 int64_t c, int64_t m, const int64_t *in,
                                 const int64_t *k, const int64_t *out,
                                 const int64_t *stride, const int64_t *dil,
                                 const int64_t *pad, int64_t group) {
  const int64_t cg = c / group, mg = m / group;
  const int64_t in_vol = in[0] * in[1] * in[2];
  const int64_t k_vol = k[0] * k[1] * k[2];
  const int64_t out_vol = out[0] * out[1] * out[2];

  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oc = 0; oc < m; ++oc) {
      const int64_t g = oc / mg;
      float *yc = y + (b * m + oc) * out_vol;
      fill_f32(yc, out_vol, bias ? bias[oc] : 0.0f);
      for (int64_t icg = 0; icg < cg; ++icg) {
        const int64_t ic = g * cg + icg;
        const float *xc = x + (b * c + ic) * in_vol;
        const float *wc = w + (ic * mg + oc - g * mg) * k_vol;
        /* Input element i of a dimension feeds output i * stride + off
         * through tap t (off = t * dil - pad): the same index relation as
         * Conv with input and output swapped, so the same range helpers
         * give the input indices whose output lies inside. */
        for (int64_t kz = 0; kz < k[0]; ++kz) {
          const int64_t z_off = kz * dil[0] - pad[0];
          const int64_t iz_end = end_inside(z_off, stride[0], out[0], in[0]);
          for (int64_t ky = 0; ky < k[1]; ++ky) {
            const int64_t y_off = ky * dil[1] - pad[1];
            const int64_t iy_end = end_inside(y_off, stride[1], out[1], in[1]);
            for (int64_t kx = 0; kx < k[2]; ++kx) {
              const int64_t x_off = kx * dil[2] - pad[2];
              const int64_t ix_begin = first_inside(x_off, stride[2]);
              const int64_t ix_end =
                  end_inside(x_off, stride[2], out[2], in[2]);
              const float wv = wc[(kz * k[1] + ky) * k[2] + kx];
              for (int64_t iz = first_inside(z_off, stride[0]); iz < iz_end;
                   ++iz)
                for (int64_t iy = first_inside(y_off, stride[1]); iy < iy_end;
                     ++iy) {
                  const float *xr = xc + (iz * in[1] + iy) * in[2];
                  float *yr = yc +
                              ((iz * stride[0] + z_off) * out[1] +
                               iy * stride[1] + y_off) *
                                  out[2] +
                              x_off;
                  for (int64_t ix = ix_begin; ix < ix_end; ++ix)
                    yr[ix * stride[2]] += wv * xr[ix];
                }
            }
          }
        }
      }
    }
  }
}
