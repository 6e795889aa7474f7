//===- Conv.cpp - ONNX Conv (1-D to 3-D, grouped, depthwise) --------------===//
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"
#include "ops/nn/Packing.h"
#include "ops/nn/Spatial.h"

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
  if (auto E = verifyConvChannels(N, *X, *W))
    return E;
  int64_t M = W->shape()[0];
  if (B && (B->rank() != 1 || B->shape()[0] != M))
    return nodeError(N, "bias must have shape [{}]", M);
  // Input 3 is not ONNX's: the fuse-residual pass puts there the other
  // operand of an Add of this Conv's result (see FuseResidual.cpp).
  if (const Value *R = N.input(3)) {
    if (!N.hasAttr("cuvil.packed") || N.getInt("group", 1) != 1)
      return nodeError(N, "internal error: a fused residual needs the packed "
                          "group-1 convolution kernel");
    if (R->dtype() != DType::F32 || R->shape() != N.output(0)->shape())
      return nodeError(N, "internal error: the fused residual '{}' must be "
                          "f32 shaped like the output",
                       R->name());
  }
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
  // 1-D and 2-D take the 2-D kernels (entries 1 and 2 of the window). Nodes
  // the pack-weights pass marked go to the optimised ones: the
  // register-blocked kernel (group 1, packed weights) or the depthwise one;
  // neither takes a group argument, the depthwise one no channel count m.
  bool Packed = N.hasAttr("cuvil.packed");
  const char *Kernel = !Packed       ? "cuvil_k_conv2d_f32"
                       : Group == 1 ? "cuvil_k_conv2d_packed_f32"
                                    : "cuvil_k_dwconv2d_f32";
  int64_t H = Wd->In[1], Wid = Wd->In[2], OH = Wd->Out[1], OW = Wd->Out[2];
  // A pointwise convolution (1x1, stride 1, no padding) sees each channel
  // plane as one row: the register blocks then run along the whole plane
  // instead of stopping at short rows (5 or 7 wide in small networks).
  bool Pointwise = Wd->Kernel[1] == 1 && Wd->Kernel[2] == 1 &&
                   Wd->Stride[1] == 1 && Wd->Stride[2] == 1 && OH == H &&
                   OW == Wid && Wd->PadBegin[1] == 0 && Wd->PadBegin[2] == 0;
  if (Packed && Group == 1 && Pointwise) {
    Wid = OW = H * Wid;
    H = OH = 1;
  }
  KernelCall Call{Kernel, {KernelArg::tensor(X), KernelArg::tensor(W), Bias}};
  if (Packed && Group == 1) // the residual of a fused Add, or none
    Call.Args.push_back(N.input(3) ? KernelArg::tensor(N.input(3))
                                   : KernelArg::null());
  for (KernelArg A :
       {KernelArg::tensor(N.output(0)), KernelArg::i(X->shape()[0]),
        KernelArg::i(X->shape()[1]), KernelArg::i(H), KernelArg::i(Wid)})
    Call.Args.push_back(A);
  if (!Packed || Group == 1)
    Call.Args.push_back(KernelArg::i(W->shape()[0]));
  for (int64_t V : {Wd->Kernel[1], Wd->Kernel[2], OH, OW, Wd->Stride[1],
                    Wd->Stride[2], Wd->Dil[1], Wd->Dil[2], Wd->PadBegin[1],
                    Wd->PadBegin[2]})
    Call.Args.push_back(KernelArg::i(V));
  if (!Packed)
    Call.Args.push_back(KernelArg::i(Group));
  Call.Args.push_back(KernelArg::f(Lo));
  Call.Args.push_back(KernelArg::f(Hi));
  Calls.push_back(std::move(Call));
  return llvm::Error::success();
}

int64_t macs(const Node &N) {
  // Every output element accumulates over C/group * kernel elements.
  const Value *W = N.input(1);
  return N.output(0)->numElements() * (W->numElements() / W->shape()[0]);
}

} // namespace

extern const OpDef ConvOp = {"Conv", verify, lower, macs, NoTraits,
                             /*ScratchOutputs=*/0, packConvWeights};

} // namespace cuvil
