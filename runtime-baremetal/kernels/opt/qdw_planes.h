/* The plane form of the INT8 depthwise convolution (qdepthwise.c): a
 * channel plane at a time, in bands of QDW_R output rows whose input rows
 * are widened into the stack lines (qdw_lines.h), tiles of QDW_R rows x
 * QDW_NV vectors; the specialised kernels of the common windows and the
 * general one. Included by qdepthwise.c only, after its element types and
 * helpers and qdw_lines.h. */
#ifndef CUVIL_KERNELS_OPT_QDW_PLANES_H
#define CUVIL_KERNELS_OPT_QDW_PLANES_H

/* Tap (ky, kx) of a tile (see qdw_tile), for the rolled tap loops. */
INLINE void qdw_tap(qdw_acc acc[QDW_R][QDW_NV], const qdw_shape *s,
                    const qdw_el *line, int64_t p, int64_t col,
                    const qdw_taps taps[QDW_TAP_VECTORS], int64_t ky,
                    int64_t kx) {
  const int64_t off = kx * s->dw;
  const qdw_el *ph = line + (ky * s->dh * s->sw + off % s->sw) * qdw_stride(p);
  CUVIL_UNROLL
  for (int r = 0; r < QDW_R; ++r)
    CUVIL_UNROLL
  for (int v = 0; v < QDW_NV; ++v)
    qdw_mac(&acc[r][v],
            qdw_at(ph + r * s->sh * s->sw * qdw_stride(p), p,
                   col + off / s->sw + v * QDW_VL),
            taps, ky * s->kw + kx);
}

/* One tile: QDW_R output rows from y (rows of them stored), nv * QDW_VL
 * columns (cols of them stored; nv = QDW_NV unless unrolled); the tile's
 * first output column reads element col of every phase. With spill, the
 * whole vectors may be stored even when cols is short: what they write
 * past a row's end is output that is stored later (see qdw_planes). */
INLINE void qdw_tile(const qdw_shape *s, const qdw_el *line, int64_t p,
                     int64_t col, const qdw_taps taps[QDW_TAP_VECTORS],
                     int32_t bias, const qdw_rq *q, uint8_t *y, int64_t rows,
                     int64_t cols, int spill, int unrolled, int nv) {
  qdw_acc acc[QDW_R][QDW_NV];
  CUVIL_UNROLL
  for (int r = 0; r < QDW_R; ++r)
    CUVIL_UNROLL
  for (int v = 0; v < QDW_NV; ++v)
    acc[r][v] = qdw_acc_init(bias);
  /* The tap loops unroll in the specialised kernels only (unroll
   * pragmas on loops of unknown count would fail). */
  if (unrolled) {
#if defined(__aarch64__)
    /* The taps anew per tile, opaque to the optimiser: otherwise it hoists
     * a broadcast of every tap out of the tile loop (they are invariant),
     * nine registers for 3x3 where two do, and spills accumulators. */
    qdw_taps tv[QDW_TAP_VECTORS];
    CUVIL_UNROLL
    for (int k = 0; k < QDW_TAP_VECTORS; ++k) {
      tv[k] = taps[k];
      if (k * 8 < s->kh * s->kw)
        __asm__ volatile("" : "+w"(tv[k]));
    }
    taps = tv;
#endif
    /* Line by line (as depthwise.c's dw_tile): each input vector is loaded
     * once and goes at once into every output row whose window covers
     * that line, so only the accumulators, the weights and an input vector
     * are live (tap by tap, the optimiser hoisted all loads and spilled). */
    CUVIL_UNROLL
    for (int64_t i = 0; i < (QDW_R - 1) * s->sh + s->kh; ++i)
      CUVIL_UNROLL
    for (int64_t kx = 0; kx < s->kw; ++kx)
      CUVIL_UNROLL
    for (int v = 0; v < nv; ++v) {
      const qdw_x xv = qdw_at(line + (i * s->sw + kx % s->sw) * qdw_stride(p),
                              p, col + kx / s->sw + v * QDW_VL);
      CUVIL_UNROLL
      for (int r = 0; r < QDW_R; ++r) {
        const int64_t ky = i - r * s->sh;
        if (ky >= 0 && ky < s->kh)
          qdw_mac(&acc[r][v], xv, taps, ky * s->kw + kx);
      }
    }
  } else {
    for (int64_t ky = 0; ky < s->kh; ++ky)
      for (int64_t kx = 0; kx < s->kw; ++kx)
        qdw_tap(acc, s, line, p, col, taps, ky, kx);
  }
  /* Whole vectors to y with no branches: a condition per store splits the
   * tile into blocks, and the optimiser then hoisted the next rows' loads
   * above the stores and spilled them. A partial tile goes through a
   * scratch tile first. */
  uint8_t part[QDW_R][QDW_TW];
  const int whole = rows == QDW_R && (cols == nv * QDW_VL || spill);
  uint8_t *dst = whole ? y : &part[0][0];
  const int64_t ds = whole ? s->ow : QDW_TW;
  CUVIL_UNROLL
  for (int r = 0; r < QDW_R; ++r)
    CUVIL_UNROLL
  for (int v = 0; v < nv; ++v) {
    const qdw_v8 o = qdw_requant(acc[r][v], q);
    __builtin_memcpy(dst + r * ds + v * QDW_VL, &o, sizeof o);
  }
  if (whole)
    return;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t l = 0; l < cols; ++l)
      y[r * s->ow + l] = part[r][l];
}

/* Elements of a phase copy for `cols` output columns: their whole tiles
 * plus the window's reach, even on one-lane targets (pairs stay aligned). */
INLINE int64_t qdw_phase_len(int64_t cols, int64_t halo) {
  const int64_t n = (cols + QDW_TW - 1) / QDW_TW * QDW_TW + halo;
  return (n + QDW_COPIES - 1) / QDW_COPIES * QDW_COPIES;
}

/* Every plane: bands of QDW_R output rows, column chunks of a->chunk;
 * each (band, chunk) fills its lines, then runs its tiles. */
INLINE void qdw_planes(const qdw_shape *s, const qdw_args *a, int unrolled,
                       int nv) {
  const int64_t lines = (QDW_R - 1) * s->sh + (s->kh - 1) * s->dh + 1;
  const int64_t p = qdw_phase_len(a->chunk, (s->kw - 1) * s->dw / s->sw);
  /* One-lane targets move int8 inputs to uint8 (see qdw_x). */
  const int32_t xoff =
      CUVIL_SCALAR_BLOCKING && a->x_type == CUVIL_Q_I8 ? 128 : 0;
  /* (Slack for qdw_fill's vector stores past the last line.) */
  __attribute__((aligned(16))) qdw_el line[QDW_LINE_ELEMS + QDW_VL];
  const uint8_t *x_end = (const uint8_t *)a->x + a->planes * s->h * s->wd;
  const uint8_t *y_end = a->y + a->planes * s->oh * s->ow;
  /* The lines of all bands of a plane, when they fit (narrow maps). */
  const int64_t all = ((s->oh + QDW_R - 1) / QDW_R - 1) * QDW_R * s->sh + lines;
  const int once =
      a->chunk == s->ow && all * s->sw * qdw_stride(p) <= QDW_LINE_ELEMS;
  for (int64_t pl = 0; pl < a->planes; ++pl) {
    const int64_t ch = pl % a->c;
    const uint8_t *xc = (const uint8_t *)a->x + pl * s->h * s->wd;
    uint8_t *yc = a->y + pl * s->oh * s->ow;
    qdw_taps taps[QDW_TAP_VECTORS];
    int32_t bias;
    qdw_rq q;
    qdw_channel(s, a, ch, xoff, taps, &bias, &q);
    for (int64_t ox0 = 0; ox0 < s->ow; ox0 += a->chunk) {
      const int64_t cols = s->ow - ox0 < a->chunk ? s->ow - ox0 : a->chunk;
      const int64_t col0 = ox0 * s->sw - s->pad_left;
      for (int64_t oy = 0; oy < s->oh; oy += QDW_R) {
        /* The band's lines; with once, the plane's, at the first band. */
        const int64_t iy0 = oy * s->sh - s->pad_top;
        const qdw_el *band =
            once ? line + oy * s->sh * s->sw * qdw_stride(p) : line;
        for (int64_t i = 0; i < (once ? (oy ? 0 : all) : lines); ++i) {
          const int64_t iy = iy0 + i;
          const void *row = iy >= 0 && iy < s->h ? xc + iy * s->wd : 0;
          qdw_fill(s, line + i * s->sw * qdw_stride(p), row, a->x_type, col0, p,
                   (int32_t)a->x_zp + xoff, xoff, x_end);
        }
        const int64_t rows = s->oh - oy < QDW_R ? s->oh - oy : QDW_R;
        uint8_t *y = yc + oy * s->ow + ox0;
        const int64_t tw = nv * QDW_VL;
        /* A tile as wide as the map stores whole vectors (not a scratch
         * tile and a byte loop): the excess lands on the next row, band or
         * plane, all stored later; never past the end of y. */
        for (int64_t t = 0; t < cols; t += tw)
          qdw_tile(s, band, p, t, taps, bias, &q, y + t, rows,
                   cols - t < tw ? cols - t : tw,
                   a->chunk == s->ow && s->ow <= tw &&
                       y + (QDW_R - 1) * s->ow + tw <= y_end,
                   unrolled, nv);
      }
    }
  }
}

/* The specialised kernels: shapes whose tap loops unroll (constants here),
 * with tiles of QDW_NV vectors or, for maps no wider than one vector, of
 * one (DS-CNN's 5-wide maps: 5 of 8 lanes used, not 5 of 16); and the
 * general kernel. */
#define QDW_KERNEL(name, KH, KW, S, NV)                                        \
  QDW_SPECIALISE(name, KH, KW, S, qdw_planes(&s, a, 1, NV))
QDW_KERNEL(qdw_3x3s1, 3, 3, 1, QDW_NV)
QDW_KERNEL(qdw_3x3s2, 3, 3, 2, QDW_NV)
QDW_KERNEL(qdw_5x5s1, 5, 5, 1, QDW_NV)
QDW_KERNEL(qdw_5x5s2, 5, 5, 2, QDW_NV)
#if QDW_NV > 1
QDW_KERNEL(qdw_3x3s1_narrow, 3, 3, 1, 1)
QDW_KERNEL(qdw_3x3s2_narrow, 3, 3, 2, 1)
#endif
#undef QDW_KERNEL

static __attribute__((noinline)) void qdw_general(const qdw_shape *s,
                                                  const qdw_args *a) {
  qdw_planes(s, a, 0, QDW_NV);
}

#endif
