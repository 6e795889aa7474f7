/* The INT8 depthwise convolution on one-lane targets (RV64) for 3x3 and
 * 5x5 windows at stride 1 or 2: three output rows per 64-bit register
 * (included by qdepthwise.c only, after its helpers).
 *
 * The flat form (qdw_flat.h) holds two output columns per register and
 * widens each padded plane into a line of int32 pairs; on DS-CNN's 25x5
 * maps it still took some 62 instructions per output (float: 22), most of
 * them around the multiply-adds: the line's fill, a tile's branches for
 * its columns and ties, register spills. Here a plane is copied once,
 * padded, as bytes (a band of rows at a time), and each group of three
 * output rows oy, oy + 1, oy + 2 walks the output columns: for window row
 * ky and padded column c, the word
 *   P[oy s + ky][c] + P[(oy + 1) s + ky][c] B + P[(oy + 2) s + ky][c] B^2
 * (B = 2^21; bytes: the uint8 domain, int8 inputs moved by 128 as in
 * qdw_flat.h) times tap (ky, kx) adds the three rows' products as signed
 * digits (|digit| <= 25 * 255 * 128 < 2^20, so no digit spills into the
 * next; split as in qblocking.h's triples). Moving one output column
 * builds only the window's new columns (their words from kh + 2 s bytes,
 * each after the first s from the word s rows above, shifted) and adds
 * each into the sums of the outputs it belongs to (qc_sums), so per
 * three outputs of a 3x3 window at stride 1: 5 loads and 10 instructions
 * of building, 9 mul and 8 add, the split and three requantizations. The
 * bias joins the requantization's rounding constant (no overflow: |bias
 * mult| < 2^62, see qdw_rq). A tall narrow map is walked transposed, so
 * that the groups run along its long side (qc_orient). A map of fewer
 * than three output rows, or whose padded rows are too wide for the copy,
 * stays with the flat form; the last group of a band stores only its
 * rows when they are not a multiple of three. u74-mc: DS-CNN's
 * depthwise layers 498K -> 297K instructions each (float: 174K),
 * MobileNetV1-0.25's 4.96M -> 3.90M in all (float: 1.67M): the
 * requantization (6 instructions an output and the split's 8 a word) and
 * the words' building cost what float's one fmadd per multiply-add does
 * not. */
#ifndef CUVIL_KERNELS_OPT_QDW_COLS_H
#define CUVIL_KERNELS_OPT_QDW_COLS_H

#if CUVIL_SCALAR_BLOCKING

#define QC_BYTES 4096 /* the padded band's copy */
#define QC_B 21       /* digit width */
#define QC_KMAX 5     /* the widest window */

/* Padded columns of a row the window reaches; padded rows of n output
 * rows. */
INLINE int64_t qc_cols(const qdw_shape *s) {
  return (s->ow - 1) * s->sw + s->kw;
}
INLINE int64_t qc_rows(const qdw_shape *s, int64_t n) {
  return (n - 1) * s->sh + s->kh;
}

/* Output rows per band: a multiple of 3, the most whose padded rows fit
 * QC_BYTES (0: not even three do). */
INLINE int64_t qc_band(const qdw_shape *s) {
  /* qc_rows(s, n) * qc_cols(s) <= QC_BYTES, in closed form (a constant
   * for a constant shape: a loop here kept the flat form's code, the
   * fallback, in every model). */
  const int64_t rows = QC_BYTES / qc_cols(s);
  const int64_t n = rows < s->kh ? 0 : ((rows - s->kh) / s->sh + 1) / 3 * 3;
  const int64_t all = (s->oh + 2) / 3 * 3;
  return n < all ? n : all;
}

/* Instructions for a plane of rows x cols outputs, roughly: per group of
 * three rows a set-up and, per column (and the window's first ones), the
 * multiply-adds and three requantizations. */
INLINE int64_t qc_cost(int64_t rows, int64_t cols) {
  return (rows + 2) / 3 * (150 + 75 * (cols + 2));
}

/* The shape as this form walks it: transposed (rows and columns, and the
 * window's taps, swapped; returns 1) where its rows are the shorter side,
 * so that the groups of three run along the long one (DS-CNN's 25x5 maps:
 * two groups of 25 columns, not nine of 5). The window is square and the
 * strides equal, so only the map's sides and pads swap. */
INLINE int qc_orient(const qdw_shape *s, qdw_shape *t) {
  *t = *s;
  if (s->ow < 3 || qc_cost(s->ow, s->oh) >= qc_cost(s->oh, s->ow))
    return 0;
  t->h = s->wd;
  t->wd = s->h;
  t->oh = s->ow;
  t->ow = s->oh;
  t->pad_top = s->pad_left;
  t->pad_left = s->pad_top;
  return 1;
}

INLINE int qc_takes(const qdw_shape *s) {
  const int k = (s->kh == 3 && s->kw == 3) || (s->kh == 5 && s->kw == 5);
  qdw_shape t;
  qc_orient(s, &t);
  return k && s->dh == 1 && s->dw == 1 && s->sh == s->sw &&
         (s->sh == 1 || s->sh == 2) && t.oh >= 3 && qc_band(&t) >= 3;
}

/* Padded rows [r0, r0 + nr) x columns [c0, c0 + nc) of plane xc (shape
 * g, as stored) into pad, rows ns >= nc bytes apart: padded row r is
 * input row r - pad_top, padded column c input column c - pad_left, the
 * byte padv outside; flip xor'd into the inside ones. */
INLINE void qc_fill(const qdw_shape *g, uint8_t *pad, const uint8_t *xc,
                    int64_t r0, int64_t nr, int64_t c0, int64_t nc, int64_t ns,
                    uint8_t padv, uint8_t flip) {
  const uint64_t pads = padv * 0x0101010101010101u;
  /* The columns inside the input: [in0, in1) of the nc. */
  int64_t in0 = g->pad_left - c0, in1 = g->pad_left + g->wd - c0;
  in0 = in0 < 0 ? 0 : in0 > nc ? nc : in0;
  in1 = in1 < in0 ? in0 : in1 > nc ? nc : in1;
  int64_t ra = g->pad_top - r0, rb = g->pad_top + g->h - r0;
  ra = ra < 0 ? 0 : ra > nr ? nr : ra;
  rb = rb < ra ? ra : rb > nr ? nr : rb;
  const uint8_t *row = xc + (r0 + ra - g->pad_top) * g->wd + c0 - g->pad_left;
  if (ns == 8) {
    /* Rows of at most 8 bytes (a transposed walk's: DS-CNN's 7), each
     * made in a register and stored whole: some 23 instructions for a row
     * of 5 inside, where the byte copy below took 45 (the shape is not a
     * constant here: the row's length picks the loads). */
    const int64_t n = in1 - in0;
    const uint64_t in = n ? (~(uint64_t)0 >> (64 - 8 * n)) << 8 * in0 : 0;
    const uint64_t out = pads & ~in, fl = flip * 0x0101010101010101u & in;
    for (int64_t r = 0; r < nr; ++r) {
      uint64_t v = pads;
      if (r >= ra && r < rb) {
        const uint8_t *p = row + in0;
        v = 0;
        switch (n) {
        case 8: v |= (uint64_t)p[7] << 56; __attribute__((fallthrough));
        case 7: v |= (uint64_t)p[6] << 48; __attribute__((fallthrough));
        case 6: v |= (uint64_t)p[5] << 40; __attribute__((fallthrough));
        case 5: v |= (uint64_t)p[4] << 32; __attribute__((fallthrough));
        case 4: v |= (uint64_t)p[3] << 24; __attribute__((fallthrough));
        case 3: v |= (uint64_t)p[2] << 16; __attribute__((fallthrough));
        case 2: v |= (uint64_t)p[1] << 8; __attribute__((fallthrough));
        case 1: v |= p[0];
        }
        v = (v << 8 * in0 ^ fl) | out;
        row += g->wd;
      }
      __builtin_memcpy(pad + 8 * r, &v, 8);
    }
    return;
  }
  /* All of it padding first, 8 bytes a store (pad is 8-aligned, with room
   * for the round-up), then the inside of each row that reads the input:
   * row by row in three parts, the narrow rows of a transposed walk (7
   * bytes) took some 60 instructions each. */
  for (int64_t i = 0; i < (nr * ns + 7) / 8; ++i)
    __builtin_memcpy(pad + 8 * i, &pads, 8);
  for (int64_t r = ra; r < rb; ++r, row += g->wd) {
    if (in1 - in0 >= 16) {
      for (int64_t c = in0; c < in1; ++c)
        pad[r * ns + c] = row[c] ^ flip;
      continue;
    }
    /* A short row in a plain loop: unrolled and vectorised, a row of 5
     * took 54 instructions. */
    CUVIL_PLAIN
    for (int64_t c = in0; c < in1; ++c)
      pad[r * ns + c] = row[c] ^ flip;
  }
}

/* The kh words of padded column c for the group whose first padded row is
 * at g (walked rows rs bytes apart, columns cs: a transposed walk reads
 * the copy as stored, so a column's rows are consecutive bytes): word ky
 * from rows ky, ky + s, ky + 2 s, and, from ky = s on, the word s rows
 * above shifted by one digit. */
INLINE void qc_column(const qdw_shape *s, const uint8_t *g, int64_t rs,
                      int64_t cs, int64_t c, uint64_t wc[QC_KMAX]) {
  const int64_t st = s->sh;
  const uint8_t *p = g + c * cs;
  for (int64_t ky = 0; ky < s->kh; ++ky) {
    const uint64_t far = p[(ky + 2 * st) * rs];
    if (ky < st)
      wc[ky] = p[ky * rs] + ((uint64_t)p[(ky + st) * rs] << QC_B) +
               (far << 2 * QC_B);
    else
      wc[ky] = (wc[ky - st] >> QC_B) + (far << 2 * QC_B);
  }
}

/* Output columns whose sums are open at once: a column adds to outputs
 * ox .. ox + (kw - 1) / s. */
#define QC_OPEN (QC_KMAX)

/* Column j of the window at output ox (padded column ox s + j) into the
 * open sums: part[k] is output ox + k's, and the column is tap kx of
 * output ox + (j - kx) / s for every kx <= j with j - kx a multiple of s. */
INLINE void qc_add_column(const qdw_shape *s, const uint8_t *g, int64_t rs,
                          int64_t cs, int64_t c, int64_t j, const int64_t *w,
                          uint64_t part[QC_OPEN]) {
  uint64_t wc[QC_KMAX];
  qc_column(s, g, rs, cs, c, wc);
  for (int64_t kx = j % s->sw; kx <= j && kx < s->kw; kx += s->sw)
    for (int64_t ky = 0; ky < s->kh; ++ky)
      part[(j - kx) / s->sw] += wc[ky] * (uint64_t)w[ky * s->kw + kx];
}

/* Before output column 0 of the group at g: the window's first kw - s
 * columns into the open sums. */
INLINE void qc_start(const qdw_shape *s, const uint8_t *g, int64_t rs,
                     int64_t cs, const int64_t *w, uint64_t part[QC_OPEN]) {
  for (int64_t k = 0; k < QC_OPEN; ++k)
    part[k] = 0;
  for (int64_t j = 0; j < s->kw - s->sw; ++j)
    qc_add_column(s, g, rs, cs, j, j, w, part);
}

/* The sums (three rows' digits) of output columns [ox0, ox0 + n) of the
 * group at g into acc, the window's new columns added one at a time to
 * the open sums part (no window held in registers: a 3x3 one and its
 * taps, 18 values, left too few for the rest). */
INLINE void qc_sums(const qdw_shape *s, const uint8_t *g, int64_t rs,
                    int64_t cs, const int64_t *w, int64_t ox0, int64_t n,
                    uint64_t part[QC_OPEN], uint64_t *acc) {
  const int64_t st = s->sw, open = (s->kw - 1) / st + 1;
  for (int64_t ox = ox0; ox < ox0 + n; ++ox) {
    for (int64_t j = s->kw - st; j < s->kw; ++j)
      qc_add_column(s, g, rs, cs, ox * st + j, j, w, part);
    acc[ox - ox0] = part[0];
    for (int64_t k = 0; k + 1 < open; ++k)
      part[k] = part[k + 1];
    part[open - 1] = 0;
  }
}

/* Requantizes digit d of an output (the bias in up) to *y. */
INLINE void qc_out(int64_t d, const qdw_rq *q, int64_t up, int tf, uint8_t *y) {
  const int64_t t = d * q->mult + up;
  int64_t v = t >> q->shift;
  if (!tf && __builtin_expect((t & q->mask) == 0, 0))
    v -= (v - q->zp) & 1;
  v = v < q->lo ? q->lo : v;
  *y = (uint8_t)(v > q->hi ? q->hi : v);
}

/* Output columns [0, n) of the group's first nrow rows of oy, oy + 1,
 * oy + 2 (y: row oy's first; rows yr apart, columns yk) from their sums
 * acc. */
INLINE void qc_store(const uint64_t *acc, int64_t n, int64_t nrow, int64_t yr,
                     int64_t yk, const qdw_rq *q, int64_t up, int tf,
                     uint8_t *y) {
  for (int64_t ox = 0; ox < n; ++ox, y += yk) {
    const int64_t d0 = cuvil_qdigit(acc[ox], QC_B);
    const int64_t r = (int64_t)(acc[ox] - (uint64_t)d0) >> QC_B;
    const int64_t d1 = cuvil_qdigit((uint64_t)r, QC_B);
    qc_out(d0, q, up, tf, y);
    if (nrow > 1)
      qc_out(d1, q, up, tf, y + yr);
    if (nrow > 2)
      qc_out((r - d1) >> QC_B, q, up, tf, y + 2 * yr);
  }
}

/* Output rows oy .. oy + nrow - 1 (nrow <= 3; y: row oy) of the group at
 * g, QC_CW columns at a time: their sums (always three rows'), then their
 * outputs. */
#define QC_CW 64
INLINE void qc_group(const qdw_shape *s, const uint8_t *g, int64_t rs,
                     int64_t cs, const int64_t *w, const qdw_rq *q, int64_t up,
                     int tf, int64_t nrow, int64_t yr, int64_t yk, uint8_t *y) {
  uint64_t part[QC_OPEN], acc[QC_CW];
  qc_start(s, g, rs, cs, w, part);
  for (int64_t ox0 = 0; ox0 < s->ow; ox0 += QC_CW) {
    const int64_t n = s->ow - ox0 < QC_CW ? s->ow - ox0 : QC_CW;
    qc_sums(s, g, rs, cs, w, ox0, n, part, acc);
    qc_store(acc, n, nrow, yr, yk, q, up, tf, y + ox0 * yk);
  }
}

/* Every plane (shape g), band by band of qc_band output rows, group by
 * group of three (the last one of a band may have fewer: its sums' other
 * rows read the copy's padding rows, and are not stored), walked as s (g
 * transposed where tr: qc_orient). */
INLINE void qc_planes_as(const qdw_shape *g, const qdw_shape *s,
                         const qdw_args *a, int tr) {
  const int64_t band = qc_band(s), pw = qc_cols(s), taps = s->kh * s->kw;
  /* Strides of the output's walked rows and columns. */
  const int64_t yr = tr ? 1 : g->ow, yk = tr ? g->ow : 1;
  const int32_t xoff = a->x_type == CUVIL_Q_I8 ? 128 : 0;
  const uint8_t padv = (uint8_t)(a->x_zp + xoff), flip = xoff ? 0x80 : 0;
  uint8_t pad[QC_BYTES + 8] __attribute__((aligned(8)));
  for (int64_t pl = 0; pl < a->planes; ++pl) {
    qdw_taps tv[QDW_TAP_VECTORS];
    int32_t bias;
    qdw_rq q;
    qdw_channel(g, a, pl % a->c, xoff, tv, &bias, &q);
    int64_t w[QC_KMAX * QC_KMAX];
    for (int64_t ky = 0; ky < s->kh; ++ky)
      for (int64_t kx = 0; kx < s->kw; ++kx) {
        const int64_t t0 = tr ? kx * s->kw + ky : ky * s->kw + kx;
        w[ky * s->kw + kx] = tv[t0 / 8][t0 % 8];
      }
    const int64_t b = bias < 0 ? -(int64_t)bias : bias;
    const int tf =
        cuvil_qrq_tiefree(b + taps * 32768, (int32_t)q.mult, q.shift);
    const int64_t up = q.up + (int64_t)bias * q.mult;
    const uint8_t *xc = (const uint8_t *)a->x + pl * g->h * g->wd;
    uint8_t *y = a->y + pl * g->oh * g->ow;
    for (int64_t oy0 = 0; oy0 < s->oh; oy0 += band) {
      const int64_t rows = s->oh - oy0 < band ? s->oh - oy0 : band;
      /* The band's walked rows (for whole groups of three: band is a
       * multiple of 3): padded rows of the plane as stored, or
       * (transposed) its padded columns; rs, cs: their strides in pad. */
      const int64_t nr = qc_rows(s, (rows + 2) / 3 * 3), r0 = oy0 * s->sh;
      /* A transposed copy's rows of at most 8 bytes: 8 apart (qc_fill). */
      const int64_t ns = tr && nr <= 8 && pw * 8 <= QC_BYTES ? 8 : nr;
      const int64_t rs = tr ? 1 : pw, cs = tr ? ns : 1;
      if (tr)
        qc_fill(g, pad, xc, 0, pw, r0, nr, ns, padv, flip);
      else
        qc_fill(g, pad, xc, r0, nr, 0, pw, pw, padv, flip);
      for (int64_t r = 0; r < rows; r += 3) {
        /* (a constant 3 but for the last group: a test per column cost
         * MobileNet's depthwise layers 33K instructions) */
        const int64_t nrow = rows - r < 3 ? rows - r : 3;
        const uint8_t *gr = pad + r * s->sh * rs;
        uint8_t *yg = y + (oy0 + r) * yr;
        if (tf && nrow == 3)
          qc_group(s, gr, rs, cs, w, &q, up, 1, 3, yr, yk, yg);
        else if (nrow == 3)
          qc_group(s, gr, rs, cs, w, &q, up, 0, 3, yr, yk, yg);
        else
          qc_group(s, gr, rs, cs, w, &q, up, tf, nrow, yr, yk, yg);
      }
    }
  }
}

/* qc_planes_as with the orientation a constant, picked by the caller (a
 * constant there for a constant shape: only one walk is compiled), so
 * that the untransposed walk's strides are 1: contiguous copies and
 * stores. */
INLINE void qc_planes(const qdw_shape *g, const qdw_args *a, int tr) {
  qdw_shape t;
  qc_orient(g, &t);
  qc_planes_as(g, &t, a, tr);
}

/* The kernels, per window, stride and orientation (t: transposed). */
#define QC_KERNELS(K, S)                                                       \
  QDW_SPECIALISE(qc_##K##x##K##s##S, K, K, S, qc_planes(&s, a, 0))             \
  QDW_SPECIALISE(qc_##K##x##K##s##S##t, K, K, S, qc_planes(&s, a, 1))
QC_KERNELS(3, 1)
QC_KERNELS(3, 2)
QC_KERNELS(5, 1)
QC_KERNELS(5, 2)

/* Runs the convolution in this form if it takes the shape (a->wsum
 * present for int8 inputs: the caller checked). */
INLINE int qc_run(const qdw_shape *s, const qdw_args *a) {
  if (!qc_takes(s))
    return 0;
  qdw_shape t;
  const int tr = qc_orient(s, &t);
  if (s->kh == 3 && s->sh == 1)
    (tr ? qc_3x3s1t : qc_3x3s1)(s, a);
  else if (s->kh == 3)
    (tr ? qc_3x3s2t : qc_3x3s2)(s, a);
  else if (s->sh == 1)
    (tr ? qc_5x5s1t : qc_5x5s1)(s, a);
  else
    (tr ? qc_5x5s2t : qc_5x5s2)(s, a);
  return 1;
}

#endif /* CUVIL_SCALAR_BLOCKING */

#endif
