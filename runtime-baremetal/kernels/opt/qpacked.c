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
 * tile is gathered again for the next chunk). Stack, bounded whatever the
 * shape: the tile (CUVIL_QKC / CUVIL_QKR * CUVIL_QXG elements: 3 KiB on
 * a78, AVX2 and VNNI, 4 KiB on RV64, 6 KiB on AVX-512 without VNNI), the
 * waiting accumulators (QMC x CUVIL_QNR int32: 3 KiB on a78, AVX-512 and
 * RV64, 1.5 KiB on AVX2) and gather_run's tap tables (under
 * 1 KiB), plus, where a small input is copied with its padding
 * (run_padded), that copy (QPAD_BYTES, 2 KiB) in a frame of its own below
 * the kernel's. The header cuvilc writes gives the measured total
 * (CUVIL_MODEL_RUN_STACK_BYTES): on a78 8,224 bytes for resnet8_int8,
 * 10,800 for ds_cnn_int8, whose first layer takes the copy. */
#include "cuvil/kernels.h"

#include "qblocking.h"
#include "qrequant.h"

/* Read by cuvilc from the kernel bitcode: the packing it must use. */
const int64_t cuvil_k_qpack_mr = CUVIL_QMR;
const int64_t cuvil_k_qpack_kr = CUVIL_QKR;
/* ...the activations' domain, whose correction cuvilc folds into bias... */
const int64_t cuvil_k_qpack_x_unsigned = CUVIL_QX_UNSIGNED;
/* ...and whether it has the stride-1 convolution of qdirect.h. */
const int64_t cuvil_k_qpack_direct = CUVIL_QDIRECT;
#if defined(CUVIL_QSDOT)
/* ...and that they are SDOT/UDOT code: a CPU without ARMv8.2 dotprod that
 * uses this library (a Cortex-A72 board with llvm.kernels = "a78") gets
 * the reference integer kernels instead. */
const int64_t cuvil_k_qpack_dotprod = 1;
#endif

#define INLINE CUVIL_QINLINE
/* The stages of a block (gathering, a panel's reduction, requantization)
 * stay separate functions: inlined into one loop nest, each one's
 * registers spilled around the others' (the a78 build gathered at some 90
 * instructions per step). */
#define STAGE static __attribute__((noinline))

/* Channels whose accumulators wait between tiles (the tiles are gathered
 * again for each chunk of QMC channels). */
#define QMC (CUVIL_QMR > 64 ? CUVIL_QMR : 64)

/* Whether block b's words hold triples (RV64, qblocking.h), and in how
 * many words. */
#if defined(CUVIL_QPAIRS)
#define QTRI(b) CUVIL_QTRI((b)->nb)
#define QNW(b) CUVIL_QWORDS((b)->nb)
#else
#define QTRI(b) 0
#define QNW(b) CUVIL_QNA
#endif

#include "qgather.h"

/* The narrowest output rows taken block by block along the row (narrower
 * ones: blocks span rows). */
#if defined(CUVIL_QPAIRS)
#define QROW_MIN 8
#else
#define QROW_MIN CUVIL_QNR
#endif

/* acc += nq groups of the panel of mb channels at wq against the gathered
 * xq (RV64: its first nw words, a constant); with one = 1 only the block's
 * first position. Called with mb =
 * CUVIL_QMR (a constant: whole-vector loads) or the narrow panel's width,
 * and nv (a constant) the weight vectors that hold its channels: the
 * others are neither loaded nor multiplied (ResNet-8's 16-channel layers in
 * 32-channel panels on AVX-512 spent half their dot products on zero
 * weights). */
INLINE void run_groups(cuvil_qacc acc[CUVIL_QNA][CUVIL_QMV],
                       const cuvil_qxe *xq, const int32_t *off,
                       const int8_t *wq, int64_t nq, int64_t mb, int one,
                       int nv, int nw) {
  CUVIL_UNROLL_BY(CUVIL_QUNROLL)
  for (int64_t q = 0; q < nq; ++q) {
    cuvil_qw w[CUVIL_QMV];
    CUVIL_UNROLL
    for (int v = 0; v < nv; ++v)
      w[v] = mb == CUVIL_QMR ? cuvil_qw_load(wq + v * CUVIL_QWB)
                             : cuvil_qw_load_n(wq + v * CUVIL_QWB,
                                               mb * CUVIL_QKR - v * CUVIL_QWB);
    /* off (qdirect.h): group q's activations at xq + off[q]. */
    const cuvil_qxe *xg = off ? xq + off[q] : xq;
    if (one)
      cuvil_qgroup_one(acc[0], w, xg);
    else
      cuvil_qgroup(acc, w, xg, nv, nw);
    wq += mb * CUVIL_QKR;
    if (!off)
      xq += CUVIL_QXG;
  }
}

/* part (the int32 block, [CUVIL_QNR][CUVIL_QMR]) += run_groups. Triples
 * (tri, RV64; nq at most CUVIL_QTRI_CHUNK) start from cuvil_qacc_start3
 * and their first nw words (the block's: CUVIL_QWORDS) are added to part
 * (cuvil_qacc_add3); words from nw on run on whatever the buffer holds
 * when nw is not a constant (a narrow panel), and are dropped. */
INLINE void run_panel(int32_t *part, const cuvil_qxe *xq, const int32_t *off,
                      const int8_t *wq, int64_t nq, int64_t mb, int one, int nv,
                      int tri, int nw, const int32_t *init) {
  cuvil_qacc acc[CUVIL_QNA][CUVIL_QMV];
#if defined(CUVIL_QPAIRS)
  if (tri) {
    const int nr = __builtin_constant_p(nw) ? nw : CUVIL_QNA;
    cuvil_qacc_start3(acc);
    run_groups(acc, xq, off, wq, nq, mb, one, nv, nr);
    cuvil_qacc_add3(part, acc, nw, init);
    return;
  }
#else
  (void)init;
  (void)tri;
#endif
  cuvil_qacc_load(acc, part);
  run_groups(acc, xq, off, wq, nq, mb, one, nv, CUVIL_QNA);
  cuvil_qacc_store(part, acc);
  (void)nw;
}

STAGE void run_full(int32_t *part, const cuvil_qxe *xq, const int8_t *wq,
                    int64_t nq) {
  run_panel(part, xq, 0, wq, nq, CUVIL_QMR, 0, CUVIL_QMV, 0, CUVIL_QNA, 0);
}

#if defined(CUVIL_QPAIRS)
/* One chunk of a whole panel on triples in NW words (nq <=
 * CUVIL_QTRI_CHUNK): a function of its own per word count, called chunk
 * by chunk (with the loop inside, the compiler kept the block's sums in
 * registers across chunks, spilled). A block of 4 to 6 positions costs
 * 22 instructions a step, of 7 to 9 31, of 10 to 12 40. */
#define QCHUNK3(NW)                                                            \
  STAGE void run_chunk3_##NW(int32_t *part, const cuvil_qxe *xq,               \
                             const int8_t *wq, int64_t nq,                     \
                             const int32_t *init) {                            \
    if (init) /* two loops: a test per store cost ResNet-8 1.3% */             \
      run_panel(part, xq, 0, wq, nq, CUVIL_QMR, 0, CUVIL_QMV, 1, NW, init);    \
    else                                                                       \
      run_panel(part, xq, 0, wq, nq, CUVIL_QMR, 0, CUVIL_QMV, 1, NW, 0);       \
  }
QCHUNK3(1)
QCHUNK3(2)
QCHUNK3(3)
QCHUNK3(4)

INLINE void run_chunk3(int32_t *part, const cuvil_qxe *xq, const int8_t *wq,
                       int64_t nq, int nw, const int32_t *init) {
  if (nw == 4)
    run_chunk3_4(part, xq, wq, nq, init);
  else if (nw == 3)
    run_chunk3_3(part, xq, wq, nq, init);
  else if (nw == 2)
    run_chunk3_2(part, xq, wq, nq, init);
  else
    run_chunk3_1(part, xq, wq, nq, init);
}
#endif

/* run_panel of a narrow panel (xq + off[q], off not null: qdirect.h),
 * with one weight vector where its channels fit in one. */
INLINE void run_narrow_panel(int32_t *part, const cuvil_qxe *xq,
                             const int32_t *off, const int8_t *wq, int64_t nq,
                             int64_t mb, int tri, int nw) {
  if (CUVIL_QMV > 1 && mb <= CUVIL_QVL)
    run_panel(part, xq, off, wq, nq, mb, 0, 1, tri, nw, 0);
  else
    run_panel(part, xq, off, wq, nq, mb, 0, CUVIL_QMV, tri, nw, 0);
}

STAGE void run_narrow(int32_t *part, const cuvil_qxe *xq, const int8_t *wq,
                      int64_t nq, int64_t mb, int tri, int nw) {
  run_narrow_panel(part, xq, 0, wq, nq, mb, tri, nw);
}

#if defined(CUVIL_QPAIRS)
/* A panel of mb channels on triples in nw words, CUVIL_QTRI_CHUNK groups
 * a call (inlined: as a function of its own, called per panel and tile,
 * ResNet-8 ran 1% more instructions). */
INLINE void run_tri(int32_t *part, const cuvil_qxe *xq, const int8_t *wq,
                    int64_t nq, int64_t mb, int nw, const int32_t *init) {
  for (int64_t q0 = 0; q0 < nq; q0 += CUVIL_QTRI_CHUNK) {
    const int64_t n = nq - q0 < CUVIL_QTRI_CHUNK ? nq - q0 : CUVIL_QTRI_CHUNK;
    const cuvil_qxe *xc = xq + q0 * CUVIL_QXG;
    const int8_t *wc = wq + q0 * mb * CUVIL_QKR;
    if (mb == CUVIL_QMR)
      run_chunk3(part, xc, wc, n, nw, q0 == 0 ? init : 0);
    else
      run_narrow(part, xc, wc, n, mb, 1, nw);
  }
}
#endif

STAGE void run_one(int32_t *part, const cuvil_qxe *xq, const int8_t *wq,
                   int64_t nq, int64_t mb) {
  if (mb == CUVIL_QMR)
    run_panel(part, xq, 0, wq, nq, CUVIL_QMR, 1, CUVIL_QMV, 0, CUVIL_QNA, 0);
  else
    run_panel(part, xq, 0, wq, nq, mb, 1, CUVIL_QMV, 0, CUVIL_QNA, 0);
}

#if defined(CUVIL_QPAIRS)
/* run_row's whole-panel loop over np step pairs (weights at wq, 4-aligned;
 * 8-aligned if dword: one load a pair, else two words, not an unaligned
 * doubleword: eight byte loads, or a trap on hardware without misaligned
 * accesses). */
INLINE void row_pairs(uint64_t acc[CUVIL_QMR], uint64_t us[CUVIL_QMR],
                      const cuvil_qxe *xq, const int8_t *wq, int64_t np,
                      int dword) {
  const uint64_t digits = 0x000000ff000000ffu, flip = 0x8080808080808080u;
  for (int c = 0; c < CUVIL_QMR; ++c)
    acc[c] = us[c] = 0;
  CUVIL_UNROLL_BY(2)
  for (int64_t q = 0; q < np; ++q) {
    const int8_t *w = wq + 2 * CUVIL_QMR * q;
    uint64_t v;
    if (dword) {
      __builtin_memcpy(&v, __builtin_assume_aligned(w, 8), sizeof v);
    } else {
      uint32_t w2[2];
      __builtin_memcpy(w2, __builtin_assume_aligned(w, 4), sizeof w2);
      v = w2[0] + ((uint64_t)w2[1] << 32);
    }
    v ^= flip;
    const uint64_t x = xq[q];
    CUVIL_UNROLL
    for (int c = 0; c < CUVIL_QMR; ++c) {
      const uint64_t u = v >> 8 * c & digits;
      acc[c] += u * x;
      us[c] += u;
    }
  }
}

/* part (position 0's accumulators) += kc steps of the panel of mb channels
 * at wq against a one-row gathering (see gather: x + 128, unsigned, as
 * the int8 domain's x). A whole panel (at an aligned address, as packed
 * weights are; else step by step) takes two steps per 64-bit load of
 * weights, moved to unsigned (u = w + 128, so that the bytes are the
 * digits of the word): (u[t] + u[t + 1] * 2^32) * (x[t + 1] + x[t] *
 * 2^32) holds u[t] x[t] + u[t + 1] x[t + 1] in its high half, two
 * multiply-adds per mul where run_one did one and loaded each weight alone
 * (the low half, u[t] x[t + 1] < 2^16 a pair, carries nothing over a
 * tile's 64 pairs); at the end 128 times the paired x sum comes off (for
 * w), and 128 times the paired w sum, the u sum less 128 a step (for x). */
STAGE void run_row(int32_t *part, const cuvil_qxe *xq, const int8_t *wq,
                   int64_t kc, int64_t mb) {
  const int64_t np = kc / 2;
  if (mb < CUVIL_QMR || ((uintptr_t)wq & 3)) {
    for (int64_t t = 0; t < kc; ++t) {
      const int32_t x =
          (int32_t)(t & 1 ? (uint32_t)xq[t / 2] : xq[t / 2] >> 32) - 128;
      for (int64_t c = 0; c < mb; ++c)
        part[c] += x * wq[t * mb + c];
    }
    return;
  }
  uint64_t acc[CUVIL_QMR], us[CUVIL_QMR];
  if ((uintptr_t)wq & 7)
    row_pairs(acc, us, xq, wq, np, 0);
  else
    row_pairs(acc, us, xq, wq, np, 1);
  const uint32_t off = 128 * (uint32_t)xq[(kc + 1) / 2];
  for (int c = 0; c < CUVIL_QMR; ++c) {
    const uint32_t wsum =
        (uint32_t)us[c] + (uint32_t)(us[c] >> 32) - 256 * (uint32_t)np;
    uint32_t r =
        (uint32_t)part[c] + (uint32_t)(acc[c] >> 32) - off - 128 * wsum;
    if (kc & 1)
      r += (uint32_t)(((int32_t)(xq[np] >> 32) - 128) *
                      wq[2 * CUVIL_QMR * np + c]);
    part[c] = (int32_t)r;
  }
}
#endif

#include "qpacked_out.h"

/* The accumulators of channels [m0, m0 + mb) for every position of a
 * block: the bias (the domain's correction included). */
INLINE void init_part(const qout *o, int32_t *pp, int64_t m0, int64_t mb) {
  int32_t init[CUVIL_QMR];
  for (int64_t i = 0; i < CUVIL_QMR; ++i)
    init[i] = i < mb ? o->bias[m0 + i] : 0;
  for (int j = 0; j < CUVIL_QNR; ++j)
    __builtin_memcpy(pp + j * CUVIL_QMR, init, sizeof init);
}

/* Channels [c0, c1) of block b (part: their accumulators, [channel panel]
 * [QNR][QMR]) over the tile [k0, k0 + kc) of a reduction of kp steps. */
INLINE void run_tile(const qout *o, const qblock *b, const cuvil_qxe *buf,
                     int32_t *part, int64_t c0, int64_t c1, int64_t k0,
                     int64_t kc, int64_t kp, int keep) {
  for (int64_t m0 = c0; m0 < c1; m0 += CUVIL_QMR) {
    const int64_t mb = o->m - m0 < CUVIL_QMR ? o->m - m0 : CUVIL_QMR;
    int32_t *pp = part + (keep ? (m0 - c0) * CUVIL_QNR : 0);
    /* A whole panel on triples writes its first chunk's sums over the
     * bias itself (cuvil_qacc_add3's init): the block is not filled with
     * it first, then read back (72 instructions a panel and block). */
    const int first = k0 == 0 && QTRI(b) && mb == CUVIL_QMR;
    if (k0 == 0 && !first)
      init_part(o, pp, m0, mb);
    const int8_t *wq = o->wp + m0 * kp + k0 * mb;
#if defined(CUVIL_QPAIRS)
    if (b->nb == 1 && b->runs == 0) /* a matrix product's row */
      run_row(pp, buf, wq, kc, mb);
    else
#endif
        if (b->nb == 1)
      run_one(pp, buf, wq, kc / CUVIL_QKR, mb);
#if defined(CUVIL_QPAIRS)
    else if (QTRI(b))
      run_tri(pp, buf, wq, kc / CUVIL_QKR, mb, (int)QNW(b),
              first ? o->bias + m0 : 0);
#endif
    else if (mb == CUVIL_QMR)
      run_full(pp, buf, wq, kc / CUVIL_QKR);
    else
      run_narrow(pp, buf, wq, kc / CUVIL_QKR, mb, 0, CUVIL_QNA);
    if (k0 + kc == kp)
      requant_block(o, b, pp, m0, mb);
  }
}

/* Every channel of block b: the tiles of its reduction gathered, then run
 * by every panel (by chunks of channels when there are several tiles). */
INLINE void run_block(const qsrc *s, const qout *o, const qblock *b,
                      cuvil_qxe *buf, int32_t *part) {
  const int64_t kp = (s->k + CUVIL_QKR - 1) / CUVIL_QKR * CUVIL_QKR;
  const int keep = kp > CUVIL_QKC; /* several tiles: accumulators wait */
  const int64_t chunk = keep ? QMC : o->m;
  for (int64_t c0 = 0; c0 < o->m; c0 += chunk) {
    const int64_t c1 = o->m - c0 < chunk ? o->m : c0 + chunk;
    for (int64_t k0 = 0; k0 < kp; k0 += CUVIL_QKC) {
      const int64_t kc = kp - k0 < CUVIL_QKC ? kp - k0 : CUVIL_QKC;
      gather_tile(s, b, k0, kc, buf);
      run_tile(o, b, buf, part, c0, c1, k0, kc, kp, keep);
    }
  }
}

/* Positions [q0, o->positions) of the operation. A convolution whose
 * output rows hold a block takes blocks along each row, the last one
 * ending at the row's end (it may overlap its neighbour: recomputing a few
 * outputs costs less than the general gathering of a block across rows);
 * a part of a row shorter than a block (a range starting or ending inside
 * it) is one short block; shorter rows, and the rows of a matrix product,
 * are taken in order, blocks spanning rows. */
#if defined(CUVIL_QPAIRS)
/* RV64: the positions of the next block of a row part of n: 12 while more
 * remain, then the rest, never overlapping (the fewest words: the rest's
 * own, CUVIL_QWORDS; a row of 16 is 4 + 2 words a step, as 8 + 8 in two
 * blocks of 3 words would be). */
INLINE int64_t row_block(int64_t n) { return n > CUVIL_QNR ? CUVIL_QNR : n; }

INLINE void run_rows(const qsrc *s, const qout *o, int64_t q0, cuvil_qxe *buf,
                     int32_t *part) {
  qblock b;
  for (int64_t r0 = q0; r0 < o->positions;) {
    const int64_t row_end = (r0 / s->ow + 1) * s->ow;
    const int64_t r1 = row_end < o->positions ? row_end : o->positions;
    for (int64_t p = r0; p < r1;) {
      const int64_t nb = row_block(r1 - p);
      block_init(s, &b, p, nb);
      run_block(s, o, &b, buf, part);
      p += nb;
    }
    r0 = r1;
  }
}
#endif

INLINE void run_all(const qsrc *s, const qout *o, int64_t q0) {
  cuvil_qxe buf[CUVIL_QKC / CUVIL_QKR * CUVIL_QXG];
  int32_t part[QMC * CUVIL_QNR];
  qblock b;
#if defined(CUVIL_QPAIRS)
  if (!s->is_gemm && s->ow >= QROW_MIN) {
    run_rows(s, o, q0, buf, part);
    return;
  }
#endif
  if (!s->is_gemm && s->ow >= CUVIL_QNR) {
    for (int64_t r0 = q0; r0 < o->positions;) {
      const int64_t row_end = (r0 / s->ow + 1) * s->ow;
      const int64_t r1 = row_end < o->positions ? row_end : o->positions;
      const int64_t short_part = r1 - r0 < CUVIL_QNR;
      for (int64_t p = r0; p < r1; p += CUVIL_QNR) {
        block_init(s, &b,
                   short_part || p + CUVIL_QNR <= r1 ? p : r1 - CUVIL_QNR,
                   short_part ? r1 - r0 : CUVIL_QNR);
        run_block(s, o, &b, buf, part);
      }
      r0 = r1;
    }
    return;
  }
  for (int64_t p0 = q0; p0 < o->positions; p0 += CUVIL_QNR) {
    block_init(s, &b, p0,
               o->positions - p0 < CUVIL_QNR ? o->positions - p0 : CUVIL_QNR);
    run_block(s, o, &b, buf, part);
  }
}

#include "qpacked_pad.h"

/* The flip into the kernel's domain of x_type activations (whose
 * correction the bias holds: cuvil_qpack_corr) and the form of the m
 * channels' requantization (qout.lanes32) for reductions of k steps: an
 * accumulator is at most |bias| + k 2^15 in magnitude (|x| <= 255 or 128
 * in either domain, |w| <= 128). */
#if defined(CUVIL_QPAIRS)
#define QTF_FORM 1
#else
#define QTF_FORM CUVIL_QRQ_TF
#endif

INLINE void domain(qsrc *s, qout *o, int64_t x_type, int64_t x_zp,
                   const int32_t *bias, const int32_t *rq, int64_t m,
                   int64_t k) {
  /* (Only AArch64 and RV64 have a tie-free form: elsewhere tf stays 0.) */
  int in32 = 1, tf = QTF_FORM;
  for (int64_t i = 0; i < m; ++i) {
    in32 &= rq[2 * i + 1] >= CUVIL_QRQ_SHIFT_MIN &&
            rq[2 * i + 1] <= CUVIL_QRQ_SHIFT_MAX;
    if (QTF_FORM) {
      const int64_t b = bias[i] < 0 ? -(int64_t)bias[i] : bias[i];
      tf &= cuvil_qrq_tiefree(b + k * 32768, rq[2 * i], rq[2 * i + 1]);
    }
  }
  o->lanes32 = in32 ? 1 + tf : 0;
  s->flip = cuvil_qpack_corr(CUVIL_QX_UNSIGNED, x_type) ? 0x80 : 0;
  s->pad = (uint8_t)x_zp;
}

void cuvil_k_qconv2d_packed_s8(const void *x, const int8_t *wp,
                               const int32_t *bias, const int32_t *rq, void *y,
                               const int64_t *geom, int64_t x_type,
                               int64_t x_zp, int64_t y_type, int64_t y_zp,
                               int64_t y_lo, int64_t y_hi, int64_t p0,
                               int64_t p1) {
  const int64_t group = geom[CUVIL_QCONV_GROUP], m = geom[CUVIL_QCONV_M];
  const int64_t c = geom[CUVIL_QCONV_C], h = geom[CUVIL_QCONV_H],
                wd = geom[CUVIL_QCONV_W];
  const int64_t kh = geom[CUVIL_QCONV_KH], kw = geom[CUVIL_QCONV_KW];
  const int64_t oh = geom[CUVIL_QCONV_OH], ow = geom[CUVIL_QCONV_OW];
  const int64_t cg = c / group, mg = m / group, k = cg * kh * kw;
  const int64_t kp = (k + CUVIL_QKR - 1) / CUVIL_QKR * CUVIL_QKR;
  qsrc s = {0,
            0,
            cg,
            h,
            wd,
            kh,
            kw,
            ow,
            geom[CUVIL_QCONV_SH],
            geom[CUVIL_QCONV_SW],
            geom[CUVIL_QCONV_DH],
            geom[CUVIL_QCONV_DW],
            geom[CUVIL_QCONV_PAD_TOP],
            geom[CUVIL_QCONV_PAD_LEFT],
            k,
            0,
            0};
  if (kh == 1 && kw == 1 && s.sh == 1 && s.sw == 1 && s.pt == 0 && s.pl == 0 &&
      oh == h && ow == wd) {
    /* A pointwise convolution: the image as one row of h * w pixels, so
     * that blocks run across the rows without the general gathering. */
    s.h = 1;
    s.wd = s.ow = h * wd;
  }
  /* The range, in positions of a plane (o.positions: its end). */
  p0 = p0 > 0 ? p0 : 0;
  p1 = p1 < oh * ow ? p1 : oh * ow;
  if (p0 >= p1)
    return;
  qout o = {.y_type = y_type,
            .m = mg,
            .positions = p1,
            .ch_stride = oh * ow,
            .pos_stride = 1,
            .y_zp = (int32_t)y_zp,
            .y_lo = (int32_t)y_lo,
            .y_hi = (int32_t)y_hi};
  domain(&s, &o, x_type, x_zp, bias, rq, m, k);
  if (qpad_takes(&s, oh)) {
    run_padded(s, o, (const uint8_t *)x, wp, bias, rq, y, geom, x_zp, p0);
    return;
  }
  for (int64_t b = 0; b < geom[CUVIL_QCONV_N]; ++b)
    for (int64_t g = 0; g < group; ++g) {
      s.x = (const uint8_t *)x + (b * c + g * cg) * h * wd;
      o.wp = wp + g * mg * kp;
      o.bias = bias + g * mg;
      o.rq = rq + 2 * g * mg;
      o.y = (uint8_t *)y + (b * m + g * mg) * oh * ow;
      run_all(&s, &o, p0);
    }
}

void cuvil_k_qgemm_packed_s8(const void *a, const int8_t *wp,
                             const int32_t *bias, const int32_t *rq, void *y,
                             int64_t m, int64_t n, int64_t k, int64_t a_type,
                             int64_t a_zp, int64_t y_type, int64_t y_zp,
                             int64_t y_lo, int64_t y_hi) {
  /* No padding: a_zp only matters through bias. */
  qsrc s = {(const uint8_t *)a, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, k, 0, 0};
  qout o = {.wp = wp,
            .bias = bias,
            .rq = rq,
            .y = y,
            .y_type = y_type,
            .m = n,
            .positions = m,
            .ch_stride = 1,
            .pos_stride = n,
            .y_zp = (int32_t)y_zp,
            .y_lo = (int32_t)y_lo,
            .y_hi = (int32_t)y_hi};
  domain(&s, &o, a_type, a_zp, bias, rq, n, k);
  run_all(&s, &o, 0);
}

#include "qdirect.h"
