//===- convpool_test.cpp - 3-D conv/pool, ConvTranspose, MaxUnpool kernels ===//
//
// The kernels are compared with direct definitions written here in double
// precision: Conv and pooling as a gather over each output's window,
// ConvTranspose as a gather too (output o takes input i through tap t when
// i * stride + t * dil - pad == o), unlike the kernel's scatter.
//
//===----------------------------------------------------------------------===//
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using Dims = std::array<int64_t, 3>;

std::vector<float> randomData(size_t N, unsigned Seed) {
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<float> D(-1.0f, 1.0f);
  std::vector<float> V(N);
  for (float &X : V)
    X = D(Gen);
  return V;
}

int64_t vol(const Dims &D) { return D[0] * D[1] * D[2]; }

/// Flat index of (z, y, x) in plane P of [planes, D...].
int64_t at(int64_t P, const Dims &D, int64_t Z, int64_t Y, int64_t X) {
  return ((P * D[0] + Z) * D[1] + Y) * D[2] + X;
}

/// Calls Fn(Index, Batch, Channel, {z, y, x}) for every element of a dense
/// [N, M, Out...] tensor, in order.
template <typename F>
void forEachOutput(int64_t N, int64_t M, const Dims &Out, F Fn) {
  int64_t Idx = 0;
  for (int64_t B = 0; B < N; ++B)
    for (int64_t C = 0; C < M; ++C)
      for (int64_t Z = 0; Z < Out[0]; ++Z)
        for (int64_t Y = 0; Y < Out[1]; ++Y)
          for (int64_t X = 0; X < Out[2]; ++X)
            Fn(Idx++, B, C, Dims{Z, Y, X});
}

int64_t outExtent(int64_t In, int64_t K, int64_t S, int64_t Dl, int64_t P0,
                  int64_t P1) {
  return (In + P0 + P1 - ((K - 1) * Dl + 1)) / S + 1;
}

struct ConvCase {
  int64_t N, C, M, Group;
  Dims In, K, Stride, Dil, Pad;
};

class Conv3dTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv3dTest, MatchesDirectDefinition) {
  const ConvCase &P = GetParam();
  Dims Out;
  for (int D = 0; D < 3; ++D)
    Out[D] =
        outExtent(P.In[D], P.K[D], P.Stride[D], P.Dil[D], P.Pad[D], P.Pad[D]);
  int64_t Cg = P.C / P.Group, Mg = P.M / P.Group;
  auto X = randomData(P.N * P.C * vol(P.In), 1);
  auto W = randomData(P.M * Cg * vol(P.K), 2);
  auto B = randomData(P.M, 3);
  std::vector<float> Y(P.N * P.M * vol(Out));
  cuvil_k_conv3d_f32(X.data(), W.data(), B.data(), Y.data(), P.N, P.C, P.M,
                     P.In.data(), P.K.data(), Out.data(), P.Stride.data(),
                     P.Dil.data(), P.Pad.data(), P.Group, -INFINITY, INFINITY);
  forEachOutput(
      P.N, P.M, Out, [&](int64_t Idx, int64_t B0, int64_t M0, const Dims &O) {
        double Acc = B[M0];
        int64_t G = M0 / Mg;
        for (int64_t C0 = 0; C0 < Cg; ++C0)
          for (int64_t Kz = 0; Kz < P.K[0]; ++Kz)
            for (int64_t Ky = 0; Ky < P.K[1]; ++Ky)
              for (int64_t Kx = 0; Kx < P.K[2]; ++Kx) {
                Dims T{Kz, Ky, Kx}, I;
                bool Inside = true;
                for (int D = 0; D < 3; ++D) {
                  I[D] = O[D] * P.Stride[D] + T[D] * P.Dil[D] - P.Pad[D];
                  Inside = Inside && I[D] >= 0 && I[D] < P.In[D];
                }
                if (Inside)
                  Acc += double(X[at(B0 * P.C + G * Cg + C0, P.In, I[0], I[1],
                                     I[2])]) *
                         W[at(M0 * Cg + C0, P.K, Kz, Ky, Kx)];
              }
        EXPECT_NEAR(Y[Idx], Acc, 1e-4) << "at " << Idx;
      });
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Conv3dTest,
    ::testing::Values(
        ConvCase{
            2, 3, 4, 1, {3, 4, 5}, {2, 3, 4}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}},
        ConvCase{
            1, 4, 6, 2, {4, 5, 4}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 0, 1}},
        ConvCase{
            1, 3, 2, 1, {5, 5, 5}, {2, 2, 2}, {2, 2, 2}, {2, 2, 2}, {1, 1, 1}},
        ConvCase{1,
                 4,
                 4,
                 4,
                 {3, 6, 6},
                 {1, 3, 3},
                 {1, 1, 2},
                 {1, 2, 1},
                 {0, 2, 1}}));

class ConvTransposeTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvTransposeTest, MatchesGatherDefinition) {
  const ConvCase &P = GetParam();
  Dims Out;
  for (int D = 0; D < 3; ++D) // output_padding 1 on the innermost axis
    Out[D] = P.Stride[D] * (P.In[D] - 1) + (P.K[D] - 1) * P.Dil[D] + 1 -
             2 * P.Pad[D] + (D == 2);
  int64_t Cg = P.C / P.Group, Mg = P.M / P.Group;
  auto X = randomData(P.N * P.C * vol(P.In), 4);
  auto W = randomData(P.C * Mg * vol(P.K), 5);
  auto B = randomData(P.M, 6);
  std::vector<float> Y(P.N * P.M * vol(Out));
  cuvil_k_convtranspose3d_f32(X.data(), W.data(), B.data(), Y.data(), P.N, P.C,
                              P.M, P.In.data(), P.K.data(), Out.data(),
                              P.Stride.data(), P.Dil.data(), P.Pad.data(),
                              P.Group);
  // The input index feeding output o through tap t, or -1.
  auto Source = [&](int D, int64_t O, int64_t T) -> int64_t {
    int64_t U = O + P.Pad[D] - T * P.Dil[D];
    if (U < 0 || U % P.Stride[D])
      return -1;
    return U / P.Stride[D] < P.In[D] ? U / P.Stride[D] : -1;
  };
  forEachOutput(
      P.N, P.M, Out, [&](int64_t Idx, int64_t B0, int64_t M0, const Dims &O) {
        double Acc = B[M0];
        int64_t G = M0 / Mg;
        for (int64_t C0 = G * Cg; C0 < (G + 1) * Cg; ++C0)
          for (int64_t Kz = 0; Kz < P.K[0]; ++Kz)
            for (int64_t Ky = 0; Ky < P.K[1]; ++Ky)
              for (int64_t Kx = 0; Kx < P.K[2]; ++Kx) {
                int64_t Z = Source(0, O[0], Kz), Yy = Source(1, O[1], Ky),
                        Xx = Source(2, O[2], Kx);
                if (Z >= 0 && Yy >= 0 && Xx >= 0)
                  Acc += double(X[at(B0 * P.C + C0, P.In, Z, Yy, Xx)]) *
                         W[at(C0 * Mg + M0 - G * Mg, P.K, Kz, Ky, Kx)];
              }
        EXPECT_NEAR(Y[Idx], Acc, 1e-4) << "at " << Idx;
      });
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvTransposeTest,
    ::testing::Values(
        ConvCase{
            1, 1, 2, 1, {1, 3, 3}, {1, 3, 3}, {1, 3, 2}, {1, 1, 1}, {0, 1, 1}},
        ConvCase{
            2, 4, 6, 2, {3, 4, 5}, {3, 3, 2}, {1, 2, 3}, {1, 1, 2}, {0, 0, 1}},
        ConvCase{1,
                 3,
                 3,
                 3,
                 {2, 3, 3},
                 {2, 2, 2},
                 {2, 1, 2},
                 {2, 2, 1},
                 {1, 1, 0}}));

TEST(MaxPool3d, ValuesAndIndicesBothStorageOrders) {
  // One plane of 2 x 3 x 4 ramp values with one large element, pooled
  // 2 x 2 x 2 with stride 1, padding 1 in front on every axis.
  Dims In{2, 3, 4}, K{2, 2, 2}, S{1, 1, 1}, Dl{1, 1, 1}, Pad{1, 1, 1};
  Dims Out{2, 3, 4};
  std::vector<float> X(vol(In));
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = float(I);
  X[5] = 100.0f; // (z 0, y 1, x 1)
  for (int64_t Order = 0; Order < 2; ++Order) {
    std::vector<float> Y(vol(Out));
    std::vector<int64_t> Ind(vol(Out));
    cuvil_k_maxpool3d_f32(X.data(), Y.data(), Ind.data(), 1, In.data(),
                          Out.data(), K.data(), S.data(), Dl.data(), Pad.data(),
                          Order);
    size_t O = 0;
    for (int64_t z = 0; z < 2; ++z)
      for (int64_t y = 0; y < 3; ++y)
        for (int64_t x = 0; x < 4; ++x, ++O) {
          // Window [z-1, z] x [y-1, y] x [x-1, x]: the ramp peaks at
          // (z, y, x) unless the window holds (0, 1, 1).
          bool Big = z <= 1 && (y == 1 || y == 2) && (x == 1 || x == 2);
          int64_t Bz = Big ? 0 : z, By = Big ? 1 : y, Bx = Big ? 1 : x;
          EXPECT_EQ(Y[O], X[(Bz * 3 + By) * 4 + Bx]);
          EXPECT_EQ(Ind[O],
                    Order ? (Bx * 3 + By) * 2 + Bz : (Bz * 3 + By) * 4 + Bx);
        }
  }
}

TEST(MaxPool3d, Uint8AndInt8PaddingNeverWins) {
  Dims In{1, 2, 2}, K{1, 3, 3}, S{1, 1, 1}, Dl{1, 1, 1}, Pad{0, 1, 1};
  Dims Out{1, 2, 2};
  std::vector<uint8_t> Xu{0, 0, 0, 0}, Yu(4);
  std::vector<int64_t> Ind(4);
  cuvil_k_maxpool3d_u8(Xu.data(), Yu.data(), Ind.data(), 1, In.data(),
                       Out.data(), K.data(), S.data(), Dl.data(), Pad.data(),
                       0);
  for (int I = 0; I < 4; ++I) {
    EXPECT_EQ(Yu[I], 0);
    EXPECT_EQ(Ind[I], 0); // the first real element
  }
  std::vector<int8_t> Xi{-128, -5, -7, -128}, Yi(4);
  cuvil_k_maxpool3d_i8(Xi.data(), Yi.data(), nullptr, 1, In.data(), Out.data(),
                       K.data(), S.data(), Dl.data(), Pad.data(), 0);
  for (int I = 0; I < 4; ++I)
    EXPECT_EQ(Yi[I], -5);
}

TEST(AvgPool3d, CountIncludePad) {
  // 3 x 3 x 3 of ones, kernel 2, stride 2, padding 1 in front only.
  Dims In{3, 3, 3}, K{2, 2, 2}, S{2, 2, 2}, PB{1, 1, 1}, PE{0, 0, 0};
  Dims Out{2, 2, 2};
  std::vector<float> X(27, 1.0f), Y(8);
  cuvil_k_avgpool3d_f32(X.data(), Y.data(), 1, In.data(), Out.data(), K.data(),
                        S.data(), PB.data(), PE.data(), 0);
  for (float V : Y)
    EXPECT_FLOAT_EQ(V, 1.0f);
  cuvil_k_avgpool3d_f32(X.data(), Y.data(), 1, In.data(), Out.data(), K.data(),
                        S.data(), PB.data(), PE.data(), 1);
  // The corner window (0,0,0) covers 1 real of 8 padded positions; the
  // opposite one is clipped to the padded input, 8 real elements.
  EXPECT_FLOAT_EQ(Y[0], 1.0f / 8.0f);
  EXPECT_FLOAT_EQ(Y[7], 1.0f);
}

TEST(GlobalMaxPool, PerPlaneMaximum) {
  std::vector<float> X{1, -2, 3, -4, -1, -0.5f}, Y(2);
  cuvil_k_global_maxpool_f32(X.data(), Y.data(), 2, 3);
  EXPECT_EQ(Y[0], 3.0f);
  EXPECT_EQ(Y[1], -0.5f);
}

TEST(MaxUnpool, ScattersIntoALargerOutputAndIgnoresOutOfRange) {
  // Indices into a 2 x 2 x 2 input of MaxPool; the output is 2 x 3 x 3.
  const int64_t IdxDims[3] = {1, 2, 2}, Out[3] = {1, 3, 3};
  std::vector<float> X{1, 2, 3, 4}, Y(18, 9.0f);
  std::vector<int64_t> I{3, 4, 8, -1};
  cuvil_k_maxunpool_f32(X.data(), I.data(), Y.data(), 4, 2, IdxDims, Out);
  std::vector<float> Want(18, 0.0f);
  Want[4] = 1; // plane 0, (1, 1)
  Want[9] = 2; // plane 1, (0, 0)
  EXPECT_EQ(Y, Want);
}

} // namespace
