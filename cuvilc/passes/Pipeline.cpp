//===- Pipeline.cpp - The default pass pipeline ---------------------------===//
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"
#include "passes/Pass.h"

#include <algorithm>

namespace cuvil {

const std::vector<Pass> &defaultPipeline() {
  // The passes that need no target facts ignore the options.
  static const std::vector<Pass> P = {
      {"fold-constants",
       "evaluate nodes whose inputs are constants (and Shape/Size of static "
       "shapes) at compile time; resolve the shapes ONNX shape inference "
       "left unknown",
       [](Graph &G, const PipelineOptions &) { return foldConstants(G); },
       /*VerifyAfter=*/true},
      {"lower-qdq",
       "give quantized Conv/Gemm/MatMul (DequantizeLinear -> op -> "
       "QuantizeLinear, QLinearConv, QLinearMatMul) to the integer kernels: "
       "int8 weights, int32 accumulation, fixed-point requantization",
       lowerQdq},
      {"specialize-ops",
       "rebuild an op whose folded operands rule out its cheaper form as "
       "the record its Specialize hook names (a Dropout whose "
       "training_mode is known only at run time gets a kernel; an "
       "inference Dropout stays a view of its input)",
       [](Graph &G, const PipelineOptions &) { return specializeOps(G); }},
      {"eliminate-transposes",
       "compose a Transpose of a Transpose into one; a Transpose that "
       "moves only axes of size 1 becomes a view (no copy)",
       [](Graph &G, const PipelineOptions &O) {
         return eliminateTransposes(G, O.SizesVary);
       }},
      {"rewrite-patterns",
       "replace the patterns an op's Rewrite hook knows with cheaper forms: "
       "the exact GELU written with Erf becomes one Gelu; a MatMul by a "
       "constant matrix a Gemm of the rows of its other operand (Reshapes "
       "are views) that takes an Add of a bias as its C; a Softmax of a Mul or "
       "Div by a scalar constant one cuvil.ScaledSoftmax",
       [](Graph &G, const PipelineOptions &) { return rewritePatterns(G); }},
      {"fold-batchnorm",
       "fold BatchNormalization into the preceding Conv/Gemm, or into a "
       "per-channel affine",
       [](Graph &G, const PipelineOptions &) { return foldBatchNorm(G); }},
      {"fuse-activations",
       "fuse Relu/Clip into the epilogue of the producing Conv/Gemm",
       [](Graph &G, const PipelineOptions &) { return fuseActivations(G); }},
      {"dce", "remove nodes whose results are unused",
       [](Graph &G, const PipelineOptions &) { return eliminateDeadCode(G); }},
      {"pack-weights",
       "reorder constant Conv/Gemm/LSTM weights into the panels of the "
       "target's register-blocked kernels; a MatMul of run-time operands "
       "gets the register-blocked kernel that reads them in place",
       packWeights},
      {"fuse-residual",
       "fuse an Add of a packed Conv's result (and a Relu/Clip after it) "
       "into that Conv's epilogue",
       [](Graph &G, const PipelineOptions &) { return fuseResidualAdds(G); }},
  };
  return P;
}

llvm::Error
runPipeline(Graph &G, const std::vector<std::string> &DumpAfter,
            const std::function<void(std::string_view, const Graph &)> &Dump,
            const PipelineOptions &O) {
  auto Wanted = [&](std::string_view Name) {
    return std::find(DumpAfter.begin(), DumpAfter.end(), Name) !=
               DumpAfter.end() ||
           std::find(DumpAfter.begin(), DumpAfter.end(), "all") !=
               DumpAfter.end();
  };
  for (const std::string &Name : DumpAfter) {
    const auto &P = defaultPipeline();
    if (Name != "import" && Name != "all" &&
        std::none_of(P.begin(), P.end(),
                     [&](const Pass &X) { return X.Name == Name; })) {
      std::string Known = "import";
      for (const Pass &X : P)
        Known += ", " + std::string(X.Name);
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--dump-ir: no pass is named '%s' (passes: %s, or all)", Name.c_str(),
          Known.c_str());
    }
  }
  if (Wanted("import"))
    Dump("import", G);
  for (const Pass &P : defaultPipeline()) {
    beginStage(O.Timer, P.Name);
    if (auto E = P.Run(G, O))
      return E;
    if (Wanted(P.Name))
      Dump(P.Name, G);
    if (P.VerifyAfter) {
      if (auto E = verifyGraph(G))
        return E;
      // Shapes resolved by the pass (a folded Reshape, ConstantOfShape...)
      // are checked like those the model declared.
      if (auto E = G.checkTensorSizes())
        return E;
    }
  }
  return llvm::Error::success();
}

llvm::Error verifyGraphNode(const Node &N) {
  if (N.def()) {
    for (const Value *V : N.outputs())
      if (!V->hasStaticShape())
        return nodeError(N,
                         "the shape of output '{}' could not be "
                         "determined at compile time",
                         V->name());
    return N.def()->Verify(N);
  }
  if (!N.unsupportedReason().empty()) // the frontend knows why
    return nodeError(N, "operator '{}' is not supported here: {}", N.opType(),
                     N.unsupportedReason());
  if (!N.domain().empty())
    return nodeError(N,
                     "operator '{}' of domain '{}' is not supported by "
                     "cuvil",
                     N.opType(), N.domain());
  return nodeError(N, "operator '{}' is not supported by cuvil", N.opType());
}

llvm::Error verifyGraph(const Graph &G) {
  llvm::Error All = llvm::Error::success();
  for (const auto &N : G.nodes())
    All = llvm::joinErrors(std::move(All), verifyGraphNode(*N));
  return All;
}

} // namespace cuvil
