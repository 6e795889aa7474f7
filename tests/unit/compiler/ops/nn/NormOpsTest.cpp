//===- NormOpsTest.cpp - Normalization ops: verify, lower, BN folding -----===//
#include "TestGraphs.h"
#include "lowering/KernelAbi.h"
#include "passes/Pass.h"

#include <gtest/gtest.h>

using namespace cuvil;
using test::verifyMessage;

namespace {

std::vector<KernelCall> lowerOk(const Node &N) {
  EXPECT_FALSE(bool(N.def()->Verify(N)));
  std::vector<KernelCall> Calls;
  EXPECT_FALSE(bool(N.def()->Lower(N, Calls)));
  return Calls;
}

/// A BatchNormalization of x (Shape, 2 channels) whose four parameters are
/// graph inputs, with the given outputs.
Node *runtimeBatchNorm(Graph &G, std::vector<int64_t> Shape,
                       std::vector<Value *> Outs) {
  std::vector<Value *> Ins{
      G.addValue("x", DType::F32, std::move(Shape), ValueKind::Input)};
  for (const char *P : {"s", "b", "m", "v"})
    Ins.push_back(G.addValue(P, DType::F32, {2}, ValueKind::Input));
  return test::addOp(G, "BatchNormalization", "bn", Ins, std::move(Outs), 0);
}

} // namespace

TEST(NormOps, LayerNormSplitsAtAxisAndBroadcastsTrailingParams) {
  // [2,3,4,5] at axis -2: 6 rows of 20; Scale [5] repeats every 5, B [1,4,5]
  // every 20.
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {2, 3, 4, 5}, ValueKind::Input);
  Value *W = G.addValue("w", DType::F32, {5}, ValueKind::Input);
  Value *B = G.addValue("b", DType::F32, {1, 4, 5}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {2, 3, 4, 5});
  Value *M = test::tensor(G, "m", {2, 3, 1, 1});
  Value *R = test::tensor(G, "r", {2, 3, 1, 1});
  Node *N = test::addOp(G, "LayerNormalization", "ln", {X, W, B}, {Y, M, R}, 0);
  N->setAttr("axis", int64_t(-2));
  auto Calls = lowerOk(*N);
  ASSERT_EQ(Calls.size(), 1u);
  auto K = kabi::LayerNormF32::from(Calls[0]);
  EXPECT_EQ(K.mean.V, M);
  EXPECT_EQ(K.inv_std.V, R);
  EXPECT_EQ(K.outer, 6);
  EXPECT_EQ(K.n, 20);
  EXPECT_EQ(K.scale_period, 5);
  EXPECT_EQ(K.bias_period, 20);
}

TEST(NormOps, LayerNormRefusesWhatItCannotCompute) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {2, 3}, ValueKind::Input);
  Value *W = G.addValue("w", DType::F32, {2, 1}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {2, 3});
  Node *N = test::addOp(G, "LayerNormalization", "ln", {X, W}, {Y}, 0);
  N->setAttr("axis", int64_t(0));
  EXPECT_NE(
      verifyMessage(*N).find("parameter 'w' of shape [2, 1] does not "
                             "broadcast to the normalized dimensions [2, 3]"),
      std::string::npos);

  // With two outputs the second may be Mean or InvStdDev (the importer drops
  // an omitted one): refused rather than guessed.
  Value *W2 = G.addValue("w2", DType::F32, {3}, ValueKind::Input);
  Value *Y2 = test::tensor(G, "y2", {2, 3});
  Value *S = test::tensor(G, "s", {2, 1});
  Node *N2 = test::addOp(G, "LayerNormalization", "ln2", {X, W2}, {Y2, S}, 1);
  EXPECT_NE(
      verifyMessage(*N2).find("exactly one of the optional Mean/InvStdDev "
                              "outputs is not supported"),
      std::string::npos);
}

TEST(NormOps, MvnDefaultAxesKeepChannels) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {2, 3, 4, 5}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {2, 3, 4, 5});
  Node *N = test::addOp(G, "MeanVarianceNormalization", "mvn", {X}, {Y}, 0);
  auto Calls = lowerOk(*N);
  ASSERT_EQ(Calls.size(), 1u);
  auto K = kabi::MvnF32::from(Calls[0]);
  EXPECT_EQ(K.out_shape.Array, (std::vector<int64_t>{1, 1, 3}));
  EXPECT_EQ(K.out_str.Array, (std::vector<int64_t>{0, 0, 20}));
  EXPECT_EQ(K.red_shape.Array, (std::vector<int64_t>{1, 2, 20}));
  EXPECT_EQ(K.red_str.Array, (std::vector<int64_t>{0, 60, 1}));
}

TEST(NormOps, LpNormRefusesOtherP) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {2, 3}, ValueKind::Input);
  Value *Y = test::tensor(G, "y", {2, 3});
  Node *N = test::addOp(G, "LpNormalization", "lp", {X}, {Y}, 0);
  N->setAttr("p", int64_t(3));
  EXPECT_NE(verifyMessage(*N).find("p=3 is not supported"), std::string::npos);
}

TEST(NormOps, BatchNormWithRuntimeParametersIsNotFolded) {
  Graph G("g");
  Value *Y = test::tensor(G, "y", {1, 2, 3});
  Node *N = runtimeBatchNorm(G, {1, 2, 3}, {Y});
  G.outputs().push_back(Y);
  ASSERT_FALSE(bool(foldBatchNorm(G)));
  ASSERT_EQ(G.nodes().size(), 1u);
  ASSERT_EQ(G.nodes()[0].get(), N); // still the BatchNormalization
  auto Calls = lowerOk(*N);
  ASSERT_EQ(Calls.size(), 1u);
  EXPECT_EQ(Calls[0].Kernel, "cuvil_k_batch_norm_f32");
}

TEST(NormOps, BatchNormTrainingWritesRunningStatistics) {
  Graph G("g");
  Value *Y = test::tensor(G, "y", {2, 2, 3});
  Value *RM = test::tensor(G, "rm", {2}), *RV = test::tensor(G, "rv", {2});
  Node *N = runtimeBatchNorm(G, {2, 2, 3}, {Y, RM, RV});
  N->setAttr("training_mode", int64_t(1));
  auto Calls = lowerOk(*N);
  ASSERT_EQ(Calls.size(), 1u);
  auto K = kabi::BatchNormTrainF32::from(Calls[0]);
  EXPECT_EQ(K.running_mean.V, RM);
  EXPECT_EQ(K.running_var.V, RV);
}
