/* The gathering stage of the integer packed kernels (qpacked.c; included
 * by it only, after its STAGE and INLINE): a block of CUVIL_QNR output
 * positions' activations, tile by tile of the reduction, into the buffer
 * the panels read (cuvil_qx_pack's layout, the kernel's domain). */
#ifndef CUVIL_KERNELS_OPT_QGATHER_H
#define CUVIL_KERNELS_OPT_QGATHER_H

/* The source of the gathered activations: a convolution's input image (of
 * one group) or the rows of a matrix product's A. */
typedef struct {
  const uint8_t *x;
  int64_t is_gemm;
  int64_t c, h, wd, kh, kw, ow, sh, sw, dh, dw, pt, pl; /* convolution */
  int64_t k;                                            /* both: steps */
  uint8_t flip, pad; /* xor into the kernel's domain; the padding byte */
} qsrc;

/* A block of output positions [p0, p0 + nb), in runs along output rows (a
 * block spans several rows when they are short): run i covers the block's
 * positions [j0[i], j0[i + 1]), and its first window's origin is the input
 * position (iy[i], ix[i]). Unused by a matrix product. */
typedef struct {
  int64_t p0, nb, runs;
  int64_t j0[CUVIL_QNR + 1], iy[CUVIL_QNR], ix[CUVIL_QNR];
} qblock;

/* Window taps whose input offsets gather_run tabulates (7x7). */
#define QTAPS 49

INLINE void block_init(const qsrc *s, qblock *b, int64_t p0, int64_t nb) {
  b->p0 = p0;
  b->nb = nb;
  b->runs = 0;
  if (s->is_gemm)
    return;
  for (int64_t j = 0; j < nb;) {
    const int64_t oy = (p0 + j) / s->ow, ox = (p0 + j) % s->ow;
    b->j0[b->runs] = j;
    b->iy[b->runs] = oy * s->sh - s->pt;
    b->ix[b->runs] = ox * s->sw - s->pl;
    ++b->runs;
    j += s->ow - ox < nb - j ? s->ow - ox : nb - j;
  }
  b->j0[b->runs] = nb;
}

INLINE cuvil_qrow row_splat(uint8_t v) { return (cuvil_qrow){0} + v; }

/* Step (ci, ky, kx) (a window tap) of the block's positions, for the
 * blocks gather_run does not take (across rows, kernels of more than
 * QTAPS taps). */
INLINE cuvil_qrow conv_step(const qsrc *s, const qblock *b, int64_t ci,
                            int64_t ky, int64_t kx) {
  cuvil_qrow row = row_splat(s->pad);
  const uint8_t *xc = s->x + ci * s->h * s->wd;
  for (int64_t i = 0; i < b->runs; ++i) {
    const int64_t iy = b->iy[i] + ky * s->dh, ix = b->ix[i] + kx * s->dw;
    if (iy < 0 || iy >= s->h)
      continue; /* a padding row */
    const uint8_t *xr = xc + iy * s->wd;
    const int64_t j0 = b->j0[i], n = b->j0[i + 1] - j0;
    if (n == CUVIL_QNR && s->sw == 1 && ix >= 0 && ix + CUVIL_QNR <= s->wd) {
      /* The block is one window row inside the input. */
      __builtin_memcpy(&row, xr + ix, CUVIL_QNR);
    } else if (ix >= 0 && ix + (n - 1) * s->sw < s->wd) {
      for (int64_t j = 0; j < n; ++j)
        row[j0 + j] = xr[ix + j * s->sw];
    } else {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t at = ix + j * s->sw;
        if (at >= 0 && at < s->wd)
          row[j0 + j] = xr[at];
      }
    }
  }
  return row ^ s->flip;
}

#if defined(CUVIL_QPAIRS)
/* The lanes of block b's words (past its positions: any source byte). */
#define QLANES(b) (QTRI(b) ? 3 * QNW(b) : 2 * CUVIL_QNA)
/* What turns the bytes of a source side by side (cuvil_qbytes) into a
 * word of int8 activations: xor by flip ^ 0x80 in each lane (to u = x +
 * 128), then less 128 in each. */
#define QWORD_XOR(s, tri) (((s)->flip ^ 0x80) * CUVIL_QUNIT(tri))
#define QWORD_SUB(tri) (128 * CUVIL_QUNIT(tri))

/* The word of int8 activations from source bytes b0, b1 (and b2, read
 * only for triples: tri) xor'd by flip (QWORD_XOR). */
#define QWORD(b0, b1, b2, tri, flip)                                           \
  ((cuvil_qbytes((b0), (b1), (tri) ? (b2) : 0, (tri)) ^ (flip)) -              \
   QWORD_SUB(tri))

/* gather_run's steps on one-lane targets (one step a group): the words
 * straight from the bytes, not through 16-byte vector rows (lowered to
 * byte inserts and extracts); nw words of triples (tri) or pairs, lane l
 * of word a position a + l nw, the bytes xor'd by flip (QWORD_XOR: a
 * constant 0 for uint8 sources). Steps from (ci, tap) on, with
 * gather_run's tap tables. */
INLINE void run_words(const qsrc *s, const int64_t *off, const int32_t *lo,
                      const int32_t *hi, const uint8_t *whole, int64_t ci,
                      int64_t tap, int64_t kc, cuvil_qxe *buf, int tri, int nw,
                      uint64_t flip) {
  /* Locals: the stores to buf could alias *s. */
  const int64_t taps = s->kh * s->kw, hw = s->h * s->wd, sw = s->sw, c = s->c;
  const uint8_t pad = s->pad;
  const uint8_t *xc = s->x + ci * hw;
  for (int64_t q = 0; q < kc; ++q, buf += CUVIL_QXG) {
    const uint8_t *xp = xc + off[tap];
    if (ci >= c) {
      for (int a = 0; a < nw; ++a)
        buf[a] = 0;
    } else if (whole[tap] == 1) {
      CUVIL_UNROLL
      for (int a = 0; a < nw; ++a)
        buf[a] = QWORD(xp[a], xp[a + nw], xp[a + 2 * nw], tri, flip);
    } else if (whole[tap] == 2) {
      CUVIL_UNROLL
      for (int a = 0; a < nw; ++a)
        buf[a] =
            QWORD(xp[2 * a], xp[2 * (a + nw)], xp[2 * (a + 2 * nw)], tri, flip);
    } else {
      uint8_t lanes[CUVIL_QNR];
      for (int j = 0; j < CUVIL_QNR; ++j)
        lanes[j] = j >= lo[tap] && j < hi[tap] ? xp[j * sw] : pad;
      for (int a = 0; a < nw; ++a)
        buf[a] = QWORD(lanes[a], lanes[a + nw], lanes[a + 2 * nw], tri, flip);
    }
    if (++tap == taps) {
      tap = 0;
      ++ci;
      xc += hw;
    }
  }
}
#else
#define QLANES(b) CUVIL_QNR
#endif

/* gather for a block within one output row (b->runs == 1) and a kernel of
 * at most QTAPS taps: per tap, the input offset of lane 0 and the lanes
 * [lo, hi) that read the input (the others read the padding) are
 * tabulated once, so a step inside the input (all lanes, stride 1) is one
 * copy of CUVIL_QNR bytes and a few instructions around it. RV64: lanes
 * past a short block (QLANES) read on along the input row, when that stays
 * in the plane. */
STAGE void gather_run(const qsrc *s, const qblock *b, int64_t k0, int64_t kc,
                      cuvil_qxe *buf) {
  const int64_t taps = s->kh * s->kw, hw = s->h * s->wd;
  int64_t off[QTAPS];
  int32_t lo[QTAPS], hi[QTAPS];
  uint8_t whole[QTAPS]; /* all lanes, stride 1 or 2: one copy (and a shuffle) */
  for (int64_t t = 0; t < taps; ++t) {
    const int64_t iy = b->iy[0] + t / s->kw * s->dh,
                  ix = b->ix[0] + t % s->kw * s->dw;
    off[t] = iy * s->wd + ix;
    lo[t] = (int32_t)first_inside(ix, s->sw);
    hi[t] =
        iy < 0 || iy >= s->h ? 0 : (int32_t)end_inside(ix, s->sw, s->wd, b->nb);
    whole[t] =
        lo[t] == 0 && hi[t] == b->nb &&
                (b->nb == QLANES(b) || off[t] + (QLANES(b) - 1) * s->sw < hw) &&
                (s->sw == 1 || s->sw == 2)
            ? (uint8_t)s->sw
            : 0;
  }
  int64_t ci = k0 / taps, tap = k0 % taps;
#if defined(CUVIL_QPAIRS)
  const int fl = s->flip != 0x80; /* 0: a uint8 source */
  const int tri = QTRI(b), nw = (int)QNW(b);
  /* The word counts as constants (with nw a variable, a step of a row's
   * last 8 positions cost some 65 instructions more). */
  if (tri && nw == 4) {
    if (fl)
      run_words(s, off, lo, hi, whole, ci, tap, kc, buf, 1, 4, QWORD_XOR(s, 1));
    else
      run_words(s, off, lo, hi, whole, ci, tap, kc, buf, 1, 4, 0);
  } else if (tri && nw == 3) {
    run_words(s, off, lo, hi, whole, ci, tap, kc, buf, 1, 3, QWORD_XOR(s, 1));
  } else if (tri && nw == 2) {
    run_words(s, off, lo, hi, whole, ci, tap, kc, buf, 1, 2, QWORD_XOR(s, 1));
  } else if (tri) {
    run_words(s, off, lo, hi, whole, ci, tap, kc, buf, 1, 1, QWORD_XOR(s, 1));
  } else {
    run_words(s, off, lo, hi, whole, ci, tap, kc, buf, 0, CUVIL_QNA,
              QWORD_XOR(s, 0));
  }
#else
  const int64_t sw = s->sw;
  const uint8_t pad = s->pad;
  const uint8_t *xc = s->x + ci * hw;
  const cuvil_qrow flip = row_splat(s->flip);
  cuvil_qrow g[CUVIL_QKR];
  for (int64_t q = 0; q < kc / CUVIL_QKR; ++q) {
    CUVIL_UNROLL
    for (int r = 0; r < CUVIL_QKR; ++r) {
      cuvil_qrow row = row_splat(0);
      if (ci < s->c) {
        const uint8_t *xp = xc + off[tap];
        if (whole[tap] == 1) {
          __builtin_memcpy(&row, xp, CUVIL_QNR);
        } else if (whole[tap] == 2) {
          /* The even bytes of 2 CUVIL_QNR - 1 (a deinterleaving shuffle). */
          cuvil_qrow2 pair = {0};
          __builtin_memcpy(&pair, xp, 2 * CUVIL_QNR - 1);
          row = __builtin_shufflevector(pair, pair, 0, 2, 4, 6, 8, 10, 12, 14,
                                        16, 18, 20, 22, 24, 26, 28, 30);
        } else {
          /* Lane by lane through memory: a vector lane at a variable index
           * is a store and a reload of the whole vector each. */
          const cuvil_qrow pads = row_splat(pad);
          uint8_t lanes[sizeof row];
          __builtin_memcpy(lanes, &pads, sizeof row);
          for (int64_t j = lo[tap]; j < hi[tap]; ++j)
            lanes[j] = xp[j * sw];
          __builtin_memcpy(&row, lanes, sizeof row);
        }
        row ^= flip;
      }
      g[r] = row;
      if (++tap == taps) {
        tap = 0;
        ++ci;
        xc += hw;
      }
    }
    cuvil_qx_pack(buf + q * CUVIL_QXG, g, QTRI(b), (int)QNW(b));
  }
#endif
}

/* Advances step (ci, ky, kx) of a convolution's reduction by one: 1 when
 * the next step starts another window row. */
INLINE int step_next(const qsrc *s, int64_t *ci, int64_t *ky, int64_t *kx) {
  if (++*kx < s->kw)
    return 0;
  *kx = 0;
  if (++*ky == s->kh) {
    *ky = 0;
    ++*ci;
  }
  return 1;
}

#if !defined(CUVIL_QPAIRS)
/* The most runs (output rows) of a block gather_seg takes. */
#define SEG_RUNS 4
/* The widest window row it takes. */
#define SEG_TAPS 5
/* How a step's row comes from its run's segment. By default, one load at
 * byte kx of the segment stored on the stack: the fewest instructions.
 * On x86 that load stalled (a store forwarded to a load it only partly
 * covers; perf: half of gather_seg's time on host resnet8_int8), so a
 * single run's kw rows are made by constant shifts when its segment is
 * loaded and kept whole (on a78: 2.8% more instructions). */
#if defined(__x86_64__)
#define SEG_SHIFTED 1
#else
#define SEG_SHIFTED 0
#endif

/* The bytes of seg from k on, then pads' (k a constant once unrolled:
 * one byte-shifting shuffle). */
INLINE cuvil_qrow seg_shift(cuvil_qrow seg, cuvil_qrow pads, int k) {
  switch (k) {
  case 1:
    return __builtin_shufflevector(seg, pads, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                   12, 13, 14, 15, 16);
  case 2:
    return __builtin_shufflevector(seg, pads, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                   12, 13, 14, 15, 16, 17);
  case 3:
    return __builtin_shufflevector(seg, pads, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                   13, 14, 15, 16, 17, 18);
  case 4:
    return __builtin_shufflevector(seg, pads, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                   14, 15, 16, 17, 18, 19);
  }
  return seg;
}

/* Whether gather_seg takes block b: a whole block, stride and dilation 1
 * along the rows, and a window row of several taps that fits one vector
 * with the block (3x3 and 5x5 convolutions; a pointwise one gains nothing
 * from sharing segments, and one-lane targets gather step pairs, see
 * gather_run). */
INLINE int seg_takes(const qsrc *s, const qblock *b) {
  return !s->is_gemm && b->runs <= SEG_RUNS && b->nb == CUVIL_QNR &&
         s->sw == 1 && s->dw == 1 && s->kw > 1 && s->kw <= SEG_TAPS &&
         CUVIL_QNR + s->kw - 1 <= (int64_t)sizeof(cuvil_qrow);
}

/* gather_seg's steps for `runs` runs (a constant 1 for blocks within one
 * output row: no lane masks). */
INLINE void seg_steps(const qsrc *s, const qblock *b, int64_t k0, int64_t kc,
                      cuvil_qxe *buf, int64_t runs) {
  const int64_t taps = s->kh * s->kw, hw = s->h * s->wd;
  const uint8_t *x_end = s->x + s->c * hw;
  const cuvil_qrow flip = row_splat(s->flip), pads = row_splat(s->pad) ^ flip;
  /* Run i: its segment's bytes inside the input row, and its lanes. */
  cuvil_qrow inside[SEG_RUNS], lanes[SEG_RUNS];
  /* Run i's segment at byte j0[i] of seg[i] (so that a load at kx puts
   * window column j + kx of the run in lane j); padding around it. */
  cuvil_qrow seg[SEG_RUNS][3];
  for (int64_t i = 0; i < runs; ++i) {
    for (int j = 0; j < (int)sizeof inside[i]; ++j) {
      inside[i][j] = b->ix[i] + j >= 0 && b->ix[i] + j < s->wd ? 0xff : 0;
      lanes[i][j] = j >= b->j0[i] && j < b->j0[i + 1] ? 0xff : 0;
    }
    seg[i][0] = seg[i][1] = seg[i][2] = pads;
  }
  int64_t ci = k0 / taps, ky = k0 % taps / s->kw, kx = k0 % s->kw;
  int fresh = 1; /* the segments of (ci, ky) are still to be made */
#if SEG_SHIFTED
  cuvil_qrow one[SEG_TAPS]; /* a single run's rows, tap by tap */
#endif
  cuvil_qrow g[CUVIL_QKR];
  for (int64_t q = 0; q < kc / CUVIL_QKR; ++q) {
    CUVIL_UNROLL
    for (int r = 0; r < CUVIL_QKR; ++r) {
      if (ci >= s->c) {
        g[r] = row_splat(0);
        continue;
      }
      if (fresh) {
        for (int64_t i = 0; i < runs; ++i) {
          const int64_t iy = b->iy[i] + ky * s->dh;
          cuvil_qrow v = pads;
          if (iy >= 0 && iy < s->h) {
            const uint8_t *p = s->x + ci * hw + iy * s->wd + b->ix[i];
            if (p >= s->x && p + sizeof v <= x_end) {
              __builtin_memcpy(&v, p, sizeof v);
            } else {
              uint8_t bytes[sizeof v];
              for (int j = 0; j < (int)sizeof v; ++j)
                bytes[j] = inside[i][j] ? p[j] : 0;
              __builtin_memcpy(&v, bytes, sizeof v);
            }
            v = ((v ^ flip) & inside[i]) | (pads & ~inside[i]);
          }
#if SEG_SHIFTED
          if (runs == 1) {
            CUVIL_UNROLL
            for (int k = 0; k < SEG_TAPS; ++k)
              if (k < s->kw)
                one[k] = seg_shift(v, pads, k);
            continue;
          }
#endif
          __builtin_memcpy((uint8_t *)seg[i] + b->j0[i], &v, sizeof v);
        }
        fresh = 0;
      }
      if (runs == 1) {
#if SEG_SHIFTED
        g[r] = one[kx];
#else
        __builtin_memcpy(&g[r], (const uint8_t *)seg[0] + kx, sizeof g[r]);
#endif
      } else {
        g[r] = row_splat(0);
        for (int64_t i = 0; i < runs; ++i) {
          cuvil_qrow t;
          __builtin_memcpy(&t, (const uint8_t *)seg[i] + kx, sizeof t);
          g[r] |= t & lanes[i];
        }
      }
      fresh = step_next(s, &ci, &ky, &kx);
    }
    cuvil_qx_pack(buf + q * CUVIL_QXG, g, QTRI(b), (int)QNW(b));
  }
}

/* Tiles for the blocks seg_takes: the kw steps of one input row (ci, ky)
 * read, in each run of the block, one segment of sizeof(cuvil_qrow) input
 * bytes from the run's first window column, shifted by kx. So a row's
 * segment is loaded once per run (padding merged in by a mask made once
 * per block), and a step is one load of it from the stack at offset kx
 * (and a lane mask per run when the block spans rows), where gather_run
 * took some 20 instructions a step and gather's conv_step more. Segments
 * that would read outside the group's planes are made byte by byte. */
STAGE void gather_seg(const qsrc *s, const qblock *b, int64_t k0, int64_t kc,
                      cuvil_qxe *buf) {
  if (b->runs == 1)
    seg_steps(s, b, k0, kc, buf, 1);
  else
    seg_steps(s, b, k0, kc, buf, b->runs);
}
#endif

/* Whether gather_lanes takes block b: a window of at most QTAPS taps that
 * every position reads inside the input (a 1x1 projection of stride 2, or
 * any window on an image padded by the caller: qpad_copy). */
INLINE int lanes_takes(const qsrc *s, const qblock *b) {
  if (s->is_gemm || s->kh * s->kw > QTAPS)
    return 0;
  const int64_t ky = (s->kh - 1) * s->dh, kx = (s->kw - 1) * s->dw;
  for (int64_t i = 0; i < b->runs; ++i) {
    const int64_t n = b->j0[i + 1] - b->j0[i];
    if (b->iy[i] < 0 || b->iy[i] + ky >= s->h || b->ix[i] < 0 ||
        b->ix[i] + (n - 1) * s->sw + kx >= s->wd)
      return 0;
  }
  return 1;
}

#if defined(CUVIL_QPAIRS)
/* gather_lanes' steps on one-lane targets: nw words of triples (tri) or
 * pairs, lane l of word a position a + l nw (whole blocks: constants). */
INLINE void lanes_words(const qsrc *s, const int64_t *off, const int64_t *toff,
                        int64_t ci, int64_t tap, int64_t kc, cuvil_qxe *buf,
                        int tri, int nw) {
  const uint64_t flip = QWORD_XOR(s, tri);
  const int64_t taps = s->kh * s->kw, hw = s->h * s->wd;
  const uint8_t *xc = s->x + ci * hw;
  for (int64_t q = 0; q < kc; ++q, buf += CUVIL_QXG) {
    if (ci >= s->c) {
      for (int a = 0; a < nw; ++a)
        buf[a] = 0;
    } else {
      const uint8_t *xt = xc + toff[tap];
      CUVIL_UNROLL
      for (int a = 0; a < nw; ++a)
        buf[a] =
            QWORD(xt[off[a]], xt[off[a + nw]], xt[off[a + 2 * nw]], tri, flip);
    }
    if (++tap == taps) {
      tap = 0;
      ++ci;
      xc += hw;
    }
  }
}
#endif

/* gather for the blocks lanes_takes, across output rows: each lane's
 * window origin and each tap's offset in the window are tabulated once
 * (lanes past the block repeat its last one), so a step is one load per
 * lane (a lane insert on vector targets). The general gather took some
 * 250 instructions a step on a78 for DS-CNN's first layer (blocks of 12
 * positions over rows of 5) and 480 a position for ResNet-8's stride-2
 * projection. */
STAGE void gather_lanes(const qsrc *s, const qblock *b, int64_t k0, int64_t kc,
                        cuvil_qxe *buf) {
  int64_t off[CUVIL_QNR];
  for (int64_t i = 0; i < b->runs; ++i)
    for (int64_t j = b->j0[i]; j < b->j0[i + 1]; ++j)
      off[j] = b->iy[i] * s->wd + b->ix[i] + (j - b->j0[i]) * s->sw;
  for (int64_t j = b->nb; j < CUVIL_QNR; ++j)
    off[j] = off[b->nb - 1];
  const int64_t taps = s->kh * s->kw;
  int64_t toff[QTAPS];
  for (int64_t t = 0; t < taps; ++t)
    toff[t] = t / s->kw * s->dh * s->wd + t % s->kw * s->dw;
  int64_t ci = k0 / taps, tap = k0 % taps;
#if defined(CUVIL_QPAIRS)
  if (QTRI(b) && QNW(b) == 4)
    lanes_words(s, off, toff, ci, tap, kc, buf, 1, 4);
  else
    lanes_words(s, off, toff, ci, tap, kc, buf, QTRI(b), (int)QNW(b));
#else
  const int64_t hw = s->h * s->wd;
  const uint8_t *xc = s->x + ci * hw;
  const cuvil_qrow flip = row_splat(s->flip);
  cuvil_qrow g[CUVIL_QKR];
  for (int64_t q = 0; q < kc / CUVIL_QKR; ++q) {
    CUVIL_UNROLL
    for (int r = 0; r < CUVIL_QKR; ++r) {
      cuvil_qrow row = row_splat(0);
      if (ci < s->c) {
        const uint8_t *xt = xc + toff[tap];
        CUVIL_UNROLL
        for (int j = 0; j < CUVIL_QNR; ++j)
          row[j] = xt[off[j]];
        row ^= flip;
      }
      g[r] = row;
      if (++tap == taps) {
        tap = 0;
        ++ci;
        xc += hw;
      }
    }
    cuvil_qx_pack(buf + q * CUVIL_QXG, g, QTRI(b), (int)QNW(b));
  }
#endif
}

/* Steps [k0, k0 + kc) (kc a multiple of CUVIL_QKR; steps from K on read 0,
 * against zero weights) of block b into buf, group by group (gather_lanes
 * where it takes the block). */
STAGE void gather(const qsrc *s, const qblock *b, int64_t k0, int64_t kc,
                  cuvil_qxe *buf) {
  cuvil_qrow g[CUVIL_QKR];
#if defined(CUVIL_QPAIRS)
  /* One row (a fully connected layer at batch 1), for run_row: step pairs
   * x[t + 1] + x[t] * 2^32 of x + 128 (t = k0, k0 + 2, ...; an odd last
   * step alone, as x[t] * 2^32), then the sum of the paired steps. Gathered and
   * packed element-wise as below, a step took some 100 instructions. */
  if (s->is_gemm && b->nb == 1) {
    const uint8_t *xr = s->x + b->p0 * s->k;
    uint64_t sum = 0;
    for (int64_t t = k0; t < k0 + kc; t += 2) {
      /* x + 128 (0..255): run_row's digits are unsigned. */
      const uint8_t u = s->flip ^ 0x80;
      const uint64_t x0 = t < s->k ? (uint8_t)(xr[t] ^ u) : 0;
      const uint64_t x1 =
          t + 1 < k0 + kc && t + 1 < s->k ? (uint8_t)(xr[t + 1] ^ u) : 0;
      buf[(t - k0) / 2] = x1 + (x0 << 32);
      sum += t + 1 < k0 + kc ? x0 + x1 : 0;
    }
    buf[(kc + 1) / 2] = sum;
    return;
  }
#endif
  if (lanes_takes(s, b)) {
    gather_lanes(s, b, k0, kc, buf);
    return;
  }
  if (s->is_gemm) {
    for (int64_t q = 0; q < kc / CUVIL_QKR; ++q) {
      for (int r = 0; r < CUVIL_QKR; ++r) {
        const int64_t t = k0 + q * CUVIL_QKR + r;
        g[r] = row_splat(0);
        if (t < s->k)
          for (int64_t j = 0; j < b->nb; ++j)
            g[r][j] = s->x[(b->p0 + j) * s->k + t] ^ s->flip;
      }
      cuvil_qx_pack(buf + q * CUVIL_QXG, g, QTRI(b), (int)QNW(b));
    }
    return;
  }
  /* The tap of step k0, then stepped along. */
  const int64_t taps = s->kh * s->kw;
  int64_t ci = k0 / taps, ky = k0 % taps / s->kw, kx = k0 % s->kw;
  for (int64_t q = 0; q < kc / CUVIL_QKR; ++q) {
    for (int r = 0; r < CUVIL_QKR; ++r) {
      g[r] = ci < s->c ? conv_step(s, b, ci, ky, kx) : row_splat(0);
      step_next(s, &ci, &ky, &kx);
    }
    cuvil_qx_pack(buf + q * CUVIL_QXG, g, QTRI(b), (int)QNW(b));
  }
}

/* Tile [k0, k0 + kc) of block b into buf, by the fastest gathering that
 * takes the block. */
INLINE void gather_tile(const qsrc *s, const qblock *b, int64_t k0, int64_t kc,
                        cuvil_qxe *buf) {
#if !defined(CUVIL_QPAIRS)
  if (seg_takes(s, b)) {
    gather_seg(s, b, k0, kc, buf);
    return;
  }
#endif
  if (!s->is_gemm && b->runs == 1 && s->kh * s->kw <= QTAPS)
    gather_run(s, b, k0, kc, buf);
  else
    gather(s, b, k0, kc, buf);
}

#endif
