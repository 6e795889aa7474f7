//===- WeightsBlob.cpp ----------------------------------------------------===//
#include "emit/WeightsBlob.h"

#include "weights_generated.h"

#include <cuvil/blob.h>
#include <cuvil/digest.h>
#include <fmt/format.h>
#include <set>

#include <cstring>
#include <pthread.h>

namespace cuvil {

uint64_t fnv1a64(const void *Data, size_t Size, uint64_t H) {
  const auto *P = static_cast<const uint8_t *>(Data);
  for (size_t I = 0; I < Size; ++I) {
    H ^= P[I];
    H *= 0x100000001b3ull;
  }
  return H;
}

uint64_t structureHash(const Graph &G, const GraphLowering &L,
                       const MemoryPlan &Plan, const TargetInfo &T) {
  // The constants kernels read through a pointer (and a constant graph
  // output, which run copies out): their bytes are the weights proper.
  std::set<const Value *> ReadAtRunTime(G.outputs().begin(), G.outputs().end());
  for (const NodeLowering &NL : L) {
    for (const KernelCall &C : NL.Calls)
      for (const KernelArg &A : C.Args)
        if (A.K == KernelArg::Kind::Tensor)
          ReadAtRunTime.insert(A.V);
    for (const RunCondition &C : NL.RunsWhen)
      ReadAtRunTime.insert(C.Cond);
  }
  std::string Text = fmt::format("{}\ntarget {}\nalign {}\n", G.summary(),
                                 T.Name, Plan.Alignment);
  uint64_t H = fnv1a64(Text.data(), Text.size());
  for (const Value *V : Plan.Weights) {
    int64_t Fields[] = {static_cast<int64_t>(V->dtype()), Plan.at(V).Offset,
                        V->byteSize(), static_cast<int64_t>(V->rank())};
    H = fnv1a64(Fields, sizeof(Fields), H);
    H = fnv1a64(V->shape().data(), V->shape().size() * sizeof(int64_t), H);
    if (!ReadAtRunTime.count(V))
      H = fnv1a64(V->data().data(), V->data().size(), H);
  }
  return H;
}

namespace {

/// A CRC-32 computed in a thread of its own.
struct CrcTask {
  const uint8_t *Data;
  size_t Size;
  uint32_t Result;
};

void *runCrc(void *Arg) {
  auto *T = static_cast<CrcTask *>(Arg);
  T->Result = cuvil_crc32(T->Data, T->Size);
  return nullptr;
}

} // namespace

std::vector<uint8_t> buildWeightsBlob(const MemoryPlan &Plan,
                                      const std::string &ModelName,
                                      const std::string &TargetName,
                                      uint64_t StructureHash,
                                      const std::vector<uint8_t> *SignKey) {
  namespace fbs = cuvil::schema;
  std::vector<uint8_t> Data(Plan.WeightsSize, 0);
  for (const Value *V : Plan.Weights)
    if (!V->data().empty()) // an empty tensor's data may be a null pointer
      std::memcpy(Data.data() + Plan.at(V).Offset, V->data().data(),
                  V->data().size());
  // The two digests of the data: SHA-256 here and CRC-32 beside it in a
  // thread when the data is large (MobileNetV2: 14 MB, some 50 ms each);
  // one after the other when no thread is to be had.
  std::vector<uint8_t> Sha(CUVIL_SHA256_BYTES);
  CrcTask Crc{Data.data(), Data.size(), 0};
  pthread_t Beside;
  const bool Threaded = Data.size() >= (1u << 20) &&
                        pthread_create(&Beside, nullptr, runCrc, &Crc) == 0;
  cuvil_sha256(Data.data(), Data.size(), Sha.data());
  if (Threaded)
    pthread_join(Beside, nullptr);
  else
    runCrc(&Crc);

  flatbuffers::FlatBufferBuilder FB(Plan.WeightsSize + 4096);
  FB.ForceDefaults(true); // explicit fields: the C reader finds every one
  std::vector<flatbuffers::Offset<fbs::Tensor>> Tensors;
  for (const Value *V : Plan.Weights)
    Tensors.push_back(fbs::CreateTensorDirect(
        FB, V->name().c_str(), static_cast<fbs::DType>(V->dtype()), &V->shape(),
        0, Plan.at(V).Offset, V->byteSize()));
  auto Header = fbs::CreateHeaderDirect(
      FB, WeightsSchemaVersion, ModelName.c_str(), StructureHash,
      TargetName.c_str(), static_cast<uint32_t>(Plan.Alignment));
  auto TensorVec = FB.CreateVector(Tensors);
  auto ShaVec = FB.CreateVector(Sha);
  // What ForceVectorAlignment does, without its assertion that the
  // alignment is at most FLATBUFFERS_MAX_ALIGNMENT (32): the DMA alignment
  // of a target is 64 bytes or more. The builder records it as the
  // buffer's minimum alignment, so the data block stays aligned relative
  // to the blob's start.
  FB.PreAlign(Data.size(), static_cast<size_t>(Plan.Alignment));
  auto DataVec = FB.CreateVector(Data);
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> HmacVec = 0;
  if (SignKey) {
    // The message: the structure hash (little-endian, as the blob stores
    // it) and the data's SHA-256.
    uint8_t Msg[8 + CUVIL_SHA256_BYTES];
    for (unsigned I = 0; I < 8; ++I)
      Msg[I] = static_cast<uint8_t>(StructureHash >> (8 * I));
    std::memcpy(Msg + 8, Sha.data(), CUVIL_SHA256_BYTES);
    std::vector<uint8_t> Tag(CUVIL_SHA256_BYTES);
    cuvil_hmac_sha256(SignKey->data(), SignKey->size(), Msg, sizeof Msg,
                      Tag.data());
    HmacVec = FB.CreateVector(Tag);
  }
  auto Root = fbs::CreateWeights(FB, Header, TensorVec, Crc.Result, DataVec,
                                 ShaVec, HmacVec);
  fbs::FinishWeightsBuffer(FB, Root);
  return std::vector<uint8_t>(FB.GetBufferPointer(),
                              FB.GetBufferPointer() + FB.GetSize());
}

std::string blobSha256Hex(const std::vector<uint8_t> &Blob) {
  const uint8_t *Digest = nullptr;
  if (cuvil_blob_sha256(Blob.data(), Blob.size(), &Digest) != CUVIL_OK)
    return "";
  std::string Hex;
  for (unsigned I = 0; I < CUVIL_SHA256_BYTES; ++I)
    Hex += fmt::format("{:02x}", Digest[I]);
  return Hex;
}

} // namespace cuvil
