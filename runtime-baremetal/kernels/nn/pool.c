/* Reference pooling: max, average and global average over [nc, h, w]. */
#include "cuvil/kernels.h"

static int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

void cuvil_k_maxpool2d_f32(const float *x, float *y, int64_t nc, int64_t h,
                           int64_t w, int64_t oh, int64_t ow, int64_t kh,
                           int64_t kw, int64_t stride_h, int64_t stride_w,
                           int64_t dil_h, int64_t dil_w, int64_t pad_top,
                           int64_t pad_left) {
  for (int64_t p = 0; p < nc; ++p) {
    const float *xp = x + p * h * w;
    float *yp = y + p * oh * ow;
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        /* Padding is skipped rather than read as -inf; a NaN input is
         * skipped too (it never compares greater). */
        float best = -__builtin_inff();
        for (int64_t ky = 0; ky < kh; ++ky) {
          const int64_t iy = oy * stride_h - pad_top + ky * dil_h;
          if (iy < 0 || iy >= h)
            continue;
          for (int64_t kx = 0; kx < kw; ++kx) {
            const int64_t ix = ox * stride_w - pad_left + kx * dil_w;
            if (ix < 0 || ix >= w)
              continue;
            const float v = xp[iy * w + ix];
            best = v > best ? v : best;
          }
        }
        yp[oy * ow + ox] = best;
      }
  }
}

void cuvil_k_avgpool2d_f32(const float *x, float *y, int64_t nc, int64_t h,
                           int64_t w, int64_t oh, int64_t ow, int64_t kh,
                           int64_t kw, int64_t stride_h, int64_t stride_w,
                           int64_t pad_top, int64_t pad_left,
                           int64_t pad_bottom, int64_t pad_right,
                           int64_t count_include_pad) {
  for (int64_t p = 0; p < nc; ++p) {
    const float *xp = x + p * h * w;
    float *yp = y + p * oh * ow;
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        /* The window [y0, y1) x [x0, x1), clipped first to the
         * padded input (what count_include_pad counts; ceil_mode
         * windows may reach past it), then to the real input. */
        int64_t y0 = oy * stride_h - pad_top;
        int64_t x0 = ox * stride_w - pad_left;
        int64_t y1 = min_i64(y0 + kh, h + pad_bottom);
        int64_t x1 = min_i64(x0 + kw, w + pad_right);
        const int64_t padded_count = (y1 - y0) * (x1 - x0);
        y0 = max_i64(y0, 0);
        x0 = max_i64(x0, 0);
        y1 = min_i64(y1, h);
        x1 = min_i64(x1, w);

        float sum = 0.0f;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix)
            sum += xp[iy * w + ix];
        const int64_t count =
            count_include_pad ? padded_count : (y1 - y0) * (x1 - x0);
        yp[oy * ow + ox] = sum / (float)count;
      }
  }
}

void cuvil_k_global_avgpool_f32(const float *x, float *y, int64_t nc,
                                int64_t hw) {
  for (int64_t p = 0; p < nc; ++p) {
    float sum = 0.0f;
    for (int64_t i = 0; i < hw; ++i)
      sum += x[p * hw + i];
    y[p] = sum / (float)hw;
  }
}
