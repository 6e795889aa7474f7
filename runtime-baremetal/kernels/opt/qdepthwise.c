/* Depthwise integer convolution (cuvil/kernels/qint.h) in register tiles,
 * the INT8 counterpart of depthwise.c. The reference kernel in
 * quant/qint.c is its oracle. This file holds the element types, the
 * multiply-add and requantization helpers and the entry point, which
 * picks one of four forms: channels in the vector lanes for small maps
 * (qdw_lanes.h); on one-lane targets, three output rows per register for
 * 3x3 and 5x5 windows (qdw_cols.h), else a flat padded plane
 * (qdw_flat.h); or the plane form described here (qdw_planes.h).
 *
 * A channel plane is computed in bands of QDW_R output rows. The input
 * rows a band reads are first widened to int16 "lines" on the stack,
 * padded with the input zero point, so every output position, the borders
 * included, goes through the same tile of QDW_R rows x QDW_NV vectors of
 * QDW_VL columns with no bounds checks. A line is stored as its stride
 * phases one after the other (phase p holds input columns p, p + sw,
 * p + 2 sw, ...), so that the inputs of QDW_VL consecutive outputs for one
 * tap are QDW_VL consecutive elements of one phase at any stride: one
 * plain (unaligned) vector load. Within a tile the tap loops are unrolled
 * for the common kernels (3x3 and 5x5, stride 1 and 2, no dilation), and
 * loads of the same line element are shared by every output row and tap
 * that reads it; other shapes run the same tile with the tap loops rolled.
 *
 * The accumulators are int32 lanes: acc += (int32)x16 * (int32)w16 per
 * tap, one widening multiply-accumulate per vector where the ISA has it
 * (AArch64 smlal/smlal2 by element). Raw uint8 or int8 values fit int16,
 * so vector targets need no domain change and ignore wsum. One-lane
 * targets (RV64) hold two output columns per 64-bit register instead
 * (see qdw_x): one mul and one add per two multiply-adds. Requantization
 * runs on the tile's registers: in int32 lanes on AArch64, int64 lanes on
 * the other vector targets, per column with a rare tie branch on one-lane
 * targets (see qdw_requant).
 *
 * Stack: the lines take QDW_LINE_BYTES (4 KiB on the boards, 16 KiB on
 * x86-64 as depthwise.c's); the rest of a kernel's frame (taps, a scratch
 * tile, spills) is under 2 KiB (clang 19 -fstack-usage, entry point and
 * kernel frames together: at most 5.5 KiB on a78, 6.3 KiB on RV64, the
 * 5x5 stride-2 kernel the largest). Wider maps are cut into
 * column chunks. Shapes where not even one tile's columns fit (a huge or
 * very dilated window), kernels of more than QDW_TAPS_MAX taps and
 * requantization shifts outside [32, 53] (see qdw_rq) take the reference
 * kernel; so do int8 inputs without wsum on one-lane targets. */
#include "cuvil/kernels.h"

#include "../quant/requant.h"
#include "blocking.h"
#include "qrequant.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#define INLINE static inline __attribute__((always_inline))

/* The tile: QDW_R output rows x QDW_NV vectors of QDW_VL int32 lanes.
 *   AArch64: 8 columns per int16 load (one q register), held in two int32x4
 *       accumulators (smlal, smlal2): 4 x 2 x 2 = 16 accumulators, the 3x3
 *       weights in two registers (by-element multiplies), inputs.
 *   AVX-512: 16 lanes, 8 rows x 1 vector, as depthwise.c.
 *   AVX2: 8 lanes, 2 x 2; 128-bit vector targets: 4 lanes, 2 x 2.
 *   One-lane targets: two output columns per 64-bit register (see
 *       qdw_mac), 4 rows x 2 registers, 9 weights, inputs. */
#if CUVIL_SCALAR_BLOCKING
#define QDW_VL 2
#define QDW_R 4
#define QDW_NV 2
#elif defined(__aarch64__)
#define QDW_VL 8
#define QDW_R 4
#define QDW_NV 2
#elif CUVIL_VL == 16
#define QDW_VL 16
#define QDW_R 8
#define QDW_NV 1
#elif CUVIL_VL == 8
#define QDW_VL 8
#define QDW_R 2
#define QDW_NV 2
#else /* 128-bit vectors (SSE2 hosts): int32 lanes in one register */
#define QDW_VL 4
#define QDW_R 2
#define QDW_NV 2
#endif
#define QDW_TW (QDW_NV * QDW_VL)
/* The most taps a tile takes (8 x 8; larger kernels take the reference). */
#define QDW_TAPS_MAX 64

#if defined(__x86_64__)
#define QDW_LINE_BYTES 16384
#else
#define QDW_LINE_BYTES 4096
#endif

typedef int16_t qdw_v16 __attribute__((vector_size(QDW_VL * sizeof(int16_t))));
typedef int32_t qdw_v32 __attribute__((vector_size(QDW_VL * sizeof(int32_t))));

/* Line elements, what a tile loads from a line, and its accumulators. On
 * one-lane targets two output columns share a 64-bit register: an element
 * pair x0 + x1 * 2^32 (both >= 0: int8 inputs move to uint8, x + 128,
 * corrected through wsum) times a weight accumulates both columns' sums at
 * once, one mul and one add for two multiply-adds (RV64 has no
 * multiply-add), and the low column's sum, an int32, borrows from the high
 * one exactly as it would be split off: acc = lo + hi * 2^32. Pairs are
 * loaded aligned, so each phase is stored twice, the second copy one
 * element ahead (see qdw_at). */
#if CUVIL_SCALAR_BLOCKING
typedef int32_t qdw_el;
typedef int64_t qdw_x;
typedef int64_t qdw_acc;
typedef uint64_t qdw_pair __attribute__((aligned(8), may_alias));
#define QDW_COPIES 2
#else
typedef int16_t qdw_el;
typedef qdw_v16 qdw_x;
typedef qdw_v32 qdw_acc;
#define QDW_COPIES 1
#endif
#define QDW_LINE_ELEMS (QDW_LINE_BYTES / (int64_t)sizeof(qdw_el))
typedef int64_t qdw_v64 __attribute__((vector_size(QDW_VL * sizeof(int64_t))));
typedef uint8_t qdw_v8 __attribute__((vector_size(QDW_VL)));
typedef int8_t qdw_s8 __attribute__((vector_size(QDW_VL)));

/* Shape facts (constants in the specialised kernels). */
typedef struct {
  int64_t h, wd, kh, kw, oh, ow, sh, sw, dh, dw, pad_top, pad_left;
  /* The lanes form's ring rows (qdw_lanes.h): padded positions, rows. */
  int64_t pw, span;
} qdw_shape;

/* Family P of kernels, each running run(shape, args): specialised for the
 * windows QDW_DISPATCH picks, and the general one. */
#define QDW_FAMILY(P, run)                                                     \
  QDW_SPECIALISE(P##_3x3s1, 3, 3, 1, run(&s, a))                               \
  QDW_SPECIALISE(P##_3x3s2, 3, 3, 2, run(&s, a))                               \
  QDW_SPECIALISE(P##_5x5s1, 5, 5, 1, run(&s, a))                               \
  QDW_SPECIALISE(P##_5x5s2, 5, 5, 2, run(&s, a))                               \
  static __attribute__((noinline)) void P##_general(const qdw_shape *s,        \
                                                    const qdw_args *a) {       \
    run(s, a);                                                                 \
  }

/* Runs family P's kernel for the window of shape s: P##_3x3s1, _3x3s2,
 * _5x5s1 or _5x5s2 (see QDW_SPECIALISE), else P##_general. */
#define QDW_DISPATCH(P, s, a)                                                  \
  do {                                                                         \
    const int unit_ = (s)->dh == 1 && (s)->dw == 1 && (s)->sh == (s)->sw;      \
    const int k3_ = unit_ && (s)->kh == 3 && (s)->kw == 3;                     \
    const int k5_ = unit_ && (s)->kh == 5 && (s)->kw == 5;                     \
    if (k3_ && (s)->sh == 1)                                                   \
      P##_3x3s1(s, a);                                                         \
    else if (k3_ && (s)->sh == 2)                                              \
      P##_3x3s2(s, a);                                                         \
    else if (k5_ && (s)->sh == 1)                                              \
      P##_5x5s1(s, a);                                                         \
    else if (k5_ && (s)->sh == 2)                                              \
      P##_5x5s2(s, a);                                                         \
    else                                                                       \
      P##_general(s, a);                                                       \
  } while (0)

/* A kernel specialised for a common window (KH x KW, stride S both ways,
 * no dilation: constants from here on), running `body` on the shape s and
 * the arguments a. */
#define QDW_SPECIALISE(name, KH, KW, S, body)                                  \
  static __attribute__((noinline)) void name(const qdw_shape *g,               \
                                             const qdw_args *a) {              \
    qdw_shape s = *g;                                                          \
    s.kh = KH;                                                                 \
    s.kw = KW;                                                                 \
    s.sh = s.sw = S;                                                           \
    s.dh = s.dw = 1;                                                           \
    s.pw = (s.ow - 1) * S + KW;                                                \
    s.span = KH;                                                               \
    body;                                                                      \
  }

/* Everything else a plane loop needs. */
typedef struct {
  const void *x;
  const int8_t *w;
  const int32_t *bias, *wsum, *rq;
  uint8_t *y;
  int64_t planes, c, x_type, x_zp, y_zp, y_lo, y_hi;
  int64_t chunk; /* output columns per fill: a multiple of QDW_TW, or ow */
} qdw_args;

/* One channel's requantization: y = clamp((v + round + bit) >> shift)
 * with v = acc * mult and bit = (v >> shift) & 1, which is rhe(v / 2^shift)
 * + y_zp for round = 2^(shift - 1) - 1 + y_zp * 2^shift (adding a multiple
 * of 2^shift commutes with the floor). |v| < 2^62, so round must stay
 * below 2^62 in magnitude: shift <= 53 for any 8-bit zero point; and the
 * shifted value is narrowed to int32 lanes before the clamp, exact for
 * shift >= 32 (|v >> shift| <= 2^30). Real layers' scales (below 1/4)
 * have shifts in between; others take the reference kernel. */
#define QDW_SHIFT_MIN 32
#define QDW_SHIFT_MAX 53
typedef struct {
  int64_t mult, shift, round;
  int32_t lo, hi;
  /* AArch64, in int32 lanes: shift - 31 and its round (see below; its
   * round32 where tf: no accumulator of the channel can tie). */
  int32_t shift31, round31, tf;
  /* One-lane targets: round half up, 2^(shift - 1) + y_zp * 2^shift, and
   * the low bits that are 0 after it only at a tie (see qdw_requant). */
  int64_t up, mask, zp;
} qdw_rq;

#if !CUVIL_SCALAR_BLOCKING
INLINE qdw_v32 qdw_splat32(int32_t v) {
  qdw_v32 r;
  for (int l = 0; l < QDW_VL; ++l)
    r[l] = v;
  return r;
}
#endif

/* Accumulators starting at the bias, in every column. */
INLINE qdw_acc qdw_acc_init(int32_t bias) {
#if CUVIL_SCALAR_BLOCKING
  return (int64_t)bias + (int64_t)bias * ((int64_t)1 << 32);
#else
  return qdw_splat32(bias);
#endif
}

#if defined(__aarch64__)
/* Four lanes of qdw_requant in int32 arithmetic (qrequant.h). */
INLINE int32x4_t qdw_requant4(int32x4_t acc, const qdw_rq *q) {
  if (q->tf)
    return cuvil_qrq_lanes_tf(acc, vdupq_n_s32((int32_t)q->mult),
                              vdupq_n_s32(-q->shift31),
                              vdupq_n_s32(q->round31));
  return cuvil_qrq_lanes(acc, vdupq_n_s32((int32_t)q->mult),
                         vdupq_n_s32(-q->shift31), vdupq_n_s32(1 << q->shift31),
                         vdupq_n_s32(q->round31));
}
#endif

/* The lanes' outputs as bytes, clamped (compare and select; smax/smin
 * where the target has them). */
INLINE qdw_v8 qdw_requant(qdw_acc acc, const qdw_rq *q) {
#if CUVIL_SCALAR_BLOCKING
  const int64_t col[2] = {(int32_t)acc, (acc - (int32_t)acc) >> 32};
  qdw_v8 o;
  /* Rounded half up, then an exact tie (rare: a branch, not the parity
   * arithmetic for every value) moves to the even neighbour. */
  for (int l = 0; l < 2; ++l) {
    const int64_t t = col[l] * q->mult + q->up;
    int64_t v = t >> q->shift;
    if (__builtin_expect((t & q->mask) == 0, 0))
      v -= (v - q->zp) & 1;
    v = v < q->lo ? q->lo : v;
    o[l] = (uint8_t)(v > q->hi ? q->hi : v);
  }
  return o;
#elif defined(__aarch64__)
  const int32x4_t lo = __builtin_shufflevector(acc, acc, 0, 1, 2, 3);
  const int32x4_t hi = __builtin_shufflevector(acc, acc, 4, 5, 6, 7);
  /* Narrowed to int16 with saturation (exact after the clamp), clamped
   * eight lanes at a time. */
  int16x8_t r = vcombine_s16(vqmovn_s32(qdw_requant4(lo, q)),
                             vqmovn_s32(qdw_requant4(hi, q)));
  r = vminq_s16(vmaxq_s16(r, vdupq_n_s16((int16_t)q->lo)),
                vdupq_n_s16((int16_t)q->hi));
  return (qdw_v8)vmovn_s16(r);
#else
  qdw_v64 v = __builtin_convertvector(acc, qdw_v64) * q->mult;
  const qdw_v64 bit = (v >> q->shift) & 1;
  v = (v + q->round + bit) >> q->shift;
  qdw_v32 r = __builtin_convertvector(v, qdw_v32);
  const qdw_v32 lo = qdw_splat32(q->lo), hi = qdw_splat32(q->hi);
  const qdw_v32 below = r < lo;
  r = (below & lo) | (~below & r);
  const qdw_v32 above = r > hi;
  return __builtin_convertvector((above & hi) | (~above & r), qdw_v8);
#endif
}

#if !CUVIL_SCALAR_BLOCKING && !defined(__aarch64__)
/* Weight w in every lane, as a widened int16 (so that the multiply is a
 * widening one: smlal on AArch64). */
INLINE qdw_v32 qdw_weight(int16_t w) {
  qdw_v16 v;
  for (int l = 0; l < QDW_VL; ++l)
    v[l] = w;
  return __builtin_convertvector(v, qdw_v32);
}
#endif

/* A channel's taps as int16 lanes, 8 per vector (zeros past the last):
 * taken by element from these registers, the taps of a 3x3 kernel
 * occupy two registers, not nine broadcasts. */
typedef int16_t qdw_taps __attribute__((vector_size(8 * sizeof(int16_t))));
#define QDW_TAP_VECTORS ((QDW_TAPS_MAX + 7) / 8)

/* The inputs of QDW_VL consecutive outputs: elements [e, e + QDW_VL) of
 * the phase at ph (p elements a copy): any address on vector targets; on
 * one-lane targets an aligned pair, from the second copy (ph + p + 2, one
 * element ahead) when e is odd. */
INLINE qdw_x qdw_at(const qdw_el *ph, int64_t p, int64_t e) {
#if CUVIL_SCALAR_BLOCKING
  return (int64_t)*(const qdw_pair *)(ph + (e & 1) * (p + 2) +
                                      (e & ~(int64_t)1));
#else
  (void)p;
  qdw_v16 v;
  __builtin_memcpy(&v, ph + e, sizeof v);
  return v;
#endif
}

/* *acc += x * tap t, in int32 lanes. AArch64: smlal and smlal2 by element
 * (the lane must be a constant: a switch that folds once unrolled); the
 * optimiser, left to itself, widened the taps first and took mla on int32
 * lanes plus two widenings per input vector. */
INLINE void qdw_mac(qdw_acc *acc, qdw_x x, const qdw_taps taps[QDW_TAP_VECTORS],
                    int64_t t) {
#if defined(__aarch64__)
  const int16x8_t tv = (int16x8_t)taps[t / 8], xv = (int16x8_t)x;
  int32x4_t lo = __builtin_shufflevector(*acc, *acc, 0, 1, 2, 3);
  int32x4_t hi = __builtin_shufflevector(*acc, *acc, 4, 5, 6, 7);
#define QDW_LANE(k)                                                            \
  case k:                                                                      \
    lo = vmlal_laneq_s16(lo, vget_low_s16(xv), tv, k);                         \
    hi = vmlal_high_laneq_s16(hi, xv, tv, k);                                  \
    break;
  switch (t % 8) {
    QDW_LANE(0)
    QDW_LANE(1)
    QDW_LANE(2) QDW_LANE(3) QDW_LANE(4) QDW_LANE(5) QDW_LANE(6) QDW_LANE(7)
  }
#undef QDW_LANE
  *acc = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
#elif CUVIL_SCALAR_BLOCKING
  *acc += x * taps[t / 8][t % 8];
#else
  *acc += __builtin_convertvector(x, qdw_v32) * qdw_weight(taps[t / 8][t % 8]);
#endif
}

/* Channel ch's taps, bias (less xoff * wsum: see qdw_x) and
 * requantization constants. */
INLINE void qdw_channel(const qdw_shape *s, const qdw_args *a, int64_t ch,
                        int32_t xoff, qdw_taps taps[QDW_TAP_VECTORS],
                        int32_t *bias, qdw_rq *q) {
  const int8_t *wc = a->w + ch * s->kh * s->kw;
  for (int k = 0; k < QDW_TAP_VECTORS; ++k)
    taps[k] = (qdw_taps){0};
  for (int64_t t = 0; t < s->kh * s->kw; ++t)
    taps[t / 8][t % 8] = wc[t];
  *bias = a->bias[ch] - (xoff ? xoff * a->wsum[ch] : 0);
  const int64_t shift = a->rq[2 * ch + 1], s31 = shift - 31;
  /* Accumulators: |bias| + taps 2^15 at most (qrequant.h). */
  const int64_t b = *bias < 0 ? -(int64_t)*bias : *bias;
  const int32_t tf =
      CUVIL_QRQ_TF &&
      cuvil_qrq_tiefree(b + s->kh * s->kw * 32768, a->rq[2 * ch], shift);
  *q = (qdw_rq){a->rq[2 * ch],
                shift,
                ((int64_t)1 << (shift - 1)) - 1 +
                    a->y_zp * ((int64_t)1 << shift),
                (int32_t)a->y_lo,
                (int32_t)a->y_hi,
                (int32_t)s31,
                cuvil_qrq_round31(shift, a->y_zp) + tf,
                tf,
                ((int64_t)1 << (shift - 1)) + a->y_zp * ((int64_t)1 << shift),
                ((int64_t)1 << shift) - 1,
                a->y_zp};
}

/* The three forms, in this order: the lines (used by the plane and flat
 * forms) before their users. */
#include "qdw_lanes.h"
#include "qdw_lines.h"

#include "qdw_planes.h"

#include "qdw_cols.h"
#include "qdw_flat.h"

void cuvil_k_qdwconv2d_tiled_s8(const void *x, const int8_t *w,
                                const int32_t *bias, const int32_t *wsum,
                                const int32_t *rq, void *y, const int64_t *geom,
                                int64_t x_type, int64_t x_zp, int64_t y_type,
                                int64_t y_zp, int64_t y_lo, int64_t y_hi) {
  (void)y_type; /* an in-range value has the same byte as uint8 or int8 */
  const qdw_shape s = {geom[CUVIL_QCONV_H],
                       geom[CUVIL_QCONV_W],
                       geom[CUVIL_QCONV_KH],
                       geom[CUVIL_QCONV_KW],
                       geom[CUVIL_QCONV_OH],
                       geom[CUVIL_QCONV_OW],
                       geom[CUVIL_QCONV_SH],
                       geom[CUVIL_QCONV_SW],
                       geom[CUVIL_QCONV_DH],
                       geom[CUVIL_QCONV_DW],
                       geom[CUVIL_QCONV_PAD_TOP],
                       geom[CUVIL_QCONV_PAD_LEFT],
                       0,
                       0};
  const int64_t c = geom[CUVIL_QCONV_C];
  /* Columns per chunk: all of them when one band's lines fit the buffer,
   * else the most whole tiles that do. */
  const int64_t lines = (QDW_R - 1) * s.sh + (s.kh - 1) * s.dh + 1;
  const int64_t halo = (s.kw - 1) * s.dw / s.sw;
  /* The most p with lines * sw * qdw_stride(p) elements in the buffer. */
  const int64_t per_phase =
      (QDW_LINE_ELEMS / (lines * s.sw) - 2 * (QDW_COPIES - 1)) / QDW_COPIES;
  int64_t chunk = s.ow;
  if (qdw_phase_len(s.ow, halo) > per_phase)
    chunk = (per_phase - halo - (QDW_COPIES - 1)) / QDW_TW * QDW_TW;
  /* One-lane targets need wsum for int8 inputs (see qdw_x). */
  int fits = chunk > 0 && s.kh * s.kw <= QDW_TAPS_MAX &&
             (!CUVIL_SCALAR_BLOCKING || wsum || x_type == CUVIL_Q_U8);
  for (int64_t ch = 0; ch < c && fits; ++ch)
    fits = rq[2 * ch + 1] >= QDW_SHIFT_MIN && rq[2 * ch + 1] <= QDW_SHIFT_MAX;
  if (!fits || s.oh <= 0 || s.ow <= 0) {
    cuvil_k_qdwconv2d_s8(x, w, bias, wsum, rq, y, geom, x_type, x_zp, y_type,
                         y_zp, y_lo, y_hi);
    return;
  }
  const qdw_args a = {
      x, w,      bias, wsum, rq,   (uint8_t *)y, geom[CUVIL_QCONV_N] * c,
      c, x_type, x_zp, y_zp, y_lo, y_hi,         chunk};
#if CUVIL_SCALAR_BLOCKING
  if (qc_run(&s, &a) || qf_run(&s, &a))
    return;
#else
  if (ql_run(&s, &a))
    return;
#endif
#if QDW_NV > 1
  const int unit = s.dh == 1 && s.dw == 1 && s.sh == s.sw;
  if (unit && s.kh == 3 && s.kw == 3 && (s.sh == 1 || s.sh == 2) &&
      s.ow <= QDW_VL) {
    if (s.sh == 1)
      qdw_3x3s1_narrow(&s, &a);
    else
      qdw_3x3s2_narrow(&s, &a);
    return;
  }
#endif
  QDW_DISPATCH(qdw, &s, &a);
}
