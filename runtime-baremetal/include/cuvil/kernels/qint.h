/* cuvil kernels: the integer (INT8) fast path.
 * Part of cuvil/kernels.h, which includes it inside its extern "C" block
 * after the shared definitions; include cuvil/kernels.h, not this file. */
#ifndef CUVIL_KERNELS_QINT_H
#define CUVIL_KERNELS_QINT_H

#ifndef CUVIL_KERNELS_H
#error "include cuvil/kernels.h instead"
#endif

#include "cuvil/kernels/quant.h" /* the CUVIL_QCONV_* indices */

/* ---- Integer convolution and matrix product -------------------------------
 *
 * cuvilc's lower-qdq pass turns quantized Conv/Gemm/MatMul (the QDQ form,
 * and QLinearConv/QLinearMatMul with constant weights) into calls of these
 * kernels. Everything about the weights is settled at compile time:
 *
 * Weights are int8 values w = w_q - w_zp (the pass keeps the float path
 * where a value does not fit), K per output channel: K = c / group * kh *
 * kw for a convolution (step t = (ci * kh + ky) * kw + kx), k for a matrix
 * product (output channel = column of y). They are packed in panels of
 * mr output channels and groups of kr reduction steps (mr, kr: arguments;
 * the optimised kernels need their library's cuvil_k_qpack_mr/kr, the
 * reference kernels take any, and mr = kr = 1 is the plain [M][K] order).
 * With kp = K rounded up to a multiple of kr, the panel of channels
 * [m0, m0 + mb), mb = min(mr, M - m0), starts at byte m0 * kp and holds,
 * for each group q of kr steps, mb x kr bytes:
 *     wp[m0 * kp + q * mb * kr + (mo - m0) * kr + r] = w[mo, q * kr + r]
 * (0 past K). A grouped convolution packs each group's M / group channels
 * separately; group g's weights start at byte g * (M / group) * kp.
 *
 * The int32 accumulator of output channel mo is
 *     acc = bias[mo] + sum_t xv_t * w[mo, t]
 * where xv_t is the raw input value (uint8 or int8 by x_type, a CUVIL_Q_*
 * code) and a padded tap reads x_zp. The pass folds -x_zp * wsum[mo] into
 * bias, so acc is the exact ONNX accumulator (x - x_zp)(w_q - w_zp) plus
 * the quantized bias. wsum[mo] = sum_t w[mo, t] lets a kernel move the
 * activations to another domain (uint8 to int8 by flipping the top bit,
 * say) and correct the accumulator with a multiple of it.
 *
 * Requantization is in fixed point, rounding half to even exactly:
 *     y = clamp(y_zp + rhe(acc * rq[2 mo] / 2^rq[2 mo + 1]), y_lo, y_hi)
 * with the multiplier rq[2 mo] in [2^30, 2^31) (or 0) and the shift
 * rq[2 mo + 1] in [1, 62]; y_lo/y_hi lie in the range of y_type and carry
 * a fused Relu or Clip. */
extern const int64_t cuvil_k_qpack_mr;
extern const int64_t cuvil_k_qpack_kr;
/* 1: the packed kernels multiply uint8 activations by the weights, and
 * flip int8 ones into uint8 (x + 128); 0: int8 ones, uint8 inputs flipped
 * (x - 128). */
extern const int64_t cuvil_k_qpack_x_unsigned;

/* The packed kernels' correction per unit of wsum for x_type activations
 * (a CUVIL_Q_* code) on a library of cuvil_k_qpack_x_unsigned x_unsigned:
 * a flipped uint8 x = x' + 128 adds 128 * wsum to the accumulator, a
 * flipped int8 x = x' - 128 subtracts it. */
static inline int32_t cuvil_qpack_corr(int64_t x_unsigned, int64_t x_type) {
  const int is_u8 = x_type == CUVIL_Q_U8;
  return is_u8 == (x_unsigned != 0) ? 0 : is_u8 ? 128 : -128;
}

/* 2-D convolution, NCHW, geometry as cuvil_k_qlinear_conv's (the
 * CUVIL_QCONV_* array); x is uint8/int8 (x_type), y uint8/int8 (y_type). */
void cuvil_k_qconv2d_s8(const void *x, const int8_t *wp, const int32_t *bias,
                        const int32_t *wsum, const int32_t *rq, void *y,
                        const int64_t *geom, int64_t mr, int64_t kr,
                        int64_t x_type, int64_t x_zp, int64_t y_type,
                        int64_t y_zp, int64_t y_lo, int64_t y_hi);
/* y[i, j] for an a of [m, k] (row-major, uint8/int8) and packed weights of
 * n output columns; y is [m, n]. */
void cuvil_k_qgemm_s8(const void *a, const int8_t *wp, const int32_t *bias,
                      const int32_t *wsum, const int32_t *rq, void *y,
                      int64_t m, int64_t n, int64_t k, int64_t mr, int64_t kr,
                      int64_t a_type, int64_t a_zp, int64_t y_type,
                      int64_t y_zp, int64_t y_lo, int64_t y_hi);
/* Depthwise 2-D convolution (group = c = m): w is plain [c][kh * kw] (no
 * packing); otherwise as cuvil_k_qconv2d_s8. x and y do not overlap. */
void cuvil_k_qdwconv2d_s8(const void *x, const int8_t *w, const int32_t *bias,
                          const int32_t *wsum, const int32_t *rq, void *y,
                          const int64_t *geom, int64_t x_type, int64_t x_zp,
                          int64_t y_type, int64_t y_zp, int64_t y_lo,
                          int64_t y_hi);

/* Element-wise sum of two quantized tensors of n elements (the QDQ form of
 * Add, as residual connections write it): for i < n,
 *   y[i] = clamp(y_zp + rhe(((a[i] - a_zp) * a_mult + (b[i] - b_zp) *
 *                            b_mult) / 2^shift), y_lo, y_hi)
 * where a_mult / 2^shift = a_scale / y_scale and likewise for b
 * (multipliers below 2^31, shift in [1, 62]). a, b and y are uint8/int8
 * by their type codes; y may be a or b. */
void cuvil_k_qadd_s8(const void *a, const void *b, void *y, int64_t n,
                     int64_t a_type, int64_t b_type, int64_t y_type,
                     int64_t a_zp, int64_t b_zp, int64_t a_mult, int64_t b_mult,
                     int64_t shift, int64_t y_zp, int64_t y_lo, int64_t y_hi);

/* GlobalAveragePool of a quantized [nc, hw] tensor (the QDQ form):
 *   y[i] = clamp(y_zp + rhe((sum_j x[i, j] - hw * x_zp) * mult / 2^shift),
 *                y_lo, y_hi)
 * with mult / 2^shift = x_scale / (y_scale * hw) (mult below 2^31, shift
 * in [1, 62]). */
void cuvil_k_qglobal_avgpool_s8(const void *x, void *y, int64_t nc, int64_t hw,
                                int64_t x_type, int64_t y_type, int64_t x_zp,
                                int64_t mult, int64_t shift, int64_t y_zp,
                                int64_t y_lo, int64_t y_hi);

/* The optimised forms (kernels/opt/qpacked.c): the same contract, on
 * weights packed with mr = cuvil_k_qpack_mr and kr = cuvil_k_qpack_kr,
 * except that they take no wsum: their bias is the accumulator's start in
 * the library's domain, bias[mo] + cuvil_qpack_corr(x_type) * wsum[mo]
 * (int32 arithmetic, wrapping), which cuvilc folds in at compile time.
 * The convolution computes positions [p0, p1) of every output plane
 * (0 and oh * ow: all of them). On a78 it (and the direct form below)
 * stores 16 bytes of an output plane at a time, the bytes after a block's
 * outputs being outputs a later block of the same call stores again, up
 * to the range's end: calls on disjoint ranges, or on disjoint planes, may
 * run at once (--cores); no other writer may share the range during a
 * call. */
void cuvil_k_qconv2d_packed_s8(const void *x, const int8_t *wp,
                               const int32_t *bias, const int32_t *rq, void *y,
                               const int64_t *geom, int64_t x_type,
                               int64_t x_zp, int64_t y_type, int64_t y_zp,
                               int64_t y_lo, int64_t y_hi, int64_t p0,
                               int64_t p1);
/* The convolution on the channel-interleaved image (kernels/opt/
 * qdirect.h), in libraries that export cuvil_k_qpack_direct = 1 (their
 * kr is 4 and a block of positions reads 4 steps of each position as one
 * word; the others define it in plain loops). A convolution of one group
 * and dilation 1 reduces over steps in another order: with cb = ceil(c /
 * 4) blocks of 4 input channels (the last padded with zero weights), step
 *     t = ((ci / 4 * kh + ky) * kw + kx) * 4 + ci % 4,
 * kp = cb * kh * kw * 4, packed in panels as above. The kernel writes the
 * input, padded, split into its stride phases and 4 channels interleaved,
 * into scratch, a band of cuvil_qdirect_band(geom) output rows at a time,
 * and reads each block of outputs' steps from there without gathering
 * them; scratch holds cuvil_qdirect_scratch(geom) bytes (4-aligned) and
 * is not read after the call. The call computes output rows [oy0, oy1)
 * of every channel and batch item (0 and oh: the whole convolution); calls
 * on disjoint row ranges, each with a scratch of its own of
 * cuvil_qdirect_scratch_rows(geom, oy1 - oy0) bytes, may run at once, as
 * their stores stay inside their rows (--cores). cuvilc uses it for
 * windows of several taps no narrower than the stride: on a 1x1
 * convolution the packed kernel's gathering is one copy a step already. */
extern const int64_t cuvil_k_qpack_direct;
#define CUVIL_QDIRECT_SLACK 16    /* positions after each channel block */
#define CUVIL_QDIRECT_BUDGET 4096 /* interleaved bytes of a band, about */
#define CUVIL_QDIRECT_MIN_BAND 48 /* output positions of a band, at least */
/* Positions of a phase row: the output row and (kw - 1) / sw more. */
static inline int64_t cuvil_qdirect_wq(const int64_t *g) {
  return g[CUVIL_QCONV_OW] + (g[CUVIL_QCONV_KW] - 1) / g[CUVIL_QCONV_SW];
}
static inline int64_t cuvil_qdirect_band(const int64_t *g) {
  const int64_t wq = cuvil_qdirect_wq(g);
  const int64_t row = 4 * ((g[CUVIL_QCONV_C] + 3) / 4) * g[CUVIL_QCONV_SH] *
                      g[CUVIL_QCONV_SW] * wq;
  int64_t band =
      CUVIL_QDIRECT_BUDGET / row - (g[CUVIL_QCONV_KH] - 1) / g[CUVIL_QCONV_SH];
  if (band * wq < CUVIL_QDIRECT_MIN_BAND)
    band = (CUVIL_QDIRECT_MIN_BAND + wq - 1) / wq;
  return band < g[CUVIL_QCONV_OH] ? band : g[CUVIL_QCONV_OH];
}
/* The scratch of a call on a range of rows output rows (its bands no
 * taller than the range). */
static inline int64_t cuvil_qdirect_scratch_rows(const int64_t *g,
                                                 int64_t rows) {
  const int64_t band =
      cuvil_qdirect_band(g) < rows ? cuvil_qdirect_band(g) : rows;
  return 4 * ((g[CUVIL_QCONV_C] + 3) / 4) *
         (g[CUVIL_QCONV_KH] * g[CUVIL_QCONV_KW] +
          g[CUVIL_QCONV_SH] * g[CUVIL_QCONV_SW] *
              (band + (g[CUVIL_QCONV_KH] - 1) / g[CUVIL_QCONV_SH]) *
              cuvil_qdirect_wq(g) +
          CUVIL_QDIRECT_SLACK);
}
static inline int64_t cuvil_qdirect_scratch(const int64_t *g) {
  return cuvil_qdirect_scratch_rows(g, g[CUVIL_QCONV_OH]);
}
void cuvil_k_qconv2d_direct_s8(const void *x, const int8_t *wp,
                               const int32_t *bias, const int32_t *rq,
                               void *scratch, void *y, const int64_t *geom,
                               int64_t x_type, int64_t x_zp, int64_t y_type,
                               int64_t y_zp, int64_t y_lo, int64_t y_hi,
                               int64_t oy0, int64_t oy1);
void cuvil_k_qgemm_packed_s8(const void *a, const int8_t *wp,
                             const int32_t *bias, const int32_t *rq, void *y,
                             int64_t m, int64_t n, int64_t k, int64_t a_type,
                             int64_t a_zp, int64_t y_type, int64_t y_zp,
                             int64_t y_lo, int64_t y_hi);
/* The optimised depthwise convolution (kernels/opt/qdepthwise.c): the
 * contract of cuvil_k_qdwconv2d_s8. */
void cuvil_k_qdwconv2d_tiled_s8(const void *x, const int8_t *w,
                                const int32_t *bias, const int32_t *wsum,
                                const int32_t *rq, void *y, const int64_t *geom,
                                int64_t x_type, int64_t x_zp, int64_t y_type,
                                int64_t y_zp, int64_t y_lo, int64_t y_hi);

/* cuvil_k_qadd_s8 in int32 lanes (kernels/opt/qelementwise.c), exact for
 * multipliers below 2^CUVIL_QADD_LANES_BITS and shifts up to
 * CUVIL_QADD_LANES_SHIFT_MAX (then |(a - a_zp) a_mult + (b - b_zp) b_mult|
 * < 2^30, and the rounding fits in 32 bits): lower-qdq rounds the scale
 * ratios to that many bits. Other arguments go to cuvil_k_qadd_s8. */
#define CUVIL_QADD_LANES_BITS 21
#define CUVIL_QADD_LANES_SHIFT_MAX 30
void cuvil_k_qadd_lanes_s8(const void *a, const void *b, void *y, int64_t n,
                           int64_t a_type, int64_t b_type, int64_t y_type,
                           int64_t a_zp, int64_t b_zp, int64_t a_mult,
                           int64_t b_mult, int64_t shift, int64_t y_zp,
                           int64_t y_lo, int64_t y_hi);

#endif /* CUVIL_KERNELS_QINT_H */
