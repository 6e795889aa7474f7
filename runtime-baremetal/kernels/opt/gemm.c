/* Register-blocked matrix products: the Gemm on weights packed at compile
 * time (panels of CUVIL_MR columns, as the packed convolution's, see
 * packed.c) and the MatMul of two run-time operands on the same register
 * block. The reference kernels (linalg/gemm.c) are their oracle:
 * tests/unit compares them on many shapes. */
#include "cuvil/kernels.h"

#include "../linalg/matmul_batch.h"
#include "blocking.h"
#include "packed_lanes.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

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
