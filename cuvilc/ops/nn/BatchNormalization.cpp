//===- BatchNormalization.cpp - BatchNormalization ------------------------===//
//
// The FoldBatchNorm pass folds an inference BatchNormalization with constant
// parameters into the Conv or Gemm that produces its input. One it cannot
// fold is rewritten by that pass into a per-channel affine (inputs: X,
// scale', bias'; attribute cuvil.affine = 1). What the pass leaves alone
// (run-time parameters, training mode) lowers to kernels that read the
// parameters, or compute the batch statistics, at run time.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

namespace cuvil {
namespace {

bool training(const Node &N) { return N.getInt("training_mode", 0) != 0; }

llvm::Error verify(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  size_t Outs = N.outputs().size();
  if (training(N)) {
    // Y, running_mean, running_var; the importer drops an omitted one and
    // shifts the next, so two outputs are ambiguous.
    if (Outs == 2 || Outs > 3)
      return nodeError(N, "training mode with exactly one of the optional "
                          "running_mean/running_var outputs is not supported "
                          "(only none or both)");
  } else if (Outs > 1) {
    return nodeError(N, "the running mean/variance outputs are not supported "
                        "outside training mode");
  }
  const Value *X = N.input(0);
  if (!X || X->rank() < 2)
    return nodeError(N, "input must have rank >= 2");
  size_t Params = N.getInt("cuvil.affine", 0) ? 3 : 5;
  for (size_t I = 1; I < Params; ++I) {
    const Value *P = N.input(I);
    if (!P)
      return nodeError(N, "parameter {} is required", I);
    if (P->numElements() != X->shape()[1])
      return nodeError(N, "parameter '{}' has {} elements for {} channels",
                       P->name(), P->numElements(), X->shape()[1]);
  }
  return llvm::Error::success();
}

llvm::Error lower(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *X = N.input(0);
  int64_t B = X->shape()[0], C = X->shape()[1];
  int64_t Spatial = X->numElements() / (B * C);
  std::vector<KernelArg> Args{KernelArg::tensor(X)};
  size_t Params = N.getInt("cuvil.affine", 0) ? 3 : 5;
  for (size_t I = 1; I < Params; ++I)
    Args.push_back(KernelArg::tensor(N.input(I)));
  Args.push_back(KernelArg::tensor(N.output(0)));
  if (Params == 3) {
    Args.insert(Args.end(), {KernelArg::i(B), KernelArg::i(C),
                             KernelArg::i(Spatial)});
    Calls.push_back({"cuvil_k_channel_affine_f32", std::move(Args)});
    return llvm::Error::success();
  }
  bool Train = training(N);
  if (Train) {
    bool Running = N.outputs().size() == 3;
    Args.push_back(Running ? KernelArg::tensor(N.output(1))
                           : KernelArg::null());
    Args.push_back(Running ? KernelArg::tensor(N.output(2))
                           : KernelArg::null());
  }
  Args.insert(Args.end(),
              {KernelArg::i(B), KernelArg::i(C), KernelArg::i(Spatial),
               KernelArg::f(N.getFloat("epsilon", 1e-5f))});
  if (Train)
    Args.push_back(KernelArg::f(N.getFloat("momentum", 0.9f)));
  Calls.push_back({Train ? "cuvil_k_batch_norm_train_f32"
                         : "cuvil_k_batch_norm_f32",
                   std::move(Args)});
  return llvm::Error::success();
}

} // namespace

extern const OpDef BatchNormalizationOp = {"BatchNormalization", verify, lower,
                                           noMacs, InPlace};

} // namespace cuvil
