/* The lines of the INT8 depthwise kernel (qdepthwise.c): the input rows a
 * band of output rows reads, widened into the stack line buffer, padded
 * with the input zero point and split by stride phase (stored twice on
 * one-lane targets, for aligned pair loads), so that the tiles need no
 * bounds checks. Included by qdepthwise.c only, after its element types
 * (qdw_el, qdw_shape, QDW_COPIES...). */
#ifndef CUVIL_KERNELS_OPT_QDW_LINES_H
#define CUVIL_KERNELS_OPT_QDW_LINES_H

/* Output index o reads input index o * stride + off: the output range
 * whose input index lies in [0, size), as first_inside / end_inside. */
INLINE void qdw_inside(int64_t off, int64_t stride, int64_t size, int64_t n,
                       int64_t *a, int64_t *b) {
  *a = first_inside(off, stride);
  *a = *a > n ? n : *a;
  *b = end_inside(off, stride, size, n);
  *b = *b < *a ? *a : *b;
}

/* Elements of one phase of a line, its copies included: on one-lane
 * targets the second copy starts 2 past the first's p elements, and holds
 * element i at index i - 1 (so element 0 lands in a spare slot). */
INLINE int64_t qdw_stride(int64_t p) { return QDW_COPIES == 1 ? p : 2 * p + 2; }

/* Element i of the phase at d (p elements a copy) is v, in both copies. */
INLINE void qdw_put(qdw_el *d, int64_t p, int64_t i, int32_t v) {
  d[i] = (qdw_el)v;
  if (QDW_COPIES > 1)
    d[p + 1 + i] = (qdw_el)v;
}

#if CUVIL_SCALAR_BLOCKING
/* Elements [a, b) of the phase at d (p elements a copy), both copies, from
 * bytes row[from + i * sw] (+ xoff when int8): each copy through its own
 * pointer, unrolled by 2 (indexed through qdw_put, the optimiser kept five
 * induction variables: 23 instructions for 4 elements; unrolled by 4, the
 * tiles of the same function took more than the fill saved on stride 2). */
INLINE void qdw_copy2(qdw_el *d, int64_t p, int64_t a, int64_t b,
                      const void *row, int64_t from, int64_t sw, int u8,
                      int32_t xoff) {
  qdw_el *d0 = d + a, *d1 = d + p + 1 + a;
  const qdw_el *const end = d + b;
  if (u8) {
    const uint8_t *r = (const uint8_t *)row + from + a * sw;
    CUVIL_UNROLL_BY(2)
    for (; d0 < end; ++d0, ++d1, r += sw)
      *d0 = *d1 = *r;
  } else {
    const int8_t *r = (const int8_t *)row + from + a * sw;
    CUVIL_UNROLL_BY(2)
    for (; d0 < end; ++d0, ++d1, r += sw)
      *d0 = *d1 = *r + xoff;
  }
}
#endif

/* Fills the line at dst (sw phases) with input row `row` (0: a padding
 * row), columns col0 + ph + i * sw, zp outside the row; plus xoff (see
 * qdw_x). */
INLINE void qdw_fill(const qdw_shape *s, qdw_el *dst, const void *row,
                     int64_t x_type, int64_t col0, int64_t p, int32_t zp,
                     int32_t xoff, const uint8_t *x_end) {
#if !CUVIL_SCALAR_BLOCKING
  /* Stride 1, vector targets: whole vectors (element loops cost more than
   * the tiles on narrow maps): padding, row, padding, each overwriting the
   * previous one's excess; the last reach < QDW_VL past the line, into the
   * next line (filled later) or the slack. Reads past the row stay inside
   * x, else the element loops below run. */
  if (s->sw == 1) {
    int64_t a = p, b = p;
    if (row)
      qdw_inside(col0, 1, s->wd, p, &a, &b);
    const uint8_t *r = row ? (const uint8_t *)row + col0 : x_end;
    if (!row || r + a + (b - a + QDW_VL - 1) / QDW_VL * QDW_VL <= x_end) {
      qdw_v16 z;
      for (int l = 0; l < QDW_VL; ++l)
        z[l] = (int16_t)zp;
      for (int64_t i = 0; i < a; i += QDW_VL)
        __builtin_memcpy(dst + i, &z, sizeof z);
      for (int64_t i = a; i < b; i += QDW_VL) {
        qdw_v8 u;
        __builtin_memcpy(&u, r + i, sizeof u);
        const qdw_v16 v = x_type == CUVIL_Q_U8
                              ? __builtin_convertvector(u, qdw_v16)
                              : __builtin_convertvector((qdw_s8)u, qdw_v16);
        __builtin_memcpy(dst + i, &v, sizeof v);
      }
      for (int64_t i = b; i < p; i += QDW_VL)
        __builtin_memcpy(dst + i, &z, sizeof z);
      return;
    }
  }
#else
  (void)x_end;
#endif
  for (int64_t ph = 0; ph < s->sw; ++ph) {
    qdw_el *d = dst + ph * qdw_stride(p);
    int64_t a = p, b = p;
    if (row)
      qdw_inside(col0 + ph, s->sw, s->wd, p, &a, &b);
    for (int64_t i = 0; i < a; ++i)
      qdw_put(d, p, i, zp);
    const int64_t from = col0 + ph;
    /* A padding row (null) has nothing inside: a == b == p. */
#if CUVIL_SCALAR_BLOCKING
    if (row)
      qdw_copy2(d, p, a, b, row, from, s->sw, x_type == CUVIL_Q_U8, xoff);
#else
    if (!row) {
    } else if (x_type == CUVIL_Q_U8) {
      const uint8_t *r = (const uint8_t *)row + from;
      for (int64_t i = a; i < b; ++i)
        qdw_put(d, p, i, r[i * s->sw]);
    } else {
      const int8_t *r = (const int8_t *)row + from;
      for (int64_t i = a; i < b; ++i)
        qdw_put(d, p, i, r[i * s->sw] + xoff);
    }
#endif
    for (int64_t i = b; i < p; ++i)
      qdw_put(d, p, i, zp);
  }
}

#endif
