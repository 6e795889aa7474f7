//===- SchemaInference.h - Shape inference of cuvil's schemas ---*- C++ -*-===//
//
// ONNX type-and-shape inference functions for the schemas of
// SchemasNewer.cpp. Each sets the output element types and, when the
// input shapes and the constant operands they need are known, the output
// shapes; otherwise it leaves the dimensions open, for cuvil's own shape
// resolution after constant folding.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_ONNX_SCHEMAINFERENCE_H
#define CUVIL_FRONTEND_ONNX_SCHEMAINFERENCE_H

#include <onnx/defs/shape_inference.h>

namespace cuvil::schemas {

/// Split-18: the split input, or num_outputs equal parts (last smaller).
void inferSplit18(onnx::InferenceContext &Ctx);
/// Pad-18: constant pads, restricted to the constant axes input.
void inferPad18(onnx::InferenceContext &Ctx);
/// Resize-18: constant sizes or scales over the axes attribute, with
/// keep_aspect_ratio_policy.
void inferResize18(onnx::InferenceContext &Ctx);
/// Col2Im-18: [N, C * prod(block), L] -> [N, C, image_shape...].
void inferCol2Im18(onnx::InferenceContext &Ctx);
/// DFT-20: axis (default -2) and dft_length from constant inputs.
void inferDft20(onnx::InferenceContext &Ctx);
/// Pools with kernel_shape, strides, dilations, pads, auto_pad, ceil_mode.
void inferPool(onnx::InferenceContext &Ctx);
/// QuantizeLinear-19/21: the zero point's type, else output_dtype, else
/// uint8.
void inferQuantize(onnx::InferenceContext &Ctx);
/// DequantizeLinear-19/21: the scale's type, the input's shape.
void inferDequantize(onnx::InferenceContext &Ctx);
/// Einsum-12: every output dimension from the equation and static input
/// shapes (ONNX 1.12's own inference gives the rank only).
void inferEinsum(onnx::InferenceContext &Ctx);

} // namespace cuvil::schemas

#endif
