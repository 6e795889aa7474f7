//===- Quantize.cpp - QuantizeLinear, DequantizeLinear, Dynamic... --------===//
//
// Linear (de)quantization between float32 and uint8/int8 (int32 for
// DequantizeLinear), per tensor or per axis. Scales and zero points may be
// run-time inputs: the kernels read them. Blocked quantization (opset 21
// block_size) and the float8/int4/16-bit types are rejected.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/Shares.h"
#include "ops/quant/Quant.h"

#include <cuvil/kernels.h>
#include <fmt/ranges.h>

namespace cuvil {

std::optional<int64_t> quantTypeCode(DType T, bool AllowI32) {
  if (T == DType::U8)
    return CUVIL_Q_U8;
  if (T == DType::I8)
    return CUVIL_Q_I8;
  if (T == DType::I32 && AllowI32)
    return CUVIL_Q_I32;
  return std::nullopt;
}

llvm::Error requireQuant8(const Node &N, const Value *V, const char *What) {
  if (!V)
    return nodeError(N, "missing {}", What);
  if (!quantTypeCode(V->dtype()))
    return nodeError(N,
                     "{} '{}' has element type {}; only uint8 and int8 "
                     "are supported",
                     What, V->name(), dtypeName(V->dtype()));
  return llvm::Error::success();
}

llvm::Expected<bool> checkQuantParam(const Node &N, const Value *P, DType Type,
                                     int64_t PerChannel, const char *Channel) {
  if (!P)
    return false;
  if (P->dtype() != Type)
    return nodeError(N, "'{}' has element type {}; expected {}", P->name(),
                     dtypeName(P->dtype()), dtypeName(Type));
  if (P->numElements() == 1 && P->rank() <= 1)
    return false;
  if (PerChannel > 0 && P->rank() == 1 && P->shape()[0] == PerChannel)
    return true;
  if (PerChannel > 0)
    return nodeError(N,
                     "'{}' has shape [{}]; only one value or one per {} "
                     "({}) is supported",
                     P->name(), fmt::join(P->shape(), ", "), Channel,
                     PerChannel);
  return nodeError(N, "'{}' has shape [{}]; only a single value is supported",
                   P->name(), fmt::join(P->shape(), ", "));
}

llvm::Expected<bool> checkScaleAndZeroPoint(const Node &N, const Value *Scale,
                                            const Value *Zp, DType ZpType,
                                            int64_t PerChannel,
                                            const char *Channel) {
  if (!Scale)
    return nodeError(N, "missing scale input");
  auto S = checkQuantParam(N, Scale, DType::F32, PerChannel, Channel);
  if (!S)
    return S.takeError();
  auto Z = checkQuantParam(N, Zp, ZpType, PerChannel, Channel);
  if (!Z)
    return Z.takeError();
  if (Zp && *S != *Z)
    return nodeError(N, "scale '{}' and zero point '{}' differ in shape",
                     Scale->name(), Zp->name());
  return *S;
}

namespace {

/// x viewed as [Outer, AxisDim, Inner] around the quantization axis
/// (AxisDim = 1 for per-tensor parameters).
struct AxisSplit {
  int64_t Outer = 1, AxisDim = 1, Inner = 1;
};

/// Verifies the scale (input 1) and zero point (input 2) of a
/// (De)QuantizeLinear node whose quantized tensor has type QType, and splits
/// the shape of input 0 around the axis when they are per axis.
llvm::Expected<AxisSplit> splitAxis(const Node &N, DType QType) {
  const Value *X = N.input(0);
  const QdqAttrs A(N);
  if (A.BlockSize != 0)
    return nodeError(N,
                     "blocked quantization (block_size={}) is not "
                     "supported",
                     A.BlockSize);
  auto Axis = normalizeAxis(N, A.Axis, X->rank());
  // Opset 10 has no axis: its parameters are always scalars.
  int64_t Channels = Axis && X->rank() > 0 ? X->shape()[*Axis] : 0;
  if (!Axis)
    llvm::consumeError(Axis.takeError());
  auto PerAxis = checkScaleAndZeroPoint(N, N.input(1), N.input(2), QType,
                                        N.opset() >= 13 ? Channels : 0,
                                        "element along the axis");
  if (!PerAxis)
    return PerAxis.takeError();
  AxisSplit S;
  if (!*PerAxis) {
    S.Outer = X->numElements();
    return S;
  }
  const std::vector<int64_t> &Sh = X->shape();
  for (int64_t I = 0; I < *Axis; ++I)
    S.Outer *= Sh[I];
  S.AxisDim = Sh[*Axis];
  for (size_t I = *Axis + 1; I < Sh.size(); ++I)
    S.Inner *= Sh[I];
  return S;
}

/// Kern (cuvil_k_quantize_f32 or cuvil_k_dequantize_f32) with N's operands
/// and the split S set, which both take alike.
template <typename K>
KernelCall withOperands(K Kern, const Node &N, const AxisSplit &S) {
  Kern.x = N.input(0);
  Kern.scale = N.input(1);
  Kern.zp = N.input(2);
  Kern.y = N.output(0);
  Kern.outer = S.Outer;
  Kern.axis_dim = S.AxisDim;
  Kern.inner = S.Inner;
  return Kern.call();
}

llvm::Error verifyQuantize(const Node &N) {
  const Value *X = N.input(0), *Y = N.output(0);
  if (!X || X->dtype() != DType::F32)
    return nodeError(N, "input must be float32; only float32 input is "
                        "supported");
  if (!quantTypeCode(Y->dtype()))
    return nodeError(N,
                     "output type {} is not supported; only uint8 and "
                     "int8 are",
                     dtypeName(Y->dtype()));
  return splitAxis(N, Y->dtype()).takeError();
}

llvm::Error lowerQuantize(const Node &N, std::vector<KernelCall> &Calls) {
  auto S = splitAxis(N, N.output(0)->dtype());
  if (!S)
    return S.takeError();
  Calls.push_back(withOperands(
      kabi::QuantizeF32{.y_type = *quantTypeCode(N.output(0)->dtype())}, N,
      *S));
  return llvm::Error::success();
}

llvm::Error verifyDequantize(const Node &N) {
  const Value *X = N.input(0), *Y = N.output(0);
  if (!X || !quantTypeCode(X->dtype(), /*AllowI32=*/true))
    return nodeError(N,
                     "input type {} is not supported; only uint8, int8 "
                     "and int32 are",
                     X ? dtypeName(X->dtype()) : "(none)");
  if (Y->dtype() != DType::F32)
    return nodeError(N, "output type {} is not supported; only float32 is",
                     dtypeName(Y->dtype()));
  return splitAxis(N, X->dtype()).takeError();
}

llvm::Error lowerDequantize(const Node &N, std::vector<KernelCall> &Calls) {
  auto S = splitAxis(N, N.input(0)->dtype());
  if (!S)
    return S.takeError();
  Calls.push_back(withOperands(
      kabi::DequantizeF32{.x_type = *quantTypeCode(N.input(0)->dtype(), true)},
      N, *S));
  return llvm::Error::success();
}

/// OpDef::Split (--cores) of a per-tensor (de)quantization: ranges of
/// elements in units of 256, each share the same call on its range (the
/// input quantization of an INT8 model is a few percent of its run).
template <typename K>
void splitPerTensor(const Node &N, const std::vector<KernelCall> &Calls,
                    int64_t Parts,
                    std::vector<std::vector<KernelCall>> &Shares) {
  if (Calls.size() != 1 || Calls[0].Kernel != K::Name)
    return;
  const K Whole = K::from(Calls[0]);
  if (Whole.axis_dim != 1)
    return;
  const int64_t XBytes = dtypeSize(N.input(0)->dtype()),
                YBytes = dtypeSize(N.output(0)->dtype());
  for (auto [B, E] : shareRanges(Whole.outer * Whole.inner, 256, Parts)) {
    K S = Whole;
    S.x = atBytes(Whole.x, B * XBytes);
    S.y = atBytes(Whole.y, B * YBytes);
    S.outer = 1;
    S.inner = E - B;
    Shares.push_back({S.call()});
  }
}

llvm::Error verifyDynamic(const Node &N) {
  const Value *X = N.input(0);
  if (!X || X->dtype() != DType::F32)
    return nodeError(N, "input must be float32; only float32 input is "
                        "supported");
  if (N.outputs().size() != 3)
    return nodeError(N, "expected outputs y, y_scale and y_zero_point");
  const Value *Y = N.output(0), *S = N.output(1), *Z = N.output(2);
  if (Y->dtype() != DType::U8 || S->dtype() != DType::F32 ||
      Z->dtype() != DType::U8 || S->numElements() != 1 || Z->numElements() != 1)
    return nodeError(N, "outputs must be uint8 y, scalar float32 y_scale "
                        "and scalar uint8 y_zero_point");
  return llvm::Error::success();
}

llvm::Error lowerDynamic(const Node &N, std::vector<KernelCall> &Calls) {
  Calls.push_back(kabi::DynamicQuantizeF32U8{.x = N.input(0),
                                             .y = N.output(0),
                                             .y_scale = N.output(1),
                                             .y_zero_point = N.output(2),
                                             .n = N.input(0)->numElements()}
                      .call());
  return llvm::Error::success();
}

} // namespace

extern const OpDef QuantizeLinearOp = {.Name = "QuantizeLinear",
                                       .Verify = verifyQuantize,
                                       .Lower = lowerQuantize,
                                       .Macs = noMacs,
                                       .Traits = Quantizes,
                                       .Split =
                                           splitPerTensor<kabi::QuantizeF32>,
                                       .Attrs = QdqAttrs::Specs};
extern const OpDef DequantizeLinearOp = {
    .Name = "DequantizeLinear",
    .Verify = verifyDequantize,
    .Lower = lowerDequantize,
    .Macs = noMacs,
    .Traits = Dequantizes,
    .Split = splitPerTensor<kabi::DequantizeF32>,
    .Attrs = QdqAttrs::Specs};
extern const OpDef DynamicQuantizeLinearOp = {
    "DynamicQuantizeLinear", verifyDynamic, lowerDynamic, noMacs, NoTraits};

} // namespace cuvil
