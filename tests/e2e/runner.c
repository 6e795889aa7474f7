/*
 * cuvil end-to-end runner: runs one compiled model on the inputs in
 * input_<i>.bin and writes its outputs to out_<i>.bin (raw bytes, as the
 * model's header sizes them), in the current directory.
 *
 * The model is compiled with `cuvilc build ... --name model`, so this file
 * includes the generated "model.h". tests/e2e/run_e2e.py builds it:
 *   host (-DCUVIL_HOST): against the C library, files through stdio;
 *   targets: freestanding, with the cuvil runtime; files through semihosting,
 *            relative to QEMU's working directory; counters read around the
 *            inference (deterministic under `qemu -icount shift=0`).
 * On success it prints `cuvil: run ok cycles=N instret=N` (targets) or
 * `cuvil: run ok` (host) and returns 0; on failure it prints
 * `cuvil: error: ...` and returns 1.
 */
#include <stddef.h>
#include <stdint.h>

#include "model.h"

#ifdef CUVIL_HOST
#include <stdio.h>
#define say printf
#else
#include "cuvil/port.h"
#define say cuvil_printf
#endif

/* Every input and output buffer starts on this boundary, as a DMA engine or a
 * vector kernel of the target would want. */
#define IO_ALIGN 64

/* Inputs and outputs are carved from one static pool, which serves any number
 * of them (C cannot declare one static array per entry of the header's byte
 * lists). The default holds every test model's I/O; main() checks the fit. */
#ifndef CUVIL_RUNNER_IO_POOL_BYTES
#define CUVIL_RUNNER_IO_POOL_BYTES (1ul << 20)
#endif

/* For a model without inputs (all constants), the header's list is {0}: C
 * has no empty initializers. Arrays indexed by input are sized to match. */
#define INPUT_SLOTS (CUVIL_MODEL_NUM_INPUTS ? CUVIL_MODEL_NUM_INPUTS : 1)
static const unsigned long input_bytes[] = CUVIL_MODEL_INPUT_BYTES_LIST;
/* Inputs the model never reads (CastLike's `like`, an input no node uses)
 * are not loaded: their data may not even match the declared shape. */
static const unsigned char input_read[] = CUVIL_MODEL_INPUT_READ_LIST;
static const unsigned long output_bytes[] = CUVIL_MODEL_OUTPUT_BYTES_LIST;
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
_Static_assert(COUNT(input_bytes) == INPUT_SLOTS,
               "CUVIL_MODEL_INPUT_BYTES_LIST must have one entry per input");
_Static_assert(COUNT(output_bytes) == CUVIL_MODEL_NUM_OUTPUTS,
               "CUVIL_MODEL_OUTPUT_BYTES_LIST must have one entry per output");

static unsigned char io_pool[CUVIL_RUNNER_IO_POOL_BYTES]
    __attribute__((aligned(IO_ALIGN)));
static cuvil_model_t model;

#ifdef CUVIL_HOST
/* stdio versions of the runtime's semihosting file calls: the number of bytes
 * transferred, or -1. Reading also fails unless the file holds exactly `size`
 * bytes (semihosting only detects a file that is too short). */
static long read_file(const char *path, void *buf, size_t size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  size_t got = fread(buf, 1, size, f);
  int at_end = fgetc(f) == EOF;
  fclose(f);
  return got == size && at_end ? (long)got : -1;
}

static long write_file(const char *path, const void *buf, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  size_t put = fwrite(buf, 1, size, f);
  int closed = fclose(f) == 0;
  return put == size && closed ? (long)put : -1;
}
#else
#define read_file cuvil_semihost_read_file
#define write_file cuvil_semihost_write_file
#endif

static unsigned long align_up(unsigned long n) {
  return (n + IO_ALIGN - 1) / IO_ALIGN * IO_ALIGN;
}

/* Writes "<stem>_<index>.bin" into `name`, which has room for 32 bytes. */
static const char *file_name(char name[32], const char *stem, unsigned index) {
  char digits[10];
  int n = 0;
  do {
    digits[n++] = (char)('0' + index % 10);
    index /= 10;
  } while (index);
  char *p = name;
  while (*stem)
    *p++ = *stem++;
  *p++ = '_';
  while (n)
    *p++ = digits[--n];
  for (const char *ext = ".bin"; *ext;)
    *p++ = *ext++;
  *p = '\0';
  return name;
}

static int fail_status(const char *call, int rc) {
  say("cuvil: error: %s returned %d (see CUVIL_ERR_* in model.h)\n", call, rc);
  return 1;
}

int main(void) {
  unsigned long need = 0;
  for (unsigned i = 0; i < CUVIL_MODEL_NUM_INPUTS; ++i)
    need += align_up(input_bytes[i]);
  for (unsigned i = 0; i < CUVIL_MODEL_NUM_OUTPUTS; ++i)
    need += align_up(output_bytes[i]);
  if (need > sizeof io_pool) {
    say("cuvil: error: the model's inputs and outputs need %lu bytes, the "
        "runner has %lu; rebuild it with -DCUVIL_RUNNER_IO_POOL_BYTES=%lu\n",
        need, (unsigned long)sizeof io_pool, need);
    return 1;
  }

  char name[32];
  unsigned char *next = io_pool;
  const void *inputs[INPUT_SLOTS];
  for (unsigned i = 0; i < CUVIL_MODEL_NUM_INPUTS; ++i) {
    const char *path = file_name(name, "input", i);
    inputs[i] = next;
    if (!input_read[i]) {
      next += align_up(input_bytes[i]);
      continue;
    }
    if (read_file(path, next, input_bytes[i]) != (long)input_bytes[i]) {
      say("cuvil: error: cannot read %s: expected a file of %lu bytes\n", path,
          input_bytes[i]);
      return 1;
    }
    next += align_up(input_bytes[i]);
  }
  /* Poison the outputs (all-ones bytes are NaNs in float32) so any element
   * the model fails to write fails the comparison with the reference. */
  void *outputs[CUVIL_MODEL_NUM_OUTPUTS];
  for (unsigned i = 0; i < CUVIL_MODEL_NUM_OUTPUTS; ++i) {
    for (unsigned long b = 0; b < output_bytes[i]; ++b)
      next[b] = 0xff;
    outputs[i] = next;
    next += align_up(output_bytes[i]);
  }

  /* NULL, NULL: the arena placed by model.ld and the embedded weights. */
  int rc = cuvil_model_init(&model, NULL, NULL, 0);
  if (rc != 0)
    return fail_status("cuvil_model_init", rc);

#ifndef CUVIL_HOST
  uint64_t cycles = cuvil_port_cycles();
  uint64_t instret = cuvil_port_instret();
#endif
  rc = cuvil_model_run_v(&model, inputs, outputs);
#ifndef CUVIL_HOST
  instret = cuvil_port_instret() - instret;
  cycles = cuvil_port_cycles() - cycles;
#endif
  if (rc != 0)
    return fail_status("cuvil_model_run_v", rc);

  for (unsigned i = 0; i < CUVIL_MODEL_NUM_OUTPUTS; ++i) {
    const char *path = file_name(name, "out", i);
    if (write_file(path, outputs[i], output_bytes[i]) < 0) {
      say("cuvil: error: cannot write %s (%lu bytes)\n", path, output_bytes[i]);
      return 1;
    }
  }

#ifdef CUVIL_HOST
  say("cuvil: run ok\n");
#else
  say("cuvil: run ok cycles=%llu instret=%llu\n", (unsigned long long)cycles,
      (unsigned long long)instret);
#endif
  return 0;
}
