/* Register-blocked convolution and matrix product on weights packed at
 * compile time (see blocking.h for the block shapes and
 * cuvil/kernels.h for the packed layout). The reference kernels in ref/
 * are their oracle: tests/unit compares them on many shapes. */
#include "cuvil/kernels.h"

#include "../math.h"
#include "blocking.h"

/* Read by cuvilc from the kernel bitcode: the packing it must use. */
const int64_t cuvil_k_pack_mr = CUVIL_MR;

#define INLINE static inline __attribute__((always_inline))

/* Packed weights come in panels of CUVIL_MR output channels; the last
 * panel of a layer whose channel count is not a multiple of CUVIL_MR is
 * narrower (mb channels), so the packed tensor has exactly the original's
 * elements. Every helper takes the panel width mb: it is a compile-time
 * constant at each call once cuvilc specialises the kernel, so full panels
 * compile to whole-vector code and only the narrow panel loads lane by lane. */

INLINE int vectors(int64_t mb) { return (int)((mb + CUVIL_VL - 1) / CUVIL_VL); }

/* CUVIL_VL floats from p, of which only `avail` exist (the rest read as 0). */
INLINE cuvil_vf load_lanes(const float *p, int64_t avail) {
  if (avail >= CUVIL_VL)
    return cuvil_vf_load(p);
  cuvil_vf r = cuvil_vf_splat(0.0f);
  CUVIL_UNROLL
  for (int l = 0; l < CUVIL_VL; ++l)
    if (l < avail)
      r[l] = p[l];
  return r;
}

/* The accumulators' starting value for channels [m0, m0 + mb): the bias,
 * or zero without one. */
INLINE void bias_vectors(cuvil_vf out[CUVIL_MV], const float *bias, int64_t m0, int64_t mb) {
  CUVIL_UNROLL
  for (int v = 0; v < CUVIL_MV; ++v)
    out[v] = bias ? load_lanes(bias + m0 + v * CUVIL_VL, mb - v * CUVIL_VL)
                  : cuvil_vf_splat(0.0f);
}

/* acc[v] += w[v] * xs: one input value against the panel's mb channels. */
INLINE void fma_lanes(cuvil_vf acc[CUVIL_MV], const float *w, int64_t mb, float xs) {
  const cuvil_vf s = cuvil_vf_splat(xs);
  CUVIL_UNROLL
  for (int v = 0; v < vectors(mb); ++v)
    acc[v] += load_lanes(w + v * CUVIL_VL, mb - v * CUVIL_VL) * s;
}

/* Writes the panel's channels of one output position, clamped: channel
 * m0 + i goes to y[i * ch_stride]. */
INLINE void store_lanes(float *y, const cuvil_vf acc[CUVIL_MV], int64_t mb, int64_t ch_stride,
                        float act_lo, float act_hi) {
  CUVIL_UNROLL
  for (int v = 0; v < vectors(mb); ++v) {
    const cuvil_vf r = cuvil_vf_clamp(acc[v], act_lo, act_hi);
    if (ch_stride == 1 && (v + 1) * CUVIL_VL <= mb) {
      __builtin_memcpy(y + v * CUVIL_VL, &r, sizeof r);
      continue;
    }
    CUVIL_UNROLL
    for (int l = 0; l < CUVIL_VL; ++l)
      if (v * CUVIL_VL + l < mb)
        y[(v * CUVIL_VL + l) * ch_stride] = r[l];
  }
}

/* Output channels [m0, m0 + mb) of one image: wb is their panel, yb the
 * image's output. */
INLINE void conv_panel(const float *xb, const float *wb, const float *bias, float *yb,
                       int64_t m0, int64_t mb, int64_t c, int64_t h, int64_t wd, int64_t kh,
                       int64_t kw, int64_t oh, int64_t ow, int64_t stride_h, int64_t stride_w,
                       int64_t dil_h, int64_t dil_w, int64_t pad_top, int64_t pad_left,
                       float act_lo, float act_hi) {
  const int64_t hw = h * wd, ohw = oh * ow;
  /* Output columns whose whole window row lies inside the input: there the
   * block kernel runs without bounds checks. */
  const int64_t ox_lo = first_inside(-pad_left, stride_w);
  int64_t ox_hi = end_inside(-pad_left + (kw - 1) * dil_w, stride_w, wd, ow);
  if (ox_hi < ox_lo)
    ox_hi = ox_lo;
  cuvil_vf init[CUVIL_MV];
  bias_vectors(init, bias, m0, mb);
  float *yp = yb + m0 * ohw;

  for (int64_t oy = 0; oy < oh; ++oy) {
    const int64_t iy0 = oy * stride_h - pad_top;
    /* Kernel rows inside the input for this output row. */
    const int64_t ky_lo = first_inside(iy0, dil_h);
    const int64_t ky_hi = end_inside(iy0, dil_h, h, kh);
    float *yr = yp + oy * ow;
    int64_t ox = 0;
    while (ox < ow) {
      if (ox >= ox_lo && ox + CUVIL_NR <= ox_hi) {
        /* CUVIL_NR positions x mb channels in registers. */
        cuvil_vf acc[CUVIL_NR][CUVIL_MV];
        CUVIL_UNROLL
        for (int j = 0; j < CUVIL_NR; ++j)
          CUVIL_UNROLL
          for (int v = 0; v < CUVIL_MV; ++v)
            acc[j][v] = init[v];
        const float *xo = xb + ox * stride_w - pad_left;
        for (int64_t ci = 0; ci < c; ++ci)
          for (int64_t ky = ky_lo; ky < ky_hi; ++ky) {
            const float *xr = xo + ci * hw + (iy0 + ky * dil_h) * wd;
            const float *wt = wb + (ci * kh + ky) * kw * mb;
            for (int64_t kx = 0; kx < kw; ++kx)
              CUVIL_UNROLL
              for (int j = 0; j < CUVIL_NR; ++j)
                fma_lanes(acc[j], wt + kx * mb, mb, xr[kx * dil_w + j * stride_w]);
          }
        CUVIL_UNROLL
        for (int j = 0; j < CUVIL_NR; ++j)
          store_lanes(yr + ox + j, acc[j], mb, ohw, act_lo, act_hi);
        ox += CUVIL_NR;
        continue;
      }
      /* One position with bounds checks: borders and the remainder. */
      cuvil_vf acc[CUVIL_MV];
      CUVIL_UNROLL
      for (int v = 0; v < CUVIL_MV; ++v)
        acc[v] = init[v];
      const int64_t ix0 = ox * stride_w - pad_left;
      const int64_t kx_lo = first_inside(ix0, dil_w);
      const int64_t kx_hi = end_inside(ix0, dil_w, wd, kw);
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t ky = ky_lo; ky < ky_hi; ++ky) {
          const float *xr = xb + ci * hw + (iy0 + ky * dil_h) * wd + ix0;
          const float *wt = wb + (ci * kh + ky) * kw * mb;
          for (int64_t kx = kx_lo; kx < kx_hi; ++kx)
            fma_lanes(acc, wt + kx * mb, mb, xr[kx * dil_w]);
        }
      store_lanes(yr + ox, acc, mb, ohw, act_lo, act_hi);
      ++ox;
    }
  }
}

void cuvil_k_conv2d_packed_f32(const float *x, const float *wp, const float *bias, float *y,
                               int64_t n, int64_t c, int64_t h, int64_t wd, int64_t m,
                               int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                               int64_t stride_h, int64_t stride_w, int64_t dil_h,
                               int64_t dil_w, int64_t pad_top, int64_t pad_left, float act_lo,
                               float act_hi) {
  const int64_t taps = c * kh * kw;
  for (int64_t b = 0; b < n; ++b) {
    const float *xb = x + b * c * h * wd;
    float *yb = y + b * m * oh * ow;
    /* Full panels, then the narrow one: two specialisations of the panel. */
    int64_t m0 = 0;
    for (; m0 + CUVIL_MR <= m; m0 += CUVIL_MR)
      conv_panel(xb, wp + m0 * taps, bias, yb, m0, CUVIL_MR, c, h, wd, kh, kw, oh, ow,
                 stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, act_lo, act_hi);
    if (m0 < m)
      conv_panel(xb, wp + m0 * taps, bias, yb, m0, m - m0, c, h, wd, kh, kw, oh, ow,
                 stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, act_lo, act_hi);
  }
}

/* Rows [i, i + rows) of columns [n0, n0 + nb) of a Gemm (rows is CUVIL_NR or
 * 1, a constant at each call, so the accumulators stay in registers). */
INLINE void gemm_rows(int rows, const float *a, const float *wb, const float *c, float *y,
                      int64_t i, int64_t n, int64_t k, int64_t n0, int64_t nb, int64_t a_rs,
                      int64_t a_cs, int use_c, float beta, int64_t c_rs, int64_t c_cs,
                      float act_lo, float act_hi) {
  cuvil_vf acc[CUVIL_NR][CUVIL_MV];
  CUVIL_UNROLL
  for (int j = 0; j < CUVIL_NR; ++j)
    CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v) {
      float lanes[CUVIL_VL];
      CUVIL_UNROLL
      for (int l = 0; l < CUVIL_VL; ++l) {
        const int64_t col = n0 + v * CUVIL_VL + l;
        lanes[l] = j < rows && use_c && v * CUVIL_VL + l < nb
                       ? beta * c[(i + j) * c_rs + col * c_cs]
                       : 0.0f;
      }
      acc[j][v] = cuvil_vf_load(lanes);
    }
  const float *ai = a + i * a_rs;
  for (int64_t p = 0; p < k; ++p)
    CUVIL_UNROLL
    for (int j = 0; j < rows; ++j)
      fma_lanes(acc[j], wb + p * nb, nb, ai[j * a_rs + p * a_cs]);
  CUVIL_UNROLL
  for (int j = 0; j < rows; ++j)
    store_lanes(y + (i + j) * n + n0, acc[j], nb, 1, act_lo, act_hi);
}

/* Columns [n0, n0 + nb) of a Gemm: wb is their panel. */
INLINE void gemm_panel(const float *a, const float *wb, const float *c, float *y, int64_t m,
                       int64_t n, int64_t k, int64_t n0, int64_t nb, int64_t a_rs,
                       int64_t a_cs, int use_c, float beta, int64_t c_rs, int64_t c_cs,
                       float act_lo, float act_hi) {
  int64_t i = 0;
  for (; i + CUVIL_NR <= m; i += CUVIL_NR)
    gemm_rows(CUVIL_NR, a, wb, c, y, i, n, k, n0, nb, a_rs, a_cs, use_c, beta, c_rs, c_cs,
              act_lo, act_hi);
  for (; i < m; ++i)
    gemm_rows(1, a, wb, c, y, i, n, k, n0, nb, a_rs, a_cs, use_c, beta, c_rs, c_cs, act_lo,
              act_hi);
}

void cuvil_k_gemm_packed_f32(const float *a, const float *bp, const float *c, float *y,
                             int64_t m, int64_t n, int64_t k, int64_t trans_a, float beta,
                             int64_t c_rs, int64_t c_cs, float act_lo, float act_hi) {
  const int64_t a_rs = trans_a ? 1 : k, a_cs = trans_a ? m : 1;
  /* As in BLAS, beta == 0 means c is not read. */
  const int use_c = c != 0 && beta != 0.0f;
  int64_t n0 = 0;
  for (; n0 + CUVIL_MR <= n; n0 += CUVIL_MR)
    gemm_panel(a, bp + n0 * k, c, y, m, n, k, n0, CUVIL_MR, a_rs, a_cs, use_c, beta, c_rs, c_cs,
               act_lo, act_hi);
  if (n0 < n)
    gemm_panel(a, bp + n0 * k, c, y, m, n, k, n0, n - n0, a_rs, a_cs, use_c, beta, c_rs, c_cs,
               act_lo, act_hi);
}
