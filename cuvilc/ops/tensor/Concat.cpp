//===- Concat.cpp - ONNX Concat --------------------------------------------===//
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

namespace cuvil {
namespace {

llvm::Error verify(const Node &N) {
  const Value *Y = N.output(0);
  if (Y->rank() == 0)
    return nodeError(N, "cannot concatenate scalars");
  auto Axis = normalizeAxis(N, N.getInt("axis", 0), Y->rank());
  if (!Axis)
    return Axis.takeError();
  for (const Value *X : N.inputs()) {
    if (!X || X->dtype() != Y->dtype() || X->rank() != Y->rank())
      return nodeError(N, "inputs must share the output's type and rank");
    for (size_t D = 0; D < Y->rank(); ++D)
      if (static_cast<int64_t>(D) != *Axis && X->shape()[D] != Y->shape()[D])
        return nodeError(N, "input '{}' differs from the output in "
                            "dimension {}",
                         X->name(), D);
  }
  return llvm::Error::success();
}

// Each input is copied as Outer rows into its slice of the output rows.
llvm::Error lower(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *Y = N.output(0);
  int64_t Axis = *normalizeAxis(N, N.getInt("axis", 0), Y->rank());
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
    Calls.push_back({"cuvil_k_copy_rows",
                     {KernelArg::tensor(X), KernelArg::tensor(Y, Offset),
                      KernelArg::i(Outer), KernelArg::i(Row), KernelArg::i(Row),
                      KernelArg::i(DstRow)},
                     /*IsCopy=*/true});
    Offset += Row;
  }
  return llvm::Error::success();
}

} // namespace

extern const OpDef ConcatOp = {"Concat", verify, lower, noMacs,
                               Placement::Fresh};

} // namespace cuvil
