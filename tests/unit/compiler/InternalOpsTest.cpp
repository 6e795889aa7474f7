//===- InternalOpsTest.cpp - The passes' internal ops (domain "cuvil") ----===//
//
// Each fusing/lowering pass makes its internal op where its pattern applies
// (and only there); the nodes keep the ONNX name and origin, print as
// cuvil.Name, verify and lower to the kernel they stand for.
//
//===----------------------------------------------------------------------===//
#include "TestGraphs.h"
#include "lowering/KernelAbi.h"
#include "ops/Shares.h"
#include "ops/nn/Conv.h"
#include "passes/Pass.h"

#include <gtest/gtest.h>
#include <limits>

using namespace cuvil;

namespace {

constexpr float Inf = std::numeric_limits<float>::infinity();

/// x[1,C,6,6] -> Conv(3x3, pad 1, M filters, group) -> a.
Node *addConv(Graph &G, Value *X, int64_t M, int64_t Group,
              const std::string &Name, int Index) {
  int64_t PerGroup = X->shape()[1] / Group;
  Value *W = test::constF32(G, Name + ".w", {M, PerGroup, 3, 3},
                            std::vector<float>(M * PerGroup * 9, 0.5f));
  Value *A = test::tensor(G, Name + ".y", {1, M, 6, 6});
  Node *N = test::addOp(G, "Conv", Name, {X, W}, {A}, Index);
  N->setAttr("kernel_shape", std::vector<int64_t>{3, 3});
  N->setAttr("pads", std::vector<int64_t>{1, 1, 1, 1});
  N->setAttr("group", Group);
  return N;
}

/// x[1,4,6,6] -> Conv(group) -> Act -> y, Act's extra inputs given.
std::unique_ptr<Graph> convAct(int64_t Group, const std::string &Act,
                               std::vector<Value *> (*Extra)(Graph &)) {
  auto G = std::make_unique<Graph>("ca");
  Value *X = G->addValue("x", DType::F32, {1, 4, 6, 6}, ValueKind::Input);
  G->inputs().push_back(X);
  Node *C = addConv(*G, X, 4, Group, "conv", 0);
  std::vector<Value *> Ins{C->output(0)};
  if (Extra)
    for (Value *V : Extra(*G))
      Ins.push_back(V);
  Value *Y = test::tensor(*G, "y", {1, 4, 6, 6});
  test::addOp(*G, Act, "act", Ins, {Y}, 1);
  G->outputs().push_back(Y);
  return G;
}

/// Clip's bounds 0 and 6 as constants.
std::vector<Value *> relu6Bounds(Graph &G) {
  return {test::constF32(G, "lo", {}, {0.0f}),
          test::constF32(G, "hi", {}, {6.0f})};
}

/// Clip's upper bound a graph input: known only at run time.
std::vector<Value *> runtimeBound(Graph &G) {
  Value *Hi = G.addValue("hi", DType::F32, {}, ValueKind::Input);
  G.inputs().push_back(Hi);
  return {test::constF32(G, "lo", {}, {0.0f}), Hi};
}

std::vector<KernelCall> lower(const Node &N) {
  EXPECT_FALSE(bool(N.def()->Verify(N))) << N.opType();
  std::vector<KernelCall> Calls;
  EXPECT_FALSE(bool(N.def()->Lower(N, Calls))) << N.opType();
  return Calls;
}

void pack(Graph &G, int64_t Panel = 8) {
  PipelineOptions O;
  O.PackPanel = Panel;
  ASSERT_FALSE(bool(packWeights(G, O)));
}

} // namespace

TEST(InternalOps, RegisteredUnderTheirOwnDomainOnly) {
  for (std::string_view Name : internalOps()) {
    const OpDef *D = lookupInternalOp(Name);
    ASSERT_NE(D, nullptr) << Name;
    EXPECT_EQ(std::string(D->Name), "cuvil." + std::string(Name));
    // Not an ONNX op, under either spelling.
    EXPECT_EQ(lookupOp(Name), nullptr) << Name;
    EXPECT_EQ(lookupOp(D->Name), nullptr) << Name;
  }
  EXPECT_NE(lookupInternalOp("PackedConv"), nullptr);
  EXPECT_EQ(lookupInternalOp("Conv"), nullptr);
  EXPECT_EQ(std::string(lookupOp("Conv")->Name), "Conv");
}

TEST(InternalOps, ReluBecomesTheClampOfAFusedConv) {
  auto G = convAct(1, "Relu", nullptr);
  ASSERT_FALSE(bool(fuseActivations(*G)));
  ASSERT_EQ(G->nodes().size(), 1u);
  const Node &N = *G->nodes()[0];
  EXPECT_EQ(N.def(), lookupInternalOp("FusedConv"));
  EXPECT_EQ(N.name(), "conv");
  EXPECT_EQ(N.origin().str(), "conv#0, act#1");
  EXPECT_EQ(fusedActivation(N), (std::pair<float, float>{0.0f, Inf}));
  auto Calls = lower(N);
  ASSERT_EQ(Calls.size(), 1u);
  EXPECT_EQ(Calls[0].Kernel, "cuvil_k_conv2d_f32");
  auto K = kabi::Conv2dF32::from(Calls[0]);
  EXPECT_EQ(K.act_hi, Inf);
  EXPECT_EQ(K.act_lo, 0.0f);
  EXPECT_NE(G->print().find("= cuvil.FusedConv(%x, %conv.w) {clamp_hi=inf, "
                            "clamp_lo=0.0, group=1,"),
            std::string::npos)
      << G->print();
}

TEST(InternalOps, ConstantClipFusesAndNarrowsAnEarlierClamp) {
  auto G = convAct(1, "Clip", relu6Bounds);
  ASSERT_FALSE(bool(fuseActivations(*G)));
  ASSERT_EQ(G->nodes().size(), 1u);
  Node &N = *G->nodes()[0];
  EXPECT_EQ(fusedActivation(N), (std::pair<float, float>{0.0f, 6.0f}));
  // A second activation of the fused result clamps into the same op.
  Value *Z = test::tensor(*G, "z", {1, 4, 6, 6});
  Node *Relu = test::addOp(*G, "Relu", "relu", {N.output(0)}, {Z}, 2);
  G->outputs() = {Z};
  ASSERT_TRUE(fuseActivation(*G, Relu));
  ASSERT_EQ(G->nodes().size(), 1u);
  EXPECT_EQ(G->nodes()[0]->def(), lookupInternalOp("FusedConv"));
  EXPECT_EQ(fusedActivation(*G->nodes()[0]),
            (std::pair<float, float>{0.0f, 6.0f}));
}

TEST(InternalOps, ActivationsThatCannotFuseStay) {
  // A Clip whose bound arrives at run time.
  auto G = convAct(1, "Clip", runtimeBound);
  ASSERT_FALSE(bool(fuseActivations(*G)));
  ASSERT_EQ(G->nodes().size(), 2u);
  EXPECT_EQ(G->nodes()[0]->def(), lookupOp("Conv"));
  // A Conv result that is also a graph output.
  auto G2 = convAct(1, "Relu", nullptr);
  G2->outputs().push_back(G2->nodes()[0]->output(0));
  ASSERT_FALSE(bool(fuseActivations(*G2)));
  EXPECT_EQ(G2->nodes().size(), 2u);
  EXPECT_EQ(G2->nodes()[0]->opType(), "Conv");
  // An activation whose producer has no clamp epilogue (Sigmoid).
  auto G3 = convAct(1, "Relu", nullptr);
  Node *Act = G3->nodes()[1].get();
  Value *S = test::tensor(*G3, "s", {1, 4, 6, 6});
  test::addOp(*G3, "Sigmoid", "sig", {G3->nodes()[0]->output(0)}, {S}, 2);
  Act->setInput(0, S);
  G3->reorderNodes({G3->nodes()[0].get(), G3->nodes()[2].get(), Act});
  ASSERT_FALSE(bool(fuseActivations(*G3)));
  EXPECT_EQ(G3->nodes().size(), 3u);
}

TEST(InternalOps, GemmAndReluBecomeAFusedThenPackedGemm) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {2, 3}, ValueKind::Input);
  G.inputs().push_back(X);
  Value *B =
      test::constF32(G, "B", {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  Value *H = test::tensor(G, "h", {2, 4});
  test::addOp(G, "Gemm", "fc", {X, B}, {H}, 0)->setAttr("alpha", 2.0f);
  Value *Y = test::tensor(G, "y", {2, 4});
  test::addOp(G, "Relu", "relu", {H}, {Y}, 1);
  G.outputs().push_back(Y);
  ASSERT_FALSE(bool(fuseActivations(G)));
  ASSERT_EQ(G.nodes().size(), 1u);
  EXPECT_EQ(G.nodes()[0]->def(), lookupInternalOp("FusedGemm"));
  EXPECT_EQ(lower(*G.nodes()[0])[0].Kernel, "cuvil_k_gemm_f32");
  pack(G, 2);
  const Node &N = *G.nodes()[0];
  EXPECT_EQ(N.def(), lookupInternalOp("PackedGemm"));
  EXPECT_EQ(N.getInt("panel", 0), 2);
  EXPECT_EQ(N.origin().str(), "fc#0, relu#1");
  EXPECT_EQ(fusedActivation(N), (std::pair<float, float>{0.0f, Inf}));
  // Columns 0-1 of alpha * B, row by row, then columns 2-3.
  EXPECT_EQ(N.input(1)->f32()[0], 2.0f);
  EXPECT_EQ(N.input(1)->f32()[1], 4.0f);
  EXPECT_EQ(N.input(1)->f32()[2], 10.0f);
  auto Calls = lower(N);
  EXPECT_EQ(Calls[0].Kernel, "cuvil_k_gemm_packed_f32");
  EXPECT_EQ(kabi::GemmPackedF32::from(Calls[0]).act_hi, Inf);
}

namespace {

/// The Split of a Gemm y[M, N] = x[M, 8] * B[8, N] packed with panels of
/// 4, for 4 cores.
std::vector<std::vector<KernelCall>> splitGemm(int64_t M, int64_t N) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {M, 8}, ValueKind::Input);
  G.inputs().push_back(X);
  Value *B = test::constF32(G, "B", {8, N}, std::vector<float>(8 * N, 1));
  Value *Y = test::tensor(G, "y", {M, N});
  test::addOp(G, "Gemm", "fc", {X, B}, {Y}, 0);
  G.outputs().push_back(Y);
  pack(G, 4);
  const Node &P = *G.nodes()[0];
  std::vector<std::vector<KernelCall>> Shares;
  EXPECT_EQ(P.def(), lookupInternalOp("PackedGemm"));
  P.def()->Split(P, lower(P), 4, Shares);
  return Shares;
}

} // namespace

TEST(InternalOps, GemmSharesCoverTheOutputOnce) {
  // Batch 1, 40 columns: 10 panels as 3, 3, 2, 2, all of A each.
  int64_t Next = 0;
  for (const auto &S : splitGemm(1, 40)) {
    auto K = kabi::GemmPackedF32::from(S[0]);
    EXPECT_EQ(K.j0, Next);
    EXPECT_EQ(K.j0 % 4, 0);
    EXPECT_EQ(K.m, 1);
    EXPECT_EQ(K.a.ByteOffset, 0);
    Next = K.j1;
  }
  EXPECT_EQ(Next, 40);
  // 12 rows of one panel: 3 rows each, A and Y moved to them.
  int64_t Row = 0;
  for (const auto &S : splitGemm(12, 4)) {
    auto K = kabi::GemmPackedF32::from(S[0]);
    EXPECT_EQ(K.m, 3);
    EXPECT_EQ(K.a.ByteOffset, Row * 8 * 4);
    EXPECT_EQ(K.y.ByteOffset, Row * 4 * 4);
    EXPECT_EQ(std::make_pair(K.j0, K.j1),
              std::make_pair(int64_t(0), int64_t(4)));
    Row += K.m;
  }
  EXPECT_EQ(Row, 12);
}

TEST(InternalOps, PackingMakesPackedAndDepthwiseConvs) {
  auto G = convAct(1, "Relu", nullptr);
  ASSERT_FALSE(bool(fuseActivations(*G)));
  pack(*G);
  const Node &P = *G->nodes()[0];
  EXPECT_EQ(P.opType(), "cuvil.PackedConv");
  EXPECT_EQ(P.getInt("panel", 0), 8);
  EXPECT_EQ(P.input(1)->name(), "conv.w.packed");
  EXPECT_EQ(fusedActivation(P).first, 0.0f); // the clamp stays
  EXPECT_EQ(lower(P)[0].Kernel, "cuvil_k_conv2d_packed_f32");

  auto D = convAct(4, "Relu", nullptr);
  const Value *W = D->nodes()[0]->input(1);
  pack(*D);
  const Node &Dw = *D->nodes()[0];
  EXPECT_EQ(Dw.opType(), "cuvil.DepthwiseConv");
  EXPECT_EQ(Dw.input(1), W); // already in the kernel's order
  EXPECT_FALSE(Dw.hasAttr("panel"));
  EXPECT_EQ(lower(Dw)[0].Kernel, "cuvil_k_dwconv2d_f32");
  EXPECT_EQ(D->nodes()[1]->opType(), "Relu");
}

TEST(InternalOps, ConvsWithoutAPackedKernelStay) {
  // Grouped but not depthwise.
  auto G = convAct(2, "Relu", nullptr);
  pack(*G);
  EXPECT_EQ(G->nodes()[0]->opType(), "Conv");
  // Weights known only at run time.
  auto G2 = convAct(1, "Relu", nullptr);
  Value *W = G2->addValue("w", DType::F32, {4, 4, 3, 3}, ValueKind::Input);
  G2->inputs().push_back(W);
  G2->nodes()[0]->setInput(1, W);
  pack(*G2);
  EXPECT_EQ(G2->nodes()[0]->opType(), "Conv");
  // No packed kernels on the target.
  auto G3 = convAct(1, "Relu", nullptr);
  pack(*G3, 0);
  EXPECT_EQ(G3->nodes()[0]->opType(), "Conv");
}

TEST(InternalOps, BatchNormAfterGemmFoldsOtherwiseBecomesChannelAffine) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 2, 3}, ValueKind::Input);
  G.inputs().push_back(X);
  std::vector<Value *> Ins{X};
  for (const char *P : {"s", "b", "m", "v"})
    Ins.push_back(test::constF32(G, P, {2}, {1.0f, 2.0f}));
  Value *Y = test::tensor(G, "y", {1, 2, 3});
  test::addOp(G, "BatchNormalization", "bn", Ins, {Y}, 0);
  G.outputs().push_back(Y);
  ASSERT_FALSE(bool(foldBatchNorm(G)));
  ASSERT_EQ(G.nodes().size(), 1u);
  const Node &A = *G.nodes()[0];
  EXPECT_EQ(A.opType(), "cuvil.ChannelAffine");
  EXPECT_TRUE(A.attrs().empty());
  EXPECT_EQ(A.output(0), Y);
  // s / sqrt(v + eps): 1 / sqrt(1 + 1e-5) for channel 0.
  EXPECT_NEAR(A.input(1)->f32()[0], 1.0f, 1e-5);
  EXPECT_EQ(lower(A)[0].Kernel, "cuvil_k_channel_affine_f32");
  EXPECT_EQ(A.def()->place(), Placement::InPlace);

  Graph G2("g2");
  Value *X2 = G2.addValue("x", DType::F32, {2, 3}, ValueKind::Input);
  G2.inputs().push_back(X2);
  Value *B = test::constF32(G2, "B", {3, 2}, {1, 2, 3, 4, 5, 6});
  Value *H = test::tensor(G2, "h", {2, 2});
  test::addOp(G2, "Gemm", "fc", {X2, B}, {H}, 0);
  std::vector<Value *> Ins2{H};
  for (const char *P : {"s", "b", "m", "v"})
    Ins2.push_back(test::constF32(G2, P, {2}, {1.0f, 2.0f}));
  Value *Y2 = test::tensor(G2, "y", {2, 2});
  test::addOp(G2, "BatchNormalization", "bn", Ins2, {Y2}, 1);
  G2.outputs().push_back(Y2);
  ASSERT_FALSE(bool(foldBatchNorm(G2)));
  ASSERT_EQ(G2.nodes().size(), 1u);
  EXPECT_EQ(G2.nodes()[0]->opType(), "Gemm");
  EXPECT_EQ(G2.nodes()[0]->origin().str(), "fc#0, bn#1");
  EXPECT_EQ(G2.nodes()[0]->numInputs(), 3u); // the folded bias
}

TEST(InternalOps, OnlyAPackedConvTakesAResidual) {
  // A depthwise Conv has no residual epilogue: the Add stays.
  auto G = std::make_unique<Graph>("dw");
  Value *X = G->addValue("x", DType::F32, {1, 4, 6, 6}, ValueKind::Input);
  G->inputs().push_back(X);
  Node *C = addConv(*G, X, 4, 4, "dw", 0);
  Value *S = test::tensor(*G, "s", {1, 4, 6, 6});
  test::addOp(*G, "Add", "add", {C->output(0), X}, {S}, 1);
  G->outputs().push_back(S);
  pack(*G);
  ASSERT_FALSE(bool(fuseResidualAdds(*G)));
  ASSERT_EQ(G->nodes().size(), 2u);
  EXPECT_EQ(G->nodes()[0]->opType(), "cuvil.DepthwiseConv");
  // The same with a group-1 Conv: packed, it takes the Add.
  auto G2 = std::make_unique<Graph>("pc");
  Value *X2 = G2->addValue("x", DType::F32, {1, 4, 6, 6}, ValueKind::Input);
  G2->inputs().push_back(X2);
  Node *C2 = addConv(*G2, X2, 4, 1, "pc", 0);
  Value *S2 = test::tensor(*G2, "s", {1, 4, 6, 6});
  test::addOp(*G2, "Add", "add", {X2, C2->output(0)}, {S2}, 1);
  G2->outputs().push_back(S2);
  pack(*G2);
  ASSERT_FALSE(bool(fuseResidualAdds(*G2)));
  ASSERT_EQ(G2->nodes().size(), 1u);
  const Node &P = *G2->nodes()[0];
  EXPECT_EQ(P.opType(), "cuvil.PackedConv");
  EXPECT_EQ(P.input(3), X2);
  EXPECT_EQ(P.origin().str(), "pc#0, add#1");
  EXPECT_EQ(kabi::Conv2dPackedF32::from(lower(P)[0]).res.V, X2);
}

TEST(InternalOps, ChannelSharesAreBalancedWholeUnits) {
  using Ranges = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(shareRanges(64, 16, 4),
            (Ranges{{0, 16}, {16, 32}, {32, 48}, {48, 64}}));
  // Three units for four cores: three shares, the last ending short.
  EXPECT_EQ(shareRanges(40, 16, 4), (Ranges{{0, 16}, {16, 32}, {32, 40}}));
  EXPECT_EQ(shareRanges(10, 1, 4), (Ranges{{0, 3}, {3, 6}, {6, 8}, {8, 10}}));
  EXPECT_TRUE(shareRanges(16, 16, 4).empty()); // one unit: no split
  EXPECT_TRUE(shareRanges(64, 16, 1).empty());
}

namespace {

/// The Split of the single node of a Conv(x: [1, C, 6, 6], M filters,
/// Group) after packing with panels of 4, for 4 cores.
std::vector<std::vector<KernelCall>> splitConv(int64_t C, int64_t M,
                                               int64_t Group) {
  auto G = std::make_unique<Graph>("g");
  Value *X = G->addValue("x", DType::F32, {1, C, 6, 6}, ValueKind::Input);
  G->inputs().push_back(X);
  Node *Conv = addConv(*G, X, M, Group, "conv", 0);
  G->outputs().push_back(Conv->output(0));
  pack(*G, 4);
  const Node &P = *G->nodes()[0];
  std::vector<std::vector<KernelCall>> Shares;
  EXPECT_NE(P.def()->Split, nullptr) << P.opType();
  if (P.def()->Split)
    P.def()->Split(P, lower(P), 4, Shares);
  for (const auto &S : Shares)
    EXPECT_EQ(S.size(), 1u);
  return Shares;
}

} // namespace

TEST(InternalOps, ConvSharesCoverTheOutputOnce) {
  // Depthwise, 10 channels: 3, 3, 2, 2 channels, each reading its own.
  int64_t Next = 0; // the next channel a share must start at
  for (const auto &S : splitConv(10, 10, 10)) {
    auto K = kabi::Dwconv2dF32::from(S[0]);
    EXPECT_EQ(K.x.ByteOffset, Next * 36 * 4);
    EXPECT_EQ(K.w.ByteOffset, Next * 9 * 4);
    EXPECT_EQ(K.y.ByteOffset, Next * 36 * 4);
    Next += K.c;
  }
  EXPECT_EQ(Next, 10);
  // Packed, 16 channels: four panels, one per core (whole panels, all of
  // the input, all positions).
  Next = 0;
  for (const auto &S : splitConv(3, 16, 1)) {
    auto K = kabi::Conv2dPackedF32::from(S[0]);
    EXPECT_EQ(K.m, 4);
    EXPECT_EQ(K.wp.ByteOffset, Next * 3 * 9 * 4);
    EXPECT_EQ(K.x.ByteOffset, 0);
    EXPECT_EQ(K.y.ByteOffset, Next * 36 * 4);
    EXPECT_EQ(std::make_pair(K.oy0, K.oy1),
              std::make_pair(int64_t(0), int64_t(6)));
    Next += K.m;
  }
  EXPECT_EQ(Next, 16);
  // Packed, 4 channels: one panel, so the cores share the output rows
  // instead (2, 2, 1, 1 of the 6), each for every channel.
  int64_t Row = 0;
  for (const auto &S : splitConv(3, 4, 1)) {
    auto K = kabi::Conv2dPackedF32::from(S[0]);
    EXPECT_EQ(K.m, 4);
    EXPECT_EQ(K.y.ByteOffset, 0);
    EXPECT_EQ(K.oy0, Row);
    EXPECT_EQ(std::make_pair(K.ox0, K.ox1),
              std::make_pair(int64_t(0), int64_t(6)));
    Row = K.oy1;
  }
  EXPECT_EQ(Row, 6);
  // A batch of 2: the kernels' batch stride is the whole output, no split.
  auto G = std::make_unique<Graph>("b2");
  Value *X = G->addValue("x", DType::F32, {2, 4, 6, 6}, ValueKind::Input);
  G->inputs().push_back(X);
  Value *W = test::constF32(*G, "w", {8, 4, 3, 3}, std::vector<float>(288, 1));
  Value *Y = test::tensor(*G, "y", {2, 8, 6, 6});
  Node *N = test::addOp(*G, "Conv", "conv", {X, W}, {Y}, 0);
  N->setAttr("kernel_shape", std::vector<int64_t>{3, 3});
  N->setAttr("pads", std::vector<int64_t>{1, 1, 1, 1});
  G->outputs().push_back(Y);
  pack(*G, 4);
  const Node &P = *G->nodes()[0];
  std::vector<std::vector<KernelCall>> Shares;
  P.def()->Split(P, lower(P), 4, Shares);
  EXPECT_TRUE(Shares.empty());
}
