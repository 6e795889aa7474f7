//===- Shares.h - Cutting a layer's work into per-core shares ---*- C++ -*-===//
//
// The arithmetic the ops' OpDef::Split hooks share (--cores): balanced
// ranges of whole units, how large the largest of them is, and a kernel
// pointer argument moved into its tensor.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_SHARES_H
#define CUVIL_OPS_SHARES_H

#include "lowering/KernelAbiSupport.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace cuvil {

using ShareRanges = std::vector<std::pair<int64_t, int64_t>>;

/// Shares of [0, Count) for at most Parts cores in whole units of Grain
/// (the last unit may be short), as balanced as units allow; none when
/// fewer than two units.
ShareRanges shareRanges(int64_t Count, int64_t Grain, int64_t Parts);

/// The largest of Ranges as a fraction of Count (1 when there are none:
/// the work stays whole): what a split's slowest core does.
double largestShare(const ShareRanges &Ranges, int64_t Count);

/// A moved by Bytes into its tensor (null stays null).
kabi::PtrArg atBytes(kabi::PtrArg A, int64_t Bytes);

/// A moved by Elements float32 elements into its tensor.
inline kabi::PtrArg atFloat(kabi::PtrArg A, int64_t Elements) {
  return atBytes(A, Elements * static_cast<int64_t>(sizeof(float)));
}

} // namespace cuvil

#endif
