//===- Conv.cpp - ONNX Conv (1-D and 2-D, grouped, depthwise) -------------===//
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"
#include "ops/Spatial.h"

namespace cuvil {
namespace {

llvm::Expected<Window2D> window(const Node &N) {
  const Value &W = *N.input(1);
  std::vector<int64_t> K(W.shape().begin() + 2, W.shape().end());
  return computeWindow(N, *N.input(0), *N.output(0), K, false);
}

llvm::Error verify(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  const Value *X = N.input(0), *W = N.input(1), *B = N.input(2);
  if (!X || !W)
    return nodeError(N, "Conv needs inputs X and W");
  if (auto E = verifyConvChannels(N, *X, *W))
    return E;
  int64_t M = W->shape()[0];
  if (B && (B->rank() != 1 || B->shape()[0] != M))
    return nodeError(N, "bias must have shape [{}]", M);
  auto Wd = window(N);
  if (!Wd)
    return Wd.takeError();
  return llvm::Error::success();
}

llvm::Error lower(const Node &N, std::vector<KernelCall> &Calls) {
  auto Wd = window(N);
  if (!Wd)
    return Wd.takeError();
  const Value *X = N.input(0), *W = N.input(1), *B = N.input(2);
  auto [Lo, Hi] = fusedActivation(N);
  Calls.push_back(
      {"cuvil_k_conv2d_f32",
       {KernelArg::tensor(X), KernelArg::tensor(W),
        B ? KernelArg::tensor(B) : KernelArg::null(),
        KernelArg::tensor(N.output(0)), KernelArg::i(X->shape()[0]),
        KernelArg::i(X->shape()[1]), KernelArg::i(Wd->H), KernelArg::i(Wd->W),
        KernelArg::i(W->shape()[0]), KernelArg::i(Wd->KH),
        KernelArg::i(Wd->KW), KernelArg::i(Wd->OH), KernelArg::i(Wd->OW),
        KernelArg::i(Wd->SH), KernelArg::i(Wd->SW), KernelArg::i(Wd->DH),
        KernelArg::i(Wd->DW), KernelArg::i(Wd->PadT), KernelArg::i(Wd->PadL),
        KernelArg::i(N.getInt("group", 1)), KernelArg::f(Lo),
        KernelArg::f(Hi)}});
  return llvm::Error::success();
}

int64_t macs(const Node &N) {
  // Every output element accumulates over C/group * kernel elements.
  const Value *W = N.input(1);
  return N.output(0)->numElements() * (W->numElements() / W->shape()[0]);
}

} // namespace

extern const OpDef ConvOp = {"Conv", verify, lower, macs, Placement::Fresh};

} // namespace cuvil
