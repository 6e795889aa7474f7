/*
 * The FMA ceiling of this machine for one x86-64 level, for the host
 * benchmark's floor: no code built for that level can do more
 * multiply-adds per second on one core.
 *
 *   fma_peak      (built by bench/run_bench.py with -march=<target's cpu>)
 *
 * Runs 12 independent chains of vector fused multiply-adds (as many lanes
 * as the level's vectors hold: 16 with AVX-512, 8 with AVX2), enough to
 * cover the latency of every FMA pipeline, and keeps the best of 20
 * timed repetitions. Prints one JSON line:
 *   {"lanes": L, "macs_per_ns": X}
 * The inputs come through volatile variables and the chains through an
 * empty asm statement, so the compiler can neither fold nor merge them.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
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

int main(void) {
  vec x, y, acc[CHAINS];
  for (int l = 0; l < LANES; ++l) {
    x[l] = scale;
    y[l] = offset;
  }
  for (int c = 0; c < CHAINS; ++c)
    for (int l = 0; l < LANES; ++l)
      acc[c][l] = (float)(c + l);
  double best = 1e30;
  for (int r = 0; r < REPEATS; ++r) {
    const double start = now_s();
    for (long s = 0; s < STEPS; ++s) {
      for (int c = 0; c < CHAINS; ++c)
        acc[c] = acc[c] * x + y;
      __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[1]), "+x"(acc[2]), "+x"(acc[3]),
                       "+x"(acc[4]), "+x"(acc[5]), "+x"(acc[6]), "+x"(acc[7]), "+x"(acc[8]),
                       "+x"(acc[9]), "+x"(acc[10]), "+x"(acc[11]));
    }
    const double elapsed = now_s() - start;
    if (elapsed < best)
      best = elapsed;
  }
  float check = 0.0f;
  for (int c = 0; c < CHAINS; ++c)
    check += acc[c][0];
  if (check != check) /* uses the chains; never true for these inputs */
    return 1;
  printf("{\"lanes\": %d, \"macs_per_ns\": %.2f}\n", LANES,
         (double)CHAINS * LANES * STEPS / best * 1e-9);
  return 0;
}
