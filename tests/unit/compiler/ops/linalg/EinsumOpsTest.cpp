//===- EinsumOpsTest.cpp - Einsum: equations, shapes, kernels, errors -----===//
#include "TestGraphs.h"
#include "lowering/KernelAbi.h"
#include "ops/ShapeRules.h"

#include <cuvil/kernels.h>

#include <gtest/gtest.h>

using namespace cuvil;
using test::verifyMessage;

namespace {

using Shapes = std::vector<std::vector<int64_t>>;

/// An Einsum node of equation Eq on inputs of the given shapes and type,
/// with output shape Out.
Node *einsum(Graph &G, const std::string &Eq, const Shapes &In,
             std::vector<int64_t> Out, DType T = DType::F32) {
  std::vector<Value *> Ins;
  for (size_t I = 0; I < In.size(); ++I)
    Ins.push_back(
        G.addValue(fmt::format("x{}", I), T, In[I], ValueKind::Input));
  Value *Y = G.addValue("y", T, std::move(Out), ValueKind::Intermediate);
  Node *N = test::addOp(G, "Einsum", "es", Ins, {Y}, 0);
  N->setAttr("equation", Eq);
  return N;
}

KernelCall lowerOne(const Node &N) {
  EXPECT_FALSE(bool(N.def()->Verify(N)));
  std::vector<KernelCall> Calls;
  EXPECT_FALSE(bool(N.def()->Lower(N, Calls)));
  EXPECT_EQ(Calls.size(), 1u);
  return Calls.empty() ? KernelCall{} : Calls[0];
}

/// The tensor argument's value name, or "null".
std::string operand(const KernelArg &A) {
  return A.K == KernelArg::Kind::Tensor ? A.V->name() : "null";
}

} // namespace

TEST(EinsumOps, MatrixProductCallsGemm) {
  Graph G("g");
  Node *N = einsum(G, "ij,jk->ik", {{3, 4}, {4, 5}}, {3, 5});
  KernelCall C = lowerOne(*N);
  ASSERT_EQ(C.Kernel, "cuvil_k_gemm_f32");
  auto K = kabi::GemmF32::from(C);
  EXPECT_EQ(operand(K.a), "x0");
  EXPECT_EQ(operand(K.b), "x1");
  EXPECT_EQ(operand(K.c), "null");
  EXPECT_EQ((std::vector<int64_t>{K.m, K.n, K.k, K.trans_a, K.trans_b}),
            (std::vector<int64_t>{3, 5, 4, 0, 0}));
  EXPECT_EQ(N->def()->Macs(*N), 3 * 4 * 5);
}

TEST(EinsumOps, InnerProductIsAOneByOneGemm) {
  Graph G("g");
  Node *N = einsum(G, "i, i", {{7}, {7}}, {});
  KernelCall C = lowerOne(*N);
  ASSERT_EQ(C.Kernel, "cuvil_k_gemm_f32");
  auto K = kabi::GemmF32::from(C);
  EXPECT_EQ((std::vector<int64_t>{K.m, K.n, K.k}),
            (std::vector<int64_t>{1, 1, 7}));
}

TEST(EinsumOps, BatchedProductCallsMatMul) {
  Graph G("g");
  // b of x0 broadcasts: stride 0.
  Node *N = einsum(G, "bij,bjk->bik", {{1, 3, 4}, {2, 4, 5}}, {2, 3, 5});
  KernelCall C = lowerOne(*N);
  ASSERT_EQ(C.Kernel, "cuvil_k_matmul_f32");
  auto K = kabi::MatmulF32::from(C);
  EXPECT_EQ((std::vector<int64_t>{K.m, K.n, K.k}),
            (std::vector<int64_t>{3, 5, 4}));
  EXPECT_EQ(K.batch_shape.Array, (std::vector<int64_t>{1, 1, 1, 2}));
  EXPECT_EQ(K.a_bstride.Array, (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(K.b_bstride.Array, (std::vector<int64_t>{0, 0, 0, 20}));
}

TEST(EinsumOps, AttentionScoresCallTheTransposedBatchedProduct) {
  Graph G("g");
  Node *N =
      einsum(G, "bhqd,bhkd->bhqk", {{2, 3, 4, 8}, {2, 3, 6, 8}}, {2, 3, 4, 6});
  KernelCall C = lowerOne(*N);
  ASSERT_EQ(C.Kernel, "cuvil_k_einsum_bmm_f32");
  auto K = kabi::EinsumBmmF32::from(C);
  EXPECT_EQ(operand(K.a), "x0");
  // m = q, n = k, k = d
  EXPECT_EQ((std::vector<int64_t>{K.m, K.n, K.k, K.trans_a, K.trans_b}),
            (std::vector<int64_t>{4, 6, 8, 0, 1}));
  EXPECT_EQ(K.batch_shape.Array, (std::vector<int64_t>{1, 1, 2, 3}));
  EXPECT_EQ(K.a_bstride.Array, (std::vector<int64_t>{0, 0, 96, 32}));
  EXPECT_EQ(K.b_bstride.Array, (std::vector<int64_t>{0, 0, 144, 48}));
  EXPECT_EQ(N->def()->Macs(*N), 2 * 3 * 4 * 6 * 8);
}

TEST(EinsumOps, TransposedOutputSwapsTheOperands) {
  Graph G("g");
  // y[b, j, k] = sum_i x0[b, i, k] x1[b, i, j]: A = x1 stored [K, M].
  Node *N = einsum(G, "bik,bij->bjk", {{2, 3, 4}, {2, 3, 5}}, {2, 5, 4});
  KernelCall C = lowerOne(*N);
  ASSERT_EQ(C.Kernel, "cuvil_k_einsum_bmm_f32");
  auto K = kabi::EinsumBmmF32::from(C);
  EXPECT_EQ(operand(K.a), "x1");
  EXPECT_EQ(operand(K.b), "x0");
  EXPECT_EQ((std::vector<int64_t>{K.m, K.n, K.k, K.trans_a, K.trans_b}),
            (std::vector<int64_t>{5, 4, 3, 1, 0}));
}

TEST(EinsumOps, TransposeAndDiagonalUseTheStridedKernel) {
  Graph G("g");
  Node *T = einsum(G, "ij->ji", {{3, 4}}, {4, 3});
  auto K = kabi::EinsumGroup::from(lowerOne(*T));
  EXPECT_EQ(K.Kernel, "cuvil_k_einsum_f32");
  EXPECT_EQ(operand(K.x1), "null");
  EXPECT_EQ((std::vector<int64_t>{K.n_inputs, K.n_out, K.n_labels}),
            (std::vector<int64_t>{1, 2, 2}));
  ASSERT_EQ(K.extent.Array.size(), size_t(CUVIL_EINSUM_MAX_LABELS));
  EXPECT_EQ(K.extent.Array[0], 4);
  EXPECT_EQ(K.extent.Array[1], 3);
  EXPECT_EQ(K.strides.Array[0], 1); // j
  EXPECT_EQ(K.strides.Array[1], 4); // i
  EXPECT_EQ(T->def()->Macs(*T), 0);

  Graph G2("g2");
  Node *D = einsum(G2, "...ii ->...i", {{3, 5, 5}}, {3, 5}, DType::F64);
  K = kabi::EinsumGroup::from(lowerOne(*D));
  EXPECT_EQ(K.Kernel, "cuvil_k_einsum_f64");
  EXPECT_EQ(K.strides.Array[0], 25);    // the '...' dimension
  EXPECT_EQ(K.strides.Array[1], 5 + 1); // i twice: the diagonal
}

TEST(EinsumOps, ThreeOperandsAndSummedLabels) {
  Graph G("g");
  Node *N = einsum(G, "bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}}, {2, 4});
  auto K = kabi::EinsumGroup::from(lowerOne(*N));
  EXPECT_EQ(K.Kernel, "cuvil_k_einsum_f32");
  EXPECT_EQ(operand(K.x2), "x2");
  EXPECT_EQ(operand(K.x3), "null");
  // Labels b, a, then n, m.
  EXPECT_EQ((std::vector<int64_t>{K.n_inputs, K.n_out, K.n_labels}),
            (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(N->def()->Macs(*N), 2 * (2 * 4 * 3 * 5));
}

TEST(EinsumOps, ShapeRuleImplicitOutputAndBroadcast) {
  Graph G("g");
  // Implicit: letters used once, ASCII order (upper case first).
  Node *N = einsum(G, "bA,cb", {{2, 3}, {4, 2}}, {UnknownDim, UnknownDim});
  auto S = einsumShapes(*N);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  EXPECT_EQ(*S, (Shapes{{3, 4}}));
  Graph G2("g2");
  Node *B = einsum(G2, "...ij,...jk", {{2, 1, 3, 4}, {5, 4, 6}},
                   {UnknownDim, UnknownDim, UnknownDim, UnknownDim});
  S = einsumShapes(*B);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  EXPECT_EQ(*S, (Shapes{{2, 5, 3, 6}}));
}

TEST(EinsumOps, EquationErrorsNameTheNodeAndTheFault) {
  struct Case {
    std::string Eq;
    Shapes In;
    std::vector<int64_t> Out;
    std::string Want;
  };
  const Case Cases[] = {
      {"ij,jk->iz",
       {{2, 3}, {3, 4}},
       {2, 4},
       "output label 'z' does not appear in any operand"},
      {"ij,jk->ik",
       {{2, 3}, {5, 4}},
       {2, 4},
       "label 'j' is 3 in input 0 ('x0') but 5 in input 1 ('x1')"},
      {"ij,jk,kl->il",
       {{2, 3}, {3, 4}},
       {2, 4},
       "has 3 operands but the node has 2 inputs"},
      {"ijk->i",
       {{2, 3}},
       {2},
       "input 0 ('x0') has rank 2 but its subscripts 'ijk' name 3"},
      {"i1->i", {{2, 3}}, {2}, "'1' in operand 0 is not a label"},
      {"i..j->i", {{2, 3}}, {2}, "is not a label"},
      {"...i...->i", {{2, 3}}, {2}, "operand 0 has more than one '...'"},
      {"ij->ii", {{2, 2}}, {2, 2}, "output label 'i' appears more than once"},
      {"...ij->ij",
       {{5, 2, 3}},
       {2, 3},
       "'...' covers 1 dimensions but the output has no '...'"},
      {"...i,...i->...i",
       {{2, 3}, {4, 3}},
       {2, 3},
       "'...' dimension 1 (from the right) is 2 in input 0"},
      {"ij->j",
       {{2, 3}},
       {2},
       "output 'y' has shape [2] but equation 'ij->j' "
       "gives [3]"},
      {"i->i->i", {{2}}, {2}, "has more than one '->'"},
      {"a,a,a,a,a->a",
       {{2}, {2}, {2}, {2}, {2}},
       {2},
       "5 operands; at most 4 are supported"},
      {"abcdefghijklm->a",
       {{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
       {1},
       "has 13 distinct labels"},
  };
  for (const Case &C : Cases) {
    Graph G("g");
    Node *N = einsum(G, C.Eq, C.In, C.Out);
    std::string Msg = verifyMessage(*N);
    EXPECT_NE(Msg.find("node 'es' (Einsum)"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find(C.Want), std::string::npos) << C.Eq << ": " << Msg;
  }
  Graph G("g");
  Node *N = einsum(G, "ij->i", {{2, 3}}, {2}, DType::I32);
  EXPECT_NE(verifyMessage(*N).find("Einsum supports f32 and f64"),
            std::string::npos);
}
