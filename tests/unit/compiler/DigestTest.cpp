//===- DigestTest.cpp - The runtime's SHA-256 and CRC-32 ------------------===//
//
// runtime-baremetal/lib/digest.c against the FIPS 180-2 appendix B
// examples (one block, two blocks, a million 'a'), messages whose padding
// falls either side of a block boundary, HMAC-SHA-256 against the RFC 4231
// test cases, and the CRC-32 check value.
//
//===----------------------------------------------------------------------===//
#include <cuvil/digest.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

namespace {

std::string sha256Hex(const std::string &Message) {
  uint8_t Out[CUVIL_SHA256_BYTES];
  cuvil_sha256(reinterpret_cast<const uint8_t *>(Message.data()),
               Message.size(), Out);
  std::string Hex;
  for (uint8_t B : Out)
    Hex += fmt::format("{:02x}", B);
  return Hex;
}

std::string hmacHex(const std::string &Key, const std::string &Message) {
  uint8_t Out[CUVIL_SHA256_BYTES];
  cuvil_hmac_sha256(reinterpret_cast<const uint8_t *>(Key.data()), Key.size(),
                    reinterpret_cast<const uint8_t *>(Message.data()),
                    Message.size(), Out);
  std::string Hex;
  for (uint8_t B : Out)
    Hex += fmt::format("{:02x}", B);
  return Hex;
}

uint32_t crc32(const std::string &Message) {
  return cuvil_crc32(reinterpret_cast<const uint8_t *>(Message.data()),
                     Message.size());
}

} // namespace

TEST(Digest, Sha256FipsExamples) {
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(
      sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                      "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrs"
                      "tu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Digest, Sha256PaddingAtBlockBoundaries) {
  // 55 bytes: the length still fits the last block; 56 and 63: it spills
  // into a second; 64: a whole padding block; 119: two blocks and a spill.
  EXPECT_EQ(sha256Hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256Hex(std::string(63, 'a')),
            "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
  EXPECT_EQ(sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(sha256Hex(std::string(119, 'a')),
            "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
}

TEST(Digest, HmacSha256Rfc4231) {
  // Test cases 1-4, 6 and 7 (5 truncates the output).
  EXPECT_EQ(hmacHex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hmacHex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hmacHex(std::string(20, '\xaa'), std::string(50, '\xdd')),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  std::string Key4;
  for (char C = 1; C <= 25; ++C)
    Key4 += C;
  EXPECT_EQ(hmacHex(Key4, std::string(50, '\xcd')),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  // A key longer than the block is hashed first.
  EXPECT_EQ(hmacHex(std::string(131, '\xaa'),
                    "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(
      hmacHex(std::string(131, '\xaa'),
              "This is a test using a larger than block-size key and a larger "
              "than block-size data. The key needs to be hashed before being "
              "used by the HMAC algorithm."),
      "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(Digest, Crc32CheckValues) {
  EXPECT_EQ(crc32("123456789"), 0xcbf43926u);
  EXPECT_EQ(crc32(""), 0u);
  EXPECT_EQ(crc32("The quick brown fox jumps over the lazy dog"), 0x414fa339u);
  // Any one flipped bit changes it.
  std::string M(100, 'x');
  uint32_t Base = crc32(M);
  for (size_t I = 0; I < M.size(); ++I)
    for (int Bit = 0; Bit < 8; ++Bit) {
      std::string F = M;
      F[I] = static_cast<char>(F[I] ^ (1 << Bit));
      EXPECT_NE(crc32(F), Base) << I << ":" << Bit;
    }
}
