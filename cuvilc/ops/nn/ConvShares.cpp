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
#include "ops/Shares.h"
#include "ops/nn/Conv.h"

namespace cuvil {

namespace {

/// Columns of a position share move in whole blocks of this many, so that
/// the kernel's register blocks stay whole within each share.
constexpr int64_t ColumnGrain = 8;

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
  if (largestShare(Positions, Span) < largestShare(Channels, K.m)) {
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
    S.wp = atFloat(K.wp, M0 * Taps);
    S.bias = atFloat(K.bias, M0);
    S.res = atFloat(K.res, M0 * Plane);
    S.y = atFloat(K.y, M0 * Plane);
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
    S.x = atFloat(K.x, C0 * K.h * K.wd);
    S.w = atFloat(K.w, C0 * K.kh * K.kw);
    S.bias = atFloat(K.bias, C0);
    S.y = atFloat(K.y, C0 * K.oh * K.ow);
    S.c = C1 - C0;
    Shares.push_back({S.call()});
  }
}

} // namespace cuvil
