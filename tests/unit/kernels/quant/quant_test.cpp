//===- quant_test.cpp - Quantization and integer product kernels ----------===//
//
// Hand-computed cases for the rounding and saturation rules of
// (De)QuantizeLinear, and integer matmul / convolution compared with direct
// int64 loops written here (int64 so that the reference cannot share an
// int32 accumulation mistake with the kernel).
//
//===----------------------------------------------------------------------===//
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

TEST(QuantKernels, QuantizeRoundsHalfToEvenAndSaturates) {
  // x / 2: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2, then + 128.
  std::vector<float> X = {1, 3, 5, -1, -3, 1000, -1000, 2};
  float Scale = 2;
  uint8_t Zp = 128;
  std::vector<uint8_t> Y(X.size());
  cuvil_k_quantize_f32(X.data(), &Scale, &Zp, Y.data(), X.size(), 1, 1,
                       CUVIL_Q_U8);
  EXPECT_EQ(Y, (std::vector<uint8_t>{128, 130, 130, 128, 126, 255, 0, 129}));

  std::vector<int8_t> Yi(X.size());
  cuvil_k_quantize_f32(X.data(), &Scale, nullptr, Yi.data(), X.size(), 1, 1,
                       CUVIL_Q_I8);
  EXPECT_EQ(Yi, (std::vector<int8_t>{0, 2, 2, 0, -2, 127, -128, 1}));
}

TEST(QuantKernels, QuantizeNonFiniteAndZeroPointBounds) {
  // NaN stores the lowest value; infinities and values just past the range
  // (less the zero point) saturate; ties next to the bounds still round to
  // even. int8 with zero point -10: the quotient's range is [-118, 137].
  const float Inf = std::numeric_limits<float>::infinity();
  const float NaN = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> X = {NaN,     Inf,     -Inf, 137.5f, 136.5f,
                          -118.5f, -117.5f, 3e9f, -3e9f};
  float Scale = 1;
  int8_t Zp = -10;
  std::vector<int8_t> Y(X.size());
  cuvil_k_quantize_f32(X.data(), &Scale, &Zp, Y.data(), X.size(), 1, 1,
                       CUVIL_Q_I8);
  EXPECT_EQ(Y, (std::vector<int8_t>{-128, 127, -128, 127, 126, -128, -128, 127,
                                    -128}));
  uint8_t Zu = 250; // uint8: the quotient's range is [-250, 5]
  std::vector<uint8_t> Yu(X.size());
  cuvil_k_quantize_f32(X.data(), &Scale, &Zu, Yu.data(), X.size(), 1, 1,
                       CUVIL_Q_U8);
  EXPECT_EQ(Yu, (std::vector<uint8_t>{0, 255, 0, 255, 255, 132, 132, 255, 0}));
}

TEST(QuantKernels, QuantizeAndDequantizePerAxis) {
  // x: [2, 3, 2], axis 1.
  std::vector<float> X(12);
  for (int I = 0; I < 12; ++I)
    X[I] = float(I) - 4;
  float Scale[3] = {1, 2, 4};
  int8_t Zp[3] = {0, 10, -10};
  std::vector<int8_t> Y(12);
  cuvil_k_quantize_f32(X.data(), Scale, Zp, Y.data(), 2, 3, 2, CUVIL_Q_I8);
  for (int O = 0; O < 2; ++O)
    for (int C = 0; C < 3; ++C)
      for (int J = 0; J < 2; ++J) {
        int I = (O * 3 + C) * 2 + J;
        EXPECT_EQ(Y[I], std::nearbyint(X[I] / Scale[C]) + Zp[C]) << I;
      }
  std::vector<float> Back(12);
  cuvil_k_dequantize_f32(Y.data(), Scale, Zp, Back.data(), 2, 3, 2, CUVIL_Q_I8);
  for (int O = 0; O < 2; ++O)
    for (int C = 0; C < 3; ++C)
      for (int J = 0; J < 2; ++J) {
        int I = (O * 3 + C) * 2 + J;
        EXPECT_EQ(Back[I], float(Y[I] - Zp[C]) * Scale[C]) << I;
      }
}

TEST(QuantKernels, DequantizeInt32) {
  std::vector<int32_t> X = {-2000000000, 0, 7};
  float Scale = 0.5f;
  std::vector<float> Y(3);
  cuvil_k_dequantize_f32(X.data(), &Scale, nullptr, Y.data(), 3, 1, 1,
                         CUVIL_Q_I32);
  EXPECT_EQ(Y, (std::vector<float>{-1e9f, 0, 3.5f}));
}

TEST(QuantKernels, DynamicQuantize) {
  // Range [-1, 2] (0 included) -> scale 3/255, zero point round(85) = 85.
  std::vector<float> X = {0, 2, -1, 1};
  std::vector<uint8_t> Y(4);
  float Scale;
  uint8_t Zp;
  cuvil_k_dynamic_quantize_f32_u8(X.data(), Y.data(), &Scale, &Zp, 4);
  EXPECT_EQ(Scale, 3.0f / 255.0f);
  EXPECT_EQ(Zp, 85);
  EXPECT_EQ(Y, (std::vector<uint8_t>{85, 255, 0, 170}));

  // All positive: min is 0, so the zero point is 0.
  std::vector<float> P = {1, 2, 3};
  cuvil_k_dynamic_quantize_f32_u8(P.data(), Y.data(), &Scale, &Zp, 3);
  EXPECT_EQ(Zp, 0);
  EXPECT_EQ(Y[2], 255);
}

TEST(QuantKernels, MatMulIntegerBatchedWithPerRowZeroPoints) {
  const int64_t M = 3, N = 4, K = 5, B = 2;
  std::mt19937 Rng(7);
  std::vector<uint8_t> A(B * M * K);
  std::vector<int8_t> Bm(K * N); // broadcast over the batch
  for (auto &V : A)
    V = uint8_t(Rng());
  for (auto &V : Bm)
    V = int8_t(Rng());
  uint8_t AZ[M] = {3, 200, 128};
  int8_t BZ = -5;
  int64_t Batch[4] = {1, 1, 1, B}, AStr[4] = {0, 0, 0, M * K},
          BStr[4] = {0, 0, 0, 0};
  std::vector<int32_t> Y(B * M * N);
  cuvil_k_matmul_integer(A.data(), Bm.data(), AZ, &BZ, Y.data(), M, N, K, Batch,
                         AStr, BStr, CUVIL_Q_U8, CUVIL_Q_I8, 1, 0);
  for (int64_t Bi = 0; Bi < B; ++Bi)
    for (int64_t I = 0; I < M; ++I)
      for (int64_t J = 0; J < N; ++J) {
        int64_t Acc = 0;
        for (int64_t P = 0; P < K; ++P)
          Acc += (int64_t(A[Bi * M * K + I * K + P]) - AZ[I]) *
                 (int64_t(Bm[P * N + J]) - BZ);
        EXPECT_EQ(Y[Bi * M * N + I * N + J], Acc);
      }
}

TEST(QuantKernels, QLinearMatMulRequantizes) {
  // 1x2 times 2x1: acc = (10-2)*(3-1) + (6-2)*(5-1) = 32; * 0.5*0.25/0.1.
  uint8_t A[2] = {10, 6}, B[2] = {3, 5}, AZ = 2, BZ = 1, YZ = 100;
  float AS = 0.5f, BS = 0.25f, YS = 0.1f;
  int64_t Batch[4] = {1, 1, 1, 1}, Zero[4] = {0, 0, 0, 0};
  uint8_t Y;
  cuvil_k_qlinear_matmul(A, &AS, &AZ, B, &BS, &BZ, &YS, &YZ, &Y, 1, 1, 2, Batch,
                         Zero, Zero, CUVIL_Q_U8, CUVIL_Q_U8, CUVIL_Q_U8, 0);
  EXPECT_EQ(Y, 100 + 40);
}

/// Direct int64 convolution with zero-point-valued padding.
std::vector<int64_t> refConv(const std::vector<int8_t> &X,
                             const std::vector<uint8_t> &W, int8_t XZ,
                             const std::vector<uint8_t> &WZ, const int64_t *G) {
  int64_t N = G[CUVIL_QCONV_N], C = G[CUVIL_QCONV_C], H = G[CUVIL_QCONV_H],
          Wd = G[CUVIL_QCONV_W], M = G[CUVIL_QCONV_M], KH = G[CUVIL_QCONV_KH],
          KW = G[CUVIL_QCONV_KW], OH = G[CUVIL_QCONV_OH],
          OW = G[CUVIL_QCONV_OW], Grp = G[CUVIL_QCONV_GROUP];
  std::vector<int64_t> Y(N * M * OH * OW);
  int64_t CG = C / Grp, MG = M / Grp;
  for (int64_t B = 0; B < N; ++B)
    for (int64_t O = 0; O < M; ++O)
      for (int64_t Oy = 0; Oy < OH; ++Oy)
        for (int64_t Ox = 0; Ox < OW; ++Ox) {
          int64_t Acc = 0;
          for (int64_t Ic = 0; Ic < CG; ++Ic)
            for (int64_t Ky = 0; Ky < KH; ++Ky)
              for (int64_t Kx = 0; Kx < KW; ++Kx) {
                int64_t Iy = Oy * G[CUVIL_QCONV_SH] + Ky * G[CUVIL_QCONV_DH] -
                             G[CUVIL_QCONV_PAD_TOP];
                int64_t Ix = Ox * G[CUVIL_QCONV_SW] + Kx * G[CUVIL_QCONV_DW] -
                             G[CUVIL_QCONV_PAD_LEFT];
                int64_t XV = XZ;
                if (Iy >= 0 && Iy < H && Ix >= 0 && Ix < Wd)
                  XV = X[((B * C + O / MG * CG + Ic) * H + Iy) * Wd + Ix];
                Acc +=
                    (XV - XZ) *
                    (int64_t(W[((O * CG + Ic) * KH + Ky) * KW + Kx]) - WZ[O]);
              }
          Y[((B * M + O) * OH + Oy) * OW + Ox] = Acc;
        }
  return Y;
}

TEST(QuantKernels, ConvIntegerGroupedStridedPadded) {
  int64_t G[CUVIL_QCONV_GEOM_SIZE];
  G[CUVIL_QCONV_N] = 2;
  G[CUVIL_QCONV_C] = 4;
  G[CUVIL_QCONV_H] = 5;
  G[CUVIL_QCONV_W] = 6;
  G[CUVIL_QCONV_M] = 6;
  G[CUVIL_QCONV_KH] = 3;
  G[CUVIL_QCONV_KW] = 2;
  G[CUVIL_QCONV_SH] = 2;
  G[CUVIL_QCONV_SW] = 1;
  G[CUVIL_QCONV_DH] = 1;
  G[CUVIL_QCONV_DW] = 2;
  G[CUVIL_QCONV_PAD_TOP] = 1;
  G[CUVIL_QCONV_PAD_LEFT] = 2;
  G[CUVIL_QCONV_GROUP] = 2;
  // Pads bottom 1, right 1: OH = (5 + 2 - 3) / 2 + 1, OW = 6 + 3 - 3 + 1.
  G[CUVIL_QCONV_OH] = 3;
  G[CUVIL_QCONV_OW] = 7;
  std::mt19937 Rng(11);
  std::vector<int8_t> X(2 * 4 * 5 * 6);
  std::vector<uint8_t> W(6 * 2 * 3 * 2), WZ(6);
  for (auto &V : X)
    V = int8_t(Rng());
  for (auto &V : W)
    V = uint8_t(Rng());
  for (auto &V : WZ)
    V = uint8_t(Rng());
  int8_t XZ = -7;
  std::vector<int32_t> Y(2 * 6 * 3 * 7);
  cuvil_k_conv_integer(X.data(), W.data(), &XZ, WZ.data(), Y.data(), G,
                       CUVIL_Q_I8, CUVIL_Q_U8, 1);
  std::vector<int64_t> Ref = refConv(X, W, XZ, WZ, G);
  for (size_t I = 0; I < Y.size(); ++I)
    EXPECT_EQ(Y[I], Ref[I]) << I;

  // The same convolution requantized, with a bias and per-channel scales.
  float XS = 0.02f, YS = 0.5f;
  std::vector<float> WS = {0.1f, 0.2f, 0.05f, 0.3f, 0.01f, 0.07f};
  std::vector<int32_t> Bias = {100, -200, 0, 5, 7, -9};
  int8_t YZ = 3;
  std::vector<int8_t> Q(Y.size());
  cuvil_k_qlinear_conv(X.data(), &XS, &XZ, W.data(), WS.data(), WZ.data(), &YS,
                       &YZ, Bias.data(), Q.data(), G, CUVIL_Q_I8, CUVIL_Q_U8,
                       CUVIL_Q_I8, 1);
  for (size_t I = 0; I < Q.size(); ++I) {
    int64_t O = (I / (3 * 7)) % 6;
    float Mult = XS * WS[O] / YS;
    float V = std::nearbyint(float(Ref[I] + Bias[O]) * Mult) + YZ;
    V = std::fmin(std::fmax(V, -128.0f), 127.0f);
    EXPECT_EQ(Q[I], int8_t(V)) << I;
  }
}

} // namespace
