//===- Views.cpp - Ops that only reinterpret their input's buffer ---------===//
//
// Reshape, Flatten, Squeeze, Unsqueeze and Identity change no bytes: their
// output is a view of input 0 (the View trait). The
// output shape comes from ONNX shape inference or, when that could not tell,
// from the fold-constants pass (ShapeRules); these checks only make sure
// the element count is preserved. So is inference-mode Dropout; one whose
// training_mode is only known at run time gets DropoutTrainingOp from the
// specialize-ops pass: it computes y (in place) with cuvil_k_dropout_f32.
//
//===----------------------------------------------------------------------===//
#include "ops/tensor/Views.h"
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/HostTensor.h"
#include "ops/OpRegistry.h"

#include <algorithm>

namespace cuvil {
namespace {

#define DROPOUT_ATTRS(X) X(Seed, "seed", Int, 0)
CUVIL_OP_ATTRS(DropoutAttrs, DROPOUT_ATTRS)

llvm::Error verifyView(const Node &N) {
  const Value *X = N.input(0), *Y = N.output(0);
  if (!X)
    return nodeError(N, "missing input");
  if (X->dtype() != Y->dtype() || X->numElements() != Y->numElements())
    return nodeError(N,
                     "output '{}' does not hold the same elements as "
                     "input '{}'",
                     Y->name(), X->name());
  return llvm::Error::success();
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

llvm::Error lowerTrainingDropout(const Node &N,
                                 std::vector<KernelCall> &Calls) {
  const Value *X = N.input(0), *Y = N.output(0);
  const Value *Mask = N.outputs().size() > 1 ? N.output(1) : nullptr;
  Calls.push_back(kabi::DropoutF32{.x = X,
                                   .ratio = N.input(1),
                                   .training = N.input(2),
                                   .y = Y,
                                   .mask = Mask,
                                   .n = X->numElements(),
                                   .seed = DropoutAttrs(N).Seed}
                      .call());
  return llvm::Error::success();
}

// Output 0 is a view of the input; in inference every element is kept, so
// the optional mask output is all true.
llvm::Error lowerDropout(const Node &N, std::vector<KernelCall> &Calls) {
  if (!dropoutIsIdentity(N))
    return nodeError(N, "internal error: a Dropout with a run-time "
                        "training_mode was not given its training kernel by "
                        "the specialize-ops pass");
  if (N.outputs().size() > 1)
    Calls.push_back(kabi::FillB8{
        .y = N.output(1), .n = N.output(1)->numElements(), .bits = 1}
                        .call());
  return llvm::Error::success();
}

/// Same bytes, new shape (Reshape, Flatten, Squeeze, Unsqueeze, Identity).
template <llvm::Expected<std::vector<int64_t>> (*Rule)(
    const Node &, const std::vector<int64_t> &)>
llvm::Expected<bool> foldRelabel(const Node &N, const HostInputs &In,
                                 std::vector<HostTensor> &Out) {
  auto S = Rule(N, In[0]->Shape);
  if (!S)
    return S.takeError();
  if (Out[0].Ty != In[0]->Ty)
    return false;
  Out[0].Shape = *S;
  Out[0].Data = In[0]->Data;
  return true;
}

llvm::Expected<std::vector<int64_t>> sameShape(const Node &,
                                               const std::vector<int64_t> &S) {
  return S;
}

} // namespace

bool dropoutIsIdentity(const Node &N) {
  auto ConstantZero = [](const Value *V) {
    return V && V->isConstant() &&
           std::all_of(V->data().begin(), V->data().end(),
                       [](uint8_t B) { return B == 0; });
  };
  const Value *T = N.input(2);
  return !T || ConstantZero(T) || ConstantZero(N.input(1));
}

extern const OpDef ReshapeOp = {.Name = "Reshape",
                                .Verify = verifyView,
                                .Lower = nullptr,
                                .Macs = noMacs,
                                .Traits = View,
                                .Shape = shapeFromInput0<reshapeShape>,
                                .Fold = foldRelabel<reshapeShape>,
                                .Attrs = ReshapeAttrs::Specs};
extern const OpDef FlattenOp = {.Name = "Flatten",
                                .Verify = verifyView,
                                .Lower = nullptr,
                                .Macs = noMacs,
                                .Traits = View,
                                .Shape = shapeFromInput0<flattenShape>,
                                .Fold = foldRelabel<flattenShape>,
                                .Attrs = FlattenAttrs::Specs};
extern const OpDef SqueezeOp = {.Name = "Squeeze",
                                .Verify = verifyView,
                                .Lower = nullptr,
                                .Macs = noMacs,
                                .Traits = View,
                                .Shape = shapeFromInput0<squeezeShape>,
                                .Fold = foldRelabel<squeezeShape>,
                                .Attrs = SqueezeAttrs::Specs};
extern const OpDef UnsqueezeOp = {.Name = "Unsqueeze",
                                  .Verify = verifyView,
                                  .Lower = nullptr,
                                  .Macs = noMacs,
                                  .Traits = View,
                                  .Shape = shapeFromInput0<unsqueezeShape>,
                                  .Fold = foldRelabel<unsqueezeShape>,
                                  .Attrs = SqueezeAttrs::Specs};
extern const OpDef IdentityOp = {.Name = "Identity",
                                 .Verify = verifyView,
                                 .Lower = nullptr,
                                 .Macs = noMacs,
                                 .Traits = View,
                                 .Shape = shapeSameAsInput,
                                 .Fold = foldRelabel<sameShape>};
extern const OpDef DropoutTrainingOp;
namespace {
// A Dropout that may drop elements computes its output: the in-place
// kernel of DropoutTrainingOp.
const OpDef *specializeDropout(const Node &N) {
  return dropoutIsIdentity(N) ? nullptr : &DropoutTrainingOp;
}
} // namespace

extern const OpDef DropoutOp = {.Name = "Dropout",
                                .Verify = verifyDropout,
                                .Lower = lowerDropout,
                                .Macs = noMacs,
                                .Traits = View,
                                .Specialize = specializeDropout,
                                .Shape = shapeSameAsInput,
                                .Attrs = DropoutAttrs::Specs};
// Not in Ops.def: the specialize-ops pass gives it to the Dropout nodes
// that need it (DropoutOp's Specialize hook).
extern const OpDef DropoutTrainingOp = {.Name = "Dropout",
                                        .Verify = verifyDropout,
                                        .Lower = lowerTrainingDropout,
                                        .Macs = noMacs,
                                        .Traits = InPlace,
                                        .Shape = shapeSameAsInput,
                                        .Attrs = DropoutAttrs::Specs};

} // namespace cuvil
