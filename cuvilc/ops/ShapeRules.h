//===- ShapeRules.h - Shape rules of the data-movement ops ------*- C++ -*-===//
//
// What Slice, Expand, Tile, Pad, Split, Gather, Reshape, Squeeze and
// Unsqueeze compute, as plain functions of shapes and of their constant
// operands. They are shared by the ops' verification and lowering (runtime
// data) and by the fold-constants pass (constant data, and output shapes
// that ONNX shape inference left unknown), so the two cannot disagree.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_SHAPERULES_H
#define CUVIL_OPS_SHAPERULES_H

#include "ir/Graph.h"
#include "ops/OpRegistry.h"

#include <llvm/Support/Error.h>
#include <vector>

namespace cuvil {

/// An element access pattern over a dense source tensor: the result (dense,
/// of shape Shape) at multi-index j is source[Offset + sum(j_k * Strides[k])]
/// (element counts; strides may be 0 or negative).
struct StridedAccess {
  std::vector<int64_t> Shape;
  std::vector<int64_t> Strides;
  int64_t Offset = 0;
};

/// Row-major element strides of a dense tensor.
std::vector<int64_t> denseStrides(const std::vector<int64_t> &Shape);
/// The values of constant integer input I, or an error naming the node.
llvm::Expected<std::vector<int64_t>> constInts(const Node &N, size_t I,
                                               const char *What);

/// Slice: starts/ends/axes/steps from constant inputs (opset >= 10) or
/// attributes (older), with ONNX's clamping of negative and large bounds.
llvm::Expected<StridedAccess> sliceAccess(const Node &N,
                                          const std::vector<int64_t> &In);
/// numpy broadcast of two shapes.
llvm::Expected<std::vector<int64_t>>
broadcastShapes(const Node &N, const std::vector<int64_t> &A,
                const std::vector<int64_t> &B);
/// Reading In broadcast to Out (stride 0 on broadcast dimensions).
StridedAccess broadcastAccess(const std::vector<int64_t> &In,
                              const std::vector<int64_t> &Out);
/// Expand: the output shape from the constant shape input.
llvm::Expected<std::vector<int64_t>>
expandShape(const Node &N, const std::vector<int64_t> &In);
/// Tile: one (repeat, dim) pair of access dimensions per input dimension.
llvm::Expected<StridedAccess> tileAccess(const Node &N,
                                         const std::vector<int64_t> &In);
/// Reshape: the output shape from the constant shape input (0 copies the
/// input dimension unless allowzero, -1 is inferred).
llvm::Expected<std::vector<int64_t>>
reshapeShape(const Node &N, const std::vector<int64_t> &In);
/// Squeeze / Unsqueeze: axes from the attribute (opset < 13) or the
/// constant input 1, and the resulting shape.
llvm::Expected<std::vector<int64_t>>
squeezeShape(const Node &N, const std::vector<int64_t> &In);
llvm::Expected<std::vector<int64_t>>
unsqueezeShape(const Node &N, const std::vector<int64_t> &In);
/// Flatten: [prod(In[0..axis)), prod(In[axis..))].
llvm::Expected<std::vector<int64_t>>
flattenShape(const Node &N, const std::vector<int64_t> &In);
/// Split: the extent of each output along the (normalised) axis.
llvm::Expected<std::vector<int64_t>> splitSizes(const Node &N, int64_t Axis,
                                                const std::vector<int64_t> &In);
/// Pad: begin and end pads per dimension (negative crops), from the constant
/// pads input (opset >= 11) or attribute, restricted to the axes input.
llvm::Expected<std::vector<int64_t>> padAmounts(const Node &N,
                                                const std::vector<int64_t> &In);
/// Gather: normalised axis and constant indices (negative ones wrapped and
/// checked against the axis extent).
struct GatherParams {
  int64_t Axis = 0;
  std::vector<int64_t> Indices;
  std::vector<int64_t> IndicesShape;
  std::vector<int64_t> OutShape;
};
llvm::Expected<GatherParams> gatherParams(const Node &N,
                                          const std::vector<int64_t> &In);

/// Tile: the output shape.
llvm::Expected<std::vector<int64_t>> tileShape(const Node &N,
                                               const std::vector<int64_t> &In);

// Shape hooks (OpDef::Shape) several ops share.

/// Every output has input 0's shape.
llvm::Expected<ShapeList> shapeSameAsInput(const Node &N);
/// One output: the numpy broadcast of the inputs' shapes.
llvm::Expected<ShapeList> shapeBroadcast(const Node &N);
/// One output, whose shape Rule computes from input 0's.
template <llvm::Expected<std::vector<int64_t>> (*Rule)(
    const Node &, const std::vector<int64_t> &)>
llvm::Expected<ShapeList> shapeFromInput0(const Node &N) {
  auto S = Rule(N, N.input(0)->shape());
  if (!S)
    return S.takeError();
  return ShapeList{*S};
}

/// RNN / GRU / LSTM: the shape of each output (by its ONNX position: Y,
/// Y_h, Y_c, then the workspace the op asks for as scratch).
llvm::Expected<std::vector<std::vector<int64_t>>>
recurrentShapes(const Node &N);
/// Einsum: the output shape its equation gives for the input shapes (for
/// node N; for ONNX shape inference, from the equation and shapes alone).
llvm::Expected<std::vector<std::vector<int64_t>>> einsumShapes(const Node &N);
llvm::Expected<std::vector<int64_t>>
einsumShape(const std::string &Equation,
            const std::vector<std::vector<int64_t>> &Inputs);

/// Host evaluation of an access: the dense result bytes.
std::vector<uint8_t> applyAccess(const uint8_t *Src, unsigned ElemSize,
                                 const StridedAccess &A);

/// Drops unit dimensions and merges dimensions that both sides walk
/// contiguously, then pads on the left to Rank. Returns false if more than
/// Rank dimensions remain (then left merged, unpadded). DstStrides are the
/// destination's strides per access dimension (dense ones when the destination
/// is dense).
bool canonicalizeCopy(std::vector<int64_t> &Shape,
                      std::vector<int64_t> &SrcStrides,
                      std::vector<int64_t> &DstStrides, size_t Rank);

} // namespace cuvil

#endif
