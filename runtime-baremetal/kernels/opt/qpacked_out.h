/* The output stage of the packed INT8 kernels (qpacked.c): the operation's
 * output and requantization facts (qout) and the requantization of a
 * block's accumulators into the output's bytes, per target (int64 or
 * checked int32 lanes, or RV64's scalar form). Included by qpacked.c only,
 * after its block types (qblock) and stage macros. */
#ifndef CUVIL_KERNELS_OPT_QPACKED_OUT_H
#define CUVIL_KERNELS_OPT_QPACKED_OUT_H

/* Output and requantization of one operation (a convolution group). */
typedef struct {
  const int8_t *wp;
  const int32_t *bias, *rq; /* bias: in the domain (cuvil_qpack_corr) */
  void *y;
  /* positions: a convolution's end of its range of a plane (stores stay
   * before it), a product's rows. */
  int64_t y_type, m, positions, ch_stride, pos_stride;
  int32_t y_zp, y_lo, y_hi;
  /* 1: every shift in the int32 form's range (qrequant.h); 2: and no
   * channel's accumulators can tie (cuvil_qrq_tiefree, AArch64's
   * cuvil_qrq_lanes_tf) */
  int32_t lanes32;
  int64_t y_end; /* the direct kernel: bytes of a plane from y on */
} qout;

typedef cuvil_qi32x4 qi32x4;
typedef cuvil_qi64x4 qi64x4;

/* Stores the outputs of channels [m0, m0 + mb) of block b from their
 * accumulators pp ([CUVIL_QNR][CUVIL_QMR]): cuvil_q_requant's arithmetic
 * (quant/requant.h) four channels at a time, in vectors (the scalar form
 * cost some 20 instructions per output, as much as the multiply-adds of a
 * 1x1 layer of 64 channels). Round half to even
 * as q - (rem + (q & 1) > half), rem the bits shifted out (the compare
 * gives -1). The clamped value is in the output type's range, so its low
 * byte is the output for both types. */
#if defined(CUVIL_QPAIRS)
/* One-lane targets (RV64): the vector form below lowers to some 18
 * instructions per output. Instead t = acc * mult + 2^(shift - 1) (no
 * overflow: |acc * mult| < 2^62) is the value rounded half up after the
 * shift, and an exact tie (the bits shifted out of t all 0; rare, so a
 * branch rather than parity arithmetic for every output) moves to the even
 * neighbour; the clamp is a max and a min with Zbb. Where no tie can occur
 * (tf: qout.lanes32 2, cuvil_qrq_tiefree), the zero point joins the
 * rounding constant (|t| < 2^62 + 2^61: shift <= CUVIL_QRQ_SHIFT_MAX) and
 * the tie test goes: 7 instructions an output where there were 10. */
INLINE void requant_rows(const qout *o, const qblock *b, const int32_t *pp,
                         int64_t m0, int64_t mb, const int32_t *yoff, int tf) {
  (void)yoff; /* no direct kernel on one-lane targets */
  int64_t mul[CUVIL_QMR], sh[CUVIL_QMR], half[CUVIL_QMR], mask[CUVIL_QMR];
  /* Locals: the stores could alias *o. */
  const int64_t zp = o->y_zp, lo = o->y_lo, hi = o->y_hi;
  for (int l = 0; l < CUVIL_QMR; ++l) {
    const int32_t *rq = o->rq + 2 * (m0 + (l < mb ? l : 0));
    mul[l] = rq[0];
    sh[l] = rq[1];
    half[l] = ((int64_t)1 << (rq[1] - 1)) + (tf ? zp << rq[1] : 0);
    mask[l] = ((int64_t)1 << rq[1]) - 1;
  }
  const int64_t cs = o->ch_stride, ps = o->pos_stride, nb = b->nb;
  uint8_t *y = (uint8_t *)o->y + m0 * cs + b->p0 * ps;
  /* Position by position, not unrolled: unrolled by 4, the set-up of its
   * 16 address streams cost 194 instructions a call, 4 an output. */
  CUVIL_NO_UNROLL
  for (int64_t j = 0; j < nb; ++j, y += ps)
    CUVIL_UNROLL
  for (int l = 0; l < CUVIL_QMR; ++l)
    if (l < mb) {
      const int64_t t = (int64_t)pp[j * CUVIL_QMR + l] * mul[l] + half[l];
      int64_t v = t >> sh[l];
      if (!tf) {
        if (__builtin_expect((t & mask[l]) == 0, 0))
          v -= v & 1;
        v += zp;
      }
      v = v < lo ? lo : v;
      y[l * cs] = (uint8_t)(v > hi ? hi : v);
    }
}
#else
#define QRV (CUVIL_QMR / 4)
INLINE void requant_rows(const qout *o, const qblock *b, const int32_t *pp,
                         int64_t m0, int64_t mb, const int32_t *yoff, int tf) {
  (void)tf; /* the int64 lanes' form: exact ties cost nothing extra */
  qi32x4 mul[QRV];
  qi64x4 sh[QRV], mask[QRV], half[QRV];
  for (int v = 0; v < QRV; ++v)
    for (int l = 0; l < 4; ++l) {
      const int32_t *rq = o->rq + 2 * (m0 + (4 * v + l < mb ? 4 * v + l : 0));
      mul[v][l] = rq[0];
      sh[v][l] = rq[1];
      mask[v][l] = ((int64_t)1 << rq[1]) - 1;
      half[v][l] = (int64_t)1 << (rq[1] - 1);
    }
  const qi32x4 zp = (qi32x4){0} + o->y_zp, lo = (qi32x4){0} + o->y_lo,
               hi = (qi32x4){0} + o->y_hi;
  /* Locals: the stores could alias *o. */
  const int64_t cs = o->ch_stride, ps = o->pos_stride, nb = b->nb;
  uint8_t *y = (uint8_t *)o->y + m0 * cs + b->p0 * ps;
  for (int64_t j = 0; j < nb; ++j, y += ps) {
    if (yoff && yoff[j] < 0)
      continue;
    uint8_t *yj = yoff ? (uint8_t *)o->y + m0 * cs + yoff[j] : y;
    CUVIL_UNROLL
    for (int v = 0; v < QRV; ++v) {
      qi32x4 acc;
      __builtin_memcpy(&acc, pp + j * CUVIL_QMR + 4 * v, sizeof acc);
      qi64x4 p;
      cuvil_qmul_wide(&p, acc, mul[v]);
      const qi64x4 q = p >> sh[v];
      qi32x4 r = __builtin_convertvector(
                     q - (((p & mask[v]) + (q & 1)) > half[v]), qi32x4) +
                 zp;
      const qi32x4 below = r<lo, above = r> hi;
      r = (r & ~below) | (lo & below);
      r = (r & ~above) | (hi & above);
      CUVIL_UNROLL
      for (int l = 0; l < 4; ++l)
        if (4 * v + l < mb)
          yj[(4 * v + l) * cs] = (uint8_t)r[l];
    }
  }
}
#endif

#if defined(__aarch64__)
typedef uint8_t qu8x8 __attribute__((vector_size(8)));

/* The constants of requant_rows32 for channels [m0, m0 + mb), in vectors:
 * (multiplier, shift) pairs deinterleaved by one load (lane inserts cost
 * some 100 instructions per call). */
typedef struct {
  int32x4_t mul[QRV], nsh[QRV], odd[QRV], rnd[QRV];
  int16x8_t lo, hi;
  int tf; /* tie-free (qout.lanes32 2): rnd is round32 */
} rq32;

INLINE void rq32_init(rq32 *k, const qout *o, int64_t m0, int64_t mb) {
  const int32x4_t one = vdupq_n_s32(1), zp = vdupq_n_s32(o->y_zp);
  for (int v = 0; v < QRV; ++v) {
    int32x4x2_t pair;
    if (mb == CUVIL_QMR) {
      pair = vld2q_s32(o->rq + 2 * (m0 + 4 * v));
    } else {
      int32_t lanes[8];
      for (int l = 0; l < 4; ++l)
        __builtin_memcpy(lanes + 2 * l,
                         o->rq + 2 * (m0 + (4 * v + l < mb ? 4 * v + l : 0)),
                         2 * sizeof(int32_t));
      pair = vld2q_s32(lanes);
    }
    const int32x4_t s = vsubq_s32(pair.val[1], vdupq_n_s32(31)); /* >= 1 */
    k->mul[v] = pair.val[0];
    k->nsh[v] = vnegq_s32(s);
    k->odd[v] = vshlq_s32(one, s);
    /* cuvil_qrq_round31: 2^(s - 1) - 1 + y_zp 2^s */
    k->rnd[v] = vaddq_s32(vsubq_s32(vshlq_s32(one, vsubq_s32(s, one)), one),
                          vshlq_s32(zp, s));
  }
  k->lo = vdupq_n_s16((int16_t)o->y_lo);
  k->hi = vdupq_n_s16((int16_t)o->y_hi);
  k->tf = o->lanes32 == 2;
  if (k->tf)
    for (int v = 0; v < QRV; ++v)
      k->rnd[v] = vaddq_s32(k->rnd[v], one);
}

/* The output bytes of channels 4 v .. 4 v + 7 of one position from its
 * accumulators a: narrowed to int16 with saturation (exact after the
 * clamp) and clamped there. */
INLINE qu8x8 rq32_bytes(const rq32 *k, const int32_t *a, int v, int tf) {
  int32x4_t r0, r1;
  if (tf) {
    r0 = cuvil_qrq_lanes_tf(vld1q_s32(a), k->mul[v], k->nsh[v], k->rnd[v]);
    r1 = cuvil_qrq_lanes_tf(vld1q_s32(a + 4), k->mul[v + 1], k->nsh[v + 1],
                            k->rnd[v + 1]);
  } else {
    r0 = cuvil_qrq_lanes(vld1q_s32(a), k->mul[v], k->nsh[v], k->odd[v],
                         k->rnd[v]);
    r1 = cuvil_qrq_lanes(vld1q_s32(a + 4), k->mul[v + 1], k->nsh[v + 1],
                         k->odd[v + 1], k->rnd[v + 1]);
  }
  const int16x8_t r = vcombine_s16(vqmovn_s32(r0), vqmovn_s32(r1));
  return (qu8x8)vmovn_s16(vminq_s16(vmaxq_s16(r, k->lo), k->hi));
}

/* The table of a block's outputs (8 bytes a position, channels m0.. of
 * rq32 k; zeros where want[j] is 0) for store_table, tf a constant. */
INLINE void rq32_table(const rq32 *k, const int32_t *pp, const int want[12],
                       uint8_t t[96], int tf) {
  for (int j = 0; j < 12; ++j) {
    qu8x8 u = {0};
    if (want[j])
      u = rq32_bytes(k, pp + j * CUVIL_QMR, 0, tf);
    __builtin_memcpy(t + 8 * j, &u, 8);
  }
}

/* The first n (< 16) bytes of v at y: 8, 4, 2 and 1 at a time. */
INLINE void store_first(uint8_t *y, uint8x16_t v, int64_t n) {
  if (n & 8) {
    const uint64_t d = vgetq_lane_u64(vreinterpretq_u64_u8(v), 0);
    __builtin_memcpy(y, &d, 8);
    v = vextq_u8(v, v, 8);
    y += 8;
  }
  if (n & 4) {
    const uint32_t w = vgetq_lane_u32(vreinterpretq_u32_u8(v), 0);
    __builtin_memcpy(y, &w, 4);
    v = vextq_u8(v, v, 4);
    y += 4;
  }
  if (n & 2) {
    const uint16_t h = vgetq_lane_u16(vreinterpretq_u16_u8(v), 0);
    __builtin_memcpy(y, &h, 2);
    v = vextq_u8(v, v, 2);
    y += 2;
  }
  if (n & 1)
    *y = vgetq_lane_u8(v, 0);
}

/* The outputs of a block of 12 positions x 8 channels, channel by
 * channel: t[j][l] holds position j's byte of channel l; lane i of
 * channel l's vector is t[sel[i] / 8][l] (sel[i] = 0x80: none; out of both
 * tables' range below, also plus a channel), picked by table lookups (tbl
 * over t's first 64 bytes, tbx over the last 32) and stored at y + l cs,
 * where byte-by-byte NCHW stores took more than the requantization
 * itself. The first n lanes are the block's outputs. Where room (bytes
 * from y to the plane's end) allows, all 16 lanes are stored at once: the
 * others belong to later outputs of the plane, which later blocks store
 * again (the kernels take blocks in the order of their outputs, and a
 * core computes whole planes); elsewhere only the n. */
INLINE void store_table(uint8_t *y, int64_t cs, const uint8_t t[96],
                        const uint8_t sel[16], int64_t n, int64_t mb,
                        int64_t room) {
  const uint8x16x4_t lo = vld1q_u8_x4(t);
  const uint8x16x2_t hi = vld1q_u8_x2(t + 64);
  const uint8x16_t s = vld1q_u8(sel);
  const uint8x16_t s_hi = vsubq_u8(s, vdupq_n_u8(64));
  const int whole = room >= 16;
  CUVIL_UNROLL
  for (int l = 0; l < 8; ++l)
    if (l < mb) {
      const uint8x16_t c = vdupq_n_u8((uint8_t)l);
      const uint8x16_t v =
          vqtbx2q_u8(vqtbl4q_u8(lo, vaddq_u8(s, c)), hi, vaddq_u8(s_hi, c));
      if (whole)
        vst1q_u8(y + l * cs, v);
      else
        store_first(y + l * cs, v, n);
    }
}

/* requant_rows in int32 lanes (cuvil_qrq_lanes), eight channels at a
 * time. */
INLINE void requant_rows32_tf(const qout *o, const qblock *b, const int32_t *pp,
                              int64_t m0, int64_t mb, const int32_t *yoff,
                              const rq32 *kp, int tf) {
  const rq32 k = *kp;
  /* Locals: the stores could alias *o. */
  const int64_t cs = o->ch_stride, ps = o->pos_stride, nb = b->nb;
  uint8_t *y = (uint8_t *)o->y + m0 * cs + b->p0 * ps;
  for (int64_t j = 0; j < nb; ++j, y += ps) {
    if (yoff && yoff[j] < 0)
      continue;
    uint8_t *yj = yoff ? (uint8_t *)o->y + m0 * cs + yoff[j] : y;
    CUVIL_UNROLL
    for (int v = 0; v < QRV; v += 2) {
      const qu8x8 u = rq32_bytes(&k, pp + j * CUVIL_QMR + 4 * v, v, tf);
      if (cs == 1 && 4 * v + 8 <= mb) { /* a matrix product's row */
        __builtin_memcpy(yj + 4 * v, &u, 8);
        continue;
      }
      CUVIL_UNROLL
      for (int l = 0; l < 8; ++l)
        if (4 * v + l < mb)
          yj[(4 * v + l) * cs] = u[l];
    }
  }
}

INLINE void requant_rows32(const qout *o, const qblock *b, const int32_t *pp,
                           int64_t m0, int64_t mb, const int32_t *yoff) {
  _Static_assert(CUVIL_QMR % 8 == 0, "eight channels per narrowed vector");
  rq32 k;
  rq32_init(&k, o, m0, mb);
  if (k.tf)
    requant_rows32_tf(o, b, pp, m0, mb, yoff, &k, 1);
  else
    requant_rows32_tf(o, b, pp, m0, mb, yoff, &k, 0);
}
#endif

#if defined(__x86_64__) && defined(__AVX512BW__) && defined(__AVX512VL__) &&   \
    CUVIL_QMR == 32 && CUVIL_QNR <= 16
/* AVX-512 (host-avx512): a block's outputs in vectors, then stored a
 * channel at a time. A position's 32 channels are two vectors of 16 int32
 * lanes, requantized with requant_rows' arithmetic (the int64 products of
 * the even and odd lanes by vpmuldq, shifted by vpsravq) and narrowed to
 * 32 bytes; the block's 16 rows of 32 bytes are then transposed, so that
 * each channel's positions are one 16-byte lane, stored by one masked
 * store where requant_rows made one store per byte (in NCHW every output
 * byte of a position goes to another plane): on ResNet-8 that
 * requantization took a third of the run. */
#define CUVIL_QRQ_T512 1

typedef struct {
  __m512i mul[2], mulo[2], she[2], sho[2], maske[2], masko[2], halfe[2],
      halfo[2];
  __m512i zp, lo, hi;
} rq512;

INLINE void rq512_init(rq512 *k, const qout *o, int64_t m0, int64_t mb) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
                                         22, 24, 26, 28, 30),
                one = _mm512_set1_epi64(1);
  for (int v = 0; v < 2; ++v) {
    /* The (multiplier, shift) pairs of the vector's channels, none read
     * past the panel's mb: absent channels get 0 and 0. */
    const int64_t n = mb - 16 * v;
    __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
    if (n > 0) {
      const int32_t *rq = o->rq + 2 * (m0 + 16 * v);
      a = _mm512_maskz_loadu_epi32(
          n >= 8 ? 0xffff : (__mmask16)((1u << 2 * n) - 1), rq);
      if (n > 8)
        b = _mm512_maskz_loadu_epi32(
            n >= 16 ? 0xffff : (__mmask16)((1u << 2 * (n - 8)) - 1), rq + 16);
    }
    const __m512i mul = _mm512_permutex2var_epi32(a, even, b);
    const __m512i sh = _mm512_permutex2var_epi32(
        a, _mm512_add_epi32(even, _mm512_set1_epi32(1)), b);
    k->mul[v] = mul;
    k->mulo[v] = _mm512_srli_epi64(mul, 32);
    k->she[v] = _mm512_and_si512(sh, _mm512_set1_epi64(0xffffffff));
    k->sho[v] = _mm512_srli_epi64(sh, 32);
    const __m512i pe = _mm512_sllv_epi64(one, k->she[v]),
                  po = _mm512_sllv_epi64(one, k->sho[v]);
    k->maske[v] = _mm512_sub_epi64(pe, one);
    k->masko[v] = _mm512_sub_epi64(po, one);
    k->halfe[v] = _mm512_srli_epi64(pe, 1);
    k->halfo[v] = _mm512_srli_epi64(po, 1);
  }
  k->zp = _mm512_set1_epi32(o->y_zp);
  k->lo = _mm512_set1_epi32(o->y_lo);
  k->hi = _mm512_set1_epi32(o->y_hi);
}

/* rhe(p / 2^sh) of int64 lanes: q + 1 where the bits shifted out and q's
 * parity exceed half. */
INLINE __m512i rq512_round(__m512i p, __m512i sh, __m512i mask, __m512i half) {
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i q = _mm512_srav_epi64(p, sh);
  const __mmask8 up = _mm512_cmpgt_epi64_mask(
      _mm512_add_epi64(_mm512_and_si512(p, mask), _mm512_and_si512(q, one)),
      half);
  return _mm512_mask_add_epi64(q, up, q, one);
}

/* The output bytes of vector v's 16 channels of one position (its
 * accumulators at a). */
INLINE __m128i rq512_bytes(const rq512 *k, const int32_t *a, int v) {
  const __m512i acc = _mm512_loadu_si512(a);
  const __m512i qe = rq512_round(_mm512_mul_epi32(acc, k->mul[v]), k->she[v],
                                 k->maske[v], k->halfe[v]);
  const __m512i qo =
      rq512_round(_mm512_mul_epi32(_mm512_srli_epi64(acc, 32), k->mulo[v]),
                  k->sho[v], k->masko[v], k->halfo[v]);
  __m512i r = _mm512_mask_blend_epi32(0xaaaa, qe, _mm512_slli_epi64(qo, 32));
  r = _mm512_add_epi32(r, k->zp);
  r = _mm512_min_epi32(_mm512_max_epi32(r, k->lo), k->hi);
  return _mm512_cvtepi32_epi8(r);
}

/* r[j] (byte c: channel c of position j, 16 per lane) to r[c] (byte j of
 * lane h: position j of channel c + 16 h): four rounds of unpacks. */
INLINE void transpose16x32(__m256i r[16]) {
  __m256i a[16], b[16];
  for (int i = 0; i < 8; ++i) {
    a[2 * i] = _mm256_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm256_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i)
    for (int h = 0; h < 2; ++h) {
      b[4 * i + 2 * h] = _mm256_unpacklo_epi16(a[4 * i + h], a[4 * i + 2 + h]);
      b[4 * i + 2 * h + 1] =
          _mm256_unpackhi_epi16(a[4 * i + h], a[4 * i + 2 + h]);
    }
  for (int i = 0; i < 2; ++i)
    for (int h = 0; h < 4; ++h) {
      a[8 * i + 2 * h] = _mm256_unpacklo_epi32(b[8 * i + h], b[8 * i + 4 + h]);
      a[8 * i + 2 * h + 1] =
          _mm256_unpackhi_epi32(b[8 * i + h], b[8 * i + 4 + h]);
    }
  for (int h = 0; h < 8; ++h) {
    r[2 * h] = _mm256_unpacklo_epi64(a[h], a[8 + h]);
    r[2 * h + 1] = _mm256_unpackhi_epi64(a[h], a[8 + h]);
  }
}

/* Channels [m0, m0 + mb) of a block (accumulators pp, [CUVIL_QNR][32]):
 * n outputs per channel, the i-th from position sel[i] (sel null: from
 * position i), at bytes [0, n) of y + l cs for channel m0 + l. */
STAGE void requant_t512(const qout *o, const int32_t *pp, int64_t m0,
                        int64_t mb, uint8_t *y, const uint8_t *sel, int64_t n) {
  rq512 k;
  rq512_init(&k, o, m0, mb);
  const int64_t cs = o->ch_stride;
  __m256i r[16];
  for (int j = 0; j < 16; ++j) {
    r[j] = _mm256_setzero_si256();
    if (j < CUVIL_QNR)
      r[j] = _mm256_set_m128i(mb > 16 ? rq512_bytes(&k, pp + 32 * j + 16, 1)
                                      : _mm_setzero_si128(),
                              rq512_bytes(&k, pp + 32 * j, 0));
  }
  transpose16x32(r);
  __m128i s = _mm_setzero_si128();
  if (sel)
    __builtin_memcpy(&s, sel, sizeof s);
  const __m256i s2 = _mm256_broadcastsi128_si256(s);
  const __mmask16 keep = (__mmask16)((1u << n) - 1);
  for (int c = 0; c < 16; ++c) {
    const __m256i v = sel ? _mm256_shuffle_epi8(r[c], s2) : r[c];
    if (c < mb)
      _mm_mask_storeu_epi8(y + c * cs, keep, _mm256_castsi256_si128(v));
    if (c + 16 < mb)
      _mm_mask_storeu_epi8(y + (c + 16) * cs, keep,
                           _mm256_extracti128_si256(v, 1));
  }
}
#endif

/* requant_rows with the output of position j at byte yoff[j] of the
 * channels' planes (none where yoff[j] < 0), or, yoff null, at block b's
 * positions in order. */
INLINE void requant_at(const qout *o, const qblock *b, const int32_t *pp,
                       int64_t m0, int64_t mb, const int32_t *yoff) {
#if defined(__aarch64__)
  if (o->lanes32) {
    if (mb == CUVIL_QMR)
      requant_rows32(o, b, pp, m0, CUVIL_QMR, yoff);
    else
      requant_rows32(o, b, pp, m0, mb, yoff);
    return;
  }
#endif
#if defined(CUVIL_QPAIRS)
  if (o->lanes32 == 2) {
    if (mb == CUVIL_QMR)
      requant_rows(o, b, pp, m0, CUVIL_QMR, yoff, 1);
    else
      requant_rows(o, b, pp, m0, mb, yoff, 1);
    return;
  }
#endif
  if (mb == CUVIL_QMR)
    requant_rows(o, b, pp, m0, CUVIL_QMR, yoff, 0);
  else
    requant_rows(o, b, pp, m0, mb, yoff, 0);
}

STAGE void requant_block(const qout *o, const qblock *b, const int32_t *pp,
                         int64_t m0, int64_t mb) {
#if defined(CUVIL_QRQ_T512)
  /* A convolution's block: consecutive outputs of each channel's plane. */
  if (o->pos_stride == 1) {
    requant_t512(o, pp, m0, mb, (uint8_t *)o->y + m0 * o->ch_stride + b->p0, 0,
                 b->nb);
    return;
  }
#endif
#if defined(__aarch64__)
  /* A convolution's block: consecutive outputs of each channel's plane. */
  if (o->lanes32 && o->pos_stride == 1 && CUVIL_QMR == 8 && CUVIL_QNR == 12) {
    static const uint8_t sel[16] = {0,  8,  16, 24, 32,   40,   48,   56,
                                    64, 72, 80, 88, 0x80, 0x80, 0x80, 0x80};
    rq32 k;
    rq32_init(&k, o, m0, mb);
    uint8_t t[96] __attribute__((aligned(16)));
    int want[12];
    for (int j = 0; j < 12; ++j)
      want[j] = j < b->nb;
    if (k.tf)
      rq32_table(&k, pp, want, t, 1);
    else
      rq32_table(&k, pp, want, t, 0);
    store_table((uint8_t *)o->y + m0 * o->ch_stride + b->p0, o->ch_stride, t,
                sel, b->nb, mb, o->positions - b->p0);
    return;
  }
#endif
  requant_at(o, b, pp, m0, mb, 0);
}

#endif
