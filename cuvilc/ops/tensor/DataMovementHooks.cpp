//===- DataMovementHooks.cpp - Data movement at compile time --------------===//
#include "ops/tensor/DataMovement.h"

#include "ir/Diagnostic.h"

#include <cstring>

namespace cuvil {
namespace {

llvm::Expected<std::vector<int64_t>>
sliceShape(const Node &N, const std::vector<int64_t> &In) {
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

} // namespace

llvm::Expected<ShapeList> sliceShapes(const Node &N) {
  return shapeFromInput0<sliceShape>(N);
}
llvm::Expected<ShapeList> gatherShapes(const Node &N) {
  return shapeFromInput0<gatherShape>(N);
}
llvm::Expected<ShapeList> padShapes(const Node &N) {
  return shapeFromInput0<padShape>(N);
}

llvm::Expected<ShapeList> splitShapes(const Node &N) {
  std::vector<int64_t> S = N.input(0)->shape();
  auto Axis = normalizeAxis(N, SplitAttrs(N).Axis, S.size());
  if (!Axis)
    return Axis.takeError();
  auto Sizes = splitSizes(N, *Axis, S);
  if (!Sizes)
    return Sizes.takeError();
  ShapeList Out;
  for (int64_t Z : *Sizes) {
    Out.push_back(S);
    Out.back()[*Axis] = Z;
  }
  return Out;
}

llvm::Expected<bool> foldSlice(const Node &N, const HostInputs &In,
                               std::vector<HostTensor> &Out) {
  auto A = sliceAccess(N, In[0]->Shape);
  if (!A)
    return A.takeError();
  return foldAccess(*In[0], *A, A->Shape, Out[0]);
}

llvm::Expected<bool> foldExpand(const Node &N, const HostInputs &In,
                                std::vector<HostTensor> &Out) {
  auto S = expandShape(N, In[0]->Shape);
  if (!S)
    return S.takeError();
  return foldAccess(*In[0], broadcastAccess(In[0]->Shape, *S), *S, Out[0]);
}

llvm::Expected<bool> foldTile(const Node &N, const HostInputs &In,
                              std::vector<HostTensor> &Out) {
  auto A = tileAccess(N, In[0]->Shape);
  if (!A)
    return A.takeError();
  auto S = tileShape(N, In[0]->Shape);
  if (!S)
    return S.takeError();
  return foldAccess(*In[0], *A, *S, Out[0]);
}

llvm::Expected<bool> foldGather(const Node &N, const HostInputs &In,
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

llvm::Expected<bool> foldSplit(const Node &N, const HostInputs &In,
                               std::vector<HostTensor> &Out) {
  const HostTensor &X = *In[0];
  auto Axis = normalizeAxis(N, SplitAttrs(N).Axis, X.Shape.size());
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

} // namespace cuvil
