//===- OpsTest.cpp - Op registry, verification and lowering ---------------===//
#include "TestGraphs.h"
#include "lowering/KernelAbi.h"
#include "ops/elementwise/Broadcast.h"

#include <gtest/gtest.h>

using namespace cuvil;

TEST(Ops, RegistryFindsSupportedOpsOnly) {
  EXPECT_NE(lookupOp("Conv"), nullptr);
  EXPECT_EQ(std::string(lookupOp("Gemm")->Name), "Gemm");
  EXPECT_EQ(lookupOp("RandomUniformLike"), nullptr);
  EXPECT_EQ(lookupOp("conv"), nullptr);
  auto All = supportedOps();
  EXPECT_TRUE(std::is_sorted(All.begin(), All.end()));
  EXPECT_GE(All.size(), 20u);
}

TEST(Ops, ConvLowersWithSameUpperPadding) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 3, 7, 7}, ValueKind::Input);
  Value *W = test::constF32(G, "w", {8, 3, 3, 3}, std::vector<float>(216, 1));
  Value *Y = test::tensor(G, "y", {1, 8, 4, 4});
  Node *N = test::addOp(G, "Conv", "c", {X, W}, {Y}, 0);
  N->setAttr("auto_pad", std::string("SAME_UPPER"));
  N->setAttr("strides", std::vector<int64_t>{2, 2});
  ASSERT_FALSE(bool(N->def()->Verify(*N)));
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(N->def()->Lower(*N, Calls)));
  ASSERT_EQ(Calls.size(), 1u);
  auto C = kabi::Conv2dF32::from(Calls[0]);
  EXPECT_EQ(C.bias.K, KernelArg::Kind::Null); // no bias
  // (4-1)*2 + 3 - 7 = 2 total padding: 1 before, 1 after.
  EXPECT_EQ(C.pad_top, 1);
  EXPECT_EQ(C.pad_left, 1);
  EXPECT_EQ(N->def()->Macs(*N), 8 * 4 * 4 * 27);
}

TEST(Ops, ConvRejectsWrongOutputShapeAndGroups) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 4, 5, 5}, ValueKind::Input);
  Value *W = test::constF32(G, "w", {4, 1, 3, 3}, std::vector<float>(36, 1));
  Value *Y = test::tensor(G, "y", {1, 4, 5, 5});
  Node *N = test::addOp(G, "Conv", "c", {X, W}, {Y}, 0);
  N->setAttr("group", int64_t(3));
  std::string Msg = llvm::toString(N->def()->Verify(*N));
  EXPECT_NE(Msg.find("node 'c' (Conv): group=3"), std::string::npos) << Msg;
  N->setAttr("group", int64_t(4)); // depthwise, but no padding: 3x3 out
  Msg = llvm::toString(N->def()->Verify(*N));
  EXPECT_NE(Msg.find("spatial size 5 but the window arithmetic gives 3"),
            std::string::npos)
      << Msg;
}

TEST(Ops, NonFloatInputIsRejectedWithTheReason) {
  Graph G("g");
  Value *X = G.addValue("x", DType::I8, {4}, ValueKind::Input);
  Value *Y = G.addValue("y", DType::I8, {4}, ValueKind::Intermediate);
  Node *N = test::addOp(G, "Relu", "r", {X}, {Y}, 0);
  EXPECT_EQ(llvm::toString(N->def()->Verify(*N)),
            "node 'r' (Relu): input 'x' has element type i8; only f32 is "
            "supported");
}

TEST(Ops, BroadcastMergesContiguousDimensions) {
  Graph G("g");
  Value *A = G.addValue("a", DType::F32, {2, 3, 4, 5}, ValueKind::Input);
  Value *B = G.addValue("b", DType::F32, {4, 1}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {2, 3, 4, 5});
  Node *N = test::addOp(G, "Add", "add", {A, B}, {Y}, 0);
  auto L = broadcastLoops(*N, Y->shape(), {A, B}, 6);
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
  // [2,3] merge (b broadcast on both); [4] and [5] stay: b varies along 4
  // but is broadcast along 5.
  EXPECT_EQ(L->Shape, (std::vector<int64_t>{1, 1, 1, 6, 4, 5}));
  EXPECT_EQ(L->Strides[0], (std::vector<int64_t>{0, 0, 0, 20, 5, 1}));
  EXPECT_EQ(L->Strides[1], (std::vector<int64_t>{0, 0, 0, 0, 1, 0}));

  // Same shapes collapse to one loop.
  auto Flat = broadcastLoops(*N, Y->shape(), {A, A}, 6);
  ASSERT_TRUE(bool(Flat));
  EXPECT_EQ(Flat->Shape, (std::vector<int64_t>{1, 1, 1, 1, 1, 120}));
}

TEST(Ops, GemmBiasBroadcastStrides) {
  Graph G("g");
  Value *A = G.addValue("a", DType::F32, {3, 5}, ValueKind::Input);
  Value *B = test::constF32(G, "b", {4, 5}, std::vector<float>(20, 1));
  Value *C = test::constF32(G, "c", {3, 1}, {1, 2, 3});
  Value *Y = test::tensor(G, "y", {3, 4});
  Node *N = test::addOp(G, "Gemm", "fc", {A, B, C}, {Y}, 0);
  N->setAttr("transB", int64_t(1));
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(N->def()->Lower(*N, Calls)));
  auto K = kabi::GemmF32::from(Calls[0]);
  EXPECT_EQ(K.m, 3);
  EXPECT_EQ(K.n, 4);
  EXPECT_EQ(K.k, 5);
  EXPECT_EQ(K.c_rs, 1); // a column vector
  EXPECT_EQ(K.c_cs, 0); // broadcast
}

TEST(Ops, MatMulBatchBroadcast) {
  Graph G("g");
  Value *A = G.addValue("a", DType::F32, {2, 1, 3, 4}, ValueKind::Input);
  Value *B = G.addValue("b", DType::F32, {5, 4, 6}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {2, 5, 3, 6});
  Node *N = test::addOp(G, "MatMul", "mm", {A, B}, {Y}, 0);
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(N->def()->Lower(*N, Calls)));
  auto K = kabi::MatmulF32::from(Calls[0]);
  EXPECT_EQ(K.batch_shape.Array, (std::vector<int64_t>{1, 1, 2, 5}));
  EXPECT_EQ(K.a_bstride.Array, (std::vector<int64_t>{0, 0, 12, 0}));
  EXPECT_EQ(K.b_bstride.Array, (std::vector<int64_t>{0, 0, 0, 24}));
  EXPECT_EQ(N->def()->Macs(*N), 10 * 3 * 6 * 4);
}

TEST(Ops, ConcatCopiesRowsIntoSlices) {
  Graph G("g");
  Value *A = G.addValue("a", DType::F32, {2, 3, 4}, ValueKind::Input);
  Value *B = G.addValue("b", DType::F32, {2, 1, 4}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {2, 4, 4});
  Node *N = test::addOp(G, "Concat", "cat", {A, B}, {Y}, 0);
  N->setAttr("axis", int64_t(-2));
  ASSERT_FALSE(bool(N->def()->Verify(*N)));
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(N->def()->Lower(*N, Calls)));
  ASSERT_EQ(Calls.size(), 2u);
  auto K = kabi::CopyRows::from(Calls[1]);
  EXPECT_EQ(K.dst.ByteOffset, 3 * 4 * 4); // after a's rows
  EXPECT_EQ(K.rows, 2);                   // outer rows
  EXPECT_EQ(K.row_bytes, 16);             // bytes per row of b
  EXPECT_EQ(K.dst_stride, 64);            // output row stride
}
