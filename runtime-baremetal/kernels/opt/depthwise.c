/* Depthwise convolution (one filter per channel) in register tiles.
 *
 * A channel plane is computed in bands of 2 to CUVIL_DW_R output rows (the
 * fewest bands, then the fewest unused rows in the last). The input rows a
 * group of bands (a slab) reads are first copied into "lines" on the stack,
 * zero-padded on every side, so every output position, the borders
 * included, goes through the same tile of rows x CUVIL_DW_NV vectors with
 * no bounds checks and no scalar edge paths. Within a tile every input
 * vector is loaded once and used at once by each output row it contributes
 * to (the tap loops are unrolled, so loads of the same line and column are
 * shared). A slab holds as many bands as the buffer does: for the small
 * maps late in a network, the whole plane, copied once.
 *
 * The lines hold at most CUVIL_DW_LINE_FLOATS floats: wider maps are cut
 * into column chunks. A window too large for even one vector of columns
 * (a huge, dilated kernel) takes a plain per-position loop. Narrow maps at
 * stride 1, whose rows would fill few lanes of a vector, run flat instead
 * (dw_flat): the whole plane as one run of positions. On scalar targets
 * long lines are moved two floats per 64-bit load and store (pair_lines),
 * and the interior of wide maps is read in place (dw_direct). The lines
 * themselves (budget, length, filling) are in dw_lines.h. */
#include "cuvil/kernels.h"

#include "../math.h"
#include "blocking.h"
#include "dw_lines.h"

/* Lanes k .. k + CUVIL_VL - 1 of the concatenation a:b (0 <= k < CUVIL_VL;
 * a constant once inlined, so one lane-shifting shuffle or none). */
INLINE cuvil_vf window_lanes(cuvil_vf a, cuvil_vf b, int64_t k) {
#if CUVIL_VL == 4
  switch (k) {
  case 1: return __builtin_shufflevector(a, b, 1, 2, 3, 4);
  case 2: return __builtin_shufflevector(a, b, 2, 3, 4, 5);
  case 3: return __builtin_shufflevector(a, b, 3, 4, 5, 6);
  }
#elif CUVIL_VL == 8
  switch (k) {
  case 1: return __builtin_shufflevector(a, b, 1, 2, 3, 4, 5, 6, 7, 8);
  case 2: return __builtin_shufflevector(a, b, 2, 3, 4, 5, 6, 7, 8, 9);
  case 3: return __builtin_shufflevector(a, b, 3, 4, 5, 6, 7, 8, 9, 10);
  case 4: return __builtin_shufflevector(a, b, 4, 5, 6, 7, 8, 9, 10, 11);
  case 5: return __builtin_shufflevector(a, b, 5, 6, 7, 8, 9, 10, 11, 12);
  case 6: return __builtin_shufflevector(a, b, 6, 7, 8, 9, 10, 11, 12, 13);
  case 7: return __builtin_shufflevector(a, b, 7, 8, 9, 10, 11, 12, 13, 14);
  }
#elif CUVIL_VL == 16
#define CUVIL_WINDOW(k)                                                        \
  case k:                                                                      \
    return __builtin_shufflevector(a, b, k, k + 1, k + 2, k + 3, k + 4, k + 5, \
                                   k + 6, k + 7, k + 8, k + 9, k + 10, k + 11, \
                                   k + 12, k + 13, k + 14, k + 15);
  /* clang-format off */
  switch (k) {
    CUVIL_WINDOW(1) CUVIL_WINDOW(2) CUVIL_WINDOW(3) CUVIL_WINDOW(4) CUVIL_WINDOW(5)
    CUVIL_WINDOW(6) CUVIL_WINDOW(7) CUVIL_WINDOW(8) CUVIL_WINDOW(9) CUVIL_WINDOW(10)
    CUVIL_WINDOW(11) CUVIL_WINDOW(12) CUVIL_WINDOW(13) CUVIL_WINDOW(14) CUVIL_WINDOW(15)
  }
  /* clang-format on */
#undef CUVIL_WINDOW
#elif CUVIL_VL != 1
#error "window_lanes: no shuffle for this vector length"
#endif
  (void)b;
  (void)k;
  return a;
}

/* The inputs of output vector v of a tile for the tap at column offset off
 * (kx * dil), from the line at lp (vector-aligned). Stride 1 and 2 read
 * whole aligned vectors only and shift lanes in registers: the loads are
 * shared by all taps and by neighbouring vectors, and their addresses are
 * plain vector-multiple offsets; split: the line is deinterleaved (see
 * split_lines), lp at a group's start. Other strides (and scalar targets,
 * where identical loads are shared anyway) gather lane by lane. */
INLINE cuvil_vf tap_vector(const float *lp, int v, int64_t off, int64_t sw,
                           int split) {
  if (CUVIL_VL > 1 && sw == 1) {
    const int64_t e = v * CUVIL_VL + off;
    const float *p = lp + e / CUVIL_VL * CUVIL_VL;
    return window_lanes(cuvil_vf_load(p), cuvil_vf_load(p + CUVIL_VL),
                        e % CUVIL_VL);
  }
  if (CUVIL_VL > 1 && sw == 2) {
    /* Output lane l reads lp[2 * (v * VL + l) + off]: element v * VL + q + l
     * of the even (off = 2q) or odd (off = 2q + 1) lanes. */
    const int64_t q = off / 2;
    const float *p = lp + 2 * (v + q / CUVIL_VL) * CUVIL_VL;
    const int odd = (int)(off % 2);
    if (split) /* the group's even or odd half, stored as a vector */
      return window_lanes(cuvil_vf_load(p + odd * CUVIL_VL),
                          cuvil_vf_load(p + (2 + odd) * CUVIL_VL),
                          q % CUVIL_VL);
    return window_lanes(cuvil_vf_load_half(p, odd),
                        cuvil_vf_load_half(p + 2 * CUVIL_VL, odd),
                        q % CUVIL_VL);
  }
  cuvil_vf x;
  CUVIL_UNROLL
  for (int l = 0; l < CUVIL_VL; ++l)
    x[l] = lp[(v * CUVIL_VL + l) * sw + off];
  return x;
}

/* Stores a tile's accumulators clamped to [lo, hi] (the cheaper clamp when
 * the caller knows none is NaN). Rows past the last output row (a
 * short last band) are not stored; a condition, not an early exit, so the
 * loop unrolls fully. */
INLINE void dw_store(int nv, const dw_shape *s,
                     cuvil_vf acc[CUVIL_DW_R][CUVIL_DW_NV], float *y,
                     int64_t rows, int64_t cols, float lo, float hi,
                     int no_nan) {
  CUVIL_UNROLL
  for (int r = 0; r < s->rows; ++r) {
    float *yr = y + r * s->ow;
    CUVIL_UNROLL
    for (int v = 0; v < nv; ++v) {
      cuvil_vf o = acc[r][v];
      cuvil_vf_clamp(&o, lo, hi, no_nan);
      if (r >= rows)
        continue;
      if ((v + 1) * CUVIL_VL <= cols) {
        cuvil_vf_store(yr + v * CUVIL_VL, &o);
        continue;
      }
      CUVIL_UNROLL
      for (int l = 0; l < CUVIL_VL; ++l)
        if (v * CUVIL_VL + l < cols)
          yr[v * CUVIL_VL + l] = o[l];
    }
  }
}

/* One tile: output rows [0, rows) (rows <= s->rows) and columns
 * [0, cols) (cols <= nv * CUVIL_VL) starting at y; the tile's first output
 * column reads line column col (already scaled by the stride). */
INLINE void dw_tile(int nv, const dw_shape *s, const float *line, int64_t lw,
                    int64_t col, const float *w, float b, float *y,
                    int64_t rows, int64_t cols, float lo, float hi) {
  /* Every row starts at the bias, also those past s->rows that the tile
   * never uses (GCC cannot tell they are unused). */
  cuvil_vf acc[CUVIL_DW_R][CUVIL_DW_NV];
  CUVIL_UNROLL
  for (int r = 0; r < CUVIL_DW_R; ++r)
    CUVIL_UNROLL
  for (int v = 0; v < CUVIL_DW_NV; ++v)
    acc[r][v] = cuvil_vf_splat(b);
  /* Line by line: each input vector is loaded once and goes at once into
   * every output row whose window covers that line, so only the
   * accumulators, the weights and one input vector are live. */
  CUVIL_UNROLL
  for (int64_t i = 0; i < slab_lines(s, 1); ++i)
    CUVIL_UNROLL
  for (int64_t kx = 0; kx < s->kw; ++kx)
    CUVIL_UNROLL
  for (int v = 0; v < nv; ++v) {
    const cuvil_vf xv =
        tap_vector(line + i * lw + col, v, kx * s->dw, s->sw, split_lines(s));
    CUVIL_UNROLL
    for (int r = 0; r < s->rows; ++r) {
      const int64_t dy = i - r * s->sh; /* = ky * dh */
      if (dy < 0 || dy % s->dh != 0 || dy / s->dh >= s->kh)
        continue;
      acc[r][v] += cuvil_vf_splat(w[dy / s->dh * s->kw + kx]) * xv;
    }
  }
  if (cuvil_vf_none_nan(&acc[0][0], s->rows * CUVIL_DW_NV))
    dw_store(nv, s, acc, y, rows, cols, lo, hi, 1);
  else
    dw_store(nv, s, acc, y, rows, cols, lo, hi, 0);
}

/* A slab: `bands` bands of output rows from oy0, columns [ox0, ox0 + cols)
 * of one channel plane. Copy the input rows the slab reads into the lines
 * once (zero-padded; rows above and below the input are zero lines), then
 * run each band's whole tiles and a narrower tail tile along them, up to
 * output row oy1. */
INLINE void dw_slab(const dw_shape *s, int64_t bands, float *line,
                    const float *xc, const float *w, float b, float *yc,
                    int64_t oy0, int64_t oy1, int64_t ox0, int64_t cols,
                    float lo, float hi) {
  enum { TW = CUVIL_DW_NV * CUVIL_VL };
  /* Bands from oy0 up to oy1 (a band boundary, or oh), at most `bands`;
   * on scalar targets, whose direct part may follow the first rows, only
   * the lines of these are copied. */
  if (CUVIL_VL == 1) {
    const int64_t here = (oy1 - oy0 + s->rows - 1) / s->rows;
    if (here < bands)
      bands = here;
  }
  const int64_t lw = line_floats(s, cols), n = slab_lines(s, bands);
  const int64_t iy0 = oy0 * s->sh - s->pad_top,
                col0 = ox0 * s->sw - s->pad_left;
  line += line_shift(xc, iy0 * s->wd + col0, lw);
  /* Lines [first, last) are input rows; the others are padding. */
  int64_t first = -iy0;
  first = first < 0 ? 0 : first > n ? n : first;
  int64_t last = s->h - iy0;
  last = last < first ? first : last > n ? n : last;
  const int pairs = pair_lines(lw);
  zero_span(line, first * lw, pairs);
  for (int64_t i = first; i < last; ++i)
    fill_line(line + i * lw, xc + (iy0 + i) * s->wd, col0, lw, s->wd, pairs,
              split_lines(s));
  zero_span(line + last * lw, (n - last) * lw, pairs);
  for (int64_t k = 0; k < bands; ++k) {
    const int64_t oy = oy0 + k * s->rows;
    if (oy >= oy1)
      break;
    const int64_t rows = s->oh - oy < s->rows ? s->oh - oy : s->rows;
    const float *lines = line + k * s->rows * s->sh * lw;
    float *y = yc + oy * s->ow + ox0;
    /* The tail's start in closed form (not a loop's exit value), so that
     * its width is a constant when the tail tile's loops are unrolled. */
    const int64_t tail = cols / TW * TW;
    for (int64_t t = 0; t < tail; t += TW)
      dw_tile(CUVIL_DW_NV, s, lines, lw, t * s->sw, w, b, y + t, rows, TW, lo,
              hi);
    if (tail < cols)
      dw_tile((int)((cols - tail + CUVIL_VL - 1) / CUVIL_VL), s, lines, lw,
              tail * s->sw, w, b, y + tail, rows, cols - tail, lo, hi);
  }
}

/* Vectors per step of dw_flat (independent accumulators for the FMA
 * pipelines), and the most taps it takes (5x5). */
#define CUVIL_DW_FLAT_NV 4
#define CUVIL_DW_FLAT_TAPS 25

/* The plane of a narrow map (stride 1, no dilation), copied once into a
 * zero-padded buffer of pitch L = ow + kw - 1. Output (y, x) then reads
 * buf[(y + ky) * L + x + kx] for every tap, so the outputs are computed
 * as one run of oh * L positions in whole vectors, the kw - 1 positions
 * past each row's end included and thrown away: a 5-wide map fills 5 of 7
 * lanes of every vector, not 5 of CUVIL_VL of one vector per row. The
 * results go to a second buffer of the same pitch, then row by row to y.
 * buf and out hold at least flat_floats(s) floats. */
INLINE int64_t flat_pitch(const dw_shape *s) { return s->ow + s->kw - 1; }

INLINE int64_t flat_floats(const dw_shape *s) {
  const int64_t run = s->oh * flat_pitch(s);
  const int64_t step = CUVIL_DW_FLAT_NV * CUVIL_VL;
  /* The last step's vectors and their furthest tap stay inside. */
  return (run + step - 1) / step * step + (s->kh - 1) * flat_pitch(s) + s->kw -
         1;
}

INLINE void dw_flat(const dw_shape *s, float *buf, float *out, const float *xc,
                    const float *w, float b, float *yc, float lo, float hi) {
  const int64_t pitch = flat_pitch(s), rows = s->oh + s->kh - 1;
  const int64_t run = s->oh * pitch, step = CUVIL_DW_FLAT_NV * CUVIL_VL;
  zero_lines(buf, flat_floats(s));
  /* The input columns any output reads: [0, pitch - pad_left). */
  const int64_t cols =
      s->wd < pitch - s->pad_left ? s->wd : pitch - s->pad_left;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t iy = i - s->pad_top;
    if (iy >= 0 && iy < s->h && cols > 0)
      __builtin_memcpy(buf + i * pitch + s->pad_left, xc + iy * s->wd,
                       (uint64_t)cols * sizeof(float));
  }
  cuvil_vf wv[CUVIL_DW_FLAT_TAPS]; /* the taps, broadcast */
  const int taps = (int)(s->kh * s->kw);
  CUVIL_UNROLL
  for (int t = 0; t < taps; ++t)
    wv[t] = cuvil_vf_splat(w[t]);
  for (int64_t q = 0; q < run; q += step) {
    cuvil_vf acc[CUVIL_DW_FLAT_NV];
    CUVIL_UNROLL
    for (int v = 0; v < CUVIL_DW_FLAT_NV; ++v)
      acc[v] = cuvil_vf_splat(b);
    CUVIL_UNROLL
    for (int64_t ky = 0; ky < s->kh; ++ky)
      CUVIL_UNROLL
    for (int64_t kx = 0; kx < s->kw; ++kx)
      CUVIL_UNROLL
    for (int v = 0; v < CUVIL_DW_FLAT_NV; ++v)
      acc[v] += wv[ky * s->kw + kx] *
                cuvil_vf_load(buf + q + v * CUVIL_VL + ky * pitch + kx);
    CUVIL_UNROLL
    for (int v = 0; v < CUVIL_DW_FLAT_NV; ++v) {
      cuvil_vf_clamp(&acc[v], lo, hi, 0);
      cuvil_vf_store(out + q + v * CUVIL_VL, &acc[v]);
    }
  }
  for (int64_t oy = 0; oy < s->oh; ++oy)
    __builtin_memcpy(yc + oy * s->ow, out + oy * pitch,
                     (uint64_t)s->ow * sizeof(float));
}

/* Whether bands of r rows cover oh rows as well as bands of `than` rows
 * (as few bands) with fewer rows of the last band unused. */
INLINE int better_band(int64_t oh, int64_t r, int64_t than) {
  const int64_t nr = (oh + r - 1) / r, nt = (oh + than - 1) / than;
  return nr == nt && nr * r < nt * than;
}

/* The reference loop over output rows [oy0, oy1) and columns [ox0, ox1):
 * for windows whose lines would not fit the stack, and the border columns
 * of dw_direct. */
INLINE void dw_plain(const dw_shape *s, const float *xc, const float *w,
                     float b, float *yc, int64_t oy0, int64_t oy1, int64_t ox0,
                     int64_t ox1, float lo, float hi) {
  for (int64_t oy = oy0; oy < oy1; ++oy)
    for (int64_t ox = ox0; ox < ox1; ++ox) {
      const int64_t iy0 = oy * s->sh - s->pad_top,
                    ix0 = ox * s->sw - s->pad_left;
      const int64_t ky_lo = first_inside(iy0, s->dh),
                    ky_hi = end_inside(iy0, s->dh, s->h, s->kh);
      const int64_t kx_lo = first_inside(ix0, s->dw),
                    kx_hi = end_inside(ix0, s->dw, s->wd, s->kw);
      float acc = b;
      for (int64_t ky = ky_lo; ky < ky_hi; ++ky)
        for (int64_t kx = kx_lo; kx < kx_hi; ++kx)
          acc += w[ky * s->kw + kx] *
                 xc[(iy0 + ky * s->dh) * s->wd + ix0 + kx * s->dw];
      yc[oy * s->ow + ox] = cuvil_clampf(acc, lo, hi);
    }
}

/* Scalar targets: the whole bands [oy0, oy1) whose windows lie inside the
 * input rows read the plane itself, without lines: a stride-2 layer would
 * otherwise copy four input floats per output, as many instructions as
 * its nine multiply-adds. Tiles run along the columns [cx0, cx1) whose
 * windows are inside too (the last one overlapping its neighbour when the
 * width is not a whole number of tiles); the few columns left, at the
 * borders, take the reference loop. */
INLINE void dw_direct(const dw_shape *s, const float *xc, const float *w,
                      float b, float *yc, int64_t oy0, int64_t oy1, int64_t cx0,
                      int64_t cx1, float lo, float hi) {
  enum { TW = CUVIL_DW_NV * CUVIL_VL };
  for (int64_t oy = oy0; oy < oy1; oy += s->rows) {
    const float *top = xc + (oy * s->sh - s->pad_top) * s->wd;
    for (int64_t ox = cx0; ox < cx1; ox += TW) {
      const int64_t o = ox + TW <= cx1 ? ox : cx1 - TW;
      dw_tile(CUVIL_DW_NV, s, top, s->wd, o * s->sw - s->pad_left, w, b,
              yc + oy * s->ow + o, s->rows, TW, lo, hi);
    }
  }
  dw_plain(s, xc, w, b, yc, oy0, oy1, 0, cx0, lo, hi);
  dw_plain(s, xc, w, b, yc, oy0, oy1, cx1, s->ow, lo, hi);
}

void cuvil_k_dwconv2d_f32(const float *restrict x, const float *restrict w,
                          const float *restrict bias, float *restrict y,
                          int64_t n, int64_t c, int64_t h, int64_t wd,
                          int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                          int64_t stride_h, int64_t stride_w, int64_t dil_h,
                          int64_t dil_w, int64_t pad_top, int64_t pad_left,
                          float act_lo, float act_hi) {
  enum { TW = CUVIL_DW_NV * CUVIL_VL };
  /* Rows per band: the fewest bands, and among those the fewest unused
   * rows in the last one (6 rows: two bands of 3, not 4 + 2; 25 rows:
   * seven bands of 4; with AVX-512's 8, 14 rows: two bands of 7).
   * Straight-line code, so that it folds to a constant before the tile
   * loops over the band's rows are unrolled. */
  int64_t band = CUVIL_DW_R;
#define CUVIL_TRY_BAND(r)                                                      \
  if (CUVIL_DW_R > (r) && better_band(oh, (r), band))                          \
    band = (r);
  CUVIL_TRY_BAND(7)
  CUVIL_TRY_BAND(6)
  CUVIL_TRY_BAND(5)
  CUVIL_TRY_BAND(4)
  CUVIL_TRY_BAND(3)
  CUVIL_TRY_BAND(2)
#undef CUVIL_TRY_BAND
  const dw_shape s = {h,        wd,    kh,    kw,      oh,       ow,  stride_h,
                      stride_w, dil_h, dil_w, pad_top, pad_left, band};
  const int64_t band_lines = slab_lines(&s, 1);
  /* Output columns per slab: all of them if one band's lines fit the buffer,
   * else as many whole tiles (or vectors) as do; 0 when not even one
   * vector does (then the plain loop runs). */
  int64_t chunk = ow;
  if (band_lines * line_floats(&s, ow) > CUVIL_DW_LINE_FLOATS) {
    /* (On scalar targets less the float line_floats may add.) */
    const int64_t per_line =
        CUVIL_DW_LINE_FLOATS / band_lines / CUVIL_VL * CUVIL_VL -
        (CUVIL_VL == 1);
    const int64_t room =
        per_line - (stride_w == 2 ? 3 : 1) * CUVIL_VL - (kw - 1) * dil_w - 1;
    const int64_t fit = room < 0 ? 0 : room / stride_w + 1;
    chunk = fit >= TW ? fit / TW * TW : fit / CUVIL_VL * CUVIL_VL;
  }
  /* Bands per slab: as many as the buffer holds (the whole plane, for the
   * small maps late in a network, so its rows are copied once). */
  const int64_t lw = line_floats(&s, chunk);
  int64_t bands = 1;
  while (chunk > 0 && bands * band < oh &&
         slab_lines(&s, bands + 1) * lw <= CUVIL_DW_LINE_FLOATS)
    ++bands;
  __attribute__((
      aligned(16))) float line[CUVIL_DW_LINE_FLOATS + 1]; /* + line_shift */
  /* A narrow map at stride 1 (a keyword spotter's 25x5 maps) runs flat
   * (see dw_flat) when that takes fewer vectors per plane than the tiles,
   * which round every row up to whole vectors, when the plane has more
   * rows than two bands (on fewer, the flat path's copies cost more than
   * the lanes save: 6x6 maps measured slower on AVX-512), and when the
   * plane fits the buffer twice over. One-lane targets waste no lanes on
   * narrow rows. */
  const int64_t tile_vectors = oh * ((ow + CUVIL_VL - 1) / CUVIL_VL);
  const int64_t flat_step = CUVIL_DW_FLAT_NV * CUVIL_VL;
  const int64_t flat_vectors =
      (oh * flat_pitch(&s) + flat_step - 1) / flat_step * CUVIL_DW_FLAT_NV;
  const int flat = CUVIL_VL > 1 && stride_h == 1 && stride_w == 1 &&
                   dil_h == 1 && dil_w == 1 && flat_vectors < tile_vectors &&
                   oh > 2 * CUVIL_DW_R && kh * kw <= CUVIL_DW_FLAT_TAPS &&
                   2 * flat_floats(&s) <= CUVIL_DW_LINE_FLOATS;
  /* Scalar targets read the plane directly in the bands [direct_lo,
   * direct_hi) (see dw_direct): the whole bands of interior rows, when the
   * interior columns [cx0, cx1) span at least eight tiles, or two when
   * strided (an output then copies four input floats or more). On
   * narrower maps the border columns cost more than the copies save
   * (MobileNetV1's 24-wide stride-1 layer: 5 K instructions more). */
  const int64_t oy_lo = first_inside(-pad_top, stride_h);
  const int64_t oy_hi =
      end_inside(-pad_top + (kh - 1) * dil_h, stride_h, h, oh);
  const int64_t cx0 = first_inside(-pad_left, stride_w);
  const int64_t cx1 =
      end_inside(-pad_left + (kw - 1) * dil_w, stride_w, wd, ow);
  int64_t direct_lo = oh, direct_hi = oh;
  if (CUVIL_VL == 1 && cx1 - cx0 >= (stride_w > 1 ? 2 : 8) * TW &&
      oy_hi > oy_lo) {
    const int64_t a = (oy_lo + band - 1) / band * band;
    const int64_t z = oy_hi < a ? a : a + (oy_hi - a) / band * band;
    if (z > a) {
      direct_lo = a;
      direct_hi = z;
    }
  }
  for (int64_t bc = 0; bc < n * c; ++bc) {
    const float *xc = x + bc * h * wd;
    const float *wc = w + (bc % c) * kh * kw;
    float *yc = y + bc * oh * ow;
    const float b = bias ? bias[bc % c] : 0.0f;
    if (flat) {
      dw_flat(&s, line, line + CUVIL_DW_LINE_FLOATS / 2, xc, wc, b, yc, act_lo,
              act_hi);
      continue;
    }
    if (chunk == 0) {
      dw_plain(&s, xc, wc, b, yc, 0, oh, 0, ow, act_lo, act_hi);
      continue;
    }
    /* Rows [0, direct_lo) and [direct_hi, oh) through lines (all of them
     * when there is no direct part): whole chunks of columns, then the
     * last (narrower) one, each a constant width once the kernel is
     * specialised. The narrower chunk's lines are no longer, so `bands`
     * fits it too. */
    const int64_t last = ow / chunk * chunk;
#if defined(__clang__)
#pragma clang loop unroll(disable) /* one copy of the tiles for both parts */
#endif
    for (int part = 0; part < (CUVIL_VL == 1 ? 2 : 1); ++part) {
      const int64_t from = part ? direct_hi : 0, to = part ? oh : direct_lo;
      for (int64_t ox0 = 0; ox0 < last; ox0 += chunk)
        for (int64_t oy0 = from; oy0 < to; oy0 += bands * band)
          dw_slab(&s, bands, line, xc, wc, b, yc, oy0, to, ox0, chunk, act_lo,
                  act_hi);
      if (last < ow)
        for (int64_t oy0 = from; oy0 < to; oy0 += bands * band)
          dw_slab(&s, bands, line, xc, wc, b, yc, oy0, to, last, ow - last,
                  act_lo, act_hi);
    }
    if (direct_lo < direct_hi)
      dw_direct(&s, xc, wc, b, yc, direct_lo, direct_hi, cx0, cx1, act_lo,
                act_hi);
  }
}
