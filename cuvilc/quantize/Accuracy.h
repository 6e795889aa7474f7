//===- Accuracy.h - Quantized outputs against the float ones --*- C++ -*-===//
//
// The figures of the accuracy report: per output, accumulated over the
// samples, the signal-to-quantization-noise ratio (float output power over
// error power, in dB), the largest absolute error, and, for outputs with a
// class axis (the last dimension, when larger than 1), how often the
// largest element is the same one (top-1 agreement, per row).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_ACCURACY_H
#define CUVIL_QUANTIZE_ACCURACY_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace cuvil::quant {

class OutputAccuracy {
public:
  /// Rows of Classes elements each (Classes = the last dimension).
  explicit OutputAccuracy(int64_t Classes) : Classes(Classes) {}
  /// One sample's output, N elements, float reference Ref and quantized Q.
  void add(const float *Ref, const float *Q, size_t N);

  /// +inf when the outputs are identical; -inf when the reference is all
  /// zero but the quantized output is not.
  double sqnrDb() const;
  double maxAbsError() const { return MaxAbs; }
  bool hasClasses() const { return Classes > 1; }
  int64_t rows() const { return Rows; }
  int64_t agreeingRows() const { return Agree; }
  double top1Agreement() const { return Rows ? double(Agree) / Rows : 1.0; }

private:
  int64_t Classes;
  double Signal = 0, Noise = 0, MaxAbs = 0;
  int64_t Rows = 0, Agree = 0;
};

/// "31.2 dB", "inf dB" (identical outputs).
std::string formatDb(double Db);

} // namespace cuvil::quant

#endif
