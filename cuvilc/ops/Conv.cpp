//===- Conv.cpp - ONNX Conv (1-D to 3-D, grouped, depthwise) --------------===//
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"
#include "ops/Spatial.h"

namespace cuvil {
namespace {

llvm::Expected<Window> window(const Node &N) {
  const Value &W = *N.input(1);
  std::vector<int64_t> K(W.shape().begin() + 2, W.shape().end());
  return computeWindowNd(N, *N.input(0), *N.output(0), K, false);
}

llvm::Error verify(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  const Value *X = N.input(0), *W = N.input(1), *B = N.input(2);
  if (!X || !W)
    return nodeError(N, "Conv needs inputs X and W");
  if (X->rank() < 3)
    return nodeError(N, "input '{}' has rank {}; expected N, C and spatial "
                        "dimensions",
                     X->name(), X->rank());
  if (W->rank() != X->rank())
    return nodeError(N, "weight rank {} differs from input rank {}",
                     W->rank(), X->rank());
  int64_t Group = N.getInt("group", 1);
  int64_t C = X->shape()[1], M = W->shape()[0];
  if (Group < 1 || C % Group || M % Group || W->shape()[1] * Group != C)
    return nodeError(N, "group={} does not divide {} input / {} output "
                        "channels consistently with weight shape",
                     Group, C, M);
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
  KernelArg Bias = B ? KernelArg::tensor(B) : KernelArg::null();
  int64_t Group = N.getInt("group", 1);
  if (!Wd->fits2D()) {
    Calls.push_back(
        {"cuvil_k_conv3d_f32",
         {KernelArg::tensor(X), KernelArg::tensor(W), Bias,
          KernelArg::tensor(N.output(0)), KernelArg::i(X->shape()[0]),
          KernelArg::i(X->shape()[1]), KernelArg::i(W->shape()[0]),
          KernelArg::array(Window::vec(Wd->In)),
          KernelArg::array(Window::vec(Wd->Kernel)),
          KernelArg::array(Window::vec(Wd->Out)),
          KernelArg::array(Window::vec(Wd->Stride)),
          KernelArg::array(Window::vec(Wd->Dil)),
          KernelArg::array(Window::vec(Wd->PadBegin)), KernelArg::i(Group),
          KernelArg::f(Lo), KernelArg::f(Hi)}});
    return llvm::Error::success();
  }
  // 1-D and 2-D keep the 2-D kernel (entries 1 and 2 of the window).
  Calls.push_back(
      {"cuvil_k_conv2d_f32",
       {KernelArg::tensor(X), KernelArg::tensor(W), Bias,
        KernelArg::tensor(N.output(0)), KernelArg::i(X->shape()[0]),
        KernelArg::i(X->shape()[1]), KernelArg::i(Wd->In[1]),
        KernelArg::i(Wd->In[2]), KernelArg::i(W->shape()[0]),
        KernelArg::i(Wd->Kernel[1]), KernelArg::i(Wd->Kernel[2]),
        KernelArg::i(Wd->Out[1]), KernelArg::i(Wd->Out[2]),
        KernelArg::i(Wd->Stride[1]), KernelArg::i(Wd->Stride[2]),
        KernelArg::i(Wd->Dil[1]), KernelArg::i(Wd->Dil[2]),
        KernelArg::i(Wd->PadBegin[1]), KernelArg::i(Wd->PadBegin[2]),
        KernelArg::i(Group), KernelArg::f(Lo), KernelArg::f(Hi)}});
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
