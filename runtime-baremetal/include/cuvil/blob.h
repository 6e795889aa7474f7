/*
 * Verification of a cuvil weight blob (schema/weights.fbs) without a
 * FlatBuffers library: generated init code calls this once, before any run.
 */
#ifndef CUVIL_BLOB_H
#define CUVIL_BLOB_H

#include <stdint.h>

#include "cuvil/digest.h"
#include "cuvil/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Schema version this runtime reads. */
#define CUVIL_BLOB_SCHEMA_VERSION 2u

/* cuvil_blob_open flag: also compute the SHA-256 of the data block and
 * compare it with the blob's (a corruption or a tampering that the CRC-32
 * would miss). Costs about 6x the CRC-32: under QEMU about 50-60
 * instructions per byte against 10-14 (docs/deployment.md). */
#define CUVIL_BLOB_VERIFY_SHA256 1u

/* Checks blob (size bytes): identifier "CUVW", schema version, that it was
 * made for the structure with hash structure_hash (any weights of that
 * structure are accepted), that its data block lies within the blob, is
 * aligned to `align` bytes in memory, holds at least min_data bytes, and
 * matches its CRC-32, and with CUVIL_BLOB_VERIFY_SHA256 in flags its
 * SHA-256. On success stores the data block's address in *data and returns
 * CUVIL_OK; otherwise returns a CUVIL_ERR_BLOB_* code and leaves *data
 * untouched. */
int cuvil_blob_open(const void *blob, uint64_t size, uint64_t structure_hash,
                    uint64_t align, uint64_t min_data, unsigned flags,
                    const uint8_t **data);

/* Stores in *digest the address of the 32-byte SHA-256 of the data block
 * that the blob states (not recomputed: cuvil_blob_open with
 * CUVIL_BLOB_VERIFY_SHA256 checks it). Returns CUVIL_OK, or
 * CUVIL_ERR_BLOB_IDENT/FORMAT. */
int cuvil_blob_sha256(const void *blob, uint64_t size, const uint8_t **digest);

/* Checks that blob was signed (cuvilc build --sign-key) with the key_len
 * bytes of key: its HMAC-SHA-256 tag must be that of its structure hash and
 * of the SHA-256 of its data, computed here. Returns CUVIL_OK,
 * CUVIL_ERR_BLOB_SIGNATURE (no tag, or another key or other bytes),
 * CUVIL_ERR_NULL, or CUVIL_ERR_BLOB_IDENT/FORMAT. The other checks are
 * init's (cuvil_blob_open). */
int cuvil_blob_verify_signature(const void *blob, uint64_t size,
                                const uint8_t *key, uint64_t key_len);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_BLOB_H */
