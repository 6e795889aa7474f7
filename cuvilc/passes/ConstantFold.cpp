//===- ConstantFold.cpp - Compile-time evaluation and shape resolution ----===//
//
// fold-constants walks the graph in order and
//   1. evaluates on the host every node whose inputs are all constants (and
//      Shape/Size of any value with a static shape), replacing its outputs
//      by constants: the Shape -> Gather -> Unsqueeze -> Concat chains that
//      compute a Reshape's shape, ConstantOfShape, Range, Cast and small
//      integer arithmetic disappear;
//   2. computes the output shapes ONNX shape inference left unknown from
//      the now-constant operands (Reshape's shape, Expand, Tile, ...) and
//      propagates them through the ops after them;
//   3. resolves the dimensions only a known shape downstream fixes (a Range
//      of a run-time limit feeding the declared output through element-wise
//      ops), see resolveFromDeclaredShapes.
// Each op's evaluator is one entry of a table below, each shape rule one
// entry in ShapeResolution.cpp (shapes from ops/ShapeRules, shared with the
// ops' lowering). Folded constants have no origin; nodes left dead are
// removed. Values whose shape is still unknown are reported by
// verification, naming the node.
//
//===----------------------------------------------------------------------===//
#include "ir/CheckedMath.h"
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"
#include "passes/Pass.h"
#include "passes/ShapeResolution.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

namespace cuvil {
namespace {

/// Folding stops at this many elements per output: larger results are
/// computed at run time (or rejected), not stored as weights.
constexpr int64_t MaxFoldElements = int64_t(1) << 20;

struct HostTensor {
  DType Ty = DType::F32;
  std::vector<int64_t> Shape;
  std::vector<uint8_t> Data;

  /// Saturates (INT64_MAX): folds compare it with MaxFoldElements first.
  int64_t count() const {
    return checkedElementCount(Shape).value_or(INT64_MAX);
  }
  void allocate() { Data.assign(count() * dtypeSize(Ty), 0); }
};

bool isFloat(DType T) { return T == DType::F32 || T == DType::F64; }
bool hostType(DType T) { return T != DType::F16 && T != DType::BF16; }

double getF(const HostTensor &T, int64_t I) {
  const uint8_t *P = T.Data.data() + I * dtypeSize(T.Ty);
  auto Load = [P](auto X) {
    std::memcpy(&X, P, sizeof(X));
    return X;
  };
  switch (T.Ty) {
  case DType::F32: return Load(float{});
  case DType::F64: return Load(double{});
  case DType::U64: return static_cast<double>(Load(uint64_t{}));
  default: break;
  }
  int64_t V = 0;
  switch (T.Ty) {
  case DType::I8: V = Load(int8_t{}); break;
  case DType::U8: case DType::Bool: V = Load(uint8_t{}); break;
  case DType::I16: V = Load(int16_t{}); break;
  case DType::U16: V = Load(uint16_t{}); break;
  case DType::I32: V = Load(int32_t{}); break;
  case DType::U32: V = Load(uint32_t{}); break;
  case DType::I64: V = Load(int64_t{}); break;
  default: break;
  }
  return static_cast<double>(V);
}

int64_t getI(const HostTensor &T, int64_t I) {
  if (isFloat(T.Ty))
    return static_cast<int64_t>(getF(T, I));
  int64_t V = 0;
  unsigned S = dtypeSize(T.Ty);
  std::memcpy(&V, T.Data.data() + I * S, S);
  // Sign-extend the signed types.
  bool Signed = T.Ty == DType::I8 || T.Ty == DType::I16 || T.Ty == DType::I32;
  if (Signed && S < 8 && (V >> (S * 8 - 1)) & 1)
    V |= ~((int64_t(1) << (S * 8)) - 1);
  return V;
}

/// Stores a value given as an integer (exact) or a float.
void putI(HostTensor &T, int64_t I, int64_t V) {
  uint8_t *P = T.Data.data() + I * dtypeSize(T.Ty);
  switch (T.Ty) {
  case DType::F32: { float F = static_cast<float>(V); std::memcpy(P, &F, 4); return; }
  case DType::F64: { double D = static_cast<double>(V); std::memcpy(P, &D, 8); return; }
  case DType::Bool: *P = V != 0; return;
  default: std::memcpy(P, &V, dtypeSize(T.Ty)); // little-endian host
  }
}

void putF(HostTensor &T, int64_t I, double V) {
  uint8_t *P = T.Data.data() + I * dtypeSize(T.Ty);
  switch (T.Ty) {
  case DType::F32: { float F = static_cast<float>(V); std::memcpy(P, &F, 4); return; }
  case DType::F64: std::memcpy(P, &V, 8); return;
  case DType::Bool: *P = V != 0; return;
  case DType::U64: { uint64_t U = static_cast<uint64_t>(V); std::memcpy(P, &U, 8); return; }
  default: putI(T, I, static_cast<int64_t>(V));
  }
}

/// Inputs of a fold: null for an absent optional input.
using Inputs = std::vector<const HostTensor *>;
/// Computes the outputs (whose Ty is preset from the node's outputs).
/// Returns false when the node cannot be evaluated here (it stays).
using FoldFn = llvm::Expected<bool> (*)(const Node &N, const Inputs &In,
                                        std::vector<HostTensor> &Out);

// -- Shape queries -------------------------------------------------------------

llvm::Expected<bool> foldShape(const Node &N, const Inputs &In,
                               std::vector<HostTensor> &Out) {
  int64_t R = In[0]->Shape.size();
  auto Clamp = [R](int64_t X) {
    return std::clamp<int64_t>(X < 0 ? X + R : X, 0, R);
  };
  int64_t B = Clamp(N.getInt("start", 0)), E = Clamp(N.getInt("end", R));
  Out[0].Shape = {std::max<int64_t>(E - B, 0)};
  Out[0].allocate();
  for (int64_t I = B; I < E; ++I)
    putI(Out[0], I - B, In[0]->Shape[I]);
  return true;
}

llvm::Expected<bool> foldSize(const Node &, const Inputs &In,
                              std::vector<HostTensor> &Out) {
  Out[0].Shape = {};
  Out[0].allocate();
  putI(Out[0], 0, In[0]->count());
  return true;
}

// -- Pure data movement ----------------------------------------------------------

/// Same bytes, new shape (Reshape, Flatten, Squeeze, Unsqueeze, Identity).
template <llvm::Expected<std::vector<int64_t>> (*Rule)(
    const Node &, const std::vector<int64_t> &)>
llvm::Expected<bool> foldRelabel(const Node &N, const Inputs &In,
                                 std::vector<HostTensor> &Out) {
  auto S = Rule(N, In[0]->Shape);
  if (!S)
    return S.takeError();
  if (Out[0].Ty != In[0]->Ty)
    return false;
  Out[0].Shape = *S;
  Out[0].Data = In[0]->Data;
  return true;
}

llvm::Expected<std::vector<int64_t>> sameShape(const Node &,
                                               const std::vector<int64_t> &S) {
  return S;
}

llvm::Expected<bool> foldAccess(const HostTensor &X, const StridedAccess &A,
                                std::vector<int64_t> Shape, HostTensor &Y) {
  if (Y.Ty != X.Ty ||
      checkedElementCount(Shape).value_or(INT64_MAX) > MaxFoldElements)
    return false; // computed at run time, not stored as a weight
  Y.Shape = std::move(Shape);
  Y.Data = applyAccess(X.Data.data(), dtypeSize(X.Ty), A);
  return true;
}

llvm::Expected<bool> foldSlice(const Node &N, const Inputs &In,
                               std::vector<HostTensor> &Out) {
  auto A = sliceAccess(N, In[0]->Shape);
  if (!A)
    return A.takeError();
  return foldAccess(*In[0], *A, A->Shape, Out[0]);
}

llvm::Expected<bool> foldExpand(const Node &N, const Inputs &In,
                                std::vector<HostTensor> &Out) {
  auto S = expandShape(N, In[0]->Shape);
  if (!S)
    return S.takeError();
  return foldAccess(*In[0], broadcastAccess(In[0]->Shape, *S), *S, Out[0]);
}

llvm::Expected<bool> foldTile(const Node &N, const Inputs &In,
                              std::vector<HostTensor> &Out) {
  auto A = tileAccess(N, In[0]->Shape);
  if (!A)
    return A.takeError();
  auto S = tileShape(N, In[0]->Shape);
  if (!S)
    return S.takeError();
  return foldAccess(*In[0], *A, *S, Out[0]);
}

llvm::Expected<bool> foldGather(const Node &N, const Inputs &In,
                                std::vector<HostTensor> &Out) {
  const HostTensor &X = *In[0];
  if (X.Shape.empty() || Out[0].Ty != X.Ty)
    return false;
  auto P = gatherParams(N, X.Shape);
  if (!P)
    return P.takeError();
  int64_t Outer = 1, Inner = dtypeSize(X.Ty), D = X.Shape[P->Axis];
  for (int64_t I = 0; I < P->Axis; ++I)
    Outer *= X.Shape[I];
  for (size_t I = P->Axis + 1; I < X.Shape.size(); ++I)
    Inner *= X.Shape[I];
  HostTensor &Y = Out[0];
  Y.Shape = P->OutShape;
  if (Y.count() > MaxFoldElements)
    return false;
  Y.allocate();
  int64_t K = P->Indices.size();
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t J = 0; J < K; ++J)
      std::memcpy(&Y.Data[(O * K + J) * Inner],
                  &X.Data[(O * D + P->Indices[J]) * Inner], Inner);
  return true;
}

llvm::Expected<bool> foldConcat(const Node &N, const Inputs &In,
                                std::vector<HostTensor> &Out) {
  HostTensor &Y = Out[0];
  const HostTensor &F = *In[0];
  auto Axis = normalizeAxis(N, N.getInt("axis", 0), F.Shape.size());
  if (!Axis)
    return Axis.takeError();
  Y.Shape = F.Shape;
  Y.Shape[*Axis] = 0;
  for (const HostTensor *X : In) {
    if (!X || X->Ty != Y.Ty || X->Shape.size() != F.Shape.size())
      return false;
    Y.Shape[*Axis] += X->Shape[*Axis];
  }
  int64_t ES = dtypeSize(Y.Ty), Outer = 1, Inner = ES;
  for (int64_t D = 0; D < *Axis; ++D)
    Outer *= F.Shape[D];
  for (size_t D = *Axis + 1; D < F.Shape.size(); ++D)
    Inner *= F.Shape[D];
  Y.allocate();
  int64_t DstRow = Y.Shape[*Axis] * Inner, Off = 0;
  for (const HostTensor *X : In) {
    int64_t Row = X->Shape[*Axis] * Inner;
    for (int64_t O = 0; O < Outer && Row; ++O)
      std::memcpy(&Y.Data[O * DstRow + Off], &X->Data[O * Row], Row);
    Off += Row;
  }
  return true;
}

llvm::Expected<bool> foldSplit(const Node &N, const Inputs &In,
                               std::vector<HostTensor> &Out) {
  const HostTensor &X = *In[0];
  auto Axis = normalizeAxis(N, N.getInt("axis", 0), X.Shape.size());
  if (!Axis)
    return Axis.takeError();
  auto Sizes = splitSizes(N, *Axis, X.Shape);
  if (!Sizes)
    return Sizes.takeError();
  std::vector<int64_t> Str = denseStrides(X.Shape);
  int64_t Start = 0;
  for (size_t I = 0; I < Out.size(); ++I) {
    StridedAccess A{X.Shape, Str, Start * Str[*Axis]};
    A.Shape[*Axis] = (*Sizes)[I];
    Start += (*Sizes)[I];
    auto R = foldAccess(X, A, A.Shape, Out[I]);
    if (!R || !*R)
      return R;
  }
  return true;
}

// -- Conversions and generators ------------------------------------------------

llvm::Expected<bool> foldCast(const Node &, const Inputs &In,
                              std::vector<HostTensor> &Out) {
  const HostTensor &X = *In[0];
  HostTensor &Y = Out[0];
  if (!hostType(X.Ty) || !hostType(Y.Ty))
    return false;
  Y.Shape = X.Shape;
  Y.allocate();
  for (int64_t I = 0; I < X.count(); ++I) {
    if (isFloat(X.Ty))
      putF(Y, I, getF(X, I));
    else
      putI(Y, I, getI(X, I));
  }
  return true;
}

llvm::Expected<bool> foldConstantOfShape(const Node &N, const Inputs &,
                                         std::vector<HostTensor> &Out) {
  auto S = constInts(N, 0, "shape");
  if (!S)
    return S.takeError();
  HostTensor &Y = Out[0];
  Y.Shape = *S;
  if (std::any_of(S->begin(), S->end(), [](int64_t D) { return D < 0; }))
    return nodeError(N, "the shape has a negative dimension");
  if (Y.count() > MaxFoldElements)
    return false;
  Y.allocate();
  std::vector<int64_t> Bits = N.getInts("value.bits", {0});
  if (Bits.size() != 1)
    return nodeError(N, "value must hold one element");
  if (N.getInt("value.dtype", static_cast<int64_t>(DType::F32)) !=
      static_cast<int64_t>(Y.Ty))
    return false;
  unsigned ES = dtypeSize(Y.Ty);
  for (int64_t I = 0; I < Y.count(); ++I)
    std::memcpy(&Y.Data[I * ES], &Bits[0], ES);
  return true;
}

llvm::Expected<bool> foldRange(const Node &N, const Inputs &In,
                               std::vector<HostTensor> &Out) {
  HostTensor &Y = Out[0];
  for (const HostTensor *X : In)
    if (!X || X->count() != 1 || !hostType(X->Ty))
      return nodeError(N, "start, limit and delta must be scalars");
  int64_t Count;
  if (isFloat(Y.Ty)) {
    double S = getF(*In[0], 0), L = getF(*In[1], 0), D = getF(*In[2], 0);
    if (D == 0)
      return nodeError(N, "delta is 0");
    double Steps = std::ceil((L - S) / D);
    if (!(Steps <= static_cast<double>(MaxFoldElements)))
      return false; // also NaN and infinities
    Count = std::max<int64_t>(static_cast<int64_t>(Steps), 0);
    Y.Shape = {Count};
    Y.allocate();
    for (int64_t I = 0; I < Count; ++I)
      putF(Y, I, S + static_cast<double>(I) * D);
    return true;
  }
  int64_t S = getI(*In[0], 0), L = getI(*In[1], 0), D = getI(*In[2], 0);
  if (D == 0)
    return nodeError(N, "delta is 0");
  // In 128 bits: the span of two int64 values, or a delta of INT64_MIN,
  // does not fit in 64.
  __int128 Span = static_cast<__int128>(L) - S, Step = D;
  __int128 Wide = Step > 0 ? (Span > 0 ? (Span + Step - 1) / Step : 0)
                           : (Span < 0 ? (-Span - Step - 1) / -Step : 0);
  if (Wide > MaxFoldElements)
    return false;
  Count = static_cast<int64_t>(Wide);
  Y.Shape = {Count};
  Y.allocate();
  for (int64_t I = 0; I < Count; ++I)
    putI(Y, I, S + I * D);
  return true;
}

// -- Element-wise arithmetic, with numpy broadcasting -----------------------------

enum class Arith { Add, Sub, Mul, Div, Neg, Equal, Less, Greater, Where, Not };

/// The inputs broadcast to a common shape, as dense tensors.
llvm::Expected<std::vector<HostTensor>> broadcastAll(const Node &N,
                                                     const Inputs &In) {
  std::vector<int64_t> Shape;
  for (const HostTensor *X : In) {
    if (!X)
      return nodeError(N, "an input is missing");
    auto S = broadcastShapes(N, Shape, X->Shape);
    if (!S)
      return S.takeError();
    Shape = *S;
  }
  // Too large to fold: no input is expanded (the caller keeps the node).
  if (checkedElementCount(Shape).value_or(INT64_MAX) > MaxFoldElements)
    return std::vector<HostTensor>();
  std::vector<HostTensor> B;
  for (const HostTensor *X : In) {
    HostTensor T{X->Ty, Shape, {}};
    T.Data = applyAccess(X->Data.data(), dtypeSize(X->Ty),
                         broadcastAccess(X->Shape, Shape));
    B.push_back(std::move(T));
  }
  return B;
}

template <Arith Op>
llvm::Expected<bool> foldArith(const Node &N, const Inputs &In,
                               std::vector<HostTensor> &Out) {
  for (const HostTensor *X : In)
    if (X && !hostType(X->Ty))
      return false;
  auto B = broadcastAll(N, In);
  if (!B)
    return B.takeError();
  if (B->empty())
    return false;
  HostTensor &Y = Out[0];
  Y.Shape = (*B)[0].Shape;
  if (Y.count() > MaxFoldElements)
    return false;
  Y.allocate();
  // Operands are computed in their own type's domain (Where: the values').
  const HostTensor &A = (*B)[0];
  const HostTensor &Val = Op == Arith::Where ? (*B)[1] : A;
  bool F = isFloat(Val.Ty);
  for (int64_t I = 0; I < Y.count(); ++I) {
    if constexpr (Op == Arith::Where) {
      const HostTensor &Pick = getI(A, I) ? (*B)[1] : (*B)[2];
      F ? putF(Y, I, getF(Pick, I)) : putI(Y, I, getI(Pick, I));
      continue;
    } else if constexpr (Op == Arith::Neg || Op == Arith::Not) {
      if (Op == Arith::Not)
        putI(Y, I, !getI(A, I));
      else
        F ? putF(Y, I, -getF(A, I)) : putI(Y, I, -getI(A, I));
      continue;
    } else {
      const HostTensor &C = (*B)[1];
      if (F) {
        double X = getF(A, I), Z = getF(C, I);
        switch (Op) {
        case Arith::Add: putF(Y, I, X + Z); break;
        case Arith::Sub: putF(Y, I, X - Z); break;
        case Arith::Mul: putF(Y, I, X * Z); break;
        case Arith::Div: putF(Y, I, X / Z); break;
        case Arith::Equal: putI(Y, I, X == Z); break;
        case Arith::Less: putI(Y, I, X < Z); break;
        case Arith::Greater: putI(Y, I, X > Z); break;
        default: break;
        }
        // float32 arithmetic rounds each result, as at run time.
        continue;
      }
      int64_t X = getI(A, I), Z = getI(C, I);
      switch (Op) {
      case Arith::Add: putI(Y, I, X + Z); break;
      case Arith::Sub: putI(Y, I, X - Z); break;
      case Arith::Mul: putI(Y, I, X * Z); break;
      case Arith::Div:
        if (Z == 0)
          return false; // left to run time
        putI(Y, I, X / Z);
        break;
      case Arith::Equal: putI(Y, I, X == Z); break;
      case Arith::Less: putI(Y, I, X < Z); break;
      case Arith::Greater: putI(Y, I, X > Z); break;
      default: break;
      }
    }
  }
  return true;
}

struct FoldRule {
  std::string_view Op;
  FoldFn Fold;
  /// Input 0 needs only a static shape, not constant data.
  bool ShapeOnly = false;
};

/// Sorted by op name.
constexpr FoldRule FoldRules[] = {
    {"Add", foldArith<Arith::Add>},
    {"Cast", foldCast},
    {"Concat", foldConcat},
    {"ConstantOfShape", foldConstantOfShape},
    {"Div", foldArith<Arith::Div>},
    {"Equal", foldArith<Arith::Equal>},
    {"Expand", foldExpand},
    {"Flatten", foldRelabel<flattenShape>},
    {"Gather", foldGather},
    {"Greater", foldArith<Arith::Greater>},
    {"Identity", foldRelabel<sameShape>},
    {"Less", foldArith<Arith::Less>},
    {"Mul", foldArith<Arith::Mul>},
    {"Neg", foldArith<Arith::Neg>},
    {"Not", foldArith<Arith::Not>},
    {"Range", foldRange},
    {"Reshape", foldRelabel<reshapeShape>},
    {"Shape", foldShape, true},
    {"Size", foldSize, true},
    {"Slice", foldSlice},
    {"Split", foldSplit},
    {"Squeeze", foldRelabel<squeezeShape>},
    {"Sub", foldArith<Arith::Sub>},
    {"Tile", foldTile},
    {"Unsqueeze", foldRelabel<unsqueezeShape>},
    {"Where", foldArith<Arith::Where>},
};

const FoldRule *foldRule(std::string_view Op) {
  auto It = std::lower_bound(
      std::begin(FoldRules), std::end(FoldRules), Op,
      [](const FoldRule &R, std::string_view O) { return R.Op < O; });
  return It != std::end(FoldRules) && It->Op == Op ? It : nullptr;
}

/// Evaluates N if its rule allows and its inputs are known; true if the
/// node was replaced by constants (its uses rewired; N goes into Dead, for
/// one sweep at the end: erasing nodes one by one is quadratic).
llvm::Expected<bool> tryFold(Graph &G, Node &N, std::vector<Node *> &Dead) {
  const FoldRule *R = foldRule(N.opType());
  if (!R || N.getString("cuvil.domain", "") != "" || N.numInputs() == 0)
    return false;
  std::vector<HostTensor> Ins(N.numInputs());
  Inputs In(N.numInputs(), nullptr);
  for (size_t I = 0; I < N.numInputs(); ++I) {
    const Value *V = N.input(I);
    if (!V)
      continue;
    bool ShapeOnly = R->ShapeOnly && I == 0;
    if (!V->hasStaticShape() || (!ShapeOnly && !V->isConstant()))
      return false;
    Ins[I] = {V->dtype(), V->shape(), ShapeOnly ? std::vector<uint8_t>()
                                                : V->data()};
    In[I] = &Ins[I];
  }
  if (!In[0])
    return false;
  std::vector<HostTensor> Outs(N.outputs().size());
  for (size_t I = 0; I < Outs.size(); ++I)
    Outs[I].Ty = N.output(I)->dtype();
  auto Done = R->Fold(N, In, Outs);
  if (!Done || !*Done)
    return Done;
  for (size_t I = 0; I < Outs.size(); ++I) {
    Value *Y = N.output(I);
    if (Y->shape() != std::vector<int64_t>{UnknownRank} &&
        Y->rank() != Outs[I].Shape.size())
      return nodeError(N, "output '{}' has rank {}, but evaluating the node "
                          "gives rank {}",
                       Y->name(), Y->rank(), Outs[I].Shape.size());
  }
  std::vector<Value *> Old = N.outputs();
  Dead.push_back(&N);
  for (size_t I = 0; I < Outs.size(); ++I) {
    Value *C = G.addValue(Old[I]->name(), Outs[I].Ty, Outs[I].Shape,
                          ValueKind::Constant);
    C->setData(std::move(Outs[I].Data));
    G.replaceAllUses(Old[I], C);
  }
  return true;
}

} // namespace

llvm::Error foldConstants(Graph &G) {
  std::vector<Node *> Order;
  for (const auto &N : G.nodes())
    Order.push_back(N.get());
  std::vector<Node *> Dead;
  for (Node *N : Order) {
    auto Folded = tryFold(G, *N, Dead);
    if (!Folded) {
      G.eraseNodes(Dead);
      return Folded.takeError();
    }
    if (!*Folded)
      resolveShapes(*N);
  }
  G.eraseNodes(Dead);
  // Dimensions only the declared outputs determine, then what follows them.
  resolveFromDeclaredShapes(G);
  for (const auto &N : G.nodes())
    resolveShapes(*N);
  return eliminateDeadCode(G);
}

} // namespace cuvil
