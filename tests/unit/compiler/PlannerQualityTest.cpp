//===- PlannerQualityTest.cpp - The memory planner's quality goals -------===//
//
// The least arena for chains, at most 5% above the lower bound for
// residual, fire and inception graphs, nested concats computed in place,
// and the error for a region that is too small. Every plan is also checked
// with planAndCheck (PlanChecker.h).
//
//===----------------------------------------------------------------------===//
#include "PlanChecker.h"

#include <limits>

using namespace cuvil;
using namespace cuvil::plantest;

namespace {

/// Builds graphs as the compiler's passes leave small CNNs: convolutions
/// with their activation fused, Adds, pools, concats and a classifier. The
/// weights are zero (the planner only places them), and every activation
/// takes a multiple of 64 bytes, so that the ratio measures packing, not
/// alignment padding.
class CnnBuilder {
public:
  explicit CnnBuilder(const std::string &Name)
      : G(std::make_unique<Graph>(Name)) {}

  Value *input(std::vector<int64_t> Shape) {
    Value *X =
        G->addValue("input", DType::F32, std::move(Shape), ValueKind::Input);
    G->inputs().push_back(X);
    return X;
  }

  /// A Conv with "same" padding, its Relu fused unless Relu is false.
  Value *conv(Value *X, int64_t Cout, int64_t Kernel, int64_t Stride = 1,
              bool Relu = true) {
    const auto &S = X->shape();
    int64_t Pad = Kernel / 2;
    std::string Name = next("conv");
    Value *W = constant(*G, Name + ".w", {Cout, S[1], Kernel, Kernel});
    Value *B = constant(*G, Name + ".b", {Cout});
    Node *N = add("Conv", Name, {X, W, B},
                  {1, Cout, (S[2] + 2 * Pad - Kernel) / Stride + 1,
                   (S[3] + 2 * Pad - Kernel) / Stride + 1});
    N->setAttr("kernel_shape", std::vector<int64_t>{Kernel, Kernel});
    N->setAttr("pads", std::vector<int64_t>(4, Pad));
    N->setAttr("strides", std::vector<int64_t>{Stride, Stride});
    if (Relu) {
      N = rebuildAs(*G, *N, *lookupInternalOp("FusedConv"));
      setFusedActivation(*N, {0.0f, std::numeric_limits<float>::infinity()});
    }
    return N->output(0);
  }

  Value *maxPool(Value *X, int64_t Kernel, int64_t Stride, int64_t Pad) {
    const auto &S = X->shape();
    Node *N = add("MaxPool", next("pool"), {X},
                  {1, S[1], (S[2] + 2 * Pad - Kernel) / Stride + 1,
                   (S[3] + 2 * Pad - Kernel) / Stride + 1});
    N->setAttr("kernel_shape", std::vector<int64_t>{Kernel, Kernel});
    N->setAttr("pads", std::vector<int64_t>(4, Pad));
    N->setAttr("strides", std::vector<int64_t>{Stride, Stride});
    return N->output(0);
  }

  /// Add then Relu, the end of a residual block.
  Value *addRelu(Value *A, Value *B) {
    Value *Sum = add("Add", next("add"), {A, B}, A->shape())->output(0);
    return add("Relu", next("relu"), {Sum}, A->shape())->output(0);
  }

  Value *concat(std::vector<Value *> Ins) {
    std::vector<int64_t> Shape = Ins[0]->shape();
    Shape[1] = 0;
    for (const Value *X : Ins)
      Shape[1] += X->shape()[1];
    Node *N = add("Concat", next("concat"), std::move(Ins), Shape);
    N->setAttr("axis", int64_t(1));
    return N->output(0);
  }

  /// GlobalAveragePool, Flatten, Gemm; the result is the graph's output.
  std::unique_ptr<Graph> classifier(Value *X, int64_t Classes) {
    int64_t C = X->shape()[1];
    Value *Pool =
        add("GlobalAveragePool", next("gap"), {X}, {1, C, 1, 1})->output(0);
    Node *Flat = add("Flatten", next("flatten"), {Pool}, {1, C});
    Flat->setAttr("axis", int64_t(1));
    std::string Name = next("fc");
    Value *W = constant(*G, Name + ".w", {Classes, C});
    Value *B = constant(*G, Name + ".b", {Classes});
    Node *Fc = add("Gemm", Name, {Flat->output(0), W, B}, {1, Classes});
    Fc->setAttr("transB", int64_t(1));
    G->outputs().push_back(Fc->output(0));
    return std::move(G);
  }

private:
  std::string next(const std::string &Op) { return Op + std::to_string(Index); }
  Node *add(const std::string &Op, const std::string &Name,
            std::vector<Value *> Ins, std::vector<int64_t> Shape) {
    return addOp(*G, Op, Name, std::move(Ins),
                 {tensor(*G, Name, std::move(Shape))}, Index++);
  }

  std::unique_ptr<Graph> G;
  int Index = 0;
};

/// Stem, a basic block with an identity shortcut, a downsampling one with a
/// strided 1x1 projection shortcut, another identity block, a classifier.
std::unique_ptr<Graph> residualNet() {
  CnnBuilder B("residual");
  Value *X = B.conv(B.input({1, 3, 16, 16}), 16, 3);
  auto Block = [&](Value *In, int64_t Cout, int64_t Stride) {
    Value *H = B.conv(B.conv(In, Cout, 3, Stride), Cout, 3, 1, false);
    bool Identity = Stride == 1 && In->shape()[1] == Cout;
    return B.addRelu(H, Identity ? In : B.conv(In, Cout, 1, Stride, false));
  };
  return B.classifier(Block(Block(Block(X, 16, 1), 32, 2), 32, 1), 10);
}

/// SqueezeNet: a strided stem, two fire modules (squeeze 1x1; expand 1x1
/// and 3x3, concatenated) with a max pool between, a 1x1 conv classifier.
std::unique_ptr<Graph> fireNet() {
  CnnBuilder B("fire");
  auto Fire = [&](Value *In, int64_t Squeeze, int64_t Expand) {
    Value *S = B.conv(In, Squeeze, 1);
    return B.concat({B.conv(S, Expand, 1), B.conv(S, Expand, 3)});
  };
  Value *X = B.conv(B.input({1, 3, 32, 32}), 16, 3, 2);
  X = Fire(B.maxPool(Fire(X, 4, 8), 2, 2, 0), 8, 16);
  return B.classifier(B.conv(X, 10, 1), 10);
}

/// A stem and two inception blocks: 1x1; 1x1 -> 3x3; 1x1 -> 3x3 -> 3x3; 3x3
/// max pool -> 1x1; concatenated.
std::unique_ptr<Graph> inceptionNet() {
  CnnBuilder B("inception");
  auto Block = [&](Value *In, int64_t C1, int64_t C3r, int64_t C3, int64_t C5r,
                   int64_t C5, int64_t Cp) {
    Value *B1 = B.conv(In, C1, 1);
    Value *B2 = B.conv(B.conv(In, C3r, 1), C3, 3);
    Value *B3 = B.conv(B.conv(B.conv(In, C5r, 1), C5, 3), C5, 3);
    Value *B4 = B.conv(B.maxPool(In, 3, 1, 1), Cp, 1);
    return B.concat({B1, B2, B3, B4});
  };
  Value *X = B.conv(B.input({1, 3, 16, 16}), 8, 3);
  X = Block(Block(X, 4, 4, 8, 2, 4, 4), 8, 6, 12, 2, 4, 4);
  return B.classifier(X, 10);
}

PlanOptions ampleRegion(const MemoryRegion &R) {
  PlanOptions Opts;
  Opts.Alignment = 64;
  Opts.Regions = {&R};
  return Opts;
}

/// A chain of N ops on [1, C] tensors: Gemm first and Softmax last (so every
/// tensor between them is in the arena), random ops between, widths
/// multiples of 16 floats. Least arena: the largest input + output of one
/// op that needs a fresh buffer.
std::unique_ptr<Graph> randomChain(Random &R, unsigned N, int64_t &Least) {
  auto G = std::make_unique<Graph>("chain" + std::to_string(N));
  Value *Cur = G->addValue("x", DType::F32, {1, 16 * R.between(1, 32)},
                           ValueKind::Input);
  G->inputs().push_back(Cur);
  static const std::vector<std::string> Middle = {
      "Gemm", "Softmax", "Relu", "Sigmoid", "Reshape", "Flatten"};
  Least = 0;
  for (unsigned I = 0; I < N; ++I) {
    std::string Op = I == 0 ? "Gemm" : I + 1 == N ? "Softmax" : R.pick(Middle);
    std::string Name = "n" + std::to_string(I);
    int64_t Width = Op == "Gemm" ? 16 * R.between(1, 32) : Cur->shape()[1];
    std::vector<Value *> Ins = {Cur};
    if (Op == "Gemm")
      Ins.push_back(constant(*G, Name + ".w", {Cur->shape()[1], Width}));
    if (Op == "Reshape")
      Ins.push_back(shapeConstant(*G, Name + ".shape", {1, Width}));
    Value *Y = tensor(*G, "t" + std::to_string(I), {1, Width});
    Node *Nd = addOp(*G, Op, Name, Ins, {Y}, I);
    if (Op == "Flatten" || Op == "Softmax")
      Nd->setAttr("axis", int64_t(1));
    if (Nd->def()->place() == Placement::Fresh)
      Least = std::max(Least, (I == 0 ? 0 : Cur->byteSize()) +
                                  (I + 1 == N ? 0 : Y->byteSize()));
    Cur = Y;
  }
  G->outputs().push_back(Cur);
  return G;
}

} // namespace

TEST(PlannerProperty, ChainsReachTheLeastArena) {
  const MemoryRegion Ram = region("RAM", 1u << 30);
  Random R(0xc4a1);
  for (unsigned N = 2; N <= 40; ++N) {
    int64_t Least = 0;
    auto G = randomChain(R, N, Least);
    auto P = planAndCheck(*G, ampleRegion(Ram));
    ASSERT_TRUE(P) << G->name();
    EXPECT_EQ(P->LowerBound, Least) << G->name();
    EXPECT_EQ(P->arenaSize(), Least) << G->name() << "\n" << describePlan(*P);
  }
}

TEST(PlannerProperty, BranchyNetworksAreWithinFivePercent) {
  const MemoryRegion Ram = region("RAM", 1u << 30);
  for (auto Build : {residualNet, fireNet, inceptionNet}) {
    auto G = Build();
    auto P = planAndCheck(*G, ampleRegion(Ram));
    ASSERT_TRUE(P) << G->name();
    EXPECT_LE(P->ratio(), 1.05) << G->name() << "\n" << describePlan(*P);
    RecordProperty(G->name() + "_ratio", fmt::format("{:.3f}", P->ratio()));
  }
}

TEST(PlannerProperty, TooSmallARegionIsAnErrorWithTheNumbers) {
  Random R(0x5a11);
  int64_t Least = 0;
  auto G = randomChain(R, 6, Least);
  const MemoryRegion Ram = region("RAM", 1u << 30);
  auto Fits = planMemory(*G, ampleRegion(Ram));
  ASSERT_TRUE(bool(Fits)) << llvm::toString(Fits.takeError());
  int64_t Needed = Fits->arenaSize();

  const MemoryRegion Tiny = region("TINY", Needed - 64);
  auto P = planMemory(*G, ampleRegion(Tiny));
  ASSERT_FALSE(bool(P));
  std::string Msg = llvm::toString(P.takeError());
  EXPECT_NE(Msg.find("TINY"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find(std::to_string(Needed)), std::string::npos) << Msg;
  EXPECT_NE(Msg.find(std::to_string(Needed - 64)), std::string::npos) << Msg;
}

TEST(PlannerProperty, NestedConcatsComputeIntoTheOuterSlices) {
  // e = Concat(Concat(a, b), d), each of a, b, d a Gemm of x: all three
  // are computed straight into their slices of e, the only arena buffer.
  Graph G("nested");
  Value *X = G.addValue("x", DType::F32, {1, 16}, ValueKind::Input);
  G.inputs().push_back(X);
  int Index = 0;
  auto Gemm = [&](Value *In, const std::string &Name) {
    Value *Y = tensor(G, Name, {1, 16});
    addOp(G, "Gemm", Name, {In, constant(G, Name + ".w", {In->shape()[1], 16})},
          {Y}, Index++);
    return Y;
  };
  auto Concat = [&](std::vector<Value *> Ins, const std::string &Name) {
    int64_t Width = 0;
    for (const Value *In : Ins)
      Width += In->shape()[1];
    Value *Y = tensor(G, Name, {1, Width});
    addOp(G, "Concat", Name, std::move(Ins), {Y}, Index++)
        ->setAttr("axis", int64_t(1));
    return Y;
  };
  Value *E =
      Concat({Concat({Gemm(X, "a"), Gemm(X, "b")}, "c"), Gemm(X, "d")}, "e");
  G.outputs().push_back(Gemm(E, "f"));
  const MemoryRegion Ram = region("RAM", 1u << 30);
  auto P = planAndCheck(G, ampleRegion(Ram));
  ASSERT_TRUE(P);
  EXPECT_EQ(P->arenaSize(), E->byteSize()) << describePlan(*P);
}
