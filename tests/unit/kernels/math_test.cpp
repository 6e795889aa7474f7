//===- math_test.cpp - The kernels' float math
//-----------------------------===//
//
// Accuracy (ulp) and special values of the freestanding approximations in
// kernels/math.h.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "kernels/math.h"

#include <cfloat>

using namespace kernel_test;

namespace {

//===----------------------------------------------------------------------===//
// Math approximations
//===----------------------------------------------------------------------===//

// Size of one unit in the last place of the float nearest to V.
double ulpOf(double V) {
  V = std::abs(V);
  return V < FLT_MIN ? 0x1p-149 : std::ldexp(1.0, std::ilogb(V) - 23);
}

struct ErrorStats {
  double MaxUlp = 0, MaxAbs = 0;
  float WorstUlpX = 0, WorstAbsX = 0;
};

// Errors of Fn against Ref at every 1021st float bit pattern in [Lo, Hi]
// (so every binade is sampled equally densely); ulp errors only where the
// exact result is a normal float.
template <typename F, typename R>
ErrorStats sweep(F Fn, R Ref, float Lo, float Hi) {
  ErrorStats S;
  for (uint64_t Bits = 0; Bits < (uint64_t(1) << 32); Bits += 1021) {
    const float X = cuvil_f32_from_bits(uint32_t(Bits));
    if (!(X >= Lo && X <= Hi))
      continue;
    const double Want = Ref(double(X)), Err = std::abs(Fn(X) - Want);
    if (Err > S.MaxAbs) {
      S.MaxAbs = Err;
      S.WorstAbsX = X;
    }
    if (std::abs(Want) >= FLT_MIN && Err / ulpOf(Want) > S.MaxUlp) {
      S.MaxUlp = Err / ulpOf(Want);
      S.WorstUlpX = X;
    }
  }
  return S;
}

void expectAtMost(const ErrorStats &S, double MaxUlp, double MaxAbs) {
  EXPECT_LE(S.MaxUlp, MaxUlp) << "at x = " << std::hexfloat << S.WorstUlpX;
  EXPECT_LE(S.MaxAbs, MaxAbs) << "at x = " << std::hexfloat << S.WorstAbsX;
}

double sigmoid(double X) { return 1 / (1 + std::exp(-X)); }

TEST(Math, ExpAccuracy) {
  // Results are normal floats on [-87.3, 88.7].
  const ErrorStats S =
      sweep(cuvil_expf, [](double X) { return std::exp(X); }, -87.3f, 88.7f);
  EXPECT_LE(S.MaxUlp, 1.5) << "at x = " << std::hexfloat << S.WorstUlpX;
}

TEST(Math, ExpSpecialValues) {
  EXPECT_EQ(cuvil_expf(0.0f), 1.0f);
  EXPECT_EQ(cuvil_expf(-0.0f), 1.0f);
  EXPECT_EQ(cuvil_expf(Inf), Inf);
  EXPECT_EQ(cuvil_expf(-Inf), 0.0f);
  EXPECT_TRUE(std::isnan(cuvil_expf(NaN)));
  EXPECT_TRUE(std::isnan(cuvil_expf(-NaN)));
  EXPECT_EQ(cuvil_expf(88.73f), Inf); // just past FLT_MAX
  EXPECT_EQ(cuvil_expf(1000.0f), Inf);
  EXPECT_EQ(cuvil_expf(-104.0f), 0.0f); // below half the least subnormal
  EXPECT_EQ(cuvil_expf(-1000.0f), 0.0f);
  EXPECT_LT(cuvil_expf(88.72f), Inf);
  // Subnormal results are within one subnormal step.
  for (float X : {-88.0f, -95.5f, -100.0f, -103.0f})
    EXPECT_NEAR(cuvil_expf(X), std::exp(double(X)), 0x1p-149) << X;
}

TEST(Math, LogAccuracy) {
  const ErrorStats S = sweep(
      cuvil_logf, [](double X) { return std::log(X); }, FLT_TRUE_MIN, FLT_MAX);
  EXPECT_LE(S.MaxUlp, 1.5) << "at x = " << std::hexfloat << S.WorstUlpX;
}

TEST(Math, LogSpecialValues) {
  EXPECT_EQ(cuvil_logf(1.0f), 0.0f);
  EXPECT_EQ(cuvil_logf(0.0f), -Inf);
  EXPECT_EQ(cuvil_logf(-0.0f), -Inf);
  EXPECT_EQ(cuvil_logf(Inf), Inf);
  EXPECT_TRUE(std::isnan(cuvil_logf(-1.0f)));
  EXPECT_TRUE(std::isnan(cuvil_logf(-Inf)));
  EXPECT_TRUE(std::isnan(cuvil_logf(NaN)));
  EXPECT_FLOAT_EQ(cuvil_logf(FLT_TRUE_MIN),
                  float(std::log(double(FLT_TRUE_MIN))));
}

TEST(Math, TanhAccuracy) {
  expectAtMost(
      sweep(
          cuvil_tanhf, [](double X) { return std::tanh(X); }, -Inf, Inf),
      2.0, 2e-7);
}

TEST(Math, SigmoidAccuracy) {
  expectAtMost(sweep(cuvil_sigmoidf, sigmoid, -Inf, Inf), 3.0, 2e-7);
}

TEST(Math, ErfAccuracy) {
  expectAtMost(sweep(
                   cuvil_erff, [](double X) { return std::erf(X); }, -Inf, Inf),
               2.5, 2e-7);
}

// GELU's erf clamps its exponent with one fmax, which turns a NaN into a
// finite value: the results must be cuvil_erff's, bit for bit, for every
// input but NaN (every 1021st float, infinities included).
TEST(Math, ErfForGeluIsErfBitForBit) {
  for (uint64_t Bits = 0; Bits < (uint64_t(1) << 32); Bits += 1021) {
    const float X = cuvil_f32_from_bits(uint32_t(Bits));
    if (std::isnan(X))
      continue;
    const float Want = cuvil_erff(X), Got = cuvil_erff_nan_scaled(X);
    ASSERT_EQ(cuvil_f32_bits(Got), cuvil_f32_bits(Want))
        << "at x = " << std::hexfloat << X;
  }
  EXPECT_EQ(cuvil_erff_nan_scaled(Inf), 1.0f);
  EXPECT_EQ(cuvil_erff_nan_scaled(-Inf), -1.0f);
}

TEST(Math, SaturatingFunctionsSpecialValues) {
  EXPECT_EQ(cuvil_tanhf(Inf), 1.0f);
  EXPECT_EQ(cuvil_tanhf(-Inf), -1.0f);
  EXPECT_TRUE(std::signbit(cuvil_tanhf(-0.0f)));
  EXPECT_EQ(cuvil_tanhf(1e-30f), 1e-30f);
  EXPECT_TRUE(std::isnan(cuvil_tanhf(NaN)));
  EXPECT_EQ(cuvil_sigmoidf(Inf), 1.0f);
  EXPECT_EQ(cuvil_sigmoidf(-Inf), 0.0f);
  EXPECT_EQ(cuvil_sigmoidf(0.0f), 0.5f);
  EXPECT_TRUE(std::isnan(cuvil_sigmoidf(NaN)));
  EXPECT_EQ(cuvil_erff(Inf), 1.0f);
  EXPECT_EQ(cuvil_erff(-Inf), -1.0f);
  EXPECT_EQ(cuvil_erff(5.0f), 1.0f);
  EXPECT_TRUE(std::signbit(cuvil_erff(-0.0f)));
  EXPECT_TRUE(std::isnan(cuvil_erff(NaN)));
}

TEST(Math, Clamp) {
  EXPECT_EQ(cuvil_clampf(-2.0f, -1.0f, 1.0f), -1.0f);
  EXPECT_EQ(cuvil_clampf(2.0f, -1.0f, 1.0f), 1.0f);
  EXPECT_EQ(cuvil_clampf(0.25f, -1.0f, 1.0f), 0.25f);
  EXPECT_EQ(cuvil_clampf(-Inf, -Inf, Inf), -Inf);
  EXPECT_TRUE(std::isnan(cuvil_clampf(NaN, 0.0f, 6.0f)));
}

} // namespace
