/* Reference data movement: copies and transposition. */
#include <stddef.h>

#include "cuvil/kernels.h"

/* A 4-byte element of any type (float, int32, ...). may_alias: after
 * inlining, these accesses sit next to the float accesses of the kernels
 * that produce and consume the data, and type-based alias analysis must not
 * separate them. */
typedef uint32_t __attribute__((may_alias)) cuvil_b32_t;

static void copy_bytes(const unsigned char *src, unsigned char *dst,
                       int64_t nbytes) {
  for (int64_t i = 0; i < nbytes; ++i)
    dst[i] = src[i];
}

void cuvil_k_copy(const void *src, void *dst, int64_t nbytes) {
  /* A copy the planner made redundant by placing both tensors at the same
   * address: write nothing, the buffer may be read-only. */
  if (src == dst)
    return;
  copy_bytes(src, dst, nbytes);
}

void cuvil_k_copy_rows(const void *src, void *dst, int64_t rows,
                       int64_t row_bytes, int64_t src_stride,
                       int64_t dst_stride) {
  const unsigned char *s = src;
  unsigned char *d = dst;
  for (int64_t r = 0; r < rows; ++r)
    copy_bytes(s + r * src_stride, d + r * dst_stride, row_bytes);
}

/* restrict: x and y never overlap (a Transpose is not computed in place).
 * Said on the parameters of an inlined function, so that it reaches the
 * optimiser: without it, the loads and stores of a strided run stay one
 * element each, since any store might change a later load. */
static inline __attribute__((always_inline)) void
transpose_b32(const cuvil_b32_t *restrict xs, cuvil_b32_t *restrict yd,
              const int64_t *s, const int64_t *st) {
  for (int64_t i0 = 0; i0 < s[0]; ++i0)
    for (int64_t i1 = 0; i1 < s[1]; ++i1)
      for (int64_t i2 = 0; i2 < s[2]; ++i2)
        for (int64_t i3 = 0; i3 < s[3]; ++i3)
          for (int64_t i4 = 0; i4 < s[4]; ++i4) {
            const cuvil_b32_t *xr = xs + i0 * st[0] + i1 * st[1] + i2 * st[2] +
                                    i3 * st[3] + i4 * st[4];
            /* y is dense. Indexing it from the loop counters (not a running
             * count) lets LLVM relate its addresses to those of x. */
            cuvil_b32_t *yr =
                yd +
                ((((i0 * s[1] + i1) * s[2] + i2) * s[3] + i3) * s[4] + i4) *
                    s[5];
#if !defined(__riscv)
            if (st[5] == 1) {
              /* The last axis kept: a run of s[5] elements, one block copy
               * (vector loads and stores of a length known at compile
               * time). Not on RV64GC: without vector registers its copy is
               * word by word, and measured 0.2% slower than the loop. */
              __builtin_memcpy(yr, xr, (size_t)s[5] * sizeof *yr);
              continue;
            }
#endif
            for (int64_t i5 = 0; i5 < s[5]; ++i5)
              yr[i5] = xr[i5 * st[5]];
          }
}

void cuvil_k_transpose_b32(const void *x, void *y, const int64_t *out_shape,
                           const int64_t *in_str) {
  _Static_assert(CUVIL_MAX_RANK == 6,
                 "the loop nest below spans CUVIL_MAX_RANK dimensions");
  transpose_b32(x, y, out_shape, in_str);
}
