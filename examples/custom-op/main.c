/*
 * Custom-op example firmware: runs the model (whose custom ops call
 * vendor_kernels.c) on the image data.S links in, and compares the output
 * with the reference gen_model.py computed in numpy. Prints the largest
 * difference and exits 0 when every element is within tolerance.
 */
#include <stddef.h>
#include <stdint.h>

#include "cuvil/port.h"
#include "model.h"

/* From data.S: the input image and the reference output. */
extern const uint8_t example_input[CUVIL_MODEL_INPUT_0_COUNT];
extern const char example_input_end[];
extern const float example_ref[CUVIL_MODEL_OUTPUT_0_COUNT];
extern const char example_ref_end[];

static float output[CUVIL_MODEL_OUTPUT_0_COUNT];
static cuvil_model_t model;

static float absf(float x) { return x < 0 ? -x : x; }

int main(void) {
  if ((size_t)(example_input_end - (const char *)example_input) !=
          CUVIL_MODEL_INPUT_0_BYTES ||
      (size_t)(example_ref_end - (const char *)example_ref) !=
          CUVIL_MODEL_OUTPUT_0_BYTES) {
    cuvil_printf("custom-op: input or reference has the wrong size\n");
    return 1;
  }
  int rc = cuvil_model_init(&model, NULL, NULL, 0);
  if (rc != CUVIL_OK) {
    cuvil_printf("custom-op: init failed: %d\n", rc);
    return 1;
  }
  uint64_t i0 = cuvil_port_instret();
  rc = cuvil_model_run(&model, example_input, output);
  uint64_t i1 = cuvil_port_instret();
  if (rc != CUVIL_OK) {
    cuvil_printf("custom-op: run failed: %d\n", rc);
    return 1;
  }
  /* numpy.allclose(atol=1e-4, rtol=1e-3), as the e2e tests compare. */
  float worst = 0;
  unsigned bad = 0;
  for (unsigned i = 0; i < CUVIL_MODEL_OUTPUT_0_COUNT; ++i) {
    float d = absf(output[i] - example_ref[i]);
    if (d > worst)
      worst = d;
    if (d > 1e-4f + 1e-3f * absf(example_ref[i]))
      ++bad;
  }
  cuvil_printf("custom-op: %u outputs, max |diff| %.2e, %u out of tolerance, "
               "%lu instructions\n",
               CUVIL_MODEL_OUTPUT_0_COUNT, (double)worst, bad,
               (unsigned long)(i1 - i0));
  if (bad)
    return 1;
  cuvil_printf("custom-op: PASS\n");
  return 0;
}
