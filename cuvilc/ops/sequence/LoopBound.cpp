//===- LoopBound.cpp - cuvil.LoopBound: stop a run past a loop's bound ----===//
//
// Internal op (domain "cuvil"). A Loop with no bound of its own (a
// run-time trip count, a while loop) is unrolled to the bound the user
// gives it, `--loop-bound NODE=K` (frontend/onnx/UnrollLoop.cpp): K
// guarded iterations. The importer puts this node on each of the loop's
// outputs. Inputs: the output's value as the K iterations leave it, and
// the bool scalar "the loop would run once more". Its output is input 0's
// bytes (a view: no copy); its code tests the flag and, when it is set,
// stops the run with CUVIL_ERR_LOOP_BOUND instead of handing on a state
// the model did not finish. Attributes: the Loop's name and K, for the
// header and the report.
//
//===----------------------------------------------------------------------===//
#include "ops/sequence/LoopBound.h"

#include "ir/Diagnostic.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"

#include <cuvil/status.h>

#include <algorithm>

namespace cuvil {
namespace {

llvm::Error verifyLoopBound(const Node &N) {
  if (N.numInputs() != 2 || !N.input(0) || !N.input(1) ||
      N.outputs().size() != 1)
    return nodeError(N, "takes a value and a flag and gives one output");
  const Value *X = N.input(0), *Flag = N.input(1), *Y = N.output(0);
  if (Flag->dtype() != DType::Bool || Flag->numElements() != 1)
    return nodeError(N, "the flag '{}' must be a bool scalar", Flag->name());
  if (X->dtype() != Y->dtype() || X->shape() != Y->shape())
    return nodeError(N, "output '{}' must have the type and shape of '{}'",
                     Y->name(), X->name());
  if (N.getInt("bound", 0) < 1 || N.getString("loop", "").empty())
    return nodeError(N, "needs the Loop's name and a bound of at least 1");
  return llvm::Error::success();
}

/// No kernel: the node's code is the test of its exit.
llvm::Error lowerLoopBound(const Node &, std::vector<KernelCall> &) {
  return llvm::Error::success();
}

std::optional<RunExit> loopBoundExit(const Node &N) {
  return RunExit{N.input(1), CUVIL_ERR_LOOP_BOUND};
}

constexpr AttrSpec LoopBoundAttrs[] = {{"loop", AttrKind::String},
                                       {"bound", AttrKind::Int},
                                       {nullptr, AttrKind::Int}};

} // namespace

std::vector<std::pair<std::string, int64_t>> checkedLoopBounds(const Graph &G) {
  std::vector<std::pair<std::string, int64_t>> R;
  for (const auto &N : G.nodes()) {
    if (!N->def() || std::string_view(N->def()->Name) != "cuvil.LoopBound")
      continue;
    std::pair<std::string, int64_t> B{N->getString("loop", ""),
                                      N->getInt("bound", 0)};
    if (std::find(R.begin(), R.end(), B) == R.end())
      R.push_back(std::move(B));
  }
  return R;
}

extern const OpDef LoopBoundOp = {.Name = "cuvil.LoopBound",
                                  .Verify = verifyLoopBound,
                                  .Lower = lowerLoopBound,
                                  .Macs = noMacs,
                                  .Traits = View,
                                  .Shape = shapeSameAsInput,
                                  .Attrs = LoopBoundAttrs,
                                  .Exit = loopBoundExit};

} // namespace cuvil
