/*
 * The foreign test firmware's program (tests/e2e/foreign_firmware.py): runs
 * the model compiled with `cuvilc build --name net` once on the linked-in
 * input and compares its output with ONNX Runtime's. No cuvil runtime, no
 * libc: only the model's object, its header and this firmware's startup.
 * Returns 0 when every element matches (|out - ref| <= 1e-4 + 1e-3 |ref|).
 */
#include <stddef.h>
#include <stdint.h>

#include "net.h"

long fw_semihost(long op, void *arg);

extern const float fw_input[], fw_input_end[];
extern const float fw_expected[], fw_expected_end[];

static cuvil_net_t net;
static float out[CUVIL_NET_OUTPUT_0_COUNT];

static void fw_puts(const char *s) { fw_semihost(0x04, (void *)s); }

static float fw_abs(float x) { return x < 0 ? -x : x; }

int fw_main(void) {
  if ((size_t)(fw_input_end - fw_input) != CUVIL_NET_INPUT_0_COUNT ||
      (size_t)(fw_expected_end - fw_expected) != CUVIL_NET_OUTPUT_0_COUNT) {
    fw_puts("foreign firmware: input or reference has the wrong size\n");
    return 2;
  }
  if (cuvil_net_init(&net, NULL, NULL, 0) != CUVIL_OK) {
    fw_puts("foreign firmware: init failed\n");
    return 3;
  }
  if (cuvil_net_run(&net, fw_input, out) != CUVIL_OK) {
    fw_puts("foreign firmware: run failed\n");
    return 4;
  }
  for (size_t i = 0; i < CUVIL_NET_OUTPUT_0_COUNT; ++i)
    if (!(fw_abs(out[i] - fw_expected[i]) <=
          1e-4f + 1e-3f * fw_abs(fw_expected[i]))) {
      fw_puts("foreign firmware: output differs from ONNX Runtime's\n");
      return 1;
    }
  fw_puts("foreign firmware: outputs match ONNX Runtime\n");
  return 0;
}
