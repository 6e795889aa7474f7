//===- Pass.h - Graph passes and the pipeline that runs them ----*- C++ -*-===//
#ifndef CUVIL_PASSES_PASS_H
#define CUVIL_PASSES_PASS_H

#include "ir/Graph.h"
#include "ir/StageTimer.h"

#include <functional>
#include <llvm/Support/Error.h>
#include <string_view>
#include <vector>

namespace cuvil {

/// What the passes need to know of the target.
struct PipelineOptions {
  /// Output channels per panel of the target's packed Conv/Gemm kernels
  /// (the kernel library's cuvil_k_pack_mr); 0 keeps every weight in its
  /// ONNX layout for the portable reference kernels.
  int64_t PackPanel = 0;
  /// The weight packing of the target's integer kernels (the kernel
  /// library's cuvil_k_qpack_mr / _kr); 0 keeps them plain, for the
  /// reference integer kernels.
  int64_t QPackMr = 0, QPackKr = 0;
  /// The library has the stride-1 integer convolution on the
  /// channel-interleaved image (cuvil_k_qpack_direct): such convolutions
  /// pack their weights in its step order and get its scratch.
  bool QPackDirect = false;
  /// The packed integer kernels' activation domain
  /// (cuvil_k_qpack_x_unsigned): its correction is folded into their bias.
  bool QPackXUnsigned = false;
  /// The library's element-wise integer kernels in int32 lanes
  /// (cuvil_k_qadd_lanes_s8) rather than the reference ones.
  bool QLanes = false;
  /// The cores a run splits its layers across (--cores): the direct
  /// integer convolution gets a scratch for each core's rows.
  int64_t Cores = 1;
  /// Times each pass as a stage (-v, --time-passes); null: not timed.
  StageTimer *Timer = nullptr;
  /// A build for a range of a dimension (driver/DimRange.h): an axis of
  /// size 1 at one value may be longer at another, so no rewrite may rely
  /// on it (a Transpose moving axes of size 1 stays a Transpose).
  bool SizesVary = false;
};

/// A graph-to-graph transformation with a name (used by --dump-ir=NAME).
struct Pass {
  std::string_view Name;
  std::string_view Description;
  llvm::Error (*Run)(Graph &G, const PipelineOptions &O);
  /// Verify every node after this pass (before passes that rewrite nodes
  /// and rely on their validity).
  bool VerifyAfter = false;
};

/// Checks that every node is supported and valid for code generation.
/// Reports every offending node, not only the first.
llvm::Error verifyGraph(const Graph &G);
/// The same for one node.
llvm::Error verifyGraphNode(const Node &N);

// The passes, in pipeline order.
/// MergeConstants: step 4 of ConstantFold.cpp (off where the constants'
/// names are read afterwards: the Loop trip counts of a first import).
llvm::Error foldConstants(Graph &G, bool MergeConstants = true);
llvm::Error lowerQdq(Graph &G, const PipelineOptions &O);
llvm::Error specializeOps(Graph &G);
llvm::Error eliminateTransposes(Graph &G, bool SizesVary = false);
llvm::Error rewritePatterns(Graph &G);
llvm::Error foldBatchNorm(Graph &G);
llvm::Error fuseActivations(Graph &G);
llvm::Error eliminateDeadCode(Graph &G);
llvm::Error packWeights(Graph &G, const PipelineOptions &O);
llvm::Error fuseResidualAdds(Graph &G);

/// Fuses the activation A (Relu, a constant Clip: OpDef::ActivationClamp)
/// into the clamp epilogue of the op that produces its input
/// (OpDef::WithClamp: Conv, Gemm...), if it is that result's only use; the
/// producer is rebuilt as its fused form. True if it did.
bool fuseActivation(Graph &G, Node *A);

/// The default pipeline.
const std::vector<Pass> &defaultPipeline();

/// Runs the pipeline; after each pass whose name is in DumpAfter (or all
/// passes for "all"), calls Dump(passName, graph). Verifies the graph after
/// the passes marked VerifyAfter (fold-constants: what it could not fold or
/// resolve is reported there, every offending node at once).
llvm::Error
runPipeline(Graph &G, const std::vector<std::string> &DumpAfter,
            const std::function<void(std::string_view, const Graph &)> &Dump,
            const PipelineOptions &O = {});

} // namespace cuvil

#endif
