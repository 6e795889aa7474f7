//===- QuantOpsTest.cpp - Quantization ops: verify and lower --------------===//
#include "TestGraphs.h"
#include "lowering/KernelAbi.h"
#include "ops/OpRegistry.h"
#include "passes/Pass.h"

#include <gtest/gtest.h>

#include <cstring>
#include <tuple>

#include <cuvil/kernels.h>

using namespace cuvil;
using test::verifyMessage;

namespace {

Value *val(Graph &G, const std::string &Name, DType T,
           std::vector<int64_t> Shape) {
  return G.addValue(Name, T, std::move(Shape), ValueKind::Input);
}

} // namespace

TEST(QuantOps, QuantizeLinearPerAxisSplitsAroundTheAxis) {
  Graph G("g");
  Value *X = val(G, "x", DType::F32, {2, 3, 4, 5});
  Value *S = val(G, "s", DType::F32, {4});
  Value *Z = val(G, "z", DType::I8, {4});
  Value *Y = G.addValue("y", DType::I8, {2, 3, 4, 5}, ValueKind::Intermediate);
  Node *N = test::addOp(G, "QuantizeLinear", "q", {X, S, Z}, {Y}, 0);
  N->setAttr("axis", int64_t(-2));
  EXPECT_EQ(verifyMessage(*N), "");
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(N->def()->Lower(*N, Calls)));
  ASSERT_EQ(Calls.size(), 1u);
  EXPECT_EQ(Calls[0].Kernel, "cuvil_k_quantize_f32");
  auto K = kabi::QuantizeF32::from(Calls[0]);
  EXPECT_EQ(K.outer, 6);
  EXPECT_EQ(K.axis_dim, 4);
  EXPECT_EQ(K.inner, 5);
  EXPECT_EQ(K.y_type, CUVIL_Q_I8);
}

TEST(QuantOps, RejectsWhatTheKernelsCannotCompute) {
  Graph G("g");
  Value *X = val(G, "x", DType::F32, {2, 3});
  Value *S3 = val(G, "s3", DType::F32, {3});
  Value *S2 = val(G, "s2", DType::F32, {2});
  Value *Z = val(G, "z", DType::U8, {});
  Value *Y16 = G.addValue("y16", DType::U16, {2, 3}, ValueKind::Intermediate);
  // A value has one producer: each node gets its own output.
  auto Y = [&](const char *Name) {
    return G.addValue(Name, DType::U8, {2, 3}, ValueKind::Intermediate);
  };

  // 16-bit output.
  Node *A = test::addOp(G, "QuantizeLinear", "a", {X, S3, nullptr}, {Y16}, 0);
  EXPECT_NE(verifyMessage(*A).find("not supported"), std::string::npos);
  // Blocked quantization.
  Node *B =
      test::addOp(G, "QuantizeLinear", "b", {X, S3, nullptr}, {Y("yb")}, 1);
  B->setAttr("block_size", int64_t(2));
  EXPECT_NE(verifyMessage(*B).find("block_size=2"), std::string::npos);
  // Per-axis scale that does not match the axis.
  Node *C =
      test::addOp(G, "QuantizeLinear", "c", {X, S2, nullptr}, {Y("yc")}, 2);
  EXPECT_NE(verifyMessage(*C).find("only one value or one per"),
            std::string::npos);
  // Per-axis scale with a per-tensor zero point.
  Node *D = test::addOp(G, "QuantizeLinear", "d", {X, S3, Z}, {Y("yd")}, 3);
  EXPECT_NE(verifyMessage(*D).find("differ in shape"), std::string::npos);
}

TEST(QuantOps, QLinearMatMulTakesPerColumnB) {
  Graph G("g");
  Value *A = val(G, "a", DType::U8, {2, 4});
  Value *B = val(G, "b", DType::I8, {4, 3});
  Value *One = val(G, "one", DType::F32, {});
  Value *AZ = val(G, "az", DType::U8, {});
  Value *BS = val(G, "bs", DType::F32, {3});
  Value *BZ = val(G, "bz", DType::I8, {3});
  Value *YZ = val(G, "yz", DType::U8, {});
  Value *Y = G.addValue("y", DType::U8, {2, 3}, ValueKind::Intermediate);
  Node *N = test::addOp(G, "QLinearMatMul", "m",
                        {A, One, AZ, B, BS, BZ, One, YZ}, {Y}, 0);
  EXPECT_EQ(verifyMessage(*N), "");
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(N->def()->Lower(*N, Calls)));
  ASSERT_EQ(Calls.size(), 1u);
  EXPECT_EQ(Calls[0].Kernel, "cuvil_k_qlinear_matmul");
  EXPECT_EQ(Calls[0].Args.back().I, 1);
  EXPECT_EQ(N->def()->Macs(*N), 2 * 3 * 4);
}

namespace {

Value *constant(Graph &G, const std::string &Name, DType T,
                std::vector<int64_t> Shape, std::vector<uint8_t> Bytes) {
  Value *V = G.addValue(Name, T, std::move(Shape), ValueKind::Constant);
  V->setData(std::move(Bytes));
  return V;
}

std::vector<uint8_t> f32Bytes(float F) {
  std::vector<uint8_t> B(4);
  std::memcpy(B.data(), &F, 4);
  return B;
}

/// QLinearConv(x: uint8 [1, 8, 10, 7], 8 x 8 x K x K int8 weights, pads
/// K / 2) lowered by lower-qdq as for a78 (panels of 8 by 4 steps, the
/// direct kernel for a window of several taps) for Cores cores.
std::unique_ptr<Graph> quantConv(int64_t Cores, int64_t K = 3) {
  auto G = std::make_unique<Graph>("g");
  Value *X = val(*G, "x", DType::U8, {1, 8, 10, 7});
  G->inputs().push_back(X);
  Value *S = constant(*G, "s", DType::F32, {}, f32Bytes(0.05f));
  Value *Z = constant(*G, "z", DType::U8, {}, {3});
  std::vector<uint8_t> W(static_cast<size_t>(8 * 8 * K * K));
  for (size_t I = 0; I < W.size(); ++I)
    W[I] = static_cast<uint8_t>(I * 37 % 251);
  Value *Wv = constant(*G, "w", DType::I8, {8, 8, K, K}, W);
  Value *WZ = constant(*G, "wz", DType::I8, {}, {0});
  Value *Y =
      G->addValue("y", DType::U8, {1, 8, 10, 7}, ValueKind::Intermediate);
  Node *N = test::addOp(*G, "QLinearConv", "conv", {X, S, Z, Wv, S, WZ, S, Z},
                        {Y}, 0);
  N->setAttr("kernel_shape", std::vector<int64_t>{K, K});
  N->setAttr("pads", std::vector<int64_t>(4, K / 2));
  G->outputs().push_back(Y);
  PipelineOptions O;
  O.QPackMr = 8;
  O.QPackKr = 4;
  O.QPackDirect = true;
  O.Cores = Cores;
  EXPECT_FALSE(bool(lowerQdq(*G, O)));
  return G;
}

} // namespace

// --cores 4: the direct convolution's node holds a scratch for 4 ranges of
// rows, and its split gives each range its own part of it, end to end.
TEST(QuantOps, DirectConvSplitsRowsEachOnItsOwnScratch) {
  auto One = quantConv(1), Four = quantConv(4);
  ASSERT_EQ(Four->nodes().size(), 1u);
  const Node &N = *Four->nodes()[0];
  ASSERT_EQ(N.opType(), "cuvil.QConv");
  EXPECT_EQ(verifyMessage(N), "");
  EXPECT_EQ(N.getInt("direct", 0), 1);
  EXPECT_EQ(N.getInt("shares", 1), 4);
  ASSERT_EQ(N.outputs().size(), 2u);
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(N.def()->Lower(N, Calls)));
  ASSERT_EQ(Calls.size(), 1u);
  const auto Whole = kabi::Qconv2dDirectS8::from(Calls[0]);
  EXPECT_EQ(std::make_pair(Whole.oy0, Whole.oy1),
            std::make_pair(int64_t(0), int64_t(10)));
  // A one-core build's scratch is one call's.
  const std::vector<int64_t> &Geom = Whole.geom.Array;
  EXPECT_EQ(One->nodes()[0]->output(1)->numElements(),
            cuvil_qdirect_scratch(Geom.data()));
  EXPECT_FALSE(One->nodes()[0]->hasAttr("shares"));

  std::vector<std::vector<KernelCall>> Shares;
  N.def()->Split(N, Calls, 4, Shares);
  ASSERT_EQ(Shares.size(), 4u);
  int64_t Row = 0, Scratch = 0;
  for (const auto &S : Shares) {
    ASSERT_EQ(S.size(), 1u);
    const auto K = kabi::Qconv2dDirectS8::from(S[0]);
    EXPECT_EQ(K.oy0, Row);
    EXPECT_EQ(K.scratch.V, N.output(1));
    EXPECT_EQ(K.scratch.ByteOffset, Scratch);
    EXPECT_EQ(K.y.ByteOffset, 0); // every channel, its rows
    Scratch += cuvil_qdirect_scratch_rows(Geom.data(), K.oy1 - K.oy0);
    Row = K.oy1;
  }
  EXPECT_EQ(Row, 10);
  EXPECT_EQ(Scratch, N.output(1)->numElements());
  // Fewer cores than the node was built for: fewer shares, same scratch.
  Shares.clear();
  N.def()->Split(N, Calls, 2, Shares);
  EXPECT_EQ(Shares.size(), 2u);
  // A scratch the wrong size is an internal error, not a silent overrun.
  Node &M = *One->nodes()[0];
  M.setAttr("shares", int64_t(4));
  EXPECT_NE(verifyMessage(M).find("scratch is not"), std::string::npos);
}

// --cores 4: a pointwise convolution of one panel (8 channels) splits by
// positions of its 10 x 7 planes, in runs of 48 (its rows are shorter
// than a block), every share on every channel and all the weights.
TEST(QuantOps, PackedConvSplitsPositions) {
  auto G = quantConv(4, 1);
  const Node &N = *G->nodes()[0];
  ASSERT_EQ(N.opType(), "cuvil.QConv");
  EXPECT_EQ(N.getInt("direct", 0), 0);
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(N.def()->Lower(N, Calls)));
  const auto Whole = kabi::Qconv2dPackedS8::from(Calls[0]);
  EXPECT_EQ(std::make_pair(Whole.p0, Whole.p1),
            std::make_pair(int64_t(0), int64_t(70)));
  std::vector<std::vector<KernelCall>> Shares;
  N.def()->Split(N, Calls, 4, Shares);
  ASSERT_EQ(Shares.size(), 2u);
  const auto A = kabi::Qconv2dPackedS8::from(Shares[0][0]),
             B = kabi::Qconv2dPackedS8::from(Shares[1][0]);
  EXPECT_EQ(std::make_tuple(A.p0, A.p1, B.p0, B.p1),
            std::make_tuple(int64_t(0), int64_t(48), int64_t(48), int64_t(70)));
  for (const auto &K : {A, B}) {
    EXPECT_EQ(K.y.ByteOffset, 0);
    EXPECT_EQ(K.wp.ByteOffset, 0);
    EXPECT_EQ(K.geom.Array, Whole.geom.Array);
  }
}

// --cores: a residual sum splits into ranges of whole 256-element units,
// each share reading and writing its own range (here in place over a).
TEST(QuantOps, QAddSplitsIntoElementRanges) {
  Graph G("g");
  Value *A = val(G, "a", DType::I8, {1, 10, 10, 10});
  Value *B = val(G, "b", DType::I8, {1, 10, 10, 10});
  const OpDef *D = lookupInternalOp("QAdd");
  ASSERT_NE(D, nullptr);
  Node *N = G.addNode("cuvil.QAdd", "add", D, {A, B}, {A});
  for (auto [Name, V] : {std::pair<const char *, int64_t>{"a_mult", 1 << 20},
                         {"b_mult", 1 << 19},
                         {"shift", 21},
                         {"y_lo", -128},
                         {"y_hi", 127},
                         {"lanes", 1}})
    N->setAttr(Name, V);
  EXPECT_EQ(verifyMessage(*N), "");
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(D->Lower(*N, Calls)));
  std::vector<std::vector<KernelCall>> Shares;
  D->Split(*N, Calls, 3, Shares);
  // 1,000 elements: 4 units, as 2, 1, 1.
  ASSERT_EQ(Shares.size(), 3u);
  int64_t Next = 0;
  for (const auto &S : Shares) {
    const auto K = kabi::QaddLanesS8::from(S[0]);
    EXPECT_EQ(K.a.ByteOffset, Next);
    EXPECT_EQ(K.b.ByteOffset, Next);
    EXPECT_EQ(K.y.ByteOffset, Next);
    EXPECT_EQ(K.y.V, A);
    Next += K.n;
  }
  EXPECT_EQ(Next, 1000);
  EXPECT_EQ(kabi::QaddLanesS8::from(Shares[0][0]).n, 512);
  // 256 elements or fewer: one unit, no split.
  Graph Small("s");
  Value *X = val(Small, "x", DType::I8, {256});
  Node *T = Small.addNode("cuvil.QAdd", "t", D, {X, X}, {X});
  T->setAttr("shift", int64_t(21));
  Calls.clear();
  Shares.clear();
  ASSERT_FALSE(bool(D->Lower(*T, Calls)));
  D->Split(*T, Calls, 4, Shares);
  EXPECT_TRUE(Shares.empty());
}

// --cores: a per-tensor quantization (an INT8 model's input) splits into
// ranges of 256 elements; a per-axis one stays whole.
TEST(QuantOps, PerTensorQuantizeSplitsIntoElementRanges) {
  Graph G("g");
  Value *X = val(G, "x", DType::F32, {1, 3, 20, 20});
  Value *S = val(G, "s", DType::F32, {});
  Value *Z = val(G, "z", DType::I8, {});
  Value *Y =
      G.addValue("y", DType::I8, {1, 3, 20, 20}, ValueKind::Intermediate);
  Node *N = test::addOp(G, "QuantizeLinear", "q", {X, S, Z}, {Y}, 0);
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(N->def()->Lower(*N, Calls)));
  std::vector<std::vector<KernelCall>> Shares;
  N->def()->Split(*N, Calls, 4, Shares);
  ASSERT_EQ(Shares.size(), 4u); // 5 units: 2, 1, 1, 1
  int64_t Next = 0;
  for (const auto &Share : Shares) {
    const auto K = kabi::QuantizeF32::from(Share[0]);
    EXPECT_EQ(K.x.ByteOffset, 4 * Next);
    EXPECT_EQ(K.y.ByteOffset, Next);
    EXPECT_EQ(K.outer, 1);
    EXPECT_EQ(K.axis_dim, 1);
    Next += K.inner;
  }
  EXPECT_EQ(Next, 1200);
  Value *S3 = val(G, "s3", DType::F32, {3});
  Value *Y3 =
      G.addValue("y3", DType::I8, {1, 3, 20, 20}, ValueKind::Intermediate);
  Node *P = test::addOp(G, "QuantizeLinear", "p", {X, S3, nullptr}, {Y3}, 1);
  P->setAttr("axis", int64_t(1));
  Calls.clear();
  Shares.clear();
  ASSERT_FALSE(bool(P->def()->Lower(*P, Calls)));
  P->def()->Split(*P, Calls, 4, Shares);
  EXPECT_TRUE(Shares.empty());
}
