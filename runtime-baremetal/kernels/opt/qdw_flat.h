/* The INT8 depthwise convolution on one-lane targets (RV64) at stride 1 or
 * 2: each channel's padded plane, or bands of it, as one flat line
 * (included by qdepthwise.c only, after qdw_planes and its helpers).
 *
 * The plane tiles of qdepthwise.c (QDW_R rows x QDW_TW columns) fit a
 * narrow map badly: DS-CNN's 25x5 maps took some 93 instructions per
 * output on u74-mc, most of them partial tiles, register spills around
 * the 4 x 2 accumulators and the line set-up of each band. Here, as the
 * float kernel's dw_flat does, the padded plane is stored once in one line
 * (both copies, see qdw_at), row after row, each row split into its stride
 * phases, so that every tap of an output row reads consecutive elements;
 * a plane larger than the line goes in bands of output rows. Each output
 * row is computed in tiles of QF_NV pairs (a pair x[e] + x[e + 1] 2^32
 * times the tap, see qdw_x), the last one whole with its excess dropped.
 * Per tap and pair: one load, one mul, one add. On u74-mc: DS-CNN's
 * depthwise layers 746K -> 499K instructions, MobileNetV1's 6x6 ones
 * 436K -> 260K. */
#ifndef CUVIL_KERNELS_OPT_QDW_FLAT_H
#define CUVIL_KERNELS_OPT_QDW_FLAT_H

#if CUVIL_SCALAR_BLOCKING

#define QF_NV 3 /* pairs per tile: 6 output positions */
#define QF_TW (2 * QF_NV)

/* The line's geometry. A padded row of the window's reach is stored as
 * its sw stride phases (phase q: padded columns q, q + sw, ...) of ph
 * elements each, rs = sw * ph a row; ph is even, so that a tap's pair
 * comes from a fixed copy (see qdw_at). The plane is computed in bands of
 * `band` output rows, the padded rows a band reads in the line; len:
 * elements per copy (those rows, plus the reach of the last row's last
 * tile). */
typedef struct {
  int64_t ph, rs, band, len;
} qf_geom;

/* Padded rows that n output rows read. */
INLINE int64_t qf_rows(const qdw_shape *s, int64_t n) {
  return (n - 1) * s->sh + (s->kh - 1) * s->dh + 1;
}

INLINE qf_geom qf_geom_of(const qdw_shape *s) {
  qf_geom f;
  const int64_t cols = (s->ow - 1) * s->sw + (s->kw - 1) * s->dw + 1;
  f.ph = (cols + s->sw - 1) / s->sw;
  f.ph += f.ph & 1;
  f.rs = s->sw * f.ph;
  /* The most rows in a copy: qdw_stride(len) <= QDW_LINE_ELEMS. */
  const int64_t room = (QDW_LINE_ELEMS - 2) / 2 - QF_TW - 2;
  f.band = room / f.rs < qf_rows(s, 1)
               ? 0
               : (room / f.rs - qf_rows(s, 1)) / s->sh + 1;
  f.band = f.band < s->oh ? f.band : s->oh;
  f.len = qf_rows(s, f.band) * f.rs + QF_TW + 2;
  return f;
}

/* Whether the flat form takes the shape: stride 1 or 2 both ways, and
 * bands of at least QF_MIN_BAND output rows (or the whole map) in the
 * line: each band reads its window's overlap with the next again. */
#define QF_MIN_BAND 4
INLINE int qf_takes(const qdw_shape *s, const qf_geom *f) {
  return s->sh == s->sw && (s->sw == 1 || s->sw == 2) &&
         (f->band >= QF_MIN_BAND || (f->band > 0 && f->band == s->oh));
}

/* Padded rows [r0, r0 + n) of plane xc into the line (p = f->len elements
 * a copy), the rest of it zp: padded row r is input row r - pad_top,
 * padded column c input column c - pad_left; zp outside; xoff added (see
 * qdw_x). */
INLINE void qf_fill(const qdw_shape *s, const qf_geom *f, qdw_el *line,
                    const uint8_t *xc, int64_t r0, int64_t n, int u8,
                    int32_t zp, int32_t xoff) {
  const int64_t p = f->len;
  /* Phase q's elements inside the input columns: [in0[q], in1[q]). */
  int64_t in0[2], in1[2];
  for (int64_t q = 0; q < s->sw; ++q)
    qdw_inside(q - s->pad_left, s->sw, s->wd, f->ph, &in0[q], &in1[q]);
  int64_t e = 0;
  for (int64_t r = r0; r < r0 + n; ++r, e += f->rs) {
    const int64_t iy = r - s->pad_top;
    const int row = iy >= 0 && iy < s->h;
    for (int64_t q = 0; q < s->sw; ++q) {
      qdw_el *d = line + e + q * f->ph;
      const int64_t a = row ? in0[q] : f->ph, b = row ? in1[q] : f->ph;
      for (int64_t i = 0; i < a; ++i)
        qdw_put(d, p, i, zp);
      if (a < b)
        qdw_copy2(d, p, a, b, xc + iy * s->wd, q - s->pad_left, s->sw, u8,
                  xoff);
      for (int64_t i = b; i < f->ph; ++i)
        qdw_put(d, p, i, zp);
    }
  }
  for (; e < p; ++e)
    qdw_put(line, p, e, zp);
}

/* qdw_at(line, p, 2 * e2 + odd), the pair index and parity apart: given
 * the element index, the optimiser lost track of its parity across the
 * tile loop and masked every address. */
INLINE qdw_x qf_at(const qdw_el *line, int64_t p, int64_t e2, int64_t odd) {
  return (int64_t)*(const qdw_pair *)(line + (odd ? p + 2 : 0) + 2 * e2);
}

/* Output positions [ox, ox + cols) of the band's row oy, to yr (cols <=
 * QF_TW; computed whole, ox even). Tap (ky, kx) of output column ox + j reads
 * element j + (kx dw) / sw of phase (kx dw) % sw of padded row oy sh + ky dh.
 */
INLINE void qf_tile(const qdw_shape *s, const qf_geom *f, const qdw_el *line,
                    int64_t oy, int64_t ox, int64_t cols,
                    const qdw_taps taps[QDW_TAP_VECTORS], int32_t bias,
                    const qdw_rq *q, uint8_t *yr) {
  /* Indices in pairs (rs, ph and ox are even). */
  const int64_t rs2 = f->rs / 2, ph2 = f->ph / 2;
  qdw_acc acc[QF_NV];
  for (int v = 0; v < QF_NV; ++v)
    acc[v] = qdw_acc_init(bias);
  for (int64_t ky = 0; ky < s->kh; ++ky)
    for (int64_t kx = 0; kx < s->kw; ++kx) {
      const int64_t col = kx * s->dw;
      const int64_t e2 =
          (oy * s->sh + ky * s->dh) * rs2 + col % s->sw * ph2 + ox / 2;
      const int64_t c = col / s->sw;
      for (int v = 0; v < QF_NV; ++v)
        qdw_mac(&acc[v], qf_at(line, f->len, e2 + v + c / 2, c & 1), taps,
                ky * s->kw + kx);
    }
  if (cols == QF_TW) {
    for (int v = 0; v < QF_NV; ++v) {
      const qdw_v8 b = qdw_requant(acc[v], q);
      yr[2 * v] = b[0];
      yr[2 * v + 1] = b[1];
    }
  } else {
    for (int v = 0; v < QF_NV; ++v) {
      const qdw_v8 b = qdw_requant(acc[v], q);
      for (int l = 0; l < 2; ++l)
        if (2 * v + l < cols)
          yr[2 * v + l] = b[l];
    }
  }
}

/* Every plane in the flat form: bands of f.band output rows, each output
 * row in tiles of QF_TW. */
INLINE void qf_planes(const qdw_shape *s, const qdw_args *a) {
  const qf_geom f = qf_geom_of(s);
  const int32_t xoff = a->x_type == CUVIL_Q_I8 ? 128 : 0;
  __attribute__((aligned(16))) qdw_el line[QDW_LINE_ELEMS];
  for (int64_t pl = 0; pl < a->planes; ++pl) {
    qdw_taps taps[QDW_TAP_VECTORS];
    int32_t bias;
    qdw_rq q;
    qdw_channel(s, a, pl % a->c, xoff, taps, &bias, &q);
    const uint8_t *xc = (const uint8_t *)a->x + pl * s->h * s->wd;
    uint8_t *y = a->y + pl * s->oh * s->ow;
    for (int64_t oy0 = 0; oy0 < s->oh; oy0 += f.band) {
      const int64_t rows = s->oh - oy0 < f.band ? s->oh - oy0 : f.band;
      qf_fill(s, &f, line, xc, oy0 * s->sh, qf_rows(s, rows),
              a->x_type == CUVIL_Q_U8, (int32_t)a->x_zp + xoff, xoff);
      for (int64_t oy = 0; oy < rows; ++oy)
        for (int64_t ox = 0; ox < s->ow; ox += QF_TW)
          qf_tile(s, &f, line, oy, ox, s->ow - ox < QF_TW ? s->ow - ox : QF_TW,
                  taps, bias, &q, y + (oy0 + oy) * s->ow + ox);
    }
  }
}

QDW_FAMILY(qf, qf_planes)

/* Runs the convolution in the flat form if it takes the shape (a->wsum
 * present for int8 inputs: the caller checked). */
INLINE int qf_run(const qdw_shape *s, const qdw_args *a) {
  const qf_geom f = qf_geom_of(s);
  if (!qf_takes(s, &f))
    return 0;
  QDW_DISPATCH(qf, s, a);
  return 1;
}

#endif /* CUVIL_SCALAR_BLOCKING */

#endif
