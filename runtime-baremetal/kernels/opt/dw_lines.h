/* The lines of the depthwise kernel (depthwise.c): the input rows a slab
 * of output bands reads, copied into a stack buffer with zero padding on
 * every side, so that the tiles need no bounds checks. Here: the buffer's
 * budget, the shape facts every depthwise helper shares, how long a line
 * is, and how a line is filled on each kind of target (whole vectors;
 * masked 16-lane loads with AVX-512, deinterleaved at stride 2; 64-bit
 * pairs for long lines on one-lane targets). Included by depthwise.c only. */
#ifndef CUVIL_KERNELS_OPT_DW_LINES_H
#define CUVIL_KERNELS_OPT_DW_LINES_H

#include "blocking.h"

#define INLINE static inline __attribute__((always_inline))

/* The stack budget of the lines: 4 KiB on the boards; 16 KiB on x86-64
 * (a Linux host's stack), where 16-lane tiles need wide lines. */
#if defined(__x86_64__)
#define CUVIL_DW_LINE_FLOATS 4096
#else
#define CUVIL_DW_LINE_FLOATS 1024
#endif

/* Shape and stride facts every helper needs (constants once inlined). */
typedef struct {
  int64_t h, wd, kh, kw, oh, ow, sh, sw, dh, dw, pad_top, pad_left;
  int64_t rows; /* output rows per band, at most CUVIL_DW_R */
} dw_shape;

/* Lines per slab of `bands` bands: the input rows they read. */
INLINE int64_t slab_lines(const dw_shape *s, int64_t bands) {
  return (bands * s->rows - 1) * s->sh + (s->kh - 1) * s->dh + 1;
}

/* Whether lines of n floats are moved two floats per 64-bit load and
 * store: on scalar targets, for long lines. A float copy costs RV64 five
 * instructions a float once the loop no longer unrolls whole, and a
 * stride-2 layer uses each input float for only 2.25 multiply-adds; short
 * lines unroll whole into float moves at known offsets, which are as cheap
 * and need no alignment. dw_slab places pair lines so that each agrees
 * with its input row modulo 8 bytes (line_shift). */
#define CUVIL_DW_PAIR_FLOATS 64

INLINE int pair_lines(int64_t n) {
  return CUVIL_VL == 1 && n >= CUVIL_DW_PAIR_FLOATS;
}

/* Whether stride-2 lines are stored deinterleaved (AVX-512): each group
 * of 2 * CUVIL_VL floats as its even floats, then its odd ones, so that a
 * tap reads whole aligned vectors and shifts lanes at most once, where
 * gathering the even or odd lanes of the row costs two loads and a
 * shuffle per tap (MobileNetV1 on host-avx512: about 2.5% faster). */
INLINE int split_lines(const dw_shape *s) {
  return CUVIL_HAS_MASKED_LOAD && s->sw == 2;
}

/* Floats of one line for `cols` output columns: the columns their tiles'
 * vectors read (whole vectors, so the tail vector's spare lanes read
 * zeros), plus slack for the whole-vector loads of tap_vector (one vector
 * past the last input at stride 1, three at stride 2). */
INLINE int64_t line_floats(const dw_shape *s, int64_t cols) {
  const int64_t padded = (cols + CUVIL_VL - 1) / CUVIL_VL * CUVIL_VL;
  const int64_t slack = s->sw == 2 ? 3 * CUVIL_VL : CUVIL_VL;
  const int64_t n = (padded - 1) * s->sw + (s->kw - 1) * s->dw + 1 + slack;
  if (pair_lines(n)) /* as many floats as an input row, modulo 2 */
    return n + ((n - s->wd) & 1);
  const int64_t unit =
      split_lines(s) ? 2 * CUVIL_VL : CUVIL_VL; /* whole groups */
  return (n + unit - 1) / unit * unit;
}

/* Zeros and copies for pair lines, whose floats agree with their input
 * modulo 8 bytes (checked: where they do not, floats are moved one by
 * one). */
typedef uint64_t cuvil_pair __attribute__((aligned(8), may_alias));

INLINE void zero_pairs(float *dst, int64_t n) {
  if (n > 0 && ((uintptr_t)dst & 7) != 0) {
    *dst++ = 0.0f;
    --n;
  }
  CUVIL_UNROLL_BY(4)
  for (int64_t k = 0; k < n / 2; ++k)
    ((cuvil_pair *)dst)[k] = 0;
  if (n & 1)
    dst[n - 1] = 0.0f;
}

INLINE void copy_pairs(float *dst, const float *src, int64_t n) {
  if (n > 0 && ((uintptr_t)dst & 7) != 0) {
    *dst++ = *src++;
    --n;
  }
  if ((((uintptr_t)dst ^ (uintptr_t)src) & 7) == 0) {
    const int64_t pairs = n / 2;
    CUVIL_UNROLL_BY(4)
    for (int64_t k = 0; k < pairs; ++k)
      ((cuvil_pair *)dst)[k] = ((const cuvil_pair *)src)[k];
    dst += 2 * pairs;
    src += 2 * pairs;
    n -= 2 * pairs;
  }
#if defined(__clang__)
#pragma clang loop vectorize(disable) unroll(disable)
#endif
  for (int64_t k = 0; k < n; ++k)
    dst[k] = src[k];
}

/* Zeros in whole vectors over [0, n) (rounded up to a vector): padding. */
INLINE void zero_lines(float *dst, int64_t n) {
  const cuvil_vf zero = cuvil_vf_splat(0.0f);
  for (int64_t i = 0; i < n; i += CUVIL_VL)
    cuvil_vf_store(dst + i, &zero);
}

/* Zeros over [0, n): a pair line's, or whole vectors (see zero_lines). */
INLINE void zero_span(float *dst, int64_t n, int pairs) {
  if (pairs)
    zero_pairs(dst, n);
  else
    zero_lines(dst, n);
}

/* dst[i] = row[col0 + i] where that lies in [0, wd), else 0, for i in
 * [0, n) (n a multiple of CUVIL_VL, or a pair line); with split (AVX-512,
 * stride 2), in the deinterleaved order of split_lines. Without masked
 * loads the zeros go first, in whole vectors (which may overlap the
 * copied part), then the copy: so every store but the copy's last few is
 * a vector. */
INLINE void fill_line(float *dst, const float *row, int64_t col0, int64_t n,
                      int64_t wd, int pairs, int split) {
  (void)split;
  int64_t a = -col0;
  a = a < 0 ? 0 : a > n ? n : a;
  int64_t b = wd - col0;
  b = b < a ? a : b > n ? n : b;
  if (pairs) {
    zero_span(dst, a, 1);
    zero_span(dst + b, n - b, 1);
    copy_pairs(dst + a, row + col0 + a, b - a);
    return;
  }
#if CUVIL_HAS_MASKED_LOAD
  if (split) {
    for (int64_t j = 0; j < n; j += 2 * CUVIL_VL) {
      const cuvil_vf lo = cuvil_vf_load_lanes(row, col0 + j, a - j, b - j);
      const cuvil_vf hi = cuvil_vf_load_lanes(
          row, col0 + j + CUVIL_VL, a - j - CUVIL_VL, b - j - CUVIL_VL);
      const cuvil_vf even = __builtin_shufflevector(
          lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
      const cuvil_vf odd = __builtin_shufflevector(
          lo, hi, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
      cuvil_vf_store(dst + j, &even);
      cuvil_vf_store(dst + j + CUVIL_VL, &odd);
    }
    return;
  }
  /* Every vector of the line in one masked load and one aligned store:
   * no separate zeros, no float-by-float tail (16-lane lines leave tails
   * of up to 15 floats), and the tiles' aligned loads of the line each
   * read one earlier store (a store they overlap only in part would
   * delay them: MobileNetV1's 6x6 layers ran 2 times slower so). */
  for (int64_t j = 0; j < n; j += CUVIL_VL) {
    const cuvil_vf v = cuvil_vf_load_lanes(row, col0 + j, a - j, b - j);
    cuvil_vf_store(dst + j, &v);
  }
#else
  zero_lines(dst, a);
  zero_lines(dst + b / CUVIL_VL * CUVIL_VL, n - b / CUVIL_VL * CUVIL_VL);
  int64_t i = a;
  for (; i + CUVIL_VL <= b; i += CUVIL_VL) {
    const cuvil_vf v = cuvil_vf_load(row + col0 + i);
    cuvil_vf_store(dst + i, &v);
  }
#if defined(__clang__)
#pragma clang loop vectorize(disable)
#endif
  for (; i < b; ++i)
    dst[i] = row[col0 + i];
#endif
}

/* Where the lines start in the buffer, 0 or 1 floats in: pair lines start
 * at the address of their input modulo 8. xc + first is the input of
 * line 0's column 0 (first: its flat index in the plane, negative above
 * or left of it when padded); lines are as long as input rows modulo 2
 * (line_floats), so the others agree too. The buffer has a float to spare
 * for this. */
INLINE int64_t line_shift(const float *xc, int64_t first, int64_t lw) {
  if (!pair_lines(lw))
    return 0;
  return (int64_t)((((uintptr_t)xc >> 2) + (uint64_t)first) & 1);
}

#endif
