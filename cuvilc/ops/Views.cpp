//===- Views.cpp - Ops that only reinterpret their input's buffer ---------===//
//
// Reshape, Flatten, Squeeze, Unsqueeze, Identity and inference-mode Dropout
// change no bytes: their output is a view of input 0 (Placement::View). The
// output shape comes from ONNX shape inference or, when that could not tell,
// from the fold-constants pass (ShapeRules); these checks only make sure
// the element count is preserved.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

#include <algorithm>

namespace cuvil {
namespace {

llvm::Error verifyView(const Node &N) {
  const Value *X = N.input(0), *Y = N.output(0);
  if (!X)
    return nodeError(N, "missing input");
  if (X->dtype() != Y->dtype() || X->numElements() != Y->numElements())
    return nodeError(N, "output '{}' does not hold the same elements as "
                        "input '{}'",
                     Y->name(), X->name());
  return llvm::Error::success();
}

llvm::Error verifyDropout(const Node &N) {
  if (N.outputs().size() > 1 && N.output(1)->dtype() != DType::Bool)
    return nodeError(N, "the mask output must be bool");
  // Training mode drops elements at random, unless the ratio is 0.
  auto ConstantZero = [](const Value *V) {
    return V && V->isConstant() &&
           std::all_of(V->data().begin(), V->data().end(),
                       [](uint8_t B) { return B == 0; });
  };
  if (const Value *T = N.input(2))
    if (!ConstantZero(T) && !ConstantZero(N.input(1)))
      return nodeError(N, "training_mode must be a constant false (or the "
                          "ratio a constant 0)");
  return verifyView(N);
}

// Output 0 is a view of the input; in inference every element is kept, so
// the optional mask output is all true.
llvm::Error lowerDropout(const Node &N, std::vector<KernelCall> &Calls) {
  if (N.outputs().size() > 1)
    Calls.push_back({"cuvil_k_fill_b8",
                     {KernelArg::tensor(N.output(1)),
                      KernelArg::i(N.output(1)->numElements()),
                      KernelArg::i(1)}});
  return llvm::Error::success();
}

} // namespace

extern const OpDef ReshapeOp = {"Reshape", verifyView, nullptr, noMacs,
                                Placement::View};
extern const OpDef FlattenOp = {"Flatten", verifyView, nullptr, noMacs,
                                Placement::View};
extern const OpDef SqueezeOp = {"Squeeze", verifyView, nullptr, noMacs,
                                Placement::View};
extern const OpDef UnsqueezeOp = {"Unsqueeze", verifyView, nullptr, noMacs,
                                  Placement::View};
extern const OpDef IdentityOp = {"Identity", verifyView, nullptr, noMacs,
                                 Placement::View};
extern const OpDef DropoutOp = {"Dropout", verifyDropout, lowerDropout,
                                noMacs, Placement::View};

} // namespace cuvil
