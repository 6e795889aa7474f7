//===- fuzz_blob.cpp - libFuzzer: the runtime's weight-blob check ---------===//
//
// Each input is a weight blob (a .cuvw file). The firmware runs
// cuvil_blob_open (runtime-baremetal/lib/blob.c, a small bounds-checked
// FlatBuffers reader) on blobs it loads from flash or a file, so it must
// never read outside the blob, whatever the bytes. The blob sits in its own
// 64-byte-aligned buffer of exactly its size: any read past the end is an
// ASan report.
//
// FlatBuffers' own verifier (the schema's generated code) is the
// reference: when both accept a blob they must find the same data block,
// and a blob that the verifier accepts and whose identifier, version,
// structure hash, alignment, CRC-32 and SHA-256 are right may only be
// refused for its layout. cuvil_blob_verify_signature reads the same blob
// (with a fixed key): it too must stay inside it, and may accept only a
// tag that is the HMAC-SHA-256 of the structure hash and the data's
// SHA-256.
//
//===----------------------------------------------------------------------===//
#include "cuvil/blob.h"
#include "cuvil/digest.h"
#include "weights_generated.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

[[noreturn]] void fail(const char *What) {
  std::fprintf(stderr, "fuzz_blob: %s\n", What);
  std::abort();
}

constexpr uint64_t Align = 64;

/// Whether a field is stored in the table (the generated classes inherit
/// flatbuffers::Table privately).
template <typename T> bool has(const T *Tbl, flatbuffers::voffset_t Field) {
  return reinterpret_cast<const flatbuffers::Table *>(Tbl)->CheckField(Field);
}

bool sha256Matches(const uint8_t *Data, size_t Size, const uint8_t *Want) {
  uint8_t Got[CUVIL_SHA256_BYTES];
  cuvil_sha256(Data, Size, Got);
  return std::memcmp(Got, Want, sizeof(Got)) == 0;
}

void check(const uint8_t *Blob, size_t Size) {
  namespace fbs = cuvil::schema;
  flatbuffers::Verifier V(Blob, Size);
  const fbs::Weights *W =
      fbs::VerifyWeightsBuffer(V) ? fbs::GetWeights(Blob) : nullptr;
  const fbs::Header *H = W ? W->header() : nullptr;
  // The hash the blob claims, so that inputs get past the hash check.
  uint64_t Hash = H ? H->structure_hash() : 0x5eed;

  const uint8_t *Data = nullptr;
  int Status = cuvil_blob_open(Blob, Size, Hash, Align, 0,
                               CUVIL_BLOB_VERIFY_SHA256, &Data);
  if (Status == CUVIL_OK) {
    if (!Data || Data < Blob || Data > Blob + Size)
      fail("accepted, with a data block outside the blob");
    if (W && Data != (W->data() ? W->data()->data() : Blob))
      fail("accepted, with another data block than FlatBuffers finds");
    // Asking for more data than the blob has must fail.
    const uint8_t *Unused = nullptr;
    if (cuvil_blob_open(Blob, Size, Hash, Align, Size + 1, 0, &Unused) ==
        CUVIL_OK)
      fail("accepted a data block larger than the blob");
  } else if (Data) {
    fail("rejected, but stored a data pointer");
  }

  bool Valid =
      W && H && has(H, fbs::Header::VT_SCHEMA_VERSION) &&
      H->schema_version() == CUVIL_BLOB_SCHEMA_VERSION &&
      has(H, fbs::Header::VT_STRUCTURE_HASH) && has(W, fbs::Weights::VT_DATA) &&
      (reinterpret_cast<uintptr_t>(W->data()->data()) & (Align - 1)) == 0 &&
      cuvil_crc32(W->data()->data(), W->data()->size()) == W->data_crc32() &&
      W->data_sha256() && W->data_sha256()->size() == CUVIL_SHA256_BYTES &&
      sha256Matches(W->data()->data(), W->data()->size(),
                    W->data_sha256()->data());
  // The runtime is stricter than FlatBuffers' verifier about layout on
  // purpose (a table's fields must lie within the inline size its vtable
  // declares, and that within the blob; FlatBuffers checks only the bytes
  // of each field), so such a blob may fail as CUVIL_ERR_BLOB_FORMAT, but
  // for no other reason.
  if (Valid && Status != CUVIL_OK && Status != CUVIL_ERR_BLOB_FORMAT)
    fail("rejected a blob that FlatBuffers verifies and whose fields are "
         "right");

  static const uint8_t Key[] = "fuzz_blob key 0123456789";
  const uint64_t KeyLen = sizeof(Key) - 1;
  if (cuvil_blob_verify_signature(Blob, Size, Key, KeyLen) == CUVIL_OK && W &&
      H) {
    const auto *Tag = W->data_hmac();
    if (!Tag || Tag->size() != CUVIL_SHA256_BYTES)
      fail("accepted a signature without a 32-byte tag");
    uint8_t Msg[8 + CUVIL_SHA256_BYTES], Mac[CUVIL_SHA256_BYTES];
    for (unsigned I = 0; I < 8; ++I)
      Msg[I] = static_cast<uint8_t>(H->structure_hash() >> (8 * I));
    cuvil_sha256(W->data() ? W->data()->data() : Blob,
                 W->data() ? W->data()->size() : 0, Msg + 8);
    cuvil_hmac_sha256(Key, KeyLen, Msg, sizeof(Msg), Mac);
    if (std::memcmp(Mac, Tag->data(), sizeof(Mac)) != 0)
      fail("accepted a tag that is not the key's HMAC");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Bytes, size_t Size) {
  void *Blob = nullptr;
  if (posix_memalign(&Blob, Align, Size ? Size : 1))
    fail("out of memory");
  if (Size)
    std::memcpy(Blob, Bytes, Size);
  check(static_cast<const uint8_t *>(Blob), Size);
  std::free(Blob);
  return 0;
}
