//===- BatchNormalization.cpp - BatchNormalization ------------------------===//
//
// The FoldBatchNorm pass folds an inference BatchNormalization with constant
// parameters into the Conv or Gemm that produces its input. One it cannot
// fold is rewritten by that pass into a per-channel affine (inputs: X,
// scale', bias'; attribute cuvil.affine = 1), which this file lowers. The
// pass leaves alone a BN whose parameters are only known at run time, or in
// training mode (batch statistics, running mean/variance outputs): those
// lower to kernels that read every operand at run time.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

namespace cuvil {
namespace {

llvm::Error verify(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  bool Training = N.getInt("training_mode", 0) != 0;
  // The importer drops absent outputs, so two outputs could be Y with
  // either statistic: only one or all three are unambiguous.
  if (Training && N.outputs().size() == 2)
    return nodeError(N, "training mode with exactly one of the running "
                        "mean/variance outputs is not supported");
  if (!Training && N.outputs().size() > 1)
    return nodeError(N, "the running mean/variance outputs exist only in "
                        "training mode");
  const Value *X = N.input(0);
  if (!X || X->rank() < 2)
    return nodeError(N, "input must have rank >= 2");
  size_t Params = N.getInt("cuvil.affine", 0) ? 3 : 5;
  for (size_t I = 1; I < Params; ++I) {
    const Value *P = N.input(I);
    if (!P)
      return nodeError(N, "parameter {} is missing", I);
    if (P->numElements() != X->shape()[1])
      return nodeError(N, "parameter '{}' has {} elements for {} channels",
                       P->name(), P->numElements(), X->shape()[1]);
  }
  return llvm::Error::success();
}

/// BatchNormalization with its parameters read at run time.
void lowerRuntime(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *X = N.input(0);
  int64_t Batch = X->shape()[0], C = X->shape()[1];
  int64_t Spatial = X->numElements() / (Batch * C);
  KernelCall K{"cuvil_k_batchnorm_f32", {KernelArg::tensor(X)}};
  for (size_t I = 1; I <= 4; ++I)
    K.Args.push_back(KernelArg::tensor(N.input(I)));
  K.Args.push_back(KernelArg::tensor(N.output(0)));
  if (N.getInt("training_mode", 0)) {
    K.Kernel = "cuvil_k_batchnorm_train_f32";
    bool Stats = N.outputs().size() == 3;
    K.Args.push_back(Stats ? KernelArg::tensor(N.output(1))
                           : KernelArg::null());
    K.Args.push_back(Stats ? KernelArg::tensor(N.output(2))
                           : KernelArg::null());
  }
  for (int64_t A : {Batch, C, Spatial})
    K.Args.push_back(KernelArg::i(A));
  K.Args.push_back(KernelArg::f(N.getFloat("epsilon", 1e-5f)));
  if (N.getInt("training_mode", 0))
    K.Args.push_back(KernelArg::f(N.getFloat("momentum", 0.9f)));
  Calls.push_back(std::move(K));
}

llvm::Error lower(const Node &N, std::vector<KernelCall> &Calls) {
  if (!N.getInt("cuvil.affine", 0)) {
    lowerRuntime(N, Calls);
    return llvm::Error::success();
  }
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
