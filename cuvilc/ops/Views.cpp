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
  if (N.outputs().size() > 1 && !N.output(1)->users().empty())
    return nodeError(N, "the mask output is not supported");
  if (const Value *T = N.input(2))
    if (!T->isConstant() ||
        std::any_of(T->data().begin(), T->data().end(),
                    [](uint8_t B) { return B != 0; }))
      return nodeError(N, "training_mode must be a constant false");
  return verifyView(N);
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
extern const OpDef DropoutOp = {"Dropout", verifyDropout, nullptr, noMacs,
                                Placement::View};

} // namespace cuvil
