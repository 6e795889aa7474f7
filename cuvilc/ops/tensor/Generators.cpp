//===- Generators.cpp - ConstantOfShape and Range at run time -------------===//
//
// With constant inputs both fold at compile time (fold-constants). With
// run-time inputs their output shape must still be static (ONNX shape
// inference, or the model's declared output shape): ConstantOfShape then
// fills it (cuvil_k_fill_b<bits>), Range computes start + i * delta
// (cuvil_k_range_<type>).
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

namespace cuvil {
namespace {

llvm::Error verifyConstantOfShape(const Node &N) {
  const Value *Y = N.output(0);
  unsigned S = dtypeSize(Y->dtype());
  if (S != 1 && S != 2 && S != 4 && S != 8)
    return nodeError(N, "element type {} is not supported",
                     dtypeName(Y->dtype()));
  if (N.getInts("value.bits", {0}).size() != 1 ||
      N.getInt("value.dtype", static_cast<int64_t>(DType::F32)) !=
          static_cast<int64_t>(Y->dtype()))
    return nodeError(N, "value must be one element of the output's type");
  return llvm::Error::success();
}

llvm::Error lowerConstantOfShape(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *Y = N.output(0);
  if (Y->numElements() == 0)
    return llvm::Error::success();
  Calls.push_back({fmt::format("cuvil_k_fill_b{}", dtypeSize(Y->dtype()) * 8),
                   {KernelArg::tensor(Y), KernelArg::i(Y->numElements()),
                    KernelArg::i(N.getInts("value.bits", {0})[0])}});
  return llvm::Error::success();
}

bool rangeType(DType T) {
  return T == DType::F32 || T == DType::F64 || T == DType::I16 ||
         T == DType::I32 || T == DType::I64;
}

llvm::Error verifyRange(const Node &N) {
  const Value *Y = N.output(0);
  if (!rangeType(Y->dtype()))
    return nodeError(N, "element type {} is not supported",
                     dtypeName(Y->dtype()));
  for (size_t I = 0; I < 3; ++I)
    if (!N.input(I) || N.input(I)->dtype() != Y->dtype() ||
        N.input(I)->numElements() != 1)
      return nodeError(N, "start, limit and delta must be scalars of the "
                          "output's type");
  if (Y->rank() != 1)
    return nodeError(N, "the output must be 1-D");
  return llvm::Error::success();
}

llvm::Error lowerRange(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *Y = N.output(0);
  if (Y->numElements() == 0)
    return llvm::Error::success();
  Calls.push_back({fmt::format("cuvil_k_range_{}", dtypeName(Y->dtype())),
                   {KernelArg::tensor(N.input(0)), KernelArg::tensor(N.input(2)),
                    KernelArg::tensor(Y), KernelArg::i(Y->numElements())}});
  return llvm::Error::success();
}

} // namespace

extern const OpDef ConstantOfShapeOp = {"ConstantOfShape",
                                        verifyConstantOfShape,
                                        lowerConstantOfShape, noMacs,
                                        Placement::Fresh};
extern const OpDef RangeOp = {"Range", verifyRange, lowerRange, noMacs,
                              Placement::Fresh};

} // namespace cuvil
