//===- Conv.cpp - ONNX Conv (1-D to 3-D, grouped, depthwise) --------------===//
#include "ops/nn/Conv.h"
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/nn/AffineFold.h"
#include "ops/nn/Packing.h"
#include "ops/nn/Spatial.h"

namespace cuvil {
namespace {

llvm::Expected<Window> windowConv(const Node &N) {
  const Value &W = *N.input(1);
  std::vector<int64_t> K(W.shape().begin() + 2, W.shape().end());
  return computeWindowNd(N, *N.input(0), *N.output(0), K, false);
}

} // namespace

llvm::Error verifyConv(const Node &N, size_t MaxInputs) {
  if (auto E = requireF32(N))
    return E;
  const Value *X = N.input(0), *W = N.input(1), *B = N.input(2);
  if (!X || !W)
    return nodeError(N, "Conv needs inputs X and W");
  if (N.numInputs() > MaxInputs)
    return nodeError(N, "takes at most {} inputs, not {}", MaxInputs,
                     N.numInputs());
  if (auto E = verifyConvChannels(N, *X, *W))
    return E;
  int64_t M = W->shape()[0];
  if (B && (B->rank() != 1 || B->shape()[0] != M))
    return nodeError(N, "bias must have shape [{}]", M);
  auto Wd = windowConv(N);
  if (!Wd)
    return Wd.takeError();
  return llvm::Error::success();
}

llvm::Error lowerConv(const Node &N, ConvKernel Kernel,
                      std::pair<float, float> Clamp,
                      std::vector<KernelCall> &Calls) {
  auto Wd = windowConv(N);
  if (!Wd)
    return Wd.takeError();
  const Value *X = N.input(0), *W = N.input(1), *B = N.input(2);
  auto [Lo, Hi] = Clamp;
  int64_t Group = ConvAttrs(N).Group;
  if (!Wd->fits2D()) {
    Calls.push_back(withWindowNd(*Wd, kabi::Conv3dF32{.x = X,
                                                      .w = W,
                                                      .bias = B,
                                                      .y = N.output(0),
                                                      .n = X->shape()[0],
                                                      .c = X->shape()[1],
                                                      .m = W->shape()[0],
                                                      .group = Group,
                                                      .act_lo = Lo,
                                                      .act_hi = Hi})
                        .call());
    return llvm::Error::success();
  }
  // 1-D and 2-D take the 2-D kernels (entries 1 and 2 of the window). The
  // internal ops of the pack-weights pass go to the optimised ones: the
  // register-blocked kernel (group 1, packed weights) or the depthwise one;
  // neither takes a group argument, the depthwise one no channel count m.
  bool Packed = Kernel == ConvKernel::Packed;
  int64_t H = Wd->In[1], Wid = Wd->In[2], OH = Wd->Out[1], OW = Wd->Out[2];
  // A pointwise convolution (1x1, stride 1, no padding) sees each channel
  // plane as one row: the register blocks then run along the whole plane
  // instead of stopping at short rows (5 or 7 wide in small networks).
  bool Pointwise = Wd->Kernel[1] == 1 && Wd->Kernel[2] == 1 &&
                   Wd->Stride[1] == 1 && Wd->Stride[2] == 1 && OH == H &&
                   OW == Wid && Wd->PadBegin[1] == 0 && Wd->PadBegin[2] == 0;
  if (Packed && Pointwise) {
    Wid = OW = H * Wid;
    H = OH = 1;
  }
  // The parameters the three 2-D kernels share.
  auto Common = [&](auto &K) -> KernelCall {
    K.x = X;
    K.bias = B;
    K.y = N.output(0);
    K.n = X->shape()[0];
    K.c = X->shape()[1];
    K.h = H;
    K.wd = Wid;
    K.kh = Wd->Kernel[1];
    K.kw = Wd->Kernel[2];
    K.oh = OH;
    K.ow = OW;
    K.stride_h = Wd->Stride[1];
    K.stride_w = Wd->Stride[2];
    K.dil_h = Wd->Dil[1];
    K.dil_w = Wd->Dil[2];
    K.pad_top = Wd->PadBegin[1];
    K.pad_left = Wd->PadBegin[2];
    K.act_lo = Lo;
    K.act_hi = Hi;
    return K.call();
  };
  if (Kernel == ConvKernel::Reference) {
    kabi::Conv2dF32 K;
    K.w = W;
    K.m = W->shape()[0];
    K.group = Group;
    Calls.push_back(Common(K));
  } else if (Kernel == ConvKernel::Packed) {
    kabi::Conv2dPackedF32 K;
    K.wp = W;
    K.res = N.input(3); // the residual of a fused Add, or none
    K.m = W->shape()[0];
    K.oy1 = OH; // every output position (a share of a layer: fewer)
    K.ox1 = OW;
    Calls.push_back(Common(K));
  } else {
    kabi::Dwconv2dF32 K;
    K.w = W;
    Calls.push_back(Common(K));
  }
  return llvm::Error::success();
}

int64_t convMacs(const Node &N) {
  // Every output element accumulates over C/group * kernel elements.
  const Value *W = N.input(1);
  return N.output(0)->numElements() * (W->numElements() / W->shape()[0]);
}

namespace {

llvm::Error verifyConvOp(const Node &N) { return verifyConv(N, 3); }

llvm::Error lowerConvOp(const Node &N, std::vector<KernelCall> &Calls) {
  return lowerConv(N, ConvKernel::Reference, noClamp(), Calls);
}

} // namespace

extern const OpDef FusedConvOp;

namespace {
// x * w + b: weights [M, C/group, k...], bias (input 2) per output channel.
std::optional<ProductForm> convProduct(const Node &) {
  return ProductForm{.K = ProductForm::Kind::Conv,
                     .WeightInput = 1,
                     .ChannelAxis = 0,
                     .BiasInput = 2};
}
} // namespace

extern const OpDef ConvOp = {.Name = "Conv",
                             .Verify = verifyConvOp,
                             .Lower = lowerConvOp,
                             .Macs = convMacs,
                             .Traits = NoTraits,
                             .PackWeights = packConvWeights,
                             .WithClamp = &FusedConvOp,
                             .FoldChannelAffine = foldConvChannelAffine,
                             .Product = convProduct,
                             .Attrs = ConvAttrs::Specs};

} // namespace cuvil
