//===- reduce_test.cpp - Reduction, arg-reduction and broadcast kernels
//----===//
//
// The reduce kernels walk two strided loop nests (kept dimensions, reduced
// dimensions); these tests build the nests for axis sets that are not
// contiguous, alternate with kept axes, or are empty, and compare with a
// direct multi-index implementation written here.
//
//===----------------------------------------------------------------------===//
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

using Shape = std::vector<int64_t>;
using Nest = std::array<int64_t, CUVIL_REDUCE_RANK>;

struct Loops {
  Nest OutShape{}, OutStr{}, RedShape{}, RedStr{};
};

/// One loop per dimension (no merging), padded on the left: kept dimensions
/// in order, then the reduced ones.
Loops loopsFor(const Shape &S, const std::vector<bool> &Reduced) {
  std::vector<int64_t> Str(S.size(), 1);
  for (size_t I = S.size(); I-- > 1;)
    Str[I - 1] = Str[I] * S[I];
  std::vector<int64_t> KS, KT, RS, RT;
  for (size_t D = 0; D < S.size(); ++D) {
    (Reduced[D] ? RS : KS).push_back(S[D]);
    (Reduced[D] ? RT : KT).push_back(Str[D]);
  }
  EXPECT_LE(KS.size(), size_t(CUVIL_REDUCE_RANK));
  EXPECT_LE(RS.size(), size_t(CUVIL_REDUCE_RANK));
  Loops L;
  auto Fill = [](Nest &Sh, Nest &St, const std::vector<int64_t> &Src,
                 const std::vector<int64_t> &SrcStr) {
    size_t Pad = CUVIL_REDUCE_RANK - Src.size();
    for (size_t I = 0; I < CUVIL_REDUCE_RANK; ++I) {
      Sh[I] = I < Pad ? 1 : Src[I - Pad];
      St[I] = I < Pad ? 0 : SrcStr[I - Pad];
    }
  };
  Fill(L.OutShape, L.OutStr, KS, KT);
  Fill(L.RedShape, L.RedStr, RS, RT);
  return L;
}

/// Reduces x (dense, shape S) over the Reduced axes with Op; the result is
/// dense over the kept axes in order.
template <typename T, typename Init, typename Step>
std::vector<double> reference(const std::vector<T> &X, const Shape &S,
                              const std::vector<bool> &Reduced, Init I0,
                              Step F) {
  int64_t Kept = 1;
  for (size_t D = 0; D < S.size(); ++D)
    Kept *= Reduced[D] ? 1 : S[D];
  std::vector<double> Y(Kept, I0);
  std::vector<int64_t> Idx(S.size(), 0);
  for (size_t Flat = 0; Flat < X.size(); ++Flat) {
    int64_t O = 0;
    for (size_t D = 0; D < S.size(); ++D)
      if (!Reduced[D])
        O = O * S[D] + Idx[D];
    Y[O] = F(Y[O], static_cast<double>(X[Flat]));
    for (size_t D = S.size(); D-- > 0;) {
      if (++Idx[D] < S[D])
        break;
      Idx[D] = 0;
    }
  }
  return Y;
}

std::vector<float> randomFloats(size_t N, unsigned Seed) {
  std::mt19937 Rng(Seed);
  std::uniform_real_distribution<float> Dist(-2.0f, 2.0f);
  std::vector<float> V(N);
  for (float &E : V)
    E = Dist(Rng);
  return V;
}

size_t count(const Shape &S) {
  size_t N = 1;
  for (int64_t D : S)
    N *= static_cast<size_t>(D);
  return N;
}

TEST(ReduceKernels, SumOverNonContiguousAxes) {
  // [2, 3, 4] reduced over axes 0 and 2: the kept axis sits between them.
  Shape S{2, 3, 4};
  std::vector<bool> R{true, false, true};
  auto X = randomFloats(count(S), 1);
  Loops L = loopsFor(S, R);
  std::vector<float> Y(3);
  cuvil_k_reduce_sum_f32(X.data(), Y.data(), L.OutShape.data(), L.OutStr.data(),
                         L.RedShape.data(), L.RedStr.data());
  auto Want = reference(X, S, R, 0.0, [](double A, double V) { return A + V; });
  for (size_t I = 0; I < Y.size(); ++I)
    EXPECT_NEAR(Y[I], Want[I], 1e-5) << I;
}

TEST(ReduceKernels, AlternatingAxesUseEveryLoopLevel) {
  // Rank 6, reduced axes 1, 3, 5: three kept and three reduced loops.
  Shape S{2, 3, 2, 3, 2, 2};
  std::vector<bool> R{false, true, false, true, false, true};
  auto X = randomFloats(count(S), 2);
  Loops L = loopsFor(S, R);
  std::vector<float> Max(8), Min(8), Mean(8);
  cuvil_k_reduce_max_f32(X.data(), Max.data(), L.OutShape.data(),
                         L.OutStr.data(), L.RedShape.data(), L.RedStr.data());
  cuvil_k_reduce_min_f32(X.data(), Min.data(), L.OutShape.data(),
                         L.OutStr.data(), L.RedShape.data(), L.RedStr.data());
  cuvil_k_reduce_mean_f32(X.data(), Mean.data(), L.OutShape.data(),
                          L.OutStr.data(), L.RedShape.data(), L.RedStr.data());
  auto WMax = reference(X, S, R, -INFINITY,
                        [](double A, double V) { return std::max(A, V); });
  auto WMin = reference(X, S, R, INFINITY,
                        [](double A, double V) { return std::min(A, V); });
  auto WSum = reference(X, S, R, 0.0, [](double A, double V) { return A + V; });
  for (size_t I = 0; I < 8; ++I) {
    EXPECT_EQ(Max[I], static_cast<float>(WMax[I])) << I;
    EXPECT_EQ(Min[I], static_cast<float>(WMin[I])) << I;
    EXPECT_NEAR(Mean[I], WSum[I] / 18.0, 1e-5) << I;
  }
}

TEST(ReduceKernels, LeadingAxisWithMergedKeptLoop) {
  // [4, 5, 6] over axis 0, as the compiler merges it: one kept loop of 30
  // (stride 1) and one reduced loop of 4 (stride 30).
  Shape S{4, 5, 6};
  auto X = randomFloats(count(S), 3);
  Nest OS{1, 1, 30}, OT{0, 0, 1}, RS{1, 1, 4}, RT{0, 0, 30};
  std::vector<float> Y(30);
  cuvil_k_reduce_sum_square_f32(X.data(), Y.data(), OS.data(), OT.data(),
                                RS.data(), RT.data());
  auto Want = reference(X, S, {true, false, false}, 0.0,
                        [](double A, double V) { return A + V * V; });
  for (size_t I = 0; I < Y.size(); ++I)
    EXPECT_NEAR(Y[I], Want[I], 1e-5) << I;
}

TEST(ReduceKernels, IntegerProdAndSum) {
  Shape S{3, 4};
  std::vector<int64_t> X(12);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = static_cast<int64_t>(I % 5) - 2;
  Loops L = loopsFor(S, {false, true});
  std::vector<int64_t> P(3), Sum(3);
  cuvil_k_reduce_prod_i64(X.data(), P.data(), L.OutShape.data(),
                          L.OutStr.data(), L.RedShape.data(), L.RedStr.data());
  cuvil_k_reduce_sum_i64(X.data(), Sum.data(), L.OutShape.data(),
                         L.OutStr.data(), L.RedShape.data(), L.RedStr.data());
  for (int64_t R = 0; R < 3; ++R) {
    int64_t WP = 1, WS = 0;
    for (int64_t C = 0; C < 4; ++C) {
      WP *= X[R * 4 + C];
      WS += X[R * 4 + C];
    }
    EXPECT_EQ(P[R], WP);
    EXPECT_EQ(Sum[R], WS);
  }
}

TEST(ReduceKernels, LogSumExpDoesNotOverflow) {
  std::vector<float> X{1000.0f, 1000.0f, -1000.0f};
  Nest OS{1, 1, 1}, OT{0, 0, 0}, RS{1, 1, 3}, RT{0, 0, 1};
  float Y = 0;
  cuvil_k_reduce_log_sum_exp_f32(X.data(), &Y, OS.data(), OT.data(), RS.data(),
                                 RT.data());
  EXPECT_NEAR(Y, 1000.0 + std::log(2.0), 1e-3);
}

TEST(ReduceKernels, EmptyReductionGivesTheIdentity) {
  float X = 5.0f;
  Nest OS{1, 1, 2}, OT{0, 0, 0}, RS{1, 1, 0}, RT{0, 0, 1};
  std::vector<float> Y(2, 7.0f);
  cuvil_k_reduce_sum_f32(&X, Y.data(), OS.data(), OT.data(), RS.data(),
                         RT.data());
  EXPECT_EQ(Y[0], 0.0f);
  EXPECT_EQ(Y[1], 0.0f);
  cuvil_k_reduce_prod_f32(&X, Y.data(), OS.data(), OT.data(), RS.data(),
                          RT.data());
  EXPECT_EQ(Y[0], 1.0f);
  cuvil_k_reduce_max_f32(&X, Y.data(), OS.data(), OT.data(), RS.data(),
                         RT.data());
  EXPECT_EQ(Y[0], -std::numeric_limits<float>::infinity());
}

TEST(ArgKernels, TiesAndSelectLastIndex) {
  // [outer 2, n 3, inner 2].
  std::vector<float> X{1, 5, 3, 5, 3, 0, /**/ 2, 2, 2, 1, 0, 2};
  std::vector<int64_t> First(4), Last(4), Min(4);
  cuvil_k_argmax_f32(X.data(), First.data(), 2, 3, 2, 0);
  cuvil_k_argmax_f32(X.data(), Last.data(), 2, 3, 2, 1);
  cuvil_k_argmin_f32(X.data(), Min.data(), 2, 3, 2, 1);
  EXPECT_EQ(First, (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(Last, (std::vector<int64_t>{2, 1, 1, 2}));
  EXPECT_EQ(Min, (std::vector<int64_t>{0, 2, 2, 1}));
}

using Padded = std::array<int64_t, CUVIL_MAX_RANK>;

TEST(BinaryKernels, ModFollowsTheDivisorSignUnlessFmod) {
  std::vector<int32_t> A{-7, 7, -7, 7, 6}, B{3, -3, -3, 3, 3};
  Padded S{1, 1, 1, 1, 1, 5}, St{0, 0, 0, 0, 0, 1};
  std::vector<int32_t> Mod(5), Fmod(5);
  cuvil_k_mod_i32(A.data(), B.data(), Mod.data(), S.data(), St.data(),
                  St.data());
  cuvil_k_fmod_i32(A.data(), B.data(), Fmod.data(), S.data(), St.data(),
                   St.data());
  EXPECT_EQ(Mod, (std::vector<int32_t>{2, -2, -1, 1, 0}));
  EXPECT_EQ(Fmod, (std::vector<int32_t>{-1, 1, -1, 1, 0}));
  std::vector<float> FA{-4.5f, 4.5f}, FB{2.0f, -2.0f}, FY(2);
  Padded S2{1, 1, 1, 1, 1, 2};
  cuvil_k_fmod_f32(FA.data(), FB.data(), FY.data(), S2.data(), St.data(),
                   St.data());
  EXPECT_EQ(FY, (std::vector<float>{-0.5f, 0.5f}));
}

TEST(BinaryKernels, PowBroadcastsAndHandlesNegativeBases) {
  // x [2, 1] ^ y [3] -> [2, 3].
  std::vector<float> X{-2.0f, 4.0f}, Y{2.0f, 3.0f, 0.5f}, Out(6);
  Padded S{1, 1, 1, 1, 2, 3}, XS{0, 0, 0, 0, 1, 0}, YS{0, 0, 0, 0, 0, 1};
  cuvil_k_pow_f32(X.data(), Y.data(), Out.data(), S.data(), XS.data(),
                  YS.data());
  EXPECT_EQ(Out[0], 4.0f);
  EXPECT_EQ(Out[1], -8.0f);
  EXPECT_TRUE(std::isnan(Out[2]));
  EXPECT_EQ(Out[3], 16.0f);
  EXPECT_EQ(Out[4], 64.0f);
  EXPECT_NEAR(Out[5], 2.0f, 1e-6);
}

TEST(BinaryKernels, WhereAndComparisonsBroadcast) {
  std::vector<uint8_t> C{1, 0};
  std::vector<int64_t> A{10, 20, 30}, B{-1};
  std::vector<int64_t> Y(6);
  Padded S{1, 1, 1, 1, 2, 3}, CS{0, 0, 0, 0, 1, 0}, AS{0, 0, 0, 0, 0, 1},
      BS{0, 0, 0, 0, 0, 0};
  cuvil_k_where_b64(C.data(), A.data(), B.data(), Y.data(), S.data(), CS.data(),
                    AS.data(), BS.data());
  EXPECT_EQ(Y, (std::vector<int64_t>{10, 20, 30, -1, -1, -1}));
  std::vector<uint8_t> G(6);
  cuvil_k_greater_equal_i64(Y.data(), A.data(), G.data(), S.data(),
                            (Padded{0, 0, 0, 0, 3, 1}).data(), AS.data());
  EXPECT_EQ(G, (std::vector<uint8_t>{1, 1, 1, 0, 0, 0}));
}

TEST(BinaryKernels, Float16MaxMinAndFmodKeepExactBits) {
  // 1, -1, the smallest subnormal and its negative, 65504 (the largest).
  std::vector<uint16_t> A{0x3c00, 0x0001, 0x4580, 0xc580, 0x0003, 0x7bff};
  std::vector<uint16_t> B{0xbc00, 0x8001, 0x4000, 0x4000, 0x0002, 0x3c00};
  Padded S{1, 1, 1, 1, 1, 6}, St{0, 0, 0, 0, 0, 1};
  std::vector<uint16_t> Max(6), Min(6), Fmod(6);
  cuvil_k_max_f16(A.data(), B.data(), Max.data(), S.data(), St.data(),
                  St.data());
  cuvil_k_min_f16(A.data(), B.data(), Min.data(), S.data(), St.data(),
                  St.data());
  cuvil_k_fmod_f16(A.data(), B.data(), Fmod.data(), S.data(), St.data(),
                   St.data());
  EXPECT_EQ(Max[0], 0x3c00);
  EXPECT_EQ(Min[0], 0xbc00);
  EXPECT_EQ(Max[1], 0x0001);
  EXPECT_EQ(Min[1], 0x8001);
  // 5.5 fmod 2 = 1.5, -5.5 fmod 2 = -1.5, 3 fmod 2 subnormal units = 1,
  // 65504 fmod 1 = 0.
  EXPECT_EQ(Fmod[2], 0x3e00);
  EXPECT_EQ(Fmod[3], 0xbe00);
  EXPECT_EQ(Fmod[4], 0x0001);
  EXPECT_EQ(Fmod[5], 0x0000);
}

} // namespace
