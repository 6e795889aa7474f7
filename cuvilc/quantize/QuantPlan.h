//===- QuantPlan.h - What post-training quantization changes ---*- C++ -*-===//
//
// `cuvilc quantize` works on the ONNX model itself and writes a standard
// QDQ model (QuantizeLinear/DequantizeLinear pairs, as ONNX Runtime's
// static quantizer writes them), which any tool reads and which cuvilc's
// lower-qdq pass turns into integer kernels. The plan says which nodes
// run in 8 bits and which activation tensors need a measured range:
//
//   - Conv, Gemm, MatMul with constant float weights (per output channel
//     int8 symmetric weights, int32 bias), each with the Relu/Clip that
//     follows it: the quantized output is the activation's;
//   - Add of two activations of one shape and GlobalAveragePool;
//   - MaxPool and the views (Reshape, Flatten, Transpose, Squeeze,
//     Unsqueeze) of a quantized tensor: their output shares its input's
//     parameters, so they move 8-bit values.
//
// Activations are uint8 asymmetric. Everything else stays float between
// the DequantizeLinear and QuantizeLinear of its neighbours.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_QUANTPLAN_H
#define CUVIL_QUANTIZE_QUANTPLAN_H

#include <llvm/Support/Error.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace cuvil::quant {

struct PlanOptions {
  /// Nodes that stay float (their names; an unnamed node by its first
  /// output's name).
  std::set<std::string> KeepFloat;
};

/// One node the QDQ model computes on 8-bit values.
struct QuantNode {
  int Index = 0;    ///< In the graph's node list.
  std::string Name; ///< The node's name, or its first output's.
  std::string Op;
  /// The activation tensors it reads, each behind a Q/DQ pair.
  std::vector<std::string> Inputs;
  /// The tensor that gets the Q/DQ pair after it: its output, or that of
  /// the Relu/Clip it absorbs.
  std::string Output;
  std::string Weight;  ///< Constant float weight (Conv, Gemm, MatMul).
  int WeightAxis = -1; ///< Its output-channel axis.
  std::string Bias;    ///< Constant float bias quantized to int32, or "".
};

struct QuantPlan {
  std::vector<QuantNode> Nodes;
  /// Every tensor with a Q/DQ pair, in graph order.
  std::vector<std::string> Tensors;
  /// Tensors whose range calibration measures (Tensors minus Shared).
  std::vector<std::string> Calibrated;
  /// The last quantized tensor before each graph output. Calibration
  /// takes its whole range (min/max) whatever the method: clipping what
  /// the model answers with (the logits before a Softmax) changes the
  /// answer, where clipping an inner tensor's outliers only adds noise.
  std::set<std::string> OutputSide;
  /// Tensors that take another tensor's parameters: tensor -> source.
  std::map<std::string, std::string> Shared;
  /// Why a node that could have been quantized was not, one line each
  /// ("node 'x' (Gemm): ...").
  std::vector<std::string> Notes;
  int64_t Opset = 0;      ///< The default domain's.
  bool PerChannel = true; ///< False before opset 13 (no axis attribute).
};

/// The plan for M (a float model the ONNX checker accepts).
llvm::Expected<QuantPlan> planQuantization(const onnx::ModelProto &M,
                                           const PlanOptions &O);

/// M with every tensor of P.Tensors that is neither a graph input nor
/// already an output added as a graph output, after M's own outputs: the
/// model calibration runs. Serialised. (Shared tensors are measured too: a
/// plan that keeps their source float needs their own range.)
llvm::Expected<std::string> calibrationModel(const onnx::ModelProto &M,
                                             const QuantPlan &P);

} // namespace cuvil::quant

#endif
