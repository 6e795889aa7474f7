//===- Transpose.cpp - ONNX Transpose -------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/HostTensor.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

#define TRANSPOSE_ATTRS(X) X(Perm, "perm", Ints, {})
CUVIL_OP_ATTRS(TransposeAttrs, TRANSPOSE_ATTRS)

llvm::Error verifyTransposeOp(const Node &N) {
  const Value *X = N.input(0);
  if (dtypeSize(X->dtype()) != 4)
    return nodeError(N, "element type {} is not supported (4-byte types only)",
                     dtypeName(X->dtype()));
  auto P = transposePerm(N);
  if (P.size() != X->rank())
    return nodeError(N, "perm has {} entries for rank {}", P.size(), X->rank());
  std::vector<bool> Seen(P.size());
  for (int64_t I : P) {
    if (I < 0 || I >= static_cast<int64_t>(P.size()) || Seen[I])
      return nodeError(N, "perm is not a permutation");
    Seen[I] = true;
  }
  if (X->rank() > CUVIL_MAX_RANK)
    return nodeError(N, "rank {} exceeds the supported {}", X->rank(),
                     CUVIL_MAX_RANK);
  return llvm::Error::success();
}

llvm::Error lowerTransposeOp(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *X = N.input(0);
  auto P = transposePerm(N);
  size_t R = X->rank();
  std::vector<int64_t> InStride(R);
  int64_t S = 1;
  for (size_t I = R; I-- > 0;) {
    InStride[I] = S;
    S *= X->shape()[I];
  }
  std::vector<int64_t> Shape(CUVIL_MAX_RANK, 1), Str(CUVIL_MAX_RANK, 0);
  for (size_t I = 0; I < R; ++I) {
    Shape[CUVIL_MAX_RANK - R + I] = X->shape()[P[I]];
    Str[CUVIL_MAX_RANK - R + I] = InStride[P[I]];
  }
  Calls.push_back(kabi::TransposeB32{
      .x = X, .y = N.output(0), .out_shape = Shape, .in_str = Str}
                      .call());
  return llvm::Error::success();
}

llvm::Expected<std::vector<int64_t>>
transposeShape(const Node &N, const std::vector<int64_t> &In) {
  std::vector<int64_t> Perm = TransposeAttrs(N).Perm;
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

/// Any element type: the int64 index tensors of an exporter's shape
/// arithmetic (PyTorch's Pad computes its pads through a Transpose).
llvm::Expected<bool> fold(const Node &N, const HostInputs &In,
                          std::vector<HostTensor> &Out) {
  const HostTensor &X = *In[0];
  auto P = transposePerm(N);
  if (P.size() != X.Shape.size())
    return false; // verification says why
  std::vector<int64_t> InStride = denseStrides(X.Shape);
  StridedAccess A;
  for (int64_t D : P) {
    if (D < 0 || D >= static_cast<int64_t>(P.size()))
      return false;
    A.Shape.push_back(X.Shape[D]);
    A.Strides.push_back(InStride[D]);
  }
  std::vector<int64_t> Shape = A.Shape;
  return foldAccess(X, A, std::move(Shape), Out[0]);
}

} // namespace

std::vector<int64_t> transposePerm(const Node &N) {
  size_t R = N.input(0)->rank();
  std::vector<int64_t> Rev;
  for (size_t I = 0; I < R; ++I)
    Rev.push_back(static_cast<int64_t>(R - 1 - I));
  return N.hasAttr("perm") ? TransposeAttrs(N).Perm : Rev;
}

extern const OpDef TransposeOp = {.Name = "Transpose",
                                  .Verify = verifyTransposeOp,
                                  .Lower = lowerTransposeOp,
                                  .Macs = noMacs,
                                  .Traits = Permutes,
                                  .Shape = shapeFromInput0<transposeShape>,
                                  .Fold = fold,
                                  .Attrs = TransposeAttrs::Specs};

} // namespace cuvil
