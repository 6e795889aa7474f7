//===- opset18_test.cpp - Kernels of the ops new in opsets 18 to 20 -------===//
//
// Gelu (erf form and tanh approximation), Mish, GroupNormalization (scale
// per group and per channel), LpPool (p 1, 2 and 3, dilations, padding),
// dilated AveragePool (opset 19) and Col2Im (strides, dilations, pads;
// overlapping blocks sum) against double-precision implementations written here
// from the ONNX definitions.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

using namespace kernel_test;

namespace {

TEST(Opset18Kernels, GeluAndMishMatchTheirDefinitions) {
  std::vector<float> X = randomFloats(257, 18, -6.0f, 6.0f);
  X[0] = 0.0f;
  X[1] = -20.0f;
  X[2] = 20.0f;
  int64_t N = static_cast<int64_t>(X.size());
  std::vector<float> Erf(N), Tanh(N), Mish(N);
  cuvil_k_gelu_f32(X.data(), Erf.data(), N);
  cuvil_k_gelu_tanh_f32(X.data(), Tanh.data(), N);
  cuvil_k_mish_f32(X.data(), Mish.data(), N);
  std::vector<double> WantErf(N), WantTanh(N), WantMish(N);
  for (int64_t I = 0; I < N; ++I) {
    double V = X[I];
    WantErf[I] = 0.5 * V * (1.0 + std::erf(V / std::sqrt(2.0)));
    WantTanh[I] =
        0.5 * V *
        (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (V + 0.044715 * V * V * V)));
    WantMish[I] = V * std::tanh(std::log1p(std::exp(V)));
  }
  EXPECT_TRUE(allClose(Erf, WantErf, 1e-5, 1e-6));
  EXPECT_TRUE(allClose(Tanh, WantTanh, 1e-5, 1e-6));
  EXPECT_TRUE(allClose(Mish, WantMish, 1e-5, 1e-6));
  // The two Gelu forms differ by up to ~1e-3: the test tells them apart.
  double MaxDiff = 0;
  for (int64_t I = 0; I < N; ++I)
    MaxDiff = std::max(MaxDiff, std::abs(WantErf[I] - WantTanh[I]));
  EXPECT_GT(MaxDiff, 1e-4);
  // A NaN stays NaN (the erf it uses may return +-1 for it, the product
  // with x does not); infinities as 0.5 x (1 + erf(x / sqrt 2)) gives them.
  const float Special[] = {NAN, -INFINITY, INFINITY};
  float Out[3];
  cuvil_k_gelu_f32(Special, Out, 3);
  EXPECT_TRUE(std::isnan(Out[0]));
  EXPECT_TRUE(std::isnan(Out[1])); // -inf * 0
  EXPECT_EQ(Out[2], INFINITY);
}

std::vector<double> groupNormRef(const std::vector<float> &X,
                                 const std::vector<float> &Scale,
                                 const std::vector<float> &Bias, int64_t N,
                                 int64_t G, int64_t Cpg, int64_t S,
                                 bool PerChannel, double Eps) {
  std::vector<double> Y(X.size());
  int64_t Len = Cpg * S;
  for (int64_t B = 0; B < N * G; ++B) {
    double Mean = 0, Var = 0;
    for (int64_t I = 0; I < Len; ++I)
      Mean += X[B * Len + I];
    Mean /= Len;
    for (int64_t I = 0; I < Len; ++I)
      Var += (X[B * Len + I] - Mean) * (X[B * Len + I] - Mean);
    Var /= Len;
    int64_t Grp = B % G;
    for (int64_t I = 0; I < Len; ++I) {
      int64_t P = PerChannel ? Grp * Cpg + I / S : Grp;
      Y[B * Len + I] =
          (X[B * Len + I] - Mean) / std::sqrt(Var + Eps) * Scale[P] + Bias[P];
    }
  }
  return Y;
}

TEST(Opset18Kernels, GroupNormPerGroupAndPerChannel) {
  const int64_t N = 2, G = 3, Cpg = 2, S = 10;
  std::vector<float> X = randomFloats(N * G * Cpg * S, 7, -2.0f, 3.0f);
  for (bool PerChannel : {false, true}) {
    int64_t P = PerChannel ? G * Cpg : G;
    std::vector<float> Scale = randomFloats(P, 8, 0.5f, 1.5f);
    std::vector<float> Bias = randomFloats(P, 9, -1.0f, 1.0f);
    std::vector<float> Y(X.size());
    cuvil_k_group_norm_f32(X.data(), Scale.data(), Bias.data(), Y.data(), N, G,
                           Cpg, S, PerChannel, 1e-5f);
    EXPECT_TRUE(allClose(
        Y, groupNormRef(X, Scale, Bias, N, G, Cpg, S, PerChannel, 1e-5), 1e-5,
        1e-5))
        << "per_channel " << PerChannel;
    // In place gives the same.
    std::vector<float> Z = X;
    cuvil_k_group_norm_f32(Z.data(), Scale.data(), Bias.data(), Z.data(), N, G,
                           Cpg, S, PerChannel, 1e-5f);
    EXPECT_EQ(Z, Y);
  }
}

TEST(Opset18Kernels, LpPoolWithDilationsAndPadding) {
  // One plane of 5 x 6, kernel 2 x 3, strides 1 x 2, dilations 2 x 1,
  // pads 1 (top) and 1 (left): out 4 x 3 (with 1 bottom / right pad).
  const int64_t H = 5, W = 6, KH = 2, KW = 3, SH = 1, SW = 2, DH = 2, DW = 1;
  const int64_t PT = 1, PL = 1, OH = (H + 2 - ((KH - 1) * DH + 1)) / SH + 1,
                OW = (W + 2 - KW) / SW + 1;
  std::vector<float> X = randomFloats(H * W, 11, -2.0f, 2.0f);
  for (int64_t P : {1, 2, 3}) {
    std::vector<float> Y(OH * OW);
    const int64_t In[3] = {1, H, W}, Out[3] = {1, OH, OW}, K[3] = {1, KH, KW},
                  St[3] = {1, SH, SW}, Dil[3] = {1, DH, DW},
                  Pad[3] = {0, PT, PL};
    cuvil_k_lppool3d_f32(X.data(), Y.data(), 1, In, Out, K, St, Dil, Pad, P);
    std::vector<double> Want(OH * OW);
    for (int64_t Oy = 0; Oy < OH; ++Oy)
      for (int64_t Ox = 0; Ox < OW; ++Ox) {
        double Sum = 0;
        for (int64_t Ky = 0; Ky < KH; ++Ky)
          for (int64_t Kx = 0; Kx < KW; ++Kx) {
            int64_t Iy = Oy * SH - PT + Ky * DH, Ix = Ox * SW - PL + Kx * DW;
            if (Iy >= 0 && Iy < H && Ix >= 0 && Ix < W)
              Sum += std::pow(std::abs(double(X[Iy * W + Ix])), double(P));
          }
        Want[Oy * OW + Ox] = std::pow(Sum, 1.0 / P);
      }
    EXPECT_TRUE(allClose(Y, Want, 1e-5, 1e-6)) << "p " << P;
  }
}

TEST(Opset18Kernels, DilatedAveragePoolCountsTaps) {
  // 5 x 7, kernel 2 x 3, dilations 2 x 2, strides 1 x 2, pads 1/1 begin,
  // 0/2 end: out 4 x 3.
  const int64_t H = 5, W = 7, OH = 4, OW = 3, KH = 2, KW = 3, D = 2, SW = 2;
  const int64_t PT = 1, PL = 1, PB = 0, PR = 2;
  std::vector<float> X = randomFloats(H * W, 13);
  for (int64_t Include : {0, 1}) {
    std::vector<float> Y(OH * OW);
    const int64_t In[3] = {1, H, W}, Out[3] = {1, OH, OW}, K[3] = {1, KH, KW},
                  St[3] = {1, 1, SW}, Dil[3] = {1, D, D}, Pb[3] = {0, PT, PL},
                  Pe[3] = {0, PB, PR};
    cuvil_k_avgpool3d_dilated_f32(X.data(), Y.data(), 1, In, Out, K, St, Dil,
                                  Pb, Pe, Include);
    std::vector<double> Want(OH * OW);
    for (int64_t Oy = 0; Oy < OH; ++Oy)
      for (int64_t Ox = 0; Ox < OW; ++Ox) {
        double Sum = 0;
        int Count = 0, Padded = 0;
        for (int64_t Ky = 0; Ky < KH; ++Ky)
          for (int64_t Kx = 0; Kx < KW; ++Kx) {
            int64_t Iy = Oy - PT + Ky * D, Ix = Ox * SW - PL + Kx * D;
            Padded += Iy < H + PB && Ix < W + PR;
            if (Iy >= 0 && Iy < H && Ix >= 0 && Ix < W) {
              Sum += X[Iy * W + Ix];
              ++Count;
            }
          }
        Want[Oy * OW + Ox] = Sum / (Include ? Padded : Count);
      }
    EXPECT_TRUE(allClose(Y, Want, 1e-5, 1e-6))
        << "count_include_pad " << Include;
  }
}

TEST(Opset18Kernels, Col2ImSumsOverlappingBlocks) {
  // Image 5 x 5, block 2 x 2, strides 2 x 1, dilations 2 x 1, pads 1 top and
  // bottom: 3 x 4 blocks; two channels.
  const int64_t C = 2, IH = 5, IW = 5, KH = 2, KW = 2, SH = 2, SW = 1, DH = 2,
                DW = 1, PT = 1, BH = 3, BW = 4;
  std::vector<float> X = randomFloats(C * KH * KW * BH * BW, 12);
  std::vector<float> Y(C * IH * IW, 123.0f); // the kernel zeroes it
  const int64_t Img[3] = {1, IH, IW}, K[3] = {1, KH, KW}, Blk[3] = {1, BH, BW},
                St[3] = {1, SH, SW}, Dil[3] = {1, DH, DW}, Pad[3] = {0, PT, 0};
  cuvil_k_col2im_f32(X.data(), Y.data(), 1, C, Img, K, Blk, St, Dil, Pad);
  std::vector<double> Want(Y.size(), 0.0);
  for (int64_t Ch = 0; Ch < C; ++Ch)
    for (int64_t Ty = 0; Ty < KH; ++Ty)
      for (int64_t Tx = 0; Tx < KW; ++Tx)
        for (int64_t By = 0; By < BH; ++By)
          for (int64_t Bx = 0; Bx < BW; ++Bx) {
            int64_t Iy = By * SH - PT + Ty * DH, Ix = Bx * SW + Tx * DW;
            if (Iy < 0 || Iy >= IH || Ix < 0 || Ix >= IW)
              continue;
            int64_t Row = (Ch * KH + Ty) * KW + Tx;
            Want[(Ch * IH + Iy) * IW + Ix] += X[Row * BH * BW + By * BW + Bx];
          }
  EXPECT_TRUE(allClose(Y, Want, 1e-6, 1e-6));
}

} // namespace
