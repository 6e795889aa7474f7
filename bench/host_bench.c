/*
 * cuvil side of the host benchmark: times one compiled model on the host.
 *
 *   host_bench RUNS      (in a directory holding input_<i>.bin)
 *
 * Built by bench/run_bench.py against a model compiled with
 * `cuvilc build --target host --name model`. Runs the model once to warm the
 * caches, then RUNS times, each timed with CLOCK_MONOTONIC; writes the
 * outputs to out_<i>.bin and prints one JSON line:
 *   {"median_ns": N, "min_ns": N, "runs": RUNS}
 * The same input buffers are used for every run, as ONNX Runtime's side of
 * the comparison does.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "model.h"

#define INPUT_SLOTS (CUVIL_MODEL_NUM_INPUTS ? CUVIL_MODEL_NUM_INPUTS : 1)
static const unsigned long input_bytes[] = CUVIL_MODEL_INPUT_BYTES_LIST;
static const unsigned long output_bytes[] = CUVIL_MODEL_OUTPUT_BYTES_LIST;

static cuvil_model_t model;

static int fail(const char *what) {
  fprintf(stderr, "host_bench: error: %s\n", what);
  return 1;
}

static void *load(unsigned index, unsigned long size) {
  char path[32];
  snprintf(path, sizeof path, "input_%u.bin", index);
  void *buf = aligned_alloc(64, (size + 63) / 64 * 64);
  FILE *f = fopen(path, "rb");
  if (!buf || !f)
    return NULL;
  size_t got = fread(buf, 1, size, f);
  int at_end = fgetc(f) == EOF;
  fclose(f);
  return got == size && at_end ? buf : NULL;
}

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int runs = argc == 2 ? atoi(argv[1]) : 0;
  if (runs < 1)
    return fail("usage: host_bench RUNS");
  const void *inputs[INPUT_SLOTS];
  for (unsigned i = 0; i < CUVIL_MODEL_NUM_INPUTS; ++i)
    if (!(inputs[i] = load(i, input_bytes[i])))
      return fail("cannot read an input_<i>.bin of the model's input size");
  void *outputs[CUVIL_MODEL_NUM_OUTPUTS];
  for (unsigned i = 0; i < CUVIL_MODEL_NUM_OUTPUTS; ++i)
    if (!(outputs[i] = aligned_alloc(64, (output_bytes[i] + 63) / 64 * 64)))
      return fail("out of memory");
  long long *times = malloc(sizeof *times * (size_t)runs);
  if (!times || cuvil_model_init(&model, NULL, NULL, 0) != 0)
    return fail("cannot initialise the model");

  if (cuvil_model_run_v(&model, inputs, outputs) != 0) /* warm-up */
    return fail("cuvil_model_run_v failed");
  for (int r = 0; r < runs; ++r) {
    long long start = now_ns();
    cuvil_model_run_v(&model, inputs, outputs);
    times[r] = now_ns() - start;
  }
  for (unsigned i = 0; i < CUVIL_MODEL_NUM_OUTPUTS; ++i) {
    char path[32];
    snprintf(path, sizeof path, "out_%u.bin", i);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(outputs[i], 1, output_bytes[i], f) != output_bytes[i] || fclose(f))
      return fail("cannot write an out_<i>.bin");
  }
  qsort(times, (size_t)runs, sizeof *times, by_value);
  printf("{\"median_ns\": %lld, \"min_ns\": %lld, \"runs\": %d}\n", times[runs / 2], times[0],
         runs);
  return 0;
}
