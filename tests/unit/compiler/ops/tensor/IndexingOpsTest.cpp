//===- IndexingOpsTest.cpp - Verification and lowering of indexing ops ----===//
#include "TestGraphs.h"
#include "lowering/KernelAbi.h"

#include <gtest/gtest.h>

using namespace cuvil;
using test::constI64;

namespace {

Value *input(Graph &G, const std::string &Name, DType T,
             std::vector<int64_t> Shape) {
  return G.addValue(Name, T, std::move(Shape), ValueKind::Input);
}
Value *out(Graph &G, const std::string &Name, DType T,
           std::vector<int64_t> Shape) {
  return G.addValue(Name, T, std::move(Shape), ValueKind::Intermediate);
}
std::string verifyMessage(const Node *N) {
  return llvm::toString(N->def()->Verify(*N));
}
std::vector<KernelCall> lower(const Node *N) {
  std::vector<KernelCall> Calls;
  EXPECT_FALSE(bool(N->def()->Lower(*N, Calls)));
  return Calls;
}

} // namespace

TEST(IndexingOps, GatherElementsMergesDimensionsBeyondTheKernelRank) {
  // Rank 7, as NegativeLogLikelihoodLoss's expansion on [N, C, d1..d5].
  Graph G("g");
  Value *X = input(G, "x", DType::F32, {2, 3, 2, 2, 2, 2, 2});
  Value *I = input(G, "i", DType::I64, {2, 1, 2, 2, 2, 2, 2});
  Value *Y = out(G, "y", DType::F32, {2, 1, 2, 2, 2, 2, 2});
  Node *N = test::addOp(G, "GatherElements", "ge", {X, I}, {Y}, 0);
  N->setAttr("axis", int64_t(1));
  ASSERT_FALSE(bool(N->def()->Verify(*N)));
  auto Calls = lower(N);
  ASSERT_EQ(Calls.size(), 1u);
  auto K = kabi::GatherElementsGroup::from(Calls[0]);
  EXPECT_EQ(K.Kernel, "cuvil_k_gather_elements_b32_i64");
  EXPECT_EQ(K.shape.Array, (std::vector<int64_t>{1, 1, 1, 1, 2, 32}));
  EXPECT_EQ(K.x_str.Array, (std::vector<int64_t>{0, 0, 0, 0, 96, 1}));
  EXPECT_EQ(K.axis_dim, 3);
  EXPECT_EQ(K.axis_str, 32);
}

TEST(IndexingOps, ScatterRefusesWhatItCannotCompute) {
  Graph G("g");
  Value *X = input(G, "x", DType::U8, {4, 3});
  Value *I = input(G, "i", DType::I32, {2, 1});
  Value *U = input(G, "u", DType::U8, {2, 3});
  Value *Y = out(G, "y", DType::U8, {4, 3});
  Node *N = test::addOp(G, "ScatterND", "s", {X, I, U}, {Y}, 0);
  EXPECT_NE(verifyMessage(N).find("indices of type i32 are not supported"),
            std::string::npos)
      << verifyMessage(N);
  Value *I64 = input(G, "i64", DType::I64, {2, 1});
  Value *Y2 = out(G, "y2", DType::U8, {4, 3}); // a value has one producer
  Node *M = test::addOp(G, "ScatterND", "m", {X, I64, U}, {Y2}, 1);
  M->setAttr("reduction", std::string("mul"));
  EXPECT_NE(verifyMessage(M).find("reduction 'mul' on element type u8 is not "
                                  "supported"),
            std::string::npos)
      << verifyMessage(M);
  M->setAttr("reduction", std::string("none"));
  auto Calls = lower(M);
  ASSERT_EQ(Calls.size(), 2u);
  EXPECT_TRUE(Calls[0].IsCopy);
  EXPECT_EQ(Calls[1].Kernel, "cuvil_k_scatter_nd_none_b8");
}

TEST(IndexingOps, TopKTakesKFromTheOutputAndChecksAConstantOne) {
  Graph G("g");
  Value *X = input(G, "x", DType::F32, {3, 5});
  Value *K = constI64(G, "k", {1}, {2});
  Value *V = out(G, "v", DType::F32, {3, 3});
  Value *I = out(G, "i", DType::I64, {3, 3});
  Node *N = test::addOp(G, "TopK", "t", {X, K}, {V, I}, 0);
  EXPECT_NE(verifyMessage(N).find("k = 2 differs from the outputs' extent 3"),
            std::string::npos)
      << verifyMessage(N);
  Value *RK = input(G, "rk", DType::I64, {1});
  Value *V2 = out(G, "v2", DType::F32, {3, 3}); // a value has one producer
  Value *I2 = out(G, "i2", DType::I64, {3, 3});
  Node *M = test::addOp(G, "TopK", "m", {X, RK}, {V2, I2}, 1);
  ASSERT_FALSE(bool(M->def()->Verify(*M)));
  auto Calls = lower(M);
  ASSERT_EQ(Calls.size(), 1u);
  auto Top = kabi::TopkGroup::from(Calls[0]);
  EXPECT_EQ(Top.Kernel, "cuvil_k_topk_f32");
  EXPECT_EQ(Top.k, 3);
}

TEST(IndexingOps, TriluAndCumSumFoldConstantParameters) {
  Graph G("g");
  Value *X = input(G, "x", DType::I64, {2, 3, 4});
  Value *K = constI64(G, "k", {}, {-1});
  Value *Y = out(G, "y", DType::I64, {2, 3, 4});
  Node *T = test::addOp(G, "Trilu", "t", {X, K}, {Y}, 0);
  auto Calls = lower(T);
  ASSERT_EQ(Calls.size(), 1u);
  auto Tr = kabi::TriluGroup::from(Calls[0]);
  EXPECT_EQ(Tr.Kernel, "cuvil_k_trilu_b64");
  EXPECT_EQ(Tr.k.K, KernelArg::Kind::Null);
  EXPECT_EQ(Tr.k_default, -1);
  Value *A = constI64(G, "a", {}, {-2});
  Value *Z = out(G, "z", DType::I64, {2, 3, 4});
  Node *C = test::addOp(G, "CumSum", "c", {X, A}, {Z}, 1);
  Calls = lower(C);
  ASSERT_EQ(Calls.size(), 1u);
  auto Cs = kabi::CumsumGroup::from(Calls[0]);
  EXPECT_EQ(Cs.Kernel, "cuvil_k_cumsum_i64");
  EXPECT_EQ(Cs.shape.Array, (std::vector<int64_t>{1, 1, 1, 2, 3, 4}));
  EXPECT_EQ(Cs.rank, 3); // rank of [outer, n, inner]
  EXPECT_EQ(Cs.axis.K, KernelArg::Kind::Null);
  EXPECT_EQ(Cs.axis_default, 1); // the axis in [outer, n, inner]
}
