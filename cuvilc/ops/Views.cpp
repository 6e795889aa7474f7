//===- Views.cpp - Ops that only reinterpret their input's buffer ---------===//
//
// Reshape, Flatten, Squeeze, Unsqueeze and Identity change no bytes: their
// output is a view of input 0 (Placement::View). The
// output shape comes from ONNX shape inference or, when that could not tell,
// from the fold-constants pass (ShapeRules); these checks only make sure
// the element count is preserved. Dropout is one too in inference mode, but
// its training_mode may be a run-time input, so it runs in place instead:
// in inference its copy vanishes when the planner puts y on x.
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

/// True when Dropout provably keeps every element: no training_mode, or a
/// constant false one, or a constant ratio of 0.
bool dropoutIsIdentity(const Node &N) {
  auto ConstantZero = [](const Value *V) {
    return V && V->isConstant() &&
           std::all_of(V->data().begin(), V->data().end(),
                       [](uint8_t B) { return B == 0; });
  };
  const Value *T = N.input(2);
  return !T || ConstantZero(T) || ConstantZero(N.input(1));
}

llvm::Error verifyDropout(const Node &N) {
  if (N.outputs().size() > 1 && N.output(1)->dtype() != DType::Bool)
    return nodeError(N, "the mask output must be bool");
  if (!dropoutIsIdentity(N)) {
    // Training mode decided at run time: cuvil_k_dropout_f32.
    const Value *X = N.input(0), *R = N.input(1), *T = N.input(2);
    if (!X || X->dtype() != DType::F32)
      return nodeError(N, "with a run-time training_mode, only f32 data is "
                          "supported");
    if (R && (R->dtype() != DType::F32 || R->numElements() != 1))
      return nodeError(N, "ratio '{}' must be an f32 scalar", R->name());
    if (T->dtype() != DType::Bool || T->numElements() != 1)
      return nodeError(N, "training_mode '{}' must be a bool scalar",
                       T->name());
  }
  return verifyView(N);
}

llvm::Error lowerDropout(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *X = N.input(0), *Y = N.output(0);
  const Value *Mask = N.outputs().size() > 1 ? N.output(1) : nullptr;
  if (!dropoutIsIdentity(N)) {
    Calls.push_back(
        {"cuvil_k_dropout_f32",
         {KernelArg::tensor(X),
          N.input(1) ? KernelArg::tensor(N.input(1)) : KernelArg::null(),
          KernelArg::tensor(N.input(2)), KernelArg::tensor(Y),
          Mask ? KernelArg::tensor(Mask) : KernelArg::null(),
          KernelArg::i(X->numElements()), KernelArg::i(N.getInt("seed", 0))}});
    return llvm::Error::success();
  }
  // Every element is kept: y is x (a copy that vanishes when the planner
  // runs the node in place) and the optional mask is all true.
  KernelCall Copy{"cuvil_k_copy",
                  {KernelArg::tensor(X), KernelArg::tensor(Y),
                   KernelArg::i(X->byteSize())}};
  Copy.IsCopy = true;
  Calls.push_back(std::move(Copy));
  if (Mask)
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
                                noMacs, Placement::InPlace};

} // namespace cuvil
