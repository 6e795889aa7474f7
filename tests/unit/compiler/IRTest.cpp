//===- IRTest.cpp - Graph construction, rewiring, printing ----------------===//
#include "TestGraphs.h"

#include <gtest/gtest.h>

using namespace cuvil;

TEST(IR, UseListsFollowRewiring) {
  auto G = test::convBnRelu();
  Node *Relu = G->nodes()[2].get();
  Value *Bn = Relu->input(0);
  Value *Conv = G->nodes()[0]->output(0);
  ASSERT_EQ(Bn->users().size(), 1u);
  G->replaceAllUses(Bn, Conv);
  EXPECT_EQ(Relu->input(0), Conv);
  EXPECT_TRUE(Bn->users().empty());
  // conv is now used by bn1 and relu1.
  EXPECT_EQ(Conv->users().size(), 2u);
}

TEST(IR, ReplaceAllUsesUpdatesGraphOutputs) {
  auto G = test::convBnRelu();
  Value *Y = G->outputs()[0];
  Value *Bn = G->nodes()[1]->output(0);
  G->eraseNode(G->nodes()[2].get());
  G->replaceAllUses(Y, Bn);
  EXPECT_EQ(G->outputs()[0], Bn);
  G->eraseDeadValues();
  for (const auto &V : G->values())
    EXPECT_NE(V->name(), "y");
}

TEST(IR, PrintShowsShapesAttributesAndOrigins) {
  auto G = test::convBnRelu();
  std::string S = G->print();
  EXPECT_NE(S.find("input %x: f32[1x2x4x4]"), std::string::npos) << S;
  EXPECT_NE(S.find("%conv: f32[1x4x4x4] = Conv(%x, %w, %b)"), std::string::npos)
      << S;
  EXPECT_NE(S.find("pads=[1,1,1,1]"), std::string::npos) << S;
  EXPECT_NE(S.find("# conv1#0"), std::string::npos) << S;
  EXPECT_NE(S.find("return %y"), std::string::npos) << S;
}

TEST(IR, OriginMergeKeepsEachNodeOnce) {
  Origin A{{"conv1"}, {0}}, B{{"bn1", "conv1"}, {1, 0}};
  A.merge(B);
  EXPECT_EQ(A.str(), "conv1#0, bn1#1");
}

TEST(IR, DTypeSizes) {
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  EXPECT_EQ(dtypeName(DType::BF16), "bf16");
}

// Counts that do not fit saturate (never wrap: UBSan used to see the
// overflow) and checkTensorSize names the tensor.
TEST(IR, HugeTensorsAreRefusedByName) {
  Graph G("g");
  Value *X =
      G.addValue("x", DType::F32, {int64_t(1) << 62, 2}, ValueKind::Input);
  EXPECT_EQ(X->numElements(), INT64_MAX);
  EXPECT_EQ(X->byteSize(), INT64_MAX);
  EXPECT_EQ(llvm::toString(G.checkTensorSizes()),
            "tensor 'x' has 2^63 elements (2^65 bytes of f32): more than the "
            "target's address space");
  // Fits 64 bits, not a 32-bit target.
  Value *Y = G.addValue("y", DType::F32, {int64_t(1) << 31}, ValueKind::Input);
  EXPECT_EQ(Y->byteSize(), int64_t(1) << 33);
  EXPECT_FALSE(bool(checkTensorSize(*Y, 64)));
  EXPECT_EQ(llvm::toString(checkTensorSize(*Y, 32)),
            "tensor 'y' has 2147483648 elements (2^33 bytes of f32): more "
            "than the target's 32-bit address space");
}
