/*
 * The multiply-add ceilings of this machine for one x86-64 level, for the
 * host benchmark's floor: no code built for that level can do more
 * multiply-adds per second on one core, in float32 or on int8 operands.
 *
 *   fma_peak      (built by bench/run_bench.py with -march=<target's cpu>
 *                  and -m<feature> for the target's features)
 *
 * Runs 12 independent chains of vector fused multiply-adds (as many lanes
 * as the level's vectors hold: 16 with AVX-512, 8 with AVX2), enough to
 * cover the latency of every FMA pipeline, and keeps the best of 20
 * timed repetitions. Then the same for int8 operands with the widest
 * exact instruction the level has: AVX-512 VNNI's vpdpbusd (4 products of
 * unsigned by signed bytes into each int32 lane: 64 per instruction), else
 * vpmaddwd on int16 pairs with a vpaddd into int32 lanes (2 per lane: 16
 * with AVX2, 32 with AVX-512). vpmaddubsw makes twice vpmaddwd's products
 * but saturates their int16 sums (255 x 127 x 2 > 32767), so no exact
 * kernel of int8 x int8 values can rely on it. Prints one JSON line:
 *   {"lanes": L, "macs_per_ns": X, "int8": "OP", "int8_macs_per_ns": Y}
 * The inputs come through volatile variables and the chains through an
 * empty asm statement, so the compiler can neither fold nor merge them.
 */
#define _POSIX_C_SOURCE 199309L
#include <immintrin.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__AVX512F__)
#define LANES 16
#elif defined(__AVX2__) && defined(__FMA__)
#define LANES 8
#else
#error "fma_peak: build with -march=x86-64-v3 or -march=x86-64-v4"
#endif

#define CHAINS 12
#define STEPS 1000000L
#define REPEATS 20

typedef float vec __attribute__((vector_size(LANES * sizeof(float))));

static volatile float scale = 1.0f, offset = 0.0f;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
typedef __m512i ivec;
#define INT8_OP "vpdpbusd"
#define INT8_MACS 64 /* per instruction */
#define INT8_STEP(acc, a, b) _mm512_dpbusd_epi32((acc), (a), (b))
#define IVEC_SET1(v) _mm512_set1_epi32(v)
#elif defined(__AVX512BW__)
typedef __m512i ivec;
#define INT8_OP "vpmaddwd"
#define INT8_MACS 32
#define INT8_STEP(acc, a, b) _mm512_add_epi32((acc), _mm512_madd_epi16((a), (b)))
#define IVEC_SET1(v) _mm512_set1_epi32(v)
#else
typedef __m256i ivec;
#define INT8_OP "vpmaddwd"
#define INT8_MACS 16
#define INT8_STEP(acc, a, b) _mm256_add_epi32((acc), _mm256_madd_epi16((a), (b)))
#define IVEC_SET1(v) _mm256_set1_epi32(v)
#endif

static volatile int ioffset = 0x02020202, isink;
static volatile float fsink;

/* Seconds of STEPS steps of the float chains. */
static double float_run(void) {
  vec x, y, acc[CHAINS];
  for (int l = 0; l < LANES; ++l) {
    x[l] = scale;
    y[l] = offset;
  }
  for (int c = 0; c < CHAINS; ++c)
    for (int l = 0; l < LANES; ++l)
      acc[c][l] = (float)(c + l);
  const double start = now_s();
  for (long s = 0; s < STEPS; ++s) {
    for (int c = 0; c < CHAINS; ++c)
      acc[c] = acc[c] * x + y;
    __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[1]), "+x"(acc[2]), "+x"(acc[3]),
                     "+x"(acc[4]), "+x"(acc[5]), "+x"(acc[6]), "+x"(acc[7]), "+x"(acc[8]),
                     "+x"(acc[9]), "+x"(acc[10]), "+x"(acc[11]));
  }
  const double elapsed = now_s() - start;
  for (int c = 0; c < CHAINS; ++c) /* uses the chains */
    fsink += acc[c][0];
  return elapsed;
}

/* Seconds of STEPS steps of the int8 chains. Each chain multiplies its own
 * accumulator's bytes: with one operand pair for all, the compiler
 * computes vpmaddwd's products once. */
static double int8_run(void) {
  const ivec b = IVEC_SET1(ioffset);
  ivec acc[CHAINS];
  for (int c = 0; c < CHAINS; ++c)
    acc[c] = IVEC_SET1(c);
  const double start = now_s();
  for (long s = 0; s < STEPS; ++s) {
#pragma GCC unroll 12 /* the chains in registers, not in memory */
    for (int c = 0; c < CHAINS; ++c)
      acc[c] = INT8_STEP(acc[c], acc[c], b);
    __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]),
                     "+v"(acc[4]), "+v"(acc[5]), "+v"(acc[6]), "+v"(acc[7]), "+v"(acc[8]),
                     "+v"(acc[9]), "+v"(acc[10]), "+v"(acc[11]));
  }
  const double elapsed = now_s() - start;
  for (int c = 0; c < CHAINS; ++c) { /* uses the chains */
    int lane0;
    memcpy(&lane0, &acc[c], sizeof lane0);
    isink ^= lane0;
  }
  return elapsed;
}

/* Multiply-adds per ns of the best of REPEATS runs (macs: per chain step). */
static double peak(double (*run)(void), int macs) {
  double best = 1e30;
  for (int r = 0; r < REPEATS; ++r) {
    const double elapsed = run();
    if (elapsed < best)
      best = elapsed;
  }
  return (double)CHAINS * macs * STEPS / best * 1e-9;
}

int main(void) {
  printf("{\"lanes\": %d, \"macs_per_ns\": %.2f, \"int8\": \"%s\", "
         "\"int8_macs_per_ns\": %.2f}\n",
         LANES, peak(float_run, LANES), INT8_OP, peak(int8_run, INT8_MACS));
  return 0;
}
