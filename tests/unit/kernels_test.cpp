//===- kernels_test.cpp - Reference kernels and their float math ----------===//
//
// Every kernel runs on random data (fixed seeds) and is compared with a
// direct double-precision implementation of the ONNX operator written here;
// the math approximations are swept against <cmath>.
//
//===----------------------------------------------------------------------===//
#include "cuvil/kernels.h"
#include "kernels/math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr float Inf = std::numeric_limits<float>::infinity();
constexpr float NaN = std::numeric_limits<float>::quiet_NaN();
// Linear kernels accumulate in float, in a different order than the
// reference.
constexpr double LinearRtol = 1e-5, LinearAtol = 1e-5;

using Shape = std::vector<int64_t>;
using Padded = std::array<int64_t, CUVIL_MAX_RANK>;

std::vector<float> randomFloats(int64_t N, unsigned Seed, float Lo = -1.0f,
                                float Hi = 1.0f) {
  std::mt19937 Rng(Seed);
  std::uniform_real_distribution<float> Dist(Lo, Hi);
  std::vector<float> V(N);
  for (float &E : V)
    E = Dist(Rng);
  return V;
}

int64_t numElements(const Shape &S) {
  int64_t N = 1;
  for (int64_t D : S)
    N *= D;
  return N;
}

// Dense row-major element strides of S.
Shape denseStrides(const Shape &S) {
  Shape Str(S.size(), 1);
  for (size_t D = S.size(); D-- > 1;)
    Str[D - 1] = Str[D] * S[D];
  return Str;
}

// S padded on the left with Fill to CUVIL_MAX_RANK entries.
Padded padLeft(const Shape &S, int64_t Fill) {
  Padded P;
  P.fill(Fill);
  std::copy(S.begin(), S.end(), P.end() - S.size());
  return P;
}

// |Got - Want| <= Atol + Rtol * |Want| element-wise; NaN must match NaN.
testing::AssertionResult allClose(const std::vector<float> &Got,
                                  const std::vector<double> &Want, double Rtol,
                                  double Atol) {
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
std::string caseName(const testing::TestParamInfo<Case> &Info) {
  return Info.param.Name;
}

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

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

enum class BinaryOp { Add, Sub, Mul, Div };

struct BroadcastCase {
  const char *Name;
  Shape A, B;
};

using BinaryKernel = void (*)(const float *, const float *, float *,
                              const int64_t *, const int64_t *,
                              const int64_t *);

BinaryKernel binaryKernel(BinaryOp Op) {
  switch (Op) {
  case BinaryOp::Add:
    return cuvil_k_add_f32;
  case BinaryOp::Sub:
    return cuvil_k_sub_f32;
  case BinaryOp::Mul:
    return cuvil_k_mul_f32;
  case BinaryOp::Div:
    return cuvil_k_div_f32;
  }
  return nullptr;
}

double applyBinary(BinaryOp Op, double A, double B) {
  switch (Op) {
  case BinaryOp::Add:
    return A + B;
  case BinaryOp::Sub:
    return A - B;
  case BinaryOp::Mul:
    return A * B;
  case BinaryOp::Div:
    return A / B;
  }
  return 0;
}

// The kernel's strides of an operand padded to In against the output shape
// Out: dense, and 0 where the operand is broadcast.
Padded broadcastStrides(const Padded &In, const Padded &Out) {
  const Shape Dense = denseStrides(Shape(In.begin(), In.end()));
  Padded Str;
  for (int64_t D = 0; D < CUVIL_MAX_RANK; ++D)
    Str[D] = In[D] == 1 && Out[D] != 1 ? 0 : Dense[D];
  return Str;
}

// Divisors away from 0: magnitudes in [0.5, 2], alternating signs.
std::vector<float> divisors(int64_t N, unsigned Seed) {
  std::vector<float> V = randomFloats(N, Seed, 0.5f, 2.0f);
  for (size_t I = 1; I < V.size(); I += 2)
    V[I] = -V[I];
  return V;
}

class BinaryTest
    : public testing::TestWithParam<std::tuple<BinaryOp, BroadcastCase>> {};

TEST_P(BinaryTest, MatchesReference) {
  const auto &[Op, P] = GetParam();
  const Padded AShape = padLeft(P.A, 1), BShape = padLeft(P.B, 1);
  Padded YShape;
  for (int64_t D = 0; D < CUVIL_MAX_RANK; ++D)
    YShape[D] = std::max(AShape[D], BShape[D]);
  const Shape YDims(YShape.begin(), YShape.end());
  const auto A = randomFloats(numElements(P.A), 14);
  const auto B = Op == BinaryOp::Div ? divisors(numElements(P.B), 15)
                                     : randomFloats(numElements(P.B), 15);
  std::vector<float> Y(numElements(YDims), NaN);
  binaryKernel(Op)(A.data(), B.data(), Y.data(), YShape.data(),
                   broadcastStrides(AShape, YShape).data(),
                   broadcastStrides(BShape, YShape).data());

  // Numpy broadcasting, index by index.
  const Shape YStr = denseStrides(YDims);
  const Shape AStr = denseStrides(Shape(AShape.begin(), AShape.end()));
  const Shape BStr = denseStrides(Shape(BShape.begin(), BShape.end()));
  std::vector<double> Want;
  for (int64_t L = 0; L < numElements(YDims); ++L) {
    int64_t AI = 0, BI = 0;
    for (int64_t D = 0; D < CUVIL_MAX_RANK; ++D) {
      const int64_t Idx = L / YStr[D] % YShape[D];
      AI += (AShape[D] == 1 ? 0 : Idx) * AStr[D];
      BI += (BShape[D] == 1 ? 0 : Idx) * BStr[D];
    }
    Want.push_back(applyBinary(Op, A[AI], B[BI]));
  }
  // One correctly rounded float operation per element.
  EXPECT_TRUE(allClose(Y, Want, 1e-7, 0.0));
}

std::string binaryName(
    const testing::TestParamInfo<std::tuple<BinaryOp, BroadcastCase>> &Info) {
  static const char *const Ops[] = {"Add", "Sub", "Mul", "Div"};
  return std::string(Ops[int(std::get<0>(Info.param))]) +
         std::get<1>(Info.param).Name;
}

const BroadcastCase BroadcastCases[] = {
    {"SameShape", {2, 3, 4, 5}, {2, 3, 4, 5}},
    {"Row", {2, 3, 4, 5}, {5}},
    {"Scalar", {3, 7}, {}},
    {"ScalarFirst", {}, {4, 6}},
    {"PerChannel", {1, 3, 1, 1}, {2, 3, 4, 5}},
    {"BothSides", {2, 1, 4, 1}, {3, 1, 5}},
    {"Rank6", {2, 1, 3, 2, 3, 1}, {2, 2, 1, 2, 3, 4}},
};
INSTANTIATE_TEST_SUITE_P(
    Kernels, BinaryTest,
    testing::Combine(testing::Values(BinaryOp::Add, BinaryOp::Sub,
                                     BinaryOp::Mul, BinaryOp::Div),
                     testing::ValuesIn(BroadcastCases)),
    binaryName);

TEST(Binary, InPlaceOnDenseOperand) {
  const Padded Out = padLeft({3, 8}, 1), BShape = padLeft({8}, 1);
  const auto A = randomFloats(24, 16), B = randomFloats(8, 17);
  std::vector<float> Y = A;
  cuvil_k_sub_f32(Y.data(), B.data(), Y.data(), Out.data(),
                  broadcastStrides(Out, Out).data(),
                  broadcastStrides(BShape, Out).data());
  std::vector<double> Want;
  for (int64_t I = 0; I < 24; ++I)
    Want.push_back(double(A[I]) - B[I % 8]);
  EXPECT_TRUE(allClose(Y, Want, 1e-7, 0.0));
}

// Random values, a fine grid over the interesting range, and edge values.
std::vector<float> activationInputs() {
  std::vector<float> X = randomFloats(4096, 18, -30.0f, 30.0f);
  for (float V = -12.0f; V <= 12.0f; V += 1.0f / 64)
    X.push_back(V);
  for (float V : {0.0f, -0.0f, 1e-30f, -1e-30f, 88.0f, -88.0f, 100.0f, -100.0f,
                  Inf, -Inf, NaN})
    X.push_back(V);
  return X;
}

template <typename F>
std::vector<double> mapDouble(const std::vector<float> &X, F Fn) {
  std::vector<double> Y;
  for (float V : X)
    Y.push_back(Fn(double(V)));
  return Y;
}

TEST(Activation, Relu) {
  const auto X = activationInputs();
  std::vector<float> Y(X.size());
  cuvil_k_relu_f32(X.data(), Y.data(), int64_t(X.size()));
  EXPECT_TRUE(allClose(
      Y, mapDouble(X, [](double V) { return V < 0 ? 0.0 : V; }), 0, 0));
}

TEST(Activation, ClipInPlace) {
  const auto X = activationInputs();
  std::vector<float> Y = X;
  cuvil_k_clip_f32(Y.data(), Y.data(), int64_t(Y.size()), -0.5f, 6.0f);
  // NaN passes through the clamp.
  EXPECT_TRUE(allClose(Y,
                       mapDouble(X,
                                 [](double V) {
                                   return std::isnan(V)
                                              ? V
                                              : std::clamp(V, -0.5, 6.0);
                                 }),
                       0, 0));
}

TEST(Activation, Sigmoid) {
  const auto X = activationInputs();
  std::vector<float> Y(X.size());
  cuvil_k_sigmoid_f32(X.data(), Y.data(), int64_t(X.size()));
  EXPECT_TRUE(
      allClose(Y, mapDouble(X, [](double V) { return 1 / (1 + std::exp(-V)); }),
               0, 1e-6));
}

TEST(Activation, TanhInPlace) {
  const auto X = activationInputs();
  std::vector<float> Y = X;
  cuvil_k_tanh_f32(Y.data(), Y.data(), int64_t(Y.size()));
  EXPECT_TRUE(allClose(Y, mapDouble(X, [](double V) { return std::tanh(V); }),
                       0, 1e-6));
}

TEST(ChannelAffine, MatchesReference) {
  const int64_t N = 2, C = 3, HW = 10;
  const auto X = randomFloats(N * C * HW, 19), Scale = randomFloats(C, 20),
             Bias = randomFloats(C, 21);
  std::vector<float> Y = X;
  cuvil_k_channel_affine_f32(Y.data(), Scale.data(), Bias.data(), Y.data(), N,
                             C, HW);
  std::vector<double> Want;
  for (int64_t I = 0; I < N * C * HW; ++I) {
    const int64_t Ch = I / HW % C;
    Want.push_back(double(X[I]) * Scale[Ch] + Bias[Ch]);
  }
  EXPECT_TRUE(allClose(Y, Want, 1e-6, 1e-7));
}

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
};

class SoftmaxTest : public testing::TestWithParam<SoftmaxCase> {};

TEST_P(SoftmaxTest, MatchesReference) {
  const SoftmaxCase &P = GetParam();
  auto X = randomFloats(P.Outer * P.N * P.Inner, 25, -P.Scale, P.Scale);
  if (P.Masked)
    for (size_t I = 0; I < X.size(); I += 3)
      X[I] = -Inf;
  std::vector<float> Y(X.size(), NaN);
  cuvil_k_softmax_f32(X.data(), Y.data(), P.Outer, P.N, P.Inner);

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
};
INSTANTIATE_TEST_SUITE_P(Kernels, SoftmaxTest, testing::ValuesIn(SoftmaxCases),
                         caseName<SoftmaxCase>);

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

struct TransposeCase {
  const char *Name;
  Shape In, Perm;
};

class TransposeTest : public testing::TestWithParam<TransposeCase> {};

TEST_P(TransposeTest, MatchesReference) {
  const TransposeCase &P = GetParam();
  const size_t Rank = P.In.size();
  std::mt19937 Rng(26);
  std::vector<uint32_t> X(numElements(P.In));
  for (uint32_t &E : X)
    E = Rng(); // any bit pattern, NaNs included, must move unchanged

  // Output dimension d is input dimension Perm[d].
  const Shape InStr = denseStrides(P.In);
  Shape OutShape(Rank), OutInStr(Rank);
  for (size_t D = 0; D < Rank; ++D) {
    OutShape[D] = P.In[P.Perm[D]];
    OutInStr[D] = InStr[P.Perm[D]];
  }
  std::vector<uint32_t> Y(X.size());
  cuvil_k_transpose_b32(X.data(), Y.data(), padLeft(OutShape, 1).data(),
                        padLeft(OutInStr, 0).data());

  const Shape OutStr = denseStrides(OutShape);
  std::vector<uint32_t> Want(X.size());
  for (int64_t L = 0; L < int64_t(X.size()); ++L) {
    int64_t Src = 0;
    for (size_t D = 0; D < Rank; ++D)
      Src += L / OutStr[D] % OutShape[D] * InStr[P.Perm[D]];
    Want[L] = X[Src];
  }
  EXPECT_EQ(Y, Want);
}

const TransposeCase TransposeCases[] = {
    {"Perm4d", {2, 3, 4, 5}, {2, 0, 3, 1}},
    {"NchwToNhwc", {2, 3, 4, 5}, {0, 2, 3, 1}},
    {"Perm6d", {3, 1, 2, 4, 2, 3}, {5, 3, 1, 0, 4, 2}},
    {"Matrix", {7, 9}, {1, 0}},
};
INSTANTIATE_TEST_SUITE_P(Kernels, TransposeTest,
                         testing::ValuesIn(TransposeCases),
                         caseName<TransposeCase>);

std::vector<unsigned char> bytePattern(size_t N) {
  std::vector<unsigned char> V(N);
  for (size_t I = 0; I < N; ++I)
    V[I] = (unsigned char)(I * 7 + 1);
  return V;
}

TEST(Copy, CopiesUnalignedBytes) {
  const auto Src = bytePattern(64);
  std::vector<unsigned char> Dst(64, 0xaa);
  cuvil_k_copy(Src.data() + 1, Dst.data() + 3, 37);
  for (size_t I = 0; I < Dst.size(); ++I)
    EXPECT_EQ(Dst[I], I >= 3 && I < 40 ? Src[I - 2] : 0xaa) << "byte " << I;
}

TEST(Copy, SameBufferIsUnchanged) {
  auto Buf = bytePattern(32);
  cuvil_k_copy(Buf.data(), Buf.data(), int64_t(Buf.size()));
  EXPECT_EQ(Buf, bytePattern(32));
}

TEST(CopyRows, SlicesIntoStridedDestination) {
  // Rows 1..4, bytes [4, 14) of a [6, 24] source go to rows of 16 bytes,
  // at byte 2 of each.
  const int64_t SrcStride = 24, DstStride = 16, Rows = 4, RowBytes = 10;
  const auto Src = bytePattern(6 * SrcStride);
  std::vector<unsigned char> Dst(Rows * DstStride, 0xaa);
  cuvil_k_copy_rows(Src.data() + SrcStride + 4, Dst.data() + 2, Rows, RowBytes,
                    SrcStride, DstStride);
  for (int64_t R = 0; R < Rows; ++R)
    for (int64_t B = 0; B < DstStride; ++B) {
      const bool Copied = B >= 2 && B < 2 + RowBytes;
      EXPECT_EQ(Dst[R * DstStride + B],
                Copied ? Src[(R + 1) * SrcStride + 4 + B - 2] : 0xaa)
          << "row " << R << " byte " << B;
    }
}

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
  const ErrorStats S = sweep(
      cuvil_expf, [](double X) { return std::exp(X); }, -87.3f, 88.7f);
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
