//===- LoopBound.h - Loops unrolled to the user's bound ---------*- C++ -*-===//
//
// `--loop-bound NODE=K` unrolls a Loop that has no bound of its own to K
// iterations; a cuvil.LoopBound node on each of its outputs stops the run
// with CUVIL_ERR_LOOP_BOUND when the loop would run once more (see
// LoopBound.cpp and frontend/onnx/UnrollLoop.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_SEQUENCE_LOOPBOUND_H
#define CUVIL_OPS_SEQUENCE_LOOPBOUND_H

#include "ir/Graph.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cuvil {

/// The Loops of G whose runs are checked against the user's bound: each
/// Loop's name and bound, once, in the order of the graph.
std::vector<std::pair<std::string, int64_t>> checkedLoopBounds(const Graph &G);

} // namespace cuvil

#endif
