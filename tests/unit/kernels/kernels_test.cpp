//===- kernels_test.cpp - Convolution and matrix-product kernels
//-----------===//
//
// Each kernel runs on random data (fixed seeds) and is compared with a
// double-precision reference.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "kernels/math.h"

#include <cfloat>

using namespace kernel_test;

namespace {

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

struct ConvCase {
  const char *Name;
  int64_t N, C, H, W, M, KH, KW;
  int64_t StrideH, StrideW, DilH, DilW;
  int64_t PadTop, PadLeft, PadBottom, PadRight;
  int64_t Group;
  bool Bias;
  float ActLo, ActHi;

  int64_t outH() const {
    return (H + PadTop + PadBottom - DilH * (KH - 1) - 1) / StrideH + 1;
  }
  int64_t outW() const {
    return (W + PadLeft + PadRight - DilW * (KW - 1) - 1) / StrideW + 1;
  }
};

std::vector<double> convReference(const ConvCase &P,
                                  const std::vector<float> &X,
                                  const std::vector<float> &Wt,
                                  const std::vector<float> &B) {
  const int64_t CG = P.C / P.Group, MG = P.M / P.Group;
  std::vector<double> Y;
  for (int64_t Bn = 0; Bn < P.N; ++Bn)
    for (int64_t Oc = 0; Oc < P.M; ++Oc)
      for (int64_t Oy = 0; Oy < P.outH(); ++Oy)
        for (int64_t Ox = 0; Ox < P.outW(); ++Ox) {
          const int64_t G = Oc / MG;
          double S = P.Bias ? B[Oc] : 0.0;
          for (int64_t Ic = 0; Ic < CG; ++Ic)
            for (int64_t Ky = 0; Ky < P.KH; ++Ky)
              for (int64_t Kx = 0; Kx < P.KW; ++Kx) {
                const int64_t Iy = Oy * P.StrideH - P.PadTop + Ky * P.DilH;
                const int64_t Ix = Ox * P.StrideW - P.PadLeft + Kx * P.DilW;
                if (Iy < 0 || Iy >= P.H || Ix < 0 || Ix >= P.W)
                  continue;
                S += double(
                         X[((Bn * P.C + G * CG + Ic) * P.H + Iy) * P.W + Ix]) *
                     Wt[((Oc * CG + Ic) * P.KH + Ky) * P.KW + Kx];
              }
          Y.push_back(std::clamp(S, double(P.ActLo), double(P.ActHi)));
        }
  return Y;
}

class Conv2dTest : public testing::TestWithParam<ConvCase> {};

TEST_P(Conv2dTest, MatchesReference) {
  const ConvCase &P = GetParam();
  const auto X = randomFloats(P.N * P.C * P.H * P.W, 1);
  const auto Wt = randomFloats(P.M * (P.C / P.Group) * P.KH * P.KW, 2);
  const auto B = randomFloats(P.M, 3);
  std::vector<float> Y(P.N * P.M * P.outH() * P.outW(), NaN);
  cuvil_k_conv2d_f32(X.data(), Wt.data(), P.Bias ? B.data() : nullptr, Y.data(),
                     P.N, P.C, P.H, P.W, P.M, P.KH, P.KW, P.outH(), P.outW(),
                     P.StrideH, P.StrideW, P.DilH, P.DilW, P.PadTop, P.PadLeft,
                     P.Group, P.ActLo, P.ActHi);
  EXPECT_TRUE(allClose(Y, convReference(P, X, Wt, B), LinearRtol, LinearAtol));
}

// clang-format off
const ConvCase ConvCases[] = {
  // Name                  N  C   H   W  M KH KW  stride dil   pads t l b r  group bias  act
  {"Dense3x3",             2, 3,  9, 11, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true,  -Inf, Inf},
  {"Pointwise",            1, 16, 5,  7, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true,  0.0f, Inf},
  {"Depthwise",            1, 6,  8,  8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, true,  -Inf, Inf},
  {"DepthwiseMultiplier2", 1, 3,  7,  6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, false, -Inf, Inf},
  {"Grouped",              2, 8,  6,  5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, true,  -Inf, Inf},
  {"Stride2",              1, 3, 10,  9, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true,  -Inf, Inf},
  {"Dilation2",            1, 2,  9, 10, 3, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, true,  -Inf, Inf},
  {"StrideAndDilation",    1, 2, 11, 12, 3, 3, 2, 3, 2, 2, 3, 1, 2, 0, 1, 1, true,  -Inf, Inf},
  {"AsymmetricPadding",    1, 3,  7,  8, 4, 3, 2, 1, 2, 1, 1, 0, 2, 2, 1, 1, true,  -Inf, Inf},
  // Whole output rows and columns see only padding.
  {"PaddingBeyondKernel",  1, 2,  5,  5, 2, 2, 2, 2, 2, 1, 1, 3, 3, 3, 3, 1, true,  -Inf, Inf},
  {"FusedClip",            1, 4,  6,  6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, -0.2f, 0.3f},
};
// clang-format on
INSTANTIATE_TEST_SUITE_P(Kernels, Conv2dTest, testing::ValuesIn(ConvCases),
                         caseName<ConvCase>);

//===----------------------------------------------------------------------===//
// Gemm and MatMul
//===----------------------------------------------------------------------===//

// The shapes C may have, broadcast to [m, n].
enum class CForm { None, Scalar, Row, Column, Full };

class GemmTest : public testing::TestWithParam<std::tuple<bool, bool, CForm>> {
};

TEST_P(GemmTest, MatchesReference) {
  const auto [TransA, TransB, Form] = GetParam();
  const int64_t M = 5, N = 13, K = 9;
  const float Alpha = 0.75f, Beta = -1.5f;
  const auto A = randomFloats(M * K, 4), B = randomFloats(K * N, 5),
             C = randomFloats(M * N, 6);

  // Element (i, j) of C is C[i * RowStride + j * ColStride].
  const int64_t RowStride = Form == CForm::Column ? 1
                            : Form == CForm::Full ? N
                                                  : 0;
  const int64_t ColStride = Form == CForm::Row || Form == CForm::Full ? 1 : 0;
  std::vector<float> Y(M * N, NaN);
  cuvil_k_gemm_f32(A.data(), B.data(), Form == CForm::None ? nullptr : C.data(),
                   Y.data(), M, N, K, TransA, TransB, Alpha, Beta, RowStride,
                   ColStride, -Inf, Inf);

  std::vector<double> Want;
  for (int64_t I = 0; I < M; ++I)
    for (int64_t J = 0; J < N; ++J) {
      double S = 0;
      for (int64_t P = 0; P < K; ++P)
        S += double(TransA ? A[P * M + I] : A[I * K + P]) *
             (TransB ? B[J * K + P] : B[P * N + J]);
      const double CIJ = Form == CForm::None     ? 0.0
                         : Form == CForm::Scalar ? C[0]
                         : Form == CForm::Row    ? C[J]
                         : Form == CForm::Column ? C[I]
                                                 : C[I * N + J];
      Want.push_back(Alpha * S + Beta * CIJ);
    }
  EXPECT_TRUE(allClose(Y, Want, LinearRtol, LinearAtol));
}

std::string
gemmName(const testing::TestParamInfo<std::tuple<bool, bool, CForm>> &Info) {
  static const char *const Forms[] = {"NoC", "ScalarC", "RowC", "ColumnC",
                                      "FullC"};
  const auto [TransA, TransB, Form] = Info.param;
  return std::string(TransA ? "At" : "A") + (TransB ? "Bt" : "B") +
         Forms[int(Form)];
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, GemmTest,
    testing::Combine(testing::Bool(), testing::Bool(),
                     testing::Values(CForm::None, CForm::Scalar, CForm::Row,
                                     CForm::Column, CForm::Full)),
    gemmName);

std::vector<double> matmulReference(const std::vector<float> &A,
                                    const std::vector<float> &B, int64_t M,
                                    int64_t N, int64_t K) {
  std::vector<double> Y;
  for (int64_t I = 0; I < M; ++I)
    for (int64_t J = 0; J < N; ++J) {
      double S = 0;
      for (int64_t P = 0; P < K; ++P)
        S += double(A[I * K + P]) * B[P * N + J];
      Y.push_back(S);
    }
  return Y;
}

TEST(Gemm, ZeroBetaDoesNotReadC) {
  const int64_t M = 3, N = 4, K = 5;
  const auto A = randomFloats(M * K, 7), B = randomFloats(K * N, 8);
  const std::vector<float> C(M * N, NaN);
  std::vector<float> Y(M * N);
  cuvil_k_gemm_f32(A.data(), B.data(), C.data(), Y.data(), M, N, K, 0, 0, 1.0f,
                   0.0f, N, 1, -Inf, Inf);
  EXPECT_TRUE(
      allClose(Y, matmulReference(A, B, M, N, K), LinearRtol, LinearAtol));
}

TEST(Gemm, AccumulatesIntoCInPlaceAndClamps) {
  const int64_t M = 4, N = 9, K = 6;
  const float Lo = -0.5f, Hi = 0.5f;
  const auto A = randomFloats(M * K, 9), B = randomFloats(K * N, 10);
  std::vector<float> Y = randomFloats(M * N, 11);
  std::vector<double> Want = matmulReference(A, B, M, N, K);
  for (int64_t I = 0; I < M * N; ++I)
    Want[I] = std::clamp(Want[I] + Y[I], double(Lo), double(Hi));
  cuvil_k_gemm_f32(A.data(), B.data(), Y.data(), Y.data(), M, N, K, 0, 0, 1.0f,
                   1.0f, N, 1, Lo, Hi);
  EXPECT_TRUE(allClose(Y, Want, LinearRtol, LinearAtol));
}

struct MatMulCase {
  const char *Name;
  Shape ABatch, BBatch; // CUVIL_MATMUL_BATCH_RANK dims each
  int64_t M, N, K;
};

class MatMulTest : public testing::TestWithParam<MatMulCase> {};

TEST_P(MatMulTest, MatchesReference) {
  const MatMulCase &P = GetParam();
  const int64_t Rank = CUVIL_MATMUL_BATCH_RANK;
  ASSERT_EQ(P.ABatch.size(), size_t(Rank));
  ASSERT_EQ(P.BBatch.size(), size_t(Rank));
  Shape YBatch(Rank);
  for (int64_t D = 0; D < Rank; ++D)
    YBatch[D] = std::max(P.ABatch[D], P.BBatch[D]);
  const int64_t MK = P.M * P.K, KN = P.K * P.N, MN = P.M * P.N;
  const auto A = randomFloats(numElements(P.ABatch) * MK, 12);
  const auto B = randomFloats(numElements(P.BBatch) * KN, 13);

  // Batch strides in elements; 0 where the operand is broadcast.
  Shape AStr = denseStrides(P.ABatch), BStr = denseStrides(P.BBatch);
  for (int64_t D = 0; D < Rank; ++D) {
    AStr[D] = P.ABatch[D] == 1 ? 0 : AStr[D] * MK;
    BStr[D] = P.BBatch[D] == 1 ? 0 : BStr[D] * KN;
  }
  std::vector<float> Y(numElements(YBatch) * MN, NaN);
  cuvil_k_matmul_f32(A.data(), B.data(), Y.data(), P.M, P.N, P.K, YBatch.data(),
                     AStr.data(), BStr.data());

  // Numpy broadcasting: a batch index into an operand's dimension of size 1
  // is 0.
  std::vector<double> Want;
  const Shape YStr = denseStrides(YBatch), ADense = denseStrides(P.ABatch),
              BDense = denseStrides(P.BBatch);
  for (int64_t L = 0; L < numElements(YBatch); ++L) {
    int64_t AI = 0, BI = 0;
    for (int64_t D = 0; D < Rank; ++D) {
      const int64_t Idx = L / YStr[D] % YBatch[D];
      AI += (P.ABatch[D] == 1 ? 0 : Idx) * ADense[D];
      BI += (P.BBatch[D] == 1 ? 0 : Idx) * BDense[D];
    }
    const std::vector<float> AM(A.begin() + AI * MK, A.begin() + (AI + 1) * MK);
    const std::vector<float> BM(B.begin() + BI * KN, B.begin() + (BI + 1) * KN);
    const auto YM = matmulReference(AM, BM, P.M, P.N, P.K);
    Want.insert(Want.end(), YM.begin(), YM.end());
  }
  EXPECT_TRUE(allClose(Y, Want, LinearRtol, LinearAtol));
}

const MatMulCase MatMulCases[] = {
    {"NoBatch", {1, 1, 1, 1}, {1, 1, 1, 1}, 4, 6, 5},
    {"SameBatch", {1, 1, 2, 3}, {1, 1, 2, 3}, 3, 5, 4},
    {"BroadcastBoth", {1, 2, 1, 3}, {1, 1, 4, 3}, 3, 7, 5},
    {"SharedB", {2, 1, 3, 2}, {1, 1, 1, 1}, 2, 3, 4},
    {"Rank4", {2, 3, 1, 2}, {1, 3, 2, 1}, 1, 4, 3},
};
INSTANTIATE_TEST_SUITE_P(Kernels, MatMulTest, testing::ValuesIn(MatMulCases),
                         caseName<MatMulCase>);

} // namespace
