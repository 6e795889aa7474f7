//===- BatchNormalization.cpp - inference-mode BatchNormalization ---------===//
//
// The FoldBatchNorm pass folds a BatchNormalization into the Conv or Gemm
// that produces its input. One it cannot fold is rewritten by that pass
// into a per-channel affine (inputs: X, scale', bias'; attribute
// cuvil.affine = 1), which this file lowers.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

namespace cuvil {
namespace {

llvm::Error verify(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  if (N.getInt("training_mode", 0) != 0)
    return nodeError(N, "training_mode=1 is not supported (inference only)");
  if (N.outputs().size() > 1)
    return nodeError(N, "the running mean/variance outputs are not supported");
  const Value *X = N.input(0);
  if (!X || X->rank() < 2)
    return nodeError(N, "input must have rank >= 2");
  size_t Params = N.getInt("cuvil.affine", 0) ? 3 : 5;
  for (size_t I = 1; I < Params; ++I) {
    const Value *P = N.input(I);
    if (!P || !P->isConstant())
      return nodeError(N, "parameter {} must be a constant initializer", I);
    if (P->numElements() != X->shape()[1])
      return nodeError(N, "parameter '{}' has {} elements for {} channels",
                       P->name(), P->numElements(), X->shape()[1]);
  }
  return llvm::Error::success();
}

llvm::Error lower(const Node &N, std::vector<KernelCall> &Calls) {
  if (!N.getInt("cuvil.affine", 0))
    return nodeError(N, "internal error: BatchNormalization was not "
                        "rewritten by the fold-batchnorm pass");
  const Value *X = N.input(0);
  int64_t C = X->shape()[1];
  Calls.push_back({"cuvil_k_channel_affine_f32",
                   {KernelArg::tensor(X), KernelArg::tensor(N.input(1)),
                    KernelArg::tensor(N.input(2)),
                    KernelArg::tensor(N.output(0)),
                    KernelArg::i(X->shape()[0]), KernelArg::i(C),
                    KernelArg::i(X->numElements() / (X->shape()[0] * C))}});
  return llvm::Error::success();
}

} // namespace

extern const OpDef BatchNormalizationOp = {"BatchNormalization", verify, lower,
                                           noMacs, Placement::InPlace};

} // namespace cuvil
