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
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/HostTensor.h"
#include "ops/OpRegistry.h"

namespace cuvil {
namespace {

// The importer gives the tensor attribute value as its element type and
// bits (value.dtype, value.bits: see OnnxImporter); absent, it is one f32 0.
#define CONSTANTOFSHAPE_ATTRS(X)                                               \
  X(ValueBits, "value.bits", Ints, {0})                                        \
  X(ValueType, "value.dtype", Int, static_cast<int64_t>(DType::F32))
CUVIL_OP_ATTRS(ConstantOfShapeAttrs, CONSTANTOFSHAPE_ATTRS)

llvm::Error verifyConstantOfShape(const Node &N) {
  const Value *Y = N.output(0);
  unsigned S = dtypeSize(Y->dtype());
  if (S != 1 && S != 2 && S != 4 && S != 8)
    return nodeError(N, "element type {} is not supported",
                     dtypeName(Y->dtype()));
  ConstantOfShapeAttrs At(N);
  if (At.ValueBits.size() != 1 ||
      At.ValueType != static_cast<int64_t>(Y->dtype()))
    return nodeError(N, "value must be one element of the output's type");
  return llvm::Error::success();
}

llvm::Error lowerConstantOfShape(const Node &N,
                                 std::vector<KernelCall> &Calls) {
  const Value *Y = N.output(0);
  if (Y->numElements() == 0)
    return llvm::Error::success();
  Calls.push_back(kabi::FillGroup{
      .Kernel = fmt::format("cuvil_k_fill_b{}", dtypeSize(Y->dtype()) * 8),
      .y = Y,
      .n = Y->numElements(),
      .bits = ConstantOfShapeAttrs(N).ValueBits[0]}
                      .call());
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
  Calls.push_back(kabi::RangeGroup{
      .Kernel = fmt::format("cuvil_k_range_{}", dtypeName(Y->dtype())),
      .start = N.input(0),
      .delta = N.input(2),
      .y = Y,
      .n = Y->numElements()}
                      .call());
  return llvm::Error::success();
}

llvm::Expected<bool> foldConstantOfShape(const Node &N, const HostInputs &,
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
  ConstantOfShapeAttrs At(N);
  std::vector<int64_t> &Bits = At.ValueBits;
  if (Bits.size() != 1)
    return nodeError(N, "value must hold one element");
  if (At.ValueType != static_cast<int64_t>(Y.Ty))
    return false;
  unsigned ES = dtypeSize(Y.Ty);
  for (int64_t I = 0; I < Y.count(); ++I)
    std::memcpy(&Y.Data[I * ES], &Bits[0], ES);
  return true;
}

llvm::Expected<bool> foldRange(const Node &N, const HostInputs &In,
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

} // namespace

extern const OpDef ConstantOfShapeOp = {.Name = "ConstantOfShape",
                                        .Verify = verifyConstantOfShape,
                                        .Lower = lowerConstantOfShape,
                                        .Macs = noMacs,
                                        .Traits = NoTraits,
                                        .Fold = foldConstantOfShape,
                                        .Attrs = ConstantOfShapeAttrs::Specs};
extern const OpDef RangeOp = {.Name = "Range",
                              .Verify = verifyRange,
                              .Lower = lowerRange,
                              .Macs = noMacs,
                              .Traits = NoTraits,
                              .Fold = foldRange};

} // namespace cuvil
