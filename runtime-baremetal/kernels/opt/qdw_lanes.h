/* The INT8 depthwise convolution with the channels in the vector lanes, for
 * the small maps of the late layers (qdepthwise.c chooses it; included by
 * qdepthwise.c only, after its requantization constants' limits).
 *
 * The plane-at-a-time tiles of qdepthwise.c pay a channel's set-up (its
 * lines, taps and requantization constants) for every plane, and a map
 * narrower than a tile leaves most lanes idle: MobileNet's 6x6 and 3x3
 * maps ran at 5 to 12 instructions per multiply-add on a78, DS-CNN's 25x5
 * at 4. Here a group of QL_C channels is one int16 vector per position:
 *
 *   - each input row the window reaches is widened once into a ring of
 *     (kh - 1) * dh + 1 rows of padded positions (QL_C lanes each; padding
 *     and lanes past the last channel hold the input zero point), the
 *     NCHW bytes transposed on the way;
 *   - an output row is computed QL_TX positions at a time: per tap, one
 *     input vector times that tap's weight vector (a different weight per
 *     lane) into int32 lanes, smlal/smlal2 on AArch64;
 *   - the int32 lanes are requantized with per-lane (per-channel)
 *     constants and each lane's byte is stored to its channel's plane;
 *   - where a group's whole padded image fits the ring's buffer (DS-CNN,
 *     MobileNet's 12x12 and smaller maps on a78), it is widened at once,
 *     8 positions at a time along the flat planes, and the output
 *     positions run in tiles of QL_TX along the flat plane, across rows
 *     (ql_image): on a78 DS-CNN's 25x5 layers went from 123K to 92K
 *     instructions.
 *
 * Raw uint8 or int8 inputs fit int16, so no domain change is needed (wsum
 * unused). Stack: the ring (QL_RING_BYTES), the weight vectors of up to
 * QDW_TAPS_MAX taps (1 KiB) and a few hundred bytes. One-lane targets (RV64)
 * keep the plane kernels: they pair two output columns of one channel per
 * 64-bit multiply, which needs a weight shared by both halves. */
#ifndef CUVIL_KERNELS_OPT_QDW_LANES_H
#define CUVIL_KERNELS_OPT_QDW_LANES_H

#if !CUVIL_SCALAR_BLOCKING

#define QL_C 8  /* channels per vector (int16 lanes) */
#define QL_TX 4 /* output positions per tile */
#if defined(__x86_64__)
#define QL_RING_BYTES 16384
#else
#define QL_RING_BYTES 4096
#endif
#define QL_RING_ELEMS (QL_RING_BYTES / (int64_t)sizeof(int16_t))

typedef int16_t ql_x __attribute__((vector_size(QL_C * sizeof(int16_t))));
typedef int32_t ql_v32 __attribute__((vector_size(QL_C * sizeof(int32_t))));
typedef int64_t ql_v64 __attribute__((vector_size(QL_C * sizeof(int64_t))));
typedef uint8_t ql_u8 __attribute__((vector_size(QL_C)));

/* The accumulators of one position: two int32x4 on AArch64 (the halves
 * smlal and smlal2 write), one vector elsewhere. */
#if defined(__aarch64__)
typedef struct {
  int32x4_t lo, hi;
} ql_acc;
#else
typedef ql_v32 ql_acc;
#endif

/* A group's requantization constants, lane l for channel c0 + l (see
 * cuvil_qrq_lanes and qdw_rq). */
typedef struct {
#if defined(__aarch64__)
  int32x4_t mult[2], nshift[2], odd[2], round31[2]; /* round32 if tf */
  int16x8_t lo, hi;
  int tf; /* no channel's accumulators can tie (cuvil_qrq_tiefree) */
#else
  ql_v64 mult, shift, round;
  ql_v32 lo, hi;
#endif
} ql_rq;

INLINE ql_x ql_load(const int16_t *p) {
  ql_x v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

/* (32-byte vectors by pointer: by value they have another ABI with and
 * without AVX, and GCC warns.) */
INLINE void ql_acc_set(ql_acc *acc, const ql_v32 *v) {
#if defined(__aarch64__)
  acc->lo = __builtin_shufflevector(*v, *v, 0, 1, 2, 3);
  acc->hi = __builtin_shufflevector(*v, *v, 4, 5, 6, 7);
#else
  *acc = *v;
#endif
}

/* acc += x * w lane by lane, widened to int32. */
INLINE void ql_mac(ql_acc *acc, ql_x x, ql_x w) {
#if defined(__aarch64__)
  const int16x8_t xv = (int16x8_t)x, wv = (int16x8_t)w;
  acc->lo = vmlal_s16(acc->lo, vget_low_s16(xv), vget_low_s16(wv));
  acc->hi = vmlal_high_s16(acc->hi, xv, wv);
#else
  *acc +=
      __builtin_convertvector(x, ql_v32) * __builtin_convertvector(w, ql_v32);
#endif
}

/* The lanes' stored bytes: clamp(y_zp + rhe(acc * mult / 2^shift)). */
INLINE ql_u8 ql_requant(const ql_acc *acc, const ql_rq *q, int tf) {
#if defined(__aarch64__)
  int32x4_t lo, hi;
  if (tf) {
    lo = cuvil_qrq_lanes_tf(acc->lo, q->mult[0], q->nshift[0], q->round31[0]);
    hi = cuvil_qrq_lanes_tf(acc->hi, q->mult[1], q->nshift[1], q->round31[1]);
  } else {
    lo = cuvil_qrq_lanes(acc->lo, q->mult[0], q->nshift[0], q->odd[0],
                         q->round31[0]);
    hi = cuvil_qrq_lanes(acc->hi, q->mult[1], q->nshift[1], q->odd[1],
                         q->round31[1]);
  }
  const int16x8_t r = vcombine_s16(vqmovn_s32(lo), vqmovn_s32(hi));
  return (ql_u8)vmovn_s16(vminq_s16(vmaxq_s16(r, q->lo), q->hi));
#else
  (void)tf;
  /* As qdw_requant, with a shift per lane. */
  ql_v64 v = __builtin_convertvector(*acc, ql_v64) * q->mult;
  const ql_v64 bit = (v >> q->shift) & 1;
  v = (v + q->round + bit) >> q->shift;
  ql_v32 r = __builtin_convertvector(v, ql_v32);
  const ql_v32 below = r < q->lo;
  r = (below & q->lo) | (~below & r);
  const ql_v32 above = r > q->hi;
  return __builtin_convertvector((above & q->hi) | (~above & r), ql_u8);
#endif
}

/* The constants of channels [c0, c0 + nch) (lanes past them: multiplier 0
 * and a valid shift, so they compute y_zp, never stored), whose
 * accumulators are at most |bias| + taps 2^15 in magnitude. */
INLINE void ql_rq_init(ql_rq *q, const int32_t *rq, const int32_t *bias,
                       int64_t taps, int64_t c0, int64_t nch, int64_t y_zp,
                       int64_t y_lo, int64_t y_hi) {
  int32_t mult[QL_C], shift[QL_C];
  int tf = 1;
  for (int64_t l = 0; l < QL_C; ++l) {
    mult[l] = l < nch ? rq[2 * (c0 + l)] : 0;
    shift[l] = l < nch ? rq[2 * (c0 + l) + 1] : QDW_SHIFT_MIN;
    if (l < nch) {
      const int64_t b = bias[c0 + l];
      tf &=
          cuvil_qrq_tiefree((b < 0 ? -b : b) + taps * 32768, mult[l], shift[l]);
    }
  }
#if defined(__aarch64__)
  for (int h = 0; h < 2; ++h) {
    int32_t ns[4], odd[4], r31[4];
    for (int l = 0; l < 4; ++l) {
      const int32_t s = shift[4 * h + l] - 31;
      ns[l] = -s;
      odd[l] = (int32_t)1 << s;
      r31[l] = cuvil_qrq_round31(shift[4 * h + l], y_zp) + tf;
    }
    q->mult[h] = vld1q_s32(mult + 4 * h);
    q->nshift[h] = vld1q_s32(ns);
    q->odd[h] = vld1q_s32(odd);
    q->round31[h] = vld1q_s32(r31);
  }
  q->lo = vdupq_n_s16((int16_t)y_lo);
  q->hi = vdupq_n_s16((int16_t)y_hi);
  q->tf = tf;
#else
  (void)tf;
  for (int l = 0; l < QL_C; ++l) {
    q->mult[l] = mult[l];
    q->shift[l] = shift[l];
    q->round[l] =
        ((int64_t)1 << (shift[l] - 1)) - 1 + y_zp * ((int64_t)1 << shift[l]);
    q->lo[l] = (int32_t)y_lo;
    q->hi[l] = (int32_t)y_hi;
  }
#endif
}

/* Eight positions of a whole group: the 8 x 8 bytes at src (channel l's
 * at src + l * hw) transposed by three rounds of zips (zip1/zip2 on
 * AArch64, punpck on x86), widened and stored position by position: some
 * 36 instructions where byte by byte took 17 a position. */
typedef uint8_t ql_b8 __attribute__((vector_size(8)));
typedef uint8_t ql_b16 __attribute__((vector_size(16)));
typedef uint16_t ql_h8 __attribute__((vector_size(16)));
typedef uint32_t ql_w4 __attribute__((vector_size(16)));
typedef int8_t ql_s8 __attribute__((vector_size(8)));
INLINE void ql_fill8_at(int16_t *const dst[8], const uint8_t *src, int64_t hw,
                        int x_u8) {
  ql_b8 r[8];
  CUVIL_UNROLL
  for (int l = 0; l < 8; ++l)
    __builtin_memcpy(&r[l], src + l * hw, sizeof r[l]);
  /* Byte pairs (channels 2i, 2i + 1) of positions 0-7. */
  ql_b16 t[4];
  CUVIL_UNROLL
  for (int i = 0; i < 4; ++i)
    t[i] = __builtin_shufflevector(r[2 * i], r[2 * i + 1], 0, 8, 1, 9, 2, 10, 3,
                                   11, 4, 12, 5, 13, 6, 14, 7, 15);
  /* Channels 0-3 (u[0], u[1]) and 4-7 (u[2], u[3]) of positions 0-3 and
   * 4-7. */
  ql_h8 u[4];
  CUVIL_UNROLL
  for (int i = 0; i < 2; ++i) {
    const ql_h8 a = (ql_h8)t[2 * i], b = (ql_h8)t[2 * i + 1];
    u[2 * i] = __builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11);
    u[2 * i + 1] = __builtin_shufflevector(a, b, 4, 12, 5, 13, 6, 14, 7, 15);
  }
  /* All eight channels of positions 2j, 2j + 1. */
  CUVIL_UNROLL
  for (int j = 0; j < 4; ++j) {
    const ql_w4 a = (ql_w4)u[j >= 2], b = (ql_w4)u[2 + (j >= 2)];
    const ql_w4 v = j % 2 == 0 ? __builtin_shufflevector(a, b, 0, 4, 1, 5)
                               : __builtin_shufflevector(a, b, 2, 6, 3, 7);
    const ql_b16 bytes = (ql_b16)v;
    CUVIL_UNROLL
    for (int h = 0; h < 2; ++h) {
      const ql_b8 p =
          h ? __builtin_shufflevector(bytes, bytes, 8, 9, 10, 11, 12, 13, 14,
                                      15)
            : __builtin_shufflevector(bytes, bytes, 0, 1, 2, 3, 4, 5, 6, 7);
      const ql_x w = x_u8 ? __builtin_convertvector(p, ql_x)
                          : __builtin_convertvector((ql_s8)p, ql_x);
      __builtin_memcpy(dst[2 * j + h], &w, sizeof w);
    }
  }
}

/* ql_fill8_at to eight consecutive positions from dst. */
INLINE void ql_fill8(int16_t *dst, const uint8_t *src, int64_t hw, int x_u8) {
  int16_t *const at[8] = {dst,
                          dst + QL_C,
                          dst + 2 * QL_C,
                          dst + 3 * QL_C,
                          dst + 4 * QL_C,
                          dst + 5 * QL_C,
                          dst + 6 * QL_C,
                          dst + 7 * QL_C};
  ql_fill8_at(at, src, hw, x_u8);
}

/* One position of channels [0, nch) (channel l's byte at src + l * hw),
 * widened to dst; lanes past nch hold zero (the zero point). */
INLINE void ql_fill1(int16_t *dst, const uint8_t *src, int64_t hw, int64_t nch,
                     int x_u8, ql_x zero) {
  ql_x v = zero;
  if (x_u8) {
    for (int64_t l = 0; l < nch; ++l)
      v[l] = src[l * hw];
  } else {
    for (int64_t l = 0; l < nch; ++l)
      v[l] = (int8_t)src[l * hw];
  }
  __builtin_memcpy(dst, &v, sizeof v);
}

/* Ring row for input row iy of channels [0, nch) of xc (planes of h x wd
 * bytes): padded position px is input column px - pl. Called with nch a
 * constant QL_C for whole groups: each position is then eight byte loads
 * and one vector store. */
INLINE void ql_fill(int16_t *row, const qdw_shape *s, const uint8_t *xc,
                    int64_t iy, int64_t nch, int x_u8, ql_x zero) {
  const int64_t a = s->pad_left > 0 ? s->pad_left : 0;
  const int64_t b = s->pad_left + s->wd < s->pw ? s->pad_left + s->wd : s->pw;
  const int inside = iy >= 0 && iy < s->h;
  for (int64_t px = 0; px < (inside ? a : s->pw); ++px)
    __builtin_memcpy(row + px * QL_C, &zero, sizeof zero);
  if (!inside)
    return;
  for (int64_t px = b; px < s->pw; ++px)
    __builtin_memcpy(row + px * QL_C, &zero, sizeof zero);
  const int64_t hw = s->h * s->wd;
  const uint8_t *src = xc + iy * s->wd - s->pad_left;
  int64_t px = a;
  if (nch == QL_C)
    for (; px + 8 <= b; px += 8)
      ql_fill8(row + px * QL_C, src + px, hw, x_u8);
  for (; px < b; ++px)
    ql_fill1(row + px * QL_C, src + px, hw, nch, x_u8, zero);
}

/* A tile's bytes o[j] (lane l: channel l) stored channel by channel: two
 * rounds of zips make each channel's QL_TX bytes one 32-bit word, stored
 * at y + l ys (8 stores where the lanes took 32 byte stores and their
 * address arithmetic: on a78 a third of the tile's requantization and
 * stores). */
INLINE void ql_store_tile(const ql_u8 o[QL_TX], uint8_t *y, int64_t ys) {
  _Static_assert(QL_TX == 4 && QL_C == 8, "four positions of 8 channels");
  /* Channel l's bytes of positions 0, 1 (and 2, 3) as halfword l. */
  const ql_h8 a = (ql_h8)__builtin_shufflevector(
      o[0], o[1], 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
  const ql_h8 b = (ql_h8)__builtin_shufflevector(
      o[2], o[3], 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
  /* Channel l's 4 bytes as word l of lo (channels 0-3) or hi (4-7). */
  const ql_w4 lo = (ql_w4)__builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3,
                                                  11),
              hi = (ql_w4)__builtin_shufflevector(a, b, 4, 12, 5, 13, 6, 14, 7,
                                                  15);
  CUVIL_UNROLL
  for (int l = 0; l < 4; ++l) {
    const uint32_t wl = lo[l], wh = hi[l];
    __builtin_memcpy(y + l * ys, &wl, sizeof wl);
    __builtin_memcpy(y + (4 + l) * ys, &wh, sizeof wh);
  }
}

/* The tile of tx positions whose accumulators are acc, requantized and
 * stored: position j's lane l to y[l * ys + j]. */
INLINE void ql_finish(const ql_acc acc[QL_TX], const ql_rq *q, uint8_t *y,
                      int64_t ys, int64_t nch, int tx) {
  ql_u8 o[QL_TX] = {{0}}; /* (tx < QL_TX: GCC cannot see the rest unread) */
#if defined(__aarch64__)
  if (q->tf) {
    CUVIL_UNROLL
    for (int j = 0; j < tx; ++j)
      o[j] = ql_requant(&acc[j], q, 1);
  } else
#endif
  {
    CUVIL_UNROLL
    for (int j = 0; j < tx; ++j)
      o[j] = ql_requant(&acc[j], q, 0);
  }
  if (nch == QL_C && tx == QL_TX) {
    ql_store_tile(o, y, ys);
    return;
  }
  CUVIL_UNROLL
  for (int j = 0; j < tx; ++j) {
    uint8_t *yj = y + j;
    if (nch == QL_C) {
      CUVIL_UNROLL
      for (int l = 0; l < QL_C; ++l)
        yj[l * ys] = o[j][l];
    } else {
      for (int64_t l = 0; l < nch; ++l)
        yj[l * ys] = o[j][l];
    }
  }
}

/* tx output positions from ox of one output row (rows[ky]: the ring row of
 * tap row ky); lane l of position j goes to y[l * ys + ox + j]. */
INLINE void ql_tile(const qdw_shape *s, const int16_t *const *rows,
                    const ql_x *wv, const ql_v32 *bias, const ql_rq *q,
                    uint8_t *y, int64_t ys, int64_t nch, int64_t ox, int tx) {
  ql_acc acc[QL_TX];
  CUVIL_UNROLL
  for (int j = 0; j < tx; ++j)
    ql_acc_set(&acc[j], bias);
  for (int64_t ky = 0; ky < s->kh; ++ky)
    for (int64_t kx = 0; kx < s->kw; ++kx) {
      const ql_x w = wv[ky * s->kw + kx];
      CUVIL_UNROLL
      for (int j = 0; j < tx; ++j)
        ql_mac(&acc[j],
               ql_load(rows[ky] + ((ox + j) * s->sw + kx * s->dw) * QL_C), w);
    }
  ql_finish(acc, q, y + ox, ys, nch, tx);
}

/* The rows of padded positions the windows reach. */
INLINE int64_t ql_ph(const qdw_shape *s) {
  return (s->oh - 1) * s->sh + s->span;
}

/* Whether a group's whole padded image fits the ring's buffer: then it is
 * widened at once (ql_fill_image) and the output positions run in flat
 * tiles across rows (ql_image). DS-CNN's 25x5 map ran its rows as a tile
 * of 4 and one of 1, and widened them position by position (as many
 * instructions as the multiply-adds). */
INLINE int ql_whole(const qdw_shape *s) {
  return s->pad_top >= 0 && s->pad_left >= 0 &&
         ql_ph(s) * s->pw * QL_C <= QL_RING_ELEMS;
}

/* The padded image of channels [0, nch) of xc at img (ql_ph rows of pw
 * positions; padding and lanes past nch hold the zero point). Whole
 * groups whose rows land whole transpose 8 positions at a time along the
 * flat planes, across rows. Rows and columns the windows never reach are
 * left out. */
INLINE void ql_fill_image(int16_t *img, const qdw_shape *s, const uint8_t *xc,
                          int64_t nch, int x_u8, ql_x zero) {
  const int64_t pw = s->pw, ph = ql_ph(s), hw = s->h * s->wd;
  for (int64_t i = 0; i < ph * pw; ++i)
    __builtin_memcpy(img + i * QL_C, &zero, sizeof zero);
  const int64_t rows = s->h < ph - s->pad_top ? s->h : ph - s->pad_top;
  const int64_t cols = s->wd < pw - s->pad_left ? s->wd : pw - s->pad_left;
  int16_t *const at0 = img + (s->pad_top * pw + s->pad_left) * QL_C;
  int64_t p = 0, iy = 0, ix = 0;
  if (nch == QL_C && cols == s->wd)
    for (; p + 8 <= rows * s->wd; p += 8) {
      int16_t *at[8];
      for (int j = 0; j < 8; ++j) {
        at[j] = at0 + (iy * pw + ix) * QL_C;
        if (++ix == s->wd) {
          ix = 0;
          ++iy;
        }
      }
      ql_fill8_at(at, xc + p, hw, x_u8);
    }
  for (; p < rows * s->wd; ++p) {
    if (ix < cols)
      ql_fill1(at0 + (iy * pw + ix) * QL_C, xc + p, hw, nch, x_u8, zero);
    if (++ix == s->wd) {
      ix = 0;
      ++iy;
    }
  }
}

/* The output positions of a group in tiles of tx along the flat plane
 * (across rows) over its padded image img, each position's window at its
 * offset in pos (ql_image_offsets). The last tile overlaps the one before
 * rather than running short (it stores the same bytes again). */
INLINE void ql_image_tx(const qdw_shape *s, const int16_t *img,
                        const int32_t *pos, const int32_t *tap, const ql_x *wv,
                        const ql_v32 *bias, const ql_rq *q, uint8_t *yc,
                        int64_t nch, int tx) {
  const int64_t ohw = s->oh * s->ow, taps = s->kh * s->kw;
  for (int64_t f = 0; f < ohw; f += tx) {
    const int64_t f0 = f + tx <= ohw ? f : ohw - tx;
    ql_acc acc[QL_TX];
    CUVIL_UNROLL
    for (int j = 0; j < QL_TX; ++j)
      ql_acc_set(&acc[j], bias);
    CUVIL_UNROLL_BY(3)
    for (int64_t t = 0; t < taps; ++t) {
      const ql_x w = wv[t];
      CUVIL_UNROLL
      for (int j = 0; j < QL_TX; ++j)
        if (j < tx)
          ql_mac(&acc[j], ql_load(img + pos[f0 + j] + tap[t]), w);
    }
    ql_finish(acc, q, yc + f0, ohw, nch, tx);
  }
}

/* ql_image_tx with tiles of QL_TX, or of one position where the plane
 * has fewer (tx a constant either way: its loops unroll). */
INLINE void ql_image(const qdw_shape *s, const int16_t *img, const int32_t *pos,
                     const int32_t *tap, const ql_x *wv, const ql_v32 *bias,
                     const ql_rq *q, uint8_t *yc, int64_t nch) {
  if (s->oh * s->ow >= QL_TX)
    ql_image_tx(s, img, pos, tap, wv, bias, q, yc, nch, QL_TX);
  else
    ql_image_tx(s, img, pos, tap, wv, bias, q, yc, nch, 1);
}

/* The offsets (in elements of img) of output position p's window, pos[p],
 * and of tap t within a window, tap[t]. */
INLINE void ql_image_offsets(const qdw_shape *s, int32_t *pos, int32_t *tap) {
  for (int64_t oy = 0, p = 0; oy < s->oh; ++oy)
    for (int64_t ox = 0; ox < s->ow; ++ox, ++p)
      pos[p] = (int32_t)((oy * s->sh * s->pw + ox * s->sw) * QL_C);
  for (int64_t t = 0; t < s->kh * s->kw; ++t)
    tap[t] = (int32_t)((t / s->kw * s->dh * s->pw + t % s->kw * s->dw) * QL_C);
}

/* One group: channels [c0, c0 + nch) of the planes at xc / yc (nch a
 * constant QL_C for whole groups, see ql_fill). */
INLINE void ql_group(const qdw_shape *s, const qdw_args *a, int16_t *ring,
                     ql_x *wv, const int32_t *pos, const int32_t *tap,
                     const uint8_t *xc, uint8_t *yc, int64_t c0, int64_t nch) {
  const int64_t taps = s->kh * s->kw, rs = s->pw * QL_C;
  const int64_t ohw = s->oh * s->ow;
  ql_x zero;
  for (int l = 0; l < QL_C; ++l)
    zero[l] = (int16_t)a->x_zp;
  ql_v32 bias = {0};
  for (int64_t t = 0; t < taps; ++t) {
    ql_x v = {0};
    for (int64_t l = 0; l < nch; ++l)
      v[l] = a->w[(c0 + l) * taps + t];
    wv[t] = v;
  }
  for (int64_t l = 0; l < nch; ++l)
    bias[l] = a->bias[c0 + l];
  ql_rq q;
  ql_rq_init(&q, a->rq, a->bias, taps, c0, nch, a->y_zp, a->y_lo, a->y_hi);
  const int x_u8 = a->x_type == CUVIL_Q_U8;
  if (ql_whole(s)) {
    ql_fill_image(ring, s, xc, nch, x_u8, zero);
    ql_image(s, ring, pos, tap, wv, &bias, &q, yc, nch);
    return;
  }
  /* Input row iy lives in ring row (iy + pt) % span; next: the next input
   * row to widen. */
  int64_t next = -s->pad_top, slot = 0;
  for (int64_t oy = 0; oy < s->oh; ++oy) {
    const int64_t iy0 = oy * s->sh - s->pad_top;
    if (next < iy0) {
      slot = (slot + iy0 - next) % s->span;
      next = iy0;
    }
    for (; next < iy0 + s->span; ++next) {
      ql_fill(ring + slot * rs, s, xc, next, nch, x_u8, zero);
      slot = slot + 1 == s->span ? 0 : slot + 1;
    }
    /* slot is now the ring row of input row iy0. */
    const int16_t *rows[QDW_TAPS_MAX];
    for (int64_t ky = 0, r = slot; ky < s->kh; ++ky) {
      rows[ky] = ring + r * rs;
      r += s->dh;
      r -= r >= s->span ? s->span : 0;
    }
    uint8_t *y = yc + oy * s->ow;
    int64_t ox = 0;
    for (; ox + QL_TX <= s->ow; ox += QL_TX)
      ql_tile(s, rows, wv, &bias, &q, y, ohw, nch, ox, QL_TX);
    for (; ox < s->ow; ++ox)
      ql_tile(s, rows, wv, &bias, &q, y, ohw, nch, ox, 1);
  }
}

/* Every channel group of every image (a->planes = n * c); a group never
 * crosses an image, so the last of each may be narrow. */
INLINE void ql_conv(const qdw_shape *s, const qdw_args *a) {
  __attribute__((aligned(16))) int16_t ring[QL_RING_ELEMS];
  ql_x wv[QDW_TAPS_MAX];
  /* ql_image's offsets: at most one position per vector of the ring. */
  int32_t pos[QL_RING_ELEMS / QL_C], tap[QDW_TAPS_MAX];
  if (ql_whole(s))
    ql_image_offsets(s, pos, tap);
  const int64_t hw = s->h * s->wd, ohw = s->oh * s->ow;
  for (int64_t g = 0, nch; g < a->planes; g += nch) {
    const int64_t c0 = g % a->c;
    nch = a->c - c0 < QL_C ? a->c - c0 : QL_C;
    const uint8_t *xc = (const uint8_t *)a->x + g * hw;
    uint8_t *yc = a->y + g * ohw;
    if (nch == QL_C)
      ql_group(s, a, ring, wv, pos, tap, xc, yc, c0, QL_C);
    else
      ql_group(s, a, ring, wv, pos, tap, xc, yc, c0, nch);
  }
}

/* Whether the lanes form takes the shape: the ring fits, and the map is
 * not one the plane tiles fill well (stride 1 and at least two tiles
 * wide: on a78 MobileNetV1's 48x48 map of 8 channels ran 231K
 * instructions here against 214K in planes; its 24x24 and all smaller
 * maps ran faster here, DS-CNN's 25x5 2.2x). */
INLINE int ql_takes(const qdw_shape *s, int64_t c) {
  return c >= QL_C / 2 && s->span * s->pw * QL_C <= QL_RING_ELEMS &&
         s->kh * s->kw <= QDW_TAPS_MAX && !(s->sw == 1 && s->ow >= 2 * QDW_TW);
}

QDW_FAMILY(ql, ql_conv)

/* Runs the convolution in the lanes form if it takes the shape. */
INLINE int ql_run(const qdw_shape *shape, const qdw_args *a) {
  /* Field by field, not `*shape`: the optimiser follows the fields of the
   * caller's constant shape through loads, not through a struct copy
   * (memcpy), and only with them constant does the dispatch below keep
   * just the variant the layer runs. */
  const qdw_shape s = {shape->h,
                       shape->wd,
                       shape->kh,
                       shape->kw,
                       shape->oh,
                       shape->ow,
                       shape->sh,
                       shape->sw,
                       shape->dh,
                       shape->dw,
                       shape->pad_top,
                       shape->pad_left,
                       (shape->ow - 1) * shape->sw +
                           (shape->kw - 1) * shape->dw + 1,
                       (shape->kh - 1) * shape->dh + 1};
  if (!ql_takes(&s, a->c))
    return 0;
  QDW_DISPATCH(ql, &s, a);
  return 1;
}

#endif /* !CUVIL_SCALAR_BLOCKING */

#endif
