// The register-blocked INT8 convolution and matrix product (kernels/opt/
// qpacked.c) against the reference kernels, their oracle, bit for bit, on
// the same packed weights: 1x1, 3x3 and 1xN kernels, strides, dilations,
// padding, groups, channel counts that are not a multiple of the panel,
// reductions that are not a multiple of the step group or span several
// tiles, both activation types with nonzero zero points, per-channel
// requantization that saturates at both ends, and narrow clamps.
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace {

// w ([M][K], plain) packed as qint.h lays it out for panels of MR channels
// and groups of KR steps.
std::vector<int8_t> pack(const std::vector<int8_t> &W, int64_t M, int64_t K,
                         int64_t MR, int64_t KR) {
  const int64_t KP = (K + KR - 1) / KR * KR;
  std::vector<int8_t> P(static_cast<size_t>(M * KP), 0);
  for (int64_t M0 = 0; M0 < M; M0 += MR) {
    const int64_t MB = std::min(MR, M - M0);
    for (int64_t Mo = M0; Mo < M0 + MB; ++Mo)
      for (int64_t T = 0; T < K; ++T)
        P[M0 * KP + T / KR * MB * KR + (Mo - M0) * KR + T % KR] = W[Mo * K + T];
  }
  return P;
}

// The quantization of one operation of M channels and K steps per channel.
struct Quant {
  int64_t XType, XZp, YType, YZp, YLo, YHi;
};

struct Params {
  std::vector<int8_t> W; // plain, [M][K]
  std::vector<int8_t> Wp;
  std::vector<int32_t> Bias, WSum, Rq;
};

// Random weights (packed per group of M / G channels), bias with the
// zero-point correction folded in, wsum, and multipliers / shifts that put
// the results across the output range and past both ends of it.
Params makeParams(int64_t M, int64_t G, int64_t K, const Quant &Q,
                  std::mt19937 &Rng) {
  std::uniform_int_distribution<int> W8(-128, 127);
  std::uniform_int_distribution<int32_t> B(-4000, 4000);
  std::uniform_int_distribution<int32_t> Mul(1 << 30, 0x7fffffff);
  std::uniform_int_distribution<int> Jitter(-2, 2);
  std::vector<int8_t> W(static_cast<size_t>(M * K));
  for (int8_t &V : W)
    V = static_cast<int8_t>(W8(Rng));
  Params P;
  P.W = W;
  const int64_t MG = M / G;
  for (int64_t Gi = 0; Gi < G; ++Gi) {
    const std::vector<int8_t> Part(W.begin() + Gi * MG * K,
                                   W.begin() + (Gi + 1) * MG * K);
    const std::vector<int8_t> Packed =
        pack(Part, MG, K, cuvil_k_qpack_mr, cuvil_k_qpack_kr);
    P.Wp.insert(P.Wp.end(), Packed.begin(), Packed.end());
  }
  // A typical |acc| is 128 * 74 * sqrt(K) (uniform bytes); scale it to
  // some 100 output steps, give or take a factor of 4.
  const double Typical = 128.0 * 74.0 * std::sqrt(static_cast<double>(K));
  const int Base = 31 + static_cast<int>(std::log2(Typical / 100.0));
  for (int64_t Mo = 0; Mo < M; ++Mo) {
    int32_t Sum = 0;
    for (int64_t T = 0; T < K; ++T)
      Sum += W[Mo * K + T];
    P.WSum.push_back(Sum);
    P.Bias.push_back(B(Rng) - static_cast<int32_t>(Q.XZp) * Sum);
    P.Rq.push_back(Mo % 7 == 6 ? 0 : Mul(Rng));
    P.Rq.push_back(std::clamp(Base + Jitter(Rng), 1, 62));
  }
  return P;
}

// The packed kernels' bias: P's with their domain's correction for x_type
// activations, as cuvilc folds it (cuvil_qpack_corr, wrapping int32).
std::vector<int32_t> packedBias(const Params &P, int64_t XType) {
  const int32_t Corr = cuvil_qpack_corr(cuvil_k_qpack_x_unsigned, XType);
  std::vector<int32_t> B(P.Bias.size());
  for (size_t I = 0; I < B.size(); ++I)
    B[I] = static_cast<int32_t>(static_cast<uint32_t>(P.Bias[I]) +
                                static_cast<uint32_t>(Corr) *
                                    static_cast<uint32_t>(P.WSum[I]));
  return B;
}

std::vector<uint8_t> randomBytes(size_t N, std::mt19937 &Rng) {
  std::uniform_int_distribution<int> D(0, 255);
  std::vector<uint8_t> V(N);
  for (uint8_t &X : V)
    X = static_cast<uint8_t>(D(Rng));
  return V;
}

testing::AssertionResult same(const std::vector<uint8_t> &Got,
                              const std::vector<uint8_t> &Ref) {
  for (size_t I = 0; I < Ref.size(); ++I)
    if (Got[I] != Ref[I])
      return testing::AssertionFailure()
             << "at flat index " << I << ": got " << int(Got[I]) << ", want "
             << int(Ref[I]);
  return testing::AssertionSuccess();
}

struct ConvCase {
  int64_t N, C, H, W, M, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR, G;
};

int64_t outSize(int64_t In, int64_t K, int64_t S, int64_t D, int64_t P0,
                int64_t P1) {
  return (In + P0 + P1 - ((K - 1) * D + 1)) / S + 1;
}

void checkConv(const ConvCase &T, const Quant &Q) {
  SCOPED_TRACE(::testing::Message()
               << "n=" << T.N << " c=" << T.C << " h=" << T.H << " w=" << T.W
               << " m=" << T.M << " k=" << T.KH << "x" << T.KW << " s=" << T.SH
               << "," << T.SW << " d=" << T.DH << "," << T.DW << " pad=" << T.PT
               << "," << T.PL << "," << T.PB << "," << T.PR << " g=" << T.G
               << " x_type=" << Q.XType << " x_zp=" << Q.XZp
               << " y_type=" << Q.YType);
  std::mt19937 Rng(static_cast<unsigned>(T.C * 131 + T.M * 7 + T.KH * 3 + T.KW +
                                         Q.XType * 1000));
  const int64_t OH = outSize(T.H, T.KH, T.SH, T.DH, T.PT, T.PB);
  const int64_t OW = outSize(T.W, T.KW, T.SW, T.DW, T.PL, T.PR);
  ASSERT_GT(OH, 0);
  ASSERT_GT(OW, 0);
  const int64_t K = T.C / T.G * T.KH * T.KW;
  const Params P = makeParams(T.M, T.G, K, Q, Rng);
  const std::vector<int32_t> PB = packedBias(P, Q.XType);
  const std::vector<uint8_t> X =
      randomBytes(static_cast<size_t>(T.N * T.C * T.H * T.W), Rng);
  const int64_t Geom[CUVIL_QCONV_GEOM_SIZE] = {
      T.N, T.C,  T.H,  T.W,  T.M,  T.KH, T.KW, OH,
      OW,  T.SH, T.SW, T.DH, T.DW, T.PT, T.PL, T.G};
  const size_t YSize = static_cast<size_t>(T.N * T.M * OH * OW);
  std::vector<uint8_t> Ref(YSize, 0xAA), Got(YSize, 0x55);
  cuvil_k_qconv2d_s8(X.data(), P.Wp.data(), P.Bias.data(), P.WSum.data(),
                     P.Rq.data(), Ref.data(), Geom, cuvil_k_qpack_mr,
                     cuvil_k_qpack_kr, Q.XType, Q.XZp, Q.YType, Q.YZp, Q.YLo,
                     Q.YHi);
  cuvil_k_qconv2d_packed_s8(X.data(), P.Wp.data(), PB.data(), P.Rq.data(),
                            Got.data(), Geom, Q.XType, Q.XZp, Q.YType, Q.YZp,
                            Q.YLo, Q.YHi, 0, OH * OW);
  EXPECT_TRUE(same(Got, Ref));
  // Ranges of positions as --cores cuts them, and cut anywhere (inside a
  // row, shorter than a block), the last range first: each must compute
  // exactly its own positions of every plane.
  const int64_t Plane = OH * OW;
  for (const int64_t Parts : {int64_t(3), std::min<int64_t>(Plane, 7)}) {
    std::vector<uint8_t> Split(YSize, 0x33);
    for (int64_t I = Parts - 1; I >= 0; --I)
      cuvil_k_qconv2d_packed_s8(X.data(), P.Wp.data(), PB.data(), P.Rq.data(),
                                Split.data(), Geom, Q.XType, Q.XZp, Q.YType,
                                Q.YZp, Q.YLo, Q.YHi, Plane * I / Parts,
                                Plane * (I + 1) / Parts);
    EXPECT_TRUE(same(Split, Ref)) << Parts << " ranges of positions";
  }
}

// The quantizations every shape runs with: uint8 and int8 activations
// with nonzero zero points, both output types, full range and narrow
// clamps (a fused Relu / Clip).
const Quant Quants[] = {
    {CUVIL_Q_U8, 3, CUVIL_Q_U8, 128, 0, 255},
    {CUVIL_Q_U8, 200, CUVIL_Q_I8, -5, -128, 127},
    {CUVIL_Q_I8, -7, CUVIL_Q_I8, 10, 10, 100},
    {CUVIL_Q_I8, 100, CUVIL_Q_U8, 20, 20, 230},
};

// Convolution shapes: 1x1, 3x3, other kernels, reductions of several tiles
// of gathered activations (the accumulators wait in memory between tiles)
// with more channels than one chunk, and groups.
const ConvCase ConvCases[] = {
    {1, 16, 5, 5, 16, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {1, 5, 7, 9, 13, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {2, 33, 6, 11, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {1, 24, 9, 9, 9, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1},
    {1, 3, 1, 1, 70, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {1, 8, 30, 30, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    // Strided projections (gather_lanes: blocks across rows): ResNet-8's
    // two, K past a tile, a stride of 3 by 2, and end padding (the last
    // row and column read it: the general gathering).
    {1, 16, 32, 32, 32, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1},
    {2, 32, 16, 16, 64, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1},
    {1, 300, 7, 9, 20, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1},
    {1, 9, 13, 11, 10, 1, 1, 3, 2, 1, 1, 0, 0, 0, 0, 1},
    {1, 6, 8, 8, 12, 1, 1, 2, 2, 1, 1, 0, 0, 1, 1, 1},
    {1, 12, 10, 10, 18, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 3},
    // Small padded inputs copied with their padding (qpad_copy), blocks
    // across rows: DS-CNN's first layer (10x4, stride 2, 25x5 outputs), a
    // dilated window, and end padding alone.
    {1, 1, 49, 10, 64, 10, 4, 2, 2, 1, 1, 4, 1, 5, 1, 1},
    {1, 3, 9, 7, 10, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},
    {1, 4, 6, 6, 9, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1, 1},

    {1, 8, 8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 3, 17, 19, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
    {1, 16, 10, 20, 24, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {2, 7, 12, 13, 11, 3, 3, 1, 2, 2, 2, 2, 1, 2, 0, 1},
    {1, 4, 26, 26, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 5, 4, 3, 6, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 1},
    // Segments (gather_seg): blocks spanning 2 to 4 rows of an 8, 5 or 4
    // wide map and past SEG_RUNS (3 wide); the first and last segments of
    // the planes (read byte by byte); 5x5; 2-tap rows.
    {1, 6, 5, 5, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 6, 6, 4, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 4, 3, 3, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 6, 11, 14, 8, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1},
    {1, 6, 9, 16, 8, 5, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {1, 5, 8, 13, 7, 2, 2, 1, 1, 1, 1, 0, 1, 1, 0, 1},

    {1, 6, 9, 20, 12, 1, 7, 1, 1, 1, 1, 0, 3, 0, 3, 1},
    {1, 6, 20, 9, 12, 7, 1, 1, 1, 1, 1, 3, 0, 3, 0, 1},
    {1, 3, 23, 23, 17, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 1},
    {1, 2, 9, 31, 5, 2, 4, 1, 3, 1, 2, 1, 0, 0, 2, 1},

    {1, 130, 6, 7, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 300, 4, 5, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},

    {1, 8, 7, 7, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
    {2, 12, 5, 9, 18, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3},
    {1, 20, 9, 9, 40, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4},
};

TEST(QPackedConv, Shapes) {
  for (const ConvCase &T : ConvCases)
    for (const Quant &Q : Quants)
      checkConv(T, Q);
}

// The stride-1 convolution on the channel-interleaved image (opt/
// qdirect.h; plain loops in the libraries without it, whose
// cuvil_k_qpack_direct is 0): weights packed in its step order (channel
// blocks of 4, then the window), the scratch exactly cuvil_qdirect_scratch
// bytes (AddressSanitizer in the CPU variants) and dirty, against the
// reference kernel on the plain order.
void checkDirect(const ConvCase &T, const Quant &Q) {
  SCOPED_TRACE(::testing::Message()
               << "n=" << T.N << " c=" << T.C << " h=" << T.H << " w=" << T.W
               << " m=" << T.M << " k=" << T.KH << "x" << T.KW << " s=" << T.SH
               << "," << T.SW << " pad=" << T.PT << "," << T.PL << "," << T.PB
               << "," << T.PR << " x_type=" << Q.XType << " x_zp=" << Q.XZp
               << " y_type=" << Q.YType);
  std::mt19937 Rng(static_cast<unsigned>(T.C * 17 + T.M * 5 + T.KH * 3 + T.W +
                                         Q.XType * 100));
  const int64_t OH = outSize(T.H, T.KH, T.SH, 1, T.PT, T.PB);
  const int64_t OW = outSize(T.W, T.KW, T.SW, 1, T.PL, T.PR);
  const int64_t K = T.C * T.KH * T.KW, CB = (T.C + 3) / 4;
  const int64_t KD = CB * T.KH * T.KW * 4;
  const Params P = makeParams(T.M, 1, K, Q, Rng);
  const std::vector<int32_t> PB = packedBias(P, Q.XType);
  std::vector<int8_t> WD(static_cast<size_t>(T.M * KD), 0);
  for (int64_t Mo = 0; Mo < T.M; ++Mo)
    for (int64_t Ci = 0; Ci < T.C; ++Ci)
      for (int64_t Ky = 0; Ky < T.KH; ++Ky)
        for (int64_t Kx = 0; Kx < T.KW; ++Kx)
          WD[Mo * KD + ((Ci / 4 * T.KH + Ky) * T.KW + Kx) * 4 + Ci % 4] =
              P.W[Mo * K + (Ci * T.KH + Ky) * T.KW + Kx];
  const std::vector<int8_t> WDp =
      pack(WD, T.M, KD, cuvil_k_qpack_mr, cuvil_k_qpack_kr);
  const std::vector<uint8_t> X =
      randomBytes(static_cast<size_t>(T.N * T.C * T.H * T.W), Rng);
  const int64_t Geom[CUVIL_QCONV_GEOM_SIZE] = {
      T.N, T.C,  T.H,  T.W, T.M, T.KH, T.KW, OH,
      OW,  T.SH, T.SW, 1,   1,   T.PT, T.PL, 1};
  const size_t YSize = static_cast<size_t>(T.N * T.M * OH * OW);
  std::vector<uint8_t> Ref(YSize, 0xAA), Got(YSize, 0x55);
  std::vector<uint8_t> Scratch(static_cast<size_t>(cuvil_qdirect_scratch(Geom)),
                               0xCD);
  cuvil_k_qconv2d_s8(X.data(), P.Wp.data(), P.Bias.data(), P.WSum.data(),
                     P.Rq.data(), Ref.data(), Geom, cuvil_k_qpack_mr,
                     cuvil_k_qpack_kr, Q.XType, Q.XZp, Q.YType, Q.YZp, Q.YLo,
                     Q.YHi);
  cuvil_k_qconv2d_direct_s8(X.data(), WDp.data(), PB.data(), P.Rq.data(),
                            Scratch.data(), Got.data(), Geom, Q.XType, Q.XZp,
                            Q.YType, Q.YZp, Q.YLo, Q.YHi, 0, OH);
  EXPECT_TRUE(same(Got, Ref));
  // Split by rows as --cores does (up to 3 ranges, each with a scratch of
  // its own of exactly cuvil_qdirect_scratch_rows bytes), the last range
  // first: a store past a range's rows would spoil the finished next one.
  const int64_t Parts = std::min<int64_t>(3, OH);
  std::vector<uint8_t> Split(YSize, 0x33);
  for (int64_t P0 = Parts - 1; P0 >= 0; --P0) {
    const int64_t Y0 = OH * P0 / Parts, Y1 = OH * (P0 + 1) / Parts;
    std::vector<uint8_t> Part(
        static_cast<size_t>(cuvil_qdirect_scratch_rows(Geom, Y1 - Y0)), 0xCD);
    cuvil_k_qconv2d_direct_s8(X.data(), WDp.data(), PB.data(), P.Rq.data(),
                              Part.data(), Split.data(), Geom, Q.XType, Q.XZp,
                              Q.YType, Q.YZp, Q.YLo, Q.YHi, Y0, Y1);
  }
  EXPECT_TRUE(same(Split, Ref)) << "split into " << Parts << " row ranges";
}

TEST(QDirectConv, Shapes) {
  // Every case of QPackedConv.Shapes of one group and dilation 1, and:
  // grids shorter than a block, channels that are not a multiple of 4
  // (zero-weight channels of the last block), rows of 16 and more (the
  // vector interleaving) with a tail, asymmetric padding, wide kernels,
  // several batch items, a narrow last panel.
  for (const ConvCase &T : ConvCases)
    if (T.G == 1 && T.DH == 1 && T.DW == 1)
      for (const Quant &Q : Quants)
        checkDirect(T, Q);
  const ConvCase Cases[] = {
      {1, 6, 3, 3, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 7, 2, 2, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 3, 32, 35, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {2, 9, 11, 17, 20, 3, 3, 1, 1, 1, 1, 0, 1, 2, 0, 1},
      // Several bands (cuvil_qdirect_band), the last one shorter.
      {1, 64, 20, 20, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {2, 8, 40, 40, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
      {1, 13, 19, 9, 8, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1},
      // Strides: the phases of the image; even and odd sizes and
      // padding, rows of 2 x 16 input bytes and more (the vector
      // deinterleaving), a stride of 3, unequal strides, several bands.
      {1, 16, 32, 32, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
      {1, 8, 16, 16, 8, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 1},
      {1, 5, 49, 10, 9, 10, 4, 2, 2, 1, 1, 4, 1, 5, 1, 1},
      {1, 4, 70, 70, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
      {2, 6, 13, 22, 7, 5, 5, 3, 3, 1, 1, 2, 2, 2, 2, 1},
      {1, 7, 12, 21, 5, 2, 4, 1, 3, 1, 1, 1, 0, 0, 2, 1},
      {1, 20, 9, 9, 40, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
      {1, 3, 96, 96, 8, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 1},
  };
  for (const ConvCase &T : Cases)
    for (const Quant &Q : Quants)
      checkDirect(T, Q);
}

void checkGemm(int64_t M, int64_t N, int64_t K, const Quant &Q) {
  SCOPED_TRACE(::testing::Message() << "m=" << M << " n=" << N << " k=" << K
                                    << " a_type=" << Q.XType);
  std::mt19937 Rng(static_cast<unsigned>(M * 1009 + N * 31 + K));
  const Params P = makeParams(N, 1, K, Q, Rng);
  const std::vector<int32_t> PB = packedBias(P, Q.XType);
  const std::vector<uint8_t> A = randomBytes(static_cast<size_t>(M * K), Rng);
  std::vector<uint8_t> Ref(static_cast<size_t>(M * N), 0xAA),
      Got(static_cast<size_t>(M * N), 0x55);
  cuvil_k_qgemm_s8(A.data(), P.Wp.data(), P.Bias.data(), P.WSum.data(),
                   P.Rq.data(), Ref.data(), M, N, K, cuvil_k_qpack_mr,
                   cuvil_k_qpack_kr, Q.XType, Q.XZp, Q.YType, Q.YZp, Q.YLo,
                   Q.YHi);
  cuvil_k_qgemm_packed_s8(A.data(), P.Wp.data(), PB.data(), P.Rq.data(),
                          Got.data(), M, N, K, Q.XType, Q.XZp, Q.YType, Q.YZp,
                          Q.YLo, Q.YHi);
  EXPECT_TRUE(same(Got, Ref));
}

TEST(QPackedGemm, Shapes) {
  const int64_t Shapes[][3] = {{1, 10, 64},  {1, 1000, 33}, {5, 7, 3},
                               {12, 16, 16}, {13, 33, 17},  {25, 40, 300},
                               {3, 70, 700}, {7, 1, 1},     {1, 22, 301}};
  for (const auto &S : Shapes)
    for (const Quant &Q : Quants)
      checkGemm(S[0], S[1], S[2], Q);
}

// The extremes: every input and weight at the end of its range, so that
// the accumulators are as large as the types allow (|acc| near 2^24,
// scaled to outputs inside the range and past it).
TEST(QPackedGemm, Extremes) {
  for (const Quant &Q : Quants) {
    const int64_t M = 13, N = 9, K = 515;
    Params P;
    const uint8_t XByte = Q.XType == CUVIL_Q_U8 ? 255 : 0x80;
    std::vector<int8_t> W(static_cast<size_t>(N * K), -128);
    P.Wp = pack(W, N, K, cuvil_k_qpack_mr, cuvil_k_qpack_kr);
    for (int64_t J = 0; J < N; ++J) {
      P.WSum.push_back(-128 * static_cast<int32_t>(K));
      P.Bias.push_back(static_cast<int32_t>(J) * 1000);
      P.Rq.push_back(1 << 30);
      P.Rq.push_back(static_cast<int32_t>(44 + J));
    }
    const std::vector<int32_t> PB = packedBias(P, Q.XType);
    const std::vector<uint8_t> A(static_cast<size_t>(M * K), XByte);
    std::vector<uint8_t> Ref(static_cast<size_t>(M * N)), Got(Ref.size());
    cuvil_k_qgemm_s8(A.data(), P.Wp.data(), P.Bias.data(), P.WSum.data(),
                     P.Rq.data(), Ref.data(), M, N, K, cuvil_k_qpack_mr,
                     cuvil_k_qpack_kr, Q.XType, Q.XZp, Q.YType, Q.YZp, Q.YLo,
                     Q.YHi);
    cuvil_k_qgemm_packed_s8(A.data(), P.Wp.data(), PB.data(), P.Rq.data(),
                            Got.data(), M, N, K, Q.XType, Q.XZp, Q.YType, Q.YZp,
                            Q.YLo, Q.YHi);
    EXPECT_TRUE(same(Got, Ref));
  }
}

} // namespace
