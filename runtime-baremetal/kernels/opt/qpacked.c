/* Integer convolution and matrix product on weights packed at compile time
 * (cuvil/kernels/qint.h; block shapes in qblocking.h). The reference
 * kernels in quant/qint.c are their oracle.
 *
 * Both kernels see their operation as output channels x positions (the
 * output pixels of a convolution, the rows of a matrix product) over a
 * reduction of K steps. A block of CUVIL_QNR positions is gathered tile by
 * tile (CUVIL_QKC steps) into a buffer in the kernel's layout and domain,
 * then every panel of CUVIL_QMR channels runs over the tile with its
 * accumulators in registers. When K needs several tiles, the accumulators
 * of a chunk of QMC channels wait in an int32 buffer between tiles (the
 * tile is gathered again for the next chunk). Stack: the tile, at most
 * CUVIL_QKC / CUVIL_QKR * CUVIL_QXG elements (3 KiB on a78 and x86, 2 KiB
 * on RV64), and QMC x CUVIL_QNR int32 (1.5 KiB on a78, 1 KiB on RV64,
 * 0.75 / 1.5 KiB on AVX2 / AVX-512). */
#include "cuvil/kernels.h"

#include "../quant/requant.h"
#include "qblocking.h"

/* Read by cuvilc from the kernel bitcode: the packing it must use. */
const int64_t cuvil_k_qpack_mr = CUVIL_QMR;
const int64_t cuvil_k_qpack_kr = CUVIL_QKR;

#define INLINE CUVIL_QINLINE

/* Channels whose accumulators wait between tiles. */
#define QMC (CUVIL_QMR > 32 ? CUVIL_QMR : 32)

/* The source of the gathered activations: a convolution's input image (of
 * one group) or the rows of a matrix product's A. */
typedef struct {
  const uint8_t *x;
  int64_t is_gemm;
  int64_t c, h, wd, kh, kw, ow, sh, sw, dh, dw, pt, pl; /* convolution */
  int64_t k;                                            /* both: steps */
  uint8_t flip, pad; /* xor into the kernel's domain; the padding byte */
} qsrc;

/* A block of output positions [p0, p0 + nb). A convolution block inside one
 * output row gathers whole window rows (row = 1, iy/ix: the input
 * coordinates of its first window's origin); one spanning rows keeps each
 * position's origin (iy at -2^40 for the positions past nb, which read the
 * padding). */
typedef struct {
  int64_t p0, nb, row, iy, ix;
  int64_t iys[CUVIL_QNR], ixs[CUVIL_QNR];
} qblock;

INLINE void block_init(const qsrc *s, qblock *b, int64_t p0, int64_t nb) {
  b->p0 = p0;
  b->nb = nb;
  if (s->is_gemm)
    return;
  const int64_t oy = p0 / s->ow, ox = p0 % s->ow;
  b->row = ox + CUVIL_QNR <= s->ow;
  b->iy = oy * s->sh - s->pt;
  b->ix = ox * s->sw - s->pl;
  for (int j = 0; j < CUVIL_QNR; ++j) {
    const int64_t p = p0 + j;
    b->iys[j] = j < nb ? p / s->ow * s->sh - s->pt : -((int64_t)1 << 40);
    b->ixs[j] = p % s->ow * s->sw - s->pl;
  }
}

/* Step t of the block's positions into row[0, CUVIL_QNR), in the kernel's
 * domain; (ci, ky, kx) is t's window tap. */
INLINE void conv_step(const qsrc *s, const qblock *b, int64_t ci, int64_t ky, int64_t kx,
                      uint8_t row[CUVIL_QNR]) {
  const uint8_t *xc = s->x + ci * s->h * s->wd;
  if (b->row) {
    const int64_t iy = b->iy + ky * s->dh, ix = b->ix + kx * s->dw;
    if (iy < 0 || iy >= s->h) {
      for (int j = 0; j < CUVIL_QNR; ++j)
        row[j] = s->pad;
    } else if (ix >= 0 && ix + (CUVIL_QNR - 1) * s->sw < s->wd) {
      /* The window row is inside the input: one copy for stride 1. */
      const uint8_t *xr = xc + iy * s->wd + ix;
      if (s->sw == 1)
        __builtin_memcpy(row, xr, CUVIL_QNR);
      else
        for (int j = 0; j < CUVIL_QNR; ++j)
          row[j] = xr[j * s->sw];
    } else {
      const uint8_t *xr = xc + iy * s->wd;
      for (int j = 0; j < CUVIL_QNR; ++j) {
        const int64_t ixj = ix + j * s->sw;
        row[j] = ixj >= 0 && ixj < s->wd ? xr[ixj] : s->pad;
      }
    }
  } else {
    for (int j = 0; j < CUVIL_QNR; ++j) {
      const int64_t iy = b->iys[j] + ky * s->dh, ix = b->ixs[j] + kx * s->dw;
      row[j] = iy >= 0 && iy < s->h && ix >= 0 && ix < s->wd ? xc[iy * s->wd + ix] : s->pad;
    }
  }
  CUVIL_UNROLL
  for (int j = 0; j < CUVIL_QNR; ++j)
    row[j] ^= s->flip;
}

/* Steps [k0, k0 + kc) (kc a multiple of CUVIL_QKR; steps from K on read 0,
 * against zero weights) of block b into buf, group by group. */
INLINE void gather(const qsrc *s, const qblock *b, int64_t k0, int64_t kc, cuvil_qxe *buf) {
  uint8_t g[CUVIL_QKR][CUVIL_QNR];
  if (s->is_gemm) {
    for (int64_t q = 0; q < kc / CUVIL_QKR; ++q) {
      for (int r = 0; r < CUVIL_QKR; ++r) {
        const int64_t t = k0 + q * CUVIL_QKR + r;
        for (int j = 0; j < CUVIL_QNR; ++j)
          g[r][j] = t < s->k && j < b->nb ? s->x[(b->p0 + j) * s->k + t] ^ s->flip : 0;
      }
      cuvil_qx_pack(buf + q * CUVIL_QXG, g);
    }
    return;
  }
  /* The tap of step k0, then stepped along. */
  const int64_t taps = s->kh * s->kw;
  int64_t ci = k0 / taps, ky = k0 % taps / s->kw, kx = k0 % s->kw;
  for (int64_t q = 0; q < kc / CUVIL_QKR; ++q) {
    for (int r = 0; r < CUVIL_QKR; ++r) {
      if (ci < s->c)
        conv_step(s, b, ci, ky, kx, g[r]);
      else
        for (int j = 0; j < CUVIL_QNR; ++j)
          g[r][j] = 0;
      if (++kx == s->kw) {
        kx = 0;
        if (++ky == s->kh) {
          ky = 0;
          ++ci;
        }
      }
    }
    cuvil_qx_pack(buf + q * CUVIL_QXG, g);
  }
}

/* acc (the int32 block part, [CUVIL_QNR][CUVIL_QMR]) += nq groups of the
 * panel of mb channels at wq against the gathered xq. Called with mb =
 * CUVIL_QMR (a constant: whole-vector loads) or the narrow panel's width. */
INLINE void run_panel(int32_t *part, const cuvil_qxe *xq, const int8_t *wq, int64_t nq,
                      int64_t mb) {
  cuvil_qacc acc[CUVIL_QNA][CUVIL_QMV];
  cuvil_qacc_load(acc, part);
  for (int64_t q = 0; q < nq; ++q) {
    cuvil_qw w[CUVIL_QMV];
    CUVIL_UNROLL
    for (int v = 0; v < CUVIL_QMV; ++v)
      w[v] = mb == CUVIL_QMR ? cuvil_qw_load(wq + v * CUVIL_QWB)
                             : cuvil_qw_load_n(wq + v * CUVIL_QWB, mb * CUVIL_QKR - v * CUVIL_QWB);
    cuvil_qgroup(acc, w, xq);
    wq += mb * CUVIL_QKR;
    xq += CUVIL_QXG;
  }
  cuvil_qacc_store(part, acc);
}

/* Output and requantization of one operation (a convolution group). */
typedef struct {
  const int8_t *wp;
  const int32_t *bias, *wsum, *rq;
  void *y;
  int64_t y_type, m, positions, ch_stride, pos_stride;
  int32_t corr, y_zp, y_lo, y_hi; /* corr: times wsum, the domain change */
} qout;

/* Channels [c0, c1) of block b (part: their accumulators, [channel panel]
 * [QNR][QMR]) over the tile [k0, k0 + kc) of a reduction of kp steps. */
INLINE void run_tile(const qout *o, const qblock *b, const cuvil_qxe *buf, int32_t *part,
                     int64_t c0, int64_t c1, int64_t k0, int64_t kc, int64_t kp, int keep) {
  for (int64_t m0 = c0; m0 < c1; m0 += CUVIL_QMR) {
    const int64_t mb = o->m - m0 < CUVIL_QMR ? o->m - m0 : CUVIL_QMR;
    int32_t *pp = part + (keep ? (m0 - c0) * CUVIL_QNR : 0);
    if (k0 == 0)
      for (int j = 0; j < CUVIL_QNR; ++j)
        for (int64_t i = 0; i < CUVIL_QMR; ++i)
          pp[j * CUVIL_QMR + i] =
              i < mb ? (int32_t)((uint32_t)o->bias[m0 + i] +
                                 (uint32_t)o->corr * (uint32_t)o->wsum[m0 + i])
                     : 0;
    const int8_t *wq = o->wp + m0 * kp + k0 * mb;
    if (mb == CUVIL_QMR)
      run_panel(pp, buf, wq, kc / CUVIL_QKR, CUVIL_QMR);
    else
      run_panel(pp, buf, wq, kc / CUVIL_QKR, mb);
    if (k0 + kc < kp)
      continue;
    for (int64_t i = 0; i < mb; ++i) {
      const int32_t *rq = o->rq + 2 * (m0 + i);
      for (int64_t j = 0; j < b->nb; ++j)
        cuvil_q_store8(o->y, (m0 + i) * o->ch_stride + (b->p0 + j) * o->pos_stride, o->y_type,
                       cuvil_q_requant(pp[j * CUVIL_QMR + i], rq, o->y_zp, o->y_lo, o->y_hi));
    }
  }
}

/* The whole operation: every block of positions, every channel. */
INLINE void run_all(const qsrc *s, const qout *o) {
  const int64_t kp = (s->k + CUVIL_QKR - 1) / CUVIL_QKR * CUVIL_QKR;
  const int keep = kp > CUVIL_QKC; /* several tiles: accumulators wait */
  const int64_t chunk = keep ? QMC : o->m;
  cuvil_qxe buf[CUVIL_QKC / CUVIL_QKR * CUVIL_QXG];
  int32_t part[QMC * CUVIL_QNR];
  qblock b;
  for (int64_t p0 = 0; p0 < o->positions; p0 += CUVIL_QNR) {
    const int64_t nb = o->positions - p0 < CUVIL_QNR ? o->positions - p0 : CUVIL_QNR;
    block_init(s, &b, p0, nb);
    for (int64_t c0 = 0; c0 < o->m; c0 += chunk) {
      const int64_t c1 = o->m - c0 < chunk ? o->m : c0 + chunk;
      for (int64_t k0 = 0; k0 < kp; k0 += CUVIL_QKC) {
        const int64_t kc = kp - k0 < CUVIL_QKC ? kp - k0 : CUVIL_QKC;
        gather(s, &b, k0, kc, buf);
        run_tile(o, &b, buf, part, c0, c1, k0, kc, kp, keep);
      }
    }
  }
}

/* The flip into the kernel's domain of x_type activations, and the
 * accumulator's correction per unit of wsum. */
INLINE void domain(qsrc *s, qout *o, int64_t x_type, int64_t x_zp) {
  const int is_u8 = x_type == CUVIL_Q_U8;
  const int flip = is_u8 != CUVIL_QX_UNSIGNED;
  s->flip = flip ? 0x80 : 0;
  s->pad = (uint8_t)x_zp;
  /* uint8 x = x' + 128 (x' int8): acc gains 128 wsum; int8 x = x' - 128. */
  o->corr = !flip ? 0 : is_u8 ? 128 : -128;
}

void cuvil_k_qconv2d_packed_s8(const void *x, const int8_t *wp,
                               const int32_t *bias, const int32_t *wsum,
                               const int32_t *rq, void *y, const int64_t *geom,
                               int64_t x_type, int64_t x_zp, int64_t y_type,
                               int64_t y_zp, int64_t y_lo, int64_t y_hi) {
  const int64_t group = geom[CUVIL_QCONV_GROUP], m = geom[CUVIL_QCONV_M];
  const int64_t c = geom[CUVIL_QCONV_C], h = geom[CUVIL_QCONV_H], wd = geom[CUVIL_QCONV_W];
  const int64_t kh = geom[CUVIL_QCONV_KH], kw = geom[CUVIL_QCONV_KW];
  const int64_t oh = geom[CUVIL_QCONV_OH], ow = geom[CUVIL_QCONV_OW];
  const int64_t cg = c / group, mg = m / group, k = cg * kh * kw;
  const int64_t kp = (k + CUVIL_QKR - 1) / CUVIL_QKR * CUVIL_QKR;
  qsrc s = {0, 0, cg, h, wd, kh, kw, ow, geom[CUVIL_QCONV_SH], geom[CUVIL_QCONV_SW],
            geom[CUVIL_QCONV_DH], geom[CUVIL_QCONV_DW], geom[CUVIL_QCONV_PAD_TOP],
            geom[CUVIL_QCONV_PAD_LEFT], k, 0, 0};
  qout o = {0, 0, 0, 0, 0, y_type, mg, oh * ow, oh * ow, 1,
            0, (int32_t)y_zp, (int32_t)y_lo, (int32_t)y_hi};
  domain(&s, &o, x_type, x_zp);
  for (int64_t b = 0; b < geom[CUVIL_QCONV_N]; ++b)
    for (int64_t g = 0; g < group; ++g) {
      s.x = (const uint8_t *)x + (b * c + g * cg) * h * wd;
      o.wp = wp + g * mg * kp;
      o.bias = bias + g * mg;
      o.wsum = wsum + g * mg;
      o.rq = rq + 2 * g * mg;
      o.y = (uint8_t *)y + (b * m + g * mg) * oh * ow;
      run_all(&s, &o);
    }
}

void cuvil_k_qgemm_packed_s8(const void *a, const int8_t *wp,
                             const int32_t *bias, const int32_t *wsum,
                             const int32_t *rq, void *y, int64_t m, int64_t n,
                             int64_t k, int64_t a_type, int64_t a_zp,
                             int64_t y_type, int64_t y_zp, int64_t y_lo,
                             int64_t y_hi) {
  /* No padding: a_zp only matters through bias. */
  qsrc s = {(const uint8_t *)a, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, k, 0, 0};
  qout o = {wp, bias, wsum, rq, y, y_type, n, m, 1, n,
            0, (int32_t)y_zp, (int32_t)y_lo, (int32_t)y_hi};
  domain(&s, &o, a_type, a_zp);
  run_all(&s, &o);
}
