// The accuracy report's figures (quantize/Accuracy.h) on hand-computed
// cases.
#include "quantize/Accuracy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using cuvil::quant::formatDb;
using cuvil::quant::OutputAccuracy;

TEST(Accuracy, SqnrMaxErrorAndTop1OverSamples) {
  OutputAccuracy A(3);
  // Two rows per sample; signal power 1+4+9+0+1+0 = 15 and 4+4+4+1+1+1 = 15.
  std::vector<float> Ref1 = {1, 2, 3, 0, 1, 0}, Q1 = {1, 2, 2.5f, 0, 1, 0};
  std::vector<float> Ref2 = {2, 2, 2, 1, -1, 1}, Q2 = {2, 2, 2, 1, -1, 1.5f};
  A.add(Ref1.data(), Q1.data(), Ref1.size());
  A.add(Ref2.data(), Q2.data(), Ref2.size());
  // Noise 0.25 + 0.25: 10 log10(30 / 0.5).
  EXPECT_NEAR(A.sqnrDb(), 10 * std::log10(60.0), 1e-9);
  EXPECT_DOUBLE_EQ(A.maxAbsError(), 0.5);
  // Rows: [1,2,3]->[1,2,2.5] agree; [0,1,0] agree; [2,2,2] agree (first
  // maximum); [1,-1,1]->[1,-1,1.5] does not.
  EXPECT_EQ(A.rows(), 4);
  EXPECT_EQ(A.agreeingRows(), 3);
  EXPECT_DOUBLE_EQ(A.top1Agreement(), 0.75);
}

TEST(Accuracy, IdenticalZeroAndNaN) {
  OutputAccuracy Same(1);
  std::vector<float> V = {1, -2, 3};
  Same.add(V.data(), V.data(), V.size());
  EXPECT_TRUE(std::isinf(Same.sqnrDb()) && Same.sqnrDb() > 0);
  EXPECT_FALSE(Same.hasClasses());
  EXPECT_EQ(formatDb(Same.sqnrDb()), "inf dB");

  OutputAccuracy Zero(1);
  std::vector<float> Z = {0, 0}, NZ = {0, 1};
  Zero.add(Z.data(), NZ.data(), 2);
  EXPECT_TRUE(std::isinf(Zero.sqnrDb()) && Zero.sqnrDb() < 0);

  OutputAccuracy Bad(1);
  std::vector<float> N = {1, NAN};
  Bad.add(V.data(), N.data(), 2);
  EXPECT_TRUE(std::isinf(Bad.maxAbsError()));
  EXPECT_EQ(formatDb(31.26), "31.3 dB");
}
