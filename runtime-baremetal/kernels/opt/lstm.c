/* LSTM with W and R packed as the packed Gemm kernel's B operands.
 *
 * With batch 1, each step's products are matrix-vector: every weight is
 * used once per step, so the step is bound by streaming W and R. The
 * reference kernel's row-by-row dot products are float reductions that do
 * not vectorise; packed in panels, the weights stream contiguously through
 * CUVIL_MR-wide accumulators instead. The cell then runs over the gates in
 * one branch-free, vectorisable loop. */
#include "cuvil/kernels.h"

#include "../math.h"
#include "blocking.h"

/* g[0, gh) = c[0, gh) (0 when c is null) + a[0, k) times the gh packed
 * weight rows at bp, in panels of CUVIL_MR rows (the last narrower) whose
 * tap p holds each row's weight p. The single-row product of
 * cuvil_k_gemm_packed_f32, inlined here so that it specialises on the
 * step's shapes: the values of a are read CUVIL_VL at a time and
 * multiplied by lane (an FMA by element on AArch64). g may be c. */
static inline __attribute__((always_inline)) void
gemv_panels(float *g, const float *a, const float *bp, const float *c,
            int64_t gh, int64_t k) {
  for (int64_t n0 = 0; n0 < gh; n0 += CUVIL_MR) {
    const float *w = bp + n0 * k;
    if (gh - n0 < CUVIL_MR) {
      /* The narrow last panel: one row at a time. */
      const int64_t nb = gh - n0;
      for (int64_t j = 0; j < nb; ++j) {
        float s = c ? c[n0 + j] : 0.0f;
        for (int64_t p = 0; p < k; ++p)
          s += w[p * nb + j] * a[p];
        g[n0 + j] = s;
      }
      continue;
    }
    cuvil_vf acc[CUVIL_MV];
    CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v)
      acc[v] = c ? cuvil_vf_load(c + n0 + v * CUVIL_VL) : cuvil_vf_splat(0.0f);
    int64_t p = 0;
    for (; p + CUVIL_VL <= k; p += CUVIL_VL) {
      const cuvil_vf av = cuvil_vf_load(a + p);
      CUVIL_UNROLL
      for (int l = 0; l < CUVIL_VL; ++l)
        CUVIL_UNROLL
      for (int v = 0; v < CUVIL_MV; ++v)
        acc[v] += cuvil_vf_load(w + (p + l) * CUVIL_MR + v * CUVIL_VL) *
                  cuvil_vf_splat(av[l]);
    }
    for (; p < k; ++p)
      CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v)
      acc[v] +=
          cuvil_vf_load(w + p * CUVIL_MR + v * CUVIL_VL) * cuvil_vf_splat(a[p]);
    CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v)
      cuvil_vf_store(g + n0 + v * CUVIL_VL, &acc[v]);
  }
}

/* One step of one (direction, batch row): gates (i, o, f, c blocks of n
 * floats in g) from x_t and h, then the cell updates h and cs in place. */
/* h, cs, g and rb are distinct buffers (y_h, y_c, the workspace, B): said
 * with restrict, so that the cell loop vectorises without overlap checks. */
static inline __attribute__((always_inline)) void
lstm_packed_step(const float *xt, const float *wp, const float *rp,
                 const float *wb, const float *restrict rb, float *restrict h,
                 float *restrict cs, float *restrict g, int64_t n_in,
                 int64_t n) {
  const int64_t gh = 4 * n;
  /* g = x_t W^T + wb, then g = h R^T + g (+ rb). */
  gemv_panels(g, xt, wp, wb, gh, n_in);
  gemv_panels(g, h, rp, g, gh, n);
  /* Apart from the cell: a bias that may be absent, tested per element
   * there, made the vectorised cell load its lanes one by one. */
  if (rb)
    for (int64_t j = 0; j < gh; ++j)
      g[j] += rb[j];
#if !CUVIL_SCALAR_BLOCKING && defined(__clang__)
  /* Five exponentials and divisions per element: clang's cost model
   * judges the vector loop unprofitable (AArch64), yet it runs the cell in
   * 4 lanes (bench lstm_kws on a78: 28% fewer instructions). */
#pragma clang loop vectorize(enable)
#endif
  for (int64_t j = 0; j < n; ++j) {
    const float c1 = cuvil_sigmoidf(g[2 * n + j]) * cs[j] +
                     cuvil_sigmoidf(g[j]) * cuvil_tanhf(g[3 * n + j]);
    cs[j] = c1;
    h[j] = cuvil_sigmoidf(g[n + j]) * cuvil_tanhf(c1);
  }
}

void cuvil_k_lstm_packed_f32(const float *x, const float *wp, const float *rp,
                             const float *b, const float *init_h,
                             const float *init_c, float *y, float *y_h,
                             float *y_c, float *work, int64_t seq_len,
                             int64_t n_batch, int64_t n_in, int64_t n_hid,
                             int64_t n_dir, int64_t reverse, int64_t layout) {
  const int64_t n = n_hid, gh = 4 * n_hid;
  for (int64_t dir = 0; dir < n_dir; ++dir) {
    const float *wd = wp + dir * gh * n_in, *rd = rp + dir * gh * n;
    const float *wb = b ? b + dir * 2 * gh : 0;
    const float *rb = b ? wb + gh : 0;
    const int backward = n_dir == 2 ? dir == 1 : reverse != 0;
    for (int64_t bi = 0; bi < n_batch; ++bi) {
      const int64_t state =
          (layout ? bi * n_dir + dir : dir * n_batch + bi) * n;
      float *h = y_h + state, *cs = y_c + state;
      for (int64_t j = 0; j < n; ++j) {
        h[j] = init_h ? init_h[state + j] : 0.0f;
        cs[j] = init_c ? init_c[state + j] : 0.0f;
      }
      for (int64_t s = 0; s < seq_len; ++s) {
        const int64_t t = backward ? seq_len - 1 - s : s;
        const float *xt =
            x + (layout ? bi * seq_len + t : t * n_batch + bi) * n_in;
        lstm_packed_step(xt, wd, rd, wb, rb, h, cs, work, n_in, n);
        if (y) {
          float *yt = y + (layout ? (bi * seq_len + t) * n_dir + dir
                                  : (t * n_dir + dir) * n_batch + bi) *
                              n;
          for (int64_t j = 0; j < n; ++j)
            yt[j] = h[j];
        }
      }
    }
  }
}
