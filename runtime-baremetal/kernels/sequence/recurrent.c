/* Reference kernel of the ONNX recurrent ops (RNN, GRU, LSTM).
 *
 * Directions and batch rows are independent, so the kernel runs one
 * (direction, row) pair at a time through its whole sequence: the row's
 * hidden state lives in its slice of y_h (and the LSTM cell state in y_c),
 * and each step computes the gate pre-activations into work with
 * matrix-vector products before updating the state element-wise. */
#include "cuvil/kernels.h"

#include "../math.h"

enum { CELL_RNN = 0, CELL_GRU = 1, CELL_LSTM = 2 };

/* One activation: a = {code, alpha bits, beta bits}. */
static float rnn_act(const int64_t *a, float v) {
  const float alpha = cuvil_f32_from_bits((uint32_t)a[1]);
  const float beta = cuvil_f32_from_bits((uint32_t)a[2]);
  switch (a[0]) {
  case 0: return v > 0.0f ? v : 0.0f;
  case 1: return cuvil_tanhf(v);
  case 2: return cuvil_sigmoidf(v);
  case 3: return alpha * v + beta;
  case 4: return v < 0.0f ? alpha * v : v;
  case 5: return v > alpha ? v : 0.0f;
  case 6: return alpha * cuvil_tanhf(beta * v);
  case 7: return cuvil_clampf(alpha * v + beta, 0.0f, 1.0f);
  case 8: return v < 0.0f ? alpha * cuvil_expm1f(v) : v;
  case 9: return v / (1.0f + __builtin_fabsf(v));
  default:
    return (v > 0.0f ? v : 0.0f) +
           cuvil_log1pf(cuvil_expf(-__builtin_fabsf(v)));
  }
}

/* The gate pre-activation v, clipped when clip > 0. */
static float rnn_clip(float v, float clip) {
  return clip > 0.0f ? cuvil_clampf(v, -clip, clip) : v;
}

/* out[k] = sum_j m[k * cols + j] * v[j] for k < rows (+= when acc). */
static void rnn_matvec(float *out, const float *m, const float *v, int64_t rows,
                       int64_t cols, int acc) {
  for (int64_t k = 0; k < rows; ++k) {
    float s = 0.0f;
    for (int64_t j = 0; j < cols; ++j)
      s += m[k * cols + j] * v[j];
    out[k] = acc ? out[k] + s : s;
  }
}

/* Pre-activations of gates [first, first + count) (blocks of n_hid rows):
 * wi x + wb + rb, plus ri h unless skip_r. */
static void rnn_gates(float *g, const float *wd, const float *rd,
                      const float *wb, const float *rb, const float *xt,
                      const float *h, int64_t first, int64_t count,
                      int64_t n_in, int64_t n_hid, int skip_r) {
  const int64_t lo = first * n_hid, rows = count * n_hid;
  rnn_matvec(g + lo, wd + lo * n_in, xt, rows, n_in, 0);
  if (!skip_r)
    rnn_matvec(g + lo, rd + lo * n_hid, h, rows, n_hid, 1);
  if (wb)
    for (int64_t k = lo; k < lo + rows; ++k)
      g[k] += wb[k] + (skip_r ? 0.0f : rb[k]);
}

struct rnn_dir {
  const float *w, *r, *wb, *rb, *p;
  const int64_t *acts;
  int64_t n_in, n_hid;
  float clip;
  int64_t linear_before_reset, input_forget;
};

static void rnn_step(const struct rnn_dir *d, const float *xt, float *h,
                     float *work) {
  const int64_t n = d->n_hid;
  rnn_gates(work, d->w, d->r, d->wb, d->rb, xt, h, 0, 1, d->n_in, n, 0);
  for (int64_t j = 0; j < n; ++j)
    h[j] = rnn_act(d->acts, rnn_clip(work[j], d->clip));
}

/* GRU, gates z, r, h: z and r as usual; the candidate is
 * g(wh x + rh (r . h) + rbh + wbh), or with linear_before_reset
 * g(wh x + r . (rh h + rbh) + wbh). */
static void gru_step(const struct rnn_dir *d, const float *xt, float *h,
                     float *work) {
  const int64_t n = d->n_hid;
  const int64_t *f = d->acts, *g = d->acts + 3;
  float *z = work, *r = work + n, *c = work + 2 * n, *rh = work + 3 * n;
  rnn_gates(work, d->w, d->r, d->wb, d->rb, xt, h, 0, 2, d->n_in, n, 0);
  rnn_gates(work, d->w, d->r, d->wb, d->rb, xt, h, 2, 1, d->n_in, n, 1);
  for (int64_t j = 0; j < n; ++j) {
    z[j] = rnn_act(f, rnn_clip(z[j], d->clip));
    r[j] = rnn_act(f, rnn_clip(r[j], d->clip));
  }
  const float *rhw = d->r + 2 * n * n;
  const float *rbh = d->rb ? d->rb + 2 * n : 0;
  if (d->linear_before_reset) {
    rnn_matvec(rh, rhw, h, n, n, 0);
    for (int64_t j = 0; j < n; ++j)
      c[j] += r[j] * (rh[j] + (rbh ? rbh[j] : 0.0f));
  } else {
    for (int64_t j = 0; j < n; ++j)
      rh[j] = r[j] * h[j];
    rnn_matvec(c, rhw, rh, n, n, 1);
    if (rbh)
      for (int64_t j = 0; j < n; ++j)
        c[j] += rbh[j];
  }
  for (int64_t j = 0; j < n; ++j) {
    const float cand = rnn_act(g, rnn_clip(c[j], d->clip));
    h[j] = (1.0f - z[j]) * cand + z[j] * h[j];
  }
}

/* LSTM, gates i, o, f, c; peepholes p = [pi, po, pf]. */
static void lstm_step(const struct rnn_dir *d, const float *xt, float *h,
                      float *cs, float *work) {
  const int64_t n = d->n_hid;
  const int64_t *f = d->acts, *g = d->acts + 3, *ha = d->acts + 6;
  const float *pi = d->p, *po = d->p ? d->p + n : 0,
              *pf = d->p ? d->p + 2 * n : 0;
  rnn_gates(work, d->w, d->r, d->wb, d->rb, xt, h, 0, 4, d->n_in, n, 0);
  for (int64_t j = 0; j < n; ++j) {
    const float c0 = cs[j];
    const float i =
        rnn_act(f, rnn_clip(work[j] + (pi ? pi[j] * c0 : 0.0f), d->clip));
    const float fg =
        d->input_forget
            ? 1.0f - i
            : rnn_act(f, rnn_clip(work[2 * n + j] + (pf ? pf[j] * c0 : 0.0f),
                                  d->clip));
    const float cand = rnn_act(g, rnn_clip(work[3 * n + j], d->clip));
    const float c1 = fg * c0 + i * cand;
    const float o =
        rnn_act(f, rnn_clip(work[n + j] + (po ? po[j] * c1 : 0.0f), d->clip));
    cs[j] = c1;
    h[j] = o * rnn_act(ha, c1);
  }
}

void cuvil_k_recurrent_f32(const float *x, const float *w, const float *r,
                           const float *b, const int32_t *seq_lens,
                           const float *init_h, const float *init_c,
                           const float *p, float *y, float *y_h, float *y_c,
                           float *work, int64_t cell, int64_t seq_len,
                           int64_t n_batch, int64_t n_in, int64_t n_hid,
                           int64_t n_dir, int64_t reverse, int64_t layout,
                           const int64_t *acts, float clip,
                           int64_t linear_before_reset, int64_t input_forget) {
  const int64_t gates = cell == CELL_LSTM ? 4 : cell == CELL_GRU ? 3 : 1;
  const int64_t gh = gates * n_hid;
  for (int64_t dir = 0; dir < n_dir; ++dir) {
    struct rnn_dir d;
    d.w = w + dir * gh * n_in;
    d.r = r + dir * gh * n_hid;
    d.wb = b ? b + dir * 2 * gh : 0;
    d.rb = b ? d.wb + gh : 0;
    d.p = p ? p + dir * 3 * n_hid : 0;
    d.acts = acts + dir * 9;
    d.n_in = n_in;
    d.n_hid = n_hid;
    d.clip = clip;
    d.linear_before_reset = linear_before_reset;
    d.input_forget = input_forget;
    const int backward = n_dir == 2 ? dir == 1 : reverse != 0;
    for (int64_t bi = 0; bi < n_batch; ++bi) {
      const int64_t state =
          (layout ? bi * n_dir + dir : dir * n_batch + bi) * n_hid;
      float *h = y_h + state;
      float *cs = y_c ? y_c + state : 0;
      for (int64_t j = 0; j < n_hid; ++j) {
        h[j] = init_h ? init_h[state + j] : 0.0f;
        if (cs)
          cs[j] = init_c ? init_c[state + j] : 0.0f;
      }
      int64_t len = seq_lens ? seq_lens[bi] : seq_len;
      len = len < 0 ? 0 : len > seq_len ? seq_len : len;
      for (int64_t s = 0; s < seq_len; ++s) {
        const int64_t t = backward ? len - 1 - s : s;
        float *yt = 0;
        if (y) {
          const int64_t ts = s < len ? t : s;
          yt = y + (layout ? (bi * seq_len + ts) * n_dir + dir
                           : (ts * n_dir + dir) * n_batch + bi) *
                       n_hid;
        }
        if (s >= len) { /* past the row's end: Y is zero */
          for (int64_t j = 0; yt && j < n_hid; ++j)
            yt[j] = 0.0f;
          continue;
        }
        const float *xt =
            x + (layout ? bi * seq_len + t : t * n_batch + bi) * n_in;
        if (cell == CELL_LSTM)
          lstm_step(&d, xt, h, cs, work);
        else if (cell == CELL_GRU)
          gru_step(&d, xt, h, work);
        else
          rnn_step(&d, xt, h, work);
        for (int64_t j = 0; yt && j < n_hid; ++j)
          yt[j] = h[j];
      }
    }
  }
}
