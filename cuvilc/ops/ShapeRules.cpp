//===- ShapeRules.cpp -----------------------------------------------------===//
#include "ops/ShapeRules.h"

#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"
#include "ops/tensor/DataMovement.h"
#include "ops/tensor/Views.h"

#include <algorithm>
#include <cstring>
#include <fmt/ranges.h>
#include <functional>
#include <numeric>

namespace cuvil {

namespace {
int64_t product(const std::vector<int64_t> &S, size_t From = 0,
                size_t To = SIZE_MAX) {
  // Saturates: a count past INT64_MAX never matches a real one, and the
  // tensor is refused by name (checkTensorSizes).
  int64_t P = 1;
  for (size_t I = std::min(From, S.size()); I < std::min(To, S.size()); ++I)
    if (__builtin_mul_overflow(P, S[I], &P))
      return INT64_MAX;
  return P;
}

/// Axes of Squeeze/Unsqueeze: attribute before opset 13, input 1 since.
llvm::Expected<std::vector<int64_t>> squeezeAxes(const Node &N) {
  if (N.opset() < 13 || !N.input(1))
    return SqueezeAttrs(N).Axes;
  return constInts(N, 1, "axes");
}
} // namespace

std::vector<int64_t> denseStrides(const std::vector<int64_t> &Shape) {
  std::vector<int64_t> S(Shape.size(), 1);
  for (size_t I = Shape.size(); I-- > 1;)
    S[I - 1] = S[I] * Shape[I];
  return S;
}

llvm::Expected<std::vector<int64_t>> constInts(const Node &N, size_t I,
                                               const char *What) {
  const Value *V = N.input(I);
  if (!V)
    return nodeError(N, "the {} input is missing", What);
  if (!V->isConstant())
    return nodeError(N, "the {} input '{}' must be a compile-time constant",
                     What, V->name());
  if (V->dtype() != DType::I64 && V->dtype() != DType::I32)
    return nodeError(N, "the {} input '{}' must be int64 or int32", What,
                     V->name());
  return V->toInt64s();
}

llvm::Expected<StridedAccess> sliceAccess(const Node &N,
                                          const std::vector<int64_t> &In) {
  std::vector<int64_t> Starts, Ends, Axes, Steps;
  if (N.opset() >= 10) {
    auto S = constInts(N, 1, "starts");
    if (!S)
      return S.takeError();
    auto E = constInts(N, 2, "ends");
    if (!E)
      return E.takeError();
    Starts = *S;
    Ends = *E;
    if (N.input(3)) {
      auto A = constInts(N, 3, "axes");
      if (!A)
        return A.takeError();
      Axes = *A;
    }
    if (N.input(4)) {
      auto St = constInts(N, 4, "steps");
      if (!St)
        return St.takeError();
      Steps = *St;
    }
  } else {
    SliceAttrs At(N);
    Starts = At.Starts;
    Ends = At.Ends;
    Axes = At.Axes;
  }
  if (Axes.empty()) {
    Axes.resize(Starts.size());
    std::iota(Axes.begin(), Axes.end(), 0);
  }
  if (Steps.empty())
    Steps.assign(Starts.size(), 1);
  if (Ends.size() != Starts.size() || Axes.size() != Starts.size() ||
      Steps.size() != Starts.size())
    return nodeError(N, "starts, ends, axes and steps differ in length");
  StridedAccess A;
  A.Shape = In;
  A.Strides = denseStrides(In);
  std::vector<bool> Seen(In.size(), false);
  for (size_t I = 0; I < Starts.size(); ++I) {
    auto Ax = normalizeAxis(N, Axes[I], In.size());
    if (!Ax)
      return Ax.takeError();
    if (Seen[*Ax])
      return nodeError(N, "axis {} is sliced twice", *Ax);
    Seen[*Ax] = true;
    int64_t D = In[*Ax], Step = Steps[I], S = Starts[I], E = Ends[I];
    if (Step == 0)
      return nodeError(N, "a step is 0");
    if (S < 0)
      S += D;
    if (E < 0)
      E += D;
    int64_t Len;
    if (Step > 0) {
      S = std::clamp<int64_t>(S, 0, D);
      E = std::clamp<int64_t>(E, 0, D);
      Len = E > S ? (E - S + Step - 1) / Step : 0;
    } else {
      S = std::clamp<int64_t>(S, 0, std::max<int64_t>(D - 1, 0));
      E = std::clamp<int64_t>(E, -1, D - 1);
      Len = S > E ? (S - E - Step - 1) / -Step : 0;
    }
    if (Len > 0)
      A.Offset += S * A.Strides[*Ax];
    A.Shape[*Ax] = Len;
    A.Strides[*Ax] *= Step;
  }
  return A;
}

llvm::Expected<std::vector<int64_t>>
broadcastShapes(const Node &N, const std::vector<int64_t> &A,
                const std::vector<int64_t> &B) {
  size_t R = std::max(A.size(), B.size());
  std::vector<int64_t> Out(R);
  for (size_t I = 0; I < R; ++I) {
    int64_t X = I < R - A.size() ? 1 : A[I - (R - A.size())];
    int64_t Y = I < R - B.size() ? 1 : B[I - (R - B.size())];
    if (X != Y && X != 1 && Y != 1)
      return nodeError(N, "dimensions {} and {} do not broadcast", X, Y);
    Out[I] = X == 1 ? Y : X;
  }
  return Out;
}

StridedAccess broadcastAccess(const std::vector<int64_t> &In,
                              const std::vector<int64_t> &Out) {
  StridedAccess A;
  A.Shape = Out;
  A.Strides.assign(Out.size(), 0);
  std::vector<int64_t> S = denseStrides(In);
  size_t Lead = Out.size() - In.size();
  for (size_t I = 0; I < In.size(); ++I)
    A.Strides[Lead + I] = In[I] == 1 ? 0 : S[I];
  return A;
}

llvm::Expected<std::vector<int64_t>>
expandShape(const Node &N, const std::vector<int64_t> &In) {
  auto S = constInts(N, 1, "shape");
  if (!S)
    return S.takeError();
  return broadcastShapes(N, In, *S);
}

llvm::Expected<StridedAccess> tileAccess(const Node &N,
                                         const std::vector<int64_t> &In) {
  auto R = constInts(N, 1, "repeats");
  if (!R)
    return R.takeError();
  if (R->size() != In.size())
    return nodeError(N, "repeats has {} entries for an input of rank {}",
                     R->size(), In.size());
  StridedAccess A;
  std::vector<int64_t> S = denseStrides(In);
  for (size_t I = 0; I < In.size(); ++I) {
    if ((*R)[I] < 0)
      return nodeError(N, "repeats must not be negative");
    A.Shape.push_back((*R)[I]);
    A.Strides.push_back(0);
    A.Shape.push_back(In[I]);
    A.Strides.push_back(S[I]);
  }
  return A;
}

llvm::Expected<std::vector<int64_t>>
reshapeShape(const Node &N, const std::vector<int64_t> &In) {
  ReshapeAttrs At(N);
  std::vector<int64_t> Target;
  if (N.opset() < 5) {
    Target = At.Shape;
  } else {
    auto S = constInts(N, 1, "shape");
    if (!S)
      return S.takeError();
    Target = *S;
  }
  bool AllowZero = At.AllowZero != 0;
  int64_t Known = 1, Infer = -1;
  for (size_t I = 0; I < Target.size(); ++I) {
    int64_t &D = Target[I];
    if (D == 0 && !AllowZero) {
      if (I >= In.size())
        return nodeError(N, "shape entry {} is 0 but the input has rank {}", I,
                         In.size());
      D = In[I];
    }
    if (D == -1) {
      if (Infer >= 0)
        return nodeError(N, "the shape has more than one -1");
      Infer = I;
      continue;
    }
    if (D < 0)
      return nodeError(N, "the shape has a negative entry {}", D);
    if (__builtin_mul_overflow(Known, D, &Known))
      return nodeError(N, "the shape {} has more than 2^63 elements",
                       fmt::format("[{}]", fmt::join(Target, ", ")));
  }
  int64_t Total = product(In);
  if (Infer >= 0) {
    if (Known == 0 || Total % Known != 0)
      return nodeError(N,
                       "cannot infer the -1 dimension ({} elements into "
                       "{})",
                       Total, Known);
    Target[Infer] = Total / Known;
  } else if (Known != Total) {
    return nodeError(N, "cannot reshape {} elements into {}", Total, Known);
  }
  return Target;
}

llvm::Expected<std::vector<int64_t>>
squeezeShape(const Node &N, const std::vector<int64_t> &In) {
  auto Axes = squeezeAxes(N);
  if (!Axes)
    return Axes.takeError();
  std::vector<bool> Drop(In.size(), false);
  if (Axes->empty()) {
    for (size_t I = 0; I < In.size(); ++I)
      Drop[I] = In[I] == 1;
  }
  for (int64_t A : *Axes) {
    auto Ax = normalizeAxis(N, A, In.size());
    if (!Ax)
      return Ax.takeError();
    if (In[*Ax] != 1)
      return nodeError(N, "cannot squeeze axis {} of extent {}", *Ax, In[*Ax]);
    Drop[*Ax] = true;
  }
  std::vector<int64_t> Out;
  for (size_t I = 0; I < In.size(); ++I)
    if (!Drop[I])
      Out.push_back(In[I]);
  return Out;
}

llvm::Expected<std::vector<int64_t>>
unsqueezeShape(const Node &N, const std::vector<int64_t> &In) {
  auto Axes = squeezeAxes(N);
  if (!Axes)
    return Axes.takeError();
  size_t R = In.size() + Axes->size();
  std::vector<bool> Ins(R, false);
  for (int64_t A : *Axes) {
    auto Ax = normalizeAxis(N, A, R);
    if (!Ax)
      return Ax.takeError();
    if (Ins[*Ax])
      return nodeError(N, "axis {} is repeated", *Ax);
    Ins[*Ax] = true;
  }
  std::vector<int64_t> Out;
  size_t J = 0;
  for (size_t I = 0; I < R; ++I)
    Out.push_back(Ins[I] ? 1 : In[J++]);
  return Out;
}

llvm::Expected<std::vector<int64_t>>
flattenShape(const Node &N, const std::vector<int64_t> &In) {
  int64_t R = In.size(), Axis = FlattenAttrs(N).Axis;
  if (Axis < -R || Axis > R)
    return nodeError(N, "axis {} is out of range for rank {}", Axis, R);
  if (Axis < 0)
    Axis += R;
  return std::vector<int64_t>{product(In, 0, Axis), product(In, Axis)};
}

llvm::Expected<std::vector<int64_t>>
splitSizes(const Node &N, int64_t Axis, const std::vector<int64_t> &In) {
  int64_t D = In[Axis], Count = N.outputs().size();
  std::vector<int64_t> Sizes;
  if (N.opset() >= 13 && N.input(1)) {
    auto S = constInts(N, 1, "split");
    if (!S)
      return S.takeError();
    Sizes = *S;
  } else if (N.opset() < 13) {
    Sizes = SplitAttrs(N).Split;
  }
  if (Sizes.empty()) {
    int64_t Each = (D + Count - 1) / std::max<int64_t>(Count, 1);
    if (N.opset() < 18 && D % Count != 0)
      return nodeError(N, "extent {} does not split evenly into {} outputs", D,
                       Count);
    for (int64_t I = 0, Left = D; I < Count; ++I, Left -= Each)
      Sizes.push_back(std::min(Each, Left));
  }
  if (static_cast<int64_t>(Sizes.size()) != Count ||
      std::accumulate(Sizes.begin(), Sizes.end(), int64_t(0)) != D ||
      std::any_of(Sizes.begin(), Sizes.end(), [](int64_t S) { return S < 0; }))
    return nodeError(N,
                     "the split sizes do not partition extent {} into {} "
                     "outputs",
                     D, Count);
  return Sizes;
}

llvm::Expected<std::vector<int64_t>>
padAmounts(const Node &N, const std::vector<int64_t> &In) {
  size_t R = In.size();
  std::vector<int64_t> Pads;
  if (N.opset() >= 11) {
    auto P = constInts(N, 1, "pads");
    if (!P)
      return P.takeError();
    Pads = *P;
  } else {
    PadAttrs At(N);
    Pads = N.opset() < 2 ? At.Paddings : At.Pads;
  }
  std::vector<int64_t> Axes(R);
  std::iota(Axes.begin(), Axes.end(), 0);
  if (N.opset() >= 18 && N.input(3)) {
    auto A = constInts(N, 3, "axes");
    if (!A)
      return A.takeError();
    Axes.clear();
    for (int64_t X : *A) {
      auto Ax = normalizeAxis(N, X, R);
      if (!Ax)
        return Ax.takeError();
      Axes.push_back(*Ax);
    }
  }
  if (Pads.size() != 2 * Axes.size())
    return nodeError(N, "pads has {} entries, expected {}", Pads.size(),
                     2 * Axes.size());
  std::vector<int64_t> Out(2 * R, 0);
  for (size_t I = 0; I < Axes.size(); ++I) {
    Out[Axes[I]] = Pads[I];
    Out[R + Axes[I]] = Pads[Axes.size() + I];
    if (In[Axes[I]] + Pads[I] + Pads[Axes.size() + I] < 0)
      return nodeError(N, "pads crop more than axis {} holds", Axes[I]);
  }
  return Out;
}

llvm::Expected<GatherParams> gatherParams(const Node &N,
                                          const std::vector<int64_t> &In) {
  GatherParams P;
  auto Ax = normalizeAxis(N, GatherAttrs(N).Axis, In.size());
  if (!Ax)
    return Ax.takeError();
  P.Axis = *Ax;
  auto Idx = constInts(N, 1, "indices");
  if (!Idx)
    return Idx.takeError();
  int64_t D = In[P.Axis];
  for (int64_t I : *Idx) {
    if (I < -D || I >= D)
      return nodeError(N, "index {} is out of range for extent {}", I, D);
    P.Indices.push_back(I < 0 ? I + D : I);
  }
  P.IndicesShape = N.input(1)->shape();
  P.OutShape.assign(In.begin(), In.begin() + P.Axis);
  P.OutShape.insert(P.OutShape.end(), P.IndicesShape.begin(),
                    P.IndicesShape.end());
  P.OutShape.insert(P.OutShape.end(), In.begin() + P.Axis + 1, In.end());
  return P;
}

std::vector<uint8_t> applyAccess(const uint8_t *Src, unsigned ElemSize,
                                 const StridedAccess &A) {
  int64_t Count = product(A.Shape);
  std::vector<uint8_t> Out(std::max<int64_t>(Count, 0) * ElemSize);
  if (Count <= 0)
    return Out;
  size_t R = A.Shape.size();
  std::vector<int64_t> Idx(R, 0);
  int64_t Off = A.Offset;
  for (int64_t E = 0; E < Count; ++E) {
    std::memcpy(&Out[E * ElemSize], Src + Off * ElemSize, ElemSize);
    for (size_t D = R; D-- > 0;) {
      Off += A.Strides[D];
      if (++Idx[D] < A.Shape[D])
        break;
      Off -= A.Strides[D] * A.Shape[D];
      Idx[D] = 0;
    }
  }
  return Out;
}

bool canonicalizeCopy(std::vector<int64_t> &Shape,
                      std::vector<int64_t> &SrcStrides,
                      std::vector<int64_t> &DstStrides, size_t Rank) {
  std::vector<int64_t> Sh, Ss, Ds;
  for (size_t D = 0; D < Shape.size(); ++D) {
    if (Shape[D] == 1)
      continue;
    if (!Sh.empty() && Ss.back() == SrcStrides[D] * Shape[D] &&
        Ds.back() == DstStrides[D] * Shape[D]) {
      Sh.back() *= Shape[D];
      Ss.back() = SrcStrides[D];
      Ds.back() = DstStrides[D];
      continue;
    }
    Sh.push_back(Shape[D]);
    Ss.push_back(SrcStrides[D]);
    Ds.push_back(DstStrides[D]);
  }
  bool Fits = Sh.size() <= Rank;
  while (Sh.size() < Rank) {
    Sh.insert(Sh.begin(), 1);
    Ss.insert(Ss.begin(), 0);
    Ds.insert(Ds.begin(), 0);
  }
  Shape = std::move(Sh);
  SrcStrides = std::move(Ss);
  DstStrides = std::move(Ds);
  return Fits;
}

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

llvm::Expected<ShapeList> shapeSameAsInput(const Node &N) {
  return ShapeList(N.outputs().size(), N.input(0)->shape());
}

llvm::Expected<ShapeList> shapeBroadcast(const Node &N) {
  std::vector<int64_t> S;
  for (const Value *X : N.inputs()) {
    if (!X)
      continue;
    auto B = broadcastShapes(N, S, X->shape());
    if (!B)
      return B.takeError();
    S = *B;
  }
  return ShapeList{S};
}

} // namespace cuvil
