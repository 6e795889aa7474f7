// The optimised INT8 depthwise kernel (cuvil_k_qdwconv2d_tiled_s8) against
// the reference kernel, bit for bit, over shapes that exercise every path:
// the specialised 3x3 and 5x5 kernels at stride 1 and 2, the general one
// (1x3, 3x1, dilation, stride 3), borders with symmetric and asymmetric
// pads, widths and heights that are not a multiple of the tile, column
// chunks of wide maps, uint8 and int8 activations and outputs with nonzero
// zero points, per-channel requantization, saturation and narrow clamps.
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

struct DwCase {
  int64_t N, C, H, W, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR;
};

struct QuantCase {
  int64_t XType, XZp, YType, YZp, YLo, YHi;
  int32_t BiasRange; // bias drawn from [-BiasRange, BiasRange]
  int64_t ShiftLo, ShiftHi;
  int32_t FixedMult = 0; // every channel's multiplier, when not 0
};

int64_t outSize(int64_t In, int64_t K, int64_t S, int64_t D, int64_t P0,
                int64_t P1) {
  return (In + P0 + P1 - ((K - 1) * D + 1)) / S + 1;
}

void check(const DwCase &T, const QuantCase &Q, unsigned Seed = 1) {
  SCOPED_TRACE(::testing::Message()
               << "c=" << T.C << " h=" << T.H << " w=" << T.W << " k=" << T.KH
               << "x" << T.KW << " s=" << T.SH << "," << T.SW << " d=" << T.DH
               << "," << T.DW << " pads=" << T.PT << "," << T.PL << "," << T.PB
               << "," << T.PR << " x_type=" << Q.XType
               << " y_type=" << Q.YType);
  std::mt19937 Rng(Seed * 7919u + static_cast<unsigned>(T.C * 131 + T.H * 17 +
                                                        T.W + T.KH * 3));
  const int64_t OH = outSize(T.H, T.KH, T.SH, T.DH, T.PT, T.PB);
  const int64_t OW = outSize(T.W, T.KW, T.SW, T.DW, T.PL, T.PR);
  ASSERT_GT(OH, 0);
  ASSERT_GT(OW, 0);
  std::uniform_int_distribution<int> Byte(0, 255), Weight(-128, 127);
  std::vector<uint8_t> X(T.N * T.C * T.H * T.W);
  for (uint8_t &V : X)
    V = static_cast<uint8_t>(Byte(Rng));
  const int64_t Taps = T.KH * T.KW;
  std::vector<int8_t> Wt(T.C * Taps);
  for (int8_t &V : Wt)
    V = static_cast<int8_t>(Weight(Rng));
  std::uniform_int_distribution<int32_t> Bias(-Q.BiasRange, Q.BiasRange);
  std::vector<int32_t> B(T.C), WSum(T.C, 0), Rq(2 * T.C);
  std::uniform_int_distribution<int32_t> Mult(1 << 30, 0x7fffffff);
  std::uniform_int_distribution<int64_t> Shift(Q.ShiftLo, Q.ShiftHi);
  for (int64_t C = 0; C < T.C; ++C) {
    for (int64_t K = 0; K < Taps; ++K)
      WSum[C] += Wt[C * Taps + K];
    // As cuvilc folds it: bias - x_zp * wsum.
    B[C] = Bias(Rng) - static_cast<int32_t>(Q.XZp) * WSum[C];
    Rq[2 * C] = Q.FixedMult ? Q.FixedMult : C % 7 == 3 ? 0 : Mult(Rng);
    Rq[2 * C + 1] = static_cast<int32_t>(Shift(Rng));
  }
  // In the order of the CUVIL_QCONV_* indices; group = c = m.
  const int64_t Geom[] = {T.N, T.C,  T.H,  T.W,  T.C,  T.KH, T.KW, OH,
                          OW,  T.SH, T.SW, T.DH, T.DW, T.PT, T.PL, T.C};
  static_assert(sizeof Geom / sizeof Geom[0] == CUVIL_QCONV_GEOM_SIZE);
  std::vector<uint8_t> Ref(T.N * T.C * OH * OW, 0x5a), Got(Ref.size(), 0xa5);
  cuvil_k_qdwconv2d_s8(X.data(), Wt.data(), B.data(), WSum.data(), Rq.data(),
                       Ref.data(), Geom, Q.XType, Q.XZp, Q.YType, Q.YZp, Q.YLo,
                       Q.YHi);
  cuvil_k_qdwconv2d_tiled_s8(X.data(), Wt.data(), B.data(), WSum.data(),
                             Rq.data(), Got.data(), Geom, Q.XType, Q.XZp,
                             Q.YType, Q.YZp, Q.YLo, Q.YHi);
  for (size_t I = 0; I < Ref.size(); ++I)
    ASSERT_EQ(int(Got[I]), int(Ref[I])) << "at flat index " << I;
}

// uint8 in and out; int8 in and out; the mixed pairs; all with nonzero
// zero points, shifts that keep the outputs mostly in range.
const QuantCase U8{CUVIL_Q_U8, 131, CUVIL_Q_U8, 7, 0, 255, 40000, 38, 44};
const QuantCase I8{CUVIL_Q_I8, -9, CUVIL_Q_I8, -5, -128, 127, 40000, 38, 44};
const QuantCase U8toI8{CUVIL_Q_U8, 3, CUVIL_Q_I8, 11, -128, 127, 20000, 37, 43};
const QuantCase I8toU8{CUVIL_Q_I8, 100, CUVIL_Q_U8, 128, 0, 255, 20000, 37, 43};
const QuantCase Quants[] = {U8, I8, U8toI8, I8toU8};

std::vector<DwCase> shapes() {
  std::vector<DwCase> S;
  const int64_t Sizes[] = {1, 2, 5, 7, 25, 49};
  const int64_t Channels[] = {1, 3, 8, 17};
  int I = 0;
  for (int64_t H : Sizes)
    for (int64_t W : Sizes) {
      const int64_t C = Channels[I++ % 4];
      S.push_back({1, C, H, W, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1});
      S.push_back({1, C, H, W, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1});
      S.push_back({1, C, H, W, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2});
      S.push_back({1, C, H, W, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2});
    }
  return S;
}

TEST(QDepthwiseTest, CommonKernelsAllSizes) {
  for (const DwCase &T : shapes())
    for (const QuantCase &Q : Quants)
      check(T, Q);
}

TEST(QDepthwiseTest, AsymmetricPadsAndNoPads) {
  for (const QuantCase &Q : Quants) {
    check({1, 8, 7, 9, 3, 3, 1, 1, 1, 1, 0, 1, 1, 0}, Q); // TF "same" at s1
    check({1, 8, 8, 8, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1}, Q); // TF "same" at s2
    check({1, 3, 12, 11, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1}, Q);
    check({1, 5, 9, 9, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0}, Q);
    check({1, 5, 10, 13, 5, 5, 2, 2, 1, 1, 1, 2, 2, 1}, Q);
    check({1, 4, 6, 6, 3, 3, 1, 1, 1, 1, 2, 3, 2, 3}, Q); // pad wider than k
  }
}

TEST(QDepthwiseTest, GeneralShapes) {
  for (const QuantCase &Q : Quants) {
    check({1, 3, 7, 9, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1}, Q);
    check({1, 3, 9, 7, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0}, Q);
    check({1, 8, 25, 5, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2}, Q); // dilation 2
    check({1, 8, 13, 14, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1}, Q);
    check({1, 3, 11, 10, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1}, Q); // stride 3
    check({1, 3, 11, 10, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1}, Q); // mixed stride
    check({1, 2, 9, 9, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3}, Q);
    check({1, 17, 5, 5, 5, 5, 2, 2, 1, 1, 0, 0, 0, 0}, Q);
  }
}

TEST(QDepthwiseTest, NetworkLayers) {
  // DS-CNN (25x5 maps, 64 channels), MobileNet layers, batch 2, maps
  // wide enough to be cut into column chunks, and bands.
  for (const QuantCase &Q : Quants) {
    check({1, 64, 25, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, Q);
    check({2, 17, 14, 14, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1}, Q);
    check({1, 3, 112, 112, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, Q);
    check({1, 3, 112, 112, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1}, Q);
    check({1, 2, 30, 700, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2}, Q);
    check({1, 2, 30, 1500, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2}, Q);
    // RV64's three-row form takes 200-wide maps in bands of 18 rows: the
    // last band of 1 or 2 rows overlaps the one before.
    check({1, 2, 19, 200, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, Q);
    check({1, 2, 20, 200, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, Q);
    // Tall narrow maps, which it walks transposed, with uneven pads.
    check({1, 3, 30, 7, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1}, Q);
    check({1, 2, 40, 6, 5, 5, 1, 1, 1, 1, 2, 1, 2, 2}, Q);
  }
}

TEST(QDepthwiseTest, SaturationAndNarrowClamps) {
  // Small shifts: most outputs saturate; a narrow clamp (a fused Relu6,
  // say); shifts at both ends of the fast range and past it (53, 54, and
  // the smallest, where the reference kernel takes over).
  const DwCase Shapes[] = {{1, 8, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                           {1, 17, 10, 10, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0},
                           {1, 3, 7, 7, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2}};
  const QuantCase Cases[] = {
      {CUVIL_Q_U8, 128, CUVIL_Q_U8, 0, 0, 255, 100000, 30, 34},
      {CUVIL_Q_I8, 0, CUVIL_Q_I8, 0, -128, 127, 100000, 30, 34},
      {CUVIL_Q_U8, 77, CUVIL_Q_U8, 20, 20, 26, 40000, 38, 44},
      {CUVIL_Q_I8, -100, CUVIL_Q_I8, -128, -128, -122, 40000, 38, 44},
      {CUVIL_Q_U8, 1, CUVIL_Q_U8, 255, 0, 255, 1 << 30, 50, 53},
      {CUVIL_Q_I8, 5, CUVIL_Q_I8, -128, -128, 127, 1 << 30, 1, 8},
      {CUVIL_Q_U8, 9, CUVIL_Q_I8, 127, -128, 127, 1 << 30, 53, 62}};
  for (const DwCase &T : Shapes)
    for (const QuantCase &Q : Cases)
      check(T, Q);
}

TEST(QDepthwiseTest, TiesRoundHalfToEven) {
  // Multiplier 2^30 and shift 38: y = rhe(acc / 256), so one output in
  // 256 is an exact tie (some eight per channel here), and the rounding of
  // ties decides it.
  const DwCase T{1, 3, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  for (const QuantCase &Q : Quants) {
    QuantCase Tie = Q;
    Tie.ShiftLo = Tie.ShiftHi = 38;
    Tie.FixedMult = 1 << 30;
    check(T, Tie, 3);
  }
}

} // namespace
