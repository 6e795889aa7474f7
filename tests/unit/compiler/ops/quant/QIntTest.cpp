//===- QIntTest.cpp - The integer path's compile-time arithmetic ----------===//
#include "ops/quant/QInt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace cuvil {
namespace {

TEST(QIntTest, FixedPointMultiplierIsExactForEveryFloat) {
  std::mt19937 Rng(5);
  std::uniform_real_distribution<float> Mant(0.5f, 1.0f);
  std::uniform_int_distribution<int> Exp(-31, 29);
  for (int I = 0; I < 100000; ++I) {
    const float M = std::ldexp(Mant(Rng), Exp(Rng));
    auto R = fixedPointMultiplier(M);
    ASSERT_TRUE(R) << M;
    EXPECT_GE(R->first, 1 << 30) << M;
    EXPECT_GE(R->second, 1);
    EXPECT_LE(R->second, 62);
    EXPECT_EQ(std::ldexp(static_cast<double>(R->first), -R->second),
              static_cast<double>(M));
  }
}

TEST(QIntTest, FixedPointMultiplierEdges) {
  using P = std::pair<int32_t, int32_t>;
  EXPECT_EQ(fixedPointMultiplier(0.0f), P(0, 1));
  EXPECT_EQ(fixedPointMultiplier(1.0f), P(1 << 30, 30));
  EXPECT_EQ(fixedPointMultiplier(0.5f), P(1 << 30, 31));
  // Below 2^-32 every int32 accumulator rounds to 0.
  EXPECT_EQ(fixedPointMultiplier(std::ldexp(1.0f, -40)), P(0, 1));
  EXPECT_FALSE(fixedPointMultiplier(std::ldexp(1.0f, 30)));
  EXPECT_FALSE(fixedPointMultiplier(-0.25f));
  EXPECT_FALSE(fixedPointMultiplier(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_FALSE(fixedPointMultiplier(std::numeric_limits<float>::infinity()));
}

TEST(QIntTest, QuantizeScalarRoundsHalfToEvenAndSaturates) {
  const float Inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(quantizeScalar(2.5f, 1.0f, 10, DType::U8), 12);
  EXPECT_EQ(quantizeScalar(3.5f, 1.0f, 10, DType::U8), 14);
  EXPECT_EQ(quantizeScalar(-2.5f, 1.0f, 0, DType::I8), -2);
  EXPECT_EQ(quantizeScalar(6.0f, 0.5f, 3, DType::U8), 15);
  EXPECT_EQ(quantizeScalar(Inf, 0.1f, 3, DType::U8), 255);
  EXPECT_EQ(quantizeScalar(-Inf, 0.1f, 3, DType::U8), 0);
  EXPECT_EQ(quantizeScalar(Inf, 0.1f, 0, DType::I8), 127);
  EXPECT_EQ(quantizeScalar(-Inf, 0.1f, 0, DType::I8), -128);
  EXPECT_EQ(quantizeScalar(0.0f, 0.1f, 77, DType::U8), 77);
}

} // namespace
} // namespace cuvil
