//===- GeluPattern.h - GELU written with Erf as one Gelu -------*- C++ -*-===//
#ifndef CUVIL_OPS_ELEMENTWISE_GELUPATTERN_H
#define CUVIL_OPS_ELEMENTWISE_GELUPATTERN_H

#include "ir/Graph.h"

namespace cuvil {

/// Erf's Rewrite hook: x * 0.5 * (1 + erf(x / sqrt 2)) through Erf, as
/// exporters write it below opset 20, becomes one Gelu of x (see
/// GeluPattern.cpp for the forms matched). Null when the chain differs.
Node *rewriteExactGelu(Graph &G, Node &Erf);

} // namespace cuvil

#endif
