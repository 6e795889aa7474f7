//===- RangeEstimator.cpp - Tensor ranges from calibration data -----------===//
#include "quantize/RangeEstimator.h"

#include "ir/Diagnostic.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace cuvil::quant {

llvm::Expected<CalibrationMethod> parseCalibrationMethod(std::string_view Name,
                                                         double Percentile) {
  CalibrationMethod M;
  if (Name == "minmax")
    M.K = CalibrationMethod::Kind::MinMax;
  else if (Name == "percentile")
    M.K = CalibrationMethod::Kind::Percentile;
  else if (Name == "entropy")
    M.K = CalibrationMethod::Kind::Entropy;
  else
    return makeError("unknown calibration method '{}' (expected minmax, "
                     "percentile or entropy)",
                     Name);
  // Written as a negation so that NaN is refused too.
  if (!(Percentile > 0 && Percentile <= 100))
    return makeError("the percentile must be in (0, 100], not {}", Percentile);
  M.Percentile = Percentile;
  return M;
}

RangeEstimator::RangeEstimator(CalibrationMethod M)
    : M(M), Min(std::numeric_limits<float>::infinity()),
      Max(-std::numeric_limits<float>::infinity()) {}

unsigned RangeEstimator::passes() const {
  return M.K == CalibrationMethod::Kind::MinMax ? 1 : 2;
}

void RangeEstimator::startHistogram() {
  unsigned Bins =
      M.K == CalibrationMethod::Kind::Percentile ? PercentileBins : EntropyBins;
  Hist.assign(Bins, 0);
  // The entropy method measures the loss of each side's levels; for signed
  // data both sides share one histogram of magnitudes.
  Magnitude = M.K == CalibrationMethod::Kind::Entropy && Min < 0;
  double Lo = M.K == CalibrationMethod::Kind::Entropy ? 0.0 : Min;
  double Hi =
      Magnitude ? std::max(-static_cast<double>(Min), static_cast<double>(Max))
                : Max;
  HistLo = Lo;
  Width = (Hi - Lo) / Bins;
}

void RangeEstimator::observe(unsigned Pass, const float *Data, size_t N) {
  assert(Pass < passes() && "no such pass");
  if (Pass == 0) {
    for (size_t I = 0; I < N; ++I) {
      float V = Data[I];
      if (!std::isfinite(V))
        continue;
      Min = std::min(Min, V);
      Max = std::max(Max, V);
      ++Count;
    }
    return;
  }
  if (Count == 0)
    return;
  if (Hist.empty())
    startHistogram();
  const double Last = static_cast<double>(Hist.size() - 1);
  // Zero is exact at every threshold, so it tells the entropy method
  // nothing; counted, a Relu's spike of zeros (often half the values)
  // would dominate the divergence and pull the threshold far down.
  const bool SkipZeros = M.K == CalibrationMethod::Kind::Entropy;
  for (size_t I = 0; I < N; ++I) {
    float V = Data[I];
    if (!std::isfinite(V) || (V == 0 && SkipZeros))
      continue;
    double X = Magnitude ? std::fabs(static_cast<double>(V)) : V;
    // A constant tensor has Width 0: all of it is the first bin. Values
    // outside pass 0's range (the caller fed other data) go to the ends.
    double B = Width > 0 ? std::floor((X - HistLo) / Width) : 0.0;
    ++Hist[static_cast<size_t>(std::clamp(B, 0.0, Last))];
  }
}

namespace {

Range withZero(double Lo, double Hi) {
  return {static_cast<float>(std::min(Lo, 0.0)),
          static_cast<float>(std::max(Hi, 0.0))};
}

/// The information lost when the first Bins bins of H stand for the whole
/// histogram (the rest folded into the last of them) and are quantized
/// into Levels levels: KL(P || Q), P the clipped histogram, Q its
/// quantization (each level's count spread evenly over its nonempty bins).
double clippingLoss(const std::vector<uint64_t> &H, size_t Bins,
                    uint64_t Outliers, unsigned Levels,
                    std::vector<double> &Q) {
  Q.assign(Bins, 0.0);
  for (unsigned L = 0; L < Levels; ++L) {
    size_t Begin = L * Bins / Levels, End = (L + 1) * Bins / Levels;
    double Sum = 0;
    unsigned Used = 0;
    for (size_t B = Begin; B < End; ++B) {
      Sum += static_cast<double>(H[B]);
      Used += H[B] != 0;
    }
    for (size_t B = Begin; B < End; ++B)
      if (H[B])
        Q[B] = Sum / Used;
  }
  double TotalP = static_cast<double>(Outliers), TotalQ = 0;
  unsigned Empty = 0;
  for (size_t B = 0; B < Bins; ++B) {
    TotalP += static_cast<double>(H[B]);
    TotalQ += Q[B];
    Empty += Q[B] == 0;
  }
  if (TotalQ == 0)
    return std::numeric_limits<double>::infinity();
  // P has mass where Q has none when the folded outliers land on an empty
  // last bin: give Q's empty bins a little probability (Eps each, taken
  // from the others in proportion) so that the divergence stays finite.
  constexpr double Eps = 1e-4;
  const double Keep = 1 - Eps * Empty;
  double KL = 0;
  for (size_t B = 0; B < Bins; ++B) {
    double Count = static_cast<double>(H[B]) + (B + 1 == Bins ? Outliers : 0);
    if (Count == 0)
      continue;
    double P = Count / TotalP;
    double Qb = Q[B] == 0 ? Eps : Keep * Q[B] / TotalQ;
    KL += P * std::log(P / Qb);
  }
  return KL;
}

} // namespace

Range RangeEstimator::percentileRange() const {
  uint64_t Total = 0;
  for (uint64_t C : Hist)
    Total += C;
  auto Edge = [&](size_t B) { return HistLo + Width * static_cast<double>(B); };
  // The first bin through which at least Need values lie.
  auto Reaching = [&](double Need) {
    uint64_t Cum = 0;
    for (size_t B = 0; B < Hist.size(); ++B) {
      Cum += Hist[B];
      if (static_cast<double>(Cum) >= Need)
        return B;
    }
    return Hist.size() - 1;
  };
  // Bounds at bin edges, chosen so that at most the allowed share of the
  // values lies beyond them (never more clipped than asked).
  const double N = static_cast<double>(Total);
  if (Min >= 0) {
    size_t B = Reaching(N * M.Percentile / 100);
    return withZero(0, std::min<double>(Edge(B + 1), Max));
  }
  const double Tail = N * (100 - M.Percentile) / 200;
  size_t LoBin = Reaching(std::floor(Tail) + 1), HiBin = Reaching(N - Tail);
  return withZero(std::max<double>(Edge(LoBin), Min),
                  std::min<double>(Edge(HiBin + 1), Max));
}

Range RangeEstimator::entropyRange() const {
  const bool NonNegative = !Magnitude;
  const unsigned Levels = NonNegative ? 255 : 127;
  const size_t First = Levels + 1;
  uint64_t Total = 0;
  for (uint64_t C : Hist)
    Total += C;
  // Outliers beyond the candidate threshold: Total minus the prefix sum.
  uint64_t Prefix = 0;
  for (size_t B = 0; B < First; ++B)
    Prefix += Hist[B];
  std::vector<double> Q;
  double Best = std::numeric_limits<double>::infinity();
  size_t BestBins = Hist.size();
  for (size_t Bins = First; Bins <= Hist.size(); ++Bins) {
    double KL = clippingLoss(Hist, Bins, Total - Prefix, Levels, Q);
    if (KL < Best) {
      Best = KL;
      BestBins = Bins;
    }
    if (Bins < Hist.size())
      Prefix += Hist[Bins];
  }
  double T = Width * static_cast<double>(BestBins);
  if (NonNegative)
    return withZero(0, std::min<double>(T, Max));
  return withZero(std::max<double>(-T, Min), std::min<double>(T, Max));
}

Range RangeEstimator::range() const {
  if (Count == 0)
    return {};
  // Without a histogram (minmax, or a constant tensor whose histogram is
  // one bin) the range is what pass 0 saw.
  if (M.K == CalibrationMethod::Kind::MinMax || Hist.empty() || Width == 0)
    return withZero(Min, Max);
  if (M.K == CalibrationMethod::Kind::Percentile)
    return percentileRange();
  return entropyRange();
}

} // namespace cuvil::quant
