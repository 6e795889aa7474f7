//===- ConvShares.cpp - Convolutions cut into per-core shares -------------===//
//
// OpDef::Split of the optimised convolutions (--cores): each share computes
// a contiguous range of output channels of a batch-1 convolution, so it
// reads all of the input and writes only its own channel planes. The
// packed kernel takes ranges of whole panels (its weights are stored panel
// by panel; only the last share may end in the narrow panel), the
// depthwise kernel ranges of channels. A share is the same kernel call on
// a smaller channel count with its pointers moved to the range's start:
// no kernel knows it runs a share.
//
//===----------------------------------------------------------------------===//
#include "lowering/KernelAbi.h"
#include "ops/nn/Conv.h"

#include <algorithm>

namespace cuvil {

std::vector<std::pair<int64_t, int64_t>>
channelShares(int64_t Channels, int64_t Grain, int64_t Parts) {
  const int64_t Units = (Channels + Grain - 1) / Grain;
  Parts = std::min(Parts, Units);
  std::vector<std::pair<int64_t, int64_t>> Ranges;
  if (Parts < 2)
    return Ranges;
  // Balanced: the first Units % Parts shares take one unit more.
  int64_t Unit = 0;
  for (int64_t P = 0; P < Parts; ++P) {
    const int64_t Take = Units / Parts + (P < Units % Parts);
    Ranges.emplace_back(Unit * Grain,
                        std::min((Unit + Take) * Grain, Channels));
    Unit += Take;
  }
  return Ranges;
}

namespace {

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
  for (auto [M0, M1] : channelShares(K.m, Panel, Parts)) {
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
  for (auto [C0, C1] : channelShares(K.c, 1, Parts)) {
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
