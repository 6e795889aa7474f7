//===- Views.h - The attributes of the view ops -----------------*- C++ -*-===//
//
// Reshape, Flatten, Squeeze and Unsqueeze are defined in Views.cpp; their
// shape rules, which read these attributes, are in ops/ShapeRules.cpp,
// shared with the fold-constants pass.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_TENSOR_VIEWS_H
#define CUVIL_OPS_TENSOR_VIEWS_H

#include "ops/Attrs.h"

namespace cuvil {

// shape is an attribute before opset 5, input 1 since.
#define RESHAPE_ATTRS(X)                                                       \
  X(Shape, "shape", Ints, {}) X(AllowZero, "allowzero", Int, 0)
CUVIL_OP_ATTRS(ReshapeAttrs, RESHAPE_ATTRS)
#define FLATTEN_ATTRS(X) X(Axis, "axis", Int, 1)
CUVIL_OP_ATTRS(FlattenAttrs, FLATTEN_ATTRS)
// Squeeze's and Unsqueeze's (an attribute before opset 13, input 1 since).
#define SQUEEZE_ATTRS(X) X(Axes, "axes", Ints, {})
CUVIL_OP_ATTRS(SqueezeAttrs, SQUEEZE_ATTRS)

} // namespace cuvil

#endif
