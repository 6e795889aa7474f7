/*
 * A/B weight slots: the two weight blobs a model instance can run on and
 * which of them it runs on. The generated cuvil_<model>_t ends with these
 * fields, in this order (slot_blob, slot_size, slot_status, active_slot);
 * its init, init_ab, switch_weights, active_slot and active_sha256 call the
 * functions below on them. The state lives in the caller's instance: no
 * globals.
 */
#ifndef CUVIL_SLOTS_H
#define CUVIL_SLOTS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuvil_slots {
  const void *blob[2]; /* slot 0: primary, slot 1: fallback or update */
  uint64_t size[2];
  int32_t status[2]; /* last check of each slot's blob: CUVIL_OK or why not */
  uint32_t active;   /* the slot whose weights run uses */
} cuvil_slots_t;

/* What one model needs of a blob, and where its arenas are (a new blob
 * must not overlap them). */
typedef struct cuvil_slots_model {
  uint64_t structure_hash;
  uint64_t align;
  uint64_t data_size;
  void *const *arenas;         /* the instance's arenas */
  const uint64_t *arena_bytes; /* their sizes */
  uint32_t num_arenas;
} cuvil_slots_model_t;

/* After a successful init with `blob`: slot 0 holds it and is active. */
void cuvil_slots_reset(cuvil_slots_t *s, const void *blob, uint64_t size);

/* After init refused `primary` with `why` and then took the blob of slot 0
 * (the fallback): the fallback moves to slot 1, which becomes active, and
 * slot 0 records the primary and why it was refused. */
void cuvil_slots_fell_back(cuvil_slots_t *s, const void *primary,
                           uint64_t primary_size, int32_t why);

/* Checks `blob` as init does (alignment, size, no overlap with the arenas,
 * cuvil_blob_open) and its SHA-256 too; only if it passes, puts it in the
 * inactive slot and makes that active: one store of the data block's
 * address into *weights, which a run reads once when it starts. Returns
 * CUVIL_OK, or the refusal (nothing changed). */
int cuvil_slots_switch(cuvil_slots_t *s, const void **weights,
                       const cuvil_slots_model_t *model, const void *blob,
                       uint64_t size);

/* The 32-byte SHA-256 of the active slot's data, as its blob states it
 * (checked when the blob was switched to; at init only its CRC-32 is), or
 * NULL if the blob has none. */
const uint8_t *cuvil_slots_sha256(const cuvil_slots_t *s);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_SLOTS_H */
