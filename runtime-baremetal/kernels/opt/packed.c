/* Register-blocked convolution and matrix product on weights packed at
 * compile time (see blocking.h for the block shapes and
 * cuvil/kernels.h for the packed layout). The reference kernels in ref/
 * are their oracle: tests/unit compares them on many shapes. */
#include "cuvil/kernels.h"

#include "../linalg/matmul_batch.h"
#include "../math.h"
#include "blocking.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

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

/* The bias of channels [m0, m0 + mb) as vectors (zero without one). */
INLINE void bias_vectors(cuvil_vf out[CUVIL_MV], const float *bias, int64_t m0,
                         int64_t mb) {
  CUVIL_UNROLL
  for (int v = 0; v < CUVIL_MV; ++v)
    out[v] = bias ? load_lanes(bias + m0 + v * CUVIL_VL, mb - v * CUVIL_VL)
                  : cuvil_vf_splat(0.0f);
}

/* acc[v] += w[v] * xs: one input value against the panel's mb channels. */
INLINE void fma_lanes(cuvil_vf acc[CUVIL_MV], const float *w, int64_t mb,
                      float xs) {
  const cuvil_vf s = cuvil_vf_splat(xs);
  CUVIL_UNROLL
  for (int v = 0; v < vectors(mb); ++v)
    acc[v] += load_lanes(w + v * CUVIL_VL, mb - v * CUVIL_VL) * s;
}

/* acc += the residual r of one output position (laid out like y: channel
 * m0 + i at r[i * ch_stride]), a fused residual Add. */
INLINE void add_residual(cuvil_vf acc[CUVIL_MV], const float *r, int64_t mb,
                         int64_t ch_stride) {
  CUVIL_UNROLL
  for (int v = 0; v < vectors(mb); ++v) {
    if (ch_stride == 1 && (v + 1) * CUVIL_VL <= mb) {
      acc[v] += cuvil_vf_load(r + v * CUVIL_VL);
      continue;
    }
    /* Lane by lane into a vector value (a float array copied into the
     * vector would let the optimiser retype one-lane accumulators as
     * integers). */
    cuvil_vf rv = cuvil_vf_splat(0.0f);
    CUVIL_UNROLL
    for (int l = 0; l < CUVIL_VL; ++l)
      if (v * CUVIL_VL + l < mb)
        rv[l] = r[(v * CUVIL_VL + l) * ch_stride];
    acc[v] += rv;
  }
}

/* Writes the panel's channels of one output position, clamped to
 * [act_lo, act_hi] (the cheaper clamp when the caller knows no value is
 * NaN): channel m0 + i goes to y[i * ch_stride]. */
INLINE void store_lanes(float *y, const cuvil_vf acc[CUVIL_MV], int64_t mb,
                        int64_t ch_stride, float act_lo, float act_hi,
                        int no_nan) {
  CUVIL_UNROLL
  for (int v = 0; v < vectors(mb); ++v) {
    cuvil_vf o = acc[v];
    cuvil_vf_clamp(&o, act_lo, act_hi, no_nan);
    if (ch_stride == 1 && (v + 1) * CUVIL_VL <= mb) {
      cuvil_vf_store(y + v * CUVIL_VL, &o);
      continue;
    }
    CUVIL_UNROLL
    for (int l = 0; l < CUVIL_VL; ++l)
      if (v * CUVIL_VL + l < mb)
        y[(v * CUVIL_VL + l) * ch_stride] = o[l];
  }
}

/* Stores nr positions of a block (position j at y + j * ystep), with the
 * cheaper clamp when none of the block's values is NaN. */
INLINE void store_block(int nr, float *y, int64_t ystep,
                        cuvil_vf acc[][CUVIL_MV], int64_t mb, int64_t ch_stride,
                        float act_lo, float act_hi) {
  if (cuvil_vf_none_nan(&acc[0][0], nr * CUVIL_MV)) {
    CUVIL_UNROLL
    for (int j = 0; j < nr; ++j)
      store_lanes(y + j * ystep, acc[j], mb, ch_stride, act_lo, act_hi, 1);
  } else {
    CUVIL_UNROLL
    for (int j = 0; j < nr; ++j)
      store_lanes(y + j * ystep, acc[j], mb, ch_stride, act_lo, act_hi, 0);
  }
}

/* Writes a row block of a panel of whole vectors (mb a multiple of
 * CUVIL_VL): nr positions that are consecutive in
 * every channel plane (channel m0 + i of position j at y[i * plane + j],
 * its residual likewise in r). The accumulators hold channels in lanes, so
 * the block is transposed in registers, CUVIL_VL positions at a time: each
 * channel's positions are then read (residual) and written as consecutive
 * floats, not lane by lane across CUVIL_MR planes. */
INLINE void store_row_block(int nr, float *y, const float *r,
                            cuvil_vf acc[][CUVIL_MV], int64_t mb, int64_t plane,
                            float act_lo, float act_hi) {
  /* Without a residual the clamp goes first: nr x vectors(mb), fewer
   * than the transposed ones when nr is not a multiple of CUVIL_VL. */
  if (!r)
    CUVIL_UNROLL
  for (int j = 0; j < nr; ++j)
    CUVIL_UNROLL
  for (int v = 0; v < vectors(mb); ++v)
    cuvil_vf_clamp(&acc[j][v], act_lo, act_hi, 0);
  CUVIL_UNROLL
  for (int j0 = 0; j0 < nr; j0 += CUVIL_VL) {
    const int n = nr - j0 < CUVIL_VL ? nr - j0 : CUVIL_VL;
    CUVIL_UNROLL
    for (int v = 0; v < vectors(mb); ++v) {
      cuvil_vf t[CUVIL_VL];
      CUVIL_UNROLL
      for (int i = 0; i < CUVIL_VL; ++i)
        t[i] = acc[j0 + (i < n ? i : n - 1)][v];
      cuvil_vf_transpose(t);
      CUVIL_UNROLL
      for (int l = 0; l < CUVIL_VL; ++l) {
        const int64_t at = (v * CUVIL_VL + l) * plane + j0;
        if (r) {
          t[l] += cuvil_vf_load_n(r + at, n);
          cuvil_vf_clamp(&t[l], act_lo, act_hi, 0);
        }
        cuvil_vf_store_n(y + at, &t[l], n);
      }
    }
  }
}

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
    if (s->c > 8) {
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

/* The CUVIL_MV weight vectors of one reduction step of a full panel, at
 * *wp; advances *wp to the next step. On AArch64 one LD1 of four registers
 * loads them (64 bytes) and post-increments the pointer. LD1 of several
 * registers has no offset form, so the compiler must not turn the running
 * pointer back into base + constant offsets (it would add an address
 * computation per load): the empty asm hides the pointer's value from it.
 * Elsewhere plain vector loads, which do take offsets. */
INLINE void panel_step(cuvil_vf w[CUVIL_MV], const float **wp) {
#if defined(__aarch64__) && CUVIL_VL == 4 && CUVIL_MV == 4
  const float32x4x4_t t = vld1q_f32_x4(*wp);
  w[0] = (cuvil_vf)t.val[0];
  w[1] = (cuvil_vf)t.val[1];
  w[2] = (cuvil_vf)t.val[2];
  w[3] = (cuvil_vf)t.val[3];
  *wp += CUVIL_MR;
  __asm__("" : "+r"(*wp));
#else
  CUVIL_UNROLL
  for (int v = 0; v < CUVIL_MV; ++v)
    w[v] = cuvil_vf_load(*wp + v * CUVIL_VL);
  *wp += CUVIL_MR;
#endif
}

/* acc += a[0, k) x the full panel wb: the single-row product (a fully
 * connected layer at batch 1), where every weight is used once. An
 * iteration takes 2 * CUVIL_VL steps: it loads that many inputs as two
 * vectors and multiplies by their lanes (an FMA by element on AArch64, no
 * broadcasts), and walks the panel with one pointer (post-incremented
 * loads). Alternate steps go to a second set of accumulators, so
 * consecutive FMAs do not wait on each other. */
INLINE void gemv_full_panel(cuvil_vf acc[CUVIL_MV], const float *a,
                            const float *wb, int64_t k) {
  cuvil_vf odd[CUVIL_MV];
  CUVIL_UNROLL
  for (int v = 0; v < CUVIL_MV; ++v)
    odd[v] = cuvil_vf_splat(0.0f);
  const float *wp = wb;
  int64_t p = 0;
  for (; p + 2 * CUVIL_VL <= k; p += 2 * CUVIL_VL) {
    const cuvil_vf in[2] = {cuvil_vf_load(a + p),
                            cuvil_vf_load(a + p + CUVIL_VL)};
    CUVIL_UNROLL
    for (int l = 0; l < 2 * CUVIL_VL; ++l) {
      cuvil_vf w[CUVIL_MV];
      panel_step(w, &wp);
      const cuvil_vf s = cuvil_vf_splat(in[l / CUVIL_VL][l % CUVIL_VL]);
      CUVIL_UNROLL
      for (int v = 0; v < CUVIL_MV; ++v) {
        if (l % 2)
          odd[v] += w[v] * s;
        else
          acc[v] += w[v] * s;
      }
    }
  }
  for (; p < k; ++p) {
    cuvil_vf w[CUVIL_MV];
    panel_step(w, &wp);
    const cuvil_vf s = cuvil_vf_splat(a[p]);
    CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v)
      acc[v] += w[v] * s;
  }
  CUVIL_UNROLL
  for (int v = 0; v < CUVIL_MV; ++v)
    acc[v] += odd[v];
}

/* Rows [i, i + rows) of columns [n0, n0 + nb) of a Gemm (rows is CUVIL_NR or
 * 1, a constant at each call, so the accumulators stay in registers). Row p
 * of the columns' weights is at wb + p * w_rs: w_rs is nb for a packed
 * panel, the row length of B for an unpacked one. */
INLINE void gemm_rows(int rows, const float *a, const float *wb, int64_t w_rs,
                      const float *c, float *y, int64_t i, int64_t n, int64_t k,
                      int64_t n0, int64_t nb, int64_t a_rs, int64_t a_cs,
                      int use_c, float beta, int64_t c_rs, int64_t c_cs,
                      float act_lo, float act_hi) {
  cuvil_vf acc[CUVIL_NR][CUVIL_MV];
  CUVIL_UNROLL
  for (int j = 0; j < CUVIL_NR; ++j)
    CUVIL_UNROLL
  for (int v = 0; v < CUVIL_MV; ++v) {
    if (j < rows && use_c && c_cs == 1 && (v + 1) * CUVIL_VL <= nb) {
      /* A row of C (the bias of a fully connected layer): one vector. */
      acc[j][v] = cuvil_vf_splat(beta) *
                  cuvil_vf_load(c + (i + j) * c_rs + n0 + v * CUVIL_VL);
      continue;
    }
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
  if (rows == 1 && a_cs == 1 && nb == CUVIL_MR && w_rs == CUVIL_MR) {
    gemv_full_panel(acc[0], ai, wb, k);
    store_block(1, y + i * n + n0, n, acc, nb, 1, act_lo, act_hi);
    return;
  }
  int64_t p = 0;
#if defined(__aarch64__)
  if (rows == CUVIL_NR && a_cs == 1) {
    /* Each row's next CUVIL_VL values of a in one vector load, multiplied
     * by lane (FMLA by element) instead of a scalar load per row and step:
     * per CUVIL_VL steps, CUVIL_NR loads of a instead of CUVIL_VL times as
     * many. The 24 accumulators, 6 rows of a and the weight vectors are
     * one or two registers more than the 32: two accumulators spill, and a
     * transformer's projections still went from 0.37 to 0.35 instructions
     * per MAC. */
    for (; p + CUVIL_VL <= k; p += CUVIL_VL) {
      cuvil_vf av[CUVIL_NR];
      CUVIL_UNROLL
      for (int j = 0; j < CUVIL_NR; ++j)
        av[j] = cuvil_vf_load(ai + j * a_rs + p);
      CUVIL_UNROLL
      for (int l = 0; l < CUVIL_VL; ++l)
        CUVIL_UNROLL
      for (int j = 0; j < CUVIL_NR; ++j)
        fma_lanes(acc[j], wb + (p + l) * w_rs, nb, av[j][l]);
    }
  }
#endif
#if CUVIL_SCALAR_BLOCKING
  /* Unrolled as a 1x1 convolution's reduction: the loop's pointer steps
   * and branch are spread over that many steps (RV64: 29 instructions per
   * step of 20 multiply-adds instead of 32). */
  CUVIL_UNROLL_BY(CUVIL_UNROLL_1X1)
#endif
  for (; p < k; ++p)
    CUVIL_UNROLL
  for (int j = 0; j < rows; ++j)
    fma_lanes(acc[j], wb + p * w_rs, nb, ai[j * a_rs + p * a_cs]);
  store_block(rows, y + i * n + n0, n, acc, nb, 1, act_lo, act_hi);
}

/* Columns [n0, n0 + nb) of a Gemm: wb is their weights, row p at
 * wb + p * w_rs. */
INLINE void gemm_panel(const float *a, const float *wb, int64_t w_rs,
                       const float *c, float *y, int64_t m, int64_t n,
                       int64_t k, int64_t n0, int64_t nb, int64_t a_rs,
                       int64_t a_cs, int use_c, float beta, int64_t c_rs,
                       int64_t c_cs, float act_lo, float act_hi) {
  int64_t i = 0;
  for (; i + CUVIL_NR <= m; i += CUVIL_NR)
    gemm_rows(CUVIL_NR, a, wb, w_rs, c, y, i, n, k, n0, nb, a_rs, a_cs, use_c,
              beta, c_rs, c_cs, act_lo, act_hi);
  for (; i < m; ++i)
    gemm_rows(1, a, wb, w_rs, c, y, i, n, k, n0, nb, a_rs, a_cs, use_c, beta,
              c_rs, c_cs, act_lo, act_hi);
}

void cuvil_k_gemm_packed_f32(const float *a, const float *bp, const float *c,
                             float *y, int64_t m, int64_t n, int64_t k,
                             int64_t trans_a, float beta, int64_t c_rs,
                             int64_t c_cs, float act_lo, float act_hi,
                             int64_t j0, int64_t j1) {
  const int64_t a_rs = trans_a ? 1 : k, a_cs = trans_a ? m : 1;
  /* As in BLAS, beta == 0 means c is not read. */
  const int use_c = c != 0 && beta != 0.0f;
  const int64_t narrow =
      n / CUVIL_MR * CUVIL_MR; /* closed form: see conv_images */
  /* The full panels of columns [j0, j1), then the narrow one if in it. */
  const int64_t full_end = j1 < narrow ? j1 : narrow;
  for (int64_t n0 = j0; n0 < full_end; n0 += CUVIL_MR)
    gemm_panel(a, bp + n0 * k, CUVIL_MR, c, y, m, n, k, n0, CUVIL_MR, a_rs,
               a_cs, use_c, beta, c_rs, c_cs, act_lo, act_hi);
  if (narrow < n && narrow < j1)
    gemm_panel(a, bp + narrow * k, n - narrow, c, y, m, n, k, narrow,
               n - narrow, a_rs, a_cs, use_c, beta, c_rs, c_cs, act_lo, act_hi);
}

void cuvil_k_matmul_blocked_f32(const float *a, const float *b, float *y,
                                int64_t m, int64_t n, int64_t k,
                                const int64_t *batch_shape,
                                const int64_t *a_bstride,
                                const int64_t *b_bstride) {
  const float inf = __builtin_inff();
  for (int64_t i = 0; i < cuvil_matmul_batches(batch_shape); ++i) {
    int64_t ao, bo;
    cuvil_matmul_batch(i, batch_shape, a_bstride, b_bstride, &ao, &bo);
    float *yb = y + i * m * n;
    /* B read in place: the columns of a panel are CUVIL_MR consecutive
     * floats of each row of B. */
    int64_t n0 = 0;
    for (; n0 + CUVIL_MR <= n; n0 += CUVIL_MR)
      gemm_panel(a + ao, b + bo + n0, n, 0, yb, m, n, k, n0, CUVIL_MR, k, 1, 0,
                 0.0f, 0, 0, -inf, inf);
    if (n0 < n)
      gemm_panel(a + ao, b + bo + n0, n, 0, yb, m, n, k, n0, n - n0, k, 1, 0,
                 0.0f, 0, 0, -inf, inf);
  }
}
