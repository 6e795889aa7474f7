/*
 * cuvil weight blob verification: a minimal, bounds-checked FlatBuffers
 * reader for the few fields of schema/weights.fbs the runtime needs.
 *
 * FlatBuffers layout (little-endian): the buffer starts with a uoffset (u32)
 * to the root table, then the 4-byte file identifier. A table starts with
 * an soffset (i32) back to its vtable: vtable = table - soffset. A vtable is
 * u16 vtable size, u16 table size, then one u16 offset per field (0 or
 * beyond the vtable: field absent). Sub-tables and vectors are reached by a
 * uoffset relative to the field's own position; a vector is a u32 length
 * followed by its elements.
 */
#include "cuvil/blob.h"

#include <stddef.h>

/* Field numbers in schema/weights.fbs. */
enum {
  WEIGHTS_HEADER = 0,
  WEIGHTS_CRC32 = 2,
  WEIGHTS_DATA = 3,
  WEIGHTS_SHA256 = 4,
  WEIGHTS_HMAC = 5
};
enum { HEADER_VERSION = 0, HEADER_STRUCTURE_HASH = 2 };

typedef struct {
  const uint8_t *p;
  uint64_t size;
} buf_t;

static uint64_t rd(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* Position of field `idx` of the table at `table`, or 0 if absent; -1 if
 * the table or its vtable is out of bounds. */
static int64_t field(buf_t b, uint64_t table, unsigned idx, unsigned width) {
  if (table + 4 > b.size)
    return -1;
  int64_t vt = (int64_t)table - (int32_t)rd(b.p + table, 4);
  if (vt < 0 || (uint64_t)vt + 4 > b.size)
    return -1;
  uint64_t vt_size = rd(b.p + vt, 2), tbl_size = rd(b.p + vt + 2, 2);
  if ((uint64_t)vt + vt_size > b.size || table + tbl_size > b.size)
    return -1;
  uint64_t slot = 4 + 2 * (uint64_t)idx;
  if (slot + 2 > vt_size)
    return 0;
  uint64_t off = rd(b.p + vt + slot, 2);
  if (off == 0)
    return 0;
  if (off + width > tbl_size)
    return -1;
  return (int64_t)(table + off);
}

/* Follows the uoffset stored at `pos`; -1 if out of bounds. */
static int64_t follow(buf_t b, int64_t pos) {
  if (pos <= 0 || (uint64_t)pos + 4 > b.size)
    return -1;
  uint64_t t = (uint64_t)pos + rd(b.p + pos, 4);
  return t + 4 <= b.size ? (int64_t)t : -1;
}

/* The vector whose uoffset is field `idx` of the table at `table`: its
 * length in *len and the position of its first element, 0 if the field is
 * absent, -1 if out of bounds. */
static int64_t vector(buf_t b, uint64_t table, unsigned idx, uint64_t *len) {
  int64_t at = field(b, table, idx, 4);
  if (at <= 0)
    return at;
  int64_t vec = follow(b, at);
  if (vec < 0)
    return -1;
  *len = rd(b.p + vec, 4);
  if ((uint64_t)vec + 4 + *len > b.size)
    return -1;
  return vec + 4;
}

/* The root table of the blob at `blob` after checking the pointers, the
 * identifier and the size, or a status (< 0). */
static int64_t root_table(buf_t b, const void *out) {
  if (!b.p || !out)
    return CUVIL_ERR_NULL;
  if (b.size < 8 || b.p[4] != 'C' || b.p[5] != 'U' || b.p[6] != 'V' ||
      b.p[7] != 'W')
    return CUVIL_ERR_BLOB_IDENT;
  uint64_t root = rd(b.p, 4);
  return root + 4 <= b.size ? (int64_t)root : CUVIL_ERR_BLOB_FORMAT;
}

/* The header table of the root table at `root`, or -1. */
static int64_t header_table(buf_t b, int64_t root) {
  int64_t at = field(b, (uint64_t)root, WEIGHTS_HEADER, 4);
  return at > 0 ? follow(b, at) : -1;
}

int cuvil_blob_sha256(const void *blob, uint64_t size, const uint8_t **digest) {
  buf_t b = {(const uint8_t *)blob, size};
  int64_t root = root_table(b, digest);
  if (root < 0)
    return (int)root;
  uint64_t len = 0;
  int64_t at = vector(b, (uint64_t)root, WEIGHTS_SHA256, &len);
  if (at <= 0 || len != CUVIL_SHA256_BYTES)
    return CUVIL_ERR_BLOB_FORMAT;
  *digest = b.p + at;
  return CUVIL_OK;
}

int cuvil_blob_open(const void *blob, uint64_t size, uint64_t structure_hash,
                    uint64_t align, uint64_t min_data, unsigned flags,
                    const uint8_t **data) {
  buf_t b = {(const uint8_t *)blob, size};
  int64_t root = root_table(b, data);
  if (root < 0)
    return (int)root;

  int64_t hdr = header_table(b, root);
  if (hdr < 0)
    return CUVIL_ERR_BLOB_FORMAT;
  int64_t ver = field(b, (uint64_t)hdr, HEADER_VERSION, 4);
  int64_t hash = field(b, (uint64_t)hdr, HEADER_STRUCTURE_HASH, 8);
  if (ver < 0 || hash < 0)
    return CUVIL_ERR_BLOB_FORMAT;
  /* The version first: a blob of another version may lay its fields out
   * differently, so nothing else in it can be read. */
  if (ver == 0 || rd(b.p + ver, 4) != CUVIL_BLOB_SCHEMA_VERSION)
    return CUVIL_ERR_BLOB_VERSION;
  if (hash == 0 || rd(b.p + hash, 8) != structure_hash)
    return CUVIL_ERR_BLOB_STRUCTURE;

  int64_t crc = field(b, (uint64_t)root, WEIGHTS_CRC32, 4);
  uint64_t len = 0;
  int64_t start = vector(b, (uint64_t)root, WEIGHTS_DATA, &len);
  if (crc < 0 || start < 0)
    return CUVIL_ERR_BLOB_FORMAT;
  const uint8_t *digest = 0;
  if ((flags & CUVIL_BLOB_VERIFY_SHA256) &&
      cuvil_blob_sha256(blob, size, &digest) != CUVIL_OK)
    return CUVIL_ERR_BLOB_FORMAT;
  if (start == 0) /* no data vector: only valid for a weightless model */
    return min_data == 0 ? (*data = b.p, CUVIL_OK) : CUVIL_ERR_BLOB_SIZE;
  const uint8_t *p = b.p + start;
  if (len && align && ((uintptr_t)p & (align - 1)) != 0)
    return CUVIL_ERR_BLOB_ALIGN;
  if (len < min_data)
    return CUVIL_ERR_BLOB_SIZE;
  if (cuvil_crc32(p, len) != (crc ? (uint32_t)rd(b.p + crc, 4) : 0))
    return CUVIL_ERR_BLOB_CHECKSUM;
  if (digest) {
    uint8_t sum[CUVIL_SHA256_BYTES];
    cuvil_sha256(p, len, sum);
    uint8_t diff = 0;
    for (unsigned i = 0; i < CUVIL_SHA256_BYTES; ++i)
      diff |= (uint8_t)(sum[i] ^ digest[i]);
    if (diff)
      return CUVIL_ERR_BLOB_DIGEST;
  }
  *data = p;
  return CUVIL_OK;
}

int cuvil_blob_verify_signature(const void *blob, uint64_t size,
                                const uint8_t *key, uint64_t key_len) {
  buf_t b = {(const uint8_t *)blob, size};
  int64_t root = root_table(b, key);
  if (root < 0)
    return (int)root;
  int64_t hdr = header_table(b, root);
  int64_t hash =
      hdr < 0 ? -1 : field(b, (uint64_t)hdr, HEADER_STRUCTURE_HASH, 8);
  uint64_t len = 0, tag_len = 0;
  int64_t start = vector(b, (uint64_t)root, WEIGHTS_DATA, &len);
  int64_t tag = vector(b, (uint64_t)root, WEIGHTS_HMAC, &tag_len);
  if (hash <= 0 || start < 0 || tag < 0)
    return CUVIL_ERR_BLOB_FORMAT;
  if (tag == 0 || tag_len != CUVIL_SHA256_BYTES)
    return CUVIL_ERR_BLOB_SIGNATURE; /* not signed */
  /* The message: the structure hash as stored, then the SHA-256 of the
   * data as it is (not as the blob states it). */
  uint8_t msg[8 + CUVIL_SHA256_BYTES], mac[CUVIL_SHA256_BYTES];
  for (unsigned i = 0; i < 8; ++i)
    msg[i] = b.p[hash + i];
  cuvil_sha256(start ? b.p + start : b.p, start ? len : 0, msg + 8);
  cuvil_hmac_sha256(key, key_len, msg, sizeof msg, mac);
  /* Every byte compared, whatever differs first. */
  uint8_t diff = 0;
  for (unsigned i = 0; i < CUVIL_SHA256_BYTES; ++i)
    diff |= (uint8_t)(mac[i] ^ b.p[tag + i]);
  return diff ? CUVIL_ERR_BLOB_SIGNATURE : CUVIL_OK;
}
