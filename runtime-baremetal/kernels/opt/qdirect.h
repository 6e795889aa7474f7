/* The convolution of stride s on a channel-interleaved image, for the
 * libraries whose blocks read 4 steps of each position as one word
 * (CUVIL_QDIRECT: a78's sdot, AVX-512 VNNI, the portable sdot layout).
 * Included by qpacked.c only, after its panel and requantization stages.
 *
 * The packed kernel gathers each block's steps from the NCHW input, again
 * for every block: on a78 that cost as much as the multiply-adds. Here
 * the input is written once into scratch, padded, split into its sh x sw
 * phases and with 4 channels interleaved, a band of output rows at a time
 * (cuvil_qdirect_band: some 4 KiB of image, and at least 48 outputs; the
 * rows two bands share are written twice). Phase (py, px) of the padded
 * image xp is the image Q[r][j] = xp[r sh + py][j sw + px], so that tap
 * (ky, kx) of output (oy, ox) is Q_(ky % sh, kx % sw)[oy + ky / sh]
 * [ox + kx / sw]: a stride-1 window on the phase. In scratch, channel
 * block cb (channels 4 cb .. 4 cb + 3) holds its sh x sw phase planes of
 * hq = band + (kh - 1) / sh rows x wq = ow + (kw - 1) / sw positions of 4
 * bytes each, then CUVIL_QDIRECT_SLACK positions. The band's output
 * (oy, ox) is numbered on the grid p = oy * wq + ox; step (cb, ky, kx) of
 * position p is then the word at position p + (ky / sh) wq + kx / sw of
 * its phase plane, so the 4 steps of a block of consecutive positions are
 * consecutive bytes, the layout the panels read (cuvil_qgroup). Blocks
 * run over the grid; their positions with ox >= ow ((kw - 1) / sw a row)
 * are computed and not stored. The weights are packed in that step order
 * (qint.h), padded channels with zero weights; the group offsets are
 * tabulated once per call at the start of scratch. */
#ifndef CUVIL_KERNELS_OPT_QDIRECT_H
#define CUVIL_KERNELS_OPT_QDIRECT_H

#include "../quant/requant.h"

#if CUVIL_QDIRECT

/* 16 positions (8: half) of the 4 channels at src[r] + o (null: absent,
 * pads), every sw-th byte (sw 1, or 2 from byte odd of the 32 read at o),
 * in the kernel's domain, interleaved into d (two rounds of zips, as
 * cuvil_qx_pack). */
INLINE void interleave16(const uint8_t *const src[4], int64_t o, int sw,
                         int odd, int half, cuvil_qrow flip, cuvil_qrow pads,
                         uint8_t *d) {
  cuvil_qrow v[4];
  CUVIL_UNROLL
  for (int r = 0; r < 4; ++r) {
    v[r] = pads;
    if (!src[r])
      continue;
    if (sw == 1) {
      __builtin_memcpy(&v[r], src[r] + o, half ? 8 : 16);
    } else {
      cuvil_qrow2 pair = {0};
      __builtin_memcpy(&pair, src[r] + o, half ? 16 : 32);
      v[r] = odd ? __builtin_shufflevector(pair, pair, 1, 3, 5, 7, 9, 11, 13,
                                           15, 17, 19, 21, 23, 25, 27, 29, 31)
                 : __builtin_shufflevector(pair, pair, 0, 2, 4, 6, 8, 10, 12,
                                           14, 16, 18, 20, 22, 24, 26, 28, 30);
    }
    v[r] ^= flip;
  }
  const cuvil_qrow2 s02 = CUVIL_QZIP16(v[0], v[2]),
                    s13 = CUVIL_QZIP16(v[1], v[3]);
  const cuvil_qrow4 t = CUVIL_QZIP32(s02, s13);
  __builtin_memcpy(d, &t, half ? 32 : 64);
}

/* n positions of the channels at src from byte o on, every sw-th, into d,
 * reading only bytes [o - before, o + after) of each channel (its input
 * row): 16, then 8 at a time by vectors, the rest byte by byte. With
 * stride 2 the vectors read one byte past the last position's, or, where
 * that is past the row, one before the first (the odd bytes from o - 1:
 * so a padded row of an even width is all vectors). */
INLINE void interleave_span(const qsrc *s, const uint8_t *const src[4],
                            int64_t o, int64_t n, int64_t sw, int64_t before,
                            int64_t after, uint8_t *d) {
  const uint8_t pad = (uint8_t)(s->pad ^ s->flip);
  const cuvil_qrow flip = row_splat(s->flip), pads = row_splat(pad);
  int64_t i = 0;
  if (sw == 1) {
    for (; i + 16 <= n; i += 16)
      interleave16(src, o + i, 1, 0, 0, flip, pads, d + 4 * i);
    if (i + 8 <= n) {
      interleave16(src, o + i, 1, 0, 1, flip, pads, d + 4 * i);
      i += 8;
    }
  } else if (sw == 2) {
    const int odd = 2 * n > after && before >= 1;
    const int64_t end = odd ? after + 1 : after; /* bytes from o - odd */
    for (; i + 16 <= n && 2 * i + 32 <= end; i += 16)
      interleave16(src, o + 2 * i - odd, 2, odd, 0, flip, pads, d + 4 * i);
    if (i + 8 <= n && 2 * i + 16 <= end) {
      interleave16(src, o + 2 * i - odd, 2, odd, 1, flip, pads, d + 4 * i);
      i += 8;
    }
  }
  for (; i < n; ++i)
    for (int r = 0; r < 4; ++r)
      d[4 * i + r] = src[r] ? (uint8_t)(src[r][o + i * sw] ^ s->flip) : pad;
}

/* The planes of channel block cb of the input image (one batch item, c
 * planes of h x wd bytes): null for the channels past c. */
INLINE void block_planes(const qsrc *s, int64_t cb, const uint8_t *src[4]) {
  for (int r = 0; r < 4; ++r)
    src[r] = 4 * cb + r < s->c ? s->x + (4 * cb + r) * s->h * s->wd : 0;
}

/* n words of the pad byte at d. */
INLINE void pad_words(const qsrc *s, uint8_t *d, int64_t n) {
  const uint32_t w = (uint8_t)(s->pad ^ s->flip) * 0x01010101u;
  for (int64_t j = 0; j < n; ++j)
    __builtin_memcpy(d + 4 * j, &w, 4);
}

/* The phases of a band: its first output row oy0, its phase rows hq and
 * row width wq, the strides and the padding before the image. */
typedef struct {
  int64_t oy0, hq, wq, sh, sw, pt, pl;
} qband;

/* The sh x sw phase planes of channel block cb for band bd into img (hq x
 * wq words each, then the slack). */
STAGE void interleave_phases(const qsrc *s, const qband *bd, int64_t cb,
                             uint8_t *img) {
  const uint8_t *src[4];
  block_planes(s, cb, src);
  const int64_t wq = bd->wq, sw = bd->sw;
  for (int64_t py = 0; py < bd->sh; ++py)
    for (int64_t px = 0; px < sw; ++px) {
      /* Columns j whose input column j sw + px - pl is inside the image. */
      const int64_t c0 = px - bd->pl;
      int64_t j0 = c0 >= 0 ? 0 : (-c0 + sw - 1) / sw;
      int64_t j1 = s->wd - 1 - c0 < 0 ? 0 : (s->wd - 1 - c0) / sw + 1;
      j1 = j1 < wq ? j1 : wq;
      j0 = j0 < j1 ? j0 : j1;
      for (int64_t r = 0; r < bd->hq; ++r, img += 4 * wq) {
        const int64_t iy = (bd->oy0 + r) * bd->sh + py - bd->pt;
        if (iy < 0 || iy >= s->h || j0 == j1) {
          pad_words(s, img, wq);
          continue;
        }
        pad_words(s, img, j0);
        pad_words(s, img + 4 * j1, wq - j1);
        const int64_t ix = j0 * sw + c0, o = iy * s->wd + ix;
        uint8_t *d = img + 4 * j0;
        /* The common strides as constants (no stride tests per vector). */
        if (sw == 1)
          interleave_span(s, src, o, j1 - j0, 1, ix, s->wd - ix, d);
        else if (sw == 2)
          interleave_span(s, src, o, j1 - j0, 2, ix, s->wd - ix, d);
        else
          interleave_span(s, src, o, j1 - j0, sw, ix, s->wd - ix, d);
      }
    }
  /* The slack: read by the last blocks, never stored. */
  pad_words(s, img, CUVIL_QDIRECT_SLACK);
}

/* The output positions of the block at grid position p0 (yoff[j]: byte
 * of position p0 + j in an output plane, -1 for none). */
INLINE void grid_block(int64_t p0, int64_t grid, int64_t wq, int64_t ow,
                       int32_t yoff[CUVIL_QNR]) {
  int64_t oy = p0 / wq, ox = p0 % wq;
  for (int j = 0; j < CUVIL_QNR; ++j) {
    yoff[j] = p0 + j < grid && ox < ow ? (int32_t)(oy * ow + ox) : -1;
    if (++ox == wq) {
      ox = 0;
      ++oy;
    }
  }
}

STAGE void run_full_at(int32_t *part, const cuvil_qxe *xq, const int32_t *off,
                       const int8_t *wq, int64_t nq) {
  if (!off) /* never: so run_panel's loop does not test it every group */
    __builtin_unreachable();
  run_panel(part, xq, off, wq, nq, CUVIL_QMR, 0, CUVIL_QMV, 0, CUVIL_QNA, 0);
}

STAGE void run_narrow_at(int32_t *part, const cuvil_qxe *xq, const int32_t *off,
                         const int8_t *wq, int64_t nq, int64_t mb) {
  if (!off)
    __builtin_unreachable();
  run_narrow_panel(part, xq, off, wq, nq, mb, 0, CUVIL_QNA);
}

#if defined(__aarch64__) || defined(CUVIL_QRQ_T512)
/* The byte of position j's outputs in the block's table of bytes: a78's
 * rows of 8 channels, AVX-512's transposed rows of positions. */
#if defined(__aarch64__)
#define QRUN_STEP 8
#else
#define QRUN_STEP 1
#endif
/* The stored positions of a block: the i-th (i < n) is position
 * sel[i] / QRUN_STEP, at byte y0 + i of a plane (consecutive stored
 * positions are consecutive outputs, whatever rows they span); sel[i] =
 * 0x80 for i >= n (out of both tables' range below, also plus a channel;
 * a zero byte for vpshufb). */
typedef struct {
  uint8_t sel[16];
  int32_t y0, n;
} qruns;

INLINE void block_runs(const int32_t yoff[CUVIL_QNR], qruns *r) {
  r->n = 0;
  r->y0 = -1;
  for (int i = 0; i < 16; ++i)
    r->sel[i] = 0x80;
  for (int j = 0; j < CUVIL_QNR; ++j)
    if (yoff[j] >= 0) {
      if (r->n == 0)
        r->y0 = yoff[j];
      r->sel[r->n++] = (uint8_t)(QRUN_STEP * j);
    }
}
#endif

#if defined(CUVIL_QRQ_T512)
/* The block's outputs (requant_t512, its positions picked by sel). */
STAGE void requant_direct(const qout *o, const int32_t *pp, int64_t m0,
                          int64_t mb, const int32_t *yoff, const qruns *r) {
  (void)yoff;
  if (r->n == 0)
    return;
  requant_t512(o, pp, m0, mb, (uint8_t *)o->y + m0 * o->ch_stride + r->y0,
               r->sel, r->n);
}
#elif defined(__aarch64__)
/* The block's outputs (store_table; zeros in t where nothing is
 * stored). */
STAGE void requant_direct(const qout *o, const int32_t *pp, int64_t m0,
                          int64_t mb, const int32_t *yoff, const qruns *r) {
  _Static_assert(CUVIL_QMR == 8 && CUVIL_QNR <= 12,
                 "t: the block's positions of 8 bytes in 96");
  if (!o->lanes32) {
    const qblock b = {.p0 = 0, .nb = CUVIL_QNR};
    requant_at(o, &b, pp, m0, mb, yoff);
    return;
  }
  if (r->n == 0)
    return;
  rq32 k;
  rq32_init(&k, o, m0, mb);
  uint8_t t[96] __attribute__((aligned(16)));
  int want[12];
  for (int j = 0; j < 12; ++j)
    want[j] = j < CUVIL_QNR && yoff[j] >= 0;
  if (k.tf)
    rq32_table(&k, pp, want, t, 1);
  else
    rq32_table(&k, pp, want, t, 0);
  store_table((uint8_t *)o->y + m0 * o->ch_stride + r->y0, o->ch_stride, t,
              r->sel, r->n, mb, o->y_end - r->y0);
}
#else
typedef struct {
  int32_t n;
} qruns;

INLINE void block_runs(const int32_t yoff[CUVIL_QNR], qruns *r) {
  (void)yoff;
  r->n = 0;
}

STAGE void requant_direct(const qout *o, const int32_t *pp, int64_t m0,
                          int64_t mb, const int32_t *yoff, const qruns *r) {
  (void)r;
  const qblock b = {.p0 = 0, .nb = CUVIL_QNR};
  requant_at(o, &b, pp, m0, mb, yoff);
}
#endif

/* Every channel of the grid of an interleaved band (img; group q's steps
 * at offset off[q] of a position's): grid positions of rows of wq, of
 * which the first ow of each are outputs, stored from o->y on. The last
 * block ends at the grid's end (recomputing a few outputs) unless the
 * grid is shorter than a block. */
INLINE void run_grid(const qout *o, const uint8_t *img, const int32_t *off,
                     int64_t nq, int64_t grid, int64_t wq, int64_t ow) {
  int32_t part[CUVIL_QNR * CUVIL_QMR];
  const int64_t kp = 4 * nq;
  for (int64_t p = 0; p < grid; p += CUVIL_QNR) {
    const int64_t p0 =
        p + CUVIL_QNR > grid && grid >= CUVIL_QNR ? grid - CUVIL_QNR : p;
    int32_t yoff[CUVIL_QNR];
    grid_block(p0, grid, wq, ow, yoff);
    qruns r;
    block_runs(yoff, &r);
    const cuvil_qxe *xb = img + 4 * p0;
    for (int64_t m0 = 0; m0 < o->m; m0 += CUVIL_QMR) {
      const int64_t mb = o->m - m0 < CUVIL_QMR ? o->m - m0 : CUVIL_QMR;
      init_part(o, part, m0, mb);
      if (mb == CUVIL_QMR)
        run_full_at(part, xb, off, o->wp + m0 * kp, nq);
      else
        run_narrow_at(part, xb, off, o->wp + m0 * kp, nq, mb);
      requant_direct(o, part, m0, mb, yoff, &r);
    }
  }
}

#endif

/* On a library whose blocks gather their steps in another layout
 * (CUVIL_QDIRECT 0), the same contract in plain loops (weights packed with
 * this library's mr and kr in the direct step order), so that every
 * library defines every kernel; cuvilc does not choose it there
 * (cuvil_k_qpack_direct is 0). */
void cuvil_k_qconv2d_direct_s8(const void *x, const int8_t *wp,
                               const int32_t *bias, const int32_t *rq,
                               void *scratch, void *y, const int64_t *geom,
                               int64_t x_type, int64_t x_zp, int64_t y_type,
                               int64_t y_zp, int64_t y_lo, int64_t y_hi,
                               int64_t oy0, int64_t oy1) {
  oy0 = oy0 > 0 ? oy0 : 0;
  oy1 = oy1 < geom[CUVIL_QCONV_OH] ? oy1 : geom[CUVIL_QCONV_OH];
  if (oy0 >= oy1)
    return;
#if CUVIL_QDIRECT
  const int64_t c = geom[CUVIL_QCONV_C], h = geom[CUVIL_QCONV_H],
                wd = geom[CUVIL_QCONV_W], m = geom[CUVIL_QCONV_M];
  const int64_t kh = geom[CUVIL_QCONV_KH], kw = geom[CUVIL_QCONV_KW];
  const int64_t oh = geom[CUVIL_QCONV_OH], ow = geom[CUVIL_QCONV_OW];
  const int64_t sh = geom[CUVIL_QCONV_SH], sw = geom[CUVIL_QCONV_SW];
  const int64_t cb = (c + 3) / 4, taps = kh * kw, nq = cb * taps;
  const int64_t band = cuvil_qdirect_band(geom) < oy1 - oy0
                           ? cuvil_qdirect_band(geom)
                           : oy1 - oy0;
  qband bd = {.hq = band + (kh - 1) / sh,
              .wq = ow + (kw - 1) / sw,
              .sh = sh,
              .sw = sw,
              .pt = geom[CUVIL_QCONV_PAD_TOP],
              .pl = geom[CUVIL_QCONV_PAD_LEFT]};
  const int64_t phase = bd.hq * bd.wq;
  const int64_t plane = sh * sw * phase + CUVIL_QDIRECT_SLACK;
  int32_t *off = (int32_t *)scratch;
  uint8_t *img = (uint8_t *)scratch + 4 * nq;
  for (int64_t q = 0; q < nq; ++q) {
    const int64_t ky = q % taps / kw, kx = q % kw;
    off[q] =
        (int32_t)(4 * (q / taps * plane + (ky % sh * sw + kx % sw) * phase +
                       ky / sh * bd.wq + kx / sw));
  }
  qsrc s = {.c = c, .h = h, .wd = wd};
  qout o = {.wp = wp,
            .bias = bias,
            .rq = rq,
            .y_type = y_type,
            .m = m,
            .positions = oh * ow,
            .ch_stride = oh * ow,
            .pos_stride = 1,
            .y_zp = (int32_t)y_zp,
            .y_lo = (int32_t)y_lo,
            .y_hi = (int32_t)y_hi};
  domain(&s, &o, x_type, x_zp, bias, rq, m, c * kh * kw);
  /* Bands of even height; stores up to the range's end (y_end). */
  const int64_t bands = (oy1 - oy0 + band - 1) / band;
  const int64_t rows_most = (oy1 - oy0 + bands - 1) / bands;
  for (int64_t n = 0; n < geom[CUVIL_QCONV_N]; ++n) {
    s.x = (const uint8_t *)x + n * c * h * wd;
    for (bd.oy0 = oy0; bd.oy0 < oy1; bd.oy0 += rows_most) {
      const int64_t rows = oy1 - bd.oy0 < rows_most ? oy1 - bd.oy0 : rows_most;
      for (int64_t b = 0; b < cb; ++b)
        interleave_phases(&s, &bd, b, img + 4 * b * plane);
      o.y = (uint8_t *)y + (n * m * oh + bd.oy0) * ow;
      o.y_end = (oy1 - bd.oy0) * ow;
      run_grid(&o, img, off, nq, (rows - 1) * bd.wq + ow, bd.wq, ow);
    }
  }
#else
  (void)scratch;
  /* The bias holds the domain's correction: take x in the domain too. */
  const int32_t corr = cuvil_qpack_corr(CUVIL_QX_UNSIGNED, x_type);
  const int64_t c = geom[CUVIL_QCONV_C], h = geom[CUVIL_QCONV_H],
                wd = geom[CUVIL_QCONV_W], m = geom[CUVIL_QCONV_M];
  const int64_t kh = geom[CUVIL_QCONV_KH], kw = geom[CUVIL_QCONV_KW];
  const int64_t oh = geom[CUVIL_QCONV_OH], ow = geom[CUVIL_QCONV_OW];
  const int64_t mr = CUVIL_QMR, kr = CUVIL_QKR, taps = kh * kw;
  const int64_t kp = ((c + 3) / 4 * 4 * taps + kr - 1) / kr * kr;
  for (int64_t n = 0; n < geom[CUVIL_QCONV_N]; ++n)
    for (int64_t mo = 0; mo < m; ++mo) {
      const int64_t m0 = mo / mr * mr, mb = m - m0 < mr ? m - m0 : mr;
      const int8_t *wm = wp + m0 * kp;
      for (int64_t oy = oy0; oy < oy1; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          int32_t acc = bias[mo];
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t t = 0; t < taps; ++t) {
              const int64_t iy = oy * geom[CUVIL_QCONV_SH] + t / kw -
                                 geom[CUVIL_QCONV_PAD_TOP];
              const int64_t ix = ox * geom[CUVIL_QCONV_SW] + t % kw -
                                 geom[CUVIL_QCONV_PAD_LEFT];
              const int32_t xv =
                  iy < 0 || iy >= h || ix < 0 || ix >= wd
                      ? (int32_t)x_zp
                      : cuvil_q_load8(x, ((n * c + ci) * h + iy) * wd + ix,
                                      x_type);
              const int64_t st = (ci / 4 * taps + t) * 4 + ci % 4;
              acc += (xv - corr) *
                     wm[st / kr * mb * kr + (mo - m0) * kr + st % kr];
            }
          cuvil_q_store8(y, ((n * m + mo) * oh + oy) * ow + ox, y_type,
                         cuvil_q_requant(acc, rq + 2 * mo, (int32_t)y_zp,
                                         (int32_t)y_lo, (int32_t)y_hi));
        }
    }
#endif
}

#endif
