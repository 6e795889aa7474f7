//===- CheckedTest.cpp - --checked builds: guard gaps and checks ----------===//
#include "TestGraphs.h"
#include "codegen/CheckedCode.h"
#include "codegen/ModelCodegen.h"
#include "passes/Pass.h"

#include <gtest/gtest.h>

using namespace cuvil;

namespace {

/// x -> Conv a -> Conv b -> Conv c -> y: two arena buffers.
std::unique_ptr<Graph> convChain() {
  auto G = std::make_unique<Graph>("chain");
  Value *X = G->addValue("x", DType::F32, {1, 2, 4, 4}, ValueKind::Input);
  G->inputs().push_back(X);
  Value *In = X;
  int Index = 0;
  for (const char *Name : {"a", "b", "c"}) {
    Value *W = test::constF32(*G, std::string(Name) + ".w", {2, 2, 3, 3},
                              std::vector<float>(36, 0.1f));
    Value *Out = test::tensor(*G, Name, {1, 2, 4, 4});
    Node *N = test::addOp(*G, "Conv", Name, {In, W}, {Out}, Index++);
    N->setAttr("kernel_shape", std::vector<int64_t>{3, 3});
    N->setAttr("pads", std::vector<int64_t>(4, 1));
    In = Out;
  }
  G->outputs().push_back(In);
  return G;
}

TEST(Checked, PlannerLeavesAGuardAfterEveryBuffer) {
  auto G = convChain();
  ASSERT_FALSE(bool(runPipeline(*G, {}, nullptr)));
  PlanOptions PO(64);
  PO.GuardBytes = 64;
  auto P = planMemory(*G, PO);
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  ASSERT_FALSE(P->Buffers.empty());
  for (const ArenaBuffer &B : P->Buffers)
    EXPECT_EQ(B.Size, (B.Bytes + 63) / 64 * 64 + 64) << B.Root->name();
  // Buffers live at the same step keep their gaps apart.
  for (const ArenaBuffer &X : P->Buffers)
    for (const ArenaBuffer &Y : P->Buffers) {
      if (&X != &Y && X.Arena == Y.Arena && X.First <= Y.Last &&
          Y.First <= X.Last) {
        EXPECT_TRUE(X.Offset + X.Size <= Y.Offset ||
                    Y.Offset + Y.Size <= X.Offset);
      }
    }
  // Each gap covers the padding and the guard, and nothing of the tensor.
  std::vector<Guard> Gs = guardsOf(*P);
  ASSERT_EQ(Gs.size(), P->Buffers.size());
  for (size_t I = 0; I < Gs.size(); ++I) {
    EXPECT_EQ(Gs[I].Offset, P->Buffers[I].Offset + P->Buffers[I].Bytes);
    EXPECT_EQ(Gs[I].Offset + Gs[I].Bytes,
              P->Buffers[I].Offset + P->Buffers[I].Size);
  }
}

TEST(Checked, OperandOutsideItsRegionIsAnError) {
  auto G = convChain();
  ASSERT_FALSE(bool(runPipeline(*G, {}, nullptr)));
  auto T = loadTarget("host");
  ASSERT_TRUE(bool(T));
  PlanOptions PO(T->DmaAlign);
  PO.GuardBytes = T->DmaAlign;
  auto P = planMemory(*G, PO);
  ASSERT_TRUE(bool(P));
  CodegenOptions O;
  O.ModelName = "cbr";
  O.WeightsDataSize = P->WeightsSize;
  O.EmbeddedBlob = test::zeroBlob();
  O.Checked = true;
  auto Good = generateObject(*G, test::lowered(*G), *P, *T, O);
  ASSERT_TRUE(bool(Good)) << llvm::toString(Good.takeError());
  // A plan that puts the graph input beyond the caller's buffer.
  P->Locations[G->inputs()[0]->id()].Offset = 64;
  auto Bad = generateObject(*G, test::lowered(*G), *P, *T, O);
  ASSERT_FALSE(bool(Bad));
  std::string Msg = llvm::toString(Bad.takeError());
  EXPECT_NE(Msg.find("--checked: operand 'x'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("outside its region"), std::string::npos) << Msg;
}

} // namespace
