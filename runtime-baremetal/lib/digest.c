/*
 * SHA-256 and CRC-32, written from their definitions (FIPS 180-4 sections
 * 4.1.2, 4.2.2, 5.1.1, 6.2; CRC-32 as the reflected division by the
 * polynomial 0x04c11db7 with all-ones initial value and final XOR).
 */
#include "cuvil/digest.h"

/* The first 32 bits of the fractional parts of the cube roots of the first
 * 64 primes (FIPS 180-4 4.2.2). */
static const uint32_t k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, unsigned n) {
  return (x >> n) | (x << (32 - n));
}

/* One 64-byte block into the state h (FIPS 180-4 6.2.2). */
static void sha256_block(uint32_t h[8], const uint8_t *block) {
  uint32_t w[64];
  for (unsigned t = 0; t < 16; ++t)
    w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 |
           (uint32_t)block[4 * t + 2] << 8 | (uint32_t)block[4 * t + 3];
  for (unsigned t = 16; t < 64; ++t) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6],
           hh = h[7];
  for (unsigned t = 0; t < 64; ++t) {
    uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
                  ((e & f) ^ (~e & g)) + k[t] + w[t];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +
                  ((a & b) ^ (a & c) ^ (b & c));
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += hh;
}

/* The initial hash value: the first 32 bits of the fractional parts of the
 * square roots of the first 8 primes (FIPS 180-4 5.3.3). */
static void sha256_start(uint32_t h[8]) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                 0xa54ff53a, 0x510e527f, 0x9b05688c,
                                 0x1f83d9ab, 0x5be0cd19};
  for (unsigned i = 0; i < 8; ++i)
    h[i] = iv[i];
}

/* The n bytes at p, after `before` bytes (a multiple of 64) that h has
 * taken already, to the end: out is the hash of all before + n bytes. */
static void sha256_finish(uint32_t h[8], const uint8_t *p, uint64_t n,
                          uint64_t before, uint8_t out[CUVIL_SHA256_BYTES]) {
  uint64_t whole = n / 64 * 64;
  for (uint64_t i = 0; i < whole; i += 64)
    sha256_block(h, p + i);
  /* Padding (5.1.1): a 1 bit, zeros, the length in bits as 64 bits big
   * endian, into one or two final blocks. */
  uint8_t tail[128];
  uint64_t rest = n - whole;
  for (uint64_t i = 0; i < rest; ++i)
    tail[i] = p[whole + i];
  tail[rest] = 0x80;
  uint64_t tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
  for (uint64_t i = rest + 1; i < tail_len - 8; ++i)
    tail[i] = 0;
  uint64_t bits = (before + n) * 8;
  for (unsigned i = 0; i < 8; ++i)
    tail[tail_len - 1 - i] = (uint8_t)(bits >> (8 * i));
  for (uint64_t i = 0; i < tail_len; i += 64)
    sha256_block(h, tail + i);
  for (unsigned i = 0; i < 8; ++i)
    for (unsigned j = 0; j < 4; ++j)
      out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
}

void cuvil_sha256(const uint8_t *p, uint64_t n,
                  uint8_t out[CUVIL_SHA256_BYTES]) {
  uint32_t h[8];
  sha256_start(h);
  sha256_finish(h, p, n, 0, out);
}

/* HMAC (RFC 2104) with SHA-256: H((K ^ opad) || H((K ^ ipad) || m)), K the
 * key padded with zeros to the 64-byte block, or its hash if longer. */
void cuvil_hmac_sha256(const uint8_t *key, uint64_t key_len, const uint8_t *m,
                       uint64_t n, uint8_t out[CUVIL_SHA256_BYTES]) {
  uint8_t k0[64];
  for (unsigned i = 0; i < 64; ++i)
    k0[i] = 0;
  if (key_len > 64)
    cuvil_sha256(key, key_len, k0);
  else
    for (uint64_t i = 0; i < key_len; ++i)
      k0[i] = key[i];
  uint8_t pad[64], inner[CUVIL_SHA256_BYTES];
  uint32_t h[8];
  for (unsigned i = 0; i < 64; ++i)
    pad[i] = (uint8_t)(k0[i] ^ 0x36);
  sha256_start(h);
  sha256_block(h, pad);
  sha256_finish(h, m, n, 64, inner);
  for (unsigned i = 0; i < 64; ++i)
    pad[i] = (uint8_t)(k0[i] ^ 0x5c);
  sha256_start(h);
  sha256_block(h, pad);
  sha256_finish(h, inner, CUVIL_SHA256_BYTES, 64, out);
}

/* The remainder of each 4-bit value, reflected: four steps of the bitwise
 * division, so that a byte takes two look-ups instead of eight steps while
 * the table stays 64 bytes. */
static const uint32_t crc_nibble[16] = {
    0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4,
    0x4db26158, 0x5005713c, 0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
    0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c};

uint32_t cuvil_crc32(const uint8_t *p, uint64_t n) {
  uint32_t crc = 0xffffffffu;
  for (uint64_t i = 0; i < n; ++i) {
    crc ^= p[i];
    crc = crc_nibble[crc & 15] ^ (crc >> 4);
    crc = crc_nibble[crc & 15] ^ (crc >> 4);
  }
  return ~crc;
}
