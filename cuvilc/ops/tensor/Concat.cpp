//===- Concat.cpp - ONNX Concat
//--------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/HostTensor.h"
#include "ops/OpRegistry.h"

namespace cuvil {
namespace {

#define CONCAT_ATTRS(X) X(Axis, "axis", Int, 0)
CUVIL_OP_ATTRS(ConcatAttrs, CONCAT_ATTRS)

llvm::Error verifyConcatOp(const Node &N) {
  const Value *Y = N.output(0);
  if (Y->rank() == 0)
    return nodeError(N, "cannot concatenate scalars");
  auto Axis = normalizeAxis(N, ConcatAttrs(N).Axis, Y->rank());
  if (!Axis)
    return Axis.takeError();
  for (const Value *X : N.inputs()) {
    if (!X || X->dtype() != Y->dtype() || X->rank() != Y->rank())
      return nodeError(N, "inputs must share the output's type and rank");
    for (size_t D = 0; D < Y->rank(); ++D)
      if (static_cast<int64_t>(D) != *Axis && X->shape()[D] != Y->shape()[D])
        return nodeError(N,
                         "input '{}' differs from the output in "
                         "dimension {}",
                         X->name(), D);
  }
  return llvm::Error::success();
}

// Each input is copied as Outer rows into its slice of the output rows.
llvm::Error lowerConcatOp(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *Y = N.output(0);
  int64_t Axis = *normalizeAxis(N, ConcatAttrs(N).Axis, Y->rank());
  int64_t ESize = dtypeSize(Y->dtype());
  int64_t Outer = 1, Inner = ESize;
  for (int64_t D = 0; D < Axis; ++D)
    Outer *= Y->shape()[D];
  for (size_t D = Axis + 1; D < Y->rank(); ++D)
    Inner *= Y->shape()[D];
  int64_t DstRow = Y->shape()[Axis] * Inner, Offset = 0;
  for (const Value *X : N.inputs()) {
    int64_t Row = X->shape()[Axis] * Inner;
    if (Row == 0)
      continue;
    KernelCall C = kabi::CopyRows{.src = X,
                                  .dst = KernelArg::tensor(Y, Offset),
                                  .rows = Outer,
                                  .row_bytes = Row,
                                  .src_stride = Row,
                                  .dst_stride = DstRow}
                       .call();
    C.IsCopy = true;
    Calls.push_back(std::move(C));
    Offset += Row;
  }
  return llvm::Error::success();
}

llvm::Expected<ShapeList> concatShapes(const Node &N) {
  std::vector<int64_t> S = N.input(0)->shape();
  auto Axis = normalizeAxis(N, ConcatAttrs(N).Axis, S.size());
  if (!Axis)
    return Axis.takeError();
  S[*Axis] = 0;
  for (const Value *X : N.inputs())
    if (X && X->rank() == S.size())
      S[*Axis] += X->shape()[*Axis];
  return ShapeList{S};
}

llvm::Expected<bool> foldConcat(const Node &N, const HostInputs &In,
                                std::vector<HostTensor> &Out) {
  HostTensor &Y = Out[0];
  const HostTensor &F = *In[0];
  auto Axis = normalizeAxis(N, ConcatAttrs(N).Axis, F.Shape.size());
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

} // namespace

int64_t concatAxis(const Node &N) { return ConcatAttrs(N).Axis; }

extern const OpDef ConcatOp = {.Name = "Concat",
                               .Verify = verifyConcatOp,
                               .Lower = lowerConcatOp,
                               .Macs = noMacs,
                               .Traits = ConcatOfInputs | SelectsValues,
                               .Shape = concatShapes,
                               .Fold = foldConcat,
                               .Attrs = ConcatAttrs::Specs};

} // namespace cuvil
