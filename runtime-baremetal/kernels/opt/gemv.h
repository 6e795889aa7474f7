/* The single-row product on a full panel of packed weights (a fully
 * connected layer at batch 1, a recurrent step), shared by the matrix
 * products (gemm.c) and the LSTM (lstm.c), which include it after
 * cuvil/kernels.h and blocking.h. */
#ifndef CUVIL_KERNELS_OPT_GEMV_H
#define CUVIL_KERNELS_OPT_GEMV_H

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#define INLINE static inline __attribute__((always_inline))

/* The CUVIL_MV weight vectors of one reduction step of a full panel, at
 * *wp; advances *wp to the next step. On AArch64 one LD1 of four registers
 * loads them (64 bytes) and post-increments the pointer. LD1 of several
 * registers has no offset form, so the compiler must not turn the running
 * pointer back into base + constant offsets (it would add an address
 * computation per load): the empty asm hides the pointer's value from it.
 * Elsewhere plain vector loads, which do take offsets. */
INLINE void panel_weights(cuvil_vf w[CUVIL_MV], const float **wp) {
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
      panel_weights(w, &wp);
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
    panel_weights(w, &wp);
    const cuvil_vf s = cuvil_vf_splat(a[p]);
    CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v)
      acc[v] += w[v] * s;
  }
  CUVIL_UNROLL
  for (int v = 0; v < CUVIL_MV; ++v)
    acc[v] += odd[v];
}

#endif /* CUVIL_KERNELS_OPT_GEMV_H */
