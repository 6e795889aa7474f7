/*
 * Two models in one image. tests/e2e/two_models.py compiles the test models
 * mlp and cnn with `cuvilc build --name mlp` and `--name cnn` for one board
 * target and links both objects with this file and the cuvil runtime.
 *
 * Both models are initialised before either runs (static arenas, embedded
 * weights), then each reads <name>/input_0.bin and writes <name>/out_0.bin
 * through semihosting, relative to QEMU's working directory. mlp runs again
 * after cnn, and its two outputs must be the same bits: a run does not
 * depend on what ran before it, which is what lets models that never run
 * at the same time share their arenas (tests/e2e/link_plan.py links them
 * so). Prints `cuvil: run ok` and returns 0, or prints `cuvil: error: ...`
 * and returns 1.
 */
#include "cnn.h"
#include "mlp.h"

#include "cuvil/port.h"

#include <stddef.h>

#define IO_ALIGN 64

static float mlp_input[CUVIL_MLP_INPUT_0_COUNT]
    __attribute__((aligned(IO_ALIGN)));
static float mlp_output[CUVIL_MLP_OUTPUT_0_COUNT]
    __attribute__((aligned(IO_ALIGN)));
static float mlp_again[CUVIL_MLP_OUTPUT_0_COUNT]
    __attribute__((aligned(IO_ALIGN)));
static float cnn_input[CUVIL_CNN_INPUT_0_COUNT]
    __attribute__((aligned(IO_ALIGN)));
static float cnn_output[CUVIL_CNN_OUTPUT_0_COUNT]
    __attribute__((aligned(IO_ALIGN)));
static cuvil_mlp_t mlp;
static cuvil_cnn_t cnn;

static int read_input(const char *path, void *buf, unsigned long size) {
  if (cuvil_semihost_read_file(path, buf, size) >= 0)
    return 0;
  cuvil_printf("cuvil: error: cannot read %s: expected a file of %lu bytes\n",
               path, size);
  return 1;
}

static int write_output(const char *path, const void *buf, unsigned long size) {
  if (cuvil_semihost_write_file(path, buf, size) >= 0)
    return 0;
  cuvil_printf("cuvil: error: cannot write %s (%lu bytes)\n", path, size);
  return 1;
}

static int failed(const char *call, int rc) {
  cuvil_printf("cuvil: error: %s returned %d\n", call, rc);
  return 1;
}

int main(void) {
  if (read_input("mlp/input_0.bin", mlp_input, CUVIL_MLP_INPUT_0_BYTES) ||
      read_input("cnn/input_0.bin", cnn_input, CUVIL_CNN_INPUT_0_BYTES))
    return 1;

  int rc = cuvil_mlp_init(&mlp, NULL, NULL, 0);
  if (rc != CUVIL_OK)
    return failed("cuvil_mlp_init", rc);
  rc = cuvil_cnn_init(&cnn, NULL, NULL, 0);
  if (rc != CUVIL_OK)
    return failed("cuvil_cnn_init", rc);

  rc = cuvil_mlp_run(&mlp, mlp_input, mlp_output);
  if (rc != CUVIL_OK)
    return failed("cuvil_mlp_run", rc);
  rc = cuvil_cnn_run(&cnn, cnn_input, cnn_output);
  if (rc != CUVIL_OK)
    return failed("cuvil_cnn_run", rc);

  rc = cuvil_mlp_run(&mlp, mlp_input, mlp_again);
  if (rc != CUVIL_OK)
    return failed("cuvil_mlp_run (again, after cnn)", rc);
  const unsigned char *first = (const unsigned char *)mlp_output;
  const unsigned char *again = (const unsigned char *)mlp_again;
  for (unsigned long i = 0; i < CUVIL_MLP_OUTPUT_0_BYTES; ++i)
    if (first[i] != again[i]) {
      cuvil_printf("cuvil: error: mlp run after cnn differs from its first "
                   "run at byte %lu\n",
                   i);
      return 1;
    }

  if (write_output("mlp/out_0.bin", mlp_output, CUVIL_MLP_OUTPUT_0_BYTES) ||
      write_output("cnn/out_0.bin", cnn_output, CUVIL_CNN_OUTPUT_0_BYTES))
    return 1;
  cuvil_printf("cuvil: run ok\n");
  return 0;
}
