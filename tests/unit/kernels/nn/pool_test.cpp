//===- pool_test.cpp - Pooling and softmax kernels
//-------------------------===//
//
// Max/average/global pooling and softmax against double-precision
// references.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "kernels/math.h"

#include <cfloat>

using namespace kernel_test;

namespace {

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct PoolCase {
  const char *Name;
  int64_t NC, H, W, KH, KW, StrideH, StrideW, DilH, DilW;
  int64_t PadTop, PadLeft, PadBottom, PadRight;
  bool CeilMode;

  // The ONNX output size; with ceil_mode the last window must still start
  // inside the input or its leading padding.
  int64_t outDim(int64_t In, int64_t K, int64_t S, int64_t D, int64_t P0,
                 int64_t P1) const {
    const int64_t Span = In + P0 + P1 - D * (K - 1) - 1;
    int64_t Out = (CeilMode ? (Span + S - 1) / S : Span / S) + 1;
    if (CeilMode && (Out - 1) * S >= In + P0)
      --Out;
    return Out;
  }
  int64_t outH() const {
    return outDim(H, KH, StrideH, DilH, PadTop, PadBottom);
  }
  int64_t outW() const {
    return outDim(W, KW, StrideW, DilW, PadLeft, PadRight);
  }
};

class MaxPoolTest : public testing::TestWithParam<PoolCase> {};

TEST_P(MaxPoolTest, MatchesReference) {
  const PoolCase &P = GetParam();
  const int64_t OH = P.outH(), OW = P.outW();
  const auto X = randomFloats(P.NC * P.H * P.W, 22);
  std::vector<float> Y(P.NC * OH * OW, NaN);
  cuvil_k_maxpool2d_f32(X.data(), Y.data(), P.NC, P.H, P.W, OH, OW, P.KH, P.KW,
                        P.StrideH, P.StrideW, P.DilH, P.DilW, P.PadTop,
                        P.PadLeft);
  std::vector<double> Want;
  for (int64_t C = 0; C < P.NC; ++C)
    for (int64_t Oy = 0; Oy < OH; ++Oy)
      for (int64_t Ox = 0; Ox < OW; ++Ox) {
        double Max = -INFINITY;
        for (int64_t Ky = 0; Ky < P.KH; ++Ky)
          for (int64_t Kx = 0; Kx < P.KW; ++Kx) {
            const int64_t Iy = Oy * P.StrideH - P.PadTop + Ky * P.DilH;
            const int64_t Ix = Ox * P.StrideW - P.PadLeft + Kx * P.DilW;
            if (Iy >= 0 && Iy < P.H && Ix >= 0 && Ix < P.W)
              Max = std::max(Max, double(X[(C * P.H + Iy) * P.W + Ix]));
          }
        Want.push_back(Max);
      }
  EXPECT_TRUE(allClose(Y, Want, 0, 0));
}

class AvgPoolTest : public testing::TestWithParam<std::tuple<PoolCase, bool>> {
};

TEST_P(AvgPoolTest, MatchesReference) {
  const auto &[P, CountIncludePad] = GetParam();
  ASSERT_TRUE(P.DilH == 1 && P.DilW == 1);
  const int64_t OH = P.outH(), OW = P.outW();
  const auto X = randomFloats(P.NC * P.H * P.W, 23);
  std::vector<float> Y(P.NC * OH * OW, NaN);
  cuvil_k_avgpool2d_f32(X.data(), Y.data(), P.NC, P.H, P.W, OH, OW, P.KH, P.KW,
                        P.StrideH, P.StrideW, P.PadTop, P.PadLeft, P.PadBottom,
                        P.PadRight, CountIncludePad);

  // count_include_pad counts the window positions inside the padded input;
  // ceil_mode windows may reach beyond it.
  std::vector<double> Want;
  for (int64_t C = 0; C < P.NC; ++C)
    for (int64_t Oy = 0; Oy < OH; ++Oy)
      for (int64_t Ox = 0; Ox < OW; ++Ox) {
        double Sum = 0;
        int64_t InInput = 0, InPadded = 0;
        for (int64_t Ky = 0; Ky < P.KH; ++Ky)
          for (int64_t Kx = 0; Kx < P.KW; ++Kx) {
            // Windows never start before the leading padding.
            const int64_t Iy = Oy * P.StrideH - P.PadTop + Ky;
            const int64_t Ix = Ox * P.StrideW - P.PadLeft + Kx;
            InPadded += Iy < P.H + P.PadBottom && Ix < P.W + P.PadRight;
            if (Iy >= 0 && Iy < P.H && Ix >= 0 && Ix < P.W) {
              Sum += X[(C * P.H + Iy) * P.W + Ix];
              ++InInput;
            }
          }
        Want.push_back(Sum / double(CountIncludePad ? InPadded : InInput));
      }
  EXPECT_TRUE(allClose(Y, Want, LinearRtol, LinearAtol));
}

// clang-format off
const PoolCase PoolCases[] = {
  // Name               NC  H   W KH KW stride dil  pads t l b r  ceil
  {"Pad1Stride1",       3,  7,  6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false},
  {"Stride2NoPad",      2,  8,  8, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, false},
  {"AsymmetricPad",     2,  7,  9, 3, 3, 2, 2, 1, 1, 1, 0, 2, 1, false},
  {"Rectangular",       2,  5,  9, 2, 4, 1, 3, 1, 1, 0, 1, 1, 2, false},
  {"CeilMode",          2,  8,  8, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true},
  {"CeilModePadded",    1,  7, 10, 3, 2, 2, 3, 1, 1, 1, 1, 1, 0, true},
};
const PoolCase DilatedPoolCases[] = {
  {"Dilation2",         2,  9,  8, 3, 3, 1, 2, 2, 2, 2, 1, 2, 1, false},
  {"Dilation2CeilMode", 1, 10,  9, 2, 3, 2, 2, 2, 1, 0, 1, 0, 1, true},
};
// clang-format on
INSTANTIATE_TEST_SUITE_P(Kernels, MaxPoolTest, testing::ValuesIn(PoolCases),
                         caseName<PoolCase>);
INSTANTIATE_TEST_SUITE_P(Dilated, MaxPoolTest,
                         testing::ValuesIn(DilatedPoolCases),
                         caseName<PoolCase>);
INSTANTIATE_TEST_SUITE_P(
    Kernels, AvgPoolTest,
    testing::Combine(testing::ValuesIn(PoolCases), testing::Bool()),
    [](const testing::TestParamInfo<std::tuple<PoolCase, bool>> &Info) {
      return std::string(std::get<0>(Info.param).Name) +
             (std::get<1>(Info.param) ? "IncludePad" : "ExcludePad");
    });

TEST(GlobalAvgPool, MatchesReference) {
  for (auto [NC, HW] : {std::pair<int64_t, int64_t>{5, 49}, {3, 1}}) {
    const auto X = randomFloats(NC * HW, 24);
    std::vector<float> Y(NC, NaN);
    cuvil_k_global_avgpool_f32(X.data(), Y.data(), NC, HW);
    std::vector<double> Want;
    for (int64_t C = 0; C < NC; ++C) {
      double Sum = 0;
      for (int64_t I = 0; I < HW; ++I)
        Sum += X[C * HW + I];
      Want.push_back(Sum / double(HW));
    }
    EXPECT_TRUE(allClose(Y, Want, LinearRtol, LinearAtol)) << "hw " << HW;
  }
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

struct SoftmaxCase {
  const char *Name;
  int64_t Outer, N, Inner;
  float Scale; // inputs are uniform in [-Scale, Scale]
  bool Masked; // every third input is -inf
  // Not 1: cuvil_k_softmax_scaled_f32 of Factor * x (each product rounded
  // to float, as a Mul node before the Softmax rounds it).
  float Factor = 1.0f;
};

class SoftmaxTest : public testing::TestWithParam<SoftmaxCase> {};

TEST_P(SoftmaxTest, MatchesReference) {
  const SoftmaxCase &P = GetParam();
  auto X = randomFloats(P.Outer * P.N * P.Inner, 25, -P.Scale, P.Scale);
  if (P.Masked)
    for (size_t I = 0; I < X.size(); I += 3)
      X[I] = -Inf;
  std::vector<float> Y(X.size(), NaN);
  if (P.Factor == 1.0f)
    cuvil_k_softmax_f32(X.data(), Y.data(), P.Outer, P.N, P.Inner);
  else
    cuvil_k_softmax_scaled_f32(X.data(), Y.data(), P.Outer, P.N, P.Inner,
                               P.Factor);
  for (float &V : X)
    V = P.Factor * V;

  std::vector<double> Want(X.size());
  for (int64_t O = 0; O < P.Outer; ++O)
    for (int64_t J = 0; J < P.Inner; ++J) {
      auto At = [&](int64_t I) { return (O * P.N + I) * P.Inner + J; };
      double Max = -INFINITY, Sum = 0;
      for (int64_t I = 0; I < P.N; ++I)
        Max = std::max(Max, double(X[At(I)]));
      for (int64_t I = 0; I < P.N; ++I)
        Sum += Want[At(I)] = std::exp(X[At(I)] - Max);
      for (int64_t I = 0; I < P.N; ++I)
        Want[At(I)] /= Sum;
    }
  EXPECT_TRUE(allClose(Y, Want, 1e-5, 1e-7));
}

const SoftmaxCase SoftmaxCases[] = {
    {"MiddleAxis", 3, 7, 5, 3.0f, false},
    {"LastAxis", 4, 10, 1, 3.0f, false},
    {"FirstAxis", 1, 6, 8, 3.0f, false},
    // exp of the raw inputs would overflow.
    {"LargeLogits", 2, 9, 3, 200.0f, false},
    {"MaskedLogits", 3, 7, 5, 3.0f, true},
    // Attention's scaled scores: rows of odd and even lengths, a factor
    // below 0 (the maximum of the products is then the smallest x's), and
    // masked rows.
    {"ScaledLastAxis", 6, 33, 1, 8.0f, false, 0.25f},
    {"ScaledShortRows", 5, 3, 1, 8.0f, false, 0.3f},
    {"ScaledMiddleAxis", 3, 7, 5, 3.0f, false, 0.7f},
    {"NegativeFactor", 4, 17, 1, 3.0f, false, -0.7f},
    {"NegativeFactorMiddleAxis", 2, 9, 3, 3.0f, false, -1.5f},
    {"ScaledMasked", 3, 10, 1, 3.0f, true, 0.125f},
};
INSTANTIATE_TEST_SUITE_P(Kernels, SoftmaxTest, testing::ValuesIn(SoftmaxCases),
                         caseName<SoftmaxCase>);

} // namespace
