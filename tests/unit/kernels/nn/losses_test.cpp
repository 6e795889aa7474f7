// Unit tests of the loss kernels and of the run-time-operand variants of
// Reduce, Clip, BatchNormalization and Dropout (kernels/nn/losses.c,
// kernels/reduce/reduce.c), against straightforward double-precision
// references or hand-computed values.
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

// x: [n, c, d] laid out densely; the NLL of every position, in double.
std::vector<double> refNll(const std::vector<float> &X,
                           const std::vector<int64_t> &T,
                           const std::vector<float> *W, int64_t N, int64_t C,
                           int64_t D, int64_t Ignore, std::vector<double> &Wt) {
  std::vector<double> L(N * D, 0.0);
  Wt.assign(N * D, 0.0);
  for (int64_t I = 0; I < N; ++I)
    for (int64_t J = 0; J < D; ++J) {
      int64_t K = T[I * D + J];
      if (K == Ignore)
        continue;
      double Wk = W ? (*W)[K] : 1.0;
      L[I * D + J] = -double(X[(I * C + K) * D + J]) * Wk;
      Wt[I * D + J] = Wk;
    }
  return L;
}

TEST(LossesNll, NoneSumMeanWithWeightAndIgnoreIndex) {
  const int64_t N = 2, C = 3, D = 4;
  std::vector<float> X(N * C * D), W = {0.5f, 2.0f, -1.5f};
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = std::sin(0.7 * I) * 3.0f;
  std::vector<int64_t> T = {0, 1, 2, 1, 2, 2, 0, 1};
  std::vector<double> Wt;
  auto L = refNll(X, T, &W, N, C, D, 2, Wt);
  std::vector<float> Y(N * D);
  cuvil_k_nll_loss_f32_i64(X.data(), T.data(), W.data(), Y.data(), N, C, D,
                           CUVIL_LOSS_NONE, 2, 1);
  double Sum = 0, WSum = 0;
  for (int64_t I = 0; I < N * D; ++I) {
    EXPECT_NEAR(Y[I], L[I], 1e-6) << I;
    Sum += L[I];
    WSum += Wt[I];
  }
  float S;
  cuvil_k_nll_loss_f32_i64(X.data(), T.data(), W.data(), &S, N, C, D,
                           CUVIL_LOSS_SUM, 2, 1);
  EXPECT_NEAR(S, Sum, 1e-5);
  cuvil_k_nll_loss_f32_i64(X.data(), T.data(), W.data(), &S, N, C, D,
                           CUVIL_LOSS_MEAN, 2, 1);
  EXPECT_NEAR(S, Sum / WSum, 1e-5);
}

TEST(LossesNll, InvalidTargetsAreIgnoredNotRead) {
  // Targets -1 and 7 lie outside [0, 3): no read, no contribution.
  std::vector<float> X = {1, 2, 3, 4, 5, 6};
  std::vector<int32_t> T = {-1, 7};
  float Y[2] = {9, 9};
  cuvil_k_nll_loss_f32_i32(X.data(), T.data(), nullptr, Y, 2, 3, 1,
                           CUVIL_LOSS_NONE, 0, 0);
  EXPECT_EQ(Y[0], 0.0f);
  EXPECT_EQ(Y[1], 0.0f);
  T = {2, 0};
  float M;
  cuvil_k_nll_loss_f32_i32(X.data(), T.data(), nullptr, &M, 2, 3, 1,
                           CUVIL_LOSS_MEAN, 0, 0);
  EXPECT_FLOAT_EQ(M, -(3.0f + 4.0f) / 2.0f);
}

TEST(LossesSce, MatchesLogSoftmaxThenNll) {
  const int64_t N = 3, C = 4, D = 2;
  std::vector<float> X(N * C * D);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = std::cos(1.3 * I) * 4.0f;
  std::vector<int64_t> T = {0, 3, 1, 1, 2, 0};
  std::vector<float> LP(N * C * D), Y(N * D);
  cuvil_k_sce_loss_f32_i64(X.data(), T.data(), nullptr, Y.data(), LP.data(), N,
                           C, D, CUVIL_LOSS_NONE, 1, 1);
  for (int64_t I = 0; I < N; ++I)
    for (int64_t J = 0; J < D; ++J) {
      double Mx = -INFINITY, Se = 0;
      for (int64_t K = 0; K < C; ++K)
        Mx = std::max(Mx, double(X[(I * C + K) * D + J]));
      for (int64_t K = 0; K < C; ++K)
        Se += std::exp(X[(I * C + K) * D + J] - Mx);
      for (int64_t K = 0; K < C; ++K)
        EXPECT_NEAR(LP[(I * C + K) * D + J],
                    X[(I * C + K) * D + J] - Mx - std::log(Se), 1e-5);
      int64_t K = T[I * D + J];
      double Want = K == 1 ? 0.0 : -LP[(I * C + K) * D + J];
      EXPECT_NEAR(Y[I * D + J], Want, 1e-6);
    }
  // Without the log_prob output the loss is the same.
  float S1, S2;
  cuvil_k_sce_loss_f32_i64(X.data(), T.data(), nullptr, &S1, nullptr, N, C, D,
                           CUVIL_LOSS_SUM, 1, 1);
  cuvil_k_nll_loss_f32_i64(LP.data(), T.data(), nullptr, &S2, N, C, D,
                           CUVIL_LOSS_SUM, 1, 1);
  EXPECT_NEAR(S1, S2, 1e-5);
}

TEST(LossesReduceRt, RuntimeAxesPickTheReducedDimensions) {
  // [3,2,2]: axis 1 and axis 2 give the same output shape [3,2] without
  // keepdims but different values.
  std::vector<float> X = {5, 1, 20, 2, 30, 1, 40, 2, 55, 1, 60, 2};
  const int64_t Shape[] = {3, 2, 2};
  float Y[6];
  int64_t Axes = 1;
  cuvil_k_reduce_rt_sum_f32(X.data(), Y, &Axes, 1, 3, Shape, 0, 6);
  const float A1[] = {25, 3, 70, 3, 115, 3};
  for (int I = 0; I < 6; ++I)
    EXPECT_EQ(Y[I], A1[I]) << I;
  Axes = -1;
  cuvil_k_reduce_rt_sum_f32(X.data(), Y, &Axes, 1, 3, Shape, 0, 6);
  const float A2[] = {6, 22, 31, 42, 56, 62};
  for (int I = 0; I < 6; ++I)
    EXPECT_EQ(Y[I], A2[I]) << I;
  // Axes {0, 2}: kept axis 1 between reduced ones.
  const int64_t Two[] = {2, 0};
  cuvil_k_reduce_rt_max_f32(X.data(), Y, Two, 2, 3, Shape, 0, 2);
  EXPECT_EQ(Y[0], 55);
  EXPECT_EQ(Y[1], 60);
  // Out of range or disagreeing with the compiled size: zeros, no overrun.
  Y[0] = Y[1] = 7;
  Axes = 3;
  cuvil_k_reduce_rt_sum_f32(X.data(), Y, &Axes, 1, 3, Shape, 0, 2);
  EXPECT_EQ(Y[0], 0);
  EXPECT_EQ(Y[1], 0);
}

TEST(LossesReduceRt, SixDimensionsAlternating) {
  // Rank 6 with alternating kept/reduced axes: three groups of each.
  const int64_t Shape[] = {2, 3, 2, 3, 2, 3};
  std::vector<int64_t> X(2 * 3 * 2 * 3 * 2 * 3);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = int64_t(I % 7) - 3;
  const int64_t Axes[] = {1, 3, 5};
  std::vector<int64_t> Y(8);
  cuvil_k_reduce_rt_sum_i64(X.data(), Y.data(), Axes, 3, 6, Shape, 0, 8);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c) {
        int64_t S = 0;
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k)
              S += X[((((a * 3 + i) * 2 + b) * 3 + j) * 2 + c) * 3 + k];
        EXPECT_EQ(Y[(a * 2 + b) * 2 + c], S);
      }
}

TEST(LossesClipRt, OptionalBoundsAndIntegers) {
  int8_t X[] = {-128, -5, 0, 5, 127};
  int8_t Lo = -4, Hi = 3, Y[5];
  cuvil_k_clip_rt_i8(X, &Lo, &Hi, Y, 5);
  const int8_t Want[] = {-4, -4, 0, 3, 3};
  for (int I = 0; I < 5; ++I)
    EXPECT_EQ(Y[I], Want[I]);
  cuvil_k_clip_rt_i8(X, nullptr, &Hi, Y, 5);
  EXPECT_EQ(Y[0], -128);
  EXPECT_EQ(Y[4], 3);
  float F[] = {NAN, -2.0f, 2.0f}, G[3], FLo = -1.0f;
  cuvil_k_clip_rt_f32(F, &FLo, nullptr, G, 3);
  EXPECT_TRUE(std::isnan(G[0]));
  EXPECT_EQ(G[1], -1.0f);
  EXPECT_EQ(G[2], 2.0f);
}

TEST(LossesShrink, HardAndSoft) {
  float X[] = {-2.0f, -1.0f, 0.0f, 1.0f, 2.0f}, Y[5];
  cuvil_k_shrink_f32(X, Y, 5, 1.5f, 1.5f);
  const float Soft[] = {-0.5f, 0, 0, 0, 0.5f};
  for (int I = 0; I < 5; ++I)
    EXPECT_EQ(Y[I], Soft[I]);
  cuvil_k_shrink_f32(X, Y, 5, 0.0f, 1.5f);
  const float Hard[] = {-2.0f, 0, 0, 0, 2.0f};
  for (int I = 0; I < 5; ++I)
    EXPECT_EQ(Y[I], Hard[I]);
}

TEST(LossesBatchNorm, TrainingUsesBatchStatistics) {
  const int64_t N = 2, C = 2, S = 3;
  std::vector<float> X(N * C * S), Y(N * C * S);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = float(I * I % 5) - 1.5f;
  float Scale[] = {1.5f, -0.5f}, Bias[] = {0.25f, 1.0f};
  float Mean[] = {0.1f, -0.2f}, Var[] = {1.0f, 2.0f}, RM[2], RV[2];
  cuvil_k_batch_norm_train_f32(X.data(), Scale, Bias, Mean, Var, Y.data(), RM,
                               RV, N, C, S, 1e-5f, 0.9f);
  for (int64_t Ch = 0; Ch < C; ++Ch) {
    double M = 0, V = 0;
    for (int64_t I = 0; I < N; ++I)
      for (int64_t K = 0; K < S; ++K)
        M += X[(I * C + Ch) * S + K];
    M /= N * S;
    for (int64_t I = 0; I < N; ++I)
      for (int64_t K = 0; K < S; ++K)
        V += std::pow(X[(I * C + Ch) * S + K] - M, 2);
    V /= N * S;
    EXPECT_NEAR(RM[Ch], Mean[Ch] * 0.9 + M * 0.1, 1e-6);
    EXPECT_NEAR(RV[Ch], Var[Ch] * 0.9 + V * 0.1, 1e-6);
    for (int64_t I = 0; I < N; ++I)
      for (int64_t K = 0; K < S; ++K) {
        size_t At = (I * C + Ch) * S + K;
        EXPECT_NEAR(Y[At],
                    (X[At] - M) / std::sqrt(V + 1e-5) * Scale[Ch] + Bias[Ch],
                    1e-5);
      }
  }
  // Inference with run-time operands: the given mean and variance.
  cuvil_k_batch_norm_f32(X.data(), Scale, Bias, Mean, Var, Y.data(), N, C, S,
                         1e-5f);
  EXPECT_NEAR(Y[1], (X[1] - 0.1) / std::sqrt(1.0 + 1e-5) * 1.5 + 0.25, 1e-5);
  EXPECT_NEAR(Y[4], (X[4] + 0.2) / std::sqrt(2.0 + 1e-5) * -0.5 + 1.0, 1e-5);
}

TEST(LossesDropout, RuntimeTrainingMode) {
  std::vector<float> X(1000, 2.0f), Y(1000);
  std::vector<uint8_t> M(1000);
  float R = 0.0f;
  uint8_t T = 1;
  cuvil_k_dropout_f32(X.data(), &R, &T, Y.data(), M.data(), 1000, 0);
  for (int I = 0; I < 1000; ++I)
    ASSERT_TRUE(Y[I] == 2.0f && M[I] == 1) << I;
  R = 0.25f;
  cuvil_k_dropout_f32(X.data(), &R, &T, Y.data(), M.data(), 1000, 3);
  int Kept = 0;
  for (int I = 0; I < 1000; ++I) {
    Kept += M[I];
    EXPECT_EQ(Y[I], M[I] ? 2.0f / 0.75f : 0.0f);
  }
  EXPECT_GT(Kept, 700);
  EXPECT_LT(Kept, 800);
  T = 0; // not training: identity whatever the ratio
  cuvil_k_dropout_f32(X.data(), &R, &T, Y.data(), nullptr, 1000, 3);
  EXPECT_EQ(Y[17], 2.0f);
}

} // namespace
