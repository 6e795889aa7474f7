/*
 * weight-slots.test: the A/B entry points of a host build of a model
 * (--name model, external weights): init_ab falls back to the second blob
 * when the first is refused, switch_weights takes only a blob that passes
 * every check (SHA-256 included) and otherwise changes nothing, and
 * active_slot/active_sha256 say which weights run. Prints `PASS <case>` or
 * `FAIL <case>: ...` per case; exits 1 if any failed.
 * Usage: weight_slots model.cuvw
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

#define ALIGN CUVIL_MODEL_ARENA_ALIGN
#define BLOB_BYTES (CUVIL_MODEL_WEIGHTS_SIZE + 4096u)

/* good, copy: the same blob twice; bad_crc: a data byte flipped; bad_sha:
 * the stated SHA-256 changed (its CRC-32 still right). */
static unsigned char good[BLOB_BYTES] __attribute__((aligned(64)));
static unsigned char copy[BLOB_BYTES] __attribute__((aligned(64)));
static unsigned char bad_crc[BLOB_BYTES] __attribute__((aligned(64)));
static unsigned char bad_sha[BLOB_BYTES] __attribute__((aligned(64)));
static unsigned char arena[CUVIL_MODEL_ARENA_0_SIZE + BLOB_BYTES]
    __attribute__((aligned(64)));
static int failed;

static void expect(const char *what, long got, long want) {
  if (got == want) {
    printf("PASS %s: %ld\n", what, got);
  } else {
    printf("FAIL %s: got %ld, expected %ld\n", what, got, want);
    failed = 1;
  }
}

int main(int argc, char **argv) {
  _Static_assert(64 % ALIGN == 0, "alignment");
  if (argc != 2)
    return 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f)
    return 2;
  unsigned long size = (unsigned long)fread(good, 1, sizeof good, f);
  fclose(f);
  cuvil_model_t m;
  memset(&m, 0, sizeof m);

  expect("active slot before init", cuvil_model_active_slot(&m),
         CUVIL_ERR_NOT_INIT);
  expect("digest before init", cuvil_model_active_sha256(&m) == NULL, 1);
  expect("switch before init", cuvil_model_switch_weights(&m, good, size),
         CUVIL_ERR_NOT_INIT);
  expect("switch without a model", cuvil_model_switch_weights(NULL, good, size),
         CUVIL_ERR_NULL);

  /* Where the data block and the stated digest are: from a good init. */
  expect("init", cuvil_model_init(&m, NULL, good, size), CUVIL_OK);
  size_t data_at = (size_t)((const unsigned char *)m.weights - good);
  size_t sha_at = (size_t)(cuvil_model_active_sha256(&m) - good);
  memcpy(copy, good, size);
  memcpy(bad_crc, good, size);
  bad_crc[data_at + 3] ^= 0x40;
  memcpy(bad_sha, good, size);
  bad_sha[sha_at] ^= 0x01;

  expect("init_ab, primary good",
         cuvil_model_init_ab(&m, NULL, good, size, copy, size), CUVIL_OK);
  expect("  on the primary", cuvil_model_active_slot(&m), 0);
  expect("init_ab, primary corrupted",
         cuvil_model_init_ab(&m, NULL, bad_crc, size, copy, size), CUVIL_OK);
  expect("  on the fallback", cuvil_model_active_slot(&m), 1);
  expect("  why the primary was refused", m.slot_status[0],
         CUVIL_ERR_BLOB_CHECKSUM);
  expect("  fallback's weights in use",
         (const unsigned char *)m.weights == copy + data_at, 1);
  expect("init_ab, both refused",
         cuvil_model_init_ab(&m, NULL, bad_crc, size, good, 16),
         CUVIL_ERR_BLOB_SHORT);

  expect("init", cuvil_model_init(&m, NULL, good, size), CUVIL_OK);
  expect("switch to the copy", cuvil_model_switch_weights(&m, copy, size),
         CUVIL_OK);
  expect("  slot 1 active", cuvil_model_active_slot(&m), 1);
  expect("  its weights in use",
         (const unsigned char *)m.weights == copy + data_at, 1);
  expect("  its digest", cuvil_model_active_sha256(&m) == copy + sha_at, 1);
  const void *before = m.weights;
  expect("switch to a corrupted blob",
         cuvil_model_switch_weights(&m, bad_crc, size),
         CUVIL_ERR_BLOB_CHECKSUM);
  expect("switch to a blob whose SHA-256 differs",
         cuvil_model_switch_weights(&m, bad_sha, size), CUVIL_ERR_BLOB_DIGEST);
  expect("switch to a misaligned blob",
         cuvil_model_switch_weights(&m, good + 8, size), CUVIL_ERR_BLOB_ALIGN);
  expect("switch to a short blob", cuvil_model_switch_weights(&m, good, 16),
         CUVIL_ERR_BLOB_SHORT);
  expect("switch to no blob (external weights)",
         cuvil_model_switch_weights(&m, NULL, 0), CUVIL_ERR_NULL);
  expect("  refusals changed nothing",
         m.weights == before && cuvil_model_active_slot(&m) == 1, 1);
  expect("switch back", cuvil_model_switch_weights(&m, good, size), CUVIL_OK);
  expect("  slot 0 active", cuvil_model_active_slot(&m), 0);

  /* A blob inside the arena in use would be overwritten by the next run. */
  void *arenas[1] = {arena};
  expect("init with an arena", cuvil_model_init(&m, arenas, good, size),
         CUVIL_OK);
  memcpy(arena + CUVIL_MODEL_ARENA_0_SIZE - 64, good, size);
  expect("switch to a blob in the arena",
         cuvil_model_switch_weights(&m, arena + CUVIL_MODEL_ARENA_0_SIZE - 64,
                                    size),
         CUVIL_ERR_ARENA_OVERLAP);
  return failed;
}
