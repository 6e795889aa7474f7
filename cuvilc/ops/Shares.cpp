//===- Shares.cpp - Cutting a layer's work into per-core shares -----------===//
#include "ops/Shares.h"

#include <algorithm>

namespace cuvil {

ShareRanges shareRanges(int64_t Count, int64_t Grain, int64_t Parts) {
  const int64_t Units = (Count + Grain - 1) / Grain;
  Parts = std::min(Parts, Units);
  ShareRanges Ranges;
  if (Parts < 2)
    return Ranges;
  // Balanced: the first Units % Parts shares take one unit more.
  int64_t Unit = 0;
  for (int64_t P = 0; P < Parts; ++P) {
    const int64_t Take = Units / Parts + (P < Units % Parts);
    Ranges.emplace_back(Unit * Grain, std::min((Unit + Take) * Grain, Count));
    Unit += Take;
  }
  return Ranges;
}

double largestShare(const ShareRanges &Ranges, int64_t Count) {
  int64_t Most = Ranges.empty() ? Count : 0;
  for (auto [Begin, End] : Ranges)
    Most = std::max(Most, End - Begin);
  return static_cast<double>(Most) / static_cast<double>(Count);
}

kabi::PtrArg atBytes(kabi::PtrArg A, int64_t Bytes) {
  if (A.K == KernelArg::Kind::Tensor)
    A.ByteOffset += Bytes;
  return A;
}

} // namespace cuvil
