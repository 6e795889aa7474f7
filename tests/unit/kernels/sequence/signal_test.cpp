//===- signal_test.cpp - Window, DFT, STFT, mel, Det and TfIdf kernels ----===//
//
// The signal kernels against straightforward double-precision references
// (windows, DFT in both directions with padding and cropping, STFT frames)
// and hand-computed values (determinants, n-gram counts).
//
//===----------------------------------------------------------------------===//
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

constexpr double Pi = 3.14159265358979323846;

using Cd = std::complex<double>;

/// Direct DFT of x (zero-padded or cut to n), bins 0..n_out-1.
std::vector<Cd> refDft(const std::vector<Cd> &X, int64_t N, int64_t NOut,
                       bool Inverse) {
  std::vector<Cd> Y(NOut);
  for (int64_t K = 0; K < NOut; ++K) {
    for (int64_t T = 0; T < N && T < static_cast<int64_t>(X.size()); ++T)
      Y[K] += X[T] * std::polar(1.0, (Inverse ? 2 : -2) * Pi * K * T / N);
    if (Inverse)
      Y[K] /= static_cast<double>(N);
  }
  return Y;
}

TEST(SignalKernels, CosineWindowsMatchTheFormula) {
  for (int64_t Periodic : {0, 1}) {
    const int64_t N = 11;
    std::vector<float> Y(N);
    cuvil_k_cosine_window_f32(Y.data(), N, Periodic, 0.42f, 0.5f, 0.08f);
    double L = Periodic ? N : N - 1;
    for (int64_t I = 0; I < N; ++I) {
      double W = 0.42 - 0.5 * std::cos(2 * Pi * I / L) +
                 0.08 * std::cos(4 * Pi * I / L);
      EXPECT_NEAR(Y[I], W, 2e-7) << "i=" << I << " periodic=" << Periodic;
    }
  }
  float One;
  cuvil_k_cosine_window_f32(&One, 1, 0, 0.5f, 0.5f, 0.0f);
  EXPECT_EQ(One, 0.0f); // symmetric length 1: N - 1 = 0, angle 0
}

TEST(SignalKernels, DftRealComplexInversePaddedAndCut) {
  std::mt19937 Rng(7);
  std::uniform_real_distribution<float> U(-1, 1);
  // x: [outer 2, n_in 6, inner 3, 2]; transform along n_in.
  const int64_t Outer = 2, NIn = 6, Inner = 3;
  std::vector<float> X(Outer * NIn * Inner * 2);
  for (float &V : X)
    V = U(Rng);
  struct Case {
    int64_t Complex, NFft, NOut, Inverse;
  } Cases[] = {{1, 6, 6, 0}, {1, 6, 6, 1}, {0, 6, 4, 0},
               {1, 8, 8, 0}, {1, 4, 4, 1}, {0, 7, 4, 0}};
  for (const Case &C : Cases) {
    int64_t XC = C.Complex ? 2 : 1;
    std::vector<float> Y(Outer * C.NOut * Inner * 2);
    cuvil_k_dft_f32(X.data(), Y.data(), Outer, NIn, Inner, C.Complex, C.NFft,
                    C.NOut, C.Inverse);
    for (int64_t O = 0; O < Outer; ++O)
      for (int64_t J = 0; J < Inner; ++J) {
        std::vector<Cd> Line;
        for (int64_t T = 0; T < NIn; ++T) {
          const float *P = &X[((O * NIn + T) * Inner + J) * XC];
          Line.emplace_back(P[0], C.Complex ? P[1] : 0.0f);
        }
        std::vector<Cd> R = refDft(Line, C.NFft, C.NOut, C.Inverse);
        for (int64_t K = 0; K < C.NOut; ++K) {
          const float *P = &Y[((O * C.NOut + K) * Inner + J) * 2];
          EXPECT_NEAR(P[0], R[K].real(), 1e-5) << "k=" << K;
          EXPECT_NEAR(P[1], R[K].imag(), 1e-5) << "k=" << K;
        }
      }
  }
}

TEST(SignalKernels, DftNyquistOfARealSignalIsExactlyReal) {
  std::vector<float> X = {3, 1, 4, 1, 5, 9, 2, 6};
  std::vector<float> Y(5 * 2);
  cuvil_k_dft_f32(X.data(), Y.data(), 1, 8, 1, 0, 8, 5, 0);
  EXPECT_EQ(Y[1], 0.0f);         // bin 0
  EXPECT_EQ(Y[4 * 2 + 1], 0.0f); // bin 4 = n/2
  EXPECT_EQ(Y[0], 31.0f);
}

TEST(SignalKernels, StftFramesAreWindowedDfts) {
  const int64_t Len = 20, Step = 3, FrameLen = 8, Frames = 5, Bins = 5;
  std::vector<float> X(Len), W(FrameLen);
  for (int64_t I = 0; I < Len; ++I)
    X[I] = static_cast<float>(std::sin(0.7 * I) + 0.1 * I);
  for (int64_t I = 0; I < FrameLen; ++I)
    W[I] = 0.5f - 0.5f * static_cast<float>(std::cos(2 * Pi * I / FrameLen));
  const int64_t StepV = Step, LenV = FrameLen;
  const int32_t Step32 = Step;
  for (bool WithWindow : {false, true}) {
    std::vector<float> Y(Frames * Bins * 2);
    // int64 scalars without a window, int32 with one.
    cuvil_k_stft_f32(X.data(), WithWindow ? (const void *)&Step32 : &StepV,
                     WithWindow ? nullptr : &LenV,
                     WithWindow ? W.data() : nullptr, Y.data(), 1, Len, 0,
                     Frames, Bins, FrameLen, !WithWindow);
    for (int64_t F = 0; F < Frames; ++F) {
      std::vector<Cd> Frame;
      for (int64_t T = 0; T < FrameLen; ++T)
        Frame.emplace_back(X[F * Step + T] * (WithWindow ? W[T] : 1.0f), 0);
      std::vector<Cd> R = refDft(Frame, FrameLen, Bins, false);
      for (int64_t K = 0; K < Bins; ++K) {
        EXPECT_NEAR(Y[(F * Bins + K) * 2], R[K].real(), 1e-5);
        EXPECT_NEAR(Y[(F * Bins + K) * 2 + 1], R[K].imag(), 1e-5);
      }
    }
  }
}

TEST(SignalKernels, MelFilterBankPeaksAtOne) {
  // The ONNX backend test's parameters: peaks only (every triangle is one
  // bin wide or narrower at 16-point resolution).
  const int32_t Mels = 8, Dft = 16, Rate = 8192;
  const float Lo = 0, Hi = 4096;
  std::vector<float> Y(9 * 8);
  cuvil_k_mel_weight_matrix_f32(&Mels, &Dft, &Rate, &Lo, &Hi, Y.data(), 9, 8,
                                0);
  const int PeakRow[8] = {0, 0, 1, 1, 2, 3, 4, 5};
  for (int64_t I = 0; I < 8; ++I)
    for (int64_t J = 0; J < 9; ++J)
      EXPECT_EQ(Y[J * 8 + I], J == PeakRow[I] ? 1.0f : 0.0f)
          << "bin " << J << " mel " << I;
}

TEST(SignalKernels, DeterminantsWithPivoting) {
  // [[0, 1], [2, 3]] needs a row swap; a singular matrix; a 3x3.
  std::vector<float> X = {0, 1, 2, 3};
  float D;
  cuvil_k_det_f32(X.data(), &D, 1, 2);
  EXPECT_FLOAT_EQ(D, -2.0f);
  std::vector<float> S = {1, 2, 2, 4};
  cuvil_k_det_f32(S.data(), &D, 1, 2);
  EXPECT_EQ(D, 0.0f);
  std::vector<float> B = {2, -1, 0, -1, 2, -1, 0, -1, 2, //
                          0, 0,  1, 0,  1, 0,  1, 0,  0};
  float Ds[2];
  cuvil_k_det_f32(B.data(), Ds, 2, 3);
  EXPECT_FLOAT_EQ(Ds[0], 4.0f);
  EXPECT_FLOAT_EQ(Ds[1], -1.0f);
  float Empty = 0;
  cuvil_k_det_f32(nullptr, &Empty, 1, 0);
  EXPECT_EQ(Empty, 1.0f);
}

TEST(SignalKernels, TfIdfCountsSkipGramsAndWeights) {
  // Pool: unigrams {2, 3, 5, 4}, bigrams {5, 6}, {7, 8}, {6, 7}.
  const std::vector<int64_t> Pool = {2, 3, 5, 4, 5, 6, 7, 8, 6, 7};
  const std::vector<int64_t> LevelStart = {0, 4, 10}, LevelFirst = {0, 4};
  const std::vector<int64_t> OutIndex = {0, 1, 2, 3, 4, 5, 6};
  const std::vector<int64_t> X = {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};
  std::vector<float> Y(7);
  cuvil_k_tfidf_i64(X.data(), Y.data(), 1, 12, 1, 2, 5, 0, LevelStart.data(),
                    LevelFirst.data(), Pool.data(), OutIndex.data(), 7,
                    nullptr);
  EXPECT_EQ(Y, (std::vector<float>{0, 3, 1, 0, 1, 3, 1}));
  // IDF with weights: weight where present.
  std::vector<int64_t> Bits(7);
  for (int I = 0; I < 7; ++I) {
    float W = 0.5f * (I + 1);
    uint32_t U;
    std::memcpy(&U, &W, 4);
    Bits[I] = U;
  }
  cuvil_k_tfidf_i64(X.data(), Y.data(), 1, 12, 1, 2, 5, 1, LevelStart.data(),
                    LevelFirst.data(), Pool.data(), OutIndex.data(), 7,
                    Bits.data());
  EXPECT_EQ(Y, (std::vector<float>{0, 1.0f, 1.5f, 0, 2.5f, 3.0f, 3.5f}));
  // Rows never share n-grams: [1 1 3 3 3 7] and [8 6 7 5 6 8], bigrams only.
  const std::vector<int32_t> X32(X.begin(), X.end());
  std::vector<float> Y2(14);
  cuvil_k_tfidf_i32(X32.data(), Y2.data(), 2, 6, 2, 2, 0, 0, LevelStart.data(),
                    LevelFirst.data(), Pool.data(), OutIndex.data(), 7,
                    nullptr);
  EXPECT_EQ(Y2, (std::vector<float>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1}));
}

} // namespace
