/*
 * Register blocking of the integer (INT8) packed kernels, opt/qpacked.c.
 *
 * Weights are packed at compile time in panels of CUVIL_QMR output
 * channels and groups of CUVIL_QKR reduction steps (cuvil/kernels/qint.h
 * gives the layout); cuvilc reads the values the kernel library was built
 * with (the exported constants cuvil_k_qpack_mr / cuvil_k_qpack_kr), so the
 * two cannot disagree.
 *
 * The kernel gathers the activations of a block of CUVIL_QNR output
 * positions into a buffer of cuvil_qxe elements, one group of CUVIL_QKR
 * steps after another (cuvil_qx_pack gives a group's layout), then runs
 * every panel of weights over it: per group, CUVIL_QMV weight vectors
 * (cuvil_qw_load) against the block's activations (cuvil_qgroup) into
 * CUVIL_QNA x CUVIL_QMV accumulators (cuvil_qacc, CUVIL_QVL int32 lanes).
 * Only this header depends on the target:
 *
 *   AArch64 with dotprod (a78): sdot by element. A weight vector is 4
 *       channels x 4 steps (16 int8), the block's activations of a group
 *       are 12 positions x 4 steps in three vectors, and each
 *       vdotq_laneq_s32 does 16 multiply-adds; 12 x 2 accumulators + 2
 *       weights + 3 activations = 29 of 32 registers; two groups per
 *       iteration are 48 sdot, 5 ldp and 4 loop instructions, 0.074 per
 *       multiply-add. Activations in int8 (uint8 inputs flipped).
 *   x86-64 AVX-512 VNNI (host-avx512): vpdpbusd, 16 channels x 4 steps per
 *       weight vector, the activation word of a position broadcast from
 *       memory; 12 x 2 accumulators. Activations in uint8 (int8 inputs
 * flipped): vpdpbusd multiplies unsigned by signed bytes. x86-64 AVX2 (host),
 * and AVX-512 without VNNI (no target of ours): vpmaddwd on int16, 2 steps per
 * group: the weights are sign-extended to int16 as they are loaded (8 or 16
 * channels x 2 steps), and the block's activations are kept as int16 pairs, one
 * broadcast per position. Exact (no int16 saturation: a pair of int8 products
 * is at most 2^15 in magnitude, summed in int32). 6 x 2 accumulators of 8 lanes
 * (AVX2, 16 registers), 12 x 2 of 16 (AVX-512, 32 registers). RV64GC (scalar;
 * CUVIL_BLOCKING_SCALAR on the host): two or three products per 64-bit mul.
 * A word of the buffer holds the activations of two or three positions,
 * x0 + x1 B + x2 B^2; times an int8 weight w that is x0 w + x1 w B +
 * x2 w B^2, so a 64-bit accumulator adds up the positions' dot products
 * as digits modulo 2^64 (exact in any activation domain: the lanes are
 * signed, each one's borrow taken back when the word is split). Pairs (B =
 * 2^32) hold any tile; triples (B = 2^21) hold 21-bit signed digits: in
 * the int8 domain (uint8 inputs flipped, the correction in the bias) 64
 * products of at most 2^14 (CUVIL_QTRI_CHUNK, CUVIL_QTRI_OFF), so the
 * accumulators are split into the int32 block every 64 steps (the uint8
 * domain's 255 * 128 allowed 32: DS-CNN's 64-step layers split twice, 5%
 * more instructions on the model). A block of nb > 1 positions takes
 * triples in nw = ceil(nb / 3) words (positions a, a + nw, a + 2 nw in
 * word a), a block of one pairs. 4 channels x 4 words: per step 4 lb + 4
 * ld + 16 mul + 16 add and 3 for the loop per two steps; on 12 positions
 * 48 multiply-adds, 0.86 instructions each (0.95 with the split every 64
 * steps); a row's last 8 positions take 3 words (31 a step, 1.0 each),
 * where pairs of 4 words took 40 (1.30).
 *   anything else: the AArch64 layout with the dot product in plain C
 *       (also what the tests build as CUVIL_QBLOCKING_SDOT_EMUL, to run the
 *       a78 kernel's layout and block on the host).
 */
#ifndef CUVIL_KERNELS_OPT_QBLOCKING_H
#define CUVIL_KERNELS_OPT_QBLOCKING_H

#include "blocking.h"

#define CUVIL_QINLINE static inline __attribute__((always_inline))

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#if CUVIL_SCALAR_BLOCKING
#define CUVIL_QPAIRS 1
#elif defined(CUVIL_QBLOCKING_SDOT_EMUL)
#define CUVIL_QSDOT_C 1
#elif defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
#define CUVIL_QSDOT 1
#elif defined(__x86_64__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define CUVIL_QVNNI 1
#include <immintrin.h>
#elif defined(__x86_64__) && (defined(__AVX512BW__) || defined(__AVX2__))
#define CUVIL_QMADD 1
#include <immintrin.h>
#else
#define CUVIL_QSDOT_C 1
#endif

#if defined(CUVIL_QPAIRS)
#define CUVIL_QVL 1
#define CUVIL_QMV 4
#define CUVIL_QKR 1
#define CUVIL_QNR 12
#define CUVIL_QNA 4         /* accumulator rows: words of 2 or 3 positions */
#define CUVIL_QX_UNSIGNED 0 /* int8 lanes: |x w| <= 2^14, see triples */
#define CUVIL_QKC 128       /* steps per gathered tile: 128 x 32 bytes */
typedef uint64_t cuvil_qxe;
#define CUVIL_QXG 4 /* elements per group: 4 pairs */
#elif defined(CUVIL_QSDOT) || defined(CUVIL_QSDOT_C) || defined(CUVIL_QVNNI)
#if defined(CUVIL_QVNNI)
#define CUVIL_QVL 16
#define CUVIL_QX_UNSIGNED 1
#else
#define CUVIL_QVL 4
#define CUVIL_QX_UNSIGNED 0
#endif
#define CUVIL_QMV 2
#define CUVIL_QKR 4
#define CUVIL_QNR 12
#define CUVIL_QNA CUVIL_QNR
#define CUVIL_QKC 256 /* 64 groups x 48 bytes */
typedef uint8_t cuvil_qxe;
#define CUVIL_QXG (CUVIL_QNR * CUVIL_QKR)
#else /* CUVIL_QMADD */
#if defined(__AVX512BW__)
#define CUVIL_QVL 16
#define CUVIL_QNR 12
#else
#define CUVIL_QVL 8
#define CUVIL_QNR 6
#endif
#define CUVIL_QMV 2
#define CUVIL_QKR 2
#define CUVIL_QNA CUVIL_QNR
#define CUVIL_QX_UNSIGNED 0
#define CUVIL_QKC 256 /* 128 groups x 24 or 48 bytes */
typedef int16_t cuvil_qxe;
#define CUVIL_QXG (CUVIL_QNR * CUVIL_QKR)
#endif

#define CUVIL_QMR (CUVIL_QVL * CUVIL_QMV)
/* Whether a block's activations are 4 steps of each position in turn
 * (bytes 4j..4j+3: position j), the layout of a channel-interleaved image,
 * so that the stride-1 convolution reads them in place (qdirect.h). */
#if CUVIL_QKR == 4 && !defined(CUVIL_QPAIRS)
#define CUVIL_QDIRECT 1
#else
#define CUVIL_QDIRECT 0
#endif
/* Weight bytes per vector of one group. */
#define CUVIL_QWB (CUVIL_QVL * CUVIL_QKR)
/* Groups per iteration of a panel's loop (run_panel): on a78 four, so the
 * loop's counter, branch and pointer updates come once per 96 sdot
 * (ResNet-8: 2.45 M -> 2.38 M instructions); RV64 spills its accumulators
 * at four (DS-CNN: 6.5 M -> 7.4 M), and keeps two. */
#if defined(CUVIL_QSDOT)
#define CUVIL_QUNROLL 4
#else
#define CUVIL_QUNROLL 2
#endif

/* ---- Accumulators, weight vectors ---------------------------------------- */

#if defined(CUVIL_QPAIRS)
typedef uint64_t cuvil_qacc;
typedef int64_t cuvil_qw;
#elif defined(CUVIL_QSDOT)
typedef int32x4_t cuvil_qacc;
typedef int8x16_t cuvil_qw;
#elif defined(CUVIL_QSDOT_C)
typedef int32_t cuvil_qacc __attribute__((vector_size(16)));
typedef int8_t cuvil_qw __attribute__((vector_size(16)));
#elif defined(CUVIL_QVNNI) || (defined(CUVIL_QMADD) && CUVIL_QVL == 16)
typedef __m512i cuvil_qacc;
typedef __m512i cuvil_qw;
#else
typedef __m256i cuvil_qacc;
typedef __m256i cuvil_qw;
#endif

/* The weight vector of one group at p; _n: only `bytes` of them exist (a
 * narrow panel), the rest read as 0. */
CUVIL_QINLINE cuvil_qw cuvil_qw_from(const int8_t b[CUVIL_QWB]) {
#if defined(CUVIL_QPAIRS)
  return b[0];
#elif defined(CUVIL_QMADD) && CUVIL_QVL == 16
  __m256i v;
  __builtin_memcpy(&v, b, sizeof v);
  return _mm512_cvtepi8_epi16(v);
#elif defined(CUVIL_QMADD)
  __m128i v;
  __builtin_memcpy(&v, b, sizeof v);
  return _mm256_cvtepi8_epi16(v);
#else
  cuvil_qw v;
  __builtin_memcpy(&v, b, sizeof v);
  return v;
#endif
}

CUVIL_QINLINE cuvil_qw cuvil_qw_load(const int8_t *p) {
  return cuvil_qw_from(p);
}

CUVIL_QINLINE cuvil_qw cuvil_qw_load_n(const int8_t *p, int64_t bytes) {
  /* A narrow panel is mostly whole vectors and zero ones (16 channels of a
   * 32-channel panel on AVX-512: one of each): byte by byte, every vector
   * cost CUVIL_QWB loads and inserts, and the 16-channel layers of
   * ResNet-8 ran 5x slower per multiply-add than the others. */
  if (bytes >= CUVIL_QWB)
    return cuvil_qw_from(p);
  int8_t b[CUVIL_QWB] = {0};
  for (int64_t i = 0; i < bytes; ++i)
    b[i] = p[i];
  return cuvil_qw_from(b);
}

#if defined(CUVIL_QPAIRS)
/* Whether a block of nb positions takes triples; the steps after which
 * triples are split: int8 activations and weights make products in
 * [-16256, 16384], and 64 of them fit a 21-bit signed digit once each
 * digit starts at -CUVIL_QTRI_OFF (sums in [-1044480, 1044480]; the one
 * sum of 2^20, 64 products of -128 by -128, would not fit otherwise). */
#define CUVIL_QTRI(nb) ((nb) > 1)
/* The words of a block of nb positions on triples: word a holds positions
 * a, a + nw and a + 2 nw (lanes past the block: any byte of the source). A
 * block of one position takes pairs (4 words, lanes a and a + 4: its one
 * position in word 0's low digit, cuvil_qgroup_one). */
#define CUVIL_QWORDS(nb) (CUVIL_QTRI(nb) ? ((nb) + 2) / 3 : CUVIL_QNA)
#define CUVIL_QTRI_CHUNK 64
#define CUVIL_QTRI_BITS 21
#define CUVIL_QTRI_OFF 4096
/* 1 in every lane of a word of triples, of pairs. */
#define CUVIL_QUNIT(tri)                                                       \
  ((tri) ? 1 + ((uint64_t)1 << CUVIL_QTRI_BITS) +                              \
               ((uint64_t)1 << 2 * CUVIL_QTRI_BITS)                            \
         : 1 + ((uint64_t)1 << 32))

/* Triples: a chunk's accumulators, each digit at -CUVIL_QTRI_OFF. */
CUVIL_QINLINE void cuvil_qacc_start3(cuvil_qacc acc[CUVIL_QNA][CUVIL_QMV]) {
  for (int a = 0; a < CUVIL_QNA; ++a)
    for (int v = 0; v < CUVIL_QMV; ++v)
      acc[a][v] = -(uint64_t)CUVIL_QTRI_OFF * CUVIL_QUNIT(1);
}

/* Triples: the int32 block mem += the positions' sums in the first nw
 * words of acc (word a: positions a, a + nw, a + 2 nw); with init (the
 * channels' first values, the block's first chunk) mem = init + the sums,
 * mem not read. */
CUVIL_QINLINE void cuvil_qacc_add3(int32_t *mem,
                                   const cuvil_qacc acc[CUVIL_QNA][CUVIL_QMV],
                                   int nw, const int32_t *init) {
  const int b = CUVIL_QTRI_BITS;
  CUVIL_UNROLL
  for (int a = 0; a < CUVIL_QNA; ++a)
    CUVIL_UNROLL
  for (int v = 0; v < CUVIL_QMV; ++v) {
    if (a >= nw)
      continue;
    const int64_t d0 = cuvil_qdigit(acc[a][v], b);
    /* The rest, exactly: the digits are below 2^63 in magnitude. */
    const int64_t r = (int64_t)(acc[a][v] - (uint64_t)d0) >> b;
    const int64_t d1 = cuvil_qdigit((uint64_t)r, b);
    int32_t *m = mem + a * CUVIL_QMR + v;
    /* Each digit started at -CUVIL_QTRI_OFF (cuvil_qacc_start3). */
    const uint32_t o = CUVIL_QTRI_OFF;
    const int64_t s1 = nw * CUVIL_QMR, s2 = 2 * s1;
    const uint32_t i0 = init ? (uint32_t)init[v] : (uint32_t)m[0],
                   i1 = init ? (uint32_t)init[v] : (uint32_t)m[s1],
                   i2 = init ? (uint32_t)init[v] : (uint32_t)m[s2];
    m[0] = (int32_t)(i0 + (uint32_t)d0 + o);
    m[s1] = (int32_t)(i1 + (uint32_t)d1 + o);
    m[s2] = (int32_t)(i2 + (uint32_t)((r - d1) >> b) + o);
  }
}
#endif

/* acc <- the int32 block mem ([QNR][QMR], position-major); and back. RV64
 * pairs: word a is positions a and a + 4, S0 + S1 2^32 modulo 2^64, S0
 * sign-extended. */
CUVIL_QINLINE void cuvil_qacc_load(cuvil_qacc acc[CUVIL_QNA][CUVIL_QMV],
                                   const int32_t *mem) {
  CUVIL_UNROLL
  for (int a = 0; a < CUVIL_QNA; ++a)
    CUVIL_UNROLL
  for (int v = 0; v < CUVIL_QMV; ++v) {
#if defined(CUVIL_QPAIRS)
    acc[a][v] = (uint64_t)(int64_t)mem[a * CUVIL_QMR + v] +
                ((uint64_t)(uint32_t)mem[(a + 4) * CUVIL_QMR + v] << 32);
#else
    __builtin_memcpy(&acc[a][v], mem + a * CUVIL_QMR + v * CUVIL_QVL,
                     sizeof(cuvil_qacc));
#endif
  }
}

CUVIL_QINLINE void
cuvil_qacc_store(int32_t *mem, const cuvil_qacc acc[CUVIL_QNA][CUVIL_QMV]) {
  CUVIL_UNROLL
  for (int a = 0; a < CUVIL_QNA; ++a)
    CUVIL_UNROLL
  for (int v = 0; v < CUVIL_QMV; ++v) {
#if defined(CUVIL_QPAIRS)
    const int64_t d0 = cuvil_qdigit(acc[a][v], 32);
    mem[a * CUVIL_QMR + v] = (int32_t)d0;
    mem[(a + 4) * CUVIL_QMR + v] = (int32_t)((acc[a][v] - (uint64_t)d0) >> 32);
#else
    __builtin_memcpy(mem + a * CUVIL_QMR + v * CUVIL_QVL, &acc[a][v],
                     sizeof(cuvil_qacc));
#endif
  }
}

/* ---- The gathered activations -------------------------------------------- */

/* One reduction step of the block's positions (lane j: position j; lanes
 * from CUVIL_QNR on are unused), in the kernel's domain. */
typedef uint8_t cuvil_qrow __attribute__((vector_size(16)));
typedef uint8_t cuvil_qrow2 __attribute__((vector_size(32)));
typedef uint8_t cuvil_qrow4 __attribute__((vector_size(64)));

/* The lanes of a and b alternately (zip1 and zip2 on AArch64, punpck on
 * x86). */
#define CUVIL_QZIP16(a, b)                                                     \
  __builtin_shufflevector(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6,   \
                          22, 7, 23, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, \
                          29, 14, 30, 15, 31)
#define CUVIL_QZIP32(a, b)                                                     \
  __builtin_shufflevector(a, b, 0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6,   \
                          38, 7, 39, 8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, \
                          45, 14, 46, 15, 47, 16, 48, 17, 49, 18, 50, 19, 51,  \
                          20, 52, 21, 53, 22, 54, 23, 55, 24, 56, 25, 57, 26,  \
                          58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63)

#if defined(CUVIL_QPAIRS)
/* The bytes u0, u1 (and u2: tri) side by side in their lanes; a word of
 * activations is this for u = x + 128 (0..255), less 128 CUVIL_QUNIT. */
CUVIL_QINLINE uint64_t cuvil_qbytes(uint64_t u0, uint64_t u1, uint64_t u2,
                                    int tri) {
  return tri ? u0 + (u1 << CUVIL_QTRI_BITS) + (u2 << 2 * CUVIL_QTRI_BITS)
             : u0 + (u1 << 32);
}
#endif

/* Stores one group of the block's activations: s[r] is step r (tri: the
 * block takes triples, CUVIL_QTRI, in nw words, CUVIL_QWORDS; only RV64
 * has them). */
CUVIL_QINLINE void cuvil_qx_pack(cuvil_qxe *dst, const cuvil_qrow s[CUVIL_QKR],
                                 int tri, int nw) {
#if defined(CUVIL_QPAIRS)
  /* s holds int8 activations as bytes: u = byte ^ 0x80. */
  const uint64_t unit = CUVIL_QUNIT(tri);
  /* (nw a variable: the general gathering's, where a loop costs little) */
  CUVIL_PLAIN
  for (int a = 0; a < nw; ++a)
    dst[a] = (cuvil_qbytes(s[0][a], s[0][a + nw], s[0][a + 2 * nw], tri) ^
              0x80 * unit) -
             128 * unit;
#elif CUVIL_QKR == 4
  (void)tri;
  (void)nw;
  /* Position j's 4 steps at bytes 4j..4j+3: two rounds of zips. */
  const cuvil_qrow2 s02 = CUVIL_QZIP16(s[0], s[2]),
                    s13 = CUVIL_QZIP16(s[1], s[3]);
  const cuvil_qrow4 t = CUVIL_QZIP32(s02, s13);
  __builtin_memcpy(dst, &t, CUVIL_QXG);
#else
  (void)tri;
  (void)nw;
  /* int16 pairs: one zip, then sign extension. */
  typedef int8_t i8x32 __attribute__((vector_size(32)));
  typedef int16_t i16x32 __attribute__((vector_size(64)));
  const i16x32 t =
      __builtin_convertvector((i8x32)CUVIL_QZIP16(s[0], s[1]), i16x32);
  __builtin_memcpy(dst, &t, CUVIL_QXG * sizeof(cuvil_qxe));
#endif
}

/* ---- Requantization ------------------------------------------------------ */

/* Four int32 lanes, and the same widened. */
typedef int32_t cuvil_qi32x4 __attribute__((vector_size(16)));
typedef int64_t cuvil_qi64x4 __attribute__((vector_size(32)));

/* *p = the 64-bit products of a and b lane by lane: smull and smull2 on
 * AArch64 (the optimiser, given the widened product, made four scalar
 * smull and the moves around them). By pointer: a 32-byte vector returned
 * by value has another ABI with and without AVX (GCC warns). */
CUVIL_QINLINE void cuvil_qmul_wide(cuvil_qi64x4 *p, cuvil_qi32x4 a,
                                   cuvil_qi32x4 b) {
#if defined(__aarch64__)
  const int32x4_t va = (int32x4_t)a, vb = (int32x4_t)b;
  const int64x2_t lo = vmull_s32(vget_low_s32(va), vget_low_s32(vb));
  const int64x2_t hi = vmull_high_s32(va, vb);
  *p = __builtin_shufflevector(lo, hi, 0, 1, 2, 3);
#else
  *p = __builtin_convertvector(a, cuvil_qi64x4) *
       __builtin_convertvector(b, cuvil_qi64x4);
#endif
}

/* ---- One group of a panel ------------------------------------------------ */

#if defined(CUVIL_QSDOT_C)
/* vdotq_s32 of a by the activation word x4 (4 int8) in plain C. */
CUVIL_QINLINE cuvil_qacc cuvil_qdot_c(cuvil_qacc a, cuvil_qw w,
                                      const cuvil_qxe *x4) {
  cuvil_qacc d;
  for (int l = 0; l < 4; ++l) {
    d[l] = 0;
    for (int r = 0; r < 4; ++r)
      d[l] += (int32_t)w[4 * l + r] * (int8_t)x4[r];
  }
  return a + d;
}
#endif

#if defined(CUVIL_QSDOT)
/* The 4 positions of activation vector i, one sdot by element each. */
#define CUVIL_QSDOT_X(i)                                                       \
  CUVIL_UNROLL                                                                 \
  for (int v = 0; v < nv; ++v) {                                               \
    acc[4 * (i)][v] = vdotq_laneq_s32(acc[4 * (i)][v], w[v], x##i, 0);         \
    acc[4 * (i) + 1][v] = vdotq_laneq_s32(acc[4 * (i) + 1][v], w[v], x##i, 1); \
    acc[4 * (i) + 2][v] = vdotq_laneq_s32(acc[4 * (i) + 2][v], w[v], x##i, 2); \
    acc[4 * (i) + 3][v] = vdotq_laneq_s32(acc[4 * (i) + 3][v], w[v], x##i, 3); \
  }
#endif

/* acc += one group of CUVIL_QKR steps: the first nv weight vectors w (a
 * constant: CUVIL_QMV, or fewer for a narrow panel, whose other vectors
 * hold no channel) against the block's activations xq (CUVIL_QXG
 * elements; RV64: the first nw words, a constant). */
CUVIL_QINLINE void cuvil_qgroup(cuvil_qacc acc[CUVIL_QNA][CUVIL_QMV],
                                const cuvil_qw w[CUVIL_QMV],
                                const cuvil_qxe *xq, int nv, int nw) {
  (void)nw;
#if defined(CUVIL_QPAIRS)
  CUVIL_UNROLL
  for (int a = 0; a < nw; ++a) {
    const uint64_t xp = xq[a];
    CUVIL_UNROLL
    for (int v = 0; v < nv; ++v)
      acc[a][v] += xp * (uint64_t)w[v];
  }
#elif defined(CUVIL_QSDOT)
  const int8x16_t x0 = vld1q_s8((const int8_t *)xq),
                  x1 = vld1q_s8((const int8_t *)xq + 16),
                  x2 = vld1q_s8((const int8_t *)xq + 32);
  CUVIL_QSDOT_X(0)
  CUVIL_QSDOT_X(1)
  CUVIL_QSDOT_X(2)
#elif defined(CUVIL_QSDOT_C)
  CUVIL_UNROLL
  for (int j = 0; j < CUVIL_QNR; ++j)
    CUVIL_UNROLL
  for (int v = 0; v < nv; ++v)
    acc[j][v] = cuvil_qdot_c(acc[j][v], w[v], xq + 4 * j);
#else
  CUVIL_UNROLL
  for (int j = 0; j < CUVIL_QNR; ++j) {
    int32_t word;
    __builtin_memcpy(&word, xq + CUVIL_QKR * j, sizeof word);
#if defined(CUVIL_QVNNI)
    const __m512i xb = _mm512_set1_epi32(word);
    CUVIL_UNROLL
    for (int v = 0; v < nv; ++v)
      acc[j][v] = _mm512_dpbusd_epi32(acc[j][v], xb, w[v]);
#elif CUVIL_QVL == 16
    const __m512i xb = _mm512_set1_epi32(word);
    CUVIL_UNROLL
    for (int v = 0; v < nv; ++v)
      acc[j][v] = _mm512_add_epi32(acc[j][v], _mm512_madd_epi16(w[v], xb));
#else
    const __m256i xb = _mm256_set1_epi32(word);
    CUVIL_UNROLL
    for (int v = 0; v < nv; ++v)
      acc[j][v] = _mm256_add_epi32(acc[j][v], _mm256_madd_epi16(w[v], xb));
#endif
  }
#endif
}

/* cuvil_qgroup for the first position only (acc: its accumulators), for a
 * block of one position (a matrix product of one row: a fully connected
 * layer at batch 1), which would otherwise pay for the whole block. */
CUVIL_QINLINE void cuvil_qgroup_one(cuvil_qacc acc[CUVIL_QMV],
                                    const cuvil_qw w[CUVIL_QMV],
                                    const cuvil_qxe *xq) {
#if defined(CUVIL_QPAIRS)
  CUVIL_UNROLL
  for (int v = 0; v < CUVIL_QMV; ++v)
    acc[v] += xq[0] * (uint64_t)w[v];
#elif defined(CUVIL_QSDOT)
  const int8x16_t x =
      vreinterpretq_s8_s32(vld1q_dup_s32((const int32_t *)(const void *)xq));
  CUVIL_UNROLL
  for (int v = 0; v < CUVIL_QMV; ++v)
    acc[v] = vdotq_laneq_s32(acc[v], w[v], x, 0);
#elif defined(CUVIL_QSDOT_C)
  CUVIL_UNROLL
  for (int v = 0; v < CUVIL_QMV; ++v)
    acc[v] = cuvil_qdot_c(acc[v], w[v], xq);
#else
  int32_t word;
  __builtin_memcpy(&word, xq, sizeof word);
#if defined(CUVIL_QVNNI)
  const __m512i xb = _mm512_set1_epi32(word);
  CUVIL_UNROLL
  for (int v = 0; v < CUVIL_QMV; ++v)
    acc[v] = _mm512_dpbusd_epi32(acc[v], xb, w[v]);
#elif CUVIL_QVL == 16
  const __m512i xb = _mm512_set1_epi32(word);
  CUVIL_UNROLL
  for (int v = 0; v < CUVIL_QMV; ++v)
    acc[v] = _mm512_add_epi32(acc[v], _mm512_madd_epi16(w[v], xb));
#else
  const __m256i xb = _mm256_set1_epi32(word);
  CUVIL_UNROLL
  for (int v = 0; v < CUVIL_QMV; ++v)
    acc[v] = _mm256_add_epi32(acc[v], _mm256_madd_epi16(w[v], xb));
#endif
#endif
}

#endif
