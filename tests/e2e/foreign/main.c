/*
 * The foreign test firmware's program (tests/e2e/foreign_firmware.py): runs
 * the model compiled with `cuvilc build --name net` on the linked-in input
 * and compares its output with ONNX Runtime's. No cuvil runtime, no libc:
 * only the model's object, its header and this firmware's startup.
 *
 * Then two instances of the model (two contexts, cuvil_net_t): A on the
 * static arena the fragment placed, B on an arena this firmware owns.
 * With A's arena filled with a canary, B runs and must leave it intact
 * (B's state is its own), and both give ORT's output.
 * Returns 0 when every output matches (|out - ref| <= 1e-4 + 1e-3 |ref|).
 */
#include <stddef.h>
#include <stdint.h>

#include "net.h"

long fw_semihost(long op, void *arg);

extern const float fw_input[], fw_input_end[];
extern const float fw_expected[], fw_expected_end[];

#if CUVIL_NET_NUM_ARENAS != 1
#error "the instance check below handles one arena"
#endif

static cuvil_net_t net, other;
static float out[CUVIL_NET_OUTPUT_0_COUNT];
/* Instance B's arena, owned by this firmware. */
static unsigned char other_arena[CUVIL_NET_ARENA_0_SIZE]
    __attribute__((aligned(CUVIL_NET_ARENA_ALIGN)));

static void fw_puts(const char *s) { fw_semihost(0x04, (void *)s); }

static float fw_abs(float x) { return x < 0 ? -x : x; }

/* Runs instance m; 0 if its output is ORT's. */
static int run_and_check(cuvil_net_t *m) {
  if (cuvil_net_run(m, fw_input, out) != CUVIL_OK) {
    fw_puts("foreign firmware: run failed\n");
    return 4;
  }
  for (size_t i = 0; i < CUVIL_NET_OUTPUT_0_COUNT; ++i)
    if (!(fw_abs(out[i] - fw_expected[i]) <=
          1e-4f + 1e-3f * fw_abs(fw_expected[i]))) {
      fw_puts("foreign firmware: output differs from ONNX Runtime's\n");
      return 1;
    }
  return 0;
}

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
  int rc = run_and_check(&net);
  if (rc)
    return rc;

  /* A second instance on its own arena. */
  void *arenas[1] = {other_arena};
  if (cuvil_net_init(&other, arenas, NULL, 0) != CUVIL_OK ||
      other.arenas[0] != other_arena || net.arenas[0] == other_arena) {
    fw_puts("foreign firmware: the second instance's init failed\n");
    return 5;
  }
  volatile unsigned char *a = (volatile unsigned char *)net.arenas[0];
  for (size_t i = 0; i < CUVIL_NET_ARENA_0_SIZE; ++i)
    a[i] = (unsigned char)(0xa5 ^ i);
  if ((rc = run_and_check(&other)) != 0)
    return rc;
  for (size_t i = 0; i < CUVIL_NET_ARENA_0_SIZE; ++i)
    if (a[i] != (unsigned char)(0xa5 ^ i)) {
      fw_puts("foreign firmware: instance B wrote into instance A's arena\n");
      return 6;
    }
  if ((rc = run_and_check(&net)) != 0) /* A again, after B */
    return rc;
  fw_puts("foreign firmware: outputs match ONNX Runtime, two instances\n");
  return 0;
}
