//===- norm_test.cpp - Normalization kernels ------------------------------===//
//
// LayerNormalization, InstanceNormalization, MeanVarianceNormalization, LRN
// and BatchNormalization (run-time parameters, training mode) against
// direct double-precision implementations written here from the ONNX
// operator definitions, plus a badly conditioned row (large mean, small
// spread) where a one-pass float variance would fail.
//
//===----------------------------------------------------------------------===//
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

std::vector<float> randomFloats(size_t N, float Lo, float Hi, unsigned Seed) {
  std::mt19937 Rng(Seed);
  std::uniform_real_distribution<float> D(Lo, Hi);
  std::vector<float> V(N);
  for (float &X : V)
    X = D(Rng);
  return V;
}

void expectNear(const std::vector<float> &Got, const std::vector<double> &Want,
                double Rtol = 1e-5, double Atol = 1e-6) {
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t I = 0; I < Got.size(); ++I)
    EXPECT_NEAR(Got[I], Want[I], Atol + Rtol * std::fabs(Want[I]))
        << "element " << I;
}

/// Mean and population variance of the elements X[Idx[k]].
std::pair<double, double> moments(const std::vector<float> &X,
                                  const std::vector<size_t> &Idx) {
  double S = 0;
  for (size_t I : Idx)
    S += X[I];
  double M = S / Idx.size(), Q = 0;
  for (size_t I : Idx)
    Q += (X[I] - M) * (X[I] - M);
  return {M, Q / Idx.size()};
}

std::vector<size_t> iota(size_t From, size_t Count) {
  std::vector<size_t> V(Count);
  for (size_t I = 0; I < Count; ++I)
    V[I] = From + I;
  return V;
}

TEST(NormKernels, LayerNormWithBroadcastParamsAndStatistics) {
  const int64_t Outer = 3, N = 20, SP = 5, BP = 20;
  const float Eps = 1e-3f;
  auto X = randomFloats(Outer * N, -4, 4, 1);
  auto W = randomFloats(SP, 0.5f, 2, 2), B = randomFloats(BP, -1, 1, 3);
  std::vector<float> Y(X.size()), Mean(Outer), Inv(Outer);
  cuvil_k_layer_norm_f32(X.data(), W.data(), B.data(), Y.data(), Mean.data(),
                         Inv.data(), Outer, N, SP, BP, Eps);
  std::vector<double> WantY(X.size()), WantMean(Outer), WantInv(Outer);
  for (int64_t O = 0; O < Outer; ++O) {
    auto [M, V] = moments(X, iota(O * N, N));
    WantMean[O] = M;
    WantInv[O] = 1 / std::sqrt(V + Eps);
    for (int64_t I = 0; I < N; ++I)
      WantY[O * N + I] =
          (X[O * N + I] - M) * WantInv[O] * W[I % SP] + B[I % BP];
  }
  expectNear(Y, WantY);
  expectNear(Mean, WantMean);
  expectNear(Inv, WantInv);
}

TEST(NormKernels, LayerNormWithoutBiasOrStatistics) {
  const int64_t Outer = 2, N = 7;
  auto X = randomFloats(Outer * N, -1, 1, 4);
  std::vector<float> W(N, 1.0f), Y(X.size());
  cuvil_k_layer_norm_f32(X.data(), W.data(), nullptr, Y.data(), nullptr,
                         nullptr, Outer, N, N, 1, 1e-5f);
  std::vector<double> Want(X.size());
  for (int64_t O = 0; O < Outer; ++O) {
    auto [M, V] = moments(X, iota(O * N, N));
    for (int64_t I = 0; I < N; ++I)
      Want[O * N + I] = (X[O * N + I] - M) / std::sqrt(V + 1e-5);
  }
  expectNear(Y, Want);
}

// A row with mean 1e4 and spread 1e-2: E[x^2] - E[x]^2 in float would be
// pure rounding noise (float spacing at 1e8 is 8), and so would x - mean
// with the mean rounded to float.
TEST(NormKernels, LayerNormIsStableForLargeMean) {
  const int64_t N = 1000;
  auto X = randomFloats(N, -0.01f, 0.01f, 5);
  for (float &V : X)
    V += 1e4f;
  std::vector<float> W(N, 1.0f), Y(N);
  cuvil_k_layer_norm_f32(X.data(), W.data(), nullptr, Y.data(), nullptr,
                         nullptr, 1, N, N, 1, 0.0f);
  auto [M, V] = moments(X, iota(0, N));
  std::vector<double> Want(N);
  for (int64_t I = 0; I < N; ++I)
    Want[I] = (X[I] - M) / std::sqrt(V);
  // The float mean alone is ~5e-4 off (float spacing at 1e4 is ~1e-3), a
  // tenth of the spread: the kernel must carry the mean's low part.
  expectNear(Y, Want, 1e-4, 1e-4);
}

TEST(NormKernels, InstanceNormPerChannel) {
  const int64_t B = 2, C = 3, S = 11;
  auto X = randomFloats(B * C * S, -3, 5, 6);
  auto Sc = randomFloats(C, -2, 2, 7), Bi = randomFloats(C, -1, 1, 8);
  std::vector<float> Y(X.size());
  cuvil_k_instance_norm_f32(X.data(), Sc.data(), Bi.data(), Y.data(), B, C, S,
                            1e-2f);
  std::vector<double> Want(X.size());
  for (int64_t R = 0; R < B * C; ++R) {
    auto [M, V] = moments(X, iota(R * S, S));
    for (int64_t I = 0; I < S; ++I)
      Want[R * S + I] =
          (X[R * S + I] - M) / std::sqrt(V + 1e-2) * Sc[R % C] + Bi[R % C];
  }
  expectNear(Y, Want);
  // In place gives the same.
  cuvil_k_instance_norm_f32(X.data(), Sc.data(), Bi.data(), X.data(), B, C, S,
                            1e-2f);
  expectNear(X, Want);
}

// MVN over axes {0, 2} of [2, 3, 4]: groups are the 3 channels, each with
// elements n * 12 + c * 4 + w (kept nest: c, stride 4; reduced: n, w).
TEST(NormKernels, MvnOverNonContiguousAxes) {
  auto X = randomFloats(24, -2, 2, 9);
  std::vector<float> Y(24);
  const int64_t OS[3] = {1, 1, 3}, OSt[3] = {0, 0, 4};
  const int64_t RS[3] = {1, 2, 4}, RSt[3] = {0, 12, 1};
  cuvil_k_mvn_f32(X.data(), Y.data(), OS, OSt, RS, RSt);
  std::vector<double> Want(24);
  for (size_t C = 0; C < 3; ++C) {
    std::vector<size_t> Idx;
    for (size_t N = 0; N < 2; ++N)
      for (size_t W = 0; W < 4; ++W)
        Idx.push_back(N * 12 + C * 4 + W);
    auto [M, V] = moments(X, Idx);
    for (size_t I : Idx)
      Want[I] = (X[I] - M) / (std::sqrt(V) + 1e-9);
  }
  expectNear(Y, Want);
}

TEST(NormKernels, LrnWindowsClipAtChannelEdges) {
  const int64_t B = 2, C = 6, S = 4;
  const float Alpha = 0.3f, Beta = 0.75f, Bias = 1.5f;
  auto X = randomFloats(B * C * S, -2, 2, 10);
  for (int64_t Size : {1, 2, 3, 4, 7}) {
    std::vector<float> Y(X.size());
    cuvil_k_lrn_f32(X.data(), Y.data(), B, C, S, Size, Alpha, Beta, Bias);
    std::vector<double> Want(X.size());
    const int64_t Before = (Size - 1) / 2, After = Size - 1 - Before;
    for (int64_t N = 0; N < B; ++N)
      for (int64_t Ch = 0; Ch < C; ++Ch)
        for (int64_t I = 0; I < S; ++I) {
          double Sq = 0;
          for (int64_t K = std::max<int64_t>(0, Ch - Before);
               K <= std::min<int64_t>(C - 1, Ch + After); ++K) {
            double V = X[(N * C + K) * S + I];
            Sq += V * V;
          }
          size_t At = (N * C + Ch) * S + I;
          Want[At] = X[At] / std::pow(Bias + Alpha / Size * Sq, Beta);
        }
    expectNear(Y, Want);
  }
}

TEST(NormKernels, BatchNormInferenceAndTraining) {
  const int64_t B = 2, C = 3, S = 5;
  const float Eps = 1e-2f, Momentum = 0.8f;
  auto X = randomFloats(B * C * S, -3, 3, 11);
  auto Sc = randomFloats(C, 0.5f, 2, 12), Bi = randomFloats(C, -1, 1, 13);
  auto Mean = randomFloats(C, -1, 1, 14), Var = randomFloats(C, 0.5f, 2, 15);
  std::vector<float> Y(X.size());
  cuvil_k_batch_norm_f32(X.data(), Sc.data(), Bi.data(), Mean.data(),
                         Var.data(), Y.data(), B, C, S, Eps);
  std::vector<double> Want(X.size());
  for (int64_t I = 0; I < B * C * S; ++I) {
    int64_t Ch = I / S % C;
    Want[I] = (X[I] - Mean[Ch]) / std::sqrt(Var[Ch] + Eps) * Sc[Ch] + Bi[Ch];
  }
  expectNear(Y, Want);

  std::vector<float> RM(C), RV(C);
  cuvil_k_batch_norm_train_f32(X.data(), Sc.data(), Bi.data(), Mean.data(),
                               Var.data(), Y.data(), RM.data(), RV.data(), B, C,
                               S, Eps, Momentum);
  std::vector<double> WantRM(C), WantRV(C);
  for (int64_t Ch = 0; Ch < C; ++Ch) {
    std::vector<size_t> Idx;
    for (int64_t N = 0; N < B; ++N)
      for (size_t I : iota((N * C + Ch) * S, S))
        Idx.push_back(I);
    auto [M, V] = moments(X, Idx);
    for (size_t I : Idx)
      Want[I] = (X[I] - M) / std::sqrt(V + Eps) * Sc[Ch] + Bi[Ch];
    WantRM[Ch] = Mean[Ch] * Momentum + M * (1 - Momentum);
    WantRV[Ch] = Var[Ch] * Momentum + V * (1 - Momentum);
  }
  expectNear(Y, Want);
  expectNear(RM, WantRM);
  expectNear(RV, WantRV);
}

TEST(NormKernels, LpNormAlongMiddleAxis) {
  const int64_t Outer = 2, N = 3, Inner = 4;
  auto X = randomFloats(Outer * N * Inner, -2, 2, 16);
  for (int64_t P : {1, 2}) {
    std::vector<float> Y(X.size());
    cuvil_k_lp_norm_f32(X.data(), Y.data(), Outer, N, Inner, P);
    std::vector<double> Want(X.size());
    for (int64_t O = 0; O < Outer; ++O)
      for (int64_t J = 0; J < Inner; ++J) {
        double Acc = 0;
        for (int64_t I = 0; I < N; ++I) {
          double V = X[(O * N + I) * Inner + J];
          Acc += P == 1 ? std::fabs(V) : V * V;
        }
        double Norm = P == 1 ? Acc : std::sqrt(Acc);
        for (int64_t I = 0; I < N; ++I)
          Want[(O * N + I) * Inner + J] = X[(O * N + I) * Inner + J] / Norm;
      }
    expectNear(Y, Want);
  }
}

} // namespace
