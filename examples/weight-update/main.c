/*
 * Weight update demo (make demo-update): a firmware that boots with the
 * weights v1 built into its model object (in flash on u74-mc), receives
 * v2, verifies it and switches to it, then receives a damaged v3 twice and
 * keeps running on v2.
 *
 * "Receiving" is reading a file of the host through semihosting into a RAM
 * slot, where a real firmware would write what its radio or bootloader
 * received. Every run's outputs are compared with ONNX Runtime's for the
 * weights in use (ref_v1.bin, ref_v2.bin). Prints one PASS or FAIL line per
 * step and exits 0 only if every step passed.
 */
#include <stddef.h>
#include <stdint.h>

#include "cuvil/port.h"
#include "model.h"

#define IN_COUNT CUVIL_MODEL_INPUT_0_COUNT
#define OUT_COUNT CUVIL_MODEL_OUTPUT_0_COUNT
/* A received blob: the size of v1's, with room for a larger one. */
#define SLOT_BYTES (CUVIL_MODEL_WEIGHTS_SIZE + 4096u)

static cuvil_model_t model;
static float input[IN_COUNT], output[OUT_COUNT], expected[OUT_COUNT];
/* Two RAM slots: a new blob is never written over the one in use. */
static unsigned char ram[2][SLOT_BYTES]
    __attribute__((aligned(CUVIL_MODEL_ARENA_ALIGN)));
static int failures;

static void step(int ok, const char *what, int status) {
  cuvil_printf("%s %s (status %d)\n", ok ? "PASS" : "FAIL", what, status);
  failures += !ok;
}

static float magnitude(float x) { return x < 0 ? -x : x; }

/* Runs the model and compares with ONNX Runtime's outputs in ref_file
 * (tolerance as the end-to-end tests: 1e-4 + 1e-3 relative). */
static void run_and_check(const char *what, const char *ref_file) {
  int rc = cuvil_model_run(&model, input, output);
  long got = cuvil_semihost_read_file(ref_file, expected, sizeof expected);
  int ok = rc == CUVIL_OK && got == (long)sizeof expected;
  for (unsigned i = 0; ok && i < OUT_COUNT; ++i)
    ok = magnitude(output[i] - expected[i]) <=
         1e-4f + 1e-3f * magnitude(expected[i]);
  step(ok, what, rc);
}

static void print_active(void) {
  const uint8_t *sha = cuvil_model_active_sha256(&model);
  cuvil_printf("  active slot %d, weights sha256 ",
               cuvil_model_active_slot(&model));
  for (unsigned i = 0; sha && i < 32; ++i)
    cuvil_printf("%02x", (unsigned)sha[i]);
  cuvil_printf("\n");
}

/* Reads a blob into RAM slot `slot` and asks the model to switch to it. */
static int receive_and_switch(const char *file, unsigned slot) {
  long n = cuvil_semihost_read_file(file, ram[slot], sizeof ram[slot]);
  if (n < 0) {
    cuvil_printf("cannot read %s\n", file);
    return CUVIL_ERR_NO_WEIGHTS;
  }
  return cuvil_model_switch_weights(&model, ram[slot], (unsigned long)n);
}

int main(void) {
  if (cuvil_semihost_read_file("input_0.bin", input, sizeof input) !=
      (long)sizeof input) {
    cuvil_printf("cannot read input_0.bin\n");
    return 1;
  }
  /* NULL weights: the blob built into the object (v1). */
  int rc = cuvil_model_init(&model, NULL, NULL, 0);
  step(rc == CUVIL_OK, "boot on the built-in weights v1", rc);
  if (rc != CUVIL_OK)
    return 1;
  print_active();
  run_and_check("v1 outputs equal ONNX Runtime's for v1", "ref_v1.bin");

  rc = receive_and_switch("v2.cuvw", 0);
  step(rc == CUVIL_OK && cuvil_model_active_slot(&model) == 1,
       "v2 received, verified (CRC-32, SHA-256) and switched to", rc);
  print_active();
  run_and_check("v2 outputs equal ONNX Runtime's for v2", "ref_v2.bin");

  rc = receive_and_switch("v3-crc.cuvw", 1);
  step(rc == CUVIL_ERR_BLOB_CHECKSUM,
       "v3 with a flipped data byte refused: CUVIL_ERR_BLOB_CHECKSUM", rc);
  rc = receive_and_switch("v3-sha.cuvw", 1);
  step(rc == CUVIL_ERR_BLOB_DIGEST,
       "v3 with a flipped byte and a matching CRC-32 refused: "
       "CUVIL_ERR_BLOB_DIGEST",
       rc);
  step(cuvil_model_active_slot(&model) == 1, "still on v2's slot",
       cuvil_model_active_slot(&model));
  print_active();
  run_and_check("outputs still equal ONNX Runtime's for v2", "ref_v2.bin");

  cuvil_printf("%s: %d step(s) failed\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
