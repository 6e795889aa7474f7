//===- WeightsBlob.h - The FlatBuffers weight blob --------------*- C++ -*-===//
#ifndef CUVIL_EMIT_WEIGHTSBLOB_H
#define CUVIL_EMIT_WEIGHTSBLOB_H

#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil {

constexpr uint32_t WeightsSchemaVersion = 1;

/// FNV-1a 64 (the blob's checksum and the graph hash function).
uint64_t fnv1a64(const void *Data, size_t Size,
                 uint64_t Seed = 0xcbf29ce484222325ull);

/// The graph hash: of everything the generated code assumes about the
/// weight blob (the graph after passes, the target, the weights' offsets
/// and bytes). The blob carries it and init checks it (cuvil_blob_open).
uint64_t graphHash(const Graph &G, const MemoryPlan &Plan, const TargetInfo &T);

/// Serialises the plan's weights (schema/weights.fbs): header, tensor
/// table, checksum and one data block aligned to the plan's alignment, with
/// every tensor at its planned offset.
std::vector<uint8_t> buildWeightsBlob(const MemoryPlan &Plan,
                                      const std::string &ModelName,
                                      const std::string &TargetName,
                                      uint64_t GraphHash);

} // namespace cuvil

#endif
