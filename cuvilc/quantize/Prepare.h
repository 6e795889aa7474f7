//===- Prepare.h - The float model made ready for quantization --*- C++ -*-===//
//
// Before planning, a BatchNormalization that follows a Conv (its only
// reader, with constant parameters) is folded into the Conv's weights and
// bias, as the float compiler does (passes/FoldBatchNorm.cpp) and as
// quantizers do first: quantizing the unfolded Conv would quantize weights
// the board never uses, and the BatchNormalization would stay a float
// island between two QuantizeLinear/DequantizeLinear pairs.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_PREPARE_H
#define CUVIL_QUANTIZE_PREPARE_H

#include <llvm/Support/Error.h>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace cuvil::quant {

/// Folds every Conv -> BatchNormalization pair of M's main graph; the
/// number folded.
llvm::Expected<int> foldConvBatchNorm(onnx::ModelProto &M);

} // namespace cuvil::quant

#endif
