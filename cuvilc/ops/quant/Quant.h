//===- Quant.h - Shared checks for the quantization ops ---------*- C++ -*-===//
//
// QuantizeLinear, DequantizeLinear and the integer/QLinear products all take
// scale and zero-point tensors that hold either one value (per tensor) or one
// value per channel of some axis, and all pass quantized tensors to kernels
// as untyped pointers with a CUVIL_Q_* element-type code.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_QUANT_H
#define CUVIL_OPS_QUANT_H

#include "ir/Graph.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"

#include <llvm/Support/Error.h>
#include <optional>

namespace cuvil {

// QuantizeLinear's and DequantizeLinear's attributes, read by their
// records and by lower-qdq (saturate and output_dtype do not change what
// cuvil supports).
#define QDQ_ATTRS(X)                                                           \
  X(Axis, "axis", Int, 1)                                                      \
  X(BlockSize, "block_size", Int, 0)
CUVIL_OP_ATTRS(QdqAttrs, QDQ_ATTRS)

/// The CUVIL_Q_* code of an 8-bit quantized type (and of int32 when
/// AllowI32), or nullopt for every other type.
std::optional<int64_t> quantTypeCode(DType T, bool AllowI32 = false);

/// Requires V (named What, e.g. "input 'x'") to be uint8 or int8.
llvm::Error requireQuant8(const Node &N, const Value *V, const char *What);

/// Checks a scale or zero-point operand P (may be null when optional) of
/// element type Type that holds one value or, when PerChannel > 0, one value
/// per channel (named Channel in messages) in a 1-D tensor of PerChannel
/// elements. Returns whether it is per channel.
llvm::Expected<bool> checkQuantParam(const Node &N, const Value *P, DType Type,
                                     int64_t PerChannel, const char *Channel);

/// Checks a float32 scale and its optional zero point of type ZpType as
/// above and that both are per channel or both per tensor; returns which.
llvm::Expected<bool> checkScaleAndZeroPoint(const Node &N, const Value *Scale,
                                            const Value *Zp, DType ZpType,
                                            int64_t PerChannel,
                                            const char *Channel);

/// The CUVIL_QCONV_* geometry array of a 1-D or 2-D convolution node N of
/// input X ([N, C, spatial...]), kernel extent Kernel, M output channels
/// and Group groups (window attributes read from N, output shape from its
/// output 0).
llvm::Expected<std::vector<int64_t>> qconvGeometry(const Node &N,
                                                   const Value *X,
                                                   std::vector<int64_t> Kernel,
                                                   int64_t M, int64_t Group);

} // namespace cuvil

#endif
