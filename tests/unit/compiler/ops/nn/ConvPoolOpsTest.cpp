//===- ConvPoolOpsTest.cpp - Windows up to 3-D, ConvTranspose, MaxPool ----===//
//
// Which kernel each window op lowers to (2-D ops keep the 2-D kernels), the
// geometry handed to the 3-D kernels, ConvTranspose's pad arithmetic, and
// the refusals.
//
//===----------------------------------------------------------------------===//
#include "TestGraphs.h"
#include "lowering/KernelAbi.h"
#include "ops/nn/Spatial.h"

#include <gtest/gtest.h>

using namespace cuvil;
using test::verifyMessage;

namespace {

std::vector<KernelCall> lowered(const Node &N) {
  std::vector<KernelCall> Calls;
  llvm::Error E = N.def()->Verify(N);
  EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
  E = N.def()->Lower(N, Calls);
  EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
  return Calls;
}

} // namespace

TEST(ConvPoolOps, Conv3dPassesThreeEntryGeometry) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 2, 5, 6, 7}, ValueKind::Input);
  Value *W = test::constF32(G, "w", {4, 2, 3, 3, 3},
                            std::vector<float>(4 * 2 * 27, 1));
  Value *Y = test::tensor(G, "y", {1, 4, 3, 2, 5});
  Node *N = test::addOp(G, "Conv", "c", {X, W}, {Y}, 0);
  N->setAttr("strides", std::vector<int64_t>{1, 2, 1});
  auto Calls = lowered(*N);
  ASSERT_EQ(Calls.size(), 1u);
  auto K = kabi::Conv3dF32::from(Calls[0]);
  EXPECT_EQ(K.in.Array, (std::vector<int64_t>{5, 6, 7}));
  EXPECT_EQ(K.out.Array, (std::vector<int64_t>{3, 2, 5}));
  EXPECT_EQ(K.stride.Array, (std::vector<int64_t>{1, 2, 1}));
}

TEST(ConvPoolOps, MaxPoolKeepsThe2DKernelUnlessIndicesOrIntegers) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 1, 4, 4}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {1, 1, 2, 2});
  Node *Plain = test::addOp(G, "MaxPool", "p", {X}, {Y}, 0);
  Plain->setAttr("kernel_shape", std::vector<int64_t>{2, 2});
  Plain->setAttr("strides", std::vector<int64_t>{2, 2});
  EXPECT_EQ(lowered(*Plain)[0].Kernel, "cuvil_k_maxpool2d_f32");

  Value *Y2 = test::tensor(G, "y2", {1, 1, 2, 2});
  Value *I = G.addValue("i", DType::I64, {1, 1, 2, 2}, ValueKind::Intermediate);
  Node *WithIdx = test::addOp(G, "MaxPool", "q", {X}, {Y2, I}, 1);
  WithIdx->setAttr("kernel_shape", std::vector<int64_t>{2, 2});
  WithIdx->setAttr("strides", std::vector<int64_t>{2, 2});
  WithIdx->setAttr("storage_order", int64_t(1));
  auto Calls = lowered(*WithIdx);
  auto K = kabi::Maxpool3dF32::from(Calls[0]);
  EXPECT_EQ(K.indices.K, KernelArg::Kind::Tensor);
  EXPECT_EQ(K.in.Array, (std::vector<int64_t>{1, 4, 4}));
  EXPECT_EQ(K.storage_order, 1);

  Value *Xu = G.addValue("xu", DType::U8, {1, 1, 4, 4}, ValueKind::Input);
  Value *Yu =
      G.addValue("yu", DType::U8, {1, 1, 2, 2}, ValueKind::Intermediate);
  Node *U8 = test::addOp(G, "MaxPool", "u", {Xu}, {Yu}, 2);
  U8->setAttr("kernel_shape", std::vector<int64_t>{2, 2});
  U8->setAttr("strides", std::vector<int64_t>{2, 2});
  EXPECT_EQ(lowered(*U8)[0].Kernel, "cuvil_k_maxpool3d_u8");
}

TEST(ConvPoolOps, RefusesRank6AndI32MaxPool) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 1, 2, 2, 2, 2}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {1, 1, 1, 1, 1, 1});
  Node *N = test::addOp(G, "MaxPool", "m", {X}, {Y}, 0);
  N->setAttr("kernel_shape", std::vector<int64_t>{2, 2, 2, 2});
  EXPECT_NE(verifyMessage(*N).find("rank 6; only 1-D, 2-D and 3-D windows"),
            std::string::npos);

  Value *Xi = G.addValue("xi", DType::I32, {1, 1, 2, 2}, ValueKind::Input);
  Value *Yi =
      G.addValue("yi", DType::I32, {1, 1, 1, 1}, ValueKind::Intermediate);
  Node *A = test::addOp(G, "MaxPool", "a", {Xi}, {Yi}, 1);
  A->setAttr("kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_NE(verifyMessage(*A).find("only f32, u8 and i8 are supported"),
            std::string::npos);
}

TEST(ConvPoolOps, ConvTransposeOutputShapeSetsThePads) {
  // in 3, stride 3, kernel 3: the full output is 9; output_shape 10 asks
  // for one more, taken at the end (negative padding).
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 1, 3, 3}, ValueKind::Input);
  Value *W = test::constF32(G, "w", {1, 2, 3, 3}, std::vector<float>(18, 1));
  Value *Y = test::tensor(G, "y", {1, 2, 10, 8});
  Node *N = test::addOp(G, "ConvTranspose", "t", {X, W}, {Y}, 0);
  N->setAttr("strides", std::vector<int64_t>{3, 2});
  N->setAttr("output_shape", std::vector<int64_t>{10, 8});
  auto Calls = lowered(*N);
  ASSERT_EQ(Calls.size(), 1u);
  auto K = kabi::Convtranspose3dF32::from(Calls[0]);
  EXPECT_EQ(K.m, 2); // output channels
  EXPECT_EQ(K.pad.Array, (std::vector<int64_t>{0, 0, 0}));

  Value *Bad = test::tensor(G, "bad", {1, 2, 9, 8});
  Node *M = test::addOp(G, "ConvTranspose", "u", {X, W}, {Bad}, 1);
  M->setAttr("strides", std::vector<int64_t>{3, 2});
  std::string Msg = verifyMessage(*M);
  EXPECT_NE(Msg.find("node 'u' (ConvTranspose): output 'bad' has spatial "
                     "size 8 but the window arithmetic gives 7"),
            std::string::npos)
      << Msg;
}

TEST(ConvPoolOps, TwoDWindowApiStillRefuses3D) {
  // computeWindow serves ops with 2-D kernels only; it is the N-d window's
  // entries 1 and 2.
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 1, 5, 6}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {1, 1, 2, 3});
  Node *N = test::addOp(G, "MaxPool", "p", {X}, {Y}, 0);
  N->setAttr("kernel_shape", std::vector<int64_t>{3, 2});
  N->setAttr("strides", std::vector<int64_t>{2, 2});
  N->setAttr("pads", std::vector<int64_t>{1, 0, 0, 0});
  auto Wd = computeWindow(*N, *X, *Y, {}, false);
  ASSERT_TRUE(bool(Wd)) << llvm::toString(Wd.takeError());
  EXPECT_EQ(Wd->H, 5);
  EXPECT_EQ(Wd->KH, 3);
  EXPECT_EQ(Wd->KW, 2);
  EXPECT_EQ(Wd->OH, 2);
  EXPECT_EQ(Wd->OW, 3);
  EXPECT_EQ(Wd->PadT, 1);
  EXPECT_EQ(Wd->PadB, 0);

  Value *X3 = G.addValue("x3", DType::F32, {1, 1, 2, 2, 2}, ValueKind::Input);
  Value *Y3 = test::tensor(G, "y3", {1, 1, 1, 1, 1});
  Node *M = test::addOp(G, "MaxPool", "q", {X3}, {Y3}, 1);
  M->setAttr("kernel_shape", std::vector<int64_t>{2, 2, 2});
  std::string Msg =
      llvm::toString(computeWindow(*M, *X3, *Y3, {}, false).takeError());
  EXPECT_NE(Msg.find("only 1-D and 2-D windows"), std::string::npos) << Msg;
  EXPECT_TRUE(bool(computeWindowNd(*M, *X3, *Y3, {}, false)));
}
