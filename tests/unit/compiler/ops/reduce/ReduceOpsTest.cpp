//===- ReduceOpsTest.cpp - Reductions and broadcast ops: verify, lower ----===//
#include "TestGraphs.h"
#include "lowering/KernelAbi.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace cuvil;

namespace {

Value *constI64(Graph &G, const std::string &Name,
                const std::vector<int64_t> &V) {
  Value *C = G.addValue(Name, DType::I64, {static_cast<int64_t>(V.size())},
                        ValueKind::Constant);
  std::vector<uint8_t> Bytes(V.size() * 8);
  if (!V.empty()) // memcpy from an empty vector's null data() is undefined
    std::memcpy(Bytes.data(), V.data(), Bytes.size());
  C->setData(std::move(Bytes));
  return C;
}

std::vector<KernelCall> lowerOk(const Node &N) {
  EXPECT_FALSE(bool(N.def()->Verify(N)));
  std::vector<KernelCall> Calls;
  EXPECT_FALSE(bool(N.def()->Lower(N, Calls)));
  return Calls;
}

} // namespace

TEST(ReduceOps, AxesInputSplitsKeptAndReducedLoops) {
  // [2,3,4] over axes {-1, 0} (opset 13 ReduceSum: axes are input 1): the
  // kept axis 1 sits between the reduced ones.
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {2, 3, 4}, ValueKind::Input);
  Value *A = constI64(G, "axes", {-1, 0});
  Value *Y = test::tensor(G, "y", {1, 3, 1});
  Node *N = test::addOp(G, "ReduceSum", "rs", {X, A}, {Y}, 0);
  auto Calls = lowerOk(*N);
  ASSERT_EQ(Calls.size(), 1u);
  auto K = kabi::XYOutShapeOutStrRedShapeRedStrGroup::from(Calls[0]);
  EXPECT_EQ(K.Kernel, "cuvil_k_reduce_sum_f32");
  EXPECT_EQ(K.out_shape.Array, (std::vector<int64_t>{1, 1, 3}));
  EXPECT_EQ(K.out_str.Array, (std::vector<int64_t>{0, 0, 4}));
  EXPECT_EQ(K.red_shape.Array, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(K.red_str.Array, (std::vector<int64_t>{0, 12, 1}));
}

TEST(ReduceOps, ContiguousReducedAxesMerge) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {2, 3, 4}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {2});
  Node *N = test::addOp(G, "ReduceMean", "rm", {X}, {Y}, 0);
  N->setAttr("axes", std::vector<int64_t>{1, 2});
  N->setAttr("keepdims", int64_t(0));
  auto Calls = lowerOk(*N);
  ASSERT_EQ(Calls.size(), 1u);
  auto K = kabi::XYOutShapeOutStrRedShapeRedStrGroup::from(Calls[0]);
  EXPECT_EQ(K.Kernel, "cuvil_k_reduce_mean_f32");
  EXPECT_EQ(K.out_shape.Array, (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(K.out_str.Array, (std::vector<int64_t>{0, 0, 12}));
  EXPECT_EQ(K.red_shape.Array, (std::vector<int64_t>{1, 1, 12}));
  EXPECT_EQ(K.red_str.Array, (std::vector<int64_t>{0, 0, 1}));
}

TEST(ReduceOps, EmptyAxesAreANoOpOnlyWhenAsked) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {2, 3}, ValueKind::Input);
  Value *A = constI64(G, "axes", {});
  Value *Y = test::tensor(G, "y", {2, 3});
  Node *N = test::addOp(G, "ReduceSum", "rs", {X, A}, {Y}, 0);
  N->setAttr("noop_with_empty_axes", int64_t(1));
  auto Calls = lowerOk(*N);
  ASSERT_EQ(Calls.size(), 1u);
  EXPECT_EQ(Calls[0].Kernel, "cuvil_k_copy");
  EXPECT_TRUE(Calls[0].IsCopy);
  // Without the flag, empty axes reduce everything: 6 elements, not 1.
  N->setAttr("noop_with_empty_axes", int64_t(0));
  std::string Msg = llvm::toString(N->def()->Verify(*N));
  EXPECT_NE(Msg.find("output 'y' has 6 elements; the reduction yields 1"),
            std::string::npos)
      << Msg;
}

TEST(ReduceOps, RuntimeAxesAreReadByTheKernel) {
  // [3,2,2] -> [3,2] with keepdims=0 could drop axis 1 or 2: the output
  // shape does not tell, so the kernel reads the axes.
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {3, 2, 2}, ValueKind::Input);
  Value *A = G.addValue("axes", DType::I64, {1}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {3, 2});
  Node *N = test::addOp(G, "ReduceSum", "rs", {X, A}, {Y}, 0);
  N->setAttr("keepdims", int64_t(0));
  auto Calls = lowerOk(*N);
  ASSERT_EQ(Calls.size(), 1u);
  auto K = kabi::ReduceRtGroup::from(Calls[0]);
  EXPECT_EQ(K.Kernel, "cuvil_k_reduce_rt_sum_f32");
  EXPECT_EQ(K.axes.V, A);
  EXPECT_EQ(K.naxes, 1);
  EXPECT_EQ(K.shape.Array, (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(K.out_count, 6);

  // A run-time axes input of static length 0 is the empty list.
  Value *E = G.addValue("none", DType::I64, {0}, ValueKind::Input);
  Value *Y1 = test::tensor(G, "y1", {1, 1, 1});
  Node *All = test::addOp(G, "ReduceSum", "all", {X, E}, {Y1}, 0);
  EXPECT_EQ(lowerOk(*All)[0].Kernel, "cuvil_k_reduce_sum_f32");
}

TEST(ReduceOps, RejectionsNameTheReason) {
  Graph G("g");
  Value *X =
      G.addValue("x", DType::F32, {2, 1, 1, 1, 1, 1, 3}, ValueKind::Input);
  Value *A = G.addValue("axes", DType::I64, {1}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {2, 1, 1, 1, 1, 1, 1});
  Node *N = test::addOp(G, "ReduceSum", "rs", {X, A}, {Y}, 0);
  EXPECT_EQ(llvm::toString(N->def()->Verify(*N)),
            "node 'rs' (ReduceSum): axes input 'axes' is not a constant; "
            "run-time axes support input ranks up to 6, not 7");
  Value *XI = G.addValue("xi", DType::I32, {2, 3}, ValueKind::Input);
  Value *YI = G.addValue("yi", DType::I32, {2, 1}, ValueKind::Intermediate);
  Node *L2 = test::addOp(G, "ReduceL2", "l2", {XI}, {YI}, 1);
  L2->setAttr("axes", std::vector<int64_t>{1});
  EXPECT_EQ(llvm::toString(L2->def()->Verify(*L2)),
            "node 'l2' (ReduceL2): input 'xi' has element type i32; ReduceL2 "
            "supports f32, f64");
}

TEST(BroadcastOps, VariadicSumChainsIntoTheOutput) {
  Graph G("g");
  Value *A = G.addValue("a", DType::I32, {2, 3}, ValueKind::Input);
  Value *B = G.addValue("b", DType::I32, {3}, ValueKind::Input);
  Value *C = G.addValue("c", DType::I32, {2, 1}, ValueKind::Input);
  Value *Y = G.addValue("y", DType::I32, {2, 3}, ValueKind::Intermediate);
  Node *N = test::addOp(G, "Sum", "s", {A, B, C}, {Y}, 0);
  auto Calls = lowerOk(*N);
  ASSERT_EQ(Calls.size(), 2u);
  auto First = kabi::ABYShapeAStrBStrGroup::from(Calls[0]);
  auto Second = kabi::ABYShapeAStrBStrGroup::from(Calls[1]);
  EXPECT_EQ(First.Kernel, "cuvil_k_add_i32");
  EXPECT_EQ(First.a.V, A);
  EXPECT_EQ(Second.a.V, Y); // y = y + c
  EXPECT_EQ(Second.b.V, C);
  EXPECT_EQ(Second.y.V, Y);
}

TEST(BroadcastOps, KernelNamesFollowTypesAndAttributes) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {4}, ValueKind::Input);
  Value *E = G.addValue("e", DType::I64, {4}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {4});
  Node *P = test::addOp(G, "Pow", "p", {X, E}, {Y}, 0);
  EXPECT_EQ(lowerOk(*P)[0].Kernel, "cuvil_k_pow_f32_i64");
  Value *Y2 = test::tensor(G, "y2", {4});
  Node *M = test::addOp(G, "Mod", "m", {X, X}, {Y2}, 1);
  EXPECT_EQ(llvm::toString(M->def()->Verify(*M)),
            "node 'm' (Mod): floating-point Mod requires fmod=1");
  M->setAttr("fmod", int64_t(1));
  EXPECT_EQ(lowerOk(*M)[0].Kernel, "cuvil_k_fmod_f32");
  Value *B = G.addValue("b", DType::Bool, {4}, ValueKind::Intermediate);
  Node *Eq = test::addOp(G, "Equal", "eq", {X, X}, {B}, 2);
  EXPECT_EQ(lowerOk(*Eq)[0].Kernel, "cuvil_k_equal_f32");
  Value *Y3 = test::tensor(G, "y3", {4});
  Node *Bad = test::addOp(G, "Less", "lt", {X, X}, {Y3}, 3);
  EXPECT_EQ(llvm::toString(Bad->def()->Verify(*Bad)),
            "node 'lt' (Less): output 'y3' has element type f32; expected "
            "bool");
}
