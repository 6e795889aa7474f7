/* LSTM with W and R packed as the packed Gemm kernel's B operands.
 *
 * With batch 1, the recurrent product h . R^T of a step is matrix-vector:
 * every weight of R is used once per step, so it is bound by streaming R.
 * The input product x_t . W^T does not depend on h, so it runs for
 * CUVIL_LSTM_STEPS steps at once, a small matrix product in which each
 * weight loaded serves that many steps (a78, bench lstm_kws: 0.45
 * instructions per multiply-add as matrix-vector products, 0.30 so). The
 * reference kernel's row-by-row dot products are float reductions that do
 * not vectorise; packed in panels, the weights stream contiguously through
 * CUVIL_MR-wide accumulators instead. The cell then runs over the gates in
 * one branch-free, vectorisable loop. */
#include "cuvil/kernels.h"

#include "../math.h"
#include "blocking.h"
#include "gemv.h"

#define INLINE static inline __attribute__((always_inline))
#define LSTM_T CUVIL_LSTM_STEPS

/* acc[t] += the panel's weights of taps [p, p + CUVIL_VL) at w times those
 * values of a_t = a + t * astep, for t < nt: the values read as one vector
 * and multiplied by lane. */
INLINE void panel_step(cuvil_vf acc[][CUVIL_MV], int nt, const float *a,
                       int64_t astep, const float *w, int64_t p) {
  cuvil_vf av[LSTM_T];
  CUVIL_UNROLL
  for (int t = 0; t < nt; ++t)
    av[t] = cuvil_vf_load(a + t * astep + p);
  CUVIL_UNROLL
  for (int l = 0; l < CUVIL_VL; ++l)
    CUVIL_UNROLL
  for (int v = 0; v < CUVIL_MV; ++v) {
    const cuvil_vf wv = cuvil_vf_load(w + (p + l) * CUVIL_MR + v * CUVIL_VL);
    CUVIL_UNROLL
    for (int t = 0; t < nt; ++t)
      acc[t][v] += wv * cuvil_vf_splat(av[t][l]);
  }
}

/* For t < nt (a constant): g_t[0, gh) = c_t[0, gh) + c2[0, gh) + a_t[0, k)
 * times the gh packed weight rows at bp, where g_t = g + t * gstep,
 * a_t = a + t * astep and c_t = c + t * cstep (c and c2 may be null: no
 * addend). The weights come in panels of CUVIL_MR rows (the last
 * narrower) whose tap p holds each row's weight p; the values of each a_t
 * are read CUVIL_VL at a time and multiplied by lane (an FMA by element on
 * AArch64), so every weight vector loaded serves the nt rows of a. g_t may
 * be c_t. */
INLINE void panel_products(float *g, int64_t gstep, int nt, const float *a,
                           int64_t astep, const float *bp, const float *c,
                           int64_t cstep, const float *c2, int64_t gh,
                           int64_t k) {
  for (int64_t n0 = 0; n0 < gh; n0 += CUVIL_MR) {
    const float *w = bp + n0 * k;
    if (gh - n0 < CUVIL_MR) {
      /* The narrow last panel: one row at a time. */
      const int64_t nb = gh - n0;
      for (int t = 0; t < nt; ++t)
        for (int64_t j = 0; j < nb; ++j) {
          float s =
              (c ? c[t * cstep + n0 + j] : 0.0f) + (c2 ? c2[n0 + j] : 0.0f);
          for (int64_t p = 0; p < k; ++p)
            s += w[p * nb + j] * a[t * astep + p];
          g[t * gstep + n0 + j] = s;
        }
      continue;
    }
    cuvil_vf acc[LSTM_T][CUVIL_MV];
    CUVIL_UNROLL
    for (int t = 0; t < nt; ++t)
      CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v) {
      const int64_t o = n0 + v * CUVIL_VL;
      acc[t][v] = c ? cuvil_vf_load(c + t * cstep + o) : cuvil_vf_splat(0.0f);
      if (c2)
        acc[t][v] += cuvil_vf_load(c2 + o);
    }
    int64_t p = 0;
    CUVIL_UNROLL_BY(2)
    for (; p + CUVIL_VL <= k; p += CUVIL_VL)
      panel_step(acc, nt, a, astep, w, p);
    for (; p < k; ++p)
      CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v) {
      const cuvil_vf wv = cuvil_vf_load(w + p * CUVIL_MR + v * CUVIL_VL);
      CUVIL_UNROLL
      for (int t = 0; t < nt; ++t)
        acc[t][v] += wv * cuvil_vf_splat(a[t * astep + p]);
    }
    CUVIL_UNROLL
    for (int t = 0; t < nt; ++t)
      CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v)
      cuvil_vf_store(g + t * gstep + n0 + v * CUVIL_VL, &acc[t][v]);
  }
}

/* g[0, gh) += a[0, k) times the gh packed weight rows at bp (laid out as
 * for panel_products): the matrix-vector product of a step. On vector
 * targets a panel at a time by gemv_full_panel (a fully connected layer's
 * product: on AArch64 one load of 16 weights per step; bench lstm_kws on
 * a78: 1.24 M instructions with panel_products' loop, 1.17 M so). RV64
 * loads one value of a per 4 rows with one panel, so it runs
 * LSTM_NP panels at a time (u74-mc: 6.53 M instructions with one panel,
 * 6.12 M with 4 and their 16 accumulators, 5.93 M so unrolled by 8). The
 * rest goes to panel_products. */
#define LSTM_NP 4
INLINE void recurrent_product(float *g, const float *a, const float *bp,
                              int64_t gh, int64_t k) {
  int64_t n0 = 0;
#if CUVIL_SCALAR_BLOCKING
  const int64_t pass = LSTM_NP * CUVIL_MR;
  for (; n0 + pass <= gh; n0 += pass) {
    const float *w = bp + n0 * k;
    cuvil_vf acc[LSTM_NP][CUVIL_MV];
    CUVIL_UNROLL
    for (int q = 0; q < LSTM_NP; ++q)
      CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v)
      acc[q][v] = cuvil_vf_load(g + n0 + q * CUVIL_MR + v * CUVIL_VL);
    CUVIL_UNROLL_BY(8)
    for (int64_t p = 0; p < k; ++p)
      CUVIL_UNROLL
    for (int q = 0; q < LSTM_NP; ++q)
      CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v)
      acc[q][v] +=
          cuvil_vf_load(w + q * CUVIL_MR * k + p * CUVIL_MR + v * CUVIL_VL) *
          cuvil_vf_splat(a[p]);
    CUVIL_UNROLL
    for (int q = 0; q < LSTM_NP; ++q)
      CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v)
      cuvil_vf_store(g + n0 + q * CUVIL_MR + v * CUVIL_VL, &acc[q][v]);
  }
#else
  for (; n0 + CUVIL_MR <= gh; n0 += CUVIL_MR) {
    cuvil_vf acc[CUVIL_MV];
    CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v)
      acc[v] = cuvil_vf_load(g + n0 + v * CUVIL_VL);
    gemv_full_panel(acc, a, bp + n0 * k, k);
    CUVIL_UNROLL
    for (int v = 0; v < CUVIL_MV; ++v)
      cuvil_vf_store(g + n0 + v * CUVIL_VL, &acc[v]);
  }
#endif
  if (n0 < gh)
    panel_products(g + n0, 0, 1, a, 0, bp + n0 * k, g + n0, 0, 0, gh - n0, k);
}

/* g_t = x_t . W^T + wb + rb for the nt steps whose inputs are x0, x0 +
 * xstep, ...: one specialisation per count, so that the accumulators of
 * every count are registers. */
INLINE void input_products(float *g, int nt, const float *x0, int64_t xstep,
                           const float *wp, const float *wb, const float *rb,
                           int64_t gh, int64_t n_in) {
  switch (nt) {
  case LSTM_T:
    panel_products(g, gh, LSTM_T, x0, xstep, wp, wb, 0, rb, gh, n_in);
    break;
#if LSTM_T > 3
  case 3: panel_products(g, gh, 3, x0, xstep, wp, wb, 0, rb, gh, n_in); break;
#endif
#if LSTM_T > 2
  case 2: panel_products(g, gh, 2, x0, xstep, wp, wb, 0, rb, gh, n_in); break;
#endif
  default:
    for (int t = 0; t < nt; ++t)
      panel_products(g + t * gh, 0, 1, x0 + t * xstep, 0, wp, wb, 0, rb, gh,
                     n_in);
  }
}

/* One step of one (direction, batch row): g holds the gates' input part
 * (i, o, f, c blocks of n floats); h . R^T is added, then the cell updates
 * h and cs in place and writes h to yt too when there is one (the step's
 * slice of Y). h, cs, g and yt are distinct buffers (y_h, y_c, the
 * workspace, y): said with restrict, so that the cell loop vectorises
 * without overlap checks. */
INLINE void lstm_packed_step(const float *rp, float *restrict h,
                             float *restrict cs, float *restrict g,
                             float *restrict yt, int64_t n) {
  recurrent_product(g, h, rp, 4 * n, n);
#if !CUVIL_SCALAR_BLOCKING && defined(__clang__)
  /* Five exponentials and divisions per element: clang's cost model
   * judges the vector loop unprofitable (AArch64), yet it runs the cell in
   * 4 lanes (bench lstm_kws on a78: 28% fewer instructions). */
#pragma clang loop vectorize(enable)
#endif
  for (int64_t j = 0; j < n; ++j) {
    const float c1 = cuvil_sigmoidf(g[2 * n + j]) * cs[j] +
                     cuvil_sigmoidf(g[j]) * cuvil_tanhf(g[3 * n + j]);
    const float h1 = cuvil_sigmoidf(g[n + j]) * cuvil_tanhf(c1);
    cs[j] = c1;
    h[j] = h1;
    if (yt)
      yt[j] = h1;
  }
}

void cuvil_k_lstm_packed_f32(const float *x, const float *wp, const float *rp,
                             const float *b, const float *init_h,
                             const float *init_c, float *y, float *y_h,
                             float *y_c, float *work, int64_t seq_len,
                             int64_t n_batch, int64_t n_in, int64_t n_hid,
                             int64_t n_dir, int64_t reverse, int64_t layout) {
  const int64_t n = n_hid, gh = 4 * n_hid;
  /* Between the inputs of consecutive time steps. */
  const int64_t tstep = (layout ? 1 : n_batch) * n_in;
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
      for (int64_t s0 = 0; s0 < seq_len; s0 += LSTM_T) {
        const int nt = seq_len - s0 < LSTM_T ? (int)(seq_len - s0) : LSTM_T;
        const int64_t t0 = backward ? seq_len - 1 - s0 : s0;
        const float *x0 =
            x + (layout ? bi * seq_len + t0 : t0 * n_batch + bi) * n_in;
        input_products(work, nt, x0, backward ? -tstep : tstep, wd, wb, rb, gh,
                       n_in);
        for (int i = 0; i < nt; ++i) {
          if (!y) {
            lstm_packed_step(rd, h, cs, work + i * gh, 0, n);
            continue;
          }
          const int64_t t = backward ? t0 - i : t0 + i;
          lstm_packed_step(rd, h, cs, work + i * gh,
                           y + (layout ? (bi * seq_len + t) * n_dir + dir
                                       : (t * n_dir + dir) * n_batch + bi) *
                                   n,
                           n);
        }
      }
    }
  }
}
