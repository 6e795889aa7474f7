//===- ShapeResolution.cpp - Output shapes from folded constants ----------===//
#include "passes/ShapeResolution.h"

#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"

#include <algorithm>
#include <string_view>

namespace cuvil {

llvm::Expected<std::vector<int64_t>> tileShape(const Node &N,
                                               const std::vector<int64_t> &In) {
  auto A = tileAccess(N, In);
  if (!A)
    return A.takeError();
  std::vector<int64_t> S;
  for (size_t I = 0; I < A->Shape.size(); I += 2)
    S.push_back(A->Shape[I] * A->Shape[I + 1]);
  return S;
}

namespace {

// Shape rules, by op name.

using Shapes = std::vector<std::vector<int64_t>>;
/// The output shapes of a node whose inputs have static shapes.
using ShapeFn = llvm::Expected<Shapes> (*)(const Node &N);

llvm::Expected<Shapes> sameAsInput(const Node &N) {
  return Shapes(N.outputs().size(), N.input(0)->shape());
}

llvm::Expected<Shapes> broadcastInputs(const Node &N) {
  std::vector<int64_t> S;
  for (const Value *X : N.inputs()) {
    if (!X)
      continue;
    auto B = broadcastShapes(N, S, X->shape());
    if (!B)
      return B.takeError();
    S = *B;
  }
  return Shapes{S};
}

template <llvm::Expected<std::vector<int64_t>> (*Rule)(
    const Node &, const std::vector<int64_t> &)>
llvm::Expected<Shapes> fromInput0(const Node &N) {
  auto S = Rule(N, N.input(0)->shape());
  if (!S)
    return S.takeError();
  return Shapes{*S};
}

llvm::Expected<std::vector<int64_t>> sliceShape(const Node &N,
                                                const std::vector<int64_t> &In) {
  auto A = sliceAccess(N, In);
  if (!A)
    return A.takeError();
  return A->Shape;
}

llvm::Expected<std::vector<int64_t>>
gatherShape(const Node &N, const std::vector<int64_t> &In) {
  auto P = gatherParams(N, In);
  if (!P)
    return P.takeError();
  return P->OutShape;
}

llvm::Expected<std::vector<int64_t>> padShape(const Node &N,
                                              const std::vector<int64_t> &In) {
  auto P = padAmounts(N, In);
  if (!P)
    return P.takeError();
  std::vector<int64_t> S = In;
  for (size_t D = 0; D < S.size(); ++D)
    S[D] += (*P)[D] + (*P)[S.size() + D];
  return S;
}

llvm::Expected<std::vector<int64_t>>
transposeShape(const Node &N, const std::vector<int64_t> &In) {
  std::vector<int64_t> Perm = N.getInts("perm");
  std::vector<int64_t> S;
  if (Perm.empty())
    return std::vector<int64_t>(In.rbegin(), In.rend());
  for (int64_t P : Perm) {
    if (P < 0 || P >= static_cast<int64_t>(In.size()))
      return nodeError(N, "perm entry {} is out of range", P);
    S.push_back(In[P]);
  }
  return S;
}

llvm::Expected<Shapes> concatShapes(const Node &N) {
  std::vector<int64_t> S = N.input(0)->shape();
  auto Axis = normalizeAxis(N, N.getInt("axis", 0), S.size());
  if (!Axis)
    return Axis.takeError();
  S[*Axis] = 0;
  for (const Value *X : N.inputs())
    if (X && X->rank() == S.size())
      S[*Axis] += X->shape()[*Axis];
  return Shapes{S};
}

llvm::Expected<Shapes> splitShapes(const Node &N) {
  std::vector<int64_t> S = N.input(0)->shape();
  auto Axis = normalizeAxis(N, N.getInt("axis", 0), S.size());
  if (!Axis)
    return Axis.takeError();
  auto Sizes = splitSizes(N, *Axis, S);
  if (!Sizes)
    return Sizes.takeError();
  Shapes Out;
  for (int64_t Z : *Sizes) {
    Out.push_back(S);
    Out.back()[*Axis] = Z;
  }
  return Out;
}

struct ShapeRule {
  std::string_view Op;
  ShapeFn Infer;
};

/// Sorted by op name.
constexpr ShapeRule ShapeRules[] = {
    {"Abs", sameAsInput},
    {"Add", broadcastInputs},
    {"Cast", sameAsInput},
    {"Clip", sameAsInput},
    {"Concat", concatShapes},
    {"Div", broadcastInputs},
    {"Dropout", sameAsInput},
    {"Equal", broadcastInputs},
    {"Erf", sameAsInput},
    {"Exp", sameAsInput},
    {"Expand", fromInput0<expandShape>},
    {"Flatten", fromInput0<flattenShape>},
    {"GRU", recurrentShapes},
    {"Gather", fromInput0<gatherShape>},
    {"Greater", broadcastInputs},
    {"Identity", sameAsInput},
    {"LSTM", recurrentShapes},
    {"LeakyRelu", sameAsInput},
    {"Less", broadcastInputs},
    {"Log", sameAsInput},
    {"Max", broadcastInputs},
    {"Min", broadcastInputs},
    {"Mul", broadcastInputs},
    {"Neg", sameAsInput},
    {"Pad", fromInput0<padShape>},
    {"Pow", broadcastInputs},
    {"RNN", recurrentShapes},
    {"Relu", sameAsInput},
    {"Reshape", fromInput0<reshapeShape>},
    {"Sigmoid", sameAsInput},
    {"Slice", fromInput0<sliceShape>},
    {"Softmax", sameAsInput},
    {"Split", splitShapes},
    {"Sqrt", sameAsInput},
    {"Squeeze", fromInput0<squeezeShape>},
    {"Sub", broadcastInputs},
    {"Tanh", sameAsInput},
    {"Tile", fromInput0<tileShape>},
    {"Transpose", fromInput0<transposeShape>},
    {"Unsqueeze", fromInput0<unsqueezeShape>},
    {"Where", broadcastInputs},
};

const ShapeRule *shapeRule(std::string_view Op) {
  auto It = std::lower_bound(
      std::begin(ShapeRules), std::end(ShapeRules), Op,
      [](const ShapeRule &R, std::string_view O) { return R.Op < O; });
  return It != std::end(ShapeRules) && It->Op == Op ? It : nullptr;
}

bool allStatic(const std::vector<Value *> &Vs) {
  return std::all_of(Vs.begin(), Vs.end(),
                     [](const Value *V) { return !V || V->hasStaticShape(); });
}

} // namespace

/// A rule that fails leaves the shapes unknown; verification reports them.
void resolveShapes(Node &N) {
  if (allStatic(N.outputs()) || !allStatic(N.inputs()) || !N.input(0))
    return;
  const ShapeRule *R = shapeRule(N.opType());
  if (!R)
    return;
  auto S = R->Infer(N);
  if (!S) {
    llvm::consumeError(S.takeError());
    return;
  }
  for (size_t I = 0; I < N.outputs().size() && I < S->size(); ++I) {
    Value *Y = N.output(I);
    if (Y->shape() == std::vector<int64_t>{UnknownRank}) {
      Y->setShape((*S)[I]);
      continue;
    }
    if (Y->hasStaticShape() || Y->rank() != (*S)[I].size())
      continue;
    bool Agrees = true; // with the dimensions ONNX did determine
    for (size_t D = 0; D < Y->rank(); ++D)
      Agrees &= Y->shape()[D] == UnknownDim || Y->shape()[D] == (*S)[I][D];
    if (Agrees)
      Y->setShape((*S)[I]);
  }
}


} // namespace cuvil
