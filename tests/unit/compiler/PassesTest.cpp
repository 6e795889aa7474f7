//===- PassesTest.cpp - BatchNorm folding, fusion, DCE --------------------===//
#include "TestGraphs.h"
#include "lowering/KernelAbi.h"
#include "passes/Pass.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace cuvil;

TEST(Passes, BatchNormFoldsIntoConvWeightsAndBias) {
  auto G = test::convBnRelu();
  std::vector<float> W0(G->nodes()[0]->input(1)->f32(),
                        G->nodes()[0]->input(1)->f32() + 72);
  ASSERT_FALSE(bool(foldBatchNorm(*G)));
  ASSERT_EQ(G->nodes().size(), 2u); // Conv, Relu
  const Node &Conv = *G->nodes()[0];
  EXPECT_EQ(Conv.origin().str(), "conv1#0, bn1#1");
  const Value *W = Conv.input(1), *B = Conv.input(2);
  // Channel 1: scale 2 / sqrt(4 + 1e-5).
  float S1 = 2.0f / std::sqrt(4.0f + 1e-5f);
  EXPECT_NEAR(W->f32()[18], W0[18] * S1, 1e-6);
  // bias' = (b - mean) * s + shift = (-0.2 + 0.5) * s1 + 0.1
  EXPECT_NEAR(B->f32()[1], (-0.2f + 0.5f) * S1 + 0.1f, 1e-6);
  EXPECT_EQ(G->nodes()[1]->input(0), Conv.output(0));
}

TEST(Passes, UnfoldableBatchNormBecomesAffine) {
  auto G = test::convBnRelu();
  // Make the conv result also a graph output: folding would change it.
  G->outputs().push_back(G->nodes()[0]->output(0));
  ASSERT_FALSE(bool(foldBatchNorm(*G)));
  const Node &Bn = *G->nodes()[1];
  EXPECT_EQ(Bn.opType(), "cuvil.ChannelAffine");
  EXPECT_EQ(Bn.def(), lookupInternalOp("ChannelAffine"));
  EXPECT_EQ(Bn.name(), "bn1");
  EXPECT_EQ(Bn.origin().str(), "bn1#1");
  EXPECT_EQ(Bn.numInputs(), 3u);
  EXPECT_EQ(Bn.input(1)->name(), "bn1.scale");
  EXPECT_FALSE(bool(Bn.def()->Verify(Bn)));
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(Bn.def()->Lower(Bn, Calls)));
  EXPECT_EQ(Calls[0].Kernel, "cuvil_k_channel_affine_f32");
}

TEST(Passes, ReluFusesIntoConvEpilogue) {
  auto G = test::convBnRelu();
  ASSERT_FALSE(bool(foldBatchNorm(*G)));
  ASSERT_FALSE(bool(fuseActivations(*G)));
  ASSERT_EQ(G->nodes().size(), 1u);
  const Node &Conv = *G->nodes()[0];
  EXPECT_EQ(Conv.opType(), "cuvil.FusedConv");
  EXPECT_EQ(Conv.name(), "conv1");
  EXPECT_EQ(fusedActivation(Conv).first, 0.0f);
  EXPECT_TRUE(std::isinf(fusedActivation(Conv).second));
  EXPECT_EQ(Conv.getInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(Conv.origin().str(), "conv1#0, bn1#1, relu1#2");
  // The graph output keeps the ONNX name of the fused node's result.
  EXPECT_EQ(G->outputs()[0]->name(), "y");
  EXPECT_EQ(G->outputs()[0], Conv.output(0));
}

namespace {

/// x[1,4,4,4] -> a = Relu(Conv(x)) -> y = Relu(Add(Conv(a), Other)), with
/// Other the input x (ResidualIsInput) or a second Conv of a that comes
/// after the first one in the node order.
std::unique_ptr<Graph> residualBlock(bool ResidualIsInput) {
  auto G = std::make_unique<Graph>("res");
  Value *X = G->addValue("x", DType::F32, {1, 4, 4, 4}, ValueKind::Input);
  G->inputs().push_back(X);
  auto Conv = [&](const std::string &Name, Value *In, int Index) {
    Value *W = test::constF32(*G, Name + ".w", {4, 4, 1, 1},
                              std::vector<float>(16, 0.25f));
    Value *C = test::tensor(*G, Name, {1, 4, 4, 4});
    test::addOp(*G, "Conv", Name, {In, W}, {C}, Index)
        ->setAttr("kernel_shape", std::vector<int64_t>{1, 1});
    return C;
  };
  Value *C1 = Conv("conv1", X, 0);
  Value *A = test::tensor(*G, "a", {1, 4, 4, 4});
  test::addOp(*G, "Relu", "relu1", {C1}, {A}, 1);
  Value *C2 = Conv("conv2", A, 2);
  Value *Other = ResidualIsInput ? X : Conv("conv3", A, 3);
  Value *S = test::tensor(*G, "sum", {1, 4, 4, 4});
  test::addOp(*G, "Add", "add", {C2, Other}, {S}, 4);
  Value *Y = test::tensor(*G, "y", {1, 4, 4, 4});
  test::addOp(*G, "Relu", "relu2", {S}, {Y}, 5);
  G->outputs().push_back(Y);
  return G;
}

void prepare(Graph &G) {
  ASSERT_FALSE(bool(fuseActivations(G)));
  PipelineOptions O;
  O.PackPanel = 16;
  ASSERT_FALSE(bool(packWeights(G, O)));
}

} // namespace

TEST(Passes, ResidualAddAndReluFuseIntoConvEpilogue) {
  auto G = residualBlock(/*ResidualIsInput=*/true);
  prepare(*G);
  ASSERT_FALSE(bool(fuseResidualAdds(*G)));
  ASSERT_EQ(G->nodes().size(), 2u);
  const Node &Conv = *G->nodes()[1];
  ASSERT_EQ(Conv.numInputs(), 4u);
  EXPECT_EQ(Conv.input(2), nullptr); // no bias
  EXPECT_EQ(Conv.input(3), G->inputs()[0]);
  EXPECT_EQ(Conv.opType(), "cuvil.PackedConv");
  EXPECT_EQ(Conv.getInt("panel", 0), 16);
  EXPECT_EQ(fusedActivation(Conv).first, 0.0f);
  EXPECT_EQ(Conv.origin().str(), "conv2#2, add#4, relu2#5");
  EXPECT_EQ(G->outputs()[0], Conv.output(0));
  EXPECT_EQ(G->outputs()[0]->name(), "y");
  EXPECT_FALSE(bool(Conv.def()->Verify(Conv)));
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(Conv.def()->Lower(Conv, Calls)));
  ASSERT_EQ(Calls.size(), 1u);
  EXPECT_EQ(kabi::Conv2dPackedF32::from(Calls[0]).res.V, G->inputs()[0]);
}

TEST(Passes, ResidualGoesIntoTheLaterOfTwoConvs) {
  auto G = residualBlock(/*ResidualIsInput=*/false);
  prepare(*G);
  ASSERT_FALSE(bool(fuseResidualAdds(*G)));
  // conv3 runs after conv2, so it takes conv2's result as its residual.
  ASSERT_EQ(G->nodes().size(), 3u);
  const Node &Conv3 = *G->nodes()[2];
  EXPECT_EQ(Conv3.name(), "conv3");
  ASSERT_EQ(Conv3.numInputs(), 4u);
  EXPECT_EQ(Conv3.input(3), G->nodes()[1]->output(0));
}

TEST(Passes, ResidualNeedsAPackedConvWithoutActivation) {
  // Portable kernels (nothing packed): the Add stays.
  auto G = residualBlock(/*ResidualIsInput=*/true);
  ASSERT_FALSE(bool(fuseActivations(*G)));
  ASSERT_FALSE(bool(fuseResidualAdds(*G)));
  EXPECT_EQ(G->nodes().size(), 4u);
  // A Conv whose activation comes before the Add cannot take it.
  auto G2 = residualBlock(/*ResidualIsInput=*/true);
  prepare(*G2);
  setFusedActivation(*G2->nodes()[1], {0.0f, 6.0f});
  ASSERT_FALSE(bool(fuseResidualAdds(*G2)));
  EXPECT_EQ(G2->nodes().size(), 4u);
}

TEST(Passes, DeadNodesAreRemoved) {
  auto G = test::convBnRelu();
  G->outputs()[0] = G->nodes()[0]->output(0); // only the conv is needed
  ASSERT_FALSE(bool(eliminateDeadCode(*G)));
  EXPECT_EQ(G->nodes().size(), 1u);
}

TEST(Passes, VerifyListsEveryUnsupportedNode) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {4}, ValueKind::Input);
  Value *A = test::tensor(G, "a", {4});
  Value *B = test::tensor(G, "b", {4});
  G.addNode("RandomUniformLike", "weird1", nullptr, {X}, {A});
  G.addNode("LpNormalization", "weird2", nullptr, {A}, {B});
  std::string Msg = llvm::toString(verifyGraph(G));
  EXPECT_NE(Msg.find("node 'weird1' (RandomUniformLike): operator "
                     "'RandomUniformLike' is not supported"),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("node 'weird2' (LpNormalization)"), std::string::npos)
      << Msg;
}

TEST(Passes, RuntimeTrainingDropoutGetsAKernelOthersStayViews) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {4}, ValueKind::Input);
  Value *R = G.addValue("r", DType::F32, {}, ValueKind::Input);
  Value *T = G.addValue("t", DType::Bool, {}, ValueKind::Input);
  Value *Off = G.addValue("off", DType::Bool, {}, ValueKind::Constant);
  Off->setData({0});
  for (Value *V : {X, R, T})
    G.inputs().push_back(V);
  Value *A = test::tensor(G, "a", {4});
  Value *Y = test::tensor(G, "y", {4});
  Value *M = G.addValue("mask", DType::Bool, {4}, ValueKind::Intermediate);
  test::addOp(G, "Dropout", "inference", {X, R, Off}, {A}, 0);
  test::addOp(G, "Dropout", "training", {A, R, T}, {Y, M}, 1)
      ->setAttr("seed", int64_t(7));
  G.outputs() = {Y, M};
  ASSERT_FALSE(bool(specializeOps(G)));
  ASSERT_EQ(G.nodes().size(), 2u);
  const Node &Inf = *G.nodes()[0], &Tr = *G.nodes()[1];
  EXPECT_EQ(Inf.def()->place(), Placement::View);
  EXPECT_EQ(Tr.name(), "training");
  EXPECT_EQ(Tr.def()->place(), Placement::InPlace);
  EXPECT_EQ(Tr.input(0), Inf.output(0));
  EXPECT_EQ(Tr.getInt("seed", 0), 7);
  // The graph outputs keep their ONNX names.
  EXPECT_EQ(G.outputs()[0], Tr.output(0));
  EXPECT_EQ(G.outputs()[0]->name(), "y");
  EXPECT_EQ(G.outputs()[1]->name(), "mask");
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(Tr.def()->Lower(Tr, Calls)));
  ASSERT_EQ(Calls.size(), 1u);
  EXPECT_EQ(kabi::DropoutF32::from(Calls[0]).seed, 7);
}

namespace {

/// x[1,3,4,5] -> Transpose(P1) -> Transpose(P2) -> y, and the inner result
/// also a graph output when InnerIsOutput.
std::unique_ptr<Graph> transposePair(std::vector<int64_t> P1,
                                     std::vector<int64_t> P2,
                                     bool InnerIsOutput = false) {
  auto G = std::make_unique<Graph>("t");
  Value *X = G->addValue("x", DType::F32, {1, 3, 4, 5}, ValueKind::Input);
  G->inputs().push_back(X);
  auto Permuted = [](const Value *V, const std::vector<int64_t> &P) {
    std::vector<int64_t> S;
    for (int64_t A : P)
      S.push_back(V->shape()[A]);
    return S;
  };
  Value *A = test::tensor(*G, "a", Permuted(X, P1));
  test::addOp(*G, "Transpose", "t1", {X}, {A}, 0)->setAttr("perm", P1);
  Value *Y = test::tensor(*G, "y", Permuted(A, P2));
  test::addOp(*G, "Transpose", "t2", {A}, {Y}, 1)->setAttr("perm", P2);
  G->outputs().push_back(Y);
  if (InnerIsOutput)
    G->outputs().push_back(A);
  return G;
}

} // namespace

TEST(Passes, TransposePairThatUndoesItselfBecomesAView) {
  auto G = transposePair({0, 2, 3, 1}, {0, 3, 1, 2});
  ASSERT_FALSE(bool(eliminateTransposes(*G)));
  ASSERT_EQ(G->nodes().size(), 1u);
  const Node &N = *G->nodes()[0];
  EXPECT_EQ(N.opType(), "Reshape");
  EXPECT_EQ(N.def()->place(), Placement::View);
  EXPECT_EQ(N.input(0), G->inputs()[0]);
  EXPECT_EQ(N.output(0), G->outputs()[0]);
  EXPECT_EQ(N.origin().str(), "t2#1, t1#0");
  EXPECT_FALSE(bool(N.def()->Verify(N)));
}

TEST(Passes, TransposePairComposesIntoOne) {
  // [1,3,4,5] -> [1,4,5,3] -> [1,5,3,4]: one transpose of x with
  // perm'[i] = P1[P2[i]] = 0, 3, 1, 2.
  auto G = transposePair({0, 2, 3, 1}, {0, 2, 3, 1});
  ASSERT_FALSE(bool(eliminateTransposes(*G)));
  ASSERT_EQ(G->nodes().size(), 1u);
  const Node &N = *G->nodes()[0];
  EXPECT_EQ(N.opType(), "Transpose");
  EXPECT_EQ(N.input(0), G->inputs()[0]);
  EXPECT_EQ(N.getInts("perm", {}), (std::vector<int64_t>{0, 3, 1, 2}));
  EXPECT_EQ(N.output(0)->shape(), (std::vector<int64_t>{1, 5, 3, 4}));
  EXPECT_FALSE(bool(N.def()->Verify(N)));
}

TEST(Passes, InnerTransposeWithAnotherUseStays) {
  auto G = transposePair({0, 2, 3, 1}, {0, 3, 1, 2}, /*InnerIsOutput=*/true);
  ASSERT_FALSE(bool(eliminateTransposes(*G)));
  ASSERT_EQ(G->nodes().size(), 2u);
  EXPECT_EQ(G->nodes()[0]->opType(), "Transpose");
  EXPECT_EQ(G->nodes()[0]->origin().str(), "t1#0");
  EXPECT_EQ(G->nodes()[1]->opType(), "Reshape");
  EXPECT_EQ(G->nodes()[1]->input(0), G->inputs()[0]);
}

TEST(Passes, TransposeMovingOnlyUnitAxesBecomesAView) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 8, 1, 1}, ValueKind::Input);
  G.inputs().push_back(X);
  Value *Y = test::tensor(G, "y", {1, 1, 1, 8});
  test::addOp(G, "Transpose", "nhwc", {X}, {Y}, 0)
      ->setAttr("perm", std::vector<int64_t>{0, 2, 3, 1});
  Value *Z = test::tensor(G, "z", {1, 1, 8, 1});
  // Moves the 8 past a unit axis but also swaps two unit axes: still a view.
  test::addOp(G, "Transpose", "other", {X}, {Z}, 1)
      ->setAttr("perm", std::vector<int64_t>{3, 0, 1, 2});
  G.outputs() = {Y, Z};
  ASSERT_FALSE(bool(eliminateTransposes(G)));
  ASSERT_EQ(G.nodes().size(), 2u);
  for (const auto &N : G.nodes()) {
    EXPECT_EQ(N->opType(), "Reshape");
    EXPECT_EQ(N->input(0), X);
  }
  EXPECT_EQ(G.outputs()[0]->name(), "y");
}

TEST(Passes, TransposeThatMovesDataStays) {
  auto G = transposePair({0, 1, 3, 2}, {0, 2, 1, 3});
  ASSERT_FALSE(bool(eliminateTransposes(*G)));
  ASSERT_EQ(G->nodes().size(), 1u);
  // perm' = P1[P2[i]] = {0, 3, 1, 2}: a real transpose.
  EXPECT_EQ(G->nodes()[0]->opType(), "Transpose");
  EXPECT_EQ(G->nodes()[0]->getInts("perm", {}),
            (std::vector<int64_t>{0, 3, 1, 2}));
}

// lower-qdq finds products through the records' Product hooks: what each
// says about its node's weights and bias.
TEST(Passes, ProductHooksDescribeTheWeightOperand) {
  Graph G("g");
  Value *X = test::tensor(G, "x", {2, 4});
  Value *W = test::tensor(G, "w", {3, 4});
  Value *B = test::tensor(G, "b", {3});
  Value *Y = test::tensor(G, "y", {2, 3});
  Node *Gemm = test::addOp(G, "Gemm", "gemm", {X, W, B}, {Y}, 0);
  Gemm->setAttr("transB", int64_t(1));
  Gemm->setAttr("alpha", 0.5f);
  auto F = Gemm->def()->Product(*Gemm);
  ASSERT_TRUE(F.has_value());
  EXPECT_EQ(F->K, ProductForm::Kind::Gemm);
  EXPECT_EQ(F->WeightInput, 1);
  EXPECT_EQ(F->ChannelAxis, 0); // transB: w is [N, K]
  EXPECT_EQ(F->BiasInput, 2);
  EXPECT_FLOAT_EQ(F->Alpha, 0.5f);
  EXPECT_FALSE(F->QLinear);
  // transA, or a C that is not one value per column, is not a product
  // with a per-channel bias.
  Gemm->setAttr("transA", int64_t(1));
  EXPECT_FALSE(Gemm->def()->Product(*Gemm).has_value());
  Gemm->setAttr("transA", int64_t(0));
  Gemm->setInput(2, test::tensor(G, "c", {2, 1}));
  EXPECT_FALSE(Gemm->def()->Product(*Gemm).has_value());

  for (const char *Op : {"Conv", "MatMul", "QLinearConv", "QLinearMatMul"}) {
    const OpDef *D = lookupOp(Op);
    ASSERT_NE(D, nullptr);
    ASSERT_NE(D->Product, nullptr) << Op;
    auto P = D->Product(*Gemm); // these forms do not depend on the node
    ASSERT_TRUE(P.has_value()) << Op;
    const bool Conv = std::string(Op).find("Conv") != std::string::npos;
    EXPECT_EQ(P->K, Conv ? ProductForm::Kind::Conv : ProductForm::Kind::Gemm);
    EXPECT_EQ(P->ChannelAxis, Conv ? 0 : 1) << Op;
    EXPECT_EQ(P->QLinear, std::string(Op).rfind("QLinear", 0) == 0) << Op;
  }
  EXPECT_EQ(lookupOp("Add")->Product, nullptr);
  EXPECT_TRUE(lookupOp("Add")->has(Sum));
  EXPECT_FALSE(lookupOp("Sub")->has(Sum));
}
