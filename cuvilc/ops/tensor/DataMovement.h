//===- DataMovement.h - Data-movement ops at compile time -------*- C++ -*-===//
//
// The shape and fold hooks (OpDef::Shape, OpDef::Fold) of Slice, Expand,
// Tile, Split, Pad and Gather, defined in DataMovementHooks.cpp beside the
// shape rules they apply (ops/ShapeRules.h); their OpDefs, verification
// and lowering are in DataMovement.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_TENSOR_DATAMOVEMENT_H
#define CUVIL_OPS_TENSOR_DATAMOVEMENT_H

#include "ops/Attrs.h"
#include "ops/HostTensor.h"

namespace cuvil {

// The attributes each op reads; the shape rules of ops/ShapeRules.cpp read
// them too (Slice's, Split's and Pad's parameters were attributes before
// opset 10, 13 and 11, inputs since).
// clang-format off
#define SLICE_ATTRS(X)                                                         \
  X(Starts, "starts", Ints, {})                                                \
  X(Ends, "ends", Ints, {})                                                    \
  X(Axes, "axes", Ints, {})
CUVIL_OP_ATTRS(SliceAttrs, SLICE_ATTRS)
#define SPLIT_ATTRS(X) X(Axis, "axis", Int, 0) X(Split, "split", Ints, {})
CUVIL_OP_ATTRS(SplitAttrs, SPLIT_ATTRS)
#define PAD_ATTRS(X)                                                           \
  X(Mode, "mode", String, "constant")                                          \
  X(Value, "value", Float, 0.0f)                                               \
  X(Pads, "pads", Ints, {})                                                    \
  X(Paddings, "paddings", Ints, {})
CUVIL_OP_ATTRS(PadAttrs, PAD_ATTRS)
// clang-format on
#define GATHER_ATTRS(X) X(Axis, "axis", Int, 0)
CUVIL_OP_ATTRS(GatherAttrs, GATHER_ATTRS)

llvm::Expected<ShapeList> sliceShapes(const Node &N);
llvm::Expected<ShapeList> gatherShapes(const Node &N);
llvm::Expected<ShapeList> padShapes(const Node &N);
llvm::Expected<ShapeList> splitShapes(const Node &N);

llvm::Expected<bool> foldSlice(const Node &N, const HostInputs &In,
                               std::vector<HostTensor> &Out);
llvm::Expected<bool> foldExpand(const Node &N, const HostInputs &In,
                                std::vector<HostTensor> &Out);
llvm::Expected<bool> foldTile(const Node &N, const HostInputs &In,
                              std::vector<HostTensor> &Out);
llvm::Expected<bool> foldGather(const Node &N, const HostInputs &In,
                                std::vector<HostTensor> &Out);
llvm::Expected<bool> foldSplit(const Node &N, const HostInputs &In,
                               std::vector<HostTensor> &Out);

} // namespace cuvil

#endif
