//===- ShapeResolution.cpp - Output shapes from folded constants ----------===//
//
// Drives the ops' shape hooks (OpDef::Shape, in each op's file): the rules
// themselves live with the ops.
//
//===----------------------------------------------------------------------===//
#include "passes/ShapeResolution.h"

#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"

#include <algorithm>
#include <map>

namespace cuvil {

namespace {

bool allStatic(const std::vector<Value *> &Vs) {
  return std::all_of(Vs.begin(), Vs.end(),
                     [](const Value *V) { return !V || V->hasStaticShape(); });
}

} // namespace

/// A rule that fails leaves the shapes unknown; verification reports them.
void resolveShapes(Node &N) {
  if (allStatic(N.outputs()) || !allStatic(N.inputs()) || !N.input(0))
    return;
  if (!N.def() || !N.def()->Shape)
    return;
  auto S = N.def()->Shape(N);
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

namespace {

/// Dimensions as the declared-shape resolution sees them: a known size
/// (>= 0) or symbol number S encoded as -1 - S.
using SymShape = std::vector<int64_t>;
bool isSym(int64_t D) { return D < 0; }
int64_t symId(int64_t D) { return -1 - D; }

/// Equalities between unknown dimensions (union-find), each class with the
/// size it is bound to (Free, or Conflict when two sizes were demanded).
class DimClasses {
public:
  static constexpr int64_t Free = -1, Conflict = -2;

  int64_t fresh() {
    Parent.push_back(Parent.size());
    Size.push_back(Free);
    return -1 - static_cast<int64_t>(Parent.size() - 1);
  }
  size_t find(size_t S) {
    while (Parent[S] != S)
      S = Parent[S] = Parent[Parent[S]];
    return S;
  }
  /// Records that dimensions A and B are equal.
  void unify(int64_t A, int64_t B) {
    if (!isSym(A) && !isSym(B))
      return; // a mismatch of known sizes is verification's to report
    if (!isSym(A))
      std::swap(A, B);
    size_t RA = find(symId(A));
    if (!isSym(B))
      return bind(RA, B);
    size_t RB = find(symId(B));
    if (RA == RB)
      return;
    Parent[RB] = RA;
    if (Size[RB] != Free)
      bind(RA, Size[RB]);
  }
  /// D with a symbol replaced by its class's representative.
  int64_t canonical(int64_t D) {
    return isSym(D) ? -1 - static_cast<int64_t>(find(symId(D))) : D;
  }
  /// The known size of D, or -1.
  int64_t resolve(int64_t D) {
    if (!isSym(D))
      return D;
    int64_t S = Size[find(symId(D))];
    return S >= 0 ? S : -1;
  }

private:
  void bind(size_t R, int64_t K) {
    if (Size[R] == Free)
      Size[R] = K;
    else if (Size[R] != K)
      Size[R] = Conflict;
  }
  std::vector<size_t> Parent;
  std::vector<int64_t> Size;
};

/// numpy broadcasting of symbolic shapes; false where the result is not a
/// known size or a single symbol (two different unknown dimensions).
bool broadcastSym(SymShape &Acc, const SymShape &X) {
  if (X.size() > Acc.size())
    Acc.insert(Acc.begin(), X.size() - Acc.size(), 1);
  size_t Off = Acc.size() - X.size();
  for (size_t D = 0; D < X.size(); ++D) {
    int64_t &A = Acc[Off + D];
    int64_t B = X[D];
    if (A == B || B == 1)
      continue;
    if (A == 1 || (!isSym(B) && isSym(A)))
      A = B; // an unknown dimension against k != 1 broadcasts to k
    else if (isSym(B) && !isSym(A))
      continue;
    else
      return false; // two different symbols, or sizes that do not broadcast
  }
  return true;
}

} // namespace

void resolveFromDeclaredShapes(Graph &G) {
  DimClasses Classes;
  std::map<const Value *, SymShape> Sym;
  // V's shape with a fresh symbol per unknown dimension; null if the rank is
  // unknown too.
  auto ShapeOf = [&](const Value *V) -> const SymShape * {
    auto It = Sym.find(V);
    if (It != Sym.end())
      return &It->second;
    if (V->shape() == std::vector<int64_t>{UnknownRank})
      return nullptr;
    SymShape S = V->shape();
    for (int64_t &D : S)
      if (D < 0)
        D = Classes.fresh();
    return &(Sym[V] = std::move(S));
  };
  for (const auto &NP : G.nodes()) {
    const Node &N = *NP;
    // Only the ops whose output shape is input 0's or the inputs'
    // broadcast relate dimensions here.
    ShapeFn Rule = N.def() ? N.def()->Shape : nullptr;
    bool Same = Rule == shapeSameAsInput;
    if ((!Same && Rule != shapeBroadcast) || !N.input(0))
      continue;
    SymShape Out;
    bool Known = true;
    for (const Value *X : N.inputs()) {
      if (!X)
        continue;
      const SymShape *S = ShapeOf(X);
      if (!S) {
        Known = false;
        break;
      }
      SymShape C = *S;
      for (int64_t &D : C)
        D = Classes.canonical(D);
      if (!broadcastSym(Out, C))
        Known = false;
      if (Same)
        break; // input 0 only
    }
    if (!Known)
      continue;
    size_t NumOut = Same ? N.outputs().size() : 1;
    for (size_t I = 0; I < NumOut; ++I) {
      const Value *Y = N.output(I);
      if (Y->shape() == std::vector<int64_t>{UnknownRank} && !Sym.count(Y)) {
        Sym[Y] = Out;
        continue;
      }
      const SymShape *YS = ShapeOf(Y);
      if (!YS || YS->size() != Out.size())
        continue;
      for (size_t D = 0; D < Out.size(); ++D)
        Classes.unify((*YS)[D], Out[D]);
    }
  }
  for (const auto &[V, S] : Sym) {
    if (V->hasStaticShape())
      continue;
    std::vector<int64_t> Shape;
    for (int64_t D : S)
      Shape.push_back(Classes.resolve(D));
    if (std::all_of(Shape.begin(), Shape.end(),
                    [](int64_t D) { return D >= 0; }))
      const_cast<Value *>(V)->setShape(std::move(Shape));
  }
}

} // namespace cuvil
