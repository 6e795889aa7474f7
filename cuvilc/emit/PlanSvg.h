//===- PlanSvg.h - A picture of one arena over time -------------*- C++ -*-===//
//
// Draws one activation arena as a standalone SVG: execution steps along x,
// byte offsets along y, one rectangle per arena buffer spanning its live
// range and its bytes; values stored in part of a buffer (the inputs of a
// Concat, computed in their slices of its output) are outlined inside it
// over their own live steps. Hovering a rectangle shows every value stored in
// it, the ONNX nodes that produce them, the offset, size and live range. The
// picture has no scripts and no external resources, and the same plan
// always gives the same bytes.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_EMIT_PLANSVG_H
#define CUVIL_EMIT_PLANSVG_H

#include "ir/Graph.h"
#include "planner/MemoryPlan.h"

#include <map>
#include <string>
#include <utility>

namespace cuvil {

/// Live steps of single values on G's current node order: from the step
/// that produces a value to the last step that reads it (the last step of
/// all for a graph output).
class ValueSteps {
public:
  explicit ValueSteps(const Graph &G);
  /// First and last step, inclusive.
  std::pair<unsigned, unsigned> of(const Value &V) const;

private:
  const Graph &G;
  std::map<unsigned, unsigned> StepOf; ///< Node id -> step.
};

/// The SVG document of arena number Arena of Plan (an index into
/// Plan.Arenas). G is the graph the plan was made for, in its execution
/// order; Title heads the picture.
std::string writePlanSvg(const Graph &G, const MemoryPlan &Plan, unsigned Arena,
                         const std::string &Title);

} // namespace cuvil

#endif
