//===- Pass.h - Graph passes and the pipeline that runs them ----*- C++ -*-===//
#ifndef CUVIL_PASSES_PASS_H
#define CUVIL_PASSES_PASS_H

#include "ir/Graph.h"

#include <functional>
#include <llvm/Support/Error.h>
#include <string_view>
#include <vector>

namespace cuvil {

/// A graph-to-graph transformation with a name (used by --dump-ir=NAME).
struct Pass {
  std::string_view Name;
  std::string_view Description;
  llvm::Error (*Run)(Graph &G);
};

/// Checks that every node is supported and valid for code generation.
/// Reports every offending node, not only the first.
llvm::Error verifyGraph(const Graph &G);
/// The same for one node.
llvm::Error verifyGraphNode(const Node &N);

// The passes, in pipeline order.
llvm::Error foldBatchNorm(Graph &G);
llvm::Error fuseActivations(Graph &G);
llvm::Error eliminateDeadCode(Graph &G);

/// The default pipeline.
const std::vector<Pass> &defaultPipeline();

/// Runs the pipeline; after each pass whose name is in DumpAfter (or all
/// passes for "all"), calls Dump(passName, graph).
llvm::Error runPipeline(
    Graph &G, const std::vector<std::string> &DumpAfter,
    const std::function<void(std::string_view, const Graph &)> &Dump);

} // namespace cuvil

#endif
