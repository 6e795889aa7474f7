//===- RangeEstimatorTest.cpp - Calibration ranges and int8 parameters ----===//
#include "quantize/RangeEstimator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace cuvil::quant {
namespace {

using Kind = CalibrationMethod::Kind;

/// The range M gives for Samples, fed pass by pass as the driver does.
Range estimate(CalibrationMethod M,
               const std::vector<std::vector<float>> &Samples) {
  RangeEstimator E(M);
  for (unsigned P = 0; P < E.passes(); ++P)
    for (const auto &S : Samples)
      E.observe(P, S.data(), S.size());
  return E.range();
}

CalibrationMethod method(Kind K, double Percentile = 99.99) {
  CalibrationMethod M;
  M.K = K;
  M.Percentile = Percentile;
  return M;
}

/// 100000 values of N(0, 1) in 10 samples, with Outliers added to the
/// last one.
std::vector<std::vector<float>> gaussian(const std::vector<float> &Outliers,
                                         bool Relu = false) {
  std::mt19937 Rng(13);
  std::normal_distribution<float> N(0.0f, 1.0f);
  std::vector<std::vector<float>> S(10);
  for (auto &One : S)
    for (int I = 0; I < 10000; ++I)
      One.push_back(Relu ? std::max(0.0f, N(Rng)) : N(Rng));
  S.back().insert(S.back().end(), Outliers.begin(), Outliers.end());
  return S;
}

TEST(RangeEstimatorTest, ParsesMethodNames) {
  auto M = parseCalibrationMethod("percentile", 99.9);
  ASSERT_TRUE(bool(M));
  EXPECT_EQ(M->K, Kind::Percentile);
  EXPECT_EQ(M->Percentile, 99.9);
  ASSERT_TRUE(bool(parseCalibrationMethod("entropy")));
  EXPECT_EQ(parseCalibrationMethod("minmax")->K, Kind::MinMax);
  EXPECT_EQ(RangeEstimator(*parseCalibrationMethod("minmax")).passes(), 1u);
  EXPECT_EQ(RangeEstimator(*parseCalibrationMethod("entropy")).passes(), 2u);
  EXPECT_EQ(llvm::toString(parseCalibrationMethod("kl").takeError()),
            "unknown calibration method 'kl' (expected minmax, percentile or "
            "entropy)");
  for (double P : {0.0, -1.0, 100.5, std::nan("")})
    EXPECT_FALSE(bool(parseCalibrationMethod("percentile", P))) << P;
  llvm::consumeError(parseCalibrationMethod("percentile", 0).takeError());
}

TEST(RangeEstimatorTest, MinMaxIsExactAndContainsZero) {
  const float Inf = std::numeric_limits<float>::infinity();
  Range R = estimate(method(Kind::MinMax),
                     {{0.5f, -1.25f, 3.0f}, {7.75f, std::nanf(""), -Inf}});
  EXPECT_EQ(R.Lo, -1.25f);
  EXPECT_EQ(R.Hi, 7.75f);
  R = estimate(method(Kind::MinMax), {{2.0f, 3.5f}, {Inf}});
  EXPECT_EQ(R.Lo, 0.0f);
  EXPECT_EQ(R.Hi, 3.5f);
  R = estimate(method(Kind::MinMax), {{-2.0f, -3.5f}});
  EXPECT_EQ(R.Lo, -3.5f);
  EXPECT_EQ(R.Hi, 0.0f);
}

TEST(RangeEstimatorTest, PercentileClipsOutliers) {
  auto S = gaussian({1000.0f, 900.0f, -800.0f, 950.0f, -700.0f});
  Range R = estimate(method(Kind::Percentile, 99.9), S);
  // The 0.05% tails of N(0, 1) start at +-3.29; the bins are 0.22 wide.
  EXPECT_GT(R.Hi, 3.0f);
  EXPECT_LT(R.Hi, 4.0f);
  EXPECT_LT(R.Lo, -3.0f);
  EXPECT_GT(R.Lo, -4.0f);
  // Non-negative data keeps 0 and clips the top only (0.1% above 3.09).
  R = estimate(method(Kind::Percentile, 99.9), gaussian({1000.0f}, true));
  EXPECT_EQ(R.Lo, 0.0f);
  EXPECT_GT(R.Hi, 3.0f);
  EXPECT_LT(R.Hi, 3.5f);
  // The 100th percentile is the maximum.
  R = estimate(method(Kind::Percentile, 100), S);
  EXPECT_EQ(R.Lo, -800.0f);
  EXPECT_EQ(R.Hi, 1000.0f);
}

TEST(RangeEstimatorTest, EntropyThresholdLiesBetweenBulkAndOutliers) {
  auto S = gaussian({100.0f, -90.0f, 95.0f});
  Range R = estimate(method(Kind::Entropy), S);
  EXPECT_GT(R.Hi, 3.0f);
  EXPECT_LT(R.Hi, 50.0f);
  EXPECT_EQ(R.Lo, -R.Hi);
  // After a Relu half the values are 0: they must not pull the threshold
  // into the bulk (counted, they move it from about 3.0 to 1.6).
  R = estimate(method(Kind::Entropy), gaussian({}, true));
  EXPECT_EQ(R.Lo, 0.0f);
  EXPECT_GT(R.Hi, 2.5f);
  EXPECT_LT(R.Hi, 4.0f);
  // Uniform data has no tail worth clipping: the threshold stays near the
  // maximum.
  std::mt19937 Rng(3);
  std::uniform_real_distribution<float> U(0.0f, 1.0f);
  std::vector<float> Flat(100000);
  for (float &V : Flat)
    V = U(Rng);
  R = estimate(method(Kind::Entropy), {Flat});
  EXPECT_EQ(R.Lo, 0.0f);
  EXPECT_GT(R.Hi, 0.9f);
  EXPECT_LE(R.Hi, 1.0f);
}

TEST(RangeEstimatorTest, DegenerateTensors) {
  for (Kind K : {Kind::MinMax, Kind::Percentile, Kind::Entropy}) {
    Range R = estimate(method(K), {{0.0f, 0.0f}, {0.0f}});
    EXPECT_EQ(R.Lo, 0.0f);
    EXPECT_EQ(R.Hi, 0.0f);
    R = estimate(method(K), {{3.0f, 3.0f, 3.0f}});
    EXPECT_EQ(R.Lo, 0.0f);
    EXPECT_EQ(R.Hi, 3.0f);
    R = estimate(method(K), {{-2.0f}});
    EXPECT_EQ(R.Lo, -2.0f);
    EXPECT_EQ(R.Hi, 0.0f);
    R = estimate(method(K), {{std::nanf("")}, {}});
    EXPECT_EQ(R.Lo, 0.0f);
    EXPECT_EQ(R.Hi, 0.0f);
  }
}

TEST(QuantParamsTest, ActivationParams) {
  QParams P = activationParams({-1.0f, 2.0f}, false);
  EXPECT_FLOAT_EQ(P.Scale, 3.0f / 255);
  EXPECT_EQ(P.ZeroPoint, 85);
  // -Lo / scale exactly halfway: rounded half to even.
  EXPECT_EQ(activationParams({-0.5f, 254.5f}, false).ZeroPoint, 0);
  EXPECT_EQ(activationParams({-1.5f, 253.5f}, false).ZeroPoint, 2);
  EXPECT_EQ(activationParams({-2.5f, 252.5f}, false).ZeroPoint, 2);
  EXPECT_EQ(activationParams({-5.0f, 0.0f}, false).ZeroPoint, 255);
  // Widened to contain 0.
  P = activationParams({1.0f, 2.55f}, false);
  EXPECT_FLOAT_EQ(P.Scale, 0.01f);
  EXPECT_EQ(P.ZeroPoint, 0);
  P = activationParams({-3.0f, 1.27f}, true);
  EXPECT_EQ(P.Scale, 3.0f / 127);
  EXPECT_EQ(P.ZeroPoint, 0);
  // All-zero and denormal ranges: scale 1, zero point 0.
  for (bool Signed : {false, true})
    for (Range R : {Range{0, 0}, Range{0, 1e-40f}, Range{-1e-39f, 0}}) {
      P = activationParams(R, Signed);
      EXPECT_EQ(P.Scale, 1.0f);
      EXPECT_EQ(P.ZeroPoint, 0);
    }
}

TEST(QuantParamsTest, WeightsPerChannel) {
  const float Inf = std::numeric_limits<float>::infinity();
  // [2, 4], axis 0: channel 0 has scale 1; channel 1 is all zero.
  std::vector<float> W = {127, -0.5f, 1.5f, 2.5f, 0, 0, 0, 0};
  ChannelWeights Q = quantizeWeights(W.data(), {2, 4}, 0);
  EXPECT_EQ(Q.Scales, (std::vector<float>{1.0f, 1.0f}));
  EXPECT_EQ(Q.Values, (std::vector<int8_t>{127, 0, 2, 2, 0, 0, 0, 0}));
  // Axis 1 (and -1): columns {63.5, -0.75} and {254, 127}.
  W = {63.5f, 254, -0.75f, 127};
  for (int Axis : {1, -1}) {
    Q = quantizeWeights(W.data(), {2, 2}, Axis);
    EXPECT_EQ(Q.Scales, (std::vector<float>{0.5f, 2.0f}));
    EXPECT_EQ(Q.Values, (std::vector<int8_t>{127, 127, -2, 64}));
  }
  // A denormal channel gets scale 1; infinities saturate and do not set
  // the scale, NaN is 0.
  W = {1e-40f, -1e-41f, 0, 0, 12.7f, -Inf, std::nanf(""), Inf};
  Q = quantizeWeights(W.data(), {2, 4}, 0);
  EXPECT_EQ(Q.Scales[0], 1.0f);
  EXPECT_FLOAT_EQ(Q.Scales[1], 0.1f);
  EXPECT_EQ(Q.Values, (std::vector<int8_t>{0, 0, 0, 0, 127, -127, 0, 127}));
}

TEST(QuantParamsTest, BiasRoundsAndSaturates) {
  std::vector<float> B = {1.0f, 3.0f};
  EXPECT_EQ(quantizeBias(B.data(), 2, 0.5f, {0.25f, 2.0f}),
            (std::vector<int32_t>{8, 3}));
  B = {0.1875f, 2.5f}; // 1.5 and 2.5 steps
  EXPECT_EQ(quantizeBias(B.data(), 2, 0.5f, {0.25f, 2.0f}),
            (std::vector<int32_t>{2, 2}));
  B = {1e10f, -1e10f, std::nanf(""), -3.5f};
  EXPECT_EQ(quantizeBias(B.data(), 4, 1.0f, {1.0f}),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::min(), 0, -4}));
}

} // namespace
} // namespace cuvil::quant
