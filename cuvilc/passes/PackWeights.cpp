//===- PackWeights.cpp - The pack-weights pass ----------------------------===//
//
// Rewrites constant weights into the order of the target's register-blocked
// kernels (PipelineOptions::PackPanel output channels per panel; 0 keeps the
// reference kernels and layouts). Each op that has a packed kernel says how
// through OpDef::PackWeights (see ops/nn/Packing.h), which rebuilds the
// node as the internal op that calls that kernel. Ops whose blocked kernel
// needs no packing (a depthwise Conv, a MatMul of run-time operands) are
// rebuilt the same way, their operands unchanged.
//
//===----------------------------------------------------------------------===//
#include "ops/OpRegistry.h"
#include "passes/Pass.h"

namespace cuvil {

llvm::Error packWeights(Graph &G, const PipelineOptions &O) {
  if (O.PackPanel <= 0)
    return llvm::Error::success();
  // Packing rebuilds nodes (as cuvil.PackedConv, ...), so they are
  // collected first. The packed forms have no PackWeights of their own.
  std::vector<Node *> Packable;
  for (const auto &N : G.nodes())
    if (N->def() && N->def()->PackWeights)
      Packable.push_back(N.get());
  for (Node *N : Packable)
    N->def()->PackWeights(G, *N, O.PackPanel);
  G.eraseDeadValues();
  return llvm::Error::success();
}

} // namespace cuvil
