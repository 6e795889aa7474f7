/* Register-blocked matrix products: the Gemm on weights packed at compile
 * time (panels of CUVIL_MR columns, as the packed convolution's, see
 * packed.c) and the MatMul of two run-time operands on the same register
 * block. The reference kernels (linalg/gemm.c) are their oracle:
 * tests/unit compares them on many shapes. */
#include "cuvil/kernels.h"

#include "../linalg/matmul_batch.h"
#include "blocking.h"
#include "gemv.h"
#include "packed_lanes.h"

/* Rows of a per register block. RV64 takes the 1x1 convolution's 4 x 6
 * block: without a kernel row's inputs to hold, its 24 accumulators, 4
 * weights and one value of a fit the 32 registers (bench
 * transformer_d64_s32 on u74-mc: 6.60 M instructions, 6.72 M with the
 * 4 x 5 block of the convolutions with a kernel). */
#if CUVIL_SCALAR_BLOCKING
#define GEMM_NR CUVIL_NR_1X1
#else
#define GEMM_NR CUVIL_NR
#endif

/* Rows [i, i + rows) of columns [n0, n0 + nb) of a Gemm (rows is GEMM_NR or
 * 1, a constant at each call, so the accumulators stay in registers). Row p
 * of the columns' weights is at wb + p * w_rs: w_rs is nb for a packed
 * panel, the row length of B for an unpacked one. */
INLINE void gemm_rows(int rows, const float *a, const float *wb, int64_t w_rs,
                      const float *c, float *y, int64_t i, int64_t n, int64_t k,
                      int64_t n0, int64_t nb, int64_t a_rs, int64_t a_cs,
                      int use_c, float beta, int64_t c_rs, int64_t c_cs,
                      float act_lo, float act_hi) {
  cuvil_vf acc[GEMM_NR][CUVIL_MV];
  CUVIL_UNROLL
  for (int j = 0; j < GEMM_NR; ++j)
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
  if (rows == GEMM_NR && a_cs == 1) {
    /* Each row's next CUVIL_VL values of a in one vector load, multiplied
     * by lane (FMLA by element) instead of a scalar load per row and step:
     * per CUVIL_VL steps, GEMM_NR loads of a instead of CUVIL_VL times as
     * many. The 24 accumulators, 6 rows of a and the weight vectors are
     * one or two registers more than the 32: two accumulators spill, and a
     * transformer's projections still went from 0.37 to 0.35 instructions
     * per MAC. */
    for (; p + CUVIL_VL <= k; p += CUVIL_VL) {
      cuvil_vf av[GEMM_NR];
      CUVIL_UNROLL
      for (int j = 0; j < GEMM_NR; ++j)
        av[j] = cuvil_vf_load(ai + j * a_rs + p);
      CUVIL_UNROLL
      for (int l = 0; l < CUVIL_VL; ++l)
        CUVIL_UNROLL
      for (int j = 0; j < GEMM_NR; ++j)
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
  for (; i + GEMM_NR <= m; i += GEMM_NR)
    gemm_rows(GEMM_NR, a, wb, w_rs, c, y, i, n, k, n0, nb, a_rs, a_cs, use_c,
              beta, c_rs, c_cs, act_lo, act_hi);
#if CUVIL_SCALAR_BLOCKING
  /* RV64: the rows left over in pairs, each weight loaded for two rows
   * (14 instructions per step of 8 multiply-adds, against 18 one row at
   * a time: a transformer's 32 rows leave 2). */
  for (; i + 2 <= m; i += 2)
    gemm_rows(2, a, wb, w_rs, c, y, i, n, k, n0, nb, a_rs, a_cs, use_c, beta,
              c_rs, c_cs, act_lo, act_hi);
#endif
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
