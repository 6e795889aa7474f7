//===- indexing_test.cpp - Gather/Scatter, TopK, OneHot, Trilu kernels ----===//
//
// Hand-computed expectations, and a brute-force reference for TopK.
//
//===----------------------------------------------------------------------===//
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace {

using Padded = std::array<int64_t, CUVIL_MAX_RANK>;

TEST(IndexingKernels, GatherElementsWrapsAndClamps) {
  // x [3, 3], axis 0, indices [2, 3]: -1 is row 2, 5 is clamped to row 2.
  std::vector<float> X = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<int64_t> Idx = {1, 2, 0, -1, 0, 5};
  std::vector<float> Y(6, -1);
  Padded S = {1, 1, 1, 1, 2, 3}, XS = {0, 0, 0, 0, 0, 1};
  cuvil_k_gather_elements_b32_i64(X.data(), Idx.data(), Y.data(), S.data(),
                                  XS.data(), 3, 3);
  EXPECT_EQ(Y, (std::vector<float>{4, 8, 3, 7, 2, 9}));
}

TEST(IndexingKernels, GatherElementsAlongInnerAxisWithSmallerIndices) {
  // x [2, 3] (int16), axis 1, indices [1, 2] of int32: y[0, j] = x[0, idx].
  std::vector<int16_t> X = {10, 11, 12, 13, 14, 15};
  std::vector<int32_t> Idx = {2, -3};
  std::vector<int16_t> Y(2);
  Padded S = {1, 1, 1, 1, 1, 2}, XS = {0, 0, 0, 0, 3, 0};
  cuvil_k_gather_elements_b16_i32(X.data(), Idx.data(), Y.data(), S.data(),
                                  XS.data(), 3, 1);
  EXPECT_EQ(Y, (std::vector<int16_t>{12, 10}));
}

TEST(IndexingKernels, ScatterElementsReducesAndSkipsBadIndices) {
  // data [1, 5] on axis 1; updates at 1, 1 (duplicate), -1, 9 (skipped).
  Padded S = {1, 1, 1, 1, 1, 4}, YS = {0, 0, 0, 0, 5, 0};
  std::vector<int64_t> Idx = {1, 1, -1, 9};
  std::vector<float> U = {1.5f, 2.5f, 10, 100};
  std::vector<float> Y = {1, 2, 3, 4, 5};
  cuvil_k_scatter_elements_none_b32_i64(Y.data(), Idx.data(), U.data(),
                                        S.data(), YS.data(), 5, 1);
  EXPECT_EQ(Y, (std::vector<float>{1, 2.5f, 3, 4, 10}));
  Y = {1, 2, 3, 4, 5};
  cuvil_k_scatter_elements_add_f32_i64(Y.data(), Idx.data(), U.data(), S.data(),
                                       YS.data(), 5, 1);
  EXPECT_EQ(Y, (std::vector<float>{1, 6, 3, 4, 15}));
  std::vector<int32_t> YI = {1, 2, 3, 4, 5}, UI = {7, 3, -2, 0};
  std::vector<int32_t> Idx32 = {1, 1, -1, -6};
  cuvil_k_scatter_elements_mul_i32_i32(YI.data(), Idx32.data(), UI.data(),
                                       S.data(), YS.data(), 5, 1);
  EXPECT_EQ(YI, (std::vector<int32_t>{1, 42, 3, 4, -10}));
  YI = {1, 2, 3, 4, 5};
  cuvil_k_scatter_elements_max_i32_i32(YI.data(), Idx32.data(), UI.data(),
                                       S.data(), YS.data(), 5, 1);
  EXPECT_EQ(YI, (std::vector<int32_t>{1, 7, 3, 4, 5}));
  YI = {1, 2, 3, 4, 5};
  cuvil_k_scatter_elements_min_i32_i32(YI.data(), Idx32.data(), UI.data(),
                                       S.data(), YS.data(), 5, 1);
  EXPECT_EQ(YI, (std::vector<int32_t>{1, 2, 3, 4, -2}));
}

TEST(IndexingKernels, GatherNDWithBatchDims) {
  // data [2, 2, 2], batch_dims 1, indices [2, 1]: y[b] = data[b, idx[b]].
  std::vector<int32_t> X = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<int64_t> Idx = {1, -2};
  std::vector<int32_t> Y(4, -1);
  std::vector<int64_t> Dims = {2}, Str = {8};
  cuvil_k_gather_nd_i64(X.data(), Idx.data(), Y.data(), 2, 1, 1, Dims.data(),
                        Str.data(), 8, 16);
  EXPECT_EQ(Y, (std::vector<int32_t>{2, 3, 4, 5}));
  // Full tuples, no batch: data [2, 2], indices [[0, 0], [1, 1], [7, -1]].
  std::vector<int64_t> Idx2 = {0, 0, 1, 1, 7, -1};
  std::vector<int64_t> Dims2 = {2, 2}, Str2 = {8, 4};
  std::vector<int32_t> Y2(3);
  cuvil_k_gather_nd_i64(X.data(), Idx2.data(), Y2.data(), 1, 3, 2, Dims2.data(),
                        Str2.data(), 4, 16);
  EXPECT_EQ(Y2, (std::vector<int32_t>{0, 3, 3}));
}

TEST(IndexingKernels, ScatterNDUpdatesSlices) {
  // data [3, 2]; tuples [[2], [0], [5]]: the last is out of range.
  std::vector<float> Y = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> Idx = {2, 0, 5};
  std::vector<float> U = {10, 20, 30, 40, 50, 60};
  std::vector<int64_t> Dims = {3}, Str = {2};
  cuvil_k_scatter_nd_none_b32(Y.data(), Idx.data(), U.data(), 3, 1, Dims.data(),
                              Str.data(), 2);
  EXPECT_EQ(Y, (std::vector<float>{30, 40, 3, 4, 10, 20}));
  Y = {1, 2, 3, 4, 5, 6};
  cuvil_k_scatter_nd_mul_f32(Y.data(), Idx.data(), U.data(), 3, 1, Dims.data(),
                             Str.data(), 2);
  EXPECT_EQ(Y, (std::vector<float>{30, 80, 3, 4, 50, 120}));
}

TEST(IndexingKernels, TopKMatchesAStableSort) {
  std::mt19937 Rng(7);
  std::uniform_int_distribution<int> Dist(0, 5); // many ties
  const int64_t Outer = 3, Len = 17, Inner = 2, K = 6;
  std::vector<float> X(Outer * Len * Inner);
  for (float &V : X)
    V = static_cast<float>(Dist(Rng));
  for (int64_t Largest = 0; Largest < 2; ++Largest) {
    std::vector<float> V(Outer * K * Inner);
    std::vector<int64_t> I(V.size());
    cuvil_k_topk_f32(X.data(), V.data(), I.data(), Outer, Len, Inner, K,
                     Largest);
    for (int64_t O = 0; O < Outer; ++O)
      for (int64_t In = 0; In < Inner; ++In) {
        std::vector<int64_t> Order(Len);
        std::iota(Order.begin(), Order.end(), 0);
        auto At = [&](int64_t J) { return X[(O * Len + J) * Inner + In]; };
        std::stable_sort(Order.begin(), Order.end(), [&](int64_t A, int64_t B) {
          return Largest ? At(A) > At(B) : At(A) < At(B);
        });
        for (int64_t J = 0; J < K; ++J) {
          EXPECT_EQ(I[(O * K + J) * Inner + In], Order[J]);
          EXPECT_EQ(V[(O * K + J) * Inner + In], At(Order[J]));
        }
      }
  }
}

TEST(IndexingKernels, OneHotWrapsNegativeAndBlanksOutOfRange) {
  std::vector<int64_t> Idx = {0, -1, 3, -4};
  std::vector<int32_t> Vals = {-1, 7}, Y(12);
  // axis last: [4] -> [4, 3].
  cuvil_k_onehot_i64_b32(Idx.data(), Vals.data(), Y.data(), 4, 3, 1);
  EXPECT_EQ(
      Y, (std::vector<int32_t>{7, -1, -1, -1, -1, 7, -1, -1, -1, -1, -1, -1}));
  // Float indices truncate, axis 0: [2] -> [3, 2].
  std::vector<float> FIdx = {1.7f, -0.5f};
  std::vector<uint8_t> BVals = {0, 1}, BY(6);
  cuvil_k_onehot_f32_b8(FIdx.data(), BVals.data(), BY.data(), 1, 3, 2);
  EXPECT_EQ(BY, (std::vector<uint8_t>{0, 1, 1, 0, 0, 0}));
}

TEST(IndexingKernels, TriluKeepsTheBand) {
  std::vector<int64_t> X(12);
  std::iota(X.begin(), X.end(), 1);
  std::vector<int64_t> Y(12);
  int64_t K = -1;
  cuvil_k_trilu_b64(X.data(), Y.data(), &K, 0, 1, 3, 4, /*upper=*/1);
  EXPECT_EQ(Y, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12}));
  cuvil_k_trilu_b64(X.data(), Y.data(), nullptr, 1, 1, 3, 4, /*upper=*/0);
  EXPECT_EQ(Y, (std::vector<int64_t>{1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12}));
  // In place, two matrices of [2, 3].
  std::vector<int64_t> Z(X);
  cuvil_k_trilu_b64(Z.data(), Z.data(), nullptr, 0, 2, 2, 3, 1);
  EXPECT_EQ(Z, (std::vector<int64_t>{1, 2, 3, 0, 5, 6, 7, 8, 9, 0, 11, 12}));
}

TEST(IndexingKernels, EyeAndReverseSequence) {
  std::vector<float> E(6, -1);
  cuvil_k_eye_b32(E.data(), 2, 3, 1, 0x3F800000);
  EXPECT_EQ(E, (std::vector<float>{0, 1, 0, 0, 0, 1}));
  // x [time 3, batch 2, inner 1] (time_axis 0): lengths 3 and 2.
  std::vector<int8_t> X = {0, 10, 1, 11, 2, 12}, Y(6);
  std::vector<int64_t> Lens = {3, 2};
  cuvil_k_reverse_sequence_b8(X.data(), Lens.data(), Y.data(), 2, 3, 1, 1, 2);
  EXPECT_EQ(Y, (std::vector<int8_t>{2, 11, 1, 10, 0, 12}));
}

TEST(IndexingKernels, CumSumReadsItsAxisAtRunTime) {
  // x [2, 3]: axis -1 from an int32 tensor, exclusive and reversed.
  std::vector<float> X = {1, 2, 3, 4, 5, 6}, Y(6);
  Padded S = {1, 1, 1, 1, 2, 3};
  int32_t Axis = -1;
  cuvil_k_cumsum_f32(X.data(), Y.data(), S.data(), 2, &Axis, 1, 0, 1, 1);
  EXPECT_EQ(Y, (std::vector<float>{5, 3, 0, 11, 6, 0}));
  // Axis 0 as a constant, in place on int64.
  std::vector<int64_t> Z = {1, 2, 3, 4, 5, 6};
  cuvil_k_cumsum_i64(Z.data(), Z.data(), S.data(), 2, nullptr, 0, 0, 0, 0);
  EXPECT_EQ(Z, (std::vector<int64_t>{1, 2, 3, 5, 7, 9}));
}

} // namespace
