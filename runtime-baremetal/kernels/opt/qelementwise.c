/* Element-wise integer kernels in int32 lanes (cuvil/kernels/qint.h): the
 * same results as their reference forms in quant/qint.c, in arithmetic a
 * vectorizer turns into whole vectors (the reference's int64 products and
 * per-element type tests keep it scalar: some 11 instructions per element
 * on a78). On one-lane targets the loop stays scalar, and still does without
 * the int64 products. */
#include "cuvil/kernels.h"

/* y[i] for i < n from bytes pa, pb. Inlined with py equal to pa or pb when
 * the sum is in place, so the vectorizer sees one pointer and a distance of
 * 0 (with distinct pointers it checks for overlap at run time, and the
 * in-place case would run scalar). Bytes are read as uint8 whatever their
 * type: an int8 byte with its top bit flipped (fa, fb) is its value plus
 * 128, folded into c with the zero points. */
static inline __attribute__((always_inline)) void
qadd_run(const uint8_t *pa, const uint8_t *pb, uint8_t *py, int64_t n,
         uint8_t fa, uint8_t fb, int32_t ma, int32_t mb, int32_t c, int32_t s,
         int32_t zp, int32_t lo, int32_t hi) {
  const int32_t odd = (int32_t)1 << s, rnd = ((int32_t)1 << (s - 1)) - 1;
  for (int64_t i = 0; i < n; ++i) {
    /* v = (a - a_zp) a_mult + (b - b_zp) b_mult, |v| < 2^30. */
    const int32_t v = (int32_t)(uint8_t)(pa[i] ^ fa) * ma +
                      (int32_t)(uint8_t)(pb[i] ^ fb) * mb + c;
    /* Round half to even: with v = q 2^s + r, (v + 2^(s-1) - 1 + (q & 1))
     * >> s is q + 1 for r above half, q below, and q + (q & 1) at half. */
    int32_t q = ((v + rnd + ((v & odd) != 0)) >> s) + zp;
    q = q < lo ? lo : q;
    py[i] = (uint8_t)(q > hi ? hi : q); /* in range: the byte of either type */
  }
}

void cuvil_k_qadd_lanes_s8(const void *a, const void *b, void *y, int64_t n,
                           int64_t a_type, int64_t b_type, int64_t y_type,
                           int64_t a_zp, int64_t b_zp, int64_t a_mult,
                           int64_t b_mult, int64_t shift, int64_t y_zp,
                           int64_t y_lo, int64_t y_hi) {
  const int64_t lim = (int64_t)1 << CUVIL_QADD_LANES_BITS;
  if (a_mult < 0 || a_mult >= lim || b_mult < 0 || b_mult >= lim || shift < 1 ||
      shift > CUVIL_QADD_LANES_SHIFT_MAX) {
    cuvil_k_qadd_s8(a, b, y, n, a_type, b_type, y_type, a_zp, b_zp, a_mult,
                    b_mult, shift, y_zp, y_lo, y_hi);
    return;
  }
  const uint8_t fa = a_type == CUVIL_Q_U8 ? 0 : 0x80;
  const uint8_t fb = b_type == CUVIL_Q_U8 ? 0 : 0x80;
  /* The zero points in the uint8 reading: 0..255 for either type, so
   * |c| < 2^30 too. */
  const int64_t za = a_zp + (fa ? 128 : 0), zb = b_zp + (fb ? 128 : 0);
  const int32_t c = (int32_t)(-za * a_mult - zb * b_mult);
  const int32_t ma = (int32_t)a_mult, mb = (int32_t)b_mult, s = (int32_t)shift;
  const int32_t zp = (int32_t)y_zp, lo = (int32_t)y_lo, hi = (int32_t)y_hi;
  const uint8_t *pa = (const uint8_t *)a, *pb = (const uint8_t *)b;
  uint8_t *py = (uint8_t *)y;
  if (y == a)
    qadd_run(py, pb, py, n, fa, fb, ma, mb, c, s, zp, lo, hi);
  else if (y == b)
    qadd_run(pa, py, py, n, fa, fb, ma, mb, c, s, zp, lo, hi);
  else
    qadd_run(pa, pb, py, n, fa, fb, ma, mb, c, s, zp, lo, hi);
}
