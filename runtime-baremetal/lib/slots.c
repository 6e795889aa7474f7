/*
 * A/B weight slots (cuvil/slots.h): the part of the generated
 * init_ab/switch_weights/active_sha256 that does not depend on the model.
 */
#include "cuvil/slots.h"

#include "cuvil/blob.h"

void cuvil_slots_reset(cuvil_slots_t *s, const void *blob, uint64_t size) {
  s->blob[0] = blob;
  s->size[0] = size;
  s->status[0] = CUVIL_OK;
  s->blob[1] = 0;
  s->size[1] = 0;
  s->status[1] = CUVIL_ERR_NO_WEIGHTS;
  s->active = 0;
}

void cuvil_slots_fell_back(cuvil_slots_t *s, const void *primary,
                           uint64_t primary_size, int32_t why) {
  s->blob[1] = s->blob[0];
  s->size[1] = s->size[0];
  s->status[1] = CUVIL_OK;
  s->blob[0] = primary;
  s->size[0] = primary_size;
  s->status[0] = why;
  s->active = 1;
}

/* Whether [a, a + n) and [b, b + m) share a byte (ends clamped to the top
 * of the address space, as init clamps them). */
static int overlap(uintptr_t a, uint64_t n, uintptr_t b, uint64_t m) {
  uintptr_t a_end = a + n < a ? UINTPTR_MAX : a + n;
  uintptr_t b_end = b + m < b ? UINTPTR_MAX : b + m;
  return a < b_end && b < a_end;
}

int cuvil_slots_switch(cuvil_slots_t *s, const void **weights,
                       const cuvil_slots_model_t *model, const void *blob,
                       uint64_t size) {
  if (!s || !weights || !model || !blob)
    return CUVIL_ERR_NULL;
  /* The checks init makes before it opens a blob, in its order. */
  if (((uintptr_t)blob & (model->align - 1)) != 0)
    return CUVIL_ERR_BLOB_ALIGN;
  if (model->data_size > 0 && size < model->data_size + 12)
    return CUVIL_ERR_BLOB_SHORT;
  for (uint32_t a = 0; a < model->num_arenas; ++a)
    if (overlap((uintptr_t)model->arenas[a], model->arena_bytes[a],
                (uintptr_t)blob, size))
      return CUVIL_ERR_ARENA_OVERLAP;
  const uint8_t *data = 0;
  int rc = cuvil_blob_open(blob, size, model->structure_hash, model->align,
                           model->data_size, CUVIL_BLOB_VERIFY_SHA256, &data);
  if (rc != CUVIL_OK)
    return rc;
  uint32_t next = s->active ^ 1u;
  s->blob[next] = blob;
  s->size[next] = size;
  s->status[next] = CUVIL_OK;
  /* The switch: run_v loads *weights once when it starts, so a run in
   * progress (on another core) finishes on the old blob. */
  *(const void *volatile *)weights = data;
  s->active = next;
  return CUVIL_OK;
}

const uint8_t *cuvil_slots_sha256(const cuvil_slots_t *s) {
  const uint8_t *digest = 0;
  uint32_t a = s->active & 1u;
  if (cuvil_blob_sha256(s->blob[a], s->size[a], &digest) != CUVIL_OK)
    return 0;
  return digest;
}
