//===- WeightsBlob.h - The FlatBuffers weight blob --------------*- C++ -*-===//
#ifndef CUVIL_EMIT_WEIGHTSBLOB_H
#define CUVIL_EMIT_WEIGHTSBLOB_H

#include "planner/MemoryPlan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil {

constexpr uint32_t WeightsSchemaVersion = 1;

/// FNV-1a 64 (the blob's checksum and the graph hash function).
uint64_t fnv1a64(const void *Data, size_t Size, uint64_t Seed = 0xcbf29ce484222325ull);

/// Serialises the plan's weights (schema/weights.fbs): header, tensor
/// table, checksum and one data block aligned to the plan's alignment, with
/// every tensor at its planned offset.
std::vector<uint8_t> buildWeightsBlob(const MemoryPlan &Plan,
                                      const std::string &ModelName,
                                      const std::string &TargetName,
                                      uint64_t GraphHash);

} // namespace cuvil

#endif
