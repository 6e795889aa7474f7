//===- datamove_test.cpp - Strided copy, fill, gather, slice, range, cast -===//
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

namespace {

using Padded = std::array<int64_t, CUVIL_MAX_RANK>;

TEST(DataMoveKernels, StridedCopyWalksNegativeAndZeroStrides) {
  // x [2, 3]; y[i, j] = x[1 - i, 2 - j] broadcast twice along a new axis.
  std::vector<int32_t> X = {0, 1, 2, 3, 4, 5}, Y(12, -1);
  Padded S = {1, 1, 1, 2, 2, 3}, XS = {0, 0, 0, -3, 0, -1},
         YS = {0, 0, 0, 6, 3, 1};
  cuvil_k_strided_copy_b32(X.data() + 5, Y.data(), S.data(), XS.data(),
                           YS.data());
  EXPECT_EQ(Y, (std::vector<int32_t>{5, 4, 3, 5, 4, 3, 2, 1, 0, 2, 1, 0}));
}

TEST(DataMoveKernels, FillWritesTheLowBits) {
  std::vector<uint16_t> Y(5, 0);
  cuvil_k_fill_b16(Y.data(), 4, 0x12345);
  EXPECT_EQ(Y, (std::vector<uint16_t>{0x2345, 0x2345, 0x2345, 0x2345, 0}));
}

TEST(DataMoveKernels, GatherWrapsNegativeAndClampsBadIndices) {
  // x [2, 3, 2] gathered on axis 1.
  std::vector<int8_t> X(12);
  std::iota(X.begin(), X.end(), 0);
  std::vector<int32_t> Idx = {-1, 0, 7};
  std::vector<int8_t> Y(12, -1);
  cuvil_k_gather_i32(X.data(), Y.data(), Idx.data(), 2, 3, 3, 2);
  EXPECT_EQ(Y, (std::vector<int8_t>{4, 5, 0, 1, 4, 5, 10, 11, 6, 7, 10, 11}));
}

TEST(DataMoveKernels, SliceReadsItsParametersAtRunTime) {
  // x [3, 4]; axis -1 from 3 backwards by 2 (-> 3, 1), axis 0 from -2 (1, 2).
  std::vector<int64_t> X(12);
  std::iota(X.begin(), X.end(), 0);
  std::vector<int64_t> Y(4, -1);
  Padded In = {1, 1, 1, 1, 3, 4}, Out = {1, 1, 1, 1, 2, 2};
  std::vector<int64_t> Starts = {3, -2}, Axes = {-1, 0}, Steps = {-2, 1};
  cuvil_k_slice_b64_i64(X.data(), Y.data(), In.data(), Out.data(),
                        Starts.data(), Axes.data(), Steps.data(), 2, 2);
  EXPECT_EQ(Y, (std::vector<int64_t>{7, 5, 11, 9}));
}

TEST(DataMoveKernels, RangeAndCast) {
  float Start = 1.0f, Delta = -0.5f;
  std::vector<float> R(4);
  cuvil_k_range_f32(&Start, &Delta, R.data(), 4);
  EXPECT_EQ(R, (std::vector<float>{1.0f, 0.5f, 0.0f, -0.5f}));
  std::vector<uint8_t> B(4);
  cuvil_k_cast_f32_bool(R.data(), B.data(), 4);
  EXPECT_EQ(B, (std::vector<uint8_t>{1, 1, 0, 1}));
  std::vector<int64_t> I(4);
  cuvil_k_cast_f32_i64(R.data(), I.data(), 4);
  EXPECT_EQ(I, (std::vector<int64_t>{1, 0, 0, 0}));
  std::vector<int16_t> S = {-3, 300};
  std::vector<uint8_t> U(2);
  cuvil_k_cast_i16_u8(S.data(), U.data(), 2);
  EXPECT_EQ(U, (std::vector<uint8_t>{253, 44}));
}

} // namespace
