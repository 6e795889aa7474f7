// The packed (register-blocked) conv2d, Gemm, batched MatMul and LSTM
// kernels against the reference kernels, their oracle, over shapes that
// exercise every path: full blocks, remainders, borders, strides, dilations,
// channel counts that are not a multiple of the block.
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace {

std::vector<float> randomVector(size_t N, std::mt19937 &Rng) {
  std::uniform_real_distribution<float> D(-1.0f, 1.0f);
  std::vector<float> V(N);
  for (float &X : V)
    X = D(Rng);
  return V;
}

// Got matches the reference kernel's Ref within Rtol relative (plus the
// same absolute) error: the kernels sum in different orders. A NaN must
// be a NaN in both.
testing::AssertionResult matches(const std::vector<float> &Got,
                                 const std::vector<float> &Ref, float Rtol) {
  for (size_t I = 0; I < Ref.size(); ++I) {
    const bool Close =
        std::fabs(Got[I] - Ref[I]) <= Rtol * (1.0f + std::fabs(Ref[I]));
    if (std::isnan(Ref[I]) ? !std::isnan(Got[I]) : !Close)
      return testing::AssertionFailure() << "at flat index " << I << ": got "
                                         << Got[I] << ", want " << Ref[I];
  }
  return testing::AssertionSuccess();
}

struct ConvCase {
  int64_t N, C, H, W, M, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR;
};

int64_t outSize(int64_t In, int64_t K, int64_t S, int64_t D, int64_t P0,
                int64_t P1) {
  return (In + P0 + P1 - ((K - 1) * D + 1)) / S + 1;
}

// With NaNInput one input element is NaN: the outputs that read it must be
// NaN after the clamp too (the clamp lets a NaN through).
void checkConv(const ConvCase &T, float Lo, float Hi, bool NaNInput = false) {
  SCOPED_TRACE(::testing::Message()
               << "c=" << T.C << " h=" << T.H << " w=" << T.W << " m=" << T.M
               << " k=" << T.KH << "x" << T.KW << " s=" << T.SH << "," << T.SW
               << " d=" << T.DH << "," << T.DW);
  std::mt19937 Rng(static_cast<unsigned>(T.C * 131 + T.M * 7 + T.KH));
  const int64_t OH = outSize(T.H, T.KH, T.SH, T.DH, T.PT, T.PB);
  const int64_t OW = outSize(T.W, T.KW, T.SW, T.DW, T.PL, T.PR);
  ASSERT_GT(OH, 0);
  ASSERT_GT(OW, 0);
  auto X = randomVector(T.N * T.C * T.H * T.W, Rng);
  if (NaNInput)
    X[X.size() / 2] = NAN;
  auto Wt = randomVector(T.M * T.C * T.KH * T.KW, Rng);
  auto B = randomVector(T.M, Rng);
  const int64_t MR = cuvil_k_pack_mr, Taps = T.C * T.KH * T.KW;
  std::vector<float> Packed(T.M * Taps, NAN);
  for (int64_t Mo = 0; Mo < T.M; ++Mo) {
    const int64_t M0 = Mo / MR * MR, Width = std::min(MR, T.M - M0);
    for (int64_t Tap = 0; Tap < Taps; ++Tap)
      Packed[M0 * Taps + Tap * Width + (Mo - M0)] = Wt[Mo * Taps + Tap];
  }

  std::vector<float> Ref(T.N * T.M * OH * OW), Got(Ref.size(), NAN);
  cuvil_k_conv2d_f32(X.data(), Wt.data(), B.data(), Ref.data(), T.N, T.C, T.H,
                     T.W, T.M, T.KH, T.KW, OH, OW, T.SH, T.SW, T.DH, T.DW, T.PT,
                     T.PL, 1, Lo, Hi);
  cuvil_k_conv2d_packed_f32(X.data(), Packed.data(), B.data(), nullptr,
                            Got.data(), T.N, T.C, T.H, T.W, T.M, T.KH, T.KW, OH,
                            OW, T.SH, T.SW, T.DH, T.DW, T.PT, T.PL, Lo, Hi, 0,
                            OH, 0, OW);
  EXPECT_TRUE(matches(Got, Ref, 1e-5f));

  // The same output in four parts (as cores share a layer): rows split at
  // a third, columns at half. Each part computes its rectangle of every
  // channel and writes nothing else.
  const int64_t RowCut = OH / 3, ColCut = OW / 2;
  for (auto [Y0, Y1] : {std::pair{int64_t(0), RowCut}, std::pair{RowCut, OH}})
    for (auto [X0, X1] :
         {std::pair{int64_t(0), ColCut}, std::pair{ColCut, OW}}) {
      std::vector<float> Part(Ref.size(), NAN);
      cuvil_k_conv2d_packed_f32(X.data(), Packed.data(), B.data(), nullptr,
                                Part.data(), T.N, T.C, T.H, T.W, T.M, T.KH,
                                T.KW, OH, OW, T.SH, T.SW, T.DH, T.DW, T.PT,
                                T.PL, Lo, Hi, Y0, Y1, X0, X1);
      int64_t Wrong = 0;
      for (int64_t I = 0; I < static_cast<int64_t>(Ref.size()); ++I) {
        const int64_t Oy = I / OW % OH, Ox = I % OW;
        const bool Mine = Oy >= Y0 && Oy < Y1 && Ox >= X0 && Ox < X1;
        const bool Right = std::isnan(Ref[I])
                               ? std::isnan(Part[I])
                               : std::fabs(Part[I] - Ref[I]) <=
                                     1e-5f * (1 + std::fabs(Ref[I]));
        if (Mine ? !Right : !std::isnan(Part[I]))
          ++Wrong;
      }
      EXPECT_EQ(Wrong, 0) << "part rows [" << Y0 << ", " << Y1 << ") columns ["
                          << X0 << ", " << X1 << ")";
    }

  // A fused residual Add: the reference without activation, plus the
  // residual, then the clamp.
  auto R = randomVector(Ref.size(), Rng);
  std::vector<float> Sum(Ref.size()), GotRes(Ref.size(), NAN);
  const float Inf = INFINITY;
  cuvil_k_conv2d_f32(X.data(), Wt.data(), B.data(), Sum.data(), T.N, T.C, T.H,
                     T.W, T.M, T.KH, T.KW, OH, OW, T.SH, T.SW, T.DH, T.DW, T.PT,
                     T.PL, 1, -Inf, Inf);
  for (size_t I = 0; I < Sum.size(); ++I)
    Sum[I] = std::min(std::max(Sum[I] + R[I], Lo), Hi);
  cuvil_k_conv2d_packed_f32(X.data(), Packed.data(), B.data(), R.data(),
                            GotRes.data(), T.N, T.C, T.H, T.W, T.M, T.KH, T.KW,
                            OH, OW, T.SH, T.SW, T.DH, T.DW, T.PT, T.PL, Lo, Hi,
                            0, OH, 0, OW);
  EXPECT_TRUE(matches(GotRes, Sum, 1e-5f)) << "with a residual";
}

TEST(PackedConv, MatchesReference) {
  const float Inf = INFINITY;
  const ConvCase Cases[] = {
      // 1x1 (pointwise), channel counts around the block size.
      {1, 16, 8, 8, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {1, 3, 5, 7, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {2, 8, 4, 13, 17, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      // 3x3 same padding, stride 1 and 2, odd sizes (border + remainder).
      {1, 4, 9, 11, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 5, 12, 12, 19, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {1, 3, 32, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      // Asymmetric padding, rectangular kernels (DS-CNN's 10x4 stride 2).
      {1, 1, 49, 10, 64, 10, 4, 2, 2, 1, 1, 4, 1, 5, 1},
      {1, 2, 7, 9, 5, 2, 3, 1, 2, 1, 1, 0, 2, 1, 0},
      // Dilation, and a window wider than the interior (all border).
      {1, 3, 10, 10, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},
      {1, 2, 3, 3, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 2, 1, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      // No padding, stride 3, batch 2.
      {2, 6, 14, 15, 9, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0},
  };
  for (const ConvCase &T : Cases) {
    checkConv(T, -Inf, Inf);
    checkConv(T, 0.0f, 6.0f); // fused Relu6
  }
}

void checkDepthwise(const ConvCase &T, float Lo, float Hi,
                    bool NaNInput = false) {
  SCOPED_TRACE(::testing::Message()
               << "depthwise c=" << T.C << " h=" << T.H << " w=" << T.W
               << " k=" << T.KH << "x" << T.KW << " s=" << T.SH << "," << T.SW
               << " d=" << T.DH << "," << T.DW);
  std::mt19937 Rng(static_cast<unsigned>(T.C * 17 + T.W));
  const int64_t OH = outSize(T.H, T.KH, T.SH, T.DH, T.PT, T.PB);
  const int64_t OW = outSize(T.W, T.KW, T.SW, T.DW, T.PL, T.PR);
  auto X = randomVector(T.N * T.C * T.H * T.W, Rng);
  if (NaNInput)
    X[X.size() / 2] = NAN;
  auto Wt = randomVector(T.C * T.KH * T.KW, Rng);
  auto B = randomVector(T.C, Rng);
  std::vector<float> Ref(T.N * T.C * OH * OW), Got(Ref.size(), NAN);
  cuvil_k_conv2d_f32(X.data(), Wt.data(), B.data(), Ref.data(), T.N, T.C, T.H,
                     T.W, T.C, T.KH, T.KW, OH, OW, T.SH, T.SW, T.DH, T.DW, T.PT,
                     T.PL, T.C, Lo, Hi);
  cuvil_k_dwconv2d_f32(X.data(), Wt.data(), B.data(), Got.data(), T.N, T.C, T.H,
                       T.W, T.KH, T.KW, OH, OW, T.SH, T.SW, T.DH, T.DW, T.PT,
                       T.PL, Lo, Hi);
  EXPECT_TRUE(matches(Got, Ref, 1e-5f));
}

TEST(Depthwise, MatchesReference) {
  const float Inf = INFINITY;
  // M is unused (the output has C channels).
  const ConvCase Cases[] = {
      {1, 8, 112, 112, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 4, 113, 111, 0, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1},
      {1, 3, 56, 56, 0, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {2, 5, 7, 7, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 2, 40, 41, 0, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1},
      {1, 3, 30, 37, 0, 5, 5, 1, 1, 2, 2, 4, 4, 4, 4},
      {1, 2, 25, 5, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 2, 3, 70, 0, 1, 7, 1, 2, 1, 1, 0, 3, 0, 3},
      // Wide planes that one-lane targets read directly (dw_direct), with
      // 5x5 windows: dilated at stride 1, and at stride 2.
      {1, 2, 40, 60, 0, 5, 5, 1, 1, 2, 2, 4, 4, 4, 4},
      {1, 3, 50, 51, 0, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2},
      // Small late-network maps: fewer rows than a tile, rows narrower
      // than a vector, a single position.
      {1, 6, 6, 6, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 6, 6, 6, 0, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1},
      {1, 4, 3, 3, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 3, 1, 1, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {2, 3, 5, 2, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      // Lines wider than the stack budget: column chunks (stride 1 and 2),
      // and a dilated window too wide for any chunk (the plain loop).
      {1, 2, 9, 700, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 2, 12, 449, 0, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      // Bands of 2 rows at stride 2, chunks that fill the lines exactly,
      // odd rows: one-lane lines shifted and lengthened by a float.
      {1, 2, 4, 449, 0, 3, 3, 2, 2, 1, 1, 0, 1, 1, 1},
      {1, 1, 40, 40, 0, 7, 7, 1, 1, 6, 6, 18, 18, 18, 18},
  };
  for (const ConvCase &T : Cases) {
    checkDepthwise(T, -Inf, Inf);
    checkDepthwise(T, 0.0f, 6.0f);
  }
}

// A NaN input reaches the outputs that read it through the fused clamp
// (the one-lane kernels clamp with max/min only when a block has no NaN).
TEST(PackedAndDepthwise, NaNInputStaysNaN) {
  checkConv({1, 16, 6, 6, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, 0.0f, 6.0f, true);
  checkConv({1, 4, 9, 11, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 0.0f, 6.0f, true);
  checkDepthwise({1, 4, 12, 12, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 0.0f, 6.0f,
                 true);
  checkDepthwise({1, 3, 13, 13, 0, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, 0.0f, 6.0f,
                 true);
}

void checkGemm(int64_t M, int64_t N, int64_t K, bool TA, bool TB, float Alpha,
               float Beta, int CShape) {
  SCOPED_TRACE(::testing::Message()
               << "m=" << M << " n=" << N << " k=" << K << " ta=" << TA
               << " tb=" << TB << " cshape=" << CShape);
  std::mt19937 Rng(static_cast<unsigned>(M * 1000 + N * 10 + K));
  auto A = randomVector(M * K, Rng), B = randomVector(K * N, Rng);
  // CShape: 0 none, 1 row vector [N], 2 full [M, N], 3 column [M, 1].
  std::vector<float> C;
  int64_t CRs = 0, CCs = 0;
  if (CShape == 1) {
    C = randomVector(N, Rng);
    CCs = 1;
  } else if (CShape == 2) {
    C = randomVector(M * N, Rng);
    CRs = N;
    CCs = 1;
  } else if (CShape == 3) {
    C = randomVector(M, Rng);
    CRs = 1;
  }
  const float *CP = CShape ? C.data() : nullptr;
  const int64_t MR = cuvil_k_pack_mr;
  std::vector<float> Packed(N * K, NAN);
  for (int64_t J = 0; J < N; ++J) {
    const int64_t J0 = J / MR * MR, Width = std::min(MR, N - J0);
    for (int64_t P = 0; P < K; ++P)
      Packed[J0 * K + P * Width + (J - J0)] =
          Alpha * B[TB ? J * K + P : P * N + J];
  }
  std::vector<float> Ref(M * N), Got(M * N, NAN);
  const float Inf = INFINITY;
  cuvil_k_gemm_f32(A.data(), B.data(), CP, Ref.data(), M, N, K, TA, TB, Alpha,
                   CShape ? Beta : 0.0f, CRs, CCs, -Inf, Inf);
  cuvil_k_gemm_packed_f32(A.data(), Packed.data(), CP, Got.data(), M, N, K, TA,
                          CShape ? Beta : 0.0f, CRs, CCs, -Inf, Inf, 0, N);
  EXPECT_TRUE(matches(Got, Ref, 1e-4f));
  // Columns in two parts at a panel boundary (as two cores share a layer):
  // each writes only its own columns.
  const int64_t Cut = (N / MR + 1) / 2 * MR;
  if (Cut > 0 && Cut < N)
    for (auto [J0, J1] : {std::pair{int64_t(0), Cut}, std::pair{Cut, N}}) {
      std::vector<float> Part(M * N, NAN);
      cuvil_k_gemm_packed_f32(A.data(), Packed.data(), CP, Part.data(), M, N, K,
                              TA, CShape ? Beta : 0.0f, CRs, CCs, -Inf, Inf, J0,
                              J1);
      int64_t Wrong = 0;
      for (int64_t I = 0; I < M * N; ++I) {
        const int64_t J = I % N;
        const bool Right =
            std::fabs(Part[I] - Ref[I]) <= 1e-4f * (1 + std::fabs(Ref[I]));
        if (J >= J0 && J < J1 ? !Right : !std::isnan(Part[I]))
          ++Wrong;
      }
      EXPECT_EQ(Wrong, 0) << "columns [" << J0 << ", " << J1 << ")";
    }
}

TEST(PackedGemm, MatchesReference) {
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 128, 784},
                         {1, 10, 128},
                         {7, 33, 19},
                         {12, 16, 5},
                         {13, 1, 3},
                         // RV64's rows left after its blocks of 6 go in
                         // pairs, then one: 6 + 2 + 1.
                         {9, 20, 11}})
    for (bool TA : {false, true})
      for (bool TB : {false, true})
        for (int CShape : {0, 1, 2, 3})
          checkGemm(M, N, K, TA, TB, TA ? 0.5f : 1.0f,
                    CShape == 2 ? 2.0f : 1.0f, CShape);
}

// The blocked MatMul reads both operands in place: batches with
// broadcasting, column counts around the panel width, rows around the
// row block.
TEST(BlockedMatMul, MatchesReference) {
  const int64_t MR = cuvil_k_pack_mr;
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{32, 32, 16},
                         {32, 16, 32},
                         {7, MR + 3, 5},
                         {11, MR + 1, 7},
                         {1, 2 * MR, 9},
                         {13, 1, 3}}) {
    SCOPED_TRACE(::testing::Message() << "m=" << M << " n=" << N << " k=" << K);
    std::mt19937 Rng(static_cast<unsigned>(M * 1000 + N * 10 + K));
    // A: [2, 3, M, K]; B: [3, K, N], broadcast over the first dimension.
    auto A = randomVector(6 * M * K, Rng), B = randomVector(3 * K * N, Rng);
    const int64_t Shape[4] = {1, 1, 2, 3};
    const int64_t AStride[4] = {0, 0, 3 * M * K, M * K};
    const int64_t BStride[4] = {0, 0, 0, K * N};
    std::vector<float> Ref(6 * M * N), Got(6 * M * N, NAN);
    cuvil_k_matmul_f32(A.data(), B.data(), Ref.data(), M, N, K, Shape, AStride,
                       BStride);
    cuvil_k_matmul_blocked_f32(A.data(), B.data(), Got.data(), M, N, K, Shape,
                               AStride, BStride);
    EXPECT_TRUE(matches(Got, Ref, 1e-4f));
  }
}

// Packs each direction's [rows, taps] block of W as transB Gemm panels (what
// cuvilc's pack-weights pass does for the LSTM).
std::vector<float> packTransB(const std::vector<float> &W, int64_t Dirs,
                              int64_t Rows, int64_t Taps) {
  const int64_t MR = cuvil_k_pack_mr;
  std::vector<float> P(W.size(), NAN);
  for (int64_t D = 0; D < Dirs; ++D)
    for (int64_t R = 0; R < Rows; ++R) {
      const int64_t R0 = R / MR * MR, Width = std::min(MR, Rows - R0);
      for (int64_t T = 0; T < Taps; ++T)
        P[D * Rows * Taps + R0 * Taps + T * Width + (R - R0)] =
            W[(D * Rows + R) * Taps + T];
    }
  return P;
}

TEST(PackedLstm, MatchesReference) {
  // (steps, batch, inputs, hidden, directions, reverse, layout, bias, init)
  for (auto [T, Bn, I, H, Dirs, Rev, Layout, Bias, Init] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                   int64_t, bool, bool>{5, 1, 10, 16, 1, 0, 0, true, false},
        {4, 2, 3, 5, 2, 0, 0, true, true},
        {3, 3, 7, 9, 1, 1, 1, false, true},
        {6, 1, 4, 8, 2, 0, 1, true, true},
        // Several groups of CUVIL_LSTM_STEPS input products, full panels,
        // reductions past the unrolled loops.
        {9, 2, 20, 16, 2, 0, 1, true, true},
        {11, 1, 37, 32, 1, 1, 0, true, false}}) {
    SCOPED_TRACE(::testing::Message() << "T=" << T << " B=" << Bn << " I=" << I
                                      << " H=" << H << " dirs=" << Dirs);
    std::mt19937 Rng(static_cast<unsigned>(T * 100 + I * 10 + H));
    const int64_t GH = 4 * H;
    auto X = randomVector(T * Bn * I, Rng);
    auto W = randomVector(Dirs * GH * I, Rng),
         R = randomVector(Dirs * GH * H, Rng);
    auto B = randomVector(Dirs * 2 * GH, Rng);
    auto H0 = randomVector(Dirs * Bn * H, Rng),
         C0 = randomVector(Dirs * Bn * H, Rng);
    const float *BP = Bias ? B.data() : nullptr;
    const float *HP = Init ? H0.data() : nullptr,
                *CP = Init ? C0.data() : nullptr;
    // Default activations: f sigmoid, g and h tanh, per direction.
    std::vector<int64_t> Acts;
    for (int64_t D = 0; D < Dirs; ++D)
      Acts.insert(Acts.end(), {2, 0, 0, 1, 0, 0, 1, 0, 0});
    const size_t YN = T * Dirs * Bn * H, SN = Dirs * Bn * H;
    std::vector<float> RefY(YN), RefH(SN), RefC(SN), RefWork(5 * H),
        Work(CUVIL_LSTM_STEPS * GH);
    cuvil_k_recurrent_f32(X.data(), W.data(), R.data(), BP, nullptr, HP, CP,
                          nullptr, RefY.data(), RefH.data(), RefC.data(),
                          RefWork.data(), 2, T, Bn, I, H, Dirs, Rev, Layout,
                          Acts.data(), 0.0f, 0, 0);
    auto WP = packTransB(W, Dirs, GH, I), RP = packTransB(R, Dirs, GH, H);
    std::vector<float> Y(YN, NAN), Yh(SN, NAN), Yc(SN, NAN);
    cuvil_k_lstm_packed_f32(X.data(), WP.data(), RP.data(), BP, HP, CP,
                            Y.data(), Yh.data(), Yc.data(), Work.data(), T, Bn,
                            I, H, Dirs, Rev, Layout);
    EXPECT_TRUE(matches(Y, RefY, 1e-4f));
    EXPECT_TRUE(matches(Yh, RefH, 1e-4f));
    EXPECT_TRUE(matches(Yc, RefC, 1e-4f));
  }
}

} // namespace
