/* Reference kernels of the integer fast path (cuvil/kernels/qint.h): the
 * oracle of the optimised ones in opt/qpacked.c, and the kernels of a
 * --kernels portable build. Straight loops over the contract: packed
 * weights are read through qint_w, padding reads the input zero point. */
#include "cuvil/kernels.h"

#include "requant.h"

/* w[mo, t] of weights packed with panels of mr channels and groups of kr
 * steps, kp = K rounded up to kr, M channels (see qint.h). */
static inline int32_t qint_w(const int8_t *wp, int64_t mo, int64_t t, int64_t M,
                             int64_t kp, int64_t mr, int64_t kr) {
  const int64_t m0 = mo / mr * mr;
  const int64_t mb = M - m0 < mr ? M - m0 : mr;
  const int64_t q = t / kr;
  return wp[m0 * kp + q * mb * kr + (mo - m0) * kr + t % kr];
}

static inline int64_t round_up(int64_t v, int64_t to) {
  return (v + to - 1) / to * to;
}

void cuvil_k_qconv2d_s8(const void *x, const int8_t *wp, const int32_t *bias,
                        const int32_t *wsum, const int32_t *rq, void *y,
                        const int64_t *geom, int64_t mr, int64_t kr,
                        int64_t x_type, int64_t x_zp, int64_t y_type,
                        int64_t y_zp, int64_t y_lo, int64_t y_hi) {
  (void)wsum;
  const int64_t n = geom[CUVIL_QCONV_N], c = geom[CUVIL_QCONV_C];
  const int64_t h = geom[CUVIL_QCONV_H], wd = geom[CUVIL_QCONV_W];
  const int64_t m = geom[CUVIL_QCONV_M], kh = geom[CUVIL_QCONV_KH];
  const int64_t kw = geom[CUVIL_QCONV_KW], oh = geom[CUVIL_QCONV_OH];
  const int64_t ow = geom[CUVIL_QCONV_OW], group = geom[CUVIL_QCONV_GROUP];
  const int64_t cg = c / group, mg = m / group;
  const int64_t kp = round_up(cg * kh * kw, kr);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t mo = 0; mo < m; ++mo) {
      const int64_t g = mo / mg;
      const int8_t *wg = wp + g * mg * kp;
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          int32_t acc = bias[mo];
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t iy = oy * geom[CUVIL_QCONV_SH] +
                                   ky * geom[CUVIL_QCONV_DH] -
                                   geom[CUVIL_QCONV_PAD_TOP];
                const int64_t ix = ox * geom[CUVIL_QCONV_SW] +
                                   kx * geom[CUVIL_QCONV_DW] -
                                   geom[CUVIL_QCONV_PAD_LEFT];
                const int32_t xv =
                    iy < 0 || iy >= h || ix < 0 || ix >= wd
                        ? (int32_t)x_zp
                        : cuvil_q_load8(
                              x, ((b * c + g * cg + ci) * h + iy) * wd + ix,
                              x_type);
                acc += xv * qint_w(wg, mo - g * mg, (ci * kh + ky) * kw + kx,
                                   mg, kp, mr, kr);
              }
          cuvil_q_store8(y, ((b * m + mo) * oh + oy) * ow + ox, y_type,
                         cuvil_q_requant(acc, rq + 2 * mo, (int32_t)y_zp,
                                         (int32_t)y_lo, (int32_t)y_hi));
        }
    }
}

void cuvil_k_qgemm_s8(const void *a, const int8_t *wp, const int32_t *bias,
                      const int32_t *wsum, const int32_t *rq, void *y,
                      int64_t m, int64_t n, int64_t k, int64_t mr, int64_t kr,
                      int64_t a_type, int64_t a_zp, int64_t y_type,
                      int64_t y_zp, int64_t y_lo, int64_t y_hi) {
  (void)wsum;
  (void)a_zp; /* no padding: bias carries the zero-point correction */
  const int64_t kp = round_up(k, kr);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int32_t acc = bias[j];
      for (int64_t t = 0; t < k; ++t)
        acc += cuvil_q_load8(a, i * k + t, a_type) *
               qint_w(wp, j, t, n, kp, mr, kr);
      cuvil_q_store8(y, i * n + j, y_type,
                     cuvil_q_requant(acc, rq + 2 * j, (int32_t)y_zp,
                                     (int32_t)y_lo, (int32_t)y_hi));
    }
}

void cuvil_k_qdwconv2d_s8(const void *x, const int8_t *w, const int32_t *bias,
                          const int32_t *wsum, const int32_t *rq, void *y,
                          const int64_t *geom, int64_t x_type, int64_t x_zp,
                          int64_t y_type, int64_t y_zp, int64_t y_lo,
                          int64_t y_hi) {
  /* Plain [c][kh * kw] weights are the packing mr = kr = 1. */
  cuvil_k_qconv2d_s8(x, w, bias, wsum, rq, y, geom, 1, 1, x_type, x_zp, y_type,
                     y_zp, y_lo, y_hi);
}

void cuvil_k_qadd_s8(const void *a, const void *b, void *y, int64_t n,
                     int64_t a_type, int64_t b_type, int64_t y_type,
                     int64_t a_zp, int64_t b_zp, int64_t a_mult, int64_t b_mult,
                     int64_t shift, int64_t y_zp, int64_t y_lo, int64_t y_hi) {
  for (int64_t i = 0; i < n; ++i) {
    /* |a - a_zp| < 2^8 and a_mult < 2^31: the sum stays below 2^40. */
    const int64_t v = (cuvil_q_load8(a, i, a_type) - a_zp) * a_mult +
                      (cuvil_q_load8(b, i, b_type) - b_zp) * b_mult;
    int64_t q = cuvil_q_rshift_rhe(v, shift) + y_zp;
    q = q < y_lo ? y_lo : q;
    cuvil_q_store8(y, i, y_type, (int32_t)(q > y_hi ? y_hi : q));
  }
}

void cuvil_k_qglobal_avgpool_s8(const void *x, void *y, int64_t nc, int64_t hw,
                                int64_t x_type, int64_t y_type, int64_t x_zp,
                                int64_t mult, int64_t shift, int64_t y_zp,
                                int64_t y_lo, int64_t y_hi) {
  for (int64_t i = 0; i < nc; ++i) {
    int64_t sum = -hw * x_zp;
    for (int64_t j = 0; j < hw; ++j)
      sum += cuvil_q_load8(x, i * hw + j, x_type);
    /* |sum| < 2^8 hw: below 2^31 for any plane of fewer than 2^23
     * elements, so sum * mult stays below 2^62. */
    int64_t q = cuvil_q_rshift_rhe(sum * mult, shift) + y_zp;
    q = q < y_lo ? y_lo : q;
    cuvil_q_store8(y, i, y_type, (int32_t)(q > y_hi ? y_hi : q));
  }
}
