//===- QuantParams.cpp - Scales, zero points, int8 weights, int32 bias ----===//
//
// The arithmetic follows ONNX Runtime's static quantizer where it has a
// choice to make: ranges widened to contain 0, a scale below the smallest
// normal float replaced by 1, divisions by the scale in float32 and
// rounding half to even (numpy's round), symmetric int8 in [-127, 127].
//
//===----------------------------------------------------------------------===//
#include "quantize/RangeEstimator.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace cuvil::quant {

namespace {

/// A usable scale: finite and at least the smallest normal float (a zero
/// or denormal scale would make 1 / scale infinite or lose precision).
bool usableScale(float S) {
  return std::isfinite(S) && S >= std::numeric_limits<float>::min();
}

/// rhe(V / Scale) clamped to [Lo, Hi]; NaN gives 0 (or Lo when 0 is out of
/// range).
int64_t quantize(float V, float Scale, double Lo, double Hi) {
  float Q = std::nearbyint(V / Scale); // the default mode: half to even
  if (std::isnan(Q))
    return static_cast<int64_t>(std::clamp(0.0, Lo, Hi));
  return static_cast<int64_t>(std::clamp(static_cast<double>(Q), Lo, Hi));
}

} // namespace

QParams activationParams(Range R, bool Signed) {
  constexpr double Big = std::numeric_limits<float>::max();
  // NaN bounds count as 0; infinite ones as the largest float.
  double Lo = std::clamp(std::isnan(R.Lo) ? 0.0 : R.Lo, -Big, 0.0);
  double Hi = std::clamp(std::isnan(R.Hi) ? 0.0 : R.Hi, 0.0, Big);
  QParams P;
  if (Signed) {
    P.Scale = static_cast<float>(std::max(-Lo, Hi)) / 127.0f;
    if (!usableScale(P.Scale))
      P = QParams();
    return P;
  }
  // In double: Hi - Lo may exceed the float range before the division.
  P.Scale = static_cast<float>((Hi - Lo) / 255.0);
  if (!usableScale(P.Scale))
    return QParams();
  P.ZeroPoint =
      static_cast<int32_t>(quantize(static_cast<float>(-Lo), P.Scale, 0, 255));
  return P;
}

ChannelWeights quantizeWeights(const float *W,
                               const std::vector<int64_t> &Shape, int Axis) {
  const int Rank = static_cast<int>(Shape.size());
  if (Axis < 0)
    Axis += Rank;
  assert((Rank == 0 || (Axis >= 0 && Axis < Rank)) && "axis out of range");
  // W as [Outer, Channels, Inner] around the axis (a scalar: one channel).
  int64_t Outer = 1, Channels = 1, Inner = 1;
  for (int D = 0; D < Rank; ++D)
    (D < Axis ? Outer : D == Axis ? Channels : Inner) *= Shape[D];

  ChannelWeights Out;
  std::vector<float> AbsMax(Channels, 0.0f);
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t C = 0; C < Channels; ++C)
      for (int64_t I = 0; I < Inner; ++I) {
        float V = W[(O * Channels + C) * Inner + I];
        if (std::isfinite(V))
          AbsMax[C] = std::max(AbsMax[C], std::fabs(V));
      }
  for (float A : AbsMax) {
    float S = A / 127.0f;
    Out.Scales.push_back(usableScale(S) ? S : 1.0f);
  }
  Out.Values.resize(Outer * Channels * Inner);
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t C = 0; C < Channels; ++C)
      for (int64_t I = 0; I < Inner; ++I) {
        int64_t At = (O * Channels + C) * Inner + I;
        Out.Values[At] =
            static_cast<int8_t>(quantize(W[At], Out.Scales[C], -127, 127));
      }
  return Out;
}

std::vector<int32_t> quantizeBias(const float *B, size_t N, float XScale,
                                  const std::vector<float> &WScales) {
  assert((WScales.size() == 1 || WScales.size() == N) &&
         "one weight scale or one per channel");
  std::vector<int32_t> Out(N);
  for (size_t C = 0; C < N; ++C) {
    float Scale = XScale * WScales[WScales.size() == 1 ? 0 : C];
    Out[C] = static_cast<int32_t>(
        quantize(B[C], Scale, std::numeric_limits<int32_t>::min(),
                 std::numeric_limits<int32_t>::max()));
  }
  return Out;
}

} // namespace cuvil::quant
