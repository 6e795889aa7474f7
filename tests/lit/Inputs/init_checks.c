/*
 * init-checks.test: calls a host build of a model (--name model, external
 * weights) with bad arenas and blobs, and checks that init returns the
 * status each case must give. Prints `PASS <case>` or `FAIL <case>: ...`
 * per case; exits 1 if any failed. Usage: init_checks model.cuvw
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

#define ALIGN CUVIL_MODEL_ARENA_ALIGN

static unsigned char arena[CUVIL_MODEL_ARENA_0_SIZE + 2 * ALIGN]
    __attribute__((aligned(64)));
static unsigned char blob[CUVIL_MODEL_ARENA_0_SIZE + (1u << 20)]
    __attribute__((aligned(64)));
static int failed;

static void expect(const char *what, int got, int want) {
  if (got == want) {
    printf("PASS %s: %d\n", what, got);
  } else {
    printf("FAIL %s: init returned %d, expected %d\n", what, got, want);
    failed = 1;
  }
}

int main(int argc, char **argv) {
  _Static_assert(ALIGN % 64 == 0 || 64 % ALIGN == 0, "alignment");
  if (argc != 2)
    return 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f)
    return 2;
  unsigned long size =
      (unsigned long)fread(blob + ALIGN, 1, sizeof blob - ALIGN, f);
  fclose(f);
  const unsigned char *good = blob + ALIGN;
  cuvil_model_t m;
  memset(&m, 0, sizeof m);

  expect("run before init", cuvil_model_run_v(&m, NULL, NULL),
         CUVIL_ERR_NOT_INIT);
  expect("no model struct", cuvil_model_init(NULL, NULL, good, size),
         CUVIL_ERR_NULL);
  expect("no weights", cuvil_model_init(&m, NULL, NULL, 0),
         CUVIL_ERR_NO_WEIGHTS);

  void *arenas[1] = {arena + 8};
  expect("arena misaligned", cuvil_model_init(&m, arenas, good, size),
         CUVIL_ERR_ARENA_ALIGN);
  arenas[0] = (void *)(UINTPTR_MAX & ~(uintptr_t)(ALIGN - 1));
  expect("arena past the address space",
         cuvil_model_init(&m, arenas, good, size), CUVIL_ERR_ARENA_RANGE);
  /* The blob loaded into the arena's memory: the first run would overwrite it.
   */
  arenas[0] = blob;
  expect("arena overlaps the blob", cuvil_model_init(&m, arenas, good, size),
         CUVIL_ERR_ARENA_OVERLAP);

  memmove(blob + ALIGN + 4, blob + ALIGN, size);
  expect("blob misaligned", cuvil_model_init(&m, NULL, blob + ALIGN + 4, size),
         CUVIL_ERR_BLOB_ALIGN);
  memmove(blob + ALIGN, blob + ALIGN + 4, size);
  expect("blob smaller than the weights", cuvil_model_init(&m, NULL, good, 16),
         CUVIL_ERR_BLOB_SHORT);

  arenas[0] = arena + ALIGN;
  expect("good arena and blob", cuvil_model_init(&m, arenas, good, size),
         CUVIL_OK);
  expect("static arena, good blob", cuvil_model_init(&m, NULL, good, size),
         CUVIL_OK);
  return failed;
}
