//===- ShapeResolution.h - Output shapes from folded constants --*- C++ -*-===//
//
// ONNX shape inference leaves some output dimensions unknown when they
// depend on values it cannot see (a Reshape whose shape comes from a Shape
// chain, say). Once fold-constants has turned those values into constants,
// the ops' shape hooks (OpDef::Shape) compute the missing shapes.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PASSES_SHAPERESOLUTION_H
#define CUVIL_PASSES_SHAPERESOLUTION_H

#include "ir/Graph.h"

#include <llvm/Support/Error.h>
#include <vector>

namespace cuvil {

/// Fills in N's unknown output shapes where a rule and N's (now static)
/// inputs allow; leaves them unknown otherwise (verification reports it).
void resolveShapes(Node &N);

/// Dimensions no forward rule can compute (a Range of a run-time limit, say)
/// that shape-preserving and broadcasting ops tie to a known dimension
/// downstream, typically the model's declared output shape: unknown
/// dimensions get symbols, element-wise ops equate them, and a symbol equal
/// to a known size takes it. Dimensions left ambiguous stay unknown.
void resolveFromDeclaredShapes(Graph &G);

} // namespace cuvil

#endif
