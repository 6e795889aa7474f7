//===- PackWeights.cpp - The pack-weights pass ----------------------------===//
//
// Rewrites constant weights into the order of the target's register-blocked
// kernels (PipelineOptions::PackPanel output channels per panel; 0 keeps the
// reference kernels and layouts). Each op that has a packed kernel says how
// through OpDef::PackWeights (see ops/nn/Packing.h).
//
//===----------------------------------------------------------------------===//
#include "ops/OpRegistry.h"
#include "passes/Pass.h"

namespace cuvil {

llvm::Error packWeights(Graph &G, const PipelineOptions &O) {
  if (O.PackPanel <= 0)
    return llvm::Error::success();
  for (const auto &N : G.nodes())
    if (N->def() && N->def()->PackWeights && !N->hasAttr("cuvil.packed"))
      N->def()->PackWeights(G, *N, O.PackPanel);
  G.eraseDeadValues();
  return llvm::Error::success();
}

} // namespace cuvil
