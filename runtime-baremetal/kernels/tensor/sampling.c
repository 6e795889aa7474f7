/* Reference GridSample (4-D, the semantics of PyTorch's grid_sample that
 * ONNX adopts) and RoiAlign (average pooling of bilinear samples). */
#include "cuvil/kernels.h"

static float floor_f(float v) { return __builtin_floorf(v); }
static float abs_f(float v) { return v < 0 ? -v : v; }

/* Grid coordinate in [-1, 1] to a pixel coordinate of an axis of n pixels. */
static float unnormalize(float g, int64_t n, int64_t align_corners) {
  return align_corners ? (g + 1) / 2 * (float)(n - 1)
                       : ((g + 1) * (float)n - 1) / 2;
}

/* Reflects v into [lo2 / 2, hi2 / 2] (bounds given doubled so that they stay
 * integral), folding as often as needed. */
static float reflect(float v, int64_t lo2, int64_t hi2) {
  if (lo2 == hi2)
    return 0;
  const float lo = (float)lo2 / 2, span = (float)(hi2 - lo2) / 2;
  v = abs_f(v - lo);
  const float flips = floor_f(v / span);
  const float extra = v - flips * span;
  const int64_t odd = (int64_t)flips & 1;
  return odd ? span - extra + lo : extra + lo;
}

static float clamp_f(float v, float lo, float hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* Padding applied to a coordinate along an axis of n pixels. */
static float pad_coord(float v, int64_t n, int64_t padding,
                       int64_t align_corners) {
  if (padding == CUVIL_GRID_PAD_BORDER)
    return clamp_f(v, 0, (float)(n - 1));
  if (padding == CUVIL_GRID_PAD_REFLECTION) {
    v = align_corners ? reflect(v, 0, 2 * (n - 1)) : reflect(v, -1, 2 * n - 1);
    return clamp_f(v, 0, (float)(n - 1));
  }
  return v;
}

/* Pixel (r, c) of an h x w plane; 0 outside it. */
static float pixel(const float *p, int64_t h, int64_t w, int64_t r, int64_t c) {
  return r >= 0 && r < h && c >= 0 && c < w ? p[r * w + c] : 0;
}

static void cubic_coeffs(float t, float *k) {
  const float a = -0.75f;
  const float t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
  k[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
  k[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  k[2] = ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1;
  k[3] = ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a;
}

static float sample(const float *p, int64_t h, int64_t w, float x, float y,
                    int64_t mode, int64_t padding, int64_t align_corners) {
  if (mode == CUVIL_GRID_CUBIC) {
    /* Bicubic pads each of the 16 taps, not the sampling point. */
    const float x0 = floor_f(x), y0 = floor_f(y);
    float kx[4], ky[4];
    cubic_coeffs(x - x0, kx);
    cubic_coeffs(y - y0, ky);
    float acc = 0;
    for (int64_t i = 0; i < 4; ++i) {
      const float ty = pad_coord(y0 - 1 + (float)i, h, padding, align_corners);
      float row = 0;
      for (int64_t j = 0; j < 4; ++j) {
        const float tx =
            pad_coord(x0 - 1 + (float)j, w, padding, align_corners);
        row += kx[j] * pixel(p, h, w, (int64_t)ty, (int64_t)tx);
      }
      acc += ky[i] * row;
    }
    return acc;
  }
  x = pad_coord(x, w, padding, align_corners);
  y = pad_coord(y, h, padding, align_corners);
  if (mode == CUVIL_GRID_NEAREST)
    return pixel(p, h, w, (int64_t)__builtin_roundevenf(y),
                 (int64_t)__builtin_roundevenf(x));
  const float x0 = floor_f(x), y0 = floor_f(y);
  const float lx = x - x0, ly = y - y0;
  const int64_t c0 = (int64_t)x0, r0 = (int64_t)y0;
  return (1 - ly) * ((1 - lx) * pixel(p, h, w, r0, c0) +
                     lx * pixel(p, h, w, r0, c0 + 1)) +
         ly * ((1 - lx) * pixel(p, h, w, r0 + 1, c0) +
               lx * pixel(p, h, w, r0 + 1, c0 + 1));
}

void cuvil_k_grid_sample_f32(const float *x, const float *grid, float *y,
                             int64_t n, int64_t c, int64_t h, int64_t w,
                             int64_t oh, int64_t ow, int64_t mode,
                             int64_t padding, int64_t align_corners) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t k = 0; k < c; ++k) {
      const float *p = x + (b * c + k) * h * w;
      float *out = y + (b * c + k) * oh * ow;
      const float *g = grid + b * oh * ow * 2;
      for (int64_t i = 0; i < oh * ow; ++i) {
        const float sx = unnormalize(g[2 * i], w, align_corners);
        const float sy = unnormalize(g[2 * i + 1], h, align_corners);
        out[i] = sample(p, h, w, sx, sy, mode, padding, align_corners);
      }
    }
}

/* RoiAlign's bilinear sample at (y, x): 0 well outside the plane, edge
 * values just outside it. */
static float roi_sample(const float *p, int64_t h, int64_t w, float y,
                        float x) {
  if (y < -1.0f || y > (float)h || x < -1.0f || x > (float)w)
    return 0;
  y = y <= 0 ? 0 : y;
  x = x <= 0 ? 0 : x;
  int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
  if (y0 >= h - 1) {
    y0 = y1 = h - 1;
    y = (float)y0;
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= w - 1) {
    x0 = x1 = w - 1;
    x = (float)x0;
  } else {
    x1 = x0 + 1;
  }
  const float ly = y - (float)y0, lx = x - (float)x0;
  const float hy = 1 - ly, hx = 1 - lx;
  return hy * hx * p[y0 * w + x0] + hy * lx * p[y0 * w + x1] +
         ly * hx * p[y1 * w + x0] + ly * lx * p[y1 * w + x1];
}

void cuvil_k_roi_align_f32(const float *x, const float *rois,
                           const int64_t *batch_indices, float *y, int64_t n,
                           int64_t c, int64_t h, int64_t w, int64_t num_rois,
                           int64_t oh, int64_t ow, int64_t sampling_ratio,
                           float spatial_scale, int64_t half_pixel) {
  const float offset = half_pixel ? 0.5f : 0.0f;
  for (int64_t r = 0; r < num_rois; ++r) {
    const float *roi = rois + r * 4;
    int64_t b = batch_indices[r];
    b = b < 0 ? 0 : b >= n ? n - 1 : b;
    const float x0 = roi[0] * spatial_scale - offset;
    const float y0 = roi[1] * spatial_scale - offset;
    float rw = roi[2] * spatial_scale - offset - x0;
    float rh = roi[3] * spatial_scale - offset - y0;
    if (!half_pixel) { /* legacy: RoIs at least 1 x 1 */
      rw = rw < 1 ? 1 : rw;
      rh = rh < 1 ? 1 : rh;
    }
    const float bh = rh / (float)oh, bw = rw / (float)ow;
    const int64_t gh =
        sampling_ratio > 0 ? sampling_ratio : (int64_t)__builtin_ceilf(bh);
    const int64_t gw =
        sampling_ratio > 0 ? sampling_ratio : (int64_t)__builtin_ceilf(bw);
    const float count = (float)(gh * gw > 1 ? gh * gw : 1);
    for (int64_t k = 0; k < c; ++k) {
      const float *p = x + (b * c + k) * h * w;
      float *out = y + (r * c + k) * oh * ow;
      for (int64_t py = 0; py < oh; ++py)
        for (int64_t px = 0; px < ow; ++px) {
          float acc = 0;
          for (int64_t iy = 0; iy < gh; ++iy) {
            const float sy =
                y0 + (float)py * bh + ((float)iy + 0.5f) * bh / (float)gh;
            for (int64_t ix = 0; ix < gw; ++ix) {
              const float sx =
                  x0 + (float)px * bw + ((float)ix + 0.5f) * bw / (float)gw;
              acc += roi_sample(p, h, w, sy, sx);
            }
          }
          out[py * ow + px] = acc / count;
        }
    }
  }
}
