/*
 * Digests of a weight blob's data block, freestanding (no libc): SHA-256
 * (FIPS 180-4) to identify the weights, HMAC-SHA-256 to authenticate them
 * (a blob signed with a key the firmware holds), CRC-32 (the IEEE 802.3
 * polynomial, reflected, as zlib computes it) for a cheap corruption check.
 * cuvilc compiles this same file to write the digests into the blob, and the
 * runtime to check them.
 */
#ifndef CUVIL_DIGEST_H
#define CUVIL_DIGEST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUVIL_SHA256_BYTES 32u

/* SHA-256 of n bytes at p into out[32]. */
void cuvil_sha256(const uint8_t *p, uint64_t n,
                  uint8_t out[CUVIL_SHA256_BYTES]);

/* HMAC-SHA-256 (RFC 2104, RFC 4231) of the n bytes at m with the key_len
 * bytes of key, into out[32]. */
void cuvil_hmac_sha256(const uint8_t *key, uint64_t key_len, const uint8_t *m,
                       uint64_t n, uint8_t out[CUVIL_SHA256_BYTES]);

/* CRC-32 of n bytes at p ("123456789" gives 0xcbf43926). */
uint32_t cuvil_crc32(const uint8_t *p, uint64_t n);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_DIGEST_H */
