//===- QdqWriter.h - The quantized model as a standard QDQ ONNX model -*- C++
//-*-===//
//
// Writes the plan (QuantPlan.h) into the model as ONNX Runtime's static
// quantizer does (QuantFormat.QDQ): every quantized activation T gets
// QuantizeLinear -> DequantizeLinear (uint8, zero point from the range),
// so that every reader of T, graph outputs included, reads the
// dequantized value under T's own name; each quantized weight becomes an
// int8 initializer (symmetric, per output channel from opset 13) behind a
// DequantizeLinear, each bias an int32 initializer of scale
// x_scale * w_scale. The float weights it replaces are dropped.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_QDQWRITER_H
#define CUVIL_QUANTIZE_QDQWRITER_H

#include "quantize/QuantPlan.h"
#include "quantize/RangeEstimator.h"

#include <llvm/Support/Error.h>

#include <map>
#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace cuvil::quant {

/// M with P applied, given the calibrated range of every tensor of
/// P.Calibrated. Description goes into the model's metadata
/// ("cuvil.quantization") so that the file says how it was made.
llvm::Expected<onnx::ModelProto>
writeQdqModel(const onnx::ModelProto &M, const QuantPlan &P,
              const std::map<std::string, Range> &Ranges,
              const std::string &Description);

} // namespace cuvil::quant

#endif
