/* The lane helpers of the register-blocked float kernels: loads, bias,
 * multiply-adds and stores of a panel's CUVIL_MV vectors, shared by the
 * packed convolution (packed.c) and the matrix products (gemm.c), which
 * include it after cuvil/kernels.h and blocking.h. */
#ifndef CUVIL_KERNELS_OPT_PACKED_LANES_H
#define CUVIL_KERNELS_OPT_PACKED_LANES_H

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

#endif
