/*
 * Register blocking of the packed convolution / matrix-product kernels.
 *
 * One C source serves every target: the block is CUVIL_NR output positions
 * by CUVIL_MR output channels, held in CUVIL_NR x CUVIL_MV registers of
 * CUVIL_VL floats, and only these numbers depend on the target's register
 * file. Per reduction step the kernel loads CUVIL_MV weight vectors (the
 * weights are packed at compile time so they stream contiguously), loads
 * one input value per position, and issues CUVIL_NR x CUVIL_MV fused
 * multiply-adds, each input value broadcast against the channel lanes.
 *
 *   AArch64 (NEON, 32 x 128-bit): 4 lanes, 4 x 6 accumulators + 4 weight
 *       vectors + a broadcast = 29 registers; 24 FMAs (96 MACs) per 10 loads.
 *   x86-64 AVX2 (16 x 256-bit): 8 lanes, 2 x 6 accumulators + 2 weights +
 *       a broadcast = 15 registers.
 *   x86-64 AVX-512 (32 x 512-bit; the host-avx512 target): 16 lanes,
 *       2 x 10 accumulators + 2 weights + a broadcast (2 x 12 for 1x1
 *       kernels: 27 of the 32 registers).
 *   RV64GC (no vector unit; 32 FP registers): 1 lane, so a 4 x 5 block of
 *       scalar accumulators + 4 weights + the inputs of the unrolled kernel
 *       row; each load is amortised over 4 or 5 fmadd. (4 x 6 left too few
 *       registers for the inputs: the block spilled accumulators.)
 *   anything else: a small 4-lane block the compiler can always map.
 *
 * cuvilc packs weights for CUVIL_MR output channels; it reads the value the
 * kernel library was built with (the exported constant cuvil_k_pack_mr), so
 * the two cannot disagree.
 */
#ifndef CUVIL_KERNELS_OPT_BLOCKING_H
#define CUVIL_KERNELS_OPT_BLOCKING_H

#include <stdint.h>

/* Scalar blocking: RV64GC, or any host when CUVIL_BLOCKING_SCALAR is
 * defined (the unit tests build the kernels so too, to run the one-lane
 * paths on the build machine). */
#if (defined(__riscv) && !defined(__riscv_vector)) ||                          \
    defined(CUVIL_BLOCKING_SCALAR)
#define CUVIL_SCALAR_BLOCKING 1
#else
#define CUVIL_SCALAR_BLOCKING 0
#endif

#if CUVIL_SCALAR_BLOCKING
#define CUVIL_VL 1
#define CUVIL_MV 4
#define CUVIL_NR 5
#elif defined(__aarch64__)
#define CUVIL_VL 4
#define CUVIL_MV 4
#define CUVIL_NR 6
#elif defined(__x86_64__) && defined(__AVX512F__)
#define CUVIL_VL 16
#define CUVIL_MV 2
#define CUVIL_NR 10
#elif defined(__x86_64__) && defined(__AVX2__)
#define CUVIL_VL 8
#define CUVIL_MV 2
#define CUVIL_NR 6
#else
#define CUVIL_VL 4
#define CUVIL_MV 2
#define CUVIL_NR 4
#endif

#define CUVIL_MR (CUVIL_VL * CUVIL_MV)

/* Positions per block of a 1x1 convolution. Without a kernel row to walk,
 * no input value is reused across taps, so fewer registers hold inputs and
 * RV64 fits a wider block (4 x 6; 4 x 5 for larger kernels). */
#if CUVIL_SCALAR_BLOCKING
#define CUVIL_NR_1X1 6
#elif CUVIL_VL == 16
/* AVX-512: 2 x 12 accumulators for 1x1 kernels; larger kernels take 2 x 10,
 * whose unrolled taps keep the code within budget (ResNet-8: +71 KiB of
 * .text over the portable build with 12, +50 with 10, and 10% slower
 * with 8). */
#define CUVIL_NR_1X1 12
#else
#define CUVIL_NR_1X1 CUVIL_NR
#endif
#define CUVIL_NR_MAX (CUVIL_NR_1X1 > CUVIL_NR ? CUVIL_NR_1X1 : CUVIL_NR)

/* Input channels per iteration of a 1x1 convolution's reduction loop: the
 * loop's own instructions (pointer steps, the branch) are spread over that
 * many steps. Eight pays on RV64, whose step is 10 loads and 24 fmadd;
 * on the vector targets it measured worse than four (MobileNetV2 on a78:
 * 0.48 against 0.44 instructions per MAC). */
#if CUVIL_SCALAR_BLOCKING
#define CUVIL_UNROLL_1X1 8
#else
#define CUVIL_UNROLL_1X1 4
#endif

/* Loops over the block's registers must be unrolled completely: a register
 * array indexed by a loop variable stays in memory (the accumulators would
 * be stored on every multiply-add). The optimiser's cost model sometimes
 * declines, so every such loop says so. */
/* And a loop the optimiser must leave as written (CUVIL_PLAIN: nor
 * vectorised), where unrolling costs more set-up than it saves: a short
 * trip count, or many address streams. */
#if defined(__clang__)
#define CUVIL_UNROLL _Pragma("clang loop unroll(full)")
#define CUVIL_UNROLL_BY(n) _Pragma(CUVIL_STR(clang loop unroll_count(n)))
#define CUVIL_NO_UNROLL _Pragma("clang loop unroll(disable)")
#define CUVIL_PLAIN _Pragma("clang loop unroll(disable) vectorize(disable)")
#else
#define CUVIL_UNROLL _Pragma("GCC unroll 32")
#define CUVIL_UNROLL_BY(n) _Pragma(CUVIL_STR(GCC unroll n))
#define CUVIL_NO_UNROLL _Pragma("GCC unroll 1")
#define CUVIL_PLAIN _Pragma("GCC unroll 1")
#endif
#define CUVIL_STR(x) #x

/* The signed digit in the low `bits` bits of a: one lane of the words
 * that hold two or three int8 sums on one-lane targets (qblocking.h,
 * qdw_cols.h). */
static inline __attribute__((always_inline)) int64_t cuvil_qdigit(uint64_t a,
                                                                  int bits) {
  return (int64_t)(a << (64 - bits)) >> (64 - bits);
}

/* Depthwise convolution: a tile of up to CUVIL_DW_R output rows by
 * CUVIL_DW_NV vectors of output columns. The accumulators (R x NV
 * registers) and the broadcast 3x3 weights (9 registers) must fit the
 * register file: 16 + 9 of 32 on AArch64 and RV64 (scalar lanes), 4 + 9 of
 * AVX2's 16, 8 + 9 of AVX-512's 32 (one vector wide: 16 lanes are wider
 * than most late-network maps; 8 rows, each input vector loaded and
 * shifted serving up to 3 of them, measured 3-4% faster on MobileNetV2 than
 * 4, whose 7x7 layers took two bands). */
#if CUVIL_VL == 1 || defined(__aarch64__)
#define CUVIL_DW_R 4
#define CUVIL_DW_NV 4
#elif CUVIL_VL == 16
#define CUVIL_DW_R 8
#define CUVIL_DW_NV 1
#else
#define CUVIL_DW_R 2
#define CUVIL_DW_NV 2
#endif

/* A vector of CUVIL_VL floats (a register); memory is read and written
 * through cuvil_vf_load and memcpy, which allow any float-aligned address. */
typedef float cuvil_vf __attribute__((vector_size(CUVIL_VL * sizeof(float))));

static inline __attribute__((always_inline)) cuvil_vf
cuvil_vf_load(const float *p) {
  cuvil_vf v;
#if CUVIL_VL == 1
  /* A float load: a 4-byte memcpy is an integer one to the optimiser, and
   * may make it retype one-lane accumulators as integers. */
  v[0] = *p;
#else
  __builtin_memcpy(&v, p, sizeof v);
#endif
  return v;
}

/* Stores *v at p (any float-aligned address); a float store for one lane.
 * Helpers whose result is stored take and give vectors by pointer: the
 * RV64 calling convention passes a one-lane vector as an integer, and
 * after inlining the optimiser may keep that integer form (a move to an
 * integer register before every store). */
static inline __attribute__((always_inline)) void
cuvil_vf_store(float *p, const cuvil_vf *v) {
#if CUVIL_VL == 1
  *p = (*v)[0];
#else
  __builtin_memcpy(p, v, sizeof *v);
#endif
}

/* The first n (1 <= n <= CUVIL_VL) floats at p into the low lanes (the
 * others 0), and the low n lanes of *v to p: a whole vector when n is. */
static inline __attribute__((always_inline)) cuvil_vf
cuvil_vf_load_n(const float *p, int n) {
  cuvil_vf v = {0};
  __builtin_memcpy(&v, p, (unsigned)n * sizeof(float));
  return v;
}

static inline __attribute__((always_inline)) void
cuvil_vf_store_n(float *p, const cuvil_vf *v, int n) {
  if (n == CUVIL_VL)
    cuvil_vf_store(p, v);
  else
    __builtin_memcpy(p, v, (unsigned)n * sizeof(float));
}

/* AVX-512: lanes [lo, hi) of the vector at float index `at` of row (lane l
 * reads row[at + l]), the others 0, in one masked load. The masked lanes
 * are not read, so `at` may lie outside the row (a padded line's first
 * vector starts before it); lo and hi are clamped to [0, CUVIL_VL]. */
#if CUVIL_VL == 16 && defined(__AVX512F__)
#include <immintrin.h>
#define CUVIL_HAS_MASKED_LOAD 1
static inline __attribute__((always_inline)) cuvil_vf
cuvil_vf_load_lanes(const float *row, int64_t at, int64_t lo, int64_t hi) {
  lo = lo < 0 ? 0 : lo > CUVIL_VL ? CUVIL_VL : lo;
  hi = hi < lo ? lo : hi > CUVIL_VL ? CUVIL_VL : hi;
  const __mmask16 m = (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
  const void *p =
      (const void *)((uintptr_t)row + (uintptr_t)(at * (int64_t)sizeof(float)));
  return (cuvil_vf)_mm512_maskz_loadu_ps(m, p);
}
#else
#define CUVIL_HAS_MASKED_LOAD 0
#endif

/* Transposes the CUVIL_VL x CUVIL_VL matrix whose rows are r[0..VL): lane l
 * of r[i] becomes lane i of r[l] (unpack / shuffle stages). */
static inline __attribute__((always_inline)) void
cuvil_vf_transpose(cuvil_vf r[CUVIL_VL]) {
#if CUVIL_VL == 4
  const cuvil_vf t0 = __builtin_shufflevector(r[0], r[1], 0, 4, 1, 5);
  const cuvil_vf t1 = __builtin_shufflevector(r[0], r[1], 2, 6, 3, 7);
  const cuvil_vf t2 = __builtin_shufflevector(r[2], r[3], 0, 4, 1, 5);
  const cuvil_vf t3 = __builtin_shufflevector(r[2], r[3], 2, 6, 3, 7);
  r[0] = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);
  r[1] = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
  r[2] = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
  r[3] = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
#elif CUVIL_VL == 8
  cuvil_vf t[8], u[8];
  for (int k = 0; k < 8; k += 2) {
    t[k] = __builtin_shufflevector(r[k], r[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[k + 1] =
        __builtin_shufflevector(r[k], r[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int k = 0; k < 8; k += 4)
    for (int h = 0; h < 2; ++h) {
      u[k + 2 * h] = __builtin_shufflevector(t[k + h], t[k + h + 2], 0, 1, 8, 9,
                                             4, 5, 12, 13);
      u[k + 2 * h + 1] = __builtin_shufflevector(t[k + h], t[k + h + 2], 2, 3,
                                                 10, 11, 6, 7, 14, 15);
    }
  for (int l = 0; l < 4; ++l) {
    r[l] = __builtin_shufflevector(u[l], u[l + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    r[l + 4] =
        __builtin_shufflevector(u[l], u[l + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
#elif CUVIL_VL == 16
  /* Four stages of block swaps: for rows i and i + b (i & b == 0), the
   * lanes of row i with bit b set trade places with the lanes of row i + b
   * with bit b clear. */
#define CUVIL_T_LO(l, b) (((l) & (b)) ? 16 + (l) - (b) : (l))
#define CUVIL_T_HI(l, b) (((l) & (b)) ? 16 + (l) : (l) + (b))
#define CUVIL_T_IDX(F, b)                                                      \
  F(0, b), F(1, b), F(2, b), F(3, b), F(4, b), F(5, b), F(6, b), F(7, b),      \
      F(8, b), F(9, b), F(10, b), F(11, b), F(12, b), F(13, b), F(14, b),      \
      F(15, b)
#define CUVIL_T_STAGE(b)                                                       \
  for (int i = 0; i < 16; ++i)                                                 \
    if (!(i & (b))) {                                                          \
      const cuvil_vf lo = __builtin_shufflevector(r[i], r[i + (b)],            \
                                                  CUVIL_T_IDX(CUVIL_T_LO, b)); \
      r[i + (b)] = __builtin_shufflevector(r[i], r[i + (b)],                   \
                                           CUVIL_T_IDX(CUVIL_T_HI, b));        \
      r[i] = lo;                                                               \
    }
  CUVIL_T_STAGE(8)
  CUVIL_T_STAGE(4)
  CUVIL_T_STAGE(2)
  CUVIL_T_STAGE(1)
#undef CUVIL_T_STAGE
#undef CUVIL_T_IDX
#undef CUVIL_T_HI
#undef CUVIL_T_LO
#elif CUVIL_VL != 1
#error "cuvil_vf_transpose: no shuffles for this vector length"
#endif
  (void)r;
}

/* Every lane x. (Not `(cuvil_vf){0} + x`: without fast-math, 0 + x is not
 * x for x = -0, so that form costs an add per broadcast.) */
static inline __attribute__((always_inline)) cuvil_vf cuvil_vf_splat(float x) {
  cuvil_vf v;
  for (int l = 0; l < CUVIL_VL; ++l)
    v[l] = x;
  return v;
}

/* Lanes odd, odd + 2, odd + 4, ... (odd = 0 or 1) of the 2 * CUVIL_VL
 * floats at p: the inputs of CUVIL_VL consecutive outputs of a stride-2
 * window (one deinterleaving shuffle where the target has vectors). */
static inline __attribute__((always_inline)) cuvil_vf
cuvil_vf_load_half(const float *p, int odd) {
#if CUVIL_VL == 1
  return cuvil_vf_load(p + odd);
#else
  const cuvil_vf a = cuvil_vf_load(p), b = cuvil_vf_load(p + CUVIL_VL);
#if CUVIL_VL == 4
  return odd ? __builtin_shufflevector(a, b, 1, 3, 5, 7)
             : __builtin_shufflevector(a, b, 0, 2, 4, 6);
#elif CUVIL_VL == 8
  return odd ? __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15)
             : __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
#elif CUVIL_VL == 16
  return odd ? __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19,
                                       21, 23, 25, 27, 29, 31)
             : __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
                                       20, 22, 24, 26, 28, 30);
#else
#error "cuvil_vf_load_half: no shuffle for this vector length"
#endif
#endif
}

/* *v clamped lane-wise to [lo, hi], in place.
 *
 * With no_nan (the caller knows no lane is NaN): max then min (maxnum and
 * minnum, an instruction each where the target has them). An infinite
 * bound is skipped explicitly: maxnum(x, -inf) is not x for a NaN x, so
 * the optimiser cannot drop it by itself.
 *
 * Otherwise as cuvil_clampf (a NaN stays NaN): vector compares and bitwise
 * selects (a lane loop is not reliably vectorised: inside a large unrolled
 * tile it became a compare and a select per lane), or float selects for
 * one lane. A bound of -inf or +inf folds away (no lane compares below
 * -inf or above +inf). */
typedef int32_t cuvil_vi
    __attribute__((vector_size(CUVIL_VL * sizeof(int32_t))));

static inline __attribute__((always_inline)) void
cuvil_vf_clamp(cuvil_vf *v, float lo, float hi, int no_nan) {
  if (no_nan) {
    for (int l = 0; l < CUVIL_VL; ++l) {
      if (lo > -__builtin_inff())
        (*v)[l] = __builtin_fmaxf((*v)[l], lo);
      if (hi < __builtin_inff())
        (*v)[l] = __builtin_fminf((*v)[l], hi);
    }
    return;
  }
#if CUVIL_VL == 1
  (*v)[0] = (*v)[0] < lo ? lo : (*v)[0];
  (*v)[0] = (*v)[0] > hi ? hi : (*v)[0];
#else
  const cuvil_vf vlo = cuvil_vf_splat(lo), vhi = cuvil_vf_splat(hi);
  const cuvil_vi below = (cuvil_vi)(*v < vlo);
  cuvil_vi r = (below & (cuvil_vi)vlo) | (~below & (cuvil_vi)*v);
  const cuvil_vi above = (cuvil_vi)((cuvil_vf)r > vhi);
  r = (above & (cuvil_vi)vhi) | (~above & r);
  *v = (cuvil_vf)r;
#endif
}

/* Whether none of the n vectors at v holds a NaN, on one-lane targets: the
 * NaN-preserving clamp is a compare and a branch per value there (RV64 has
 * no floating-point select), so a block of results takes the cheap
 * no_nan clamp when the sum of its values is not NaN (one add per
 * value; an infinity of either sign, which may make the sum NaN, only
 * sends the block to the exact path). Elsewhere the vector clamp is
 * already cheap and this is 0, so callers' fast paths fold away. */
static inline __attribute__((always_inline)) int
cuvil_vf_none_nan(const cuvil_vf *v, int n) {
#if CUVIL_VL == 1
  float sum = v[0][0];
  for (int i = 1; i < n; ++i)
    sum += v[i][0];
  return sum == sum;
#else
  (void)v;
  (void)n;
  return 0;
#endif
}

/* Window arithmetic shared by the convolution kernels. */
/* For output index o the input index is o * stride + off: the range of
 * output indices whose input index lies in [0, size). */
static inline __attribute__((always_inline)) int64_t
first_inside(int64_t off, int64_t stride) {
  return off >= 0 ? 0 : (stride - 1 - off) / stride;
}

static inline __attribute__((always_inline)) int64_t end_inside(int64_t off,
                                                                int64_t stride,
                                                                int64_t size,
                                                                int64_t out) {
  const int64_t end = off >= size ? 0 : (size - off + stride - 1) / stride;
  return end < out ? end : out;
}

#endif
