//===- Accuracy.cpp - A quantized model's outputs against the float model's
//===//
#include "quantize/Accuracy.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace cuvil::quant {

void OutputAccuracy::add(const float *Ref, const float *Q, size_t N) {
  for (size_t I = 0; I < N; ++I) {
    double D = double(Q[I]) - double(Ref[I]);
    Signal += double(Ref[I]) * Ref[I];
    Noise += D * D;
    // A NaN error is the largest error there is.
    if (!(std::fabs(D) <= MaxAbs))
      MaxAbs = std::isnan(D) ? std::numeric_limits<double>::infinity()
                             : std::fabs(D);
  }
  if (Classes <= 1)
    return;
  for (size_t Row = 0; Row + Classes <= N; Row += Classes) {
    size_t BestRef = Row, BestQ = Row;
    for (size_t I = Row; I < Row + Classes; ++I) {
      if (Ref[I] > Ref[BestRef])
        BestRef = I;
      if (Q[I] > Q[BestQ])
        BestQ = I;
    }
    ++Rows;
    Agree += BestRef == BestQ;
  }
}

double OutputAccuracy::sqnrDb() const {
  if (Noise == 0)
    return std::numeric_limits<double>::infinity();
  if (Signal == 0)
    return -std::numeric_limits<double>::infinity();
  return 10 * std::log10(Signal / Noise);
}

std::string formatDb(double Db) {
  if (std::isinf(Db))
    return Db > 0 ? "inf dB" : "-inf dB";
  return fmt::format("{:.1f} dB", Db);
}

} // namespace cuvil::quant
