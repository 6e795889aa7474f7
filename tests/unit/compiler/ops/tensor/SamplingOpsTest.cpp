//===- SamplingOpsTest.cpp - Resize, GridSample, RoiAlign, DepthToSpace ---===//
#include "TestGraphs.h"
#include "lowering/KernelAbi.h"

#include <cuvil/kernels.h>
#include <gtest/gtest.h>

#include <cstring>

using namespace cuvil;
using test::verifyMessage;

namespace {

double doubleOf(int64_t Bits) {
  double D;
  std::memcpy(&D, &Bits, 8);
  return D;
}

} // namespace

TEST(SamplingOps, ResizeBakesConstantScalesAndChecksTheShape) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 1, 4, 5}, ValueKind::Input);
  Value *S = test::constF32(G, "s", {4}, {1, 1, 0.6f, 2.5f});
  Value *Y = test::tensor(G, "y", {1, 1, 2, 12});
  Node *N = test::addOp(G, "Resize", "r", {X, nullptr, S}, {Y}, 0);
  N->setAttr("mode", std::string("linear"));
  ASSERT_FALSE(bool(N->def()->Verify(*N)));
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(N->def()->Lower(*N, Calls)));
  ASSERT_EQ(Calls.size(), 1u);
  auto K = kabi::ResizeF32::from(Calls[0]);
  EXPECT_EQ(K.scales.K, KernelArg::Kind::Null); // no run-time scales
  EXPECT_EQ(doubleOf(K.static_scale.Array[3]), double(2.5f));
  EXPECT_EQ(K.mode, CUVIL_RESIZE_LINEAR);
  // floor(5 * 2.5) = 12, not 13.
  Y->setShape({1, 1, 2, 13});
  std::string Msg = verifyMessage(*N);
  EXPECT_NE(Msg.find("extent 13 on axis 3, but the scale 2.5 gives 12"),
            std::string::npos)
      << Msg;
}

TEST(SamplingOps, ResizeRefusesWhatItCannotCompute) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 1, 4, 4}, ValueKind::Input);
  Value *S = G.addValue("s", DType::F32, {4}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {1, 1, 2, 2});
  Node *N = test::addOp(G, "Resize", "r", {X, nullptr, S}, {Y}, 0);
  N->setOpset(18);
  N->setAttr("mode", std::string("cubic"));
  N->setAttr("antialias", int64_t(1));
  EXPECT_NE(verifyMessage(*N).find("antialias needs compile-time constant "
                                   "scales"),
            std::string::npos);
  N->setAttr("antialias", int64_t(0));
  EXPECT_TRUE(verifyMessage(*N).empty());
  N->setAttr("coordinate_transformation_mode", std::string("bogus"));
  EXPECT_NE(verifyMessage(*N).find("coordinate_transformation_mode 'bogus' "
                                   "is not supported"),
            std::string::npos);
}

TEST(SamplingOps, DepthToSpaceCrdIsOneStridedCopy) {
  Graph G("g");
  Value *X = G.addValue("x", DType::I8, {1, 8, 2, 3}, ValueKind::Input);
  Value *Y = G.addValue("y", DType::I8, {1, 2, 4, 6}, ValueKind::Intermediate);
  Node *N = test::addOp(G, "DepthToSpace", "d", {X}, {Y}, 0);
  N->setAttr("blocksize", int64_t(2));
  N->setAttr("mode", std::string("CRD"));
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(N->def()->Verify(*N)));
  ASSERT_FALSE(bool(N->def()->Lower(*N, Calls)));
  ASSERT_EQ(Calls.size(), 1u);
  EXPECT_EQ(Calls[0].Kernel, "cuvil_k_strided_copy_b8");
  N->setAttr("mode", std::string("XYZ"));
  EXPECT_NE(verifyMessage(*N).find("mode 'XYZ' is not supported"),
            std::string::npos);
}

TEST(SamplingOps, RoiAlignMaxModeIsRefused) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 2, 8, 8}, ValueKind::Input);
  Value *R = G.addValue("r", DType::F32, {3, 4}, ValueKind::Input);
  Value *B = G.addValue("b", DType::I64, {3}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {3, 2, 1, 1});
  Node *N = test::addOp(G, "RoiAlign", "ra", {X, R, B}, {Y}, 0);
  EXPECT_TRUE(verifyMessage(*N).empty());
  N->setAttr("mode", std::string("max"));
  EXPECT_NE(verifyMessage(*N).find("mode 'max' is not supported"),
            std::string::npos);
}
