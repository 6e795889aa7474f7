//===- LayerFacts.h - What `cuvilc report` says of each node ----*- C++ -*-===//
//
// The facts of one node of the optimised graph that the HTML report shows
// and the bottleneck heuristics reason from: its work (MACs), the bytes it
// reads and writes, the kernels it was lowered to and the precision it
// computes in.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_EMIT_LAYERFACTS_H
#define CUVIL_EMIT_LAYERFACTS_H

#include "ir/Graph.h"
#include "lowering/KernelCall.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cuvil {

struct LayerFacts {
  size_t Step = 0; ///< Index in G.nodes(): the execution order.
  std::string Name, Op;
  std::vector<std::string> Origins; ///< The ONNX nodes it computes.
  int64_t Macs = 0;
  /// Bytes of every input (weights included) and output: what the node
  /// moves at least once.
  int64_t BytesMoved = 0;
  /// False for a view: no code, no step of its own.
  bool HasCode = false;
  /// The conditions its code runs under (a node of one branch of an If
  /// decided at run time): each a bool value's name and the value it must
  /// have, outermost first. Empty: it runs at every call.
  std::vector<std::pair<std::string, bool>> RunsWhen;
  /// The kernels of its calls, each once, in call order.
  std::vector<std::string> Kernels;
  /// Every call is a pure copy, which codegen drops when the planner put
  /// both ends at the same bytes: the step may run no kernel at all.
  bool OnlyCopies = false;
  /// Its multiply-accumulates take int8 operands (an integer kernel reads
  /// 8-bit data): the target's int8 peak applies, not the float32 one.
  bool Int8 = false;
  std::string Precision; ///< "int8", else the output's dtype ("f32").
  /// Elements per channel of the first output (H*W of an NCHW tensor, L of
  /// NCL); 0 for outputs of rank below 3.
  int64_t OutputSpatial = 0;
};

/// The facts of every node of G, in execution order; L is G's lowering
/// (entry I: node I).
std::vector<LayerFacts> layerFacts(const Graph &G, const GraphLowering &L);

/// The text for a node's kernel column: its kernels, "view (no code)", or
/// that the planner merged its copy away; and when it runs only in one
/// branch of an If, under which condition.
std::string kernelText(const LayerFacts &F);

} // namespace cuvil

#endif
