//===- DimRangeTest.cpp - Formulas of a build for a range of a dimension --===//
#include "driver/DimRange.h"

#include <gtest/gtest.h>

namespace cuvil {
namespace {

std::vector<int64_t> over(int64_t Lo, int64_t Hi, int64_t (*F)(int64_t)) {
  std::vector<int64_t> V;
  for (int64_t X = Lo; X <= Hi; ++X)
    V.push_back(F(X));
  return V;
}

TEST(DimRange, FitsPolynomialsOfDegreeTwoExactly) {
  // A size, a stride, a score matrix's bytes, a triangle (rational
  // coefficients, integer values).
  for (auto *F :
       {+[](int64_t) { return int64_t(64); }, +[](int64_t S) { return 64 * S; },
        +[](int64_t S) { return 4 * S * S * 4; },
        +[](int64_t S) { return S * (S + 1) / 2 - 3; }}) {
    std::vector<int64_t> V = over(1, 300, F);
    DimFormula Fit = fitFormula(V);
    EXPECT_TRUE(Fit.Table.empty());
    for (size_t K = 0; K < V.size(); ++K)
      EXPECT_EQ(Fit.at(static_cast<int64_t>(K)), V[K]);
  }
}

TEST(DimRange, KeepsATableForOtherFunctions) {
  // A strided convolution's output length is not a polynomial.
  std::vector<int64_t> V =
      over(5, 40, +[](int64_t S) { return (S - 3) / 2 + 1; });
  DimFormula Fit = fitFormula(V);
  EXPECT_EQ(Fit.Table, V);
  for (size_t K = 0; K < V.size(); ++K)
    EXPECT_EQ(Fit.at(static_cast<int64_t>(K)), V[K]);
  // One value, and two: exact without a table.
  EXPECT_TRUE(fitFormula({7}).Table.empty());
  EXPECT_EQ(fitFormula({7, 9}).at(1), 9);
}

TEST(DimRange, WritesFormulasInTheDimensionsName) {
  auto Text = [](int64_t (*F)(int64_t)) {
    return formulaText(fitFormula(over(3, 20, F)), "seq", 3);
  };
  EXPECT_EQ(Text(+[](int64_t S) { return S; }), "seq");
  EXPECT_EQ(Text(+[](int64_t S) { return 2 * S; }), "2*seq");
  EXPECT_EQ(Text(+[](int64_t S) { return S - 1; }), "seq-1");
  EXPECT_EQ(Text(+[](int64_t S) { return S + 4; }), "seq+4");
  EXPECT_EQ(Text(+[](int64_t) { return int64_t(64); }), "64");
}

} // namespace
} // namespace cuvil
