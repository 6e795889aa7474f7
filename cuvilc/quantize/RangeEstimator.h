//===- RangeEstimator.h - Ranges and quantization parameters ---*- C++ -*-===//
//
// cuvilc quantize runs the float model on every calibration sample and
// feeds each tensor it quantizes to a RangeEstimator, which turns what it
// saw into a range [Lo, Hi]; activationParams makes the tensor's scale and
// zero point of it. Weights need no calibration: quantizeWeights derives
// their per-channel scales from the values themselves, and quantizeBias the
// int32 bias from the input's and the weights' scales.
//
// Methods (docs/quantization.md, "Calibration methods"):
//  - minmax: the exact minimum and maximum over every sample.
//  - percentile p: pass 0 finds the minimum and maximum, pass 1 builds a
//    histogram of 8192 bins over them. Data that is never negative (after
//    a Relu, say) gets Lo = 0 and Hi at its p-th percentile; otherwise both
//    tails are clipped alike, (100 - p) / 2 percent of the values each.
//  - entropy: pass 1 builds a histogram of 2048 bins of the values (data
//    that is never negative) or of their magnitudes (signed data), then
//    tries every threshold T from 128 bins (256 for non-negative data) to
//    the whole histogram and keeps the one whose quantization, into 127
//    levels per side (255 for non-negative data), loses the least
//    information: the smallest Kullback-Leibler divergence between the
//    histogram clipped at T (the values beyond folded into its last bin)
//    and that histogram quantized into the levels. Signed data gets
//    [max(min, -T), min(max, T)]. Zeros are left out of this histogram:
//    they quantize exactly at every threshold.
//
// Every range contains 0 (quantized zero is exact, as padding needs).
// Values that are NaN or infinite are ignored; a tensor with no finite
// value gets the range [0, 0].
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_RANGEESTIMATOR_H
#define CUVIL_QUANTIZE_RANGEESTIMATOR_H

#include <cstddef>
#include <cstdint>
#include <llvm/Support/Error.h>
#include <string_view>
#include <vector>

namespace cuvil::quant {

struct Range {
  float Lo = 0, Hi = 0;
};

struct CalibrationMethod {
  /// Scoped: an unscoped enumerator Percentile would clash with the member.
  enum class Kind { MinMax, Percentile, Entropy } K = Kind::MinMax;
  /// The percentile kept by the Percentile method, in (0, 100].
  double Percentile = 99.99;
};

/// "minmax", "percentile", "entropy" (usage error text lists them);
/// Percentile must be in (0, 100].
llvm::Expected<CalibrationMethod>
parseCalibrationMethod(std::string_view Name, double Percentile = 99.99);

class RangeEstimator {
public:
  explicit RangeEstimator(CalibrationMethod M);
  /// 1 for minmax, 2 for the histogram methods (pass 0 = min/max, pass 1 =
  /// histogram).
  unsigned passes() const;
  /// Every sample in pass 0, then every sample in pass 1.
  void observe(unsigned Pass, const float *Data, size_t N);
  /// After the last pass; always contains 0.
  Range range() const;

  /// The histograms' sizes.
  static constexpr unsigned PercentileBins = 8192, EntropyBins = 2048;

private:
  /// Sets the histogram up over what pass 0 saw.
  void startHistogram();
  Range percentileRange() const;
  Range entropyRange() const;

  CalibrationMethod M;
  float Min, Max; ///< Of the finite values of pass 0.
  uint64_t Count = 0;
  /// Pass 1: counts of bins of width Width from HistLo (of |x| when
  /// Magnitude).
  std::vector<uint64_t> Hist;
  double HistLo = 0, Width = 0;
  bool Magnitude = false;
};

struct QParams {
  float Scale = 1;
  int32_t ZeroPoint = 0;
};

/// uint8 asymmetric (Signed=false, as ORT's static quantizer writes
/// activations: scale (Hi - Lo) / 255, zero point rhe(-Lo / scale)) or
/// int8 symmetric (Signed=true: scale max(-Lo, Hi) / 127, zero point 0).
/// R is widened to contain 0 first; a scale that would be below the
/// smallest normal float (an all-zero tensor) is 1 with zero point 0, as
/// ORT's quantizer does.
QParams activationParams(Range R, bool Signed);

struct ChannelWeights {
  std::vector<float> Scales;
  std::vector<int8_t> Values;
};

/// Weights quantized int8 symmetric (zero point 0), one scale per slice
/// along Axis (per output channel), values in [-127, 127], round half to
/// even. Values lays out like W; Axis may be negative (from the back). A
/// channel without a finite nonzero weight gets scale 1 (never a zero or
/// denormal scale); NaN weights quantize to 0, infinities to +-127 (and
/// do not count for the scale).
ChannelWeights quantizeWeights(const float *W,
                               const std::vector<int64_t> &Shape, int Axis);

/// int32 bias for scale BiasScale[c] = x_scale * w_scale[c] (computed in
/// float32, as ORT does); saturates to int32 range (NaN gives 0). WScales
/// has N elements or one (per-tensor weights).
std::vector<int32_t> quantizeBias(const float *B, size_t N, float XScale,
                                  const std::vector<float> &WScales);

} // namespace cuvil::quant

#endif
