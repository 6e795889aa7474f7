/*
 * Verification of a cuvil weight blob (schema/weights.fbs) without a
 * FlatBuffers library: generated init code calls this once, before any run.
 */
#ifndef CUVIL_BLOB_H
#define CUVIL_BLOB_H

#include <stdint.h>

#include "cuvil/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Schema version this runtime reads. */
#define CUVIL_BLOB_SCHEMA_VERSION 1u

/* Checks blob (size bytes): identifier "CUVW", schema version, that it was
 * made for the graph with hash graph_hash, that its data block lies within
 * the blob, is aligned to `align` bytes in memory, holds at least min_data
 * bytes, and matches its FNV-1a 64 checksum. On success stores the data
 * block's address in *data and returns CUVIL_OK; otherwise returns a
 * CUVIL_ERR_BLOB_* code and leaves *data untouched. */
int cuvil_blob_open(const void *blob, uint64_t size, uint64_t graph_hash,
                    uint64_t align, uint64_t min_data, const uint8_t **data);

/* FNV-1a 64 of n bytes (the blob's data checksum). */
uint64_t cuvil_fnv1a64(const uint8_t *p, uint64_t n);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_BLOB_H */
