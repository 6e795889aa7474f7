//===- PlannerTest.cpp - Liveness, in-place, views, offsets ---------------===//
#include "TestGraphs.h"
#include "ir/IRParser.h"
#include "ops/OpRegistry.h"
#include "planner/MemoryPlan.h"

#include <gtest/gtest.h>

using namespace cuvil;

namespace {
/// No two buffers with overlapping lifetimes may overlap in memory, unless
/// they belong to opposite branches of one If (never written in one run).
void expectNoConflicts(const MemoryPlan &P) {
  for (size_t I = 0; I < P.Buffers.size(); ++I)
    for (size_t J = I + 1; J < P.Buffers.size(); ++J) {
      const ArenaBuffer &A = P.Buffers[I], &B = P.Buffers[J];
      bool Live = A.First <= B.Last && B.First <= A.Last;
      bool Mem = A.Offset < B.Offset + B.Size && B.Offset < A.Offset + A.Size;
      EXPECT_FALSE(Live && Mem && !exclusive(A, B))
          << A.Root->name() << " vs " << B.Root->name();
    }
}
} // namespace

TEST(Planner, ChainReachesTheLowerBound) {
  auto G = test::chain(6);
  auto P = planMemory(*G, {64});
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  // Softmax needs a fresh buffer, Sigmoid works in place: two 1 KiB
  // buffers live at a time.
  EXPECT_EQ(P->LowerBound, 2048);
  EXPECT_EQ(P->arenaSize(), 2048);
  EXPECT_DOUBLE_EQ(P->ratio(), 1.0);
  expectNoConflicts(*P);
  // The graph input and output live in the caller's buffers.
  EXPECT_EQ(P->at(G->inputs()[0]).B, Base::Input);
  EXPECT_EQ(P->at(G->outputs()[0]).B, Base::Output);
}

TEST(Planner, InPlaceOpsShareTheirInputBuffer) {
  auto G = test::chain(4); // softmax, sigmoid, softmax, sigmoid
  auto P = planMemory(*G, {64});
  ASSERT_TRUE(bool(P));
  const Node &Soft = *G->nodes()[0], &Sig = *G->nodes()[1];
  EXPECT_EQ(P->at(Sig.output(0)).Offset, P->at(Soft.output(0)).Offset);
  EXPECT_EQ(P->at(Sig.output(0)).B, Base::Arena);
}

TEST(Planner, BuffersAreAlignedAndWeightsLaidOut) {
  auto G = test::convBnRelu();
  auto P = planMemory(*G, {128});
  ASSERT_TRUE(bool(P));
  for (const ArenaBuffer &B : P->Buffers) {
    EXPECT_EQ(B.Offset % 128, 0);
    EXPECT_EQ(B.Size % 128, 0);
  }
  EXPECT_EQ(P->Weights.size(), 6u); // w, b, and four BN parameters
  for (const Value *W : P->Weights)
    EXPECT_EQ(P->at(W).Offset % 128, 0);
  EXPECT_EQ(P->WeightsSize % 128, 0);
  expectNoConflicts(*P);
}

TEST(Planner, ViewOfAnInputThatIsAnOutputIsCopied) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {2, 3}, ValueKind::Input);
  G.inputs().push_back(X);
  Value *Y = test::tensor(G, "y", {6});
  Node *R = test::addOp(G, "Flatten", "f", {X}, {Y}, 0);
  R->setAttr("axis", int64_t(0));
  G.outputs().push_back(Y);
  auto P = planMemory(G, {64});
  ASSERT_TRUE(bool(P));
  ASSERT_EQ(P->OutputCopies.size(), 1u);
  EXPECT_EQ(P->OutputCopies[0].second, X);
  EXPECT_EQ(P->arenaSize(), 0);
}

TEST(Planner, ViewOfAnArenaBufferMovesItIntoTheOutput) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 8}, ValueKind::Input);
  G.inputs().push_back(X);
  Value *S = test::tensor(G, "s", {1, 8});
  test::addOp(G, "Softmax", "sm", {X}, {S}, 0);
  Value *Y = test::tensor(G, "y", {8});
  test::addOp(G, "Reshape", "r", {S, nullptr}, {Y}, 1);
  G.outputs().push_back(Y);
  auto P = planMemory(G, {64});
  ASSERT_TRUE(bool(P));
  EXPECT_TRUE(P->OutputCopies.empty());
  EXPECT_EQ(P->at(S).B, Base::Output);
  EXPECT_EQ(P->arenaSize(), 0);
}

TEST(Planner, ConstantOutputIsAWeightCopiedOut) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {4}, ValueKind::Input);
  G.inputs().push_back(X);
  Value *Y = test::tensor(G, "y", {4});
  test::addOp(G, "Relu", "r", {X}, {Y}, 0);
  Value *C = test::constF32(G, "c", {2}, {1, 2});
  G.outputs() = {Y, C};
  auto P = planMemory(G, {64});
  ASSERT_TRUE(bool(P));
  EXPECT_EQ(P->at(C).B, Base::Weights);
  ASSERT_EQ(P->OutputCopies.size(), 1u);
  EXPECT_EQ(P->OutputCopies[0].first, 1u);
  EXPECT_EQ(P->OutputCopies[0].second, C);
}

TEST(Planner, ReordersBranchesToLowerThePeak) {
  // Two branches of a big Softmax each reduced by a Gemm. The ONNX order
  // runs both Softmaxes first (both 4 KiB results live at once); finishing
  // one branch before starting the other needs half of that.
  Graph G("branches");
  Value *X = G.addValue("x", DType::F32, {1, 1024}, ValueKind::Input);
  G.inputs().push_back(X);
  Value *A = test::tensor(G, "a", {1, 1024});
  Value *B = test::tensor(G, "b", {1, 1024});
  test::addOp(G, "Softmax", "sa", {X}, {A}, 0);
  test::addOp(G, "Softmax", "sb", {X}, {B}, 1);
  Value *W = test::constF32(G, "w", {1024, 16}, std::vector<float>(16384, 0));
  Value *RA = test::tensor(G, "ra", {1, 16});
  Value *RB = test::tensor(G, "rb", {1, 16});
  test::addOp(G, "Gemm", "ga", {A, W}, {RA}, 2);
  test::addOp(G, "Gemm", "gb", {B, W}, {RB}, 3);
  Value *Y = test::tensor(G, "y", {1, 16});
  test::addOp(G, "Add", "sum", {RA, RB}, {Y}, 4);
  G.outputs().push_back(Y);

  auto InOrder = planForOrder(G, {64});
  ASSERT_TRUE(bool(InOrder));
  auto P = planMemory(G, {64});
  ASSERT_TRUE(bool(P));
  EXPECT_NE(P->Schedule, "model");
  EXPECT_LT(P->arenaSize(), InOrder->arenaSize());
  // b and rb; ra is computed in the caller's output, where the final Add
  // runs in place.
  EXPECT_EQ(P->arenaSize(), 4096 + 64) << G.print();
  // The graph now runs in the chosen order, still topologically.
  EXPECT_EQ(G.nodes()[0]->name(), "sa");
  EXPECT_EQ(G.nodes()[1]->name(), "ga");
}

// Spilling moves the coldest buffer out of the fast region, not the
// largest: h is read by three nodes, c by one; the fast region holds one
// of them.
TEST(Planner, SpillKeepsTheMostTouchedBufferInTheFastRegion) {
  Graph G("g");
  Value *X1 = G.addValue("x1", DType::F32, {1, 1024}, ValueKind::Input);
  Value *X2 = G.addValue("x2", DType::F32, {1, 512}, ValueKind::Input);
  G.inputs() = {X1, X2};
  Value *H = test::tensor(G, "h", {1, 1024});
  Value *C = test::tensor(G, "c", {1, 512});
  test::addOp(G, "Softmax", "hot", {X1}, {H}, 0);
  test::addOp(G, "Softmax", "cold", {X2}, {C}, 0);
  for (const char *Name : {"o1", "o2", "o3"}) {
    Value *O = test::tensor(G, Name, {1, 1024});
    test::addOp(G, "Softmax", Name, {H}, {O}, 0);
    G.outputs().push_back(O);
  }
  Value *O4 = test::tensor(G, "o4", {1, 512});
  test::addOp(G, "Softmax", "o4", {C}, {O4}, 0);
  G.outputs().push_back(O4);

  MemoryRegion Fast, Slow;
  Fast.Name = "FAST";
  Fast.Length = 4096;
  Slow.Name = "SLOW";
  Slow.Length = 1 << 20;
  PlanOptions O(64);
  O.Regions = {&Fast, &Slow};
  O.AllowSpill = true;
  O.OptimizeSchedule = false;
  auto P = planMemory(G, O);
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  ASSERT_EQ(P->Arenas.size(), 2u);
  EXPECT_EQ(P->at(H).Index, 0u) << "the hot buffer left the fast region";
  EXPECT_EQ(P->at(C).Index, 1u);
  EXPECT_EQ(P->Arenas[0].Size, 4096);
  EXPECT_EQ(P->Arenas[1].Size, 2048);
}

// An If with a run-time condition runs one branch: the buffers of the
// other may take the same bytes, so the arena holds the larger branch (2
// KiB here: a Softmax needs its input and a fresh output), not the then
// branch's result plus the else branch's two buffers (3 KiB). A --checked
// build paints every buffer's canary whichever branch runs, so there the
// branches keep apart.
TEST(Planner, BranchesOfARunTimeIfShareTheirBytes) {
  const char *Text = R"(graph g opset 14
  input %x: f32[256]
  input %c: bool[]
  %a1: f32[256] = Exp(%x)  # a1#0
  %a2: f32[256] = Softmax(%a1)  # a2#1
  %b1: f32[256] = Neg(%x)  # b1#2
  %b2: f32[256] = Softmax(%b1)  # b2#3
  %y: f32[256] = If(%c, %a2, %b2) {then_branch=[1,1], else_branch=[2,1]}  # y#4
  return %y
)";
  auto G = parseIR(Text, lookupOpInDomain, "t.cir");
  ASSERT_TRUE(static_cast<bool>(G)) << llvm::toString(G.takeError());
  PlanOptions Opts(64);
  Opts.OptimizeSchedule = false;
  auto P = planMemory(**G, Opts);
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  EXPECT_EQ(P->LowerBound, 2048);
  EXPECT_EQ(P->arenaSize(), 2048);
  expectNoConflicts(*P);
  int64_t Shared = 0;
  for (const ArenaBuffer &A : P->Buffers)
    for (const ArenaBuffer &B : P->Buffers)
      Shared += &A != &B && exclusive(A, B) && A.Offset == B.Offset;
  EXPECT_GT(Shared, 0);

  Opts.ShareBranches = false;
  auto Apart = planMemory(**G, Opts);
  ASSERT_TRUE(bool(Apart)) << llvm::toString(Apart.takeError());
  EXPECT_EQ(Apart->LowerBound, 3072);
  EXPECT_EQ(Apart->arenaSize(), 3072);

  Opts.ShareBranches = true;
  Opts.GuardBytes = 64;
  auto Checked = planMemory(**G, Opts);
  ASSERT_TRUE(bool(Checked)) << llvm::toString(Checked.takeError());
  for (const ArenaBuffer &B : Checked->Buffers)
    EXPECT_TRUE(B.RunsWhen.empty()) << B.Root->name();
}
