//===- WeightsBlob.h - The FlatBuffers weight blob --------------*- C++ -*-===//
#ifndef CUVIL_EMIT_WEIGHTSBLOB_H
#define CUVIL_EMIT_WEIGHTSBLOB_H

#include "lowering/KernelCall.h"
#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil {

constexpr uint32_t WeightsSchemaVersion = 2;

/// FNV-1a 64 (the structure hash function).
uint64_t fnv1a64(const void *Data, size_t Size,
                 uint64_t Seed = 0xcbf29ce484222325ull);

/// The structure hash: of everything the generated code assumes about the
/// weight blob: the graph after passes, the target, the alignment, each
/// weight tensor's type, shape, offset and size, and the bytes of every
/// constant that no kernel reads at run time (the compiler read those
/// itself, e.g. a Pad value or a Resize scale, and built them into the
/// code). The weights that kernels read are left out, so a blob of other
/// weights of the same structure is accepted. The blob carries the hash and
/// init checks it (cuvil_blob_open).
uint64_t structureHash(const Graph &G, const GraphLowering &L,
                       const MemoryPlan &Plan, const TargetInfo &T);

/// Serialises the plan's weights (schema/weights.fbs): header, tensor
/// table, CRC-32 and SHA-256 of the data, and one data block aligned to the
/// plan's alignment, with every tensor at its planned offset. With SignKey,
/// also the HMAC-SHA-256 of the structure hash and the data's SHA-256 with
/// that key (cuvil_blob_verify_signature checks it).
std::vector<uint8_t>
buildWeightsBlob(const MemoryPlan &Plan, const std::string &ModelName,
                 const std::string &TargetName, uint64_t StructureHash,
                 const std::vector<uint8_t> *SignKey = nullptr);

/// The SHA-256 a blob states for its data, in hex; empty if it has none.
std::string blobSha256Hex(const std::vector<uint8_t> &Blob);

} // namespace cuvil

#endif
