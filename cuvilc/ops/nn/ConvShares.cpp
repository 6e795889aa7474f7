//===- ConvShares.cpp - Convolutions cut into per-core shares -------------===//
//
// OpDef::Split of the optimised convolutions (--cores), for batch 1: each
// share writes its own part of the output and nothing else.
//   - Depthwise: ranges of channels (it reads only its own input planes).
//   - Packed (register-blocked): ranges of whole panels of output channels
//     (its weights are stored panel by panel; only the last share may end
//     in the narrow panel), or ranges of output rows of every channel (the
//     kernel's oy0/oy1; columns, ox0/ox1, for a pointwise convolution,
//     which the kernel sees as one row), whichever leaves the largest
//     share smaller: a 16-channel layer is one panel on a78 and would
//     otherwise run on one core.
// A channel share is the same kernel call on fewer channels with its
// pointers moved to the range's start; a position share the same call on
// a smaller rectangle.
//
//===----------------------------------------------------------------------===//
#include "lowering/KernelAbi.h"
#include "ops/nn/Conv.h"

#include <algorithm>

namespace cuvil {

std::vector<std::pair<int64_t, int64_t>>
shareRanges(int64_t Count, int64_t Grain, int64_t Parts) {
  const int64_t Units = (Count + Grain - 1) / Grain;
  Parts = std::min(Parts, Units);
  std::vector<std::pair<int64_t, int64_t>> Ranges;
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

namespace {

/// The largest of Ranges over Count (1 when there are none: no split).
double largest(const std::vector<std::pair<int64_t, int64_t>> &Ranges,
               int64_t Count) {
  int64_t Most = Ranges.empty() ? Count : 0;
  for (auto [Begin, End] : Ranges)
    Most = std::max(Most, End - Begin);
  return static_cast<double>(Most) / static_cast<double>(Count);
}

/// Columns of a position share move in whole blocks of this many, so that
/// the kernel's register blocks stay whole within each share.
constexpr int64_t ColumnGrain = 8;

/// A moved to the element Elements of its tensor (floats); null stays null.
kabi::PtrArg at(kabi::PtrArg A, int64_t Elements) {
  if (A.K == KernelArg::Kind::Tensor)
    A.ByteOffset += Elements * static_cast<int64_t>(sizeof(float));
  return A;
}

} // namespace

void splitPackedConv(const Node &N, const std::vector<KernelCall> &Calls,
                     int64_t Panel, int64_t Parts,
                     std::vector<std::vector<KernelCall>> &Shares) {
  (void)N; // the calls say everything
  if (Calls.size() != 1 || Calls[0].Kernel != kabi::Conv2dPackedF32::Name)
    return;
  const auto K = kabi::Conv2dPackedF32::from(Calls[0]);
  if (K.n != 1)
    return; // the kernel's batch stride is the whole output
  const int64_t Taps = K.c * K.kh * K.kw, Plane = K.oh * K.ow;
  const auto Channels = shareRanges(K.m, Panel, Parts);
  const bool ByRow = K.oy1 - K.oy0 > 1;
  const int64_t Span = ByRow ? K.oy1 - K.oy0 : K.ox1 - K.ox0;
  const auto Positions = shareRanges(Span, ByRow ? 1 : ColumnGrain, Parts);
  if (largest(Positions, Span) < largest(Channels, K.m)) {
    for (auto [P0, P1] : Positions) {
      auto S = K;
      (ByRow ? S.oy0 : S.ox0) += P0;
      (ByRow ? S.oy1 : S.ox1) = (ByRow ? K.oy0 : K.ox0) + P1;
      Shares.push_back({S.call()});
    }
    return;
  }
  for (auto [M0, M1] : Channels) {
    auto S = K;
    S.wp = at(K.wp, M0 * Taps);
    S.bias = at(K.bias, M0);
    S.res = at(K.res, M0 * Plane);
    S.y = at(K.y, M0 * Plane);
    S.m = M1 - M0;
    Shares.push_back({S.call()});
  }
}

void splitDepthwiseConv(const Node &N, const std::vector<KernelCall> &Calls,
                        int64_t Parts,
                        std::vector<std::vector<KernelCall>> &Shares) {
  (void)N;
  if (Calls.size() != 1 || Calls[0].Kernel != kabi::Dwconv2dF32::Name)
    return;
  const auto K = kabi::Dwconv2dF32::from(Calls[0]);
  if (K.n != 1)
    return;
  for (auto [C0, C1] : shareRanges(K.c, 1, Parts)) {
    auto S = K;
    S.x = at(K.x, C0 * K.h * K.wd);
    S.w = at(K.w, C0 * K.kh * K.kw);
    S.bias = at(K.bias, C0);
    S.y = at(K.y, C0 * K.oh * K.ow);
    S.c = C1 - C0;
    Shares.push_back({S.call()});
  }
}

} // namespace cuvil
