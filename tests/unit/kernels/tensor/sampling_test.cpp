//===- sampling_test.cpp - Resize, GridSample and RoiAlign kernels
//---------===//
//
// The conformance suite covers the common forms; these cover what it does
// not: antialiasing, the axes subset, tf_crop_and_resize extrapolation,
// reflection far outside the grid and adaptive RoiAlign sampling. Expected
// values are worked out by hand from the ONNX definitions.
//
//===----------------------------------------------------------------------===//
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

namespace {

int64_t bits(double D) {
  int64_t B;
  std::memcpy(&B, &D, 8);
  return B;
}

/// A 1-D resize of X to Out elements with a compile-time scale.
std::vector<float> resize1d(const std::vector<float> &X, int64_t Out,
                            double Scale, int64_t Mode, int64_t Ctm,
                            int64_t Antialias, const float *Roi = nullptr,
                            float Extrapolation = 0) {
  std::vector<float> Y(Out, -1);
  int64_t In = static_cast<int64_t>(X.size()), Slot = 0, S = bits(Scale);
  cuvil_k_resize_f32(X.data(), Roi, nullptr, Y.data(), 1, &In, &Out, &Slot, 1,
                     &S, Mode, Ctm, CUVIL_RESIZE_ROUND_PREFER_FLOOR, -0.75f, 0,
                     Antialias, Extrapolation);
  return Y;
}

TEST(SamplingKernels, AntialiasedLinearDownscaleUsesAWiderTriangle) {
  // Scale 1/2: a triangle of half-width 2 input pixels, normalised; the
  // tap left of the input reads the edge.
  std::vector<float> X(8);
  std::iota(X.begin(), X.end(), 0.0f);
  auto Y = resize1d(X, 4, 0.5, CUVIL_RESIZE_LINEAR, CUVIL_RESIZE_HALF_PIXEL, 1);
  EXPECT_FLOAT_EQ(Y[0], 0.625f);
  EXPECT_FLOAT_EQ(Y[1], 2.5f);
  EXPECT_FLOAT_EQ(Y[3], 6.375f);
  // Without antialias, plain linear interpolation at 2o + 0.5.
  auto Z = resize1d(X, 4, 0.5, CUVIL_RESIZE_LINEAR, CUVIL_RESIZE_HALF_PIXEL, 0);
  EXPECT_EQ(Z, (std::vector<float>{0.5f, 2.5f, 4.5f, 6.5f}));
}

TEST(SamplingKernels, TfCropAndResizeExtrapolatesOutsideTheInput) {
  std::vector<float> X = {0, 10, 20, 30};
  const float Roi[2] = {0.5f, 1.5f};
  // Source coordinates 1.5, 3 and 4.5 (outside).
  auto Y = resize1d(X, 3, 1, CUVIL_RESIZE_LINEAR,
                    CUVIL_RESIZE_TF_CROP_AND_RESIZE, 0, Roi, -7.0f);
  EXPECT_EQ(Y, (std::vector<float>{15, 30, -7}));
}

TEST(SamplingKernels, ResizeLeavesAxesOutsideTheSubsetAlone) {
  // x [2, 3, 2]; only axis 2 is resized (nearest, x2, asymmetric).
  std::vector<float> X(12);
  std::iota(X.begin(), X.end(), 0.0f);
  std::vector<float> Y(24, -1);
  int64_t In[3] = {2, 3, 2}, Out[3] = {2, 3, 4}, Slot[3] = {-1, -1, 0};
  int64_t S[3] = {0, 0, bits(2.0)};
  cuvil_k_resize_f32(X.data(), nullptr, nullptr, Y.data(), 3, In, Out, Slot, 1,
                     S, CUVIL_RESIZE_NEAREST, CUVIL_RESIZE_ASYMMETRIC,
                     CUVIL_RESIZE_FLOOR, -0.75f, 0, 0, 0);
  for (int64_t I = 0; I < 24; ++I)
    EXPECT_EQ(Y[I], X[I / 2]) << I;
}

TEST(SamplingKernels, ResizeReadsRunTimeScales) {
  // Scales [1, 0.6]: the coordinate uses 0.6, not the 2/4 the shapes give.
  std::vector<float> X = {1, 2, 3, 4}, Y(2, -1);
  const float Scales[2] = {1.0f, 0.6f};
  int64_t In[2] = {1, 4}, Out[2] = {1, 2}, Slot[2] = {0, 1}, S[2] = {0, 0};
  cuvil_k_resize_f32(X.data(), nullptr, Scales, Y.data(), 2, In, Out, Slot, 2,
                     S, CUVIL_RESIZE_NEAREST, CUVIL_RESIZE_ASYMMETRIC,
                     CUVIL_RESIZE_ROUND_PREFER_FLOOR, -0.75f, 0, 0, 0);
  EXPECT_EQ(Y, (std::vector<float>{1, 3})); // 1 / 0.6 = 1.67 rounds to 2
}

TEST(SamplingKernels, GridSampleReflectsFarOutsideTheImage) {
  // One row [1, 2, 3]; align_corners: x = 2 (normalised) is pixel 3,
  // reflected about 2 to pixel 1; x = 5 is pixel 6, folded back to pixel 2.
  const float X[3] = {1, 2, 3};
  const float Grid[4] = {2.0f, 0.0f, 5.0f, 0.0f};
  float Y[2] = {-1, -1};
  cuvil_k_grid_sample_f32(X, Grid, Y, 1, 1, 1, 3, 1, 2, CUVIL_GRID_NEAREST,
                          CUVIL_GRID_PAD_REFLECTION, 1);
  EXPECT_EQ(Y[0], 2);
  EXPECT_EQ(Y[1], 3);
}

TEST(SamplingKernels, RoiAlignAdaptsItsSamplingToTheRoiSize) {
  // x[r, c] = c on a 4 x 4 plane; RoI (0, 0)-(3, 3) in one bin: 3 x 3
  // samples at columns 0.5, 1.5, 2.5 (no half-pixel shift).
  std::vector<float> X(16);
  for (int I = 0; I < 16; ++I)
    X[I] = static_cast<float>(I % 4);
  const float Rois[4] = {0, 0, 3, 3};
  const int64_t Batch[1] = {0};
  float Y = -1;
  cuvil_k_roi_align_f32(X.data(), Rois, Batch, &Y, 1, 1, 4, 4, 1, 1, 1, 0, 1.0f,
                        0);
  EXPECT_FLOAT_EQ(Y, 1.5f);
}

} // namespace
