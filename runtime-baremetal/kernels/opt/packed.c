/* Register-blocked convolution on weights packed at compile time (see
 * blocking.h for the block shapes and cuvil/kernels.h for the packed
 * layout; the matrix products are in gemm.c, the lane helpers both use in
 * packed_lanes.h). The reference kernels are their oracle: tests/unit
 * compares them on many shapes. */
#include "cuvil/kernels.h"

#include "../math.h"
#include "blocking.h"

/* Read by cuvilc from the kernel bitcode: the packing it must use. */
const int64_t cuvil_k_pack_mr = CUVIL_MR;

#include "packed_lanes.h"

/* The geometry of one convolution (constants once the kernel is
 * specialised). */
typedef struct {
  int64_t c, h, wd, kh, kw, oh, ow, sh, sw, dh, dw, pad_top, pad_left;
  int64_t oy0, oy1, ox0, ox1; /* the output rows and columns computed */
} conv_shape;

/* nr output positions (a constant: a block, a half block or 1) x mb
 * channels in registers. Position j reads the input from xo + j * pstep
 * and writes its channels from yp + off + j * ostep (with the residual at
 * the same offsets from rp, when there is one); every position uses kernel
 * rows [ky_lo, ky_hi) and columns [kx_lo, kx_hi) (the taps inside the
 * input for all of them), so there are no bounds checks. A row of
 * positions has pstep = the horizontal stride and ostep = 1; a column,
 * pstep = a stride of rows. */
INLINE void conv_block(int nr, const conv_shape *s, const float *xo,
                       int64_t pstep, const float *wb, int64_t mb,
                       const cuvil_vf init[CUVIL_MV], int64_t ky_lo,
                       int64_t ky_hi, int64_t kx_lo, int64_t kx_hi, float *yp,
                       const float *rp, int64_t off, int64_t ostep,
                       float act_lo, float act_hi) {
  const int64_t hw = s->h * s->wd;
  /* The accumulators start at the bias. */
  cuvil_vf acc[CUVIL_NR_MAX][CUVIL_MV];
  CUVIL_UNROLL
  for (int j = 0; j < CUVIL_NR_MAX; ++j)
    CUVIL_UNROLL
  for (int v = 0; v < CUVIL_MV; ++v)
    acc[j][v] = init[v];
  if (s->kh == 1 && s->kw == 1) {
    /* A 1x1 kernel: a step per input channel, unrolled (see
     * CUVIL_UNROLL_1X1); by 4 when there are 8 channels or fewer: unrolled
     * whole, 8 steps are scheduled as one and spill accumulators on RV64
     * (MobileNetV1's first pointwise layer: 685 K instructions, 608 K by
     * 4), while longer reductions run best by 8. On RV64 the first step
     * is peeled for up to 64 channels: its multiply-adds then start from
     * the bias registers themselves, where the loop would first copy the
     * bias into all 24 accumulators (a move per output, against 16 to 64
     * multiply-adds per output; MobileNetV2 on u74-mc: 486.8 M -> 484.9 M
     * instructions). Longer reductions measured worse peeled (the 7-step
     * remainder the peel leaves costs more than the copies it saves). */
    int64_t ci0 = 0;
    if (CUVIL_VL == 1 && s->c <= 64) {
      CUVIL_UNROLL
      for (int j = 0; j < nr; ++j)
        fma_lanes(acc[j], wb, mb, xo[j * pstep]);
      ci0 = 1;
    }
    if (CUVIL_VL == 1 && s->c > 8 && pstep > 1) {
      /* Strided (a ResNet projection): not unrolled on RV64. Unrolled by 8
       * each step's input is a separate base pointer (a channel is
       * kilobytes away, beyond a 12-bit offset) and registers spill: 24 ld
       * and 19 sd per 192 fmadd. ResNet-8's stack2_proj (16 -> 32 channels,
       * stride 2) took 383.8 K instructions so, 298.0 K by 4 and 281.5 K
       * by 1. */
      CUVIL_UNROLL_BY(1)
      for (int64_t ci = ci0; ci < s->c; ++ci)
        CUVIL_UNROLL
      for (int j = 0; j < nr; ++j)
        fma_lanes(acc[j], wb + ci * mb, mb, xo[ci * hw + j * pstep]);
    } else if (s->c > 8) {
      CUVIL_UNROLL_BY(CUVIL_UNROLL_1X1)
      for (int64_t ci = ci0; ci < s->c; ++ci)
        CUVIL_UNROLL
      for (int j = 0; j < nr; ++j)
        fma_lanes(acc[j], wb + ci * mb, mb, xo[ci * hw + j * pstep]);
    } else {
      CUVIL_UNROLL_BY(4)
      for (int64_t ci = ci0; ci < s->c; ++ci)
        CUVIL_UNROLL
      for (int j = 0; j < nr; ++j)
        fma_lanes(acc[j], wb + ci * mb, mb, xo[ci * hw + j * pstep]);
    }
  } else {
    for (int64_t ci = 0; ci < s->c; ++ci)
      for (int64_t ky = ky_lo; ky < ky_hi; ++ky) {
        const float *xr = xo + ci * hw + ky * s->dh * s->wd;
        const float *wt = wb + (ci * s->kh + ky) * s->kw * mb;
        for (int64_t kx = kx_lo; kx < kx_hi; ++kx)
          CUVIL_UNROLL
        for (int j = 0; j < nr; ++j)
          fma_lanes(acc[j], wt + kx * mb, mb, xr[kx * s->dw + j * pstep]);
      }
  }
  const int64_t ohw = s->oh * s->ow;
  if (CUVIL_VL > 1 && ostep == 1 && mb % CUVIL_VL == 0) {
    store_row_block(nr, yp + off, rp ? rp + off : 0, acc, mb, ohw, act_lo,
                    act_hi);
    return;
  }
  if (rp) {
    CUVIL_UNROLL
    for (int j = 0; j < nr; ++j)
      add_residual(acc[j], rp + off + j * ostep, mb, ohw);
  }
  store_block(nr, yp + off, ostep, acc, mb, ohw, act_lo, act_hi);
}

/* A half block of nr, for remainders (at least 2 positions, or none). */
INLINE int half_block(int nr) { return nr / 2 >= 2 ? nr / 2 : nr; }

/* How blocks of nr positions cover the positions [lo, hi): `full` blocks,
 * the last of which may end at hi and overlap its neighbour (when more
 * than half a block remains, recomputing a few positions costs less than
 * running them one by one), then maybe a half block at `half_at`; the
 * positions [end, hi) are left to other paths. */
typedef struct {
  int64_t full, half_at, end;
} cover;

INLINE cover plan_cover(int64_t lo, int64_t hi, int nr) {
  const int64_t whole = (hi - lo) / nr, rest = hi - lo - whole * nr;
  cover c = {whole, -1, lo + whole * nr};
  if (whole > 0 && 2 * rest > nr) {
    c.full = whole + 1;
    c.end = hi;
  } else if (half_block(nr) < nr && rest >= half_block(nr)) {
    c.half_at = c.end;
    c.end += half_block(nr);
  }
  return c;
}

/* Where full block b of plan_cover(lo, hi, nr) starts. */
INLINE int64_t full_start(int64_t b, int64_t lo, int64_t hi, int nr) {
  const int64_t o = lo + b * nr;
  return o + nr <= hi ? o : hi - nr;
}

/* Output channels [m0, m0 + mb) of one image: wb is their panel, yb the
 * image's output. Blocks of nr positions run along the interior of
 * each output row (columns whose whole window row is inside the input);
 * the columns left over (the borders and any row remainder) run in blocks
 * down their interior rows instead, so single positions remain only where
 * a row and a column border meet. */
INLINE void conv_panel(const conv_shape *s, const float *xb, const float *wb,
                       const float *bias, const float *rb, float *yb,
                       int64_t m0, int64_t mb, float act_lo, float act_hi) {
  /* The interior (windows inside the input), within the part computed. */
  int64_t ox_lo = first_inside(-s->pad_left, s->sw);
  int64_t ox_hi =
      end_inside(-s->pad_left + (s->kw - 1) * s->dw, s->sw, s->wd, s->ow);
  if (ox_lo < s->ox0)
    ox_lo = s->ox0;
  if (ox_hi > s->ox1)
    ox_hi = s->ox1;
  if (ox_hi < ox_lo)
    ox_hi = ox_lo;
  int64_t oy_lo = first_inside(-s->pad_top, s->sh);
  int64_t oy_hi =
      end_inside(-s->pad_top + (s->kh - 1) * s->dh, s->sh, s->h, s->oh);
  if (oy_lo < s->oy0)
    oy_lo = s->oy0;
  if (oy_hi > s->oy1)
    oy_hi = s->oy1;
  if (oy_hi < oy_lo)
    oy_hi = oy_lo;
  const int nr = s->kh == 1 && s->kw == 1 ? CUVIL_NR_1X1 : CUVIL_NR,
            half = half_block(nr);
  const cover rows = plan_cover(ox_lo, ox_hi, nr),
              cols = plan_cover(oy_lo, oy_hi, nr);
  cuvil_vf init[CUVIL_MV];
  bias_vectors(init, bias, m0, mb);
  float *yp = yb + m0 * s->oh * s->ow;
  const float *rp = rb ? rb + m0 * s->oh * s->ow : 0;

  /* Along the rows. */
  for (int64_t oy = s->oy0; oy < s->oy1; ++oy) {
    const int64_t iy0 = oy * s->sh - s->pad_top;
    const int64_t ky_lo = first_inside(iy0, s->dh),
                  ky_hi = end_inside(iy0, s->dh, s->h, s->kh);
    const float *xr = xb + iy0 * s->wd - s->pad_left;
    const int64_t yr = oy * s->ow;
    /* On RV64 the rows whose windows are inside the input take blocks with
     * the whole kernel as constants: their kernel rows unroll too (the
     * first layer of MobileNetV1: 889 K instructions, 793 K so). */
    const int whole = CUVIL_VL == 1 && ky_lo == 0 && ky_hi == s->kh;
    for (int64_t b = 0; b < rows.full; ++b) {
      const int64_t ox = full_start(b, ox_lo, ox_hi, nr);
      if (whole)
        conv_block(nr, s, xr + ox * s->sw, s->sw, wb, mb, init, 0, s->kh, 0,
                   s->kw, yp, rp, yr + ox, 1, act_lo, act_hi);
      else
        conv_block(nr, s, xr + ox * s->sw, s->sw, wb, mb, init, ky_lo, ky_hi, 0,
                   s->kw, yp, rp, yr + ox, 1, act_lo, act_hi);
    }
    if (rows.half_at >= 0)
      conv_block(half, s, xr + rows.half_at * s->sw, s->sw, wb, mb, init, ky_lo,
                 ky_hi, 0, s->kw, yp, rp, yr + rows.half_at, 1, act_lo, act_hi);
  }
  /* Down the columns the rows left: [ox0, ox_lo) and [rows.end, ox1). */
  for (int64_t ox = s->ox0; ox < s->ox1; ++ox) {
    if (ox == ox_lo && rows.end > ox_lo)
      ox = rows.end;
    if (ox >= s->ox1)
      break;
    const int64_t ix0 = ox * s->sw - s->pad_left;
    const int64_t kx_lo = first_inside(ix0, s->dw),
                  kx_hi = end_inside(ix0, s->dw, s->wd, s->kw);
    const float *xc = xb + ix0 - s->pad_top * s->wd;
    const int64_t pstep = s->sh * s->wd;
    for (int64_t b = 0; b < cols.full; ++b) {
      const int64_t oy = full_start(b, oy_lo, oy_hi, nr);
      conv_block(nr, s, xc + oy * pstep, pstep, wb, mb, init, 0, s->kh, kx_lo,
                 kx_hi, yp, rp, oy * s->ow + ox, s->ow, act_lo, act_hi);
    }
    if (cols.half_at >= 0)
      conv_block(half, s, xc + cols.half_at * pstep, pstep, wb, mb, init, 0,
                 s->kh, kx_lo, kx_hi, yp, rp, cols.half_at * s->ow + ox, s->ow,
                 act_lo, act_hi);
    for (int64_t oy = s->oy0; oy < s->oy1; ++oy) {
      if (oy == oy_lo && cols.end > oy_lo)
        oy = cols.end;
      if (oy >= s->oy1)
        break;
      const int64_t iy0 = oy * s->sh - s->pad_top;
      conv_block(1, s, xc + oy * pstep, 0, wb, mb, init,
                 first_inside(iy0, s->dh), end_inside(iy0, s->dh, s->h, s->kh),
                 kx_lo, kx_hi, yp, rp, oy * s->ow + ox, 0, act_lo, act_hi);
    }
  }
}

/* Every image and panel of a convolution; res is the residual or null. */
INLINE void conv_images(const conv_shape *s, const float *x, const float *wp,
                        const float *bias, const float *res, float *y,
                        int64_t n, int64_t m, float act_lo, float act_hi) {
  const int64_t taps = s->c * s->kh * s->kw, in = s->c * s->h * s->wd,
                out = m * s->oh * s->ow;
  for (int64_t b = 0; b < n; ++b) {
    const float *rb = res ? res + b * out : 0;
    /* Full panels, then the narrow one: two specialisations of the panel
     * (the narrow one's start in closed form, so its width is a constant). */
    const int64_t narrow = m / CUVIL_MR * CUVIL_MR;
    for (int64_t m0 = 0; m0 < narrow; m0 += CUVIL_MR)
      conv_panel(s, x + b * in, wp + m0 * taps, bias, rb, y + b * out, m0,
                 CUVIL_MR, act_lo, act_hi);
    if (narrow < m)
      conv_panel(s, x + b * in, wp + narrow * taps, bias, rb, y + b * out,
                 narrow, m - narrow, act_lo, act_hi);
  }
}

void cuvil_k_conv2d_packed_f32(const float *x, const float *wp,
                               const float *bias, const float *res, float *y,
                               int64_t n, int64_t c, int64_t h, int64_t wd,
                               int64_t m, int64_t kh, int64_t kw, int64_t oh,
                               int64_t ow, int64_t stride_h, int64_t stride_w,
                               int64_t dil_h, int64_t dil_w, int64_t pad_top,
                               int64_t pad_left, float act_lo, float act_hi,
                               int64_t oy0, int64_t oy1, int64_t ox0,
                               int64_t ox1) {
  const conv_shape s = {.c = c,
                        .h = h,
                        .wd = wd,
                        .kh = kh,
                        .kw = kw,
                        .oh = oh,
                        .ow = ow,
                        .sh = stride_h,
                        .sw = stride_w,
                        .dh = dil_h,
                        .dw = dil_w,
                        .pad_top = pad_top,
                        .pad_left = pad_left,
                        .oy0 = oy0,
                        .oy1 = oy1,
                        .ox0 = ox0,
                        .ox1 = ox1};
  /* With and without a residual: two specialisations, so that no block
   * tests for one (a residual that is a model input has an address the
   * compiler cannot prove non-null). */
  if (res)
    conv_images(&s, x, wp, bias, res, y, n, m, act_lo, act_hi);
  else
    conv_images(&s, x, wp, bias, 0, y, n, m, act_lo, act_hi);
}
