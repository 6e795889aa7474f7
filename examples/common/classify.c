/*
 * Example firmware: classify one image with a model compiled by cuvilc and
 * print the top class and the cost of the inference.
 *
 * The model is the test CNN (1x1x28x28 input, 10 classes) compiled with
 * `cuvilc build ... --name cnn`; the input image is linked in by input.S.
 */
#include <stddef.h>
#include <stdint.h>

#include "cnn.h"
#include "cuvil/port.h"

/* The input image, from input.S (raw float32, CUVIL_CNN_INPUT_0_BYTES). */
extern const float cnn_input[CUVIL_CNN_INPUT_0_COUNT];
extern const char cnn_input_end[];

static float probs[CUVIL_CNN_OUTPUT_0_COUNT];
static cuvil_cnn_t model;

int main(void) {
  size_t input_bytes = (size_t)(cnn_input_end - (const char *)cnn_input);
  if (input_bytes != CUVIL_CNN_INPUT_0_BYTES) {
    cuvil_printf("input image has %lu bytes, the model takes %u\n",
                 (unsigned long)input_bytes, CUVIL_CNN_INPUT_0_BYTES);
    return 1;
  }
  /* Static arena (placed by cnn.ld) and the weights embedded in cnn.o. */
  int rc = cuvil_cnn_init(&model, NULL, NULL, 0);
  if (rc != CUVIL_OK) {
    cuvil_printf("cuvil_cnn_init failed: %d\n", rc);
    return 1;
  }
  uint64_t c0 = cuvil_port_cycles(), i0 = cuvil_port_instret();
  rc = cuvil_cnn_run(&model, cnn_input, probs);
  uint64_t c1 = cuvil_port_cycles(), i1 = cuvil_port_instret();
  if (rc != CUVIL_OK) {
    cuvil_printf("cuvil_cnn_run failed: %d\n", rc);
    return 1;
  }
  unsigned top = 0;
  for (unsigned i = 1; i < CUVIL_CNN_OUTPUT_0_COUNT; ++i)
    if (probs[i] > probs[top])
      top = i;
  cuvil_printf("cuvil: class %u (p=%.4f), %lu cycles, %lu instructions, "
               "arena %u bytes\n",
               top, (double)probs[top], (unsigned long)(c1 - c0),
               (unsigned long)(i1 - i0), CUVIL_CNN_ARENA_SIZE);
  return 0;
}
