//===- ConstantFoldTest.cpp - The fold-constants pass ---------------------===//
#include "TestGraphs.h"
#include "passes/Pass.h"

#include <cstring>
#include <gtest/gtest.h>

using namespace cuvil;
using test::addOp;
using test::constI64;

namespace {

Value *value(Graph &G, const std::string &Name, DType Ty,
             std::vector<int64_t> Shape) {
  return G.addValue(Name, Ty, std::move(Shape), ValueKind::Intermediate);
}

template <typename T> std::vector<T> dataOf(const Value *V) {
  std::vector<T> Out(V->numElements());
  std::memcpy(Out.data(), V->data().data(), Out.size() * sizeof(T));
  return Out;
}

/// Folds G and returns the constant that became its only output.
const Value *foldToOutput(Graph &G) {
  EXPECT_FALSE(bool(foldConstants(G)));
  EXPECT_TRUE(G.nodes().empty());
  const Value *Y = G.outputs().at(0);
  EXPECT_TRUE(Y->isConstant());
  return Y;
}

} // namespace

// The PyTorch export pattern: x.reshape(x.shape[0], -1).
TEST(ConstantFold, ShapeChainFoldsAndResolvesTheReshape) {
  Graph G("chain");
  Value *X = G.addValue("x", DType::F32, {2, 3, 4}, ValueKind::Input);
  G.inputs().push_back(X);
  Value *S = value(G, "s", DType::I64, {3});
  addOp(G, "Shape", "shape", {X}, {S}, 0);
  Value *D0 = value(G, "d0", DType::I64, {});
  addOp(G, "Gather", "gather", {S, constI64(G, "zero", {}, {0})}, {D0}, 1);
  Value *U = value(G, "u", DType::I64, {1});
  addOp(G, "Unsqueeze", "unsq", {D0, constI64(G, "ax", {1}, {0})}, {U}, 2);
  Value *C = value(G, "c", DType::I64, {2});
  Node *Cat =
      addOp(G, "Concat", "cat", {U, constI64(G, "minus1", {1}, {-1})}, {C}, 3);
  Cat->setAttr("axis", int64_t(0));
  Value *Y = value(G, "y", DType::F32, {UnknownDim, UnknownDim});
  addOp(G, "Reshape", "reshape", {X, C}, {Y}, 4);
  G.outputs().push_back(Y);

  ASSERT_FALSE(bool(foldConstants(G)));
  ASSERT_EQ(G.nodes().size(), 1u);
  const Node &R = *G.nodes()[0];
  EXPECT_EQ(R.opType(), "Reshape");
  EXPECT_EQ(R.origin().str(), "reshape#4");
  ASSERT_TRUE(R.input(1)->isConstant());
  EXPECT_EQ(R.input(1)->toInt64s(), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(Y->shape(), (std::vector<int64_t>{2, 12}));
  EXPECT_FALSE(bool(verifyGraph(G)));
}

TEST(ConstantFold, ShapeTakesStartAndEnd) {
  Graph G("shape");
  Value *X = G.addValue("x", DType::F32, {2, 3, 4, 5}, ValueKind::Input);
  G.inputs().push_back(X);
  Value *S = value(G, "s", DType::I64, {2});
  Node *N = addOp(G, "Shape", "shape", {X}, {S}, 0);
  N->setOpset(15);
  N->setAttr("start", int64_t(-3));
  N->setAttr("end", int64_t(-1));
  G.outputs().push_back(S);
  const Value *Y = foldToOutput(G);
  EXPECT_EQ(Y->name(), "s");
  EXPECT_EQ(dataOf<int64_t>(Y), (std::vector<int64_t>{3, 4}));
}

TEST(ConstantFold, SliceClampsNegativeAndLargeBoundsAndSteps) {
  Graph G("slice");
  Value *X = constI64(G, "x", {2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  Value *Y = value(G, "y", DType::I64, {2, 3});
  // Axis 1 from the end backwards: starts 100 (clamped to 4), ends -100
  // (clamped to before 0), step -2 -> columns 4, 2, 0.
  addOp(G, "Slice", "slice",
        {X, constI64(G, "st", {1}, {100}), constI64(G, "en", {1}, {-100}),
         constI64(G, "ax", {1}, {-1}), constI64(G, "sp", {1}, {-2})},
        {Y}, 0);
  G.outputs().push_back(Y);
  const Value *R = foldToOutput(G);
  EXPECT_EQ(R->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(dataOf<int64_t>(R), (std::vector<int64_t>{4, 2, 0, 9, 7, 5}));
}

TEST(ConstantFold, GatherTakesNegativeIndicesOnAnyAxis) {
  Graph G("gather");
  Value *X = constI64(G, "x", {2, 3}, {10, 11, 12, 20, 21, 22});
  Value *Y = value(G, "y", DType::I64, {2, 2});
  Node *N =
      addOp(G, "Gather", "g", {X, constI64(G, "i", {2}, {-1, 0})}, {Y}, 0);
  N->setAttr("axis", int64_t(1));
  G.outputs().push_back(Y);
  EXPECT_EQ(dataOf<int64_t>(foldToOutput(G)),
            (std::vector<int64_t>{12, 10, 22, 20}));
}

TEST(ConstantFold, CastConvertsBetweenTypes) {
  Graph G("cast");
  Value *X = test::constF32(G, "x", {4}, {-1.5f, 0.0f, 2.7f, 3.0f});
  Value *I = value(G, "i", DType::I64, {4});
  addOp(G, "Cast", "c1", {X}, {I}, 0);
  Value *B = value(G, "b", DType::Bool, {4});
  addOp(G, "Cast", "c2", {X}, {B}, 1);
  G.outputs() = {I, B};
  ASSERT_FALSE(bool(foldConstants(G)));
  EXPECT_TRUE(G.nodes().empty());
  EXPECT_EQ(dataOf<int64_t>(G.outputs()[0]),
            (std::vector<int64_t>{-1, 0, 2, 3}));
  EXPECT_EQ(dataOf<uint8_t>(G.outputs()[1]),
            (std::vector<uint8_t>{1, 0, 1, 1}));
}

TEST(ConstantFold, ConstantOfShapeAndRange) {
  Graph G("gen");
  Value *C = value(G, "c", DType::I64, {2, 3});
  Node *N = addOp(G, "ConstantOfShape", "cos",
                  {constI64(G, "shape", {2}, {2, 3})}, {C}, 0);
  N->setAttr("value.dtype", static_cast<int64_t>(DType::I64));
  N->setAttr("value.bits", std::vector<int64_t>{7});
  Value *R = value(G, "r", DType::I64, {UnknownDim});
  addOp(G, "Range", "range",
        {constI64(G, "a", {}, {10}), constI64(G, "b", {}, {3}),
         constI64(G, "d", {}, {-3})},
        {R}, 1);
  G.outputs() = {C, R};
  ASSERT_FALSE(bool(foldConstants(G)));
  EXPECT_EQ(dataOf<int64_t>(G.outputs()[0]), std::vector<int64_t>(6, 7));
  EXPECT_EQ(G.outputs()[1]->shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(dataOf<int64_t>(G.outputs()[1]), (std::vector<int64_t>{10, 7, 4}));
}

TEST(ConstantFold, IntegerArithmeticBroadcasts) {
  Graph G("arith");
  Value *A = constI64(G, "a", {2, 1}, {6, -7});
  Value *B = constI64(G, "b", {2}, {2, 3});
  Value *Y = value(G, "y", DType::I64, {2, 2});
  addOp(G, "Div", "div", {A, B}, {Y}, 0);
  Value *Z = value(G, "z", DType::I64, {2, 2});
  addOp(G, "Mul", "mul", {Y, constI64(G, "m", {}, {-1})}, {Z}, 1);
  G.outputs().push_back(Z);
  EXPECT_EQ(dataOf<int64_t>(foldToOutput(G)),
            (std::vector<int64_t>{-3, -2, 3, 2}));
}

TEST(ConstantFold, SqueezeAxesComeFromTheAttributeBeforeOpset13) {
  Graph G("sq");
  Value *X = constI64(G, "x", {1, 2, 1}, {4, 5});
  Value *Y = value(G, "y", DType::I64, {2, 1});
  Node *N = addOp(G, "Squeeze", "sq", {X}, {Y}, 0);
  N->setOpset(11);
  N->setAttr("axes", std::vector<int64_t>{0});
  G.outputs().push_back(Y);
  const Value *R = foldToOutput(G);
  EXPECT_EQ(R->shape(), (std::vector<int64_t>{2, 1}));
}

TEST(ConstantFold, RuntimeNodesStayAndTheirShapesResolve) {
  Graph G("rt");
  Value *X = G.addValue("x", DType::F32, {2, 6}, ValueKind::Input);
  G.inputs().push_back(X);
  Value *R = value(G, "r", DType::F32, {UnknownDim, UnknownDim, UnknownDim});
  addOp(G, "Reshape", "reshape", {X, constI64(G, "s", {3}, {0, 3, -1})}, {R},
        0);
  Value *Y = value(G, "y", DType::F32, {UnknownDim, UnknownDim, UnknownDim});
  addOp(G, "Relu", "relu", {R}, {Y}, 1);
  G.outputs().push_back(Y);
  ASSERT_FALSE(bool(foldConstants(G)));
  EXPECT_EQ(G.nodes().size(), 2u);
  EXPECT_EQ(R->shape(), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(Y->shape(), (std::vector<int64_t>{2, 3, 2}));
}

TEST(ConstantFold, UnresolvedShapesAreReportedWithTheNode) {
  Graph G("bad");
  Value *X = G.addValue("x", DType::F32, {2, 6}, ValueKind::Input);
  Value *S = G.addValue("s", DType::I64, {2}, ValueKind::Input);
  G.inputs() = {X, S};
  Value *Y = value(G, "y", DType::F32, {UnknownDim, UnknownDim});
  addOp(G, "Reshape", "reshape", {X, S}, {Y}, 0);
  G.outputs().push_back(Y);
  ASSERT_FALSE(bool(foldConstants(G)));
  std::string Msg = llvm::toString(verifyGraph(G));
  EXPECT_NE(Msg.find("node 'reshape' (Reshape): the shape of output 'y' "
                     "could not be determined at compile time"),
            std::string::npos)
      << Msg;
}

TEST(ConstantFold, IsTheFirstPass) {
  EXPECT_EQ(defaultPipeline().front().Name, "fold-constants");
}

namespace {

/// r = Range(0, limit, 1) with a run-time limit, then t = Mul(r, scale),
/// u = Op2(t, Other) and the output y = Cos(u) declared [10].
struct RangeChain {
  Graph G{"range"};
  Value *R, *T, *U, *Y;

  explicit RangeChain(std::vector<int64_t> OtherShape) {
    Value *L = G.addValue("limit", DType::F32, {}, ValueKind::Input);
    Value *O = G.addValue("other", DType::F32, OtherShape, ValueKind::Input);
    G.inputs() = {L, O};
    Value *Zero = G.addValue("zero", DType::F32, {}, ValueKind::Constant);
    Zero->setData(std::vector<uint8_t>(4, 0));
    Value *One = G.addValue("one", DType::F32, {}, ValueKind::Constant);
    float F1 = 1.0f;
    std::vector<uint8_t> B(4);
    std::memcpy(B.data(), &F1, 4);
    One->setData(B);
    R = value(G, "r", DType::F32, {UnknownDim});
    addOp(G, "Range", "range", {Zero, L, One}, {R}, 0);
    T = value(G, "t", DType::F32, {UnknownDim});
    addOp(G, "Mul", "mul", {R, One}, {T}, 1);
    U = value(G, "u", DType::F32, {UnknownDim});
    addOp(G, "Add", "add", {T, O}, {U}, 2);
    Y = value(G, "y", DType::F32, {10});
    addOp(G, "Cos", "cos", {U}, {Y}, 3);
    G.outputs().push_back(Y);
  }
};

} // namespace

// The expanded window functions: only the declared output fixes the length
// of a Range whose limit is computed at run time.
TEST(ConstantFold, DeclaredOutputShapeResolvesARuntimeRange) {
  RangeChain C({1});
  ASSERT_FALSE(bool(foldConstants(C.G)));
  EXPECT_EQ(C.R->shape(), (std::vector<int64_t>{10}));
  EXPECT_EQ(C.T->shape(), (std::vector<int64_t>{10}));
  EXPECT_EQ(C.U->shape(), (std::vector<int64_t>{10}));
  EXPECT_EQ(llvm::toString(verifyGraph(C.G)), "");
}

// Broadcasting against another unknown (or a known 10) leaves the Range's
// length ambiguous (1 or 10): it stays unknown and is reported.
TEST(ConstantFold, AmbiguousBroadcastLeavesTheRangeUnknown) {
  for (int64_t Other : {UnknownDim, int64_t(10)}) {
    RangeChain C({Other});
    ASSERT_FALSE(bool(foldConstants(C.G)));
    EXPECT_EQ(C.R->shape(), (std::vector<int64_t>{UnknownDim})) << Other;
    std::string Msg = llvm::toString(verifyGraph(C.G));
    EXPECT_NE(Msg.find("node 'range' (Range): the shape of output 'r'"),
              std::string::npos)
        << Msg;
  }
}

// Results past the fold limit stay nodes (computed at run time): nothing
// of their size is allocated at compile time, and Range's count is exact
// even when its span does not fit in 64 bits.
TEST(ConstantFold, HugeResultsAreNotFolded) {
  Graph G("huge");
  const int64_t Big = int64_t(1) << 40; // 4 TiB of f32 if it were folded
  Value *E = value(G, "e", DType::F32, {Big});
  addOp(
      G, "Expand", "expand",
      {test::constF32(G, "one", {1}, {1.0f}), constI64(G, "shape", {1}, {Big})},
      {E}, 0);
  Value *T = value(G, "t", DType::F32, {Big});
  Node *Tile = addOp(
      G, "Tile", "tile",
      {test::constF32(G, "two", {1}, {2.0f}), constI64(G, "reps", {1}, {Big})},
      {T}, 1);
  // Two constants whose broadcast sum would have 2^40 elements.
  const int64_t Side = int64_t(1) << 20;
  Value *A = value(G, "a", DType::F32, {Side, Side});
  addOp(G, "Add", "add",
        {test::constF32(G, "col", {Side, 1}, std::vector<float>(Side, 1.0f)),
         test::constF32(G, "row", {1, Side}, std::vector<float>(Side, 2.0f))},
        {A}, 2);
  Value *R = value(G, "r", DType::I64, {UnknownDim});
  addOp(G, "Range", "range",
        {constI64(G, "lo", {}, {INT64_MIN}), constI64(G, "hi", {}, {INT64_MAX}),
         constI64(G, "step", {}, {1})},
        {R}, 3);
  G.outputs() = {E, T, A, R};
  ASSERT_FALSE(bool(foldConstants(G)));
  ASSERT_EQ(G.nodes().size(), 4u);
  EXPECT_EQ(G.nodes()[1].get(), Tile);
  for (const Value *Out : G.outputs())
    EXPECT_FALSE(Out->isConstant()) << Out->name();
}
