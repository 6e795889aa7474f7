//===- KernelTestUtil.h - Shared helpers of the kernel tests ---*- C++ -*-===//
//
// Random inputs with fixed seeds, shape helpers and the element-wise
// comparison every kernel test uses against its double-precision reference.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TESTS_UNIT_KERNELTESTUTIL_H
#define CUVIL_TESTS_UNIT_KERNELTESTUTIL_H

#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace kernel_test {

constexpr float Inf = std::numeric_limits<float>::infinity();
constexpr float NaN = std::numeric_limits<float>::quiet_NaN();
// Linear kernels accumulate in float, in a different order than the
// reference.
constexpr double LinearRtol = 1e-5, LinearAtol = 1e-5;

using Shape = std::vector<int64_t>;
using Padded = std::array<int64_t, CUVIL_MAX_RANK>;

inline std::vector<float> randomFloats(int64_t N, unsigned Seed,
                                       float Lo = -1.0f, float Hi = 1.0f) {
  std::mt19937 Rng(Seed);
  std::uniform_real_distribution<float> Dist(Lo, Hi);
  std::vector<float> V(N);
  for (float &E : V)
    E = Dist(Rng);
  return V;
}

inline int64_t numElements(const Shape &S) {
  int64_t N = 1;
  for (int64_t D : S)
    N *= D;
  return N;
}

// Dense row-major element strides of S.
inline Shape denseStrides(const Shape &S) {
  Shape Str(S.size(), 1);
  for (size_t D = S.size(); D-- > 1;)
    Str[D - 1] = Str[D] * S[D];
  return Str;
}

// S padded on the left with Fill to CUVIL_MAX_RANK entries.
inline Padded padLeft(const Shape &S, int64_t Fill) {
  Padded P;
  P.fill(Fill);
  std::copy(S.begin(), S.end(), P.end() - S.size());
  return P;
}

// |Got - Want| <= Atol + Rtol * |Want| element-wise; NaN must match NaN.
inline testing::AssertionResult allClose(const std::vector<float> &Got,
                                         const std::vector<double> &Want,
                                         double Rtol, double Atol) {
  if (Got.size() != Want.size())
    return testing::AssertionFailure()
           << "size " << Got.size() << ", want " << Want.size();
  size_t Bad = 0, First = 0;
  for (size_t I = 0; I < Got.size(); ++I) {
    const bool Ok =
        std::isnan(Want[I])
            ? std::isnan(Got[I])
            : Got[I] == Want[I] ||
                  std::abs(Got[I] - Want[I]) <= Atol + Rtol * std::abs(Want[I]);
    if (!Ok && Bad++ == 0)
      First = I;
  }
  if (Bad == 0)
    return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << std::setprecision(9) << Bad << " of " << Got.size()
         << " elements differ, first at " << First << ": got " << Got[First]
         << ", want " << Want[First];
}

template <typename Case>
inline std::string caseName(const testing::TestParamInfo<Case> &Info) {
  return Info.param.Name;
}

} // namespace kernel_test

#endif
