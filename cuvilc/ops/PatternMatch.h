//===- PatternMatch.h - Small matchers for the Rewrite hooks ---*- C++ -*-===//
//
// What the ops' Rewrite hooks (rewrite-patterns pass) ask of the nodes
// around them: an ONNX binary op, a scalar constant operand, the single
// reader of a value.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_PATTERNMATCH_H
#define CUVIL_OPS_PATTERNMATCH_H

#include "ir/Graph.h"

#include <optional>

namespace cuvil {

/// N is the ONNX op Op (default domain) with two inputs.
bool isBinaryOp(const Node *N, const char *Op);

/// The value of V when it is a float32 constant of one element (any rank).
std::optional<float> scalarF32(const Value *V);

/// V is a float32 scalar constant within 1e-6 (relative) of Want.
bool isScalar(const Value *V, float Want);

/// The operand of binary node N that is not the scalar Want, or null when
/// neither is.
Value *otherThanScalar(const Node *N, float Want);

/// The single node that reads V (which is no graph output), or null.
Node *soleUser(const Graph &G, const Value *V);

} // namespace cuvil

#endif
