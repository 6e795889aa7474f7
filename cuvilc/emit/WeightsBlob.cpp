//===- WeightsBlob.cpp ----------------------------------------------------===//
#include "emit/WeightsBlob.h"

#include "weights_generated.h"

#include <cstring>

namespace cuvil {

uint64_t fnv1a64(const void *Data, size_t Size, uint64_t H) {
  const auto *P = static_cast<const uint8_t *>(Data);
  for (size_t I = 0; I < Size; ++I) {
    H ^= P[I];
    H *= 0x100000001b3ull;
  }
  return H;
}

uint64_t graphHash(const Graph &G, const MemoryPlan &Plan,
                   const TargetInfo &T) {
  std::string Text = G.summary() + "\ntarget " + T.Name + "\n";
  uint64_t H = fnv1a64(Text.data(), Text.size());
  for (const Value *V : Plan.Weights) {
    int64_t Off = Plan.at(V).Offset;
    H = fnv1a64(&Off, sizeof(Off), H);
    H = fnv1a64(V->data().data(), V->data().size(), H);
  }
  return H;
}

std::vector<uint8_t> buildWeightsBlob(const MemoryPlan &Plan,
                                      const std::string &ModelName,
                                      const std::string &TargetName,
                                      uint64_t GraphHash) {
  namespace fbs = cuvil::schema;
  std::vector<uint8_t> Data(Plan.WeightsSize, 0);
  for (const Value *V : Plan.Weights)
    if (!V->data().empty()) // an empty tensor's data may be a null pointer
      std::memcpy(Data.data() + Plan.at(V).Offset, V->data().data(),
                  V->data().size());

  flatbuffers::FlatBufferBuilder FB(Plan.WeightsSize + 4096);
  FB.ForceDefaults(true); // explicit fields: the C reader finds every one
  std::vector<flatbuffers::Offset<fbs::Tensor>> Tensors;
  for (const Value *V : Plan.Weights)
    Tensors.push_back(fbs::CreateTensorDirect(
        FB, V->name().c_str(), static_cast<fbs::DType>(V->dtype()), &V->shape(),
        0, Plan.at(V).Offset, V->byteSize()));
  auto Header = fbs::CreateHeaderDirect(
      FB, WeightsSchemaVersion, ModelName.c_str(), GraphHash,
      TargetName.c_str(), static_cast<uint32_t>(Plan.Alignment));
  auto TensorVec = FB.CreateVector(Tensors);
  // What ForceVectorAlignment does, without its assertion that the
  // alignment is at most FLATBUFFERS_MAX_ALIGNMENT (32): the DMA alignment
  // of a target is 64 bytes or more. The builder records it as the
  // buffer's minimum alignment, so the data block stays aligned relative
  // to the blob's start.
  FB.PreAlign(Data.size(), static_cast<size_t>(Plan.Alignment));
  auto DataVec = FB.CreateVector(Data);
  auto Root = fbs::CreateWeights(FB, Header, TensorVec,
                                 fnv1a64(Data.data(), Data.size()), DataVec);
  fbs::FinishWeightsBuffer(FB, Root);
  return std::vector<uint8_t>(FB.GetBufferPointer(),
                              FB.GetBufferPointer() + FB.GetSize());
}

} // namespace cuvil
